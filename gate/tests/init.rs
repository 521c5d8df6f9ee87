//! `gate init` on sample repositories (Rust, Go, Node with npm, pnpm or Yarn, Python with
//! requirements.txt, uv, Poetry or PDM): the files it writes, the build system it detects from
//! the lock file, and its refusal to replace what differs; each example caller's fetch fails
//! closed without its lock file. The real binary runs each case.
//! (The workflow invariants run on the written callers in `tests/workflow_invariants`.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use gate::doctor::{Status, caller_pin};

const PIN: &str = "89abcdef0123456789abcdef0123456789abcdef";

fn sample(marker: &str) -> tempfile::TempDir {
    sample_of(&[marker])
}

fn sample_of(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        std::fs::write(dir.path().join(file), "{}\n").unwrap();
    }
    dir
}

fn init(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .arg("init")
        .arg(format!("--dir={}", dir.display()))
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

/// The files at a repository's root and the build system (`examples/<name>.yml`) they choose.
const DETECTED: &[(&[&str], &str)] = &[
    (&["Cargo.toml"], "rust"),
    (&["Cargo.toml", "Cargo.lock"], "rust"),
    (&["go.mod", "go.sum"], "go"),
    (&["package.json"], "node"),
    (&["package.json", "package-lock.json"], "node"),
    (&["package.json", "pnpm-lock.yaml"], "node-pnpm"),
    (&["package.json", "yarn.lock"], "node-yarn"),
    (
        &["package.json", "yarn.lock", ".yarnrc.yml"],
        "node-yarn-berry",
    ),
    (&["pyproject.toml"], "python"),
    (&["setup.py"], "python"),
    (&["requirements.txt"], "python"),
    (&["pyproject.toml", "requirements.txt"], "python"),
    (&["pyproject.toml", "uv.lock"], "python-uv"),
    (&["pyproject.toml", "poetry.lock"], "python-poetry"),
    (&["pyproject.toml", "pdm.lock"], "python-pdm"),
];

#[test]
fn each_build_system_gets_the_example_caller_its_lock_file_picks_and_its_policy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut chosen = std::collections::BTreeSet::new();
    for (files, name) in DETECTED {
        let marker = files.join(" ");
        chosen.insert(*name);
        let repo = sample_of(files);
        let (code, out, err) = init(
            repo.path(),
            &[
                &format!("--pin={PIN}"),
                "--tag=v1.2.3",
                "--app-id=4711",
                "--repository=octo/repo",
            ],
        );
        assert_eq!(code, 0, "{marker}: {out}{err}");
        assert!(out.contains(&format!("a {name} repository")), "{out}");
        let caller = read(repo.path(), ".github/workflows/agent-team-apply.yml");
        let example = std::fs::read_to_string(root.join(format!("examples/{name}.yml"))).unwrap();
        assert_eq!(
            caller,
            example.replace(
                "0000000000000000000000000000000000000000 # v0.1.0",
                &format!("{PIN} # v1.2.3")
            )
        );
        // What the doctor will read: pinned, calls the reusable workflow, secrets by name.
        let pin = caller_pin(caller.as_bytes());
        assert_eq!(pin.status, Status::Ok, "{}", pin.detail);
        let policy = read(repo.path(), ".github/agent-team-policy.yml");
        guard::policy::Policy::from_yaml(&policy).unwrap();
        let ecosystem = name.split('-').next().unwrap();
        if ecosystem == "node" || ecosystem == "python" {
            let example =
                std::fs::read_to_string(root.join(format!("examples/policy/{ecosystem}.yml")))
                    .unwrap();
            assert_eq!(policy, example);
        }
        // Every step numbered, the doctor last.
        let steps: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("The setup's steps"))
            .skip(1)
            .collect();
        assert!(steps.len() >= 6, "{out}");
        assert!(
            steps
                .last()
                .unwrap()
                .contains("gate doctor --repository octo/repo")
        );
        assert!(!out.contains("replace @0000"), "{out}");
        // Both environments the workflow names, each with its secrets.
        for environment in [
            "Create the environment agent-team-publish",
            "Create the environment agent-team-verify",
        ] {
            assert!(steps.iter().any(|s| s.contains(environment)), "{out}");
        }
        assert!(
            steps
                .iter()
                .any(|s| s.contains("agent-team-verify") && s.contains("AGENT_TEAM_DISPATCH_KEY")),
            "{out}"
        );
    }
    // Every example caller is what some repository's files pick.
    let examples: std::collections::BTreeSet<String> = std::fs::read_dir(root.join("examples"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".yml").map(str::to_owned)
        })
        .collect();
    let chosen: std::collections::BTreeSet<String> =
        chosen.into_iter().map(str::to_owned).collect();
    assert_eq!(examples, chosen);
}

/// Two lock files of one ecosystem name two build systems: `gate init` chooses neither.
#[test]
fn two_lock_files_of_one_ecosystem_are_ambiguous() {
    for (files, found) in [
        (
            &["pyproject.toml", "uv.lock", "poetry.lock"][..],
            "python-uv, python-poetry",
        ),
        (
            &["package.json", "pnpm-lock.yaml", "yarn.lock"][..],
            "node-pnpm, node-yarn",
        ),
    ] {
        let repo = sample_of(files);
        let (code, out, err) = init(repo.path(), &[]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("several build systems detected"), "{err}");
        assert!(err.contains(found), "{err}");
        assert!(!repo.path().join(".github").exists());
    }
}

/// Each example caller's `fetch-command`, run as the workflow runs it (`bash -euo pipefail -c`,
/// from an empty directory) on a tree without its lock file, fails at once with an `::error::`
/// naming the file: nothing else runs (the PATH holds no package manager to run).
#[test]
fn each_example_fetch_fails_closed_naming_the_missing_lock_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for system in gate::init::BuildSystem::ALL {
        let caller: serde_json::Value = serde_saphyr::from_str(system.caller_template()).unwrap();
        let fetch = caller["jobs"]["apply"]["with"]["fetch-command"]
            .as_str()
            .unwrap();
        let lock = match system.name() {
            "rust" => "Cargo.lock",
            "go" => "go.mod",
            "node" => "package-lock.json",
            "node-pnpm" => "pnpm-lock.yaml",
            "node-yarn" | "node-yarn-berry" => "yarn.lock",
            "python" => "requirements.txt",
            "python-uv" => "uv.lock",
            "python-poetry" => "poetry.lock",
            "python-pdm" => "pdm.lock",
            other => panic!("no lock file listed for {other}"),
        };
        let work = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let no_tools = tempfile::tempdir().unwrap();
        let out = Command::new("/bin/bash")
            .args(["-euo", "pipefail", "-c", fetch])
            .env_clear()
            .env("PATH", no_tools.path())
            .env("AGENT_TEAM_WORK", work.path())
            .env("AGENT_TEAM_DEPS", empty.path())
            .env("RUNNER_TEMP", empty.path())
            .current_dir(empty.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{}: {text}", system.name());
        assert!(
            text.starts_with(&format!("::error::no {lock} ")),
            "{}: {text}",
            system.name()
        );
        assert_eq!(
            std::fs::read_dir(empty.path()).unwrap().count(),
            0,
            "{}",
            system.name()
        );
    }
    assert!(root.join("examples").is_dir());
}

#[test]
fn the_manifest_asks_for_exactly_the_gates_permissions() {
    let repo = sample("Cargo.toml");
    let (code, _, err) = init(repo.path(), &["--repository=octo/repo"]);
    assert_eq!(code, 0, "{err}");
    let manifest: serde_json::Value = serde_json::from_str(&read(
        repo.path(),
        ".github/agent-team-setup/app-manifest.json",
    ))
    .unwrap();
    assert_eq!(
        manifest["default_permissions"],
        serde_json::json!({ "contents": "write", "pull_requests": "write", "checks": "write", "metadata": "read" })
    );
    assert_eq!(manifest["default_events"], serde_json::json!([]));
    assert_eq!(manifest["public"], false);
    assert_eq!(manifest["hook_attributes"]["active"], false);
    assert_eq!(manifest["url"], "https://github.com/octo/repo");
    // Without the App's id the agent-team/** ruleset is not written (it names the App), and the
    // step says how; the default branch's names nobody and is written.
    assert!(
        !repo
            .path()
            .join(".github/agent-team-setup/ruleset-agent-team-branches.json")
            .exists()
    );
    assert!(
        repo.path()
            .join(".github/agent-team-setup/ruleset-default-branch.json")
            .exists()
    );
}

#[test]
fn the_rulesets_name_the_app() {
    let repo = sample("package.json");
    let (code, out, err) = init(repo.path(), &["--app-id=4711"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Import a ruleset"), "{out}");
    assert!(
        out.contains("replace @0000000000000000000000000000000000000000"),
        "{out}"
    );
    let default: serde_json::Value = serde_json::from_str(&read(
        repo.path(),
        ".github/agent-team-setup/ruleset-default-branch.json",
    ))
    .unwrap();
    assert_eq!(default["target"], "branch");
    assert_eq!(default["enforcement"], "active");
    assert_eq!(
        default["conditions"]["ref_name"]["include"],
        serde_json::json!(["~DEFAULT_BRANCH"])
    );
    let rules = default["rules"].as_array().unwrap();
    let rule = |kind: &str| rules.iter().find(|r| r["type"] == kind).unwrap().clone();
    assert_eq!(
        rule("pull_request")["parameters"]["required_approving_review_count"],
        1
    );
    // No required status check: it would apply to every pull request into the default branch,
    // and only the App's publications get it (people's and Dependabot's would be blocked).
    assert!(
        rules.iter().all(|r| r["type"] != "required_status_checks"),
        "{default}"
    );
    assert_eq!(default["bypass_actors"], serde_json::json!([]));
    let branches: serde_json::Value = serde_json::from_str(&read(
        repo.path(),
        ".github/agent-team-setup/ruleset-agent-team-branches.json",
    ))
    .unwrap();
    assert_eq!(
        branches["conditions"]["ref_name"]["include"],
        serde_json::json!(["refs/heads/agent-team/**"])
    );
    assert_eq!(
        branches["bypass_actors"],
        serde_json::json!([{ "actor_id": 4711, "actor_type": "Integration", "bypass_mode": "always" }])
    );
    let kinds: Vec<&str> = branches["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    for kind in ["creation", "update", "deletion"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
}

#[test]
fn existing_files_are_not_replaced_without_force() {
    let repo = sample("Cargo.toml");
    let caller = repo.path().join(".github/workflows/agent-team-apply.yml");
    std::fs::create_dir_all(caller.parent().unwrap()).unwrap();
    std::fs::write(&caller, "name: mine\n").unwrap();
    let (code, out, err) = init(repo.path(), &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("agent-team-apply.yml exists with other contents"),
        "{err}"
    );
    // Nothing written at all.
    assert_eq!(std::fs::read_to_string(&caller).unwrap(), "name: mine\n");
    assert!(!repo.path().join(".github/agent-team-policy.yml").exists());

    let (code, out, _) = init(repo.path(), &["--force"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("replaced  .github/workflows/agent-team-apply.yml"),
        "{out}"
    );
    // A second run finds the same files: nothing to replace, no --force needed.
    let (code, out, _) = init(repo.path(), &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains("unchanged .github/workflows/agent-team-apply.yml"),
        "{out}"
    );
    // Adding the App's id later writes the agent-team/** ruleset beside the unchanged files.
    let (code, out, _) = init(repo.path(), &["--app-id=7"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("wrote     .github/agent-team-setup/ruleset-agent-team-branches.json"),
        "{out}"
    );
}

/// A re-run changes only what `gate init` owns: the manifest and rulesets follow the
/// arguments, the policy's edits stay, the caller's edits stay and only its pin line follows
/// `--pin`/`--tag`; without them an earlier pin stays, `--force` included.
#[test]
fn a_rerun_keeps_the_repositorys_edits_and_changes_only_the_pin() {
    let repo = sample("package.json");
    let (code, out, err) = init(repo.path(), &[&format!("--pin={PIN}"), "--tag=v1.2.3"]);
    assert_eq!(code, 0, "{out}{err}");
    let caller_path = ".github/workflows/agent-team-apply.yml";
    let policy_path = ".github/agent-team-policy.yml";
    // The repository edits both.
    let caller = read(repo.path(), caller_path).replace("npm test", "npm run test:ci");
    assert_ne!(caller, read(repo.path(), caller_path), "the edit applies");
    std::fs::write(repo.path().join(caller_path), &caller).unwrap();
    let policy = format!("{}# ours\n", read(repo.path(), policy_path));
    std::fs::write(repo.path().join(policy_path), &policy).unwrap();

    // Later, with the App's id: the agent-team/** ruleset is written, both edits stay, the pin
    // too.
    let (code, out, err) = init(repo.path(), &["--app-id=7", "--repository=octo/repo"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("wrote     .github/agent-team-setup/ruleset-agent-team-branches.json"),
        "{out}"
    );
    assert!(out.contains(&format!("kept      {caller_path}")), "{out}");
    assert!(out.contains(&format!("kept      {policy_path}")), "{out}");
    assert!(
        out.contains("replaced  .github/agent-team-setup/app-manifest.json"),
        "{out}"
    );
    assert_eq!(read(repo.path(), caller_path), caller);
    assert_eq!(read(repo.path(), policy_path), policy);
    assert!(!out.contains("Pin the release"), "{out}");

    // A new release: only the pin line changes.
    let next = "fedcba9876543210fedcba9876543210fedcba98";
    let (code, out, err) = init(repo.path(), &[&format!("--pin={next}"), "--tag=v1.3.0"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("updated   {caller_path}")), "{out}");
    let updated = read(repo.path(), caller_path);
    assert_eq!(
        updated,
        caller.replace(&format!("{PIN} # v1.2.3"), &format!("{next} # v1.3.0"))
    );
    assert!(updated.contains("npm run test:ci"));

    // --force: the templates again, the pin kept.
    let (code, out, err) = init(repo.path(), &["--force"]);
    assert_eq!(code, 0, "{out}{err}");
    let forced = read(repo.path(), caller_path);
    assert!(forced.contains(&format!("@{next} # v1.3.0")), "{forced}");
    assert!(!forced.contains("npm run test:ci"));
    assert!(!read(repo.path(), policy_path).contains("# ours"));
}

/// `--dry-run` shows each file's change as a diff and writes nothing.
#[test]
fn a_dry_run_shows_the_diff_and_writes_nothing() {
    let repo = sample("Cargo.toml");
    let (code, out, err) = init(repo.path(), &["--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("nothing written"), "{out}");
    assert!(
        out.contains("would write .github/workflows/agent-team-apply.yml"),
        "{out}"
    );
    assert!(
        out.contains("+++ b/.github/workflows/agent-team-apply.yml"),
        "{out}"
    );
    assert!(!repo.path().join(".github").exists());

    let (code, _, _) = init(repo.path(), &[]);
    assert_eq!(code, 0);
    let before = read(repo.path(), ".github/workflows/agent-team-apply.yml");
    let (code, out, err) = init(
        repo.path(),
        &["--dry-run", &format!("--pin={PIN}"), "--tag=v2.0.0"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("would update .github/workflows/agent-team-apply.yml"),
        "{out}"
    );
    assert!(out.contains(&format!("+    uses: agent-team/agent-team-apply/.github/workflows/agent-team-apply-verify.yml@{PIN} # v2.0.0")), "{out}");
    assert!(out.contains("-    uses: agent-team/agent-team-apply/.github/workflows/agent-team-apply-verify.yml@0000000000000000000000000000000000000000 # v0.1.0"), "{out}");
    assert_eq!(
        read(repo.path(), ".github/workflows/agent-team-apply.yml"),
        before
    );
}

#[test]
fn detection_fails_closed() {
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = init(empty.path(), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("no build system detected"), "{err}");
    assert!(!empty.path().join(".github").exists());

    let both = sample("Cargo.toml");
    std::fs::write(both.path().join("package.json"), "{}").unwrap();
    let (code, _, err) = init(both.path(), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("several build systems detected"), "{err}");
    assert!(err.contains("rust, node"), "{err}");
    let (code, out, _) = init(both.path(), &["--build-system=node"]);
    assert_eq!(code, 0);
    assert!(out.contains("a node repository"));
}

#[test]
fn bad_pins_and_symlinks_are_refused() {
    let repo = sample("Cargo.toml");
    for pin in [
        "v0.1.0",
        "0000000000000000000000000000000000000000",
        "89ABCDEF0123456789abcdef0123456789abcdef",
        "89abcdef",
    ] {
        let (code, _, err) = init(repo.path(), &[&format!("--pin={pin}"), "--tag=v1.0.0"]);
        assert_eq!(code, 2, "{pin}");
        assert!(err.contains("not a full commit SHA"), "{err}");
    }
    for tag in ["1.0.0", "v1.0", "v01.0.0", "v1.0.0 # x"] {
        let (code, _, err) = init(
            repo.path(),
            &[&format!("--pin={PIN}"), &format!("--tag={tag}")],
        );
        assert_eq!(code, 2, "{tag}");
        assert!(err.contains("is not a release tag"), "{err}");
    }
    // A pin without its tag (or a tag without its pin) is a usage error.
    for args in [
        vec![format!("--pin={PIN}")],
        vec!["--tag=v1.0.0".to_owned()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = init(repo.path(), &args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
    assert!(!repo.path().join(".github").exists(), "nothing written");
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), repo.path().join(".github")).unwrap();
    let (code, _, err) = init(repo.path(), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// ADOPTING.md's "Setting up" is the steps `gate init` prints: one heading `### N. <title>` for
/// each, in the same order, and nothing else numbered there; `gate init` prints `N. <title>: `.
/// ADOPTING.md itself stays a checklist: at most 400 lines, the rest in REFERENCE.md.
#[test]
fn adopting_numbers_its_steps_as_gate_init_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let adopting = std::fs::read_to_string(root.join("ADOPTING.md")).unwrap();
    assert!(
        adopting.lines().count() <= 400,
        "ADOPTING.md has {} lines",
        adopting.lines().count()
    );
    let headings: Vec<&str> = adopting
        .lines()
        .filter(|l| l.starts_with("### ") && l[4..].starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    let want: Vec<String> = gate::init::STEP_TITLES
        .iter()
        .enumerate()
        .map(|(i, t)| format!("### {}. {t}", i + 1))
        .collect();
    assert_eq!(headings, want);

    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let (code, text, err) = init(repo.path(), &["--repository", "octo/repo"]);
    assert_eq!(code, 0, "{err}");
    let printed: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("The setup's steps"))
        .skip(1)
        .collect();
    assert_eq!(printed.len(), want.len(), "{text}");
    for (i, (line, title)) in printed.iter().zip(gate::init::STEP_TITLES).enumerate() {
        let head = format!("  {}. {title}: ", i + 1);
        assert!(
            line.starts_with(&head),
            "{line:?} does not start with {head:?}"
        );
    }
    // Step 2 leads with the command ADOPTING.md's step 2 leads with.
    assert!(
        printed[1]
            .contains("`gate app create --kind publish --repository octo/repo --key-out app.pem`"),
        "{}",
        printed[1]
    );
    // Each secret of step 3 is glossed where it is named.
    assert!(
        printed[2].contains("AGENT_TEAM_APP_PRIVATE_KEY (the App's key) and AGENT_TEAM_DISPATCH_KEY (`openssl rand -hex 32`"),
        "{}",
        printed[2]
    );
}

/// A git repository with `files` (path, contents) committed on `main`.
fn committed(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, contents) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    ] {
        let out = guard::git::command(dir.path()).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
    dir
}

const SECRET_ON_PUSH: &str = "\
name: CI
on: push
jobs:
  upload-coverage:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@v4
      - run: ./upload
        env:
          TOKEN: ${{ secrets.CODECOV_TOKEN }}
  deploy:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    environment: production
    steps:
      - run: ./deploy
        env:
          KEY: ${{ secrets.DEPLOY_KEY }}
";

const CLEAN_CI: &str = "\
name: CI
on: [push, pull_request]
permissions:
  contents: read
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false
      - run: cargo test
";

const POLICY: &str = ".github/agent-team-policy.yml";

/// The lines `gate init` appended to the policy's template: every one a YAML comment.
fn proposal_lines(policy: &str) -> Vec<&str> {
    let at = policy
        .find("# Proposals of `gate init`")
        .expect("proposals");
    policy[at..].lines().collect()
}

#[test]
fn readiness_proposes_accepting_a_job_that_uses_a_secret_on_push() {
    let repo = committed(&[
        ("Cargo.toml", "[package]\n"),
        (".github/workflows/ci.yml", SECRET_ON_PUSH),
    ]);
    let (code, out, err) = init(repo.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "found[unprotected-secret-job]: .github/workflows/ci.yml: job `upload-coverage`"
        ),
        "{out}"
    );
    assert!(
        out.contains("proposals: commented out at the end of .github/agent-team-policy.yml"),
        "{out}"
    );
    let policy = read(repo.path(), POLICY);
    let lines = proposal_lines(&policy);
    assert!(lines.iter().all(|l| l.starts_with('#')), "{policy}");
    assert!(
        lines.contains(&"#       job: \"upload-coverage\""),
        "{policy}"
    );
    assert!(lines.contains(&"#       job: \"deploy\""), "{policy}");
    assert!(
        lines.contains(&"#     - workflow: \".github/workflows/ci.yml\""),
        "{policy}"
    );
    assert!(lines.contains(&"#     - \"production\""), "{policy}");
    // Nothing is in force.
    let parsed = guard::policy::Policy::from_yaml(&policy).unwrap();
    assert!(parsed.readiness.accept.is_empty());
    assert!(parsed.readiness.protected_environments.is_empty());
}

#[test]
fn readiness_without_findings_proposes_nothing() {
    let repo = committed(&[
        ("Cargo.toml", "[package]\n"),
        (".github/workflows/ci.yml", CLEAN_CI),
    ]);
    let (code, out, err) = init(repo.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 workflow file(s)"), "{out}");
    assert!(
        out.contains("no job would run the branch's code with credentials"),
        "{out}"
    );
    assert!(out.contains("nothing to propose for the policy"), "{out}");
    let policy = read(repo.path(), POLICY);
    assert!(!policy.contains("readiness"), "{policy}");
    assert!(!policy.contains("Proposals"), "{policy}");
}

#[test]
fn readiness_is_not_run_outside_a_git_repository_and_says_so() {
    let repo = sample("Cargo.toml");
    let (code, out, err) = init(repo.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Readiness: not run: "), "{out}");
    assert!(out.contains("is not a git repository"), "{out}");
    assert!(!read(repo.path(), POLICY).contains("Proposals"));
}

#[test]
fn a_rerun_keeps_an_uncommented_proposal() {
    let repo = committed(&[
        ("Cargo.toml", "[package]\n"),
        (".github/workflows/ci.yml", SECRET_ON_PUSH),
    ]);
    let (code, out, err) = init(repo.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    let written = read(repo.path(), POLICY);
    // The person uncomments the whole block and gives the reasons.
    let mut edited = String::new();
    let mut inside = false;
    for line in written.lines() {
        inside |= line == "# readiness:";
        let line = match line.strip_prefix("# ") {
            Some(rest) if inside => rest.replace("REPLACE: why", "checked: the token only"),
            _ => line.to_owned(),
        };
        edited.push_str(&line);
        edited.push('\n');
    }
    let parsed = guard::policy::Policy::from_yaml(&edited).unwrap();
    let accepted: Vec<&str> = parsed
        .readiness
        .accept
        .iter()
        .map(|a| a.job.as_str())
        .collect();
    assert_eq!(accepted, ["deploy", "upload-coverage"]);
    assert_eq!(parsed.readiness.protected_environments, ["production"]);
    std::fs::write(repo.path().join(POLICY), &edited).unwrap();

    let (code, out, err) = init(repo.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("kept      {POLICY}")), "{out}");
    assert_eq!(read(repo.path(), POLICY), edited);
    // The rerun judges with the kept policy: both jobs accepted, nothing left to propose.
    assert!(
        out.contains(
            "accepted[unprotected-secret-job]: .github/workflows/ci.yml: job `upload-coverage`"
        ),
        "{out}"
    );
    assert!(!out.contains("found["), "{out}");
    assert!(out.contains("nothing to propose for the policy"), "{out}");
}

#[test]
fn hostile_workflow_and_job_names_are_escaped_in_the_output_and_stay_comments_in_the_policy() {
    let hostile_job = "\
name: CI
on: push
jobs:
  \"evil\\e]0;owned\\a\\u202e\\nreadiness:\\n  default-token: read\":
    runs-on: ubuntu-latest
    steps:
      - run: ./x
        env:
          T: ${{ secrets.T }}
";
    let repo = committed(&[
        ("Cargo.toml", "[package]\n"),
        (".github/workflows/ci.yml", hostile_job),
        (
            ".github/workflows/\u{1b}[31mred\u{202e}.yml",
            SECRET_ON_PUSH,
        ),
    ]);
    let (code, out, err) = init(repo.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!out.contains(raw), "{raw:?} raw in {out:?}");
    }
    assert!(
        out.contains("job `evil\\u{1b}]0;owned\\u{7}\\u{202e}"),
        "{out}"
    );
    assert!(
        out.contains(".github/workflows/\\u{1b}[31mred\\u{202e}.yml"),
        "{out}"
    );
    assert!(!out.lines().any(|l| l.starts_with("readiness:")), "{out}");
    let policy = read(repo.path(), POLICY);
    let lines = proposal_lines(&policy);
    assert!(lines.iter().all(|l| l.starts_with('#')), "{policy}");
    assert!(
        lines.contains(&"#       job: \"evil\\u001b]0;owned\\u0007\\u202e\\u000areadiness:\\u000a  default-token: read\""),
        "{policy}"
    );
    let parsed = guard::policy::Policy::from_yaml(&policy).unwrap();
    assert!(parsed.readiness.accept.is_empty());
    assert_eq!(
        parsed.readiness.default_token,
        guard::readiness::DefaultToken::Write
    );
}
