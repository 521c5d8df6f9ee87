#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The policy's two opt-ins, off by default: `symlinks: {allow: true}` and
//! `text: {encodings: legacy}`. Each diff is made by git itself from a real repository, checked
//! through the real `guard` binary with the git cross-check (`--repo`), and where accepted applied
//! with `guard apply`; every rejection asserts the rule that fires.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

#[path = "../../tests/support/git.rs"]
mod git_support;

use git_support::git;

const SYMLINKS: &str = "version: 1\nsymlinks:\n  allow: true\n";
const LEGACY: &str = "version: 1\ntext:\n  encodings: legacy\n";

/// A repository whose one commit holds `files` (path, bytes) and `links` (path, target).
struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    out: PathBuf,
}

enum Entry<'a> {
    File(&'a str, &'a [u8]),
    Link(&'a str, &'a str),
    Gone(&'a str),
}

fn run_git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn write(dir: &Path, entry: &Entry<'_>) {
    let path = |p: &str| {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if std::fs::symlink_metadata(&path).is_ok() {
            std::fs::remove_file(&path).unwrap();
        }
        path
    };
    match entry {
        Entry::File(p, bytes) => std::fs::write(path(p), bytes).unwrap(),
        Entry::Link(p, target) => std::os::unix::fs::symlink(target, path(p)).unwrap(),
        Entry::Gone(p) => {
            path(p);
        }
    }
}

impl Repo {
    fn new(base: &[Entry<'_>]) -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        let out = tmp.path().join("out");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        run_git(&dir, &["init", "-q", "-b", "main"]);
        run_git(&dir, &["config", "core.symlinks", "true"]);
        write(&dir, &Entry::File("README", b"base\n"));
        for e in base {
            write(&dir, e);
        }
        run_git(&dir, &["add", "-A"]);
        run_git(&dir, &["commit", "-q", "-m", "base"]);
        Repo {
            _tmp: tmp,
            dir,
            out,
        }
    }

    /// The diff git writes for `changes` made to the base; the worktree is the base again after.
    fn diff(&self, changes: &[Entry<'_>]) -> Vec<u8> {
        for e in changes {
            write(&self.dir, e);
        }
        run_git(&self.dir, &["add", "-A"]);
        let diff = run_git(&self.dir, &["diff", "--cached", "HEAD"]);
        run_git(&self.dir, &["reset", "-q", "--hard", "HEAD"]);
        run_git(&self.dir, &["clean", "-qfdx"]);
        diff
    }

    /// `guard check` on `diff`, with the verdict as text.
    fn check_text(&self, diff: &[u8], scope: &[&str], policy: Option<&str>) -> Vec<u8> {
        let mut out = self.guard("check-text", diff, scope, policy);
        std::mem::take(&mut out.stdout)
    }

    /// `guard <command>` on `diff` with `scope` and `policy` (none: the default), against the
    /// repository; the JSON verdict for `check`.
    fn guard(&self, command: &str, diff: &[u8], scope: &[&str], policy: Option<&str>) -> Output {
        let diff_path = self.out.join("patch.diff");
        std::fs::write(&diff_path, diff).unwrap();
        let sha = guard::hash::sha256_hex(diff);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .arg(command.strip_suffix("-text").unwrap_or(command))
            .arg("--diff")
            .arg(&diff_path)
            .args(["--expected-sha256", &sha])
            .arg("--repo")
            .arg(&self.dir)
            .args(["--base", "HEAD"]);
        for s in scope {
            cmd.args(["--scope", s]);
        }
        if let Some(policy) = policy {
            let path = self.out.join("policy.yml");
            std::fs::write(&path, policy).unwrap();
            cmd.arg("--policy").arg(path);
        }
        if command == "check" {
            cmd.args(["--format", "json"]);
        }
        cmd.output().unwrap()
    }

    /// The rule ids of the check's verdict (empty: accepted, and then cross-checked with git).
    fn rules(&self, diff: &[u8], scope: &[&str], policy: Option<&str>) -> BTreeSet<String> {
        let out = self.guard("check", diff, scope, policy);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "no JSON verdict ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let rules: BTreeSet<String> = doc["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["rule"].as_str().unwrap().to_owned())
            .collect();
        if rules.is_empty() {
            assert_eq!(doc["mode"], "git-cross-checked", "{doc}");
            assert_eq!(out.status.code(), Some(0), "{doc}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{doc}");
        }
        rules
    }

    /// The verdict's findings of `rule`: (path, policy entry, message).
    fn findings(
        &self,
        diff: &[u8],
        scope: &[&str],
        policy: Option<&str>,
        rule: &str,
    ) -> Vec<(String, String, String)> {
        let out = self.guard("check", diff, scope, policy);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["violations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["rule"] == rule)
            .map(|v| {
                (
                    v["path"].as_str().unwrap_or_default().to_owned(),
                    v["policy_entry"].as_str().unwrap_or_default().to_owned(),
                    v["message"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// `guard apply`, which must succeed, then `guard verify-tree` on its verdict, which must
    /// find the worktree to be exactly the base with the verdict's changes.
    fn apply(&self, diff: &[u8], scope: &[&str], policy: &str) {
        let out = self.guard("apply", diff, scope, Some(policy));
        let shown = |out: &Output| {
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        };
        assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
        let verdict = self.out.join("verdict.json");
        let check = self.guard("check", diff, scope, Some(policy));
        std::fs::write(&verdict, &check.stdout).unwrap();
        let baseline = self.out.join("baseline.json");
        let verified = self.verify_tree(&[
            "--base".as_ref(),
            "HEAD".as_ref(),
            "--out".as_ref(),
            baseline.as_os_str(),
        ]);
        assert_eq!(verified.status.code(), Some(0), "{}", shown(&verified));
    }

    /// `guard verify-tree` of the last applied verdict, with `extra` arguments, as JSON.
    fn verify_tree(&self, extra: &[&std::ffi::OsStr]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_guard"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .arg("verify-tree")
            .arg("--verdict")
            .arg(self.out.join("verdict.json"))
            .arg("--repo")
            .arg(&self.dir)
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap()
    }
}

fn set(rules: &[&str]) -> BTreeSet<String> {
    rules.iter().map(|r| (*r).to_owned()).collect()
}

mod legacy_text {
    use super::*;

    /// "Café – déjà vu" in CP1252 (é = 0xE9, – = 0x96, à = 0xE0).
    const CP1252: &[u8] = b"// Caf\xe9 \x96 d\xe9j\xe0 vu\nint x = 1;\n";
    /// "中文注释" in GBK.
    const GBK: &[u8] = b"/* \xd6\xd0\xce\xc4\xd7\xa2\xca\xcd */\nint y = 2;\n";

    #[test]
    fn cp1252_and_gbk_files_created_pass_only_with_the_opt_in() {
        let repo = Repo::new(&[]);
        let diff = repo.diff(&[
            Entry::File("src/cp1252.c", CP1252),
            Entry::File("src/gbk.c", GBK),
        ]);
        let findings = repo.findings(&diff, &["src/**"], None, "invalid-content");
        assert_eq!(findings.len(), 2, "{findings:?}");
        for (_, entry, message) in &findings {
            assert_eq!(entry, "text.encodings: utf-8");
            assert!(message.contains("not UTF-8"), "{message}");
        }
        assert_eq!(
            repo.rules(&diff, &["src/**"], None),
            set(&["invalid-content"])
        );
        assert_eq!(repo.rules(&diff, &["src/**"], Some(LEGACY)), set(&[]));
        repo.apply(&diff, &["src/**"], LEGACY);
        assert_eq!(std::fs::read(repo.dir.join("src/gbk.c")).unwrap(), GBK);
        assert_eq!(
            std::fs::read(repo.dir.join("src/cp1252.c")).unwrap(),
            CP1252
        );
    }

    #[test]
    fn cp1252_and_gbk_files_modified_pass_only_with_the_opt_in() {
        let repo = Repo::new(&[
            Entry::File("src/cp1252.c", CP1252),
            Entry::File("src/gbk.c", GBK),
        ]);
        let mut cp = CP1252.to_vec();
        cp.extend_from_slice(b"// na\xefve\n");
        let mut gbk = GBK.to_vec();
        gbk.extend_from_slice(b"// \xb2\xe2\xca\xd4\n");
        let diff = repo.diff(&[
            Entry::File("src/cp1252.c", &cp),
            Entry::File("src/gbk.c", &gbk),
        ]);
        assert_eq!(
            repo.rules(&diff, &["src/**"], None),
            set(&["invalid-content"])
        );
        assert_eq!(repo.rules(&diff, &["src/**"], Some(LEGACY)), set(&[]));
        repo.apply(&diff, &["src/**"], LEGACY);
        assert_eq!(std::fs::read(repo.dir.join("src/gbk.c")).unwrap(), gbk);
    }

    #[test]
    fn a_nul_byte_stays_invalid_content_with_the_opt_in() {
        let repo = Repo::new(&[Entry::File("src/a.c", b"one\n")]);
        // git itself calls this file binary; the diff made without --binary is a stub, so the
        // NUL is written into a text patch by hand, as an attacker would.
        let diff = b"diff --git a/src/a.c b/src/a.c\nindex 5626abf..0d5a690 100644\n--- a/src/a.c\n+++ b/src/a.c\n@@ -1 +1 @@\n-one\n+\xe9\x00two\n".to_vec();
        let findings = repo.findings(&diff, &["src/**"], Some(LEGACY), "invalid-content");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].2.contains("NUL"), "{findings:?}");
        assert!(
            repo.rules(&diff, &["src/**"], Some(LEGACY))
                .contains("invalid-content")
        );
    }

    #[test]
    fn a_control_character_in_a_line_that_is_not_utf8_stays_invalid_content() {
        let repo = Repo::new(&[]);
        // ESC starts a terminal sequence; in a UTF-8 line it is what it is, in a line of an
        // unknown code page the guard cannot tell text from a disguise.
        let diff = repo.diff(&[Entry::File("src/a.c", b"caf\xe9 \x1b[2J\n")]);
        let findings = repo.findings(&diff, &["src/**"], Some(LEGACY), "invalid-content");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].2.contains("0x1b"), "{findings:?}");
        assert_eq!(findings[0].1, "text.encodings: legacy");
        // No sink prints a content line; the text verdict holds neither the ESC nor a raw byte.
        let text = repo.check_text(&diff, &["src/**"], Some(LEGACY));
        let text = String::from_utf8(text).unwrap();
        assert!(!text.contains('\u{1b}'), "{text}");
        // TAB, CR (a CRLF file) and FF are text in any code page.
        let diff = repo.diff(&[Entry::File("src/b.c", b"caf\xe9\tx\x0c\r\n")]);
        assert_eq!(repo.rules(&diff, &["src/**"], Some(LEGACY)), set(&[]));
    }

    #[test]
    fn the_path_rules_still_apply_to_legacy_text() {
        let repo = Repo::new(&[]);
        let diff = repo.diff(&[Entry::File("lib/a.c", CP1252)]);
        assert_eq!(
            repo.rules(&diff, &["src/**"], Some(LEGACY)),
            set(&["out-of-scope"])
        );
        let diff = repo.diff(&[Entry::File(".github/workflows/x.yml", CP1252)]);
        assert!(
            repo.rules(&diff, &["**"], Some(LEGACY))
                .contains("denied-path")
        );
    }

    #[test]
    fn an_unknown_encoding_is_a_policy_error() {
        let err = guard::policy::Policy::from_yaml("version: 1\ntext:\n  encodings: latin1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("text.encodings"), "{err}");
        let err = guard::policy::Policy::from_yaml("version: 1\ntext:\n  encoding: legacy\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("encoding"), "{err}");
        assert_eq!(
            guard::policy::Policy::embedded_default()
                .unwrap()
                .text_encodings,
            guard::policy::TextEncodings::Utf8
        );
    }
}

mod symlinks {
    use super::*;

    #[test]
    fn without_the_opt_in_every_link_change_is_rejected_as_symlink() {
        let repo = Repo::new(&[
            Entry::File("src/a.txt", b"a\n"),
            Entry::Link("src/old", "a.txt"),
        ]);
        let create = repo.diff(&[Entry::Link("src/new", "a.txt")]);
        let retarget = repo.diff(&[
            Entry::File("src/b.txt", b"b\n"),
            Entry::Link("src/old", "b.txt"),
        ]);
        let delete = repo.diff(&[Entry::Gone("src/old")]);
        for diff in [&create, &retarget, &delete] {
            assert!(
                repo.rules(diff, &["src/**"], None).contains("symlink"),
                "{}",
                String::from_utf8_lossy(diff)
            );
        }
    }

    /// The base of the symlink cases: files in and out of scope (`src/**`), a denied workflow, a
    /// link in scope, and a base link that leaves the scope (`src/tools -> ../lib`).
    fn base() -> Repo {
        Repo::new(&[
            Entry::File("src/a.txt", b"a\n"),
            Entry::File("src/b.txt", b"b\n"),
            Entry::File("src/sub/c.txt", b"c\n"),
            Entry::File("lib/secret.txt", b"s\n"),
            Entry::File(".github/workflows/ci.yml", b"on: push\n"),
            Entry::Link("src/old", "a.txt"),
            Entry::Link("src/tools", "../lib"),
            Entry::Link("src/dir", "sub"),
        ])
    }

    fn link(repo: &Repo, path: &str) -> String {
        std::fs::read_link(repo.dir.join(path))
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_link_created_in_scope_is_accepted_cross_checked_and_applied() {
        let repo = base();
        let diff = repo.diff(&[
            Entry::Link("src/new", "a.txt"),
            Entry::Link("src/deep/up", "../sub/c.txt"),
        ]);
        assert_eq!(repo.rules(&diff, &["src/**"], Some(SYMLINKS)), set(&[]));
        repo.apply(&diff, &["src/**"], SYMLINKS);
        assert_eq!(link(&repo, "src/new"), "a.txt");
        assert_eq!(link(&repo, "src/deep/up"), "../sub/c.txt");
    }

    #[test]
    fn a_build_that_retargets_an_applied_link_in_scope_is_build_wrote() {
        let repo = base();
        let diff = repo.diff(&[Entry::Link("src/new", "a.txt")]);
        repo.apply(&diff, &["src/**"], SYMLINKS);
        // The build retargets the link the diff made, inside the scope.
        write(&repo.dir, &Entry::Link("src/new", "b.txt"));
        let baseline = repo.out.join("baseline.json");
        let out = repo.verify_tree(&[
            "--after-build".as_ref(),
            "--baseline".as_ref(),
            baseline.as_os_str(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let findings: Vec<(&str, &str)> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["rule"].as_str().unwrap(), f["path"].as_str().unwrap()))
            .collect();
        assert_eq!(findings, [("build-wrote", "src/new")], "{doc}");
    }

    #[test]
    fn a_link_retargeted_in_scope_is_accepted_and_applied() {
        let repo = base();
        let diff = repo.diff(&[Entry::Link("src/old", "sub/c.txt")]);
        assert_eq!(repo.rules(&diff, &["src/**"], Some(SYMLINKS)), set(&[]));
        repo.apply(&diff, &["src/**"], SYMLINKS);
        assert_eq!(link(&repo, "src/old"), "sub/c.txt");
    }

    #[test]
    fn a_link_deleted_in_scope_is_accepted_and_applied() {
        let repo = base();
        let diff = repo.diff(&[Entry::Gone("src/old")]);
        assert_eq!(repo.rules(&diff, &["src/**"], Some(SYMLINKS)), set(&[]));
        repo.apply(&diff, &["src/**"], SYMLINKS);
        assert!(std::fs::symlink_metadata(repo.dir.join("src/old")).is_err());
    }

    /// The rules of a diff that creates one link `src/x` with `target`, and the policy entry of
    /// the finding of `rule`.
    fn one_link(repo: &Repo, target: &str, rule: &str) -> (BTreeSet<String>, Vec<String>) {
        let diff = repo.diff(&[Entry::Link("src/x", target)]);
        let entries = repo
            .findings(&diff, &["src/**"], Some(SYMLINKS), rule)
            .into_iter()
            .map(|(path, entry, _)| {
                assert_eq!(path, "src/x");
                entry
            })
            .collect();
        (repo.rules(&diff, &["src/**"], Some(SYMLINKS)), entries)
    }

    #[test]
    fn a_target_that_climbs_out_of_the_repository_is_symlink() {
        let repo = base();
        let (rules, entries) = one_link(&repo, "../../etc/passwd", "symlink");
        assert_eq!(rules, set(&["symlink"]));
        assert_eq!(entries, ["symlinks.allow: true"]);
    }

    #[test]
    fn an_absolute_target_is_symlink() {
        let repo = base();
        assert_eq!(
            one_link(&repo, "/etc/passwd", "symlink").0,
            set(&["symlink"])
        );
    }

    #[test]
    fn a_target_at_the_repository_root_is_symlink() {
        let repo = base();
        assert_eq!(one_link(&repo, "..", "symlink").0, set(&["symlink"]));
    }

    #[test]
    fn a_chain_of_two_links_that_escapes_is_caught() {
        let repo = base();
        // Through a base link: src/tools -> ../lib, so src/x names lib/secret.txt.
        let (rules, _) = one_link(&repo, "tools/secret.txt", "out-of-scope");
        assert_eq!(rules, set(&["out-of-scope"]));
        // Through a base link, then `..` where that link led: lib/.. is the root, lib/../.. above.
        assert_eq!(
            one_link(&repo, "tools/../../etc/passwd", "symlink").0,
            set(&["symlink"])
        );
        // Two links of the diff: src/l2 escapes, and src/l1 passes through it.
        let diff = repo.diff(&[
            Entry::Link("src/l1", "l2/passwd"),
            Entry::Link("src/l2", "../../etc"),
        ]);
        let found = repo.findings(&diff, &["src/**"], Some(SYMLINKS), "symlink");
        let paths: BTreeSet<&str> = found.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(paths, BTreeSet::from(["src/l1", "src/l2"]), "{found:?}");
    }

    #[test]
    fn links_too_many_or_too_deep_to_resolve_are_bounded() {
        let repo = base();
        // 129 components below src/: deeper than limits.path-components.
        let deep = vec!["d"; 128].join("/");
        let (rules, _) = one_link(&repo, &deep, "symlink");
        assert_eq!(rules, set(&["symlink"]));
        // 1,600 links of 127 lookups each: over the 200,000 lookups one diff may spend.
        let target = vec!["d"; 127].join("/");
        let names: Vec<String> = (0..1600).map(|i| format!("src/l{i}")).collect();
        let links: Vec<Entry<'_>> = names.iter().map(|n| Entry::Link(n, &target)).collect();
        let diff = repo.diff(&links);
        let started = std::time::Instant::now();
        let rules = repo.rules(&diff, &["src/**"], Some(SYMLINKS));
        assert_eq!(rules, set(&["limit-exceeded"]));
        assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    }

    #[test]
    fn a_loop_of_links_is_symlink() {
        let repo = base();
        let diff = repo.diff(&[
            Entry::Link("src/loop1", "loop2"),
            Entry::Link("src/loop2", "loop1"),
        ]);
        let found = repo.findings(&diff, &["src/**"], Some(SYMLINKS), "symlink");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found
                .iter()
                .all(|(_, _, m)| m.contains("more than 40 links")),
            "{found:?}"
        );
    }

    #[test]
    fn a_target_into_git_in_any_disguise_is_git_dir() {
        let repo = base();
        for target in [
            "../.git/config",
            "../.GIT/hooks/pre-commit",
            "../.git\u{200c}/config",
            "../.git./config",
            "../git~1/config",
            // Into .git and out again: the name .git was still looked up.
            "../.git/../src/a.txt",
        ] {
            let (rules, entries) = one_link(&repo, target, "git-dir");
            assert!(rules.contains("git-dir"), "{target}: {rules:?}");
            assert_eq!(entries, ["symlinks.allow: true"], "{target}");
        }
    }

    #[test]
    fn a_target_in_the_denied_surface_is_denied_path() {
        let repo = base();
        for target in [
            "../.github/workflows/ci.yml",
            "../.GitHub/workflows",
            "../.github",
        ] {
            let (rules, entries) = one_link(&repo, target, "denied-path");
            assert!(rules.contains("denied-path"), "{target}: {rules:?}");
            assert_eq!(entries, ["deny: .github/**"], "{target}");
        }
    }

    #[test]
    fn a_target_out_of_scope_is_out_of_scope() {
        let repo = base();
        let (rules, entries) = one_link(&repo, "../lib/secret.txt", "out-of-scope");
        assert_eq!(rules, set(&["out-of-scope"]));
        assert_eq!(entries, ["scope: src/**"]);
        // The link's own path is judged by the path rules as any path is.
        let diff = repo.diff(&[Entry::Link("lib/l", "secret.txt")]);
        assert_eq!(
            repo.rules(&diff, &["src/**"], Some(SYMLINKS)),
            set(&["out-of-scope"])
        );
    }

    #[test]
    fn a_write_through_a_link_stays_beneath_symlink() {
        let repo = base();
        // src/dir is a link of the base; a file "beneath" it would be written into src/sub.
        let diff = b"diff --git a/src/dir/y.txt b/src/dir/y.txt\nnew file mode 100644\nindex 0000000..975fbec\n--- /dev/null\n+++ b/src/dir/y.txt\n@@ -0,0 +1 @@\n+y\n".to_vec();
        let rules = repo.rules(&diff, &["src/**"], Some(SYMLINKS));
        assert!(rules.contains("beneath-symlink"), "{rules:?}");
        // A link the diff creates, and a file beneath it in the same diff.
        let mut diff = repo.diff(&[Entry::Link("src/d", "sub")]);
        diff.extend_from_slice(b"diff --git a/src/d/y.txt b/src/d/y.txt\nnew file mode 100644\nindex 0000000..975fbec\n--- /dev/null\n+++ b/src/d/y.txt\n@@ -0,0 +1 @@\n+y\n");
        let rules = repo.rules(&diff, &["src/**"], Some(SYMLINKS));
        assert!(rules.contains("beneath-symlink"), "{rules:?}");
    }

    #[test]
    fn a_file_becoming_a_link_or_a_link_a_file_stays_type_change() {
        let repo = base();
        let diff = repo.diff(&[Entry::Link("src/a.txt", "b.txt")]);
        assert_eq!(
            repo.rules(&diff, &["src/**"], Some(SYMLINKS)),
            set(&["type-change"])
        );
        let diff = repo.diff(&[Entry::File("src/old", b"now a file\n")]);
        assert_eq!(
            repo.rules(&diff, &["src/**"], Some(SYMLINKS)),
            set(&["type-change"])
        );
    }

    #[test]
    fn a_link_moved_is_judged_where_it_lands() {
        let repo = base();
        // src/old -> a.txt moved to src/sub/old: the same target now names src/sub/a.txt.
        let diff = repo.diff(&[Entry::Gone("src/old"), Entry::Link("src/sub/old", "a.txt")]);
        assert_eq!(repo.rules(&diff, &["src/**"], Some(SYMLINKS)), set(&[]));
        // Moved out to the root, its target leaves the scope.
        let diff = repo.diff(&[Entry::Gone("src/old"), Entry::Link("old", "a.txt")]);
        assert!(repo.rules(&diff, &["**"], Some(SYMLINKS)).is_empty());
        let diff = repo.diff(&[Entry::Gone("src/old"), Entry::Link("old", "a.txt")]);
        assert!(
            repo.findings(&diff, &["src/**", "old"], Some(SYMLINKS), "out-of-scope")
                .iter()
                .any(|(path, _, m)| path == "old" && m.contains("resolves to `a.txt`"))
        );
    }

    #[test]
    fn without_a_base_tree_a_link_cannot_be_judged() {
        let diff = b"diff --git a/src/x b/src/x\nnew file mode 120000\nindex 0000000..2e65efe\n--- /dev/null\n+++ b/src/x\n@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n";
        let policy = guard::policy::Policy::from_yaml(SYMLINKS).unwrap();
        let sha = guard::hash::sha256_hex(diff);
        let scope = ["src/**".to_owned()];
        let verdict = guard::check::check(&guard::check::CheckRequest {
            diff,
            expected_sha256: &sha,
            scope: &scope,
            policy: &policy,
            repo: None,
        })
        .unwrap();
        let rules: Vec<_> = verdict.violations.iter().map(|v| v.rule.name()).collect();
        assert_eq!(rules, ["symlink"]);
    }

    #[test]
    fn unknown_symlink_keys_are_policy_errors() {
        for yaml in [
            "version: 1\nsymlinks:\n  allowed: true\n",
            "version: 1\nsymlinks:\n  allow: \"true\"\n",
            "version: 1\nsymlinks: true\n",
        ] {
            assert!(guard::policy::Policy::from_yaml(yaml).is_err(), "{yaml}");
        }
        assert!(
            !guard::policy::Policy::embedded_default()
                .unwrap()
                .allow_symlinks
        );
        assert!(
            guard::policy::Policy::from_yaml(SYMLINKS)
                .unwrap()
                .allow_symlinks
        );
    }
}
