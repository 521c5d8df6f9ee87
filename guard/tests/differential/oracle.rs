//! The oracle, independent of the guard: git's real effect on a throwaway index of the base, and
//! the guard's file list written as the same effect entries.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet, HashMap};

use guard::escape::display_bytes;
use guard::verdict::{ChangeKind, Verdict};

use super::generate::*;

// ---------------------------------------------------------------------------------------------
// The oracle: git's real effect on a throwaway index of the base

pub type Change = (char, u32, u32, String);

#[derive(Debug)]
pub enum Oracle {
    Applied(BTreeSet<Change>),
    Refused(String),
}

pub fn show_changes(set: Option<&BTreeSet<Change>>) -> String {
    match set {
        None => "(a mode is unknown)".into(),
        Some(set) => {
            let items: Vec<String> = set
                .iter()
                .map(|(s, o, n, p)| format!("{s} {o:06o}->{n:06o} {p}"))
                .collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// What differs between git's effect and the guard's list, by status and mode change only.
pub fn diff_kind(effect: &BTreeSet<Change>, expected: Option<&BTreeSet<Change>>) -> String {
    let Some(expected) = expected else {
        return "a mode of the guard's list is unknown".into();
    };
    let label = |c: &Change| {
        let how = if c.0 == 'M' && c.1 == c.2 {
            " (content only)"
        } else {
            ""
        };
        format!("{}{how}", c.0)
    };
    let side = |a: &BTreeSet<Change>, b: &BTreeSet<Change>| {
        let v: BTreeSet<String> = a.difference(b).map(label).collect();
        v.into_iter().collect::<Vec<_>>().join(", ")
    };
    format!(
        "git only [{}], guard only [{}]",
        side(effect, expected),
        side(expected, effect)
    )
}

/// git's first error line with numbers elided.
pub fn refusal_kind(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("error:") || l.starts_with("fatal:"))
        .unwrap_or("(no error line)");
    let mut out = String::new();
    for c in line.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('#') {
            out.push('#');
        }
    }
    out
}

pub fn parse_octal(s: &[u8]) -> u32 {
    s.iter().fold(0, |acc, &b| acc * 8 + u32::from(b - b'0'))
}

pub fn oracle(base: &BaseRepo, diff: &[u8]) -> Oracle {
    let tmp = tempfile::Builder::new()
        .prefix("differential-oracle-")
        .tempdir()
        .unwrap();
    let index = tmp.path().join("index");
    let mut read = base.git_with_index(&index, None);
    read.args(["read-tree", &base.commit]);
    run_ok(&mut read, None, "read-tree");
    let mut apply = base.git_with_index(&index, None);
    apply.args(["apply", "--cached"]);
    let out = run(&mut apply, Some(diff));
    if !out.status.success() {
        return Oracle::Refused(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let mut raw = base.git_with_index(&index, None);
    raw.args([
        "diff-index",
        "--cached",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        &base.commit,
    ]);
    let out = run_ok(&mut raw, None, "diff-index");
    let mut changes = BTreeSet::new();
    let mut fields = out.split(|&b| b == 0);
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            break;
        }
        let parts: Vec<&[u8]> = meta[1..].split(|&b| b == b' ').collect();
        let path = fields.next().unwrap();
        let status = char::from(parts[4][0]);
        changes.insert((
            status,
            parse_octal(parts[0]),
            parse_octal(parts[1]),
            display_bytes(path),
        ));
    }
    Oracle::Applied(changes)
}

/// Refusals that depend on what the base holds, not on how the diff is read.
pub fn base_dependent_refusal(stderr: &str) -> bool {
    const BASE: &[&str] = &[
        "does not exist in index",
        "already exists in index",
        "patch does not apply",
        "patch failed:",
        "wrong type",
        "beyond a symbolic link",
        "removal patch leaves file contents",
    ];
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error:") || l.starts_with("fatal:"))
        .collect();
    !errors.is_empty() && errors.iter().all(|l| BASE.iter().any(|b| l.contains(b)))
}

// ---------------------------------------------------------------------------------------------
// The guard's file list as git effect entries

pub fn type_of(mode: u32) -> u32 {
    mode & 0o170000
}

/// What `diff-index --no-renames` must show if git did what the verdict says. Modes the diff
/// leaves implicit (a pure rename or copy) are the base's. `None` when a mode is unknowable.
pub fn expected_effect(v: &Verdict, base: &HashMap<String, u32>) -> Option<BTreeSet<Change>> {
    let mut adds: BTreeMap<String, u32> = BTreeMap::new();
    let mut dels: BTreeMap<String, u32> = BTreeMap::new();
    let mut mods: Vec<Change> = Vec::new();
    for f in &v.files {
        let base_mode = f
            .old_path
            .as_ref()
            .and_then(|p| base.get(&p.display()))
            .copied();
        let old = f.old_mode.or(base_mode);
        match f.status {
            ChangeKind::Added => {
                adds.insert(f.new_path.as_ref()?.display(), f.new_mode?);
            }
            ChangeKind::Deleted => {
                dels.insert(f.old_path.as_ref()?.display(), old?);
            }
            ChangeKind::Modified => {
                let (o, n) = (old?, f.new_mode.or(old)?);
                let s = if type_of(o) == type_of(n) { 'M' } else { 'T' };
                mods.push((s, o, n, f.new_path.as_ref()?.display()));
            }
            ChangeKind::Renamed => {
                dels.insert(f.old_path.as_ref()?.display(), old?);
                adds.insert(f.new_path.as_ref()?.display(), f.new_mode.or(old)?);
            }
            ChangeKind::Copied => {
                adds.insert(f.new_path.as_ref()?.display(), f.new_mode.or(base_mode)?);
            }
        }
    }
    let mut out: BTreeSet<Change> = mods.into_iter().collect();
    for (path, n) in &adds {
        match dels.remove(path) {
            // Deleted and created again: one entry for the path.
            Some(o) => {
                let s = if type_of(o) == type_of(*n) { 'M' } else { 'T' };
                out.insert((s, o, *n, path.clone()));
            }
            None => {
                out.insert(('A', 0, *n, path.clone()));
            }
        }
    }
    for (path, o) in dels {
        out.insert(('D', o, 0, path));
    }
    Some(out)
}

/// Whether the diff's own claims contradict the base: a mode it states, a path it reads that is
/// not there, a path it creates that is.
pub fn contradicts_base(v: &Verdict, base: &HashMap<String, u32>) -> bool {
    let removed: BTreeSet<String> = v
        .files
        .iter()
        .filter(|f| matches!(f.status, ChangeKind::Deleted | ChangeKind::Renamed))
        .filter_map(|f| f.old_path.as_ref().map(|p| p.display()))
        .collect();
    v.files.iter().any(|f| {
        let old_wrong = f.status != ChangeKind::Added
            && f.old_path
                .as_ref()
                .is_none_or(|p| match base.get(&p.display()) {
                    None => true,
                    Some(&m) => f.old_mode.is_some_and(|claimed| claimed != m),
                });
        let new_taken = matches!(
            f.status,
            ChangeKind::Added | ChangeKind::Renamed | ChangeKind::Copied
        ) && f.new_path.as_ref().map(|p| p.display()).is_some_and(|p| {
            (base.contains_key(&p) && !removed.contains(&p))
                || base
                    .keys()
                    .any(|k| p.starts_with(&format!("{k}/")) || k.starts_with(&format!("{p}/")))
        });
        old_wrong || new_taken
    })
}
