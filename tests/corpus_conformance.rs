//! Conformance against git's own `git apply` tests (`tests/corpus/git-apply/`): the guard never
//! accepts a case git refuses, and for every case it accepts, its file list equals what git really
//! did to the tree (the case's recorded `effect:`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use guard::check::{CheckRequest, RepoBase, check};
use guard::policy::Policy;
use guard::verdict::{ChangeKind, Verdict};

struct Case {
    name: String,
    git_applies: bool,
    effect: BTreeSet<String>,
}

fn read_case(dir: &Path) -> Case {
    let text = std::fs::read_to_string(dir.join("case.txt")).unwrap();
    let mut case = Case {
        name: dir.file_name().unwrap().to_string_lossy().into_owned(),
        git_applies: false,
        effect: BTreeSet::new(),
    };
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("git_apply: ") {
            case.git_applies = v == "applies";
        } else if let Some(v) = line.strip_prefix("effect: ")
            && v != "-"
        {
            case.effect = v.split('\t').map(normalize_effect).collect();
        }
    }
    case
}

/// `A 100644 "quoted\tpath"` → `A 100644 <unquoted, escaped for display>`.
fn normalize_effect(entry: &str) -> String {
    let (head, path) = match entry.rsplit_once(' ') {
        Some((head, path)) if !path.starts_with('"') => (head.to_string(), path.to_string()),
        _ => {
            let q = entry.find('"').unwrap();
            (entry[..q].trim_end().to_string(), entry[q..].to_string())
        }
    };
    let raw = if path.starts_with('"') {
        guard::diff::unquote(path.as_bytes()).unwrap().0
    } else {
        path.into_bytes()
    };
    format!("{head} {}", guard::escape::display_bytes(&raw))
}

/// The verdict's files in the form of the corpus's `effect:` entries.
fn effect_of(verdict: &Verdict) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in &verdict.files {
        // An accepted verdict's paths are UTF-8; the corpus writes them as they are.
        let text = |p: &Option<guard::repo_path::RepoPath>| {
            p.as_ref()
                .map(|p| String::from_utf8_lossy(p.as_bytes()).into_owned())
                .unwrap_or_default()
        };
        let (old, new) = (text(&f.old_path), text(&f.new_path));
        let added = |out: &mut BTreeSet<String>| {
            out.insert(format!("A {:06o} {new}", f.new_mode.unwrap_or(0)))
        };
        match f.status {
            ChangeKind::Added | ChangeKind::Copied => {
                added(&mut out);
            }
            ChangeKind::Deleted => {
                out.insert(format!("D {old}"));
            }
            ChangeKind::Renamed => {
                out.insert(format!("D {old}"));
                added(&mut out);
            }
            ChangeKind::Modified => {
                if f.old_mode != f.new_mode {
                    out.insert(format!(
                        "M {:06o}->{:06o} {new}",
                        f.old_mode.unwrap_or(0),
                        f.new_mode.unwrap_or(0)
                    ));
                } else {
                    out.insert(format!("M {new}"));
                }
            }
        }
    }
    out
}

/// Build the case's base repository: `base/` plus the extra entries of `base.txt`.
fn build_base(case_dir: &Path, tmp: &Path) -> std::path::PathBuf {
    let outer = tmp.join("outer");
    std::fs::create_dir_all(&outer).unwrap();
    let wt = common::repo_from_tree(&outer, None);
    let base = case_dir.join("base");
    if base.exists() {
        common::copy_tree(&base, &wt);
    }
    if let Ok(extra) = std::fs::read_to_string(case_dir.join("base.txt")) {
        for line in extra.lines() {
            let mut parts = line.splitn(2, ' ');
            let (kind, rest) = (parts.next().unwrap(), parts.next().unwrap_or(""));
            match kind {
                "dir" => std::fs::create_dir_all(wt.join(rest)).unwrap(),
                "file" => {
                    let (path, content) = match rest.split_once(" = ") {
                        Some((p, c)) => (p, format!("{c}\n")),
                        None => (rest, String::new()),
                    };
                    let target = wt.join(path);
                    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                    std::fs::write(target, content).unwrap();
                }
                "symlink" => {
                    let (path, target) = rest.split_once(" -> ").unwrap();
                    let link = wt.join(path);
                    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
                    std::os::unix::fs::symlink(target, link).unwrap();
                }
                "gitlink" => {
                    let (path, sha) = rest.split_once(' ').unwrap();
                    std::fs::create_dir_all(wt.join(path)).unwrap();
                    common::git_ok(
                        &wt,
                        &[
                            "update-index",
                            "--add",
                            "--cacheinfo",
                            &format!("160000,{sha},{path}"),
                        ],
                    );
                }
                other => panic!("unknown base.txt entry {other}"),
            }
        }
    }
    common::git_ok(&wt, &["add", "-A"]);
    common::git_ok(&wt, &["commit", "-q", "--allow-empty", "-m", "base"]);
    wt
}

#[test]
fn guard_never_accepts_what_git_refuses_and_agrees_on_what_it_accepts() {
    let corpus = common::git_apply_corpus();
    let mut dirs: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap_or_else(|e| {
            panic!(
                "the conformance corpus must be present at {}: {e}",
                corpus.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.txt").exists())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 80, "the corpus has 80 cases");

    let policy = Policy::embedded_default().unwrap();
    let scope = vec!["**".to_string()];
    let (mut accepted, mut failures) = (Vec::new(), Vec::new());
    for dir in &dirs {
        let case = read_case(dir);
        let diff = std::fs::read(dir.join("patch.diff")).unwrap();
        let sha = guard::hash::sha256_hex(&diff);
        let tmp = tempfile::tempdir().unwrap();
        let wt = build_base(dir, tmp.path());
        let verdict = check(&CheckRequest {
            diff: &diff,
            expected_sha256: &sha,
            scope: &scope,
            policy: &policy,
            repo: Some(RepoBase {
                dir: &wt,
                base: "HEAD",
            }),
        })
        .unwrap_or_else(|e| panic!("{}: check errored: {e}", case.name));
        if !verdict.accepted() {
            continue;
        }
        accepted.push(case.name.clone());
        if !case.git_applies {
            failures.push(format!("{}: accepted, but git refuses it", case.name));
        } else if effect_of(&verdict) != case.effect {
            failures.push(format!(
                "{}: guard files {:?} != git effect {:?}",
                case.name,
                effect_of(&verdict),
                case.effect
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "conformance failures:\n{}",
        failures.join("\n")
    );
    // The cases in the canonical form `git diff` writes, inside the default policy, must pass: a
    // gate that rejects them gets switched off.
    for must in [
        "033-utf8-octal-quoted-dir",
        "036-rename-with-hunk-exec",
        "040-rename-only-subdir",
        "041-copy-with-hunk",
        "044-delete-empty-in-dir-with-trailing-space",
        "046-git-create-plain",
        "076-git-create-with-spaces-trailing-tab",
    ] {
        assert!(
            accepted.iter().any(|a| a == must),
            "{must} is canonical and benign but was rejected"
        );
    }
    eprintln!(
        "accepted {} of {} corpus cases: {accepted:?}",
        accepted.len(),
        dirs.len()
    );
}
