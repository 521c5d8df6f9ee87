#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The adversarial fixture suite, run through the real `guard` binary.
//!
//! Every directory in `fixtures/cases/` is one case:
//!
//! - `patch.diff`: the candidate diff, exact bytes;
//! - `expect`: `accept`, or `reject` followed by every rule id that must fire, one per line (the set
//!   of distinct rule ids in the JSON verdict must equal it exactly);
//! - `scope` (optional): one `--scope` glob per line; `**` when absent; an empty file means no
//!   `--scope` at all;
//! - `policy.yml` (optional): passed with `--policy`;
//! - `expected-sha256` (optional): passed instead of the real hash of `patch.diff`;
//! - `base/`, `base.links` (`path -> target`, one symlink per line), `base.gitlinks` (`path sha`,
//!   one gitlink per line) (all optional): when any is present the case runs against a temporary
//!   repository whose single commit holds that tree (`--repo <tmp> --base HEAD`), otherwise parser-only;
//! - `mode` (optional): the verdict's expected `mode` when it is not the default (`git-cross-checked`
//!   with a base, `parser-only` without); `stopped-before-git` for a case with a base whose diff
//!   the guard rejects before git is asked (a path over a limit);
//! - `protected` (optional): the protected paths the verdict lists for review, one a line
//!   (`old -> new` for both sides of a rename or copy); without the file the list must be empty;
//! - `expected.json`: the whole verdict the case pins beyond its rule ids: files with both paths
//!   and lines, each finding's rule, paths, line and policy entry (messages aside); written by
//!   `BLESS=1 cargo test -p guard --test adversarial` and reviewed like code;
//! - `README`: one line saying what the case shows and why.
//!
//! Failures of all cases are collected and reported together.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

#[path = "../../tests/support/git.rs"]
mod git_support;

use git_support::git;

/// Deleting fixtures must fail the suite.
const MIN_CASES: usize = 270;

/// Rules `guard check` cannot fire: they judge the tree after apply and after the build.
const NOT_FIRED_BY_CHECK: &[&str] = &["tree-mismatch", "build-wrote"];

fn cases_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/cases"))
}

/// The guard binary with no ambient environment (no `GITHUB_*`, `CI`, `GIT_*`).
fn guard() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd
}

fn git_ok(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = git(dir)
        .args(args)
        .output()
        .map_err(|e| format!("spawn git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[derive(Debug)]
enum Expect {
    Accept,
    Reject(BTreeSet<String>),
}

#[derive(Debug)]
struct Case {
    name: String,
    dir: PathBuf,
    expect: Expect,
    /// Empty: no `--scope` at all.
    scope: Vec<String>,
    has_base: bool,
}

impl Case {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn known_rule(name: &str) -> bool {
    guard::rules::RuleId::from_name(name).is_some()
}

fn load_case(dir: &Path) -> Result<Case, String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let expect_text = std::fs::read_to_string(dir.join("expect"))
        .map_err(|e| format!("cannot read expect: {e}"))?;
    let mut lines = expect_text.lines();
    let expect = match lines.next() {
        Some("accept") => {
            if lines.next().is_some() {
                return Err("`accept` must be the only line of expect".into());
            }
            Expect::Accept
        }
        Some("reject") => {
            let rules: BTreeSet<String> = lines.map(str::to_owned).collect();
            if rules.is_empty() {
                return Err("`reject` must list the rule ids that fire".into());
            }
            if let Some(bad) = rules.iter().find(|r| !known_rule(r)) {
                return Err(format!("unknown rule id {bad:?} in expect"));
            }
            Expect::Reject(rules)
        }
        other => {
            return Err(format!(
                "expect must start with accept or reject, not {other:?}"
            ));
        }
    };
    let readme = std::fs::read_to_string(dir.join("README"))
        .map_err(|e| format!("cannot read README: {e}"))?;
    if readme.trim().is_empty() || readme.trim_end().contains('\n') {
        return Err("README must be exactly one non-empty line".into());
    }
    if !dir.join("patch.diff").is_file() {
        return Err("patch.diff is missing".into());
    }
    let scope = match std::fs::read_to_string(dir.join("scope")) {
        Ok(text) => text.lines().map(str::to_owned).collect(),
        Err(_) => vec!["**".to_owned()],
    };
    let has_base = ["base", "base.links", "base.gitlinks"]
        .iter()
        .any(|f| dir.join(f).exists());
    Ok(Case {
        name,
        dir: dir.to_path_buf(),
        expect,
        scope,
        has_base,
    })
}

fn all_cases() -> Vec<Result<Case, (String, String)>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap_or_else(|e| panic!("{} must exist: {e}", cases_dir().display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| {
            load_case(d).map_err(|e| (d.file_name().unwrap().to_string_lossy().into_owned(), e))
        })
        .collect()
}

/// Copy a directory tree, keeping file permissions (the executable bit matters).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        } else {
            return Err(format!(
                "{}: only files and directories belong in base/ (symlinks go in base.links)",
                entry.path().display()
            ));
        }
    }
    Ok(())
}

/// A repository at `<tmp>/wt` with one commit holding the case's base tree.
fn build_base(case: &Case, tmp: &Path) -> Result<PathBuf, String> {
    let wt = tmp.join("wt");
    std::fs::create_dir_all(&wt).map_err(|e| e.to_string())?;
    git_ok(&wt, &["init", "-q", "-b", "main"])?;
    if case.file("base").is_dir() {
        copy_tree(&case.file("base"), &wt)?;
    }
    if let Ok(links) = std::fs::read_to_string(case.file("base.links")) {
        for line in links.lines() {
            let (path, target) = line
                .split_once(" -> ")
                .ok_or_else(|| format!("base.links: bad line {line:?}"))?;
            let link = wt.join(path);
            std::fs::create_dir_all(link.parent().unwrap()).map_err(|e| e.to_string())?;
            std::os::unix::fs::symlink(target, &link).map_err(|e| e.to_string())?;
        }
    }
    if let Ok(gitlinks) = std::fs::read_to_string(case.file("base.gitlinks")) {
        for line in gitlinks.lines() {
            let (path, sha) = line
                .split_once(' ')
                .ok_or_else(|| format!("base.gitlinks: bad line {line:?}"))?;
            // An empty directory keeps `git add -A` from dropping the gitlink entry.
            std::fs::create_dir_all(wt.join(path)).map_err(|e| e.to_string())?;
            git_ok(
                &wt,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{sha},{path}"),
                ],
            )?;
        }
    }
    git_ok(&wt, &["add", "-A"])?;
    git_ok(&wt, &["commit", "-q", "--allow-empty", "-m", "base"])?;
    Ok(wt)
}

fn case_args(case: &Case, repo: Option<&Path>) -> Vec<std::ffi::OsString> {
    let diff = std::fs::read(case.file("patch.diff")).unwrap();
    let sha = match std::fs::read_to_string(case.file("expected-sha256")) {
        Ok(text) => text.trim().to_owned(),
        Err(_) => guard::hash::sha256_hex(&diff),
    };
    let mut args: Vec<std::ffi::OsString> = vec![
        "check".into(),
        "--diff".into(),
        case.file("patch.diff").into(),
        "--expected-sha256".into(),
        sha.into(),
    ];
    for glob in &case.scope {
        args.push("--scope".into());
        args.push(glob.into());
    }
    if case.file("policy.yml").exists() {
        args.push("--policy".into());
        args.push(case.file("policy.yml").into());
    }
    if let Some(repo) = repo {
        args.push("--repo".into());
        args.push(repo.into());
        args.push("--base".into());
        args.push("HEAD".into());
    }
    args
}

fn run(args: &[std::ffi::OsString], format: &str) -> Output {
    guard()
        .args(args)
        .arg("--format")
        .arg(format)
        .output()
        .expect("run guard")
}

/// Bytes a terminal would interpret: C0 controls other than `\n`, DEL, C1 controls, bidi controls.
fn raw_control(stdout: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stdout);
    text.chars()
        .find(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .map(|c| format!("U+{:04X}", u32::from(c)))
}

fn exit_code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// The part of a verdict a fixture pins beyond its rule ids: the verdict word and mode, every file
/// (status, both paths exact, modes, diff line), and every violation and protected finding by
/// rule, paths, diff line and policy entry. Messages are left out: they are prose, and the ones
/// that quote git depend on its version.
fn snapshot_of(doc: &Value) -> Value {
    let findings = |key: &str| -> Value {
        doc[key]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|v| {
                        serde_json::json!({
                            "rule": v["rule"], "path": v["path"], "old_path": v["old_path"],
                            "line": v["line"], "policy_entry": v["policy_entry"],
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    serde_json::json!({
        "verdict": doc["verdict"],
        "mode": doc["mode"],
        "files": doc["files"],
        "violations": findings("violations"),
        "protected": findings("protected"),
        "unmatched_scope": doc["unmatched_scope"],
    })
}

/// Compares the case's verdict with its pinned snapshot `expected.json`; `BLESS=1` writes it
/// instead (review the diff before committing). A missing snapshot is a failure.
fn check_snapshot(case: &Case, doc: &Value) -> Option<String> {
    let path = case.file("expected.json");
    let snapshot = snapshot_of(doc);
    let text = format!("{}\n", serde_json::to_string_pretty(&snapshot).unwrap());
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return None;
    }
    match std::fs::read_to_string(&path) {
        Ok(pinned) if pinned == text => None,
        Ok(pinned) => Some(format!(
            "the verdict differs from expected.json (BLESS=1 rewrites it):\n--- pinned\n{pinned}+++ now\n{text}"
        )),
        Err(e) => Some(format!(
            "no expected.json ({e}); run with BLESS=1 to write it, then review it"
        )),
    }
}

/// Runs one case in JSON and text form; returns every way it failed.
fn check_case(case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let tmp = tempfile::tempdir().unwrap();
    let repo = if case.has_base {
        match build_base(case, tmp.path()) {
            Ok(repo) => Some(repo),
            Err(e) => return vec![format!("cannot build the base repository: {e}")],
        }
    } else {
        None
    };
    let args = case_args(case, repo.as_deref());

    let json_out = run(&args, "json");
    let doc: Value = match serde_json::from_slice(&json_out.stdout) {
        Ok(doc) => doc,
        Err(e) => {
            return vec![format!(
                "exit {} without a JSON verdict ({e}); stderr: {}",
                exit_code(&json_out),
                String::from_utf8_lossy(&json_out.stderr)
            )];
        }
    };
    if let Some(problem) = check_snapshot(case, &doc) {
        problems.push(problem);
    }
    let violations = doc["violations"].as_array().cloned().unwrap_or_default();
    let fired: BTreeSet<String> = violations
        .iter()
        .map(|v| v["rule"].as_str().unwrap_or("<no rule>").to_owned())
        .collect();
    let (want_code, want_verdict) = match &case.expect {
        Expect::Accept => (0, "accept"),
        Expect::Reject(_) => (1, "reject"),
    };
    if exit_code(&json_out) != want_code {
        problems.push(format!(
            "exit code {} (want {want_code}); rules fired: {fired:?}",
            exit_code(&json_out)
        ));
    }
    if doc["verdict"] != want_verdict {
        problems.push(format!("verdict {} (want {want_verdict})", doc["verdict"]));
    }
    let want_rules = match &case.expect {
        Expect::Accept => BTreeSet::new(),
        Expect::Reject(rules) => rules.clone(),
    };
    if fired != want_rules {
        let messages: Vec<String> = violations
            .iter()
            .map(|v| format!("{}: {}", v["rule"], v["message"]))
            .collect();
        problems.push(format!(
            "rules fired {fired:?}, want {want_rules:?}; violations: {messages:#?}"
        ));
    }
    let want_mode = match std::fs::read_to_string(case.file("mode")) {
        Ok(mode) => mode.trim().to_owned(),
        Err(_) if case.has_base => "git-cross-checked".to_owned(),
        Err(_) => "parser-only".to_owned(),
    };
    if doc["mode"] != want_mode.as_str() {
        problems.push(format!("mode {} (want {want_mode})", doc["mode"]));
    }
    if let Some(c) = raw_control(&json_out.stdout) {
        problems.push(format!("JSON output holds a raw {c}"));
    }
    let want_protected: BTreeSet<String> = std::fs::read_to_string(case.file("protected"))
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    let protected = doc["protected"].as_array().cloned().unwrap_or_default();
    let got_protected: BTreeSet<String> = protected
        .iter()
        .map(|v| match (v["old_path"].as_str(), v["path"].as_str()) {
            (Some(old), Some(new)) => format!("{old} -> {new}"),
            (_, Some(p)) | (Some(p), None) => p.to_owned(),
            (None, None) => String::new(),
        })
        .collect();
    if got_protected != want_protected {
        problems.push(format!(
            "protected paths {got_protected:?}, want {want_protected:?}"
        ));
    }
    if protected.iter().any(|v| v["rule"] != "protected-path") {
        problems.push(format!(
            "a protected finding of another rule: {protected:?}"
        ));
    }

    // The human form names every rule, its diff line and both sides of a path pair.
    let text_out = run(&args, "text");
    if exit_code(&text_out) != exit_code(&json_out) {
        problems.push(format!(
            "text exit code {} differs from JSON exit code {}",
            exit_code(&text_out),
            exit_code(&json_out)
        ));
    }
    let text = String::from_utf8_lossy(&text_out.stdout);
    if let Some(c) = raw_control(&text_out.stdout) {
        problems.push(format!("text output holds a raw {c}"));
    }
    let word = if want_code == 0 { "ACCEPT" } else { "REJECT" };
    if !text.lines().any(|l| l.starts_with(word)) {
        problems.push(format!("text output has no {word} line:\n{text}"));
    }
    let shown = violations
        .iter()
        .map(|v| ("error", v))
        .chain(protected.iter().map(|v| ("review", v)));
    for (kind, v) in shown {
        let rule = v["rule"].as_str().unwrap_or_default();
        let want = match v["line"].as_u64() {
            Some(line) => format!("{kind}[{rule}] diff line {line}: "),
            None => format!("{kind}[{rule}]: "),
        };
        if !text.contains(&want) {
            problems.push(format!("text output lacks {want:?}:\n{text}"));
        }
        // The JSON carries exact paths; the text shows their escaped display form.
        if let (Some(old), Some(new)) = (doc_path(&v["old_path"]), doc_path(&v["path"])) {
            let pair = format!("{} -> {}", old.display(), new.display());
            if !text.contains(&pair) {
                problems.push(format!("text output lacks the path pair {pair:?}:\n{text}"));
            }
        } else if let Some(path) = doc_path(&v["path"])
            && !text.contains(&path.display())
        {
            problems.push(format!(
                "text output lacks the path {:?}:\n{text}",
                path.display()
            ));
        }
    }
    problems
}

#[test]
fn every_fixture_case_gets_its_expected_verdict_and_rules() {
    let cases = all_cases();
    assert!(
        cases.len() >= MIN_CASES,
        "{} cases in {}, expected at least {MIN_CASES}",
        cases.len(),
        cases_dir().display()
    );
    let mut failures = Vec::new();
    let mut valid = Vec::new();
    for case in cases {
        match case {
            Ok(case) => valid.push(case),
            Err((name, e)) => failures.push(format!("{name}: bad fixture: {e}")),
        }
    }
    // Two workers: the machine is shared, and each case runs the binary (and git) a few times.
    let (left, right) = valid.split_at(valid.len() / 2);
    let results: Vec<(String, Vec<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = [left, right]
            .into_iter()
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|c| (c.name.clone(), check_case(c)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (name, problems) in results {
        for p in problems {
            failures.push(format!("{name}: {p}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_rule_guard_check_can_fire_has_a_rejecting_case() {
    let mut covered = BTreeSet::new();
    let (mut accepted, mut rejected) = (0, 0);
    for case in all_cases().into_iter().flatten() {
        match case.expect {
            Expect::Accept => accepted += 1,
            Expect::Reject(rules) => {
                rejected += 1;
                covered.extend(rules);
            }
        }
    }
    let missing: Vec<&str> = guard::rules::RuleId::ALL
        .iter()
        .map(|r| r.name())
        .filter(|n| !NOT_FIRED_BY_CHECK.contains(n) && !covered.contains(*n))
        .collect();
    assert!(missing.is_empty(), "rules without a fixture: {missing:?}");
    assert!(
        accepted >= 40 && rejected >= 150,
        "{accepted} accept / {rejected} reject cases"
    );
}

#[test]
fn every_accepted_case_is_cross_checked_against_git() {
    let parser_only: Vec<String> = all_cases()
        .into_iter()
        .flatten()
        .filter(|c| matches!(c.expect, Expect::Accept) && !c.has_base)
        .map(|c| c.name)
        .collect();
    // The -U0 case shows what the parser alone accepts; its cross-checked twin is rejected.
    assert_eq!(parser_only, ["644-unidiff-zero-parser-only"]);
}

fn case_dir(name: &str) -> PathBuf {
    cases_dir().join(name)
}

fn rules_of(out: &Output) -> BTreeSet<String> {
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON verdict");
    doc["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rule"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_wrong_expected_hash_rejects_with_exactly_hash_mismatch() {
    let diff = case_dir("600-modify-simple").join("patch.diff");
    let wrong = guard::hash::sha256_hex(b"some other bytes");
    let out = guard()
        .args(["check", "--scope", "**", "--format", "json", "--diff"])
        .arg(&diff)
        .args(["--expected-sha256", &wrong])
        .output()
        .unwrap();
    assert_eq!(exit_code(&out), 1);
    assert_eq!(rules_of(&out), BTreeSet::from(["hash-mismatch".to_owned()]));

    // The right hash in upper case is refused like any other malformed hash: one form (lower-case
    // hex, what sha256sum prints) is accepted by guard, gate, report and the workflow alike.
    let right = guard::hash::sha256_hex(&std::fs::read(&diff).unwrap()).to_uppercase();
    let out = guard()
        .args(["check", "--scope", "**", "--diff"])
        .arg(&diff)
        .args(["--expected-sha256", &right])
        .output()
        .unwrap();
    assert_eq!(exit_code(&out), 2);
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("64 lower-case hex digits, as sha256sum prints them"),
        "{stderr}"
    );
}

#[test]
fn an_expected_hash_that_is_not_hex_is_a_usage_error() {
    let diff = case_dir("600-modify-simple").join("patch.diff");
    for bad in [
        "not-hex".to_owned(),
        "g".repeat(64),
        "0".repeat(63),
        "0".repeat(65),
        String::new(),
    ] {
        let out = guard()
            .args(["check", "--scope", "**", "--diff"])
            .arg(&diff)
            .args(["--expected-sha256", &bad])
            .output()
            .unwrap();
        assert_eq!(exit_code(&out), 2, "--expected-sha256 {bad:?}");
        assert!(out.stdout.is_empty(), "no verdict on a usage error");
    }
}

#[test]
fn a_missing_diff_file_is_an_error_not_a_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let out = guard()
        .args(["check", "--scope", "**", "--diff"])
        .arg(tmp.path().join("absent.diff"))
        .args(["--expected-sha256", &"0".repeat(64)])
        .output()
        .unwrap();
    assert_eq!(exit_code(&out), 2);
    assert!(out.stdout.is_empty());
}

#[test]
fn a_rename_violation_names_both_paths_old_first() {
    let dir = case_dir("202-rename-src-to-workflow");
    let diff = std::fs::read(dir.join("patch.diff")).unwrap();
    let out = guard()
        .args(["check", "--scope", "src/**", "--diff"])
        .arg(dir.join("patch.diff"))
        .args(["--expected-sha256", &guard::hash::sha256_hex(&diff)])
        .output()
        .unwrap();
    assert_eq!(exit_code(&out), 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[denied-path] diff line 1: src/x.yml -> .github/workflows/x.yml: "),
        "{text}"
    );
    assert!(
        text.contains("error[out-of-scope] diff line 1: src/x.yml -> .github/workflows/x.yml: "),
        "{text}"
    );
}

/// The old and new path of a file patch, exact.
type PathPair = (Option<Vec<u8>>, Option<Vec<u8>>);

/// An exact path of a JSON document (`null` is none).
fn doc_path(value: &serde_json::Value) -> Option<guard::repo_path::RepoPath> {
    if value.is_null() {
        return None;
    }
    Some(serde_json::from_value(value.clone()).expect("a path in the document"))
}

#[test]
fn hostile_names_never_reach_stdout_raw() {
    for name in [
        "121-ansi-escape-in-name",
        "122-bidi-override-in-name",
        "131-rename-bidi-both-sides",
        "135-bidi-raw-utf8-name",
    ] {
        let dir = case_dir(name);
        let diff = std::fs::read(dir.join("patch.diff")).unwrap();
        for format in ["text", "json"] {
            let out = guard()
                .args(["check", "--scope", "**", "--format", format, "--diff"])
                .arg(dir.join("patch.diff"))
                .args(["--expected-sha256", &guard::hash::sha256_hex(&diff)])
                .output()
                .unwrap();
            assert_eq!(exit_code(&out), 1, "{name} {format}");
            assert!(!out.stdout.contains(&0x1b), "{name} {format}: raw ESC");
            assert!(
                !out.stdout.windows(3).any(|w| w == [0xe2, 0x80, 0xae]),
                "{name} {format}: raw U+202E"
            );
            assert_eq!(raw_control(&out.stdout), None, "{name} {format}");
            let shown = String::from_utf8_lossy(&out.stdout);
            if format == "text" {
                assert!(
                    shown.contains("\\u{1b}") || shown.contains("\\u{202e}"),
                    "{name} {format}: the escaped form is shown:\n{shown}"
                );
                continue;
            }
            // JSON is data: JSON's own escapes only, and every path parses back to its bytes,
            // which are the names in the diff.
            assert!(
                shown.contains("\\u001b") || shown.contains("\\u202e"),
                "{name} {format}: JSON escapes:\n{shown}"
            );
            assert!(
                !shown.contains("\\u{"),
                "{name}: a display escape in JSON:\n{shown}"
            );
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let parsed = guard::diff::parse(&diff, 1 << 20).unwrap();
            let names: Vec<PathPair> = parsed
                .patches
                .iter()
                .map(|p| (p.old_path.clone(), p.new_path.clone()))
                .collect();
            let in_doc: Vec<PathPair> = doc["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let side = |key: &str| doc_path(&f[key]).map(|p| p.into_bytes());
                    (side("old_path"), side("new_path"))
                })
                .collect();
            assert_eq!(
                in_doc, names,
                "{name}: the document's paths are the diff's bytes"
            );
        }
    }
}

// ---- what the binary says: every message names what happened and what to do ----

fn run_check(args: &[&std::ffi::OsStr]) -> Output {
    guard().arg("check").args(args).output().unwrap()
}

fn check_args<'a>(diff: &'a Path, sha: &'a str, extra: &[&'a str]) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = vec![
        "--diff".into(),
        diff.into(),
        "--expected-sha256".into(),
        sha.into(),
    ];
    args.extend(extra.iter().map(|s| (*s).into()));
    args
}

fn os(args: &[std::ffi::OsString]) -> Vec<&std::ffi::OsStr> {
    args.iter().map(|a| a.as_os_str()).collect()
}

#[test]
fn with_repo_an_early_stop_says_git_was_not_reached_not_parser_only() {
    let tmp = tempfile::tempdir().unwrap();
    let case = load_case(&case_dir("600-modify-simple")).unwrap();
    let repo = build_base(&case, tmp.path()).unwrap();
    let diff = tmp.path().join("bad.diff");
    std::fs::write(&diff, b"this is a commit message\n").unwrap();
    let sha = guard::hash::sha256_hex(&std::fs::read(&diff).unwrap());
    let repo_s = repo.to_str().unwrap();
    let args = check_args(&diff, &sha, &["--scope", "**", "--repo", repo_s]);
    let mut json_args = args.clone();
    json_args.extend(["--format".into(), "json".into()]);
    let out = run_check(&os(&json_args));
    assert_eq!(exit_code(&out), 1);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["mode"], "stopped-before-git");
    let text = String::from_utf8_lossy(&run_check(&os(&args)).stdout).into_owned();
    assert!(text.contains("stopped before git's reading"), "{text}");
    assert!(!text.contains("no --repo"), "{text}");
}

#[test]
fn git_refusal_is_shown_line_by_line_with_its_likely_cause() {
    let dir = case_dir("508-unidiff-zero-with-base");
    let case = load_case(&dir).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = build_base(&case, tmp.path()).unwrap();
    let args = case_args(&case, Some(&repo));
    let text = String::from_utf8_lossy(&run(&args, "text").stdout).into_owned();
    assert!(
        text.contains("likely cause: the diff has hunks without context lines"),
        "{text}"
    );
    assert!(
        text.contains("\n    git: error: patch failed: src/lib.rs:1\n    git: error: src/lib.rs: patch does not apply\n"),
        "{text}"
    );
    assert!(!text.contains("\\u{a}"), "{text}");
    let doc: Value = serde_json::from_slice(&run(&args, "json").stdout).unwrap();
    let message = doc["violations"][0]["message"].as_str().unwrap();
    assert!(
        message.ends_with(
            "\ngit: error: patch failed: src/lib.rs:1\ngit: error: src/lib.rs: patch does not apply"
        ),
        "{message}"
    );
    // A context mismatch with context lines points at --base instead.
    let case = load_case(&case_dir("504-git-refused-context")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = build_base(&case, tmp.path()).unwrap();
    let text =
        String::from_utf8_lossy(&run(&case_args(&case, Some(&repo)), "text").stdout).into_owned();
    assert!(
        text.contains("does --base name the commit the diff was made against?"),
        "{text}"
    );
}

#[test]
fn a_binary_or_compressed_input_is_called_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, bytes, what) in [
        (
            "x.diff.gz",
            b"\x1f\x8b\x08\x00rest of a gzip stream\n".to_vec(),
            "gzip",
        ),
        ("x.bin", b"ELF\x00\x01\x02 binary\n".to_vec(), "NUL byte"),
        ("x.zip", b"PK\x03\x04archive\n".to_vec(), "zip"),
    ] {
        let diff = tmp.path().join(name);
        std::fs::write(&diff, &bytes).unwrap();
        let sha = guard::hash::sha256_hex(&bytes);
        let out = run_check(&os(&check_args(&diff, &sha, &["--scope", "**"])));
        assert_eq!(exit_code(&out), 1);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("error[malformed-diff] diff line 1: the input is not a text diff")
                && text.contains(what),
            "{name}: {text}"
        );
        assert!(!text.contains("does not end with a newline"), "{text}");
    }
}

#[test]
fn quoted_excerpts_keep_single_backslashes() {
    let dir = case_dir("121-ansi-escape-in-name");
    let tmp = tempfile::tempdir().unwrap();
    let diff = tmp.path().join("lead.diff");
    let mut bytes = b"\x1b[1mcolored text before the patch\n".to_vec();
    bytes.extend(std::fs::read(dir.join("patch.diff")).unwrap());
    std::fs::write(&diff, &bytes).unwrap();
    let sha = guard::hash::sha256_hex(&bytes);
    let out = run_check(&os(&check_args(&diff, &sha, &["--scope", "**"])));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("found `\\u{1b}[1mcolored text"), "{text}");
    assert!(!text.contains("\\\\u{1b}"), "{text}");
}

#[test]
fn a_bad_base_says_what_to_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let case = load_case(&case_dir("600-modify-simple")).unwrap();
    let repo = build_base(&case, tmp.path()).unwrap();
    let diff = case.file("patch.diff");
    let sha = guard::hash::sha256_hex(&std::fs::read(&diff).unwrap());
    let repo_s = repo.to_str().unwrap();
    let out = run_check(&os(&check_args(
        &diff,
        &sha,
        &["--scope", "**", "--repo", repo_s, "--base", "no-such-ref"],
    )));
    assert_eq!(exit_code(&out), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--base `no-such-ref` does not name a commit in")
            && stderr.contains("pass the full id of the commit the diff was made against"),
        "{stderr}"
    );
    assert!(!stderr.trim_end().ends_with(':'), "{stderr}");
}

#[test]
fn scope_mistakes_are_named_not_silently_matched_against() {
    let dir = case_dir("600-modify-simple");
    let diff = dir.join("patch.diff");
    let sha = guard::hash::sha256_hex(&std::fs::read(&diff).unwrap());
    // A list passed as one glob: a usage error, not a glob that matches nothing.
    let out = run_check(&os(&check_args(
        &diff,
        &sha,
        &["--scope", "src/**,docs/**"],
    )));
    assert_eq!(exit_code(&out), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("scope[0]: invalid glob `src/**,docs/**`")
            && stderr.contains("pass one --scope per glob"),
        "{stderr}"
    );
    // `{a,b}` is one glob.
    let out = run_check(&os(&check_args(&diff, &sha, &["--scope", "{src,docs}/**"])));
    assert_eq!(
        exit_code(&out),
        0,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A directory name: the rejection says what to declare, and the glob is listed as unused.
    let out = run_check(&os(&check_args(
        &diff,
        &sha,
        &["--scope", "src", "--scope", "nothing/**"],
    )));
    assert_eq!(exit_code(&out), 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("for everything beneath it declare `src/**`"),
        "{text}"
    );
    assert!(
        text.contains("note: scope glob `src` matches no path of the diff (a directory? `src/**`"),
        "{text}"
    );
    assert!(
        text.contains("note: scope glob `nothing/**` matches no path"),
        "{text}"
    );
}

#[test]
fn help_shows_the_required_options_and_the_exit_codes() {
    let out = guard().args(["check", "--help"]).output().unwrap();
    assert_eq!(exit_code(&out), 0);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Usage: guard check [OPTIONS] --diff <FILE|-> --expected-sha256 <HEX>"),
        "{help}"
    );
    assert!(help.contains("Exit codes: 0 accept; 1 reject"), "{help}");
    assert!(!help.contains("--sample"), "{help}");
    for sub in ["apply", "verify-tree", "run"] {
        let out = guard().args([sub, "--help"]).output().unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Exit codes: 0 "),
            "guard {sub} --help"
        );
    }
}

/// A real commit that deletes a PNG, diffed without `--binary`: git cannot apply the `Binary files
/// ... differ` stub, and the `git-refused` finding must name that binary patch (reported beside it
/// as `binary-patch`) as the cause, not a wrong `--base`.
#[test]
fn git_refusal_beside_a_binary_patch_names_the_binary_patch_not_the_base() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("img")).unwrap();
    git_ok(&repo, &["init", "-q"]).unwrap();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
    std::fs::write(repo.join("img/logo.png"), png).unwrap();
    std::fs::write(repo.join("README"), "base\n").unwrap();
    git_ok(&repo, &["add", "-A"]).unwrap();
    let mut commit = git(&repo);
    git_support::with_identity(&mut commit);
    assert!(
        commit
            .args(["commit", "-q", "-m", "base"])
            .status()
            .unwrap()
            .success()
    );
    std::fs::remove_file(repo.join("img/logo.png")).unwrap();
    std::fs::write(repo.join("README"), "changed\n").unwrap();
    let out = git(&repo).args(["diff"]).output().unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("Binary files a/img/logo.png and /dev/null differ"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    git_ok(&repo, &["checkout", "-q", "--", "."]).unwrap();
    let diff = tmp.path().join("candidate.diff");
    std::fs::write(&diff, &out.stdout).unwrap();
    let sha = guard::hash::sha256_hex(&out.stdout);
    let repo_s = repo.to_str().unwrap();
    let mut args = check_args(&diff, &sha, &["--scope", "**", "--repo", repo_s]);
    args.extend(["--format".into(), "json".into()]);
    let out = run_check(&os(&args));
    assert_eq!(exit_code(&out), 1);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let violations = doc["violations"].as_array().unwrap();
    let refused = violations
        .iter()
        .find(|v| v["rule"] == "git-refused")
        .unwrap_or_else(|| panic!("no git-refused: {doc}"));
    assert!(
        violations.iter().any(|v| v["rule"] == "binary-patch"),
        "{doc}"
    );
    let message = refused["message"].as_str().unwrap();
    let cause = message.lines().next().unwrap();
    assert!(cause.contains("likely cause:"), "{message}");
    assert!(cause.contains("binary patch"), "{message}");
    assert!(cause.contains("img/logo.png"), "{message}");
    assert!(cause.contains("--binary"), "{message}");
    assert!(!cause.contains("--base"), "{message}");
}
