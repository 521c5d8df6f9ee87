//! `gate release` against the stand-in: the pin commit's parent is the built commit and it
//! changes only what `.ci/pin-release.sh` wrote; the tag names the pin commit; the release holds
//! exactly the assets and `SHA256SUMS`; every refusal happens before the write it guards.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use github_standin::git::Object;
use github_standin::{Canned, Fault, Scenario, StandIn};

const REPO: &str = "agent-team/agent-team-apply";
const VERSION: &str = "v0.1.0";
const WORKFLOW: &str = ".github/workflows/agent-team-apply-verify.yml";
const SERVER: &str = "https://github.com";

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

struct Setup {
    _dir: tempfile::TempDir,
    gh: StandIn,
    work: PathBuf,
    dist: PathBuf,
    built: String,
}

/// The project's reusable workflow, an example caller and the pin script at a commit on `main`
/// (loaded into the stand-in), the two assets and their `SHA256SUMS`, and the work tree after
/// `.ci/pin-release.sh`.
fn setup(faults: Vec<Fault>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    for rel in [
        WORKFLOW,
        "examples/rust.yml",
        ".ci/pin-release.sh",
        "README.md",
    ] {
        let to = work.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(project().join(rel), to).unwrap();
    }
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "built"]);
    let built = git(&work, &["rev-parse", "HEAD"]);
    let (owner, name) = REPO.split_once('/').unwrap();
    let gh = StandIn::start(Scenario {
        owner: owner.into(),
        repo: name.into(),
        faults,
        ..Scenario::default()
    })
    .unwrap();
    github_standin::load_commit(&gh, &work, &built, "main").unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    let mut sums = String::new();
    for (target, bytes) in [
        ("x86_64-unknown-linux-musl", b"x86_64 asset".as_slice()),
        ("aarch64-unknown-linux-musl", b"aarch64 asset".as_slice()),
    ] {
        let name = format!("agent-team-apply-{VERSION}-{target}.tar.gz");
        std::fs::write(dist.join(&name), bytes).unwrap();
        sums.push_str(&format!("{}  {name}\n", guard::hash::sha256_hex(bytes)));
    }
    std::fs::write(dist.join("SHA256SUMS"), sums).unwrap();
    let out = Command::new("bash")
        .arg(".ci/pin-release.sh")
        .arg(VERSION)
        .arg(dist.join("SHA256SUMS"))
        .args([REPO, SERVER])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Setup {
        _dir: dir,
        gh,
        work,
        dist,
        built,
    }
}

fn release(s: &Setup, built: &str, files: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    cmd.args(["release", "--repository", REPO, "--version", VERSION])
        .args([
            "--built",
            built,
            "--default-branch",
            "main",
            "--server-url",
            SERVER,
        ])
        .arg("--dist")
        .arg(&s.dist)
        .arg("--work-tree")
        .arg(&s.work);
    for file in files {
        cmd.arg(format!("--file={file}"));
    }
    let out = cmd
        .env_clear()
        .env("GH_TOKEN", s.gh.token())
        .env("GITHUB_API_URL", s.gh.url())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        !text.contains(&s.gh.token()),
        "the token reached the output"
    );
    (out.status.code(), text)
}

const FILES: [&str; 2] = [WORKFLOW, "examples/rust.yml"];

fn writes(s: &Setup) -> Vec<String> {
    s.gh.requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| r.line())
        .collect()
}

#[test]
fn the_tag_names_a_pin_commit_whose_parent_is_the_built_commit_and_whose_workflow_pins_the_assets()
{
    let s = setup(Vec::new());
    let (code, text) = release(&s, &s.built, &FILES);
    assert_eq!(code, Some(0), "{text}");
    let state = s.gh.state();
    let pin = state
        .git
        .refs
        .get(&format!("refs/tags/{VERSION}"))
        .unwrap()
        .clone();
    assert!(
        text.contains(&format!("{REPO}/{WORKFLOW}@{pin} # {VERSION}")),
        "{text}"
    );
    let Some(Object::Commit { parents, tree, .. }) = state.git.objects.get(&pin) else {
        panic!("the tag names no commit");
    };
    assert_eq!(parents, &vec![s.built.clone()]);
    assert!(
        state.created_commits.contains(&pin),
        "the pin commit was not made through the API"
    );
    // The pin tree is the built tree with exactly the rewritten files' bytes.
    let built_tree = state.git.commit_tree(&s.built).unwrap().to_owned();
    let before = state.git.flatten(&built_tree).unwrap();
    let after = state.git.flatten(tree).unwrap();
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let mut changed = Vec::new();
    for (path, (mode, id)) in &after {
        if before[path] != (mode.clone(), id.clone()) {
            changed.push(path.clone());
            let Some(Object::Blob(bytes)) = state.git.objects.get(id) else {
                panic!("{path} is not a blob");
            };
            assert_eq!(bytes, &std::fs::read(s.work.join(path)).unwrap(), "{path}");
        }
    }
    // The example already names v0.1.0, so only the reusable workflow's bytes change.
    assert_eq!(changed, vec![WORKFLOW.to_owned()]);
    let workflow = String::from_utf8(std::fs::read(s.work.join(WORKFLOW)).unwrap()).unwrap();
    let sums = std::fs::read_to_string(s.dist.join("SHA256SUMS")).unwrap();
    let x64 = sums.lines().next().unwrap().split("  ").next().unwrap();
    assert!(workflow.contains(&format!("  AGENT_TEAM_SHA256_X64: \"{x64}\"")));
    // The release: published, on the tag, exactly the two assets and SHA256SUMS.
    let [release] = state.releases.as_slice() else {
        panic!("{} releases", state.releases.len());
    };
    assert_eq!(release.tag, VERSION);
    assert!(!release.draft);
    let names: Vec<&str> = release.assets.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "agent-team-apply-v0.1.0-x86_64-unknown-linux-musl.tar.gz",
            "agent-team-apply-v0.1.0-aarch64-unknown-linux-musl.tar.gz",
            "SHA256SUMS"
        ]
    );
    for (name, bytes) in &release.assets {
        assert_eq!(bytes, &std::fs::read(s.dist.join(name)).unwrap(), "{name}");
    }
    assert!(
        release.body.contains(&format!("@{pin} # {VERSION}")),
        "{}",
        release.body
    );
    assert!(release.body.contains(&s.built));
    drop(state);
    // No author, committer or signature in the commit request: GitHub signs it.
    let commit =
        s.gh.requests()
            .into_iter()
            .find(|r| r.method == "POST" && r.path.ends_with("/git/commits"))
            .unwrap();
    let body = commit.json();
    for key in ["author", "committer", "signature"] {
        assert!(body.get(key).is_none(), "the commit request carries {key}");
    }
}

#[test]
fn an_existing_tag_is_refused_before_any_write() {
    let s = setup(Vec::new());
    s.gh.state()
        .git
        .refs
        .insert(format!("refs/tags/{VERSION}"), s.built.clone());
    let (code, text) = release(&s, &s.built, &FILES);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("tag v0.1.0 exists already"), "{text}");
    assert_eq!(writes(&s), Vec::<String>::new());
}

#[test]
fn a_built_commit_off_the_default_branch_is_refused_before_any_write() {
    let s = setup(Vec::new());
    git(&s.work, &["stash", "-q"]);
    git(&s.work, &["checkout", "-q", "-b", "side"]);
    std::fs::write(s.work.join("README.md"), "side\n").unwrap();
    git(&s.work, &["commit", "-qam", "side"]);
    let side = git(&s.work, &["rev-parse", "HEAD"]);
    github_standin::load_commit(&s.gh, &s.work, &side, "side").unwrap();
    git(&s.work, &["stash", "pop", "-q"]);
    let (code, text) = release(&s, &side, &FILES);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("is not on the default branch main"), "{text}");
    assert_eq!(writes(&s), Vec::<String>::new());
}

/// Each refusal that needs no API is made before the first request.
#[test]
fn offline_refusals_name_their_cause_and_send_nothing() {
    type Spoil = fn(&Setup);
    let cases: [(&str, Spoil, &[&str], &str); 6] = [
        (
            "an asset whose bytes are not its SHA256SUMS line",
            |s| {
                std::fs::write(
                    s.dist
                        .join("agent-team-apply-v0.1.0-aarch64-unknown-linux-musl.tar.gz"),
                    b"other",
                )
                .unwrap()
            },
            &FILES,
            "does not hash to its line in SHA256SUMS",
        ),
        (
            "SHA256SUMS listing a third file",
            |s| {
                let mut sums = std::fs::read_to_string(s.dist.join("SHA256SUMS")).unwrap();
                sums.push_str(&format!("{}  extra.tar.gz\n", "0".repeat(64)));
                std::fs::write(s.dist.join("SHA256SUMS"), sums).unwrap();
            },
            &FILES,
            "SHA256SUMS must list exactly",
        ),
        (
            "a reusable workflow that still pins other hashes",
            |s| git(&s.work, &["checkout", "-q", "--", WORKFLOW]).truncate(0),
            &FILES,
            "pins AGENT_TEAM_SHA256_X64",
        ),
        (
            "a file the pin commit may not change",
            |_| {},
            &[WORKFLOW, ".ci/pin-release.sh"],
            "is not a file the pin commit may change",
        ),
        (
            "no reusable workflow among the files",
            |_| {},
            &["examples/rust.yml"],
            "the pin commit must change",
        ),
        (
            "a path that climbs out of the work tree",
            |_| {},
            &[WORKFLOW, "examples/../../x.yml"],
            "is not a relative path",
        ),
    ];
    for (what, spoil, files, expected) in cases {
        let s = setup(Vec::new());
        spoil(&s);
        let (code, text) = release(&s, &s.built, files);
        assert_eq!(code, Some(2), "{what}: {text}");
        assert!(text.contains(expected), "{what}: {text}");
        assert!(s.gh.requests().is_empty(), "{what}: a request was sent");
    }
}

#[test]
fn a_failed_upload_leaves_the_release_a_draft_and_fails() {
    let s = setup(vec![
        Fault::new(
            "POST",
            "/api/uploads/",
            vec![Canned::status(500, "upload failed")],
        )
        .passing_first(1),
    ]);
    let (code, text) = release(&s, &s.built, &FILES);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("upload agent-team-apply-v0.1.0-aarch64"),
        "{text}"
    );
    let state = s.gh.state();
    assert!(
        state.releases[0].draft,
        "a release without all its assets was published"
    );
    assert_eq!(state.releases[0].assets.len(), 1);
}
