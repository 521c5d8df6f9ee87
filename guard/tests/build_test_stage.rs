//! The build-test stage through the real binaries, on real temporary git repositories:
//! `guard apply` → `guard verify-tree` → `guard run` → `guard verify-tree --after-build` →
//! `report build-test`, and each way a step must refuse.
//!
//! Every process runs with a cleared environment (only `PATH`, plus a fixed git identity for the
//! fixture commits), so no ambient `GITHUB_*`/`CI` variable or git configuration reaches it.
//! `guard run` needs what `run_isolation.rs` needs: root or unprivileged user namespaces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

#[path = "../../tests/support/git.rs"]
mod git_support;

const SCOPE: &str = "src/**";
const OTHER_SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn path_var() -> std::ffi::OsString {
    std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into())
}

/// git with a fixed identity and no configuration but the repository's own.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_support::git(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn bin(path: &Path, args: &[&str]) -> Output {
    Command::new(path)
        .env_clear()
        .env("PATH", path_var())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn guard(args: &[&str]) -> Output {
    bin(Path::new(env!("CARGO_BIN_EXE_guard")), args)
}

/// `sh -c script` in `dir`, directly: no `guard run`, so no read-only `.git` mount.
fn sh(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .env_clear()
        .env("PATH", path_var())
        .current_dir(dir)
        .args(["-c", script])
        .status()
        .unwrap();
    assert!(status.success(), "sh -c {script}");
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A repository at its base commit, a canonical diff against it, and a place for outputs
/// outside the worktree.
struct Fixture {
    _dir: tempfile::TempDir,
    out: PathBuf,
    repo: PathBuf,
    base: String,
    diff: PathBuf,
    sha: String,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let out = dir.path().join("out");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let write = |rel: &str, body: &str| std::fs::write(repo.join(rel), body).unwrap();
        write("src/lib.rs", "pub fn answer() -> u32 {\n    41\n}\n");
        write("src/old.rs", "pub fn old() {}\n");
        write("docs/guide.md", "# Guide\n");
        write("README.md", "# Fixture\n");
        write(".gitignore", "target/\n*.log\n");
        write("build.sh", "#!/bin/sh\necho build\n");
        std::fs::set_permissions(repo.join("build.sh"), PermissionsExt::from_mode(0o755)).unwrap();
        git(&repo, &["init", "--quiet", "--initial-branch=main"]);
        git(&repo, &["add", "--all"]);
        git(&repo, &["commit", "--quiet", "-m", "base"]);
        let base = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();

        // The candidate change: modify, add, delete; taken as `git diff` prints it.
        write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
        write(
            "src/new.rs",
            "pub fn new() -> u32 {\n    crate::answer()\n}\n",
        );
        std::fs::remove_file(repo.join("src/old.rs")).unwrap();
        git(&repo, &["add", "--all"]);
        let diff_text = git(&repo, &["diff", "--cached", "--no-color", "--no-ext-diff"]);
        git(&repo, &["reset", "--quiet", "--hard", "HEAD"]);
        git(&repo, &["clean", "-fdxq"]);
        let diff = out.join("candidate.diff");
        std::fs::write(&diff, &diff_text).unwrap();
        let sha = guard::hash::sha256_hex(diff_text.as_bytes());
        Fixture {
            _dir: dir,
            out,
            repo,
            base,
            diff,
            sha,
        }
    }

    fn out(&self, name: &str) -> PathBuf {
        self.out.join(name)
    }

    fn apply_args<'a>(&'a self, sha: &'a str, base: &'a str) -> Vec<&'a str> {
        vec![
            "apply",
            "--diff",
            s(&self.diff),
            "--expected-sha256",
            sha,
            "--scope",
            SCOPE,
            "--repo",
            s(&self.repo),
            "--base",
            base,
        ]
    }

    /// A fixture with the diff applied; the verdict is at `out/verdict.json`.
    fn applied() -> Fixture {
        let fx = Fixture::new();
        let verdict = fx.out("verdict.json");
        let mut args = fx.apply_args(&fx.sha, &fx.base);
        args.extend(["--verdict-out", s(&verdict)]);
        let out = guard(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        fx
    }

    fn verify(&self, extra: &[&str]) -> Output {
        let verdict = self.out("verdict.json");
        let mut args = vec![
            "verify-tree",
            "--verdict",
            s(&verdict),
            "--repo",
            s(&self.repo),
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        guard(&args)
    }

    /// `verify-tree` after apply, writing the baseline to `out/baseline.json`; must pass.
    fn baseline(&self) -> Value {
        let baseline = self.out("baseline.json");
        let out = self.verify(&["--base", &self.base, "--out", s(&baseline)]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        json(&out)
    }

    fn after_build(&self) -> Output {
        let baseline = self.out("baseline.json");
        self.verify(&["--after-build", "--baseline", s(&baseline)])
    }

    /// `guard run --repo <repo> -- sh -c script`, the build as the workflow runs it.
    fn build(&self, script: &str) -> Output {
        let report = self.out("run.json");
        guard(&[
            "run",
            "--repo",
            s(&self.repo),
            "--report",
            s(&report),
            "--",
            "sh",
            "-c",
            script,
        ])
    }

    /// `guard run --repo <repo> --verdict --baseline --tree-report -- sh -c script`: the build
    /// with the check after it done by the guard itself, as the workflow runs it; the output and
    /// the tree report.
    fn checked_build(&self, script: &str) -> (Output, Value) {
        let report = self.out("run.json");
        let tree = self.out("tree-after-build.json");
        let _ = std::fs::remove_file(&tree);
        let out = guard(&[
            "run",
            "--repo",
            s(&self.repo),
            "--verdict",
            s(&self.out("verdict.json")),
            "--baseline",
            s(&self.out("baseline.json")),
            "--tree-report",
            s(&tree),
            "--report",
            s(&report),
            "--",
            "sh",
            "-c",
            script,
        ]);
        let doc = std::fs::read(&tree)
            .map(|bytes| serde_json::from_slice(&bytes).unwrap())
            .unwrap_or_else(|e| panic!("no tree report ({e}): {}", text(&out)));
        (out, doc)
    }

    /// `git status` and every file's content outside `.git`: what "unchanged" means.
    fn state(&self) -> (String, BTreeMap<String, Vec<u8>>) {
        let status = git(
            &self.repo,
            &[
                "--no-optional-locks",
                "status",
                "--porcelain",
                "--untracked-files=all",
                "--ignored",
            ],
        );
        let mut files = BTreeMap::new();
        let mut stack = vec![self.repo.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let rel = path.strip_prefix(&self.repo).unwrap().to_str().unwrap();
                if rel == ".git" {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    stack.push(path);
                } else {
                    files.insert(rel.to_string(), std::fs::read(&path).unwrap());
                }
            }
        }
        (status, files)
    }
}

/// The findings of a verify-tree JSON result, as (rule, path, change).
fn findings(doc: &Value) -> Vec<(String, String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
                f["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn assert_finding(out: &Output, rule: &str, path: &str) {
    assert_eq!(out.status.code(), Some(1), "{}", text(out));
    let doc = json(out);
    assert_eq!(doc["schema"], "agent-team-apply/verify-tree/v1");
    assert_eq!(doc["result"], "fail");
    let found = findings(&doc);
    assert!(
        found.iter().any(|(r, p, _)| r == rule && p == path),
        "no {rule} finding for {path}: {found:?}"
    );
    assert!(
        found.iter().all(|(r, _, _)| r == rule),
        "only {rule} findings expected: {found:?}"
    );
}

/// The `report` binary. Cargo builds only this package's binaries for its tests, so build
/// report's (a no-op when it is fresh) into the same target directory and profile as guard's.
fn report_binary() -> PathBuf {
    let guard_exe = Path::new(env!("CARGO_BIN_EXE_guard"));
    let profile_dir = guard_exe.parent().unwrap();
    let target_dir = profile_dir.parent().unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args([
            "build",
            "--quiet",
            "--locked",
            "-p",
            "report",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir);
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => {}
        Some(profile) => {
            cargo.args(["--profile", profile]);
        }
        None => panic!("no profile directory above {}", guard_exe.display()),
    }
    let status = cargo.status().unwrap();
    assert!(status.success(), "cargo build -p report failed");
    let exe = guard_exe.with_file_name("report");
    assert!(exe.is_file(), "no report binary at {}", exe.display());
    exe
}

#[test]
fn apply_verify_run_verify_report_end_to_end() {
    let fx = Fixture::applied();
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("src/lib.rs")).unwrap(),
        "pub fn answer() -> u32 {\n    42\n}\n"
    );
    assert!(fx.repo.join("src/new.rs").is_file());
    assert!(!fx.repo.join("src/old.rs").exists());
    // The index is untouched: the candidate change is unstaged.
    assert_eq!(git(&fx.repo, &["diff", "--cached", "--name-only"]), "");

    let before = fx.baseline();
    assert_eq!(before["check"], "after-apply");
    assert_eq!(before["result"], "pass");
    assert_eq!(before["base_commit"], fx.base.as_str());
    assert_eq!(before["diff_sha256"], fx.sha.as_str());
    let baseline_bytes = std::fs::read(fx.out("baseline.json")).unwrap();
    let baseline_sha = guard::hash::sha256_hex(&baseline_bytes);
    assert_eq!(before["snapshot_sha256"], baseline_sha.as_str());
    let snapshot: Value = serde_json::from_slice(&baseline_bytes).unwrap();
    assert_eq!(snapshot["schema"], "agent-team-apply/tree-snapshot/v1");
    let recorded: Vec<&str> = snapshot["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    for path in [
        ".git/config",
        ".git/HEAD",
        ".git/index",
        "src/new.rs",
        "build.sh",
    ] {
        assert!(recorded.contains(&path), "{path} not in the baseline");
    }
    std::fs::write(fx.out("tree-before.json"), before.to_string()).unwrap();

    let run = fx.build(
        "mkdir -p target/debug && cat src/new.rs > target/debug/app && echo '@team | <b>built</b>'",
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));

    let baseline_pin = format!("--baseline-sha256={baseline_sha}");
    let after_out = fx.verify(&[
        "--after-build",
        "--baseline",
        s(&fx.out("baseline.json")),
        &baseline_pin,
        "--base",
        &fx.base,
    ]);
    assert_eq!(after_out.status.code(), Some(0), "{}", text(&after_out));
    let after = json(&after_out);
    assert_eq!(after["check"], "after-build");
    assert_eq!(after["result"], "pass");
    assert_eq!(after["baseline_sha256"], baseline_sha.as_str());
    std::fs::write(fx.out("tree-after.json"), after.to_string()).unwrap();

    let report = report_binary();
    let args = |format: &'static str| {
        vec![
            "build-test".to_string(),
            "--run".into(),
            s(&fx.out("run.json")).into(),
            "--tree-before".into(),
            s(&fx.out("tree-before.json")).into(),
            "--tree-after".into(),
            s(&fx.out("tree-after.json")).into(),
            "--verdict".into(),
            s(&fx.out("verdict.json")).into(),
            "--format".into(),
            format.into(),
        ]
    };
    let run_report = |format| {
        let args = args(format);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = bin(&report, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let doc: Value = serde_json::from_str(&run_report("json")).unwrap();
    assert_eq!(doc["schema"], "agent-team-apply/build-test-report/v1");
    assert_eq!(doc["authoritative"], false);
    assert!(doc["note"].as_str().unwrap().contains("Nothing downstream"));
    assert_eq!(doc["diff_sha256"], fx.sha.as_str());
    assert_eq!(doc["build"]["exit"]["code"], 0);
    assert_eq!(doc["build"]["passed"], true);
    assert_eq!(doc["build"]["network"]["network"], "namespace");
    assert_eq!(doc["build"]["command"][0], "sh");
    assert!(
        doc["build"]["output_tail"]
            .as_str()
            .unwrap()
            .contains("@team | <b>built</b>")
    );
    assert_eq!(doc["tree_after_apply"]["result"], "pass");
    assert_eq!(doc["tree_after_build"]["result"], "pass");

    let markdown = run_report("markdown");
    assert!(markdown.contains("not authoritative"), "{markdown}");
    // The output tail is a fenced code block: shown exactly, rendered as text (no mention, no
    // HTML), and no line of it can close the fence.
    assert!(
        markdown.contains("\n```\n@team | <b>built</b>\n```\n"),
        "the output tail is a code block: {markdown}"
    );
    // The command too is code (a span), never markup.
    assert!(
        markdown.contains("- **Command:** `sh -c mkdir -p target/debug && cat src/new.rs > target/debug/app && echo '@team | <b>built</b>'`"),
        "{markdown}"
    );
}

#[test]
fn build_writes_into_the_surface_out_of_scope_or_links_fail_after_the_build() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/x.yml",
            ".github/workflows/x.yml",
            "created",
        ),
        ("echo '* @attacker' > CODEOWNERS", "CODEOWNERS", "created"),
        (
            "echo '* @attacker' > src/CODEOWNERS",
            "src/CODEOWNERS",
            "created",
        ),
        ("echo changed >> docs/guide.md", "docs/guide.md", "modified"),
        ("echo new > notes.txt", "notes.txt", "created"),
        ("rm README.md", "README.md", "deleted"),
        ("chmod -x build.sh", "build.sh", "modified"),
        ("ln -s ../README.md src/link", "src/link", "created"),
        (
            "mkdir -p target && ln -s /etc/passwd target/passwd",
            "target/passwd",
            "created",
        ),
        (
            "mkdir -p target && echo x > target/CODEOWNERS",
            "target/CODEOWNERS",
            "created",
        ),
        (
            "mkdir -p src/.git && echo x > src/.git/config",
            "src/.git",
            "created",
        ),
    ];
    for (script, path, change) in cases {
        let fx = Fixture::applied();
        fx.baseline();
        let before = fx.state();
        let (run, doc) = fx.checked_build(script);
        assert_eq!(run.status.code(), Some(1), "{script}: {}", text(&run));
        assert_eq!(doc["result"], "fail", "{script}: {doc}");
        let found = findings(&doc);
        assert!(
            found
                .iter()
                .any(|(r, p, c)| r == "build-wrote" && p == path && c == change),
            "{script}: {doc}"
        );
        assert!(found.iter().all(|(r, _, _)| r == "build-wrote"), "{doc}");
        // Whatever the build wrote stayed in its discarded layer: the checkout later steps see
        // is the one the baseline describes.
        assert_eq!(fx.state(), before, "{script}");
        let again = fx.after_build();
        assert_eq!(again.status.code(), Some(0), "{script}: {}", text(&again));
    }
}

#[test]
fn a_git_hook_written_without_the_read_only_mount_fails_after_the_build() {
    let fx = Fixture::applied();
    fx.baseline();
    // Under `guard run --repo`, .git is read-only: the hook cannot be written at all.
    let run = fx.build("echo 'curl evil' > .git/hooks/pre-commit");
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(!fx.repo.join(".git/hooks/pre-commit").exists());
    let out = fx.after_build();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // Without the mount layer (the build run directly), the tree check is what catches it.
    for (script, path) in [
        (
            "echo 'curl evil' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
            ".git/hooks/pre-commit",
        ),
        (
            "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
            ".git/config",
        ),
        ("echo '*.rs' >> .git/info/exclude", ".git/info/exclude"),
    ] {
        let fx = Fixture::applied();
        fx.baseline();
        sh(&fx.repo, script);
        assert_finding(&fx.after_build(), "build-wrote", path);
    }
}

#[test]
fn a_build_that_writes_only_build_outputs_or_in_scope_passes() {
    let fx = Fixture::applied();
    fx.baseline();
    let (run, doc) = fx.checked_build(
        "mkdir -p target/debug/deps target/release && echo bin > target/debug/app \
         && echo meta > target/.rustc_info.json && chmod +x target/debug/app \
         && echo gen > src/generated.rs && test -x target/debug/app && cat src/generated.rs",
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert_eq!(doc["result"], "pass", "{doc}");
    assert!(text(&run).contains("| gen"), "{}", text(&run));
}

#[test]
fn a_worktree_that_differs_from_the_verdict_fails_verify_tree() {
    let cases: &[(&str, &str, &str)] = &[
        ("echo extra > src/extra.rs", "src/extra.rs", "unexpected"),
        ("echo extra > notes.txt", "notes.txt", "unexpected"),
        ("echo ignored > build.log", "build.log", "unexpected"),
        (
            "mkdir -p target && echo stale > target/app",
            "target/app",
            "unexpected",
        ),
        ("chmod +x src/lib.rs", "src/lib.rs", "differs"),
        ("chmod +x src/new.rs", "src/new.rs", "differs"),
        ("chmod -x build.sh", "build.sh", "unexpected"),
        ("git checkout -- src/lib.rs", "src/lib.rs", "missing"),
        ("rm src/new.rs", "src/new.rs", "missing"),
        ("git checkout -- src/old.rs", "src/old.rs", "missing"),
        ("echo more >> README.md", "README.md", "unexpected"),
        ("ln -s lib.rs src/link.rs", "src/link.rs", "unexpected"),
        (
            "mkdir -p src/vendor/.git && echo x > src/vendor/.git/config",
            "src/vendor/.git/config",
            "unexpected",
        ),
        ("mkdir -p src/empty", "src/empty", "unexpected"),
        ("mkfifo src/pipe", "src/pipe", "unexpected"),
    ];
    for (script, path, change) in cases {
        let fx = Fixture::applied();
        // `git checkout` here needs the fixture's git identity and configuration.
        if let Some(rest) = script.strip_prefix("git ") {
            let args: Vec<&str> = rest.split(' ').collect();
            git(&fx.repo, &args);
        } else {
            sh(&fx.repo, script);
        }
        let out = fx.verify(&["--base", &fx.base]);
        assert_finding(&out, "tree-mismatch", path);
        let doc = json(&out);
        assert!(
            findings(&doc)
                .iter()
                .any(|(_, p, c)| p == path && c == change),
            "{script}: {doc}"
        );
    }
}

#[test]
fn apply_refuses_and_leaves_the_worktree_unchanged() {
    enum Setup {
        None,
        Sh(&'static str),
        NewCommit,
    }
    struct Case {
        setup: Setup,
        /// None: the diff's own hash.
        sha: Option<&'static str>,
        /// None: the base commit.
        base: Option<&'static str>,
        code: i32,
        message: &'static str,
    }
    let case = |setup, sha, base, code, message| Case {
        setup,
        sha,
        base,
        code,
        message,
    };
    let cases = [
        case(Setup::None, Some(OTHER_SHA), None, 1, "hash-mismatch"),
        case(Setup::Sh("echo x > notes.txt"), None, None, 2, "not clean"),
        case(Setup::Sh("echo x > debug.log"), None, None, 2, "not clean"),
        case(
            Setup::Sh("mkdir -p target && echo x > target/stale"),
            None,
            None,
            2,
            "not clean",
        ),
        case(
            Setup::Sh("echo x >> docs/guide.md"),
            None,
            None,
            2,
            "not clean",
        ),
        case(
            Setup::None,
            None,
            Some("1111111111111111111111111111111111111111"),
            2,
            "does not name a commit",
        ),
        case(Setup::NewCommit, None, None, 2, "not the base commit"),
    ];
    for Case {
        setup,
        sha,
        base,
        code,
        message,
    } in cases
    {
        let fx = Fixture::new();
        match setup {
            Setup::None => {}
            Setup::Sh(script) => sh(&fx.repo, script),
            Setup::NewCommit => {
                std::fs::write(fx.repo.join("docs/guide.md"), "# Guide, v2\n").unwrap();
                git(&fx.repo, &["commit", "--quiet", "-am", "later"]);
            }
        }
        let before = fx.state();
        let out = guard(&fx.apply_args(sha.unwrap_or(&fx.sha), base.unwrap_or(&fx.base)));
        assert_eq!(out.status.code(), Some(code), "{message}: {}", text(&out));
        assert!(text(&out).contains(message), "{message}: {}", text(&out));
        assert_eq!(fx.state(), before, "{message}: the worktree changed");
    }
}

#[test]
fn apply_refuses_what_is_not_the_top_level_of_a_checkout() {
    let fx = Fixture::new();
    let before = fx.state();
    let plain = fx.out("not-a-repo");
    std::fs::create_dir_all(&plain).unwrap();
    for (repo, message) in [
        (plain.as_path(), "not a git repository"),
        (&fx.repo.join("src"), "not the top level"),
        (&fx.out("missing"), "No such file"),
    ] {
        let out = guard(&[
            "apply",
            "--diff",
            s(&fx.diff),
            "--expected-sha256",
            &fx.sha,
            "--scope",
            SCOPE,
            "--repo",
            s(repo),
            "--base",
            &fx.base,
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(message), "{message}: {}", text(&out));
    }
    assert_eq!(fx.state(), before);
    assert_eq!(std::fs::read_dir(&plain).unwrap().count(), 0);
}

#[test]
fn after_build_refuses_a_baseline_or_verdict_that_changed() {
    let fx = Fixture::applied();
    fx.baseline();
    let baseline = fx.out("baseline.json");
    let pin = format!(
        "--baseline-sha256={}",
        guard::hash::sha256_hex(&std::fs::read(&baseline).unwrap())
    );
    // A build that rewrites the baseline to hide its writes.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    doc["entries"]
        .as_array_mut()
        .unwrap()
        .retain(|e| e["path"] != "README.md");
    std::fs::write(&baseline, doc.to_string()).unwrap();
    let out = fx.verify(&["--after-build", "--baseline", s(&baseline), &pin]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("changed since it was written"));

    // A build that widens the scope in the verdict file.
    let fx = Fixture::applied();
    fx.baseline();
    let verdict = fx.out("verdict.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&verdict).unwrap()).unwrap();
    doc["scope"] = serde_json::json!(["**"]);
    std::fs::write(&verdict, doc.to_string()).unwrap();
    let out = fx.after_build();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not the one the baseline was taken with"));
}

/// The baseline is read as a stream, as strictly as a whole read: entries out of order, a field
/// given twice or unknown, or bytes after the document are refused (exit 2, the reason named),
/// and a pinned baseline that was rewritten is refused as changed even when it no longer parses.
#[test]
fn after_build_reads_the_baseline_strictly() {
    let fx = Fixture::applied();
    fx.baseline();
    let baseline = fx.out("baseline.json");
    let original = std::fs::read(&baseline).unwrap();
    assert_eq!(fx.after_build().status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&original).unwrap();
    let mut swapped = doc.clone();
    swapped["entries"].as_array_mut().unwrap().swap(0, 1);
    let mut repeated = doc.clone();
    let first = repeated["entries"][0].clone();
    repeated["entries"].as_array_mut().unwrap().insert(0, first);
    let mut unknown = doc.clone();
    unknown["entries"][0]["inode"] = serde_json::json!(1);
    let text_of = |v: &Value| v.to_string();
    let twice = text_of(&doc).replacen("\"scope\":", "\"scope\":[\"**\"],\"scope\":", 1);
    for (bytes, reason) in [
        (text_of(&swapped), "not sorted and unique"),
        (text_of(&repeated), "not sorted and unique"),
        (text_of(&unknown), "unknown field"),
        (twice, "duplicate field"),
        (format!("{} {{}}", text_of(&doc)), "trailing characters"),
    ] {
        std::fs::write(&baseline, &bytes).unwrap();
        let out = fx.after_build();
        assert_eq!(out.status.code(), Some(2), "{reason}: {}", text(&out));
        assert!(text(&out).contains(reason), "{reason}: {}", text(&out));
    }
    let pin = format!("--baseline-sha256={}", guard::hash::sha256_hex(&original));
    let mut cut = original.clone();
    cut.truncate(original.len() / 2);
    std::fs::write(&baseline, &cut).unwrap();
    let out = fx.verify(&["--after-build", "--baseline", s(&baseline), &pin]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("changed since it was written"),
        "{}",
        text(&out)
    );
    std::fs::write(&baseline, &original).unwrap();
    let out = fx.verify(&["--after-build", "--baseline", s(&baseline), &pin]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn run_passes_the_policy_build_env_through_the_secret_filter() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yml");
    std::fs::write(
        &policy,
        "version: 1\nbuild:\n  env: [\"BUILD_FLAVOUR\", \"MIRROR_URL\"]\n",
    )
    .unwrap();
    let report = dir.path().join("run.json");
    let out = Command::new(env!("CARGO_BIN_EXE_guard"))
        .env_clear()
        .env("PATH", path_var())
        .env("BUILD_FLAVOUR", "nightly")
        .env("MIRROR_URL", "https://user:hunter2@mirror.example/")
        .env("UNLISTED", "x")
        .current_dir(dir.path())
        .args(["run", "--policy", s(&policy), "--report", s(&report), "--"])
        .args([
            "sh",
            "-c",
            "echo \"flavour=${BUILD_FLAVOUR:-unset} mirror=${MIRROR_URL:-unset} unlisted=${UNLISTED:-unset}\"",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(
        doc["output_tail"]
            .as_str()
            .unwrap()
            .contains("flavour=nightly mirror=unset unlisted=unset"),
        "{doc}"
    );

    // A policy that cannot be loaded stops the run before anything executes.
    std::fs::write(&policy, "version: 1\nbuild:\n  env: [\"GH_TOKEN\"]\n").unwrap();
    let marker = dir.path().join("ran");
    let out = guard(&["run", "--policy", s(&policy), "--", "touch", s(&marker)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!marker.exists());
}

/// Issue 27's escape: the base has a submodule, the checkout has none (an empty directory at
/// its path); the build makes that directory a repository whose config sets `core.fsmonitor`
/// and a hook. `actions/checkout`'s post step then runs `git submodule foreach --recursive` in
/// the checkout, outside the sandbox, with the job's token. The build's writes never reach the
/// checkout (they stay in the discarded layer), so nothing planted runs.
#[test]
fn a_nested_repository_the_build_plants_never_reaches_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let sub = root.join("subrepo");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(sub.join("lib.txt"), "sub\n").unwrap();
    git(&sub, &["add", "--all"]);
    git(&sub, &["commit", "--quiet", "-m", "sub"]);
    let base = root.join("base");
    std::fs::create_dir_all(&base).unwrap();
    git(&base, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(base.join("README.md"), "# base\n").unwrap();
    git(
        &base,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "--quiet",
            s(&sub),
            "vendor/sub",
        ],
    );
    git(&base, &["commit", "--quiet", "-m", "base"]);
    // Checked out without submodules, as actions/checkout does by default.
    git(root, &["clone", "--quiet", s(&base), "work"]);
    let work = root.join("work");
    assert_eq!(
        std::fs::read_dir(work.join("vendor/sub")).unwrap().count(),
        0
    );

    let marker = root.join("PLANTED-RAN");
    let plant = format!(
        "cd vendor/sub && git init --quiet && git config core.fsmonitor 'touch {m}; false' \
         && printf '#!/bin/sh\\ntouch {m}\\n' > .git/hooks/post-checkout \
         && chmod +x .git/hooks/post-checkout && printf 'x\\n' > f && git add f \
         && git -c user.name=a -c user.email=a@b commit --quiet -m planted && ls -a .git",
        m = marker.display()
    );
    let report = root.join("run.json");
    let run = guard(&[
        "run",
        "--repo",
        s(&work),
        "--report",
        s(&report),
        "--",
        "sh",
        "-c",
        &plant,
    ]);
    // The build planted it in the tree it saw (and that tree's check would flag it).
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(text(&run).contains("| config"), "{}", text(&run));

    // The trusted post step, outside the sandbox: what actions/checkout's runs, and a status.
    for args in [
        &[
            "submodule",
            "foreach",
            "--recursive",
            "git config --local --name-only --get-regexp core || :; git status --porcelain",
        ][..],
        &["status", "--porcelain", "--ignore-submodules=none"][..],
    ] {
        let out = git_support::git(&work).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
    assert!(
        !marker.exists(),
        "a command the build planted ran outside the sandbox"
    );
    assert_eq!(
        std::fs::read_dir(work.join("vendor/sub")).unwrap().count(),
        0,
        "the build's nested repository reached the checkout"
    );
    let layers = serde_json::from_slice::<Value>(&std::fs::read(&report).unwrap()).unwrap()
        ["isolation"]["containment"]["layers"]
        .to_string();
    assert!(layers.contains("worktree-overlay-discarded"), "{layers}");
}
