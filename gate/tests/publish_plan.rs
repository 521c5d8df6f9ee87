//! `gate publish-plan` end to end, on real temporary git repositories.
//!
//! The central property: the plan's `tree` is exactly the tree `git apply --index` yields from the
//! same diff on the same base (`git write-tree`), and so is the tree a consumer makes of the plan:
//! decode its contents and apply them with its entries' modes to a copy of the base checkout
//! (write every addition with its mode, remove every deletion, `git add -A`, `git write-tree`);
//! every entry's blob id is `git hash-object` of its contents; the method is
//! `create-commit-on-branch` exactly when every written file is `100644`. Executable files (edited,
//! deleted, or new and mode changes where the policy allows them) are planned with their modes.
//! Then: every diff the guard rejects gives no plan and exit 1 with the rule id; bad arguments
//! give exit 2 before anything is read; and the plan's shape is checked against GitHub's
//! documented input types.
//!
//! git runs with a cleared environment (PATH, fixed identity and dates, no system or global
//! configuration); the binary runs with PATH only, so no ambient GITHUB_* or CI variable reaches it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use gate::output::publish_plan_v2::{PublishPlanDoc, SCHEMA};
use gate::publish::branch_name_problem;
use serde_json::Value;

mod common;
use common::git_command;

const BRANCH: &str = "agent-team-apply/task-1";
const BASE_BRANCH: &str = "main";
const TASK: &str = "task-1";
const RUN: &str = "8127364512";
const REPOSITORY: &str = "octo-org/widgets";

// ---------------------------------------------------------------------------------------------
// git helpers

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git_command(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn git_text(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(git(dir, args)).unwrap().trim().to_owned()
}

fn write(root: &Path, path: &str, contents: &[u8]) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, contents).unwrap();
}

#[cfg(unix)]
fn set_executable(path: &Path, executable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A base repository with one commit on `main`.
struct Fixture {
    tmp: tempfile::TempDir,
    base: PathBuf,
    base_sha: String,
    /// A policy every run of this fixture passes, when set.
    policy: Option<PathBuf>,
}

impl Fixture {
    /// Runs with `portable-paths: false`, for names Windows cannot check out (`0:x`), whose
    /// handling by the plan itself is under test.
    fn non_portable(mut self) -> Fixture {
        let path = self.path("non-portable-policy.yml");
        fs::write(&path, "version: 1\nportable-paths: false\n").unwrap();
        self.policy = Some(path);
        self
    }
}

const BASE_FILES: &[(&str, &[u8])] = &[
    ("src/lib.rs", b"pub fn one() -> u32 {\n    1\n}\n"),
    ("src/old.rs", b"// to be deleted\n"),
    ("src/rename_me.rs", b"pub const NAME: &str = \"before\";\n"),
    (
        "src/move_and_edit.rs",
        b"line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n",
    ),
    ("src/nonl.txt", b"ends with a newline\n"),
    ("src/crlf.txt", b"one\r\ntwo\r\nthree\r\n"),
    ("docs/\u{fc}n\u{ef}-c\u{f4}d\u{e9}.txt", b"unicode\n"),
    ("docs/guide.md", b"# Guide\n"),
    ("README.md", b"readme\n"),
];

fn fixture() -> Fixture {
    fixture_with(|_| {})
}

fn fixture_with(extra: impl FnOnce(&Path)) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    fs::create_dir(&base).unwrap();
    git(&base, &["init", "-q", "-b", BASE_BRANCH]);
    for (path, contents) in BASE_FILES {
        write(
            &base,
            std::str::from_utf8(path.as_bytes()).unwrap(),
            contents,
        );
    }
    extra(&base);
    git(&base, &["add", "-A"]);
    git(&base, &["commit", "-q", "-m", "base"]);
    let base_sha = git_text(&base, &["rev-parse", "HEAD"]);
    Fixture {
        tmp,
        base,
        base_sha,
        policy: None,
    }
}

impl Fixture {
    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    fn clone_base(&self, name: &str) -> PathBuf {
        let dir = self.path(name);
        git(
            self.tmp.path(),
            &["clone", "-q", self.base.to_str().unwrap(), name],
        );
        dir
    }

    /// The canonical diff `git diff` emits for the edit, made in a scratch clone.
    fn diff(&self, edit: impl FnOnce(&Path)) -> Vec<u8> {
        let scratch = self.clone_base(&format!("scratch-{}", unique()));
        edit(&scratch);
        git(&scratch, &["add", "-A"]);
        git(&scratch, &["diff", "--cached", "-M", "HEAD"])
    }

    /// The tree `git apply --index` makes of the diff on the base, in a separate clone.
    fn reference_tree(&self, diff: &[u8]) -> String {
        let reference = self.clone_base(&format!("reference-{}", unique()));
        let patch = self.path(&format!("reference-{}.patch", unique()));
        fs::write(&patch, diff).unwrap();
        git(&reference, &["apply", "--index", patch.to_str().unwrap()]);
        git_text(&reference, &["write-tree"])
    }

    /// The tree a consumer of the plan makes: decode the contents and apply them, with the
    /// entries' modes, to a copy of the base checkout. Every entry's blob id is checked against
    /// `git hash-object` of its contents on the way.
    fn tree_from_plan(&self, plan: &Value) -> String {
        let copy = self.clone_base(&format!("published-{}", unique()));
        let changes = &plan["input"]["fileChanges"];
        for deletion in changes["deletions"].as_array().unwrap() {
            let path = deletion["path"].as_str().unwrap();
            fs::remove_file(copy.join(path)).unwrap();
        }
        let modes: std::collections::BTreeMap<&str, &Value> = plan["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["path"].as_str().unwrap(), e))
            .collect();
        for addition in changes["additions"].as_array().unwrap() {
            let path = addition["path"].as_str().unwrap();
            let contents = BASE64
                .decode(addition["contents"].as_str().unwrap())
                .unwrap();
            let entry = modes[path];
            if entry["new_mode"] == "120000" {
                // A link's blob is its target; hashed from a file holding the same bytes.
                let full = copy.join(path);
                fs::create_dir_all(full.parent().unwrap()).unwrap();
                let _ = fs::remove_file(&full);
                std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&contents), &full).unwrap();
                let bytes = self.path(&format!("link-{}", unique()));
                fs::write(&bytes, &contents).unwrap();
                let hashed = git_text(&copy, &["hash-object", "--", bytes.to_str().unwrap()]);
                assert_eq!(entry["blob"], hashed.as_str(), "{path}");
                continue;
            }
            write(&copy, path, &contents);
            set_executable(&copy.join(path), entry["new_mode"] == "100755");
            let hashed = git_text(&copy, &["hash-object", "--", path]);
            assert_eq!(entry["blob"], hashed.as_str(), "{path}");
        }
        git(&copy, &["add", "-A"]);
        git_text(&copy, &["write-tree"])
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------------
// the binary

fn gate(args: &[OsString]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.arg("publish-plan")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Arguments for a plan of `diff` (hashed as given) written to `out`.
struct Run {
    args: Vec<OsString>,
    out: PathBuf,
}

fn sha256(bytes: &[u8]) -> String {
    guard::hash::sha256_hex(bytes)
}

fn run_args(fx: &Fixture, diff: &[u8], expected_sha: &str, scope: &[&str]) -> Run {
    let n = unique();
    let diff_path = fx.path(&format!("candidate-{n}.diff"));
    fs::write(&diff_path, diff).unwrap();
    let out = fx.path(&format!("plan-{n}.json"));
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |flag: &str, value: &OsString| {
        args.push(flag.into());
        args.push(value.clone());
    };
    push("--repo", &fx.base.clone().into_os_string());
    push("--base", &fx.base_sha.clone().into());
    push("--diff", &diff_path.into_os_string());
    push("--expected-sha256", &expected_sha.into());
    push("--branch", &BRANCH.into());
    push("--base-branch", &BASE_BRANCH.into());
    push("--repository", &REPOSITORY.into());
    push("--task-id", &TASK.into());
    push("--run-id", &RUN.into());
    push("--out", &out.clone().into_os_string());
    if let Some(policy) = &fx.policy {
        push("--policy", &policy.clone().into_os_string());
    }
    for glob in scope {
        push("--scope", &(*glob).into());
    }
    Run { args, out }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Run the plan for `diff`, expect success, and return the document.
fn plan_for(fx: &Fixture, diff: &[u8]) -> Value {
    plan_with(run_args(fx, diff, &sha256(diff), &["**"]))
}

fn plan_with(run: Run) -> Value {
    let diff =
        fs::read(&run.args[run.args.iter().position(|a| a == "--diff").unwrap() + 1]).unwrap();
    let diff = diff.as_slice();
    let out = gate(&run.args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}\ndiff:\n{}",
        stderr(&out),
        String::from_utf8_lossy(diff)
    );
    assert!(out.stdout.is_empty(), "with --out, stdout stays empty");
    let text = fs::read_to_string(&run.out).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    check_shape(&value);
    // The typed form reads it back exactly (unknown keys are rejected there).
    let typed: PublishPlanDoc = serde_json::from_str(&text).unwrap();
    assert_eq!(typed.to_json().unwrap(), text);
    value
}

/// The plan's tree is `git apply`'s tree, which is also the tree the diff was made from, and so
/// is the tree made from the plan's contents and modes.
fn assert_reproduces(fx: &Fixture, edit: impl FnOnce(&Path)) -> Value {
    assert_reproduces_with(fx, edit, None)
}

fn assert_reproduces_with(fx: &Fixture, edit: impl FnOnce(&Path), policy: Option<&Path>) -> Value {
    let diff = fx.diff(edit);
    let plan = match policy {
        None => plan_for(fx, &diff),
        Some(policy) => plan_with(with_policy(
            run_args(fx, &diff, &sha256(&diff), &["**"]),
            policy,
        )),
    };
    let expected = fx.reference_tree(&diff);
    assert_eq!(plan["tree"], expected.as_str(), "the plan's tree is git's");
    assert_eq!(fx.tree_from_plan(&plan), expected);
    assert_eq!(
        plan["base_tree"],
        git_text(&fx.base, &["rev-parse", "HEAD^{tree}"]).as_str()
    );
    assert_ne!(expected, git_text(&fx.base, &["rev-parse", "HEAD^{tree}"]));
    assert_base_untouched(fx);
    plan
}

/// The plan's entries as `(path, old_mode, new_mode)`, modes as written (`-` for none).
fn entry_modes(plan: &Value) -> Vec<(String, String, String)> {
    let mode = |v: &Value| v.as_str().unwrap_or("-").to_owned();
    plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_owned(),
                mode(&e["old_mode"]),
                mode(&e["new_mode"]),
            )
        })
        .collect()
}

/// The base checkout's worktree and index are exactly as committed: nothing was checked out or
/// applied there.
fn assert_base_untouched(fx: &Fixture) {
    assert_eq!(
        git_text(
            &fx.base,
            &["status", "--porcelain", "--untracked-files=all"]
        ),
        ""
    );
    assert_eq!(git_text(&fx.base, &["rev-parse", "HEAD"]), fx.base_sha);
}

fn paths(plan: &Value, kind: &str) -> Vec<String> {
    plan["input"]["fileChanges"][kind]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// the payload's shape, checked by hand against GitHub's documented input types

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn assert_keys(v: &Value, required: &[&str], optional: &[&str]) {
    let present = keys(v);
    for key in required {
        assert!(present.contains(key), "missing {key} in {v}");
    }
    for key in &present {
        assert!(
            required.contains(key) || optional.contains(key),
            "unexpected key {key}"
        );
    }
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `CreateCommitOnBranchInput { branch: CommittableBranch!, clientMutationId: String,
/// expectedHeadOid: GitObjectID!, fileChanges: FileChanges, message: CommitMessage! }` and the
/// types below it (GitHub GraphQL schema), inside the versioned document.
fn check_shape(plan: &Value) {
    assert_keys(
        plan,
        &[
            "schema",
            "method",
            "method_reason",
            "base_tree",
            "tree",
            "entries",
            "input",
            "pull_request",
            "diff_sha256",
            "files",
        ],
        &[],
    );
    assert_eq!(plan["schema"], SCHEMA);
    assert_eq!(SCHEMA, "agent-team-apply/publish-plan/v2");
    assert!(is_hex(plan["diff_sha256"].as_str().unwrap(), 64));
    assert!(plan["files"].is_array());
    assert!(is_hex(plan["tree"].as_str().unwrap(), 40));
    assert!(is_hex(plan["base_tree"].as_str().unwrap(), 40));
    assert!(!plan["method_reason"].as_str().unwrap().is_empty());

    // Entries: one per path, modes 100644/100755 (120000 for a link the policy allows), a blob
    // exactly for what is written; the method is createCommitOnBranch exactly when nothing is
    // written with another mode than 100644.
    let mut written = BTreeSet::new();
    let mut deleted = BTreeSet::new();
    let mut moded = false;
    for entry in plan["entries"].as_array().unwrap() {
        assert_keys(entry, &["path", "old_mode", "new_mode", "blob"], &[]);
        for mode in [&entry["old_mode"], &entry["new_mode"]] {
            assert!(
                mode.is_null() || *mode == "100644" || *mode == "100755" || *mode == "120000",
                "{entry}"
            );
        }
        let path = entry["path"].as_str().unwrap().to_owned();
        if entry["new_mode"].is_null() {
            assert!(
                entry["blob"].is_null() && !entry["old_mode"].is_null(),
                "{entry}"
            );
            assert!(deleted.insert(path));
        } else {
            assert!(is_hex(entry["blob"].as_str().unwrap(), 40), "{entry}");
            moded |= entry["new_mode"] == "100755" || entry["new_mode"] == "120000";
            assert!(written.insert(path));
        }
    }
    let expected_method = if moded {
        "git-database"
    } else {
        "create-commit-on-branch"
    };
    assert_eq!(plan["method"], expected_method);

    let input = &plan["input"];
    assert_keys(
        input,
        &["branch", "expectedHeadOid", "message"],
        &["clientMutationId", "fileChanges"],
    );
    // CommittableBranch { branchName: String, id: ID, repositoryNameWithOwner: String }: by name
    // and repository, never by node id here.
    let branch = &input["branch"];
    assert_keys(branch, &["branchName"], &["repositoryNameWithOwner"]);
    assert!(branch["branchName"].is_string());
    if let Some(repo) = branch.get("repositoryNameWithOwner") {
        assert!(repo.as_str().unwrap().contains('/'));
    }
    // GitObjectID: the full commit id.
    assert!(is_hex(input["expectedHeadOid"].as_str().unwrap(), 40));
    // CommitMessage { body: String, headline: String! }
    let message = &input["message"];
    assert_keys(message, &["headline"], &["body"]);
    let headline = message["headline"].as_str().unwrap();
    assert!(!headline.is_empty() && !headline.contains('\n'));
    assert!(message["body"].is_string());
    // FileChanges { additions: [FileAddition!], deletions: [FileDeletion!] }
    let changes = &input["fileChanges"];
    assert_keys(changes, &[], &["additions", "deletions"]);
    let mut seen = BTreeSet::new();
    for addition in changes["additions"].as_array().unwrap() {
        // FileAddition { contents: Base64String!, path: String! }
        assert_keys(addition, &["contents", "path"], &[]);
        let path = addition["path"].as_str().unwrap();
        let contents = addition["contents"].as_str().unwrap();
        // RFC 4648 base64, padded, standard alphabet: decodes, and re-encodes to the same text.
        let decoded = BASE64.decode(contents).unwrap();
        assert_eq!(BASE64.encode(&decoded), contents);
        assert!(!path.is_empty() && !path.starts_with('/'));
        assert!(seen.insert(path.to_owned()), "{path} twice");
        assert!(written.contains(path), "{path} has no written entry");
    }
    for deletion in changes["deletions"].as_array().unwrap() {
        // FileDeletion { path: String! }
        assert_keys(deletion, &["path"], &[]);
        let path = deletion["path"].as_str().unwrap();
        assert!(!path.is_empty() && !path.starts_with('/'));
        assert!(seen.insert(path.to_owned()), "{path} twice");
        assert!(deleted.contains(path), "{path} has no deletion entry");
    }
    assert_eq!(seen.len(), written.len() + deleted.len());

    let pr = &plan["pull_request"];
    assert_keys(pr, &["title", "body", "draft", "base", "head"], &[]);
    assert_eq!(pr["draft"], Value::Bool(true));
    assert_eq!(pr["head"], branch["branchName"]);
    assert!(pr["title"].is_string() && pr["body"].is_string() && pr["base"].is_string());
    assert_ne!(pr["base"], pr["head"]);
}

// ---------------------------------------------------------------------------------------------
// the plan reproduces git apply

#[test]
fn modify() {
    let fx = fixture();
    let plan = assert_reproduces(&fx, |w| {
        write(w, "src/lib.rs", b"pub fn one() -> u32 {\n    2\n}\n")
    });
    assert_eq!(paths(&plan, "additions"), ["src/lib.rs"]);
    assert!(paths(&plan, "deletions").is_empty());
}

#[test]
fn add() {
    let fx = fixture();
    let plan = assert_reproduces(&fx, |w| {
        write(w, "src/deep/er/new.rs", b"pub fn new() {}\n")
    });
    assert_eq!(paths(&plan, "additions"), ["src/deep/er/new.rs"]);
}

#[test]
fn delete() {
    let fx = fixture();
    let plan = assert_reproduces(&fx, |w| fs::remove_file(w.join("src/old.rs")).unwrap());
    assert!(paths(&plan, "additions").is_empty());
    assert_eq!(paths(&plan, "deletions"), ["src/old.rs"]);
}

#[test]
fn rename_is_a_deletion_and_an_addition() {
    let fx = fixture();
    let plan = assert_reproduces(&fx, |w| {
        fs::rename(w.join("src/rename_me.rs"), w.join("src/renamed.rs")).unwrap();
        fs::create_dir_all(w.join("src/moved")).unwrap();
        fs::rename(
            w.join("src/move_and_edit.rs"),
            w.join("src/moved/edited.rs"),
        )
        .unwrap();
        write(
            w,
            "src/moved/edited.rs",
            b"line 1\nline 2\nline three\nline 4\nline 5\nline 6\n",
        );
    });
    let statuses: Vec<&str> = plan["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["renamed", "renamed"], "git diff -M saw renames");
    assert_eq!(
        paths(&plan, "additions"),
        ["src/moved/edited.rs", "src/renamed.rs"]
    );
    assert_eq!(
        paths(&plan, "deletions"),
        ["src/move_and_edit.rs", "src/rename_me.rs"]
    );
}

#[test]
fn names_with_spaces_and_utf8() {
    let fx = fixture();
    let plan = assert_reproduces(&fx, |w| {
        write(w, "docs/a file with spaces.md", b"spaces\n");
        write(
            w,
            "docs/\u{fc}n\u{ef}c\u{f4}d\u{e9}-\u{65e5}\u{672c}.md",
            b"utf-8\n",
        );
        write(
            w,
            "docs/\u{fc}n\u{ef}-c\u{f4}d\u{e9}.txt",
            b"unicode, edited\n",
        );
    });
    assert_eq!(
        paths(&plan, "additions"),
        [
            "docs/a file with spaces.md",
            "docs/\u{fc}n\u{ef}-c\u{f4}d\u{e9}.txt",
            "docs/\u{fc}n\u{ef}c\u{f4}d\u{e9}-\u{65e5}\u{672c}.md",
        ]
    );
}

/// A new name with both a space and a non-ASCII character: `git diff` quotes it *and* appends the
/// TAB it writes after names containing a space (`"b/x \303\251"<TAB>`). The guard currently
/// rejects that form as malformed (a guard parser gap, failing closed); when it accepts it, the
/// plan must reproduce git's tree like any other.
#[test]
fn quoted_name_with_space_never_gives_a_wrong_plan() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "docs/x y/\u{e9}.md", b"new\n"));
    assert!(String::from_utf8_lossy(&diff).contains("\\303\\251.md\"\t\n"));
    let run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    let out = gate(&run.args);
    match out.status.code() {
        Some(0) => {
            let plan: Value = serde_json::from_slice(&fs::read(&run.out).unwrap()).unwrap();
            check_shape(&plan);
            assert_eq!(fx.tree_from_plan(&plan), fx.reference_tree(&diff));
        }
        _ => assert_no_plan(&fx, &run, "malformed-diff"),
    }
}

#[test]
fn file_without_trailing_newline() {
    let fx = fixture();
    let edit = |w: &Path| {
        write(w, "src/nonl.txt", b"no newline at the end");
        write(w, "src/new_nonl.txt", b"first\nsecond");
    };
    assert!(String::from_utf8_lossy(&fx.diff(edit)).contains("\\ No newline at end of file"));
    let plan = assert_reproduces(&fx, edit);
    let contents: Vec<Vec<u8>> = plan["input"]["fileChanges"]["additions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| BASE64.decode(a["contents"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(contents, [&b"first\nsecond"[..], b"no newline at the end"]);
}

#[test]
fn crlf_content() {
    let fx = fixture();
    let plan = assert_reproduces(&fx, |w| {
        write(w, "src/crlf.txt", b"one\r\n2\r\nthree\r\nfour\r\n");
        write(w, "src/new_crlf.txt", b"a\r\nb\r\n");
    });
    let contents: Vec<Vec<u8>> = plan["input"]["fileChanges"]["additions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| BASE64.decode(a["contents"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(contents[0], b"one\r\n2\r\nthree\r\nfour\r\n");
    assert_eq!(contents[1], b"a\r\nb\r\n");
}

#[test]
fn everything_at_once() {
    let fx = fixture();
    let plan = assert_reproduces(&fx, |w| {
        write(w, "src/lib.rs", b"pub fn one() -> u32 {\n    1 + 0\n}\n");
        write(w, "src/added.rs", b"// added\n");
        fs::remove_file(w.join("src/old.rs")).unwrap();
        fs::create_dir_all(w.join("lib")).unwrap();
        fs::rename(w.join("src/rename_me.rs"), w.join("lib/renamed.rs")).unwrap();
        write(w, "docs/x y/z.md", b"no newline");
        write(w, "docs/é.md", b"utf-8\n");
        write(w, "src/crlf.txt", b"one\r\ntwo\r\n");
    });
    assert_eq!(plan["files"].as_array().unwrap().len(), 7);
}

// ---------------------------------------------------------------------------------------------
// the document

#[test]
fn document_binds_the_commit_to_hash_task_and_run() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "src/lib.rs", b"changed\n"));
    let plan = plan_for(&fx, &diff);
    let sha = sha256(&diff);
    let input = &plan["input"];
    assert_eq!(input["expectedHeadOid"], fx.base_sha.as_str());
    assert_eq!(input["branch"]["branchName"], BRANCH);
    assert_eq!(input["branch"]["repositoryNameWithOwner"], REPOSITORY);
    assert_eq!(plan["diff_sha256"], sha.as_str());
    assert_eq!(plan["pull_request"]["base"], BASE_BRANCH);
    assert_eq!(
        plan["pull_request"]["title"],
        "agent-team-apply task-1: 1 file"
    );

    // git itself reads the trailers at the end of the message.
    let message = format!(
        "{}\n\n{}",
        input["message"]["headline"].as_str().unwrap(),
        input["message"]["body"].as_str().unwrap()
    );
    let msg_path = fx.path("message.txt");
    fs::write(&msg_path, &message).unwrap();
    let trailers = git_text(
        fx.tmp.path(),
        &["interpret-trailers", "--parse", msg_path.to_str().unwrap()],
    );
    assert_eq!(
        trailers,
        format!("Diff-Sha256: {sha}\nTask-Id: {TASK}\nRun-Id: {RUN}")
    );

    let body = plan["pull_request"]["body"].as_str().unwrap();
    assert!(body.contains(&sha));
    assert!(body.contains("Not verified by the gate"));
    assert!(body.contains(&report::escape::code_span("src/lib.rs")));
}

#[test]
fn abbreviated_base_resolves_to_the_full_id() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "src/lib.rs", b"changed\n"));
    let mut run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    let i = run.args.iter().position(|a| a == "--base").unwrap();
    run.args[i + 1] = fx.base_sha[..10].into();
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan: Value = serde_json::from_slice(&fs::read(&run.out).unwrap()).unwrap();
    assert_eq!(plan["input"]["expectedHeadOid"], fx.base_sha.as_str());
}

#[test]
fn plan_goes_to_stdout_without_out_and_optional_fields_are_omitted() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "src/lib.rs", b"changed\n"));
    let mut run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    // Drop --out, --repository, --task-id, --run-id.
    for flag in ["--out", "--repository", "--task-id", "--run-id"] {
        let i = run.args.iter().position(|a| a == flag).unwrap();
        run.args.drain(i..i + 2);
    }
    let body_path = fx.path("body.md");
    run.args.push("--pr-body-out".into());
    run.args.push(body_path.clone().into_os_string());
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_shape(&plan);
    assert!(
        plan["input"]["branch"]
            .get("repositoryNameWithOwner")
            .is_none()
    );
    assert_eq!(plan["pull_request"]["title"], "agent-team-apply: 1 file");
    let body = plan["input"]["message"]["body"].as_str().unwrap();
    assert!(body.contains("Diff-Sha256: "));
    assert!(!body.contains("Task-Id:") && !body.contains("Run-Id:"));
    assert_eq!(
        fs::read_to_string(&body_path).unwrap(),
        plan["pull_request"]["body"].as_str().unwrap()
    );
    assert!(!run.out.exists());
}

#[test]
fn diff_derived_text_is_escaped_in_the_body_and_kept_out_of_the_title() {
    // `:` is not portable to Windows; the policy lets the name through to test the body's escaping.
    let fx = fixture().non_portable();
    let diff = fx.diff(|w| write(w, "docs/@octocat [x](http:evil) #1 <b>.md", b"x\n"));
    let plan = plan_for(&fx, &diff);
    let pr = &plan["pull_request"];
    let title = pr["title"].as_str().unwrap();
    assert_eq!(title, "agent-team-apply task-1: 1 file");
    let body = pr["body"].as_str().unwrap();
    // The path is a code span, which GitHub renders verbatim: no mention, link, reference or
    // tag outside it.
    let span = report::escape::code_span("docs/@octocat [x](http:evil) #1 <b>.md");
    assert!(body.contains(&span), "{body}");
    let outside = body.replace(&span, "");
    for raw in ["@octocat", "[x]", "](", "#1", "<b>", "http:"] {
        assert!(!outside.contains(raw), "raw {raw:?} in body:\n{body}");
    }
    // The commit message carries no diff-derived text either.
    let message = &plan["input"]["message"];
    for part in ["headline", "body"] {
        assert!(!message[part].as_str().unwrap().contains("octocat"));
    }
    // The path itself is published verbatim.
    assert_eq!(
        paths(&plan, "additions"),
        ["docs/@octocat [x](http:evil) #1 <b>.md"]
    );
}

// ---------------------------------------------------------------------------------------------
// no plan: exit 1 with the rule id

fn assert_no_plan(fx: &Fixture, run: &Run, rule: &str) {
    let out = gate(&run.args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(&format!("error[{rule}]")), "{rule} in: {err}");
    assert!(err.contains("NO PLAN"), "{err}");
    assert!(out.stdout.is_empty());
    assert!(!run.out.exists(), "no plan file is written");
    assert_base_untouched(fx);
}

fn rejects(fx: &Fixture, diff: &[u8], scope: &[&str], rule: &str) {
    assert_no_plan(fx, &run_args(fx, diff, &sha256(diff), scope), rule);
}

#[test]
#[cfg(unix)]
fn mode_change_is_rejected() {
    let fx = fixture();
    let diff = fx.diff(|w| set_executable(&w.join("src/lib.rs"), true));
    assert!(String::from_utf8_lossy(&diff).contains("new mode 100755"));
    rejects(&fx, &diff, &["**"], "mode-change");
}

#[test]
#[cfg(unix)]
fn symlink_is_rejected() {
    let fx = fixture();
    let diff = fx.diff(|w| std::os::unix::fs::symlink("../README.md", w.join("src/link")).unwrap());
    rejects(&fx, &diff, &["**"], "symlink");
}

/// Under `symlinks.allow: true`, links in scope are planned with mode 120000 through the Git
/// database (createCommitOnBranch cannot write a link), and the plan reproduces git's tree.
#[test]
#[cfg(unix)]
fn allowed_symlinks_are_planned_with_their_mode() {
    let fx =
        fixture_with(|base| std::os::unix::fs::symlink("lib.rs", base.join("src/old")).unwrap());
    let policy = fx.path("symlink-policy.yml");
    fs::write(&policy, "version: 1\nsymlinks:\n  allow: true\n").unwrap();
    let plan = assert_reproduces_with(
        &fx,
        |w| {
            std::os::unix::fs::symlink("lib.rs", w.join("src/link")).unwrap();
            fs::remove_file(w.join("src/old")).unwrap();
        },
        Some(&policy),
    );
    assert_eq!(
        entry_modes(&plan),
        [
            ("src/link".into(), "-".into(), "120000".into()),
            ("src/old".into(), "120000".into(), "-".into()),
        ]
    );
    assert_eq!(plan["method"], "git-database");
    // A link retargeted outside the repository gets no plan, with the guard's rule.
    let diff = fx.diff(|w| {
        fs::remove_file(w.join("src/old")).unwrap();
        std::os::unix::fs::symlink("../../etc/passwd", w.join("src/old")).unwrap();
    });
    assert_no_plan(
        &fx,
        &with_policy(run_args(&fx, &diff, &sha256(&diff), &["**"]), &policy),
        "symlink",
    );
}

#[test]
fn out_of_scope_path_is_rejected() {
    let fx = fixture();
    let diff = fx.diff(|w| {
        write(w, "src/lib.rs", b"in scope\n");
        write(w, "docs/guide.md", b"out of scope\n");
    });
    rejects(&fx, &diff, &["src/**"], "out-of-scope");
}

#[test]
fn no_scope_is_rejected() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "src/lib.rs", b"x\n"));
    rejects(&fx, &diff, &[], "no-scope");
}

#[test]
fn denied_path_is_rejected() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, ".github/workflows/ci.yml", b"on: push\n"));
    rejects(&fx, &diff, &["**"], "denied-path");
}

#[test]
fn tampered_diff_is_rejected_before_git_runs() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "src/lib.rs", b"benign\n"));
    let sha = sha256(&diff);
    let tampered = String::from_utf8(diff)
        .unwrap()
        .replace("+benign", "+evil!!")
        .into_bytes();
    assert_no_plan(
        &fx,
        &run_args(&fx, &tampered, &sha, &["**"]),
        "hash-mismatch",
    );
}

/// A policy that lets the guard accept new executable files and mode changes.
fn loose_policy(fx: &Fixture) -> PathBuf {
    let path = fx.path("loose-policy.yml");
    fs::write(
        &path,
        "version: 1\nallow:\n  executable-files: true\n  mode-changes: true\n",
    )
    .unwrap();
    path
}

fn with_policy(mut run: Run, policy: &Path) -> Run {
    run.args.push("--policy".into());
    run.args.push(policy.as_os_str().to_owned());
    run
}

#[test]
#[cfg(unix)]
fn new_executable_file_is_rejected_unless_the_policy_allows_it() {
    let fx = fixture();
    let diff = fx.diff(|w| {
        write(w, "src/run.sh", b"#!/bin/sh\n");
        set_executable(&w.join("src/run.sh"), true);
    });
    rejects(&fx, &diff, &["**"], "executable-file");
}

#[test]
#[cfg(unix)]
fn allowed_mode_change_is_planned_with_its_mode() {
    let fx = fixture();
    let policy = loose_policy(&fx);
    let plan = assert_reproduces_with(
        &fx,
        |w| set_executable(&w.join("src/lib.rs"), true),
        Some(&policy),
    );
    assert_eq!(
        entry_modes(&plan),
        [("src/lib.rs".into(), "100644".into(), "100755".into())]
    );
    assert_eq!(plan["method"], "git-database");
    assert!(
        plan["method_reason"]
            .as_str()
            .unwrap()
            .starts_with("src/lib.rs is written with mode 100755;")
    );
    // The body says what the commit writes, from the entries: not "every file is 100644".
    let body = plan["pull_request"]["body"].as_str().unwrap();
    assert!(
        body.contains("1 executable file(s), mode 100755: `src/lib.rs`"),
        "{body}"
    );
    assert!(
        body.contains("- **Mode changes**: `src/lib.rs` (100644 → 100755)."),
        "{body}"
    );
    assert!(
        !body.contains("every file is a regular non-executable file"),
        "{body}"
    );
    // And back: an executable made regular is written as 100644, which the mutation reproduces.
    let fx = fixture_with(|base| {
        write(base, "src/tool.sh", b"#!/bin/sh\n");
        set_executable(&base.join("src/tool.sh"), true);
    });
    let policy = loose_policy(&fx);
    let plan = assert_reproduces_with(
        &fx,
        |w| set_executable(&w.join("src/tool.sh"), false),
        Some(&policy),
    );
    assert_eq!(
        entry_modes(&plan),
        [("src/tool.sh".into(), "100755".into(), "100644".into())]
    );
    assert_eq!(plan["method"], "create-commit-on-branch");
}

#[test]
#[cfg(unix)]
fn allowed_executable_file_is_planned_with_its_mode() {
    let fx = fixture();
    let policy = loose_policy(&fx);
    let plan = assert_reproduces_with(
        &fx,
        |w| {
            write(w, "src/run.sh", b"#!/bin/sh\n");
            set_executable(&w.join("src/run.sh"), true);
        },
        Some(&policy),
    );
    assert_eq!(
        entry_modes(&plan),
        [("src/run.sh".into(), "-".into(), "100755".into())]
    );
    assert_eq!(plan["method"], "git-database");
}

/// The false rejection real history showed: a content change to an existing executable script
/// (`100755 -> 100755`), which the guard accepts under the default policy.
#[test]
#[cfg(unix)]
fn editing_or_deleting_an_executable_file_is_planned_exactly() {
    let fx = fixture_with(|base| {
        write(base, "src/tool.sh", b"#!/bin/sh\necho 1\n");
        set_executable(&base.join("src/tool.sh"), true);
    });
    let plan = assert_reproduces(&fx, |w| write(w, "src/tool.sh", b"#!/bin/sh\necho 2\n"));
    assert_eq!(
        entry_modes(&plan),
        [("src/tool.sh".into(), "100755".into(), "100755".into())]
    );
    assert_eq!(plan["method"], "git-database");
    // A deletion writes nothing: the mutation reproduces it.
    let plan = assert_reproduces(&fx, |w| fs::remove_file(w.join("src/tool.sh")).unwrap());
    assert_eq!(
        entry_modes(&plan),
        [("src/tool.sh".into(), "100755".into(), "-".into())]
    );
    assert_eq!(plan["method"], "create-commit-on-branch");
}

/// Regular and executable files in one change: every mode as git has it.
#[test]
#[cfg(unix)]
fn a_mix_of_modes_is_planned_exactly() {
    let fx = fixture_with(|base| {
        write(base, "bin/a.sh", b"#!/bin/sh\na\n");
        set_executable(&base.join("bin/a.sh"), true);
        write(base, "bin/b.sh", b"#!/bin/sh\nb\n");
        set_executable(&base.join("bin/b.sh"), true);
    });
    let plan = assert_reproduces(&fx, |w| {
        write(w, "bin/a.sh", b"#!/bin/sh\na2\n");
        fs::remove_file(w.join("bin/b.sh")).unwrap();
        write(w, "src/lib.rs", b"pub fn one() -> u32 {\n    11\n}\n");
        write(w, "src/new.rs", b"// new\n");
        fs::remove_file(w.join("src/old.rs")).unwrap();
    });
    assert_eq!(
        entry_modes(&plan),
        [
            ("bin/a.sh".into(), "100755".into(), "100755".into()),
            ("bin/b.sh".into(), "100755".into(), "-".into()),
            ("src/lib.rs".into(), "100644".into(), "100644".into()),
            ("src/new.rs".into(), "-".into(), "100644".into()),
            ("src/old.rs".into(), "100644".into(), "-".into()),
        ]
    );
    assert_eq!(plan["method"], "git-database");
}

#[test]
fn stage_like_path_is_never_read_as_another_entry() {
    // git reads `:0:x` as stage 0 of `x`, so `staged_blob("0:x")` would return `x`'s contents: a
    // top-level path starting with `<0-3>:` gets no plan.
    // `:` is not portable to Windows (unsafe-path by default); the policy lets the name reach the
    // plan, whose own defence is under test.
    let fx = fixture_with(|base| write(base, "x", b"the contents of x\n")).non_portable();
    let diff = fx.diff(|w| write(w, "0:x", b"the contents of 0:x\n"));
    let run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!run.out.exists());
    assert!(
        stderr(&out).contains("error[unpublishable-path]")
            || stderr(&out).contains("error[unsafe-path]"),
        "{}",
        stderr(&out)
    );
    // Deeper down, `:src/0:x` is unambiguous, and the plan carries the file's own contents.
    let fx = fixture_with(|base| write(base, "src/x", b"the contents of x\n")).non_portable();
    let plan = assert_reproduces(&fx, |w| write(w, "src/0:x", b"the contents of 0:x\n"));
    let additions = &plan["input"]["fileChanges"]["additions"];
    assert_eq!(additions[0]["path"], "src/0:x");
    assert_eq!(
        BASE64
            .decode(additions[0]["contents"].as_str().unwrap())
            .unwrap(),
        b"the contents of 0:x\n"
    );
}

// ---------------------------------------------------------------------------------------------
// usage errors: exit 2 before anything is read

/// Arguments whose --repo and --diff do not exist: a usage error must be reported first.
fn unreadable_run(fx: &Fixture) -> Run {
    let mut run = run_args(fx, b"", &sha256(b"x"), &["**"]);
    for (flag, value) in [
        ("--repo", "/nonexistent/repo"),
        ("--diff", "/nonexistent/diff"),
    ] {
        let i = run.args.iter().position(|a| a == flag).unwrap();
        run.args[i + 1] = value.into();
    }
    run
}

/// Set `flag` as `--flag=value`, so that a value starting with `-` is not read as an option.
fn set(run: &mut Run, flag: &str, value: &str) {
    if let Some(i) = run.args.iter().position(|a| a == flag) {
        run.args.drain(i..i + 2);
    }
    run.args.push(format!("{flag}={value}").into());
}

fn assert_usage_error(run: &Run, expect: &str) {
    let out = gate(&run.args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{expect}: {err}");
    assert!(err.contains(expect), "{expect:?} in {err}");
    assert!(!err.contains("cannot read diff"), "{err}");
    assert!(!err.contains("not a git repository"), "{err}");
    assert!(out.stdout.is_empty());
    assert!(!run.out.exists());
}

const BAD_BRANCHES: &[&str] = &[
    "",
    "a..b",
    "-x",
    "a b",
    "x.lock",
    "a/x.lock/b",
    "@",
    "HEAD",
    "a~b",
    "a^b",
    "a:b",
    "a?b",
    "a*b",
    "a[b",
    "a\\b",
    "a\x07b",
    "a\u{202e}b",
    "a@{1}",
    "/a",
    "a/",
    "a//b",
    "a.",
    ".a",
    "a/.b",
    "refs/heads/x",
];

#[test]
fn bad_branch_names_are_usage_errors() {
    let fx = fixture();
    let long = "b".repeat(256);
    for name in BAD_BRANCHES.iter().copied().chain([long.as_str()]) {
        let mut run = unreadable_run(&fx);
        set(&mut run, "--branch", name);
        assert_usage_error(&run, "invalid --branch");
        let mut run = unreadable_run(&fx);
        set(&mut run, "--base-branch", name);
        assert_usage_error(&run, "invalid --base-branch");
    }
    let mut run = unreadable_run(&fx);
    set(&mut run, "--branch", BASE_BRANCH);
    assert_usage_error(&run, "is the base branch");
}

#[test]
fn branch_rules_are_no_looser_than_git() {
    let tmp = tempfile::tempdir().unwrap();
    let candidates = [
        "main",
        "agent-team-apply/task-1",
        "a.b/c_d-e",
        "x@y",
        "ü",
        "a+b=c,d",
        "a#b",
        "a!b",
    ];
    for name in candidates.iter().chain(BAD_BRANCHES) {
        let git_ok = git_command(tmp.path())
            .args(["check-ref-format", "--branch", name])
            .output()
            .unwrap()
            .status
            .success();
        if branch_name_problem(name).is_none() {
            assert!(git_ok, "{name:?} passes our rules but not git's");
        }
    }
    for name in candidates {
        assert_eq!(branch_name_problem(name), None, "{name}");
    }
}

#[test]
fn bad_ids_and_repository_are_usage_errors() {
    let fx = fixture();
    let long = "t".repeat(65);
    for id in ["", "a b", "a/b", "é", "a\nb", "$(id)", long.as_str()] {
        let mut run = unreadable_run(&fx);
        set(&mut run, "--task-id", id);
        assert_usage_error(&run, "invalid --task-id");
    }
    for id in ["", "abc", "-1", "012", "1.5", "99999999999999999999999"] {
        let mut run = unreadable_run(&fx);
        set(&mut run, "--run-id", id);
        assert_usage_error(&run, "invalid --run-id");
    }
    for repo in ["", "octo", "octo/", "/w", "-o/w", "o/w/x", "o/w x", "o/.."] {
        let mut run = unreadable_run(&fx);
        set(&mut run, "--repository", repo);
        assert_usage_error(&run, "invalid --repository");
    }
    let upper = sha256(b"x").to_uppercase();
    for sha in ["", "abc", upper.as_str()] {
        let mut run = unreadable_run(&fx);
        set(&mut run, "--expected-sha256", sha);
        assert_usage_error(&run, "invalid --expected-sha256");
    }
    for base in ["HEAD", "main", "abc", "g".repeat(40).as_str()] {
        let mut run = unreadable_run(&fx);
        set(&mut run, "--base", base);
        assert_usage_error(&run, "invalid --base");
    }
}

#[test]
fn unreadable_inputs_and_unknown_base_are_errors_not_plans() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "src/lib.rs", b"x\n"));

    let mut run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    set(&mut run, "--diff", "/nonexistent/diff");
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read diff"));

    let mut run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    set(&mut run, "--base", &"0".repeat(40));
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!run.out.exists());

    let mut run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    set(&mut run, "--repo", fx.tmp.path().to_str().unwrap());
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!run.out.exists());

    let mut run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    run.args.push("--policy".into());
    run.args
        .push(fx.path("no-such-policy.yml").into_os_string());
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(2));
    assert!(!run.out.exists());
}

#[test]
fn protected_paths_reach_the_body_and_the_verdict_file() {
    let fx = fixture();
    let diff = fx.diff(|w| write(w, "build.rs", b"fn main() {}\n"));
    let mut run = run_args(&fx, &diff, &sha256(&diff), &["**"]);
    let verdict_path = fx.path("verdict-out.json");
    run.args.push("--verdict-out".into());
    run.args.push(verdict_path.clone().into_os_string());
    let out = gate(&run.args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan: Value = serde_json::from_str(&fs::read_to_string(&run.out).unwrap()).unwrap();
    let body = plan["pull_request"]["body"].as_str().unwrap();
    assert!(
        body.contains("Protected files: a human must review these before merging (1)"),
        "{body}"
    );
    let verdict: Value = serde_json::from_str(&fs::read_to_string(&verdict_path).unwrap()).unwrap();
    assert_eq!(verdict["verdict"], "accept");
    assert_eq!(verdict["diff_sha256"], plan["diff_sha256"]);
    assert_eq!(verdict["protected"][0]["path"], "build.rs");
    assert_eq!(verdict["protected"][0]["rule"], "protected-path");
}
