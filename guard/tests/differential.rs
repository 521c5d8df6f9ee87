//! Differential test of the guard against real `git apply`.
//!
//! A generated base repository, a generated change to it turned into a canonical diff by real
//! `git diff`, then zero or more mutations aimed at `git apply`'s leniencies. Every diff is judged
//! three ways: the guard without a base (parser only), the guard with the base (`RepoBase`), and an
//! oracle written here that applies the diff to a throwaway index of the base with plain git
//! (`GIT_INDEX_FILE` + `read-tree` + `apply --cached` + `diff-index --raw -z --no-renames`).
//!
//! Properties, per case:
//!
//! * **P1, parser only.** When the guard accepts without a base, git applies the diff and git's
//!   real effect is exactly the guard's file list (rename = `D` old + `A` new, copy = `A` new; modes
//!   the diff leaves implicit are the base's). Without a base the guard cannot know what the base
//!   holds, so two outcomes are allowed that depend only on the base, never on how the bytes are
//!   read: git refusing for a base reason (a hunk that does not match, a missing or already present
//!   path, a path beneath a base symlink), and a diff whose own claims (an `index` mode, a path)
//!   contradict the base. Both are counted (the summary line names them), and P2 must catch them.
//! * **P2, with the base.** When git refuses, the guard rejects; when the guard accepts, git
//!   applied and its effect is exactly the guard's file list. Also: the guard never accepts with a
//!   base what it rejects without one.
//!
//! Budget: `DIFFERENTIAL_CASES` (else `PROPTEST_CASES`, else 400) cases from a fixed seed
//! (`DIFFERENTIAL_SEED` overrides it). A long run:
//! `DIFFERENTIAL_CASES=100000 cargo test --release -p guard --test differential -- --nocapture`.
//! `DIFFERENTIAL_KEEP_GOING=1` records every disagreement instead of stopping (and shrinking) at
//! the first, and prints them grouped by kind. The last failing case is written to
//! `$CARGO_TARGET_TMPDIR/differential-failure/` (`patch.diff`, `base/`, `README`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use guard::check::{CheckRequest, RepoBase, check};
use guard::escape::display_bytes;
use guard::policy::Policy;
use guard::verdict::{Status, Verdict};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

const MODE_FILE: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;
const MODE_LINK: u32 = 0o120000;

/// Base repositories per run; a case picks one (shrinking goes towards the first).
const BASES: usize = 6;
const DEFAULT_SEED: u64 = 0x6469_6666_7465_7374; // "difftest"
const DEFAULT_CASES: u32 = 400;

// ---------------------------------------------------------------------------------------------
// git, run with no ambient configuration

fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", "/nonexistent")
        .env("LC_ALL", "C")
        .env("GIT_AUTHOR_NAME", "differential")
        .env("GIT_AUTHOR_EMAIL", "differential@example.invalid")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_NAME", "differential")
        .env("GIT_COMMITTER_EMAIL", "differential@example.invalid")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn run(cmd: &mut Command, stdin: Option<&[u8]>) -> Output {
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn().expect("spawn git");
    let writer = match (stdin, child.stdin.take()) {
        (Some(input), Some(mut pipe)) => {
            let input = input.to_vec();
            // git may stop reading early (a refusal): a broken pipe is fine.
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            }))
        }
        _ => None,
    };
    let out = child.wait_with_output().expect("wait for git");
    if let Some(w) = writer {
        w.join().unwrap();
    }
    out
}

fn run_ok(cmd: &mut Command, stdin: Option<&[u8]>, what: &str) -> Vec<u8> {
    let out = run(cmd, stdin);
    assert!(
        out.status.success(),
        "git {what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn os(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

// ---------------------------------------------------------------------------------------------
// Trees: path -> (mode, data); a symlink's data is its target

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    mode: u32,
    data: Vec<u8>,
}

type Tree = BTreeMap<Vec<u8>, Entry>;

fn write_tree(tree: &Tree, dir: &Path) {
    for (path, entry) in tree {
        let full = dir.join(os(path));
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        if entry.mode == MODE_LINK {
            std::os::unix::fs::symlink(os(&entry.data), &full).unwrap();
        } else {
            std::fs::write(&full, &entry.data).unwrap();
            let perm = if entry.mode == MODE_EXEC {
                0o755
            } else {
                0o644
            };
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(perm)).unwrap();
        }
    }
}

fn ancestors(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .map(move |(i, _)| &path[..i])
}

/// Whether `path` cannot be created in `tree`: it exists, lies beneath a file, or is a directory.
fn conflicts(tree: &Tree, path: &[u8]) -> bool {
    let mut dir = path.to_vec();
    dir.push(b'/');
    tree.contains_key(path)
        || ancestors(path).any(|a| tree.contains_key(a))
        || tree.keys().any(|k| k.starts_with(&dir))
}

// ---------------------------------------------------------------------------------------------
// Generated content

/// Lines that look like diff syntax, whitespace and encoding edge cases.
const TRICKY: &[&[u8]] = &[
    b"alpha",
    b"",
    b"    indented",
    b"diff --git a/x b/x",
    b"--- a/x",
    b"+++ b/x",
    b"@@ -1 +1 @@",
    b"-- dash",
    b"++ plus",
    b"\\ No newline at end of file",
    b"tab\there",
    "\u{fc}n\u{ef}c\u{f6}d\u{e9} \u{2713}".as_bytes(),
    b"trailing space ",
    b"crlf\r",
    b"rename to evil",
    b"index 0000000..1111111 100755",
    b"GIT binary patch",
    b"\xff\xfe not utf-8",
];

#[derive(Debug, Clone, Copy)]
enum Line {
    Unique(u16),
    Tricky(u8),
}

fn line_bytes(l: Line) -> Vec<u8> {
    match l {
        Line::Unique(n) => format!("line {n}").into_bytes(),
        Line::Tricky(i) => TRICKY[usize::from(i) % TRICKY.len()].to_vec(),
    }
}

fn line_strategy() -> impl Strategy<Value = Line> {
    prop_oneof![
        8 => any::<u16>().prop_map(Line::Unique),
        2 => (0..TRICKY.len() as u8).prop_map(Line::Tricky),
    ]
}

fn content(lines: &[Line], eol: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend(line_bytes(*l));
    }
    if eol && !lines.is_empty() {
        out.push(b'\n');
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The base

#[derive(Debug, Clone, Copy)]
enum Kind {
    File,
    Exec,
    Link(&'static [u8]),
    NoEol,
    Empty,
}

/// Always in the base.
const CORE: &[(&[u8], Kind)] = &[
    (b"README.md", Kind::File),
    (b"src/main.rs", Kind::File),
    (b"bin/run.sh", Kind::Exec),
    (b"link", Kind::Link(b"README.md")),
    (b"docs/with space.txt", Kind::File),
    ("docs/caf\u{e9}.md".as_bytes(), Kind::File),
    (b"noeol.txt", Kind::NoEol),
];

/// Some of these.
const OPTIONAL: &[(&[u8], Kind)] = &[
    (b"src/lib/deep/mod.rs", Kind::File),
    (b"quote\"d.txt", Kind::File),
    (b"tab\there.txt", Kind::File),
    (b" lead.txt", Kind::File),
    (b"end space ", Kind::File),
    (b"sp b/x.txt", Kind::File),
    (
        "\u{65e5}\u{672c}/\u{30d5}\u{30a1}\u{30a4}\u{30eb}.txt".as_bytes(),
        Kind::File,
    ),
    (b"back\\slash.txt", Kind::File),
    (b"latin\xe9.txt", Kind::File),
    (b"empty.txt", Kind::Empty),
    (b"-dash.txt", Kind::File),
    (b"tools/gen.py", Kind::Exec),
    (b"dirlink", Kind::Link(b"src")),
    ("zw\u{200b}sp.txt".as_bytes(), Kind::File),
    // Unicode that real projects use: joiners, variation selectors, combining marks, right-to-left
    // scripts, CJK, emoji.
    (
        "docs/\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.md".as_bytes(),
        Kind::File,
    ),
    (
        "emoji/\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}.txt".as_bytes(),
        Kind::File,
    ),
    ("\u{5e9}\u{5dc}\u{5d5}\u{5dd}/\u{263a}\u{fe0f}.txt".as_bytes(), Kind::File),
    (b"a/b/c/d/e.txt", Kind::File),
    (b"x b/y b/z.txt", Kind::File),
];

/// Names for created files, rename/copy targets and name mutations.
const NEW_NAMES: &[&[u8]] = &[
    b"new.txt",
    b"src/new.rs",
    b"docs/new file.txt",
    "docs/\u{f1}ew.md".as_bytes(),
    b"deep/er/new.txt",
    b"quo\"te2.txt",
    b"README.md.orig",
    b"src/main2.rs",
    b"renamed with space",
    b"bin/run2.sh",
    b"tab\tnew.txt",
    b".gitignore",
    b".github/workflows/ci.yml",
    b"sp b/y.txt",
    b"end new ",
    "\u{65e5}\u{672c}/\u{65b0}.txt".as_bytes(),
    b"docs/A.md",
    b"README.MD",
    b"a b",
    b"b/c.txt",
    b"a/new.txt",
    "new\u{200b}.txt".as_bytes(),
    b"dev/null",
    "docs/\u{6a9}\u{62a}\u{627}\u{628}\u{200c}\u{647}\u{627}.md".as_bytes(),
    "emoji/\u{1f3f3}\u{fe0f}\u{200d}\u{1f308}.txt".as_bytes(),
    "e\u{301}te\u{301}/nai\u{308}ve.txt".as_bytes(),
    "\u{627}\u{644}\u{639}\u{631}\u{628}\u{64a}\u{629}/\u{645}\u{644}\u{641}.txt".as_bytes(),
    "\u{4e2d}\u{6587}/\u{6587}\u{4ef6}\u{540d}.txt".as_bytes(),
    "\u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}.txt".as_bytes(),
    "\u{1f44d}\u{1f3fd}.md".as_bytes(),
    // Rejected by design (unsafe-path): bidi controls, C0 and C1 controls.
    "evil\u{202e}txt.exe".as_bytes(),
    "\u{2067}isolate\u{2069}.txt".as_bytes(),
    b"bell\x07.txt",
    "next\u{85}line.txt".as_bytes(),
];

/// A name from `NEW_NAMES` or the base pool.
fn any_name(i: Index) -> Vec<u8> {
    let total = NEW_NAMES.len() + CORE.len() + OPTIONAL.len();
    let k = i.index(total);
    if k < NEW_NAMES.len() {
        NEW_NAMES[k].to_vec()
    } else if k < NEW_NAMES.len() + CORE.len() {
        CORE[k - NEW_NAMES.len()].0.to_vec()
    } else {
        OPTIONAL[k - NEW_NAMES.len() - CORE.len()].0.to_vec()
    }
}

#[derive(Debug, Clone)]
struct BaseSpec {
    optional: Vec<usize>,
    /// Per pool entry (CORE then OPTIONAL): lines, no final newline, executable.
    files: Vec<(Vec<Line>, bool, bool)>,
}

fn base_spec_strategy() -> impl Strategy<Value = BaseSpec> {
    (
        proptest::sample::subsequence((0..OPTIONAL.len()).collect::<Vec<_>>(), 0..=8),
        proptest::collection::vec(
            (
                proptest::collection::vec(line_strategy(), 1..9),
                prop::bool::weighted(0.15),
                prop::bool::weighted(0.1),
            ),
            CORE.len() + OPTIONAL.len(),
        ),
    )
        .prop_map(|(optional, files)| BaseSpec { optional, files })
}

fn base_tree(spec: &BaseSpec) -> Tree {
    let mut tree = Tree::new();
    let chosen = CORE.iter().enumerate().chain(
        spec.optional
            .iter()
            .map(|&i| (CORE.len() + i, &OPTIONAL[i])),
    );
    for (i, (path, kind)) in chosen {
        let (lines, noeol, exec) = &spec.files[i];
        let entry = match kind {
            Kind::Link(target) => Entry {
                mode: MODE_LINK,
                data: target.to_vec(),
            },
            Kind::Empty => Entry {
                mode: MODE_FILE,
                data: Vec::new(),
            },
            Kind::NoEol => Entry {
                mode: MODE_FILE,
                data: content(lines, false),
            },
            Kind::Exec => Entry {
                mode: MODE_EXEC,
                data: content(lines, !noeol),
            },
            Kind::File => Entry {
                mode: if *exec { MODE_EXEC } else { MODE_FILE },
                data: content(lines, !noeol),
            },
        };
        tree.insert(path.to_vec(), entry);
    }
    tree
}

struct BaseRepo {
    dir: tempfile::TempDir,
    commit: String,
    tree: Tree,
}

impl BaseRepo {
    fn build(tree: Tree) -> BaseRepo {
        let dir = tempfile::Builder::new()
            .prefix("differential-base-")
            .tempdir()
            .unwrap();
        write_tree(&tree, dir.path());
        run_ok(
            git(dir.path()).args(["init", "-q", "-b", "main"]),
            None,
            "init",
        );
        run_ok(git(dir.path()).args(["add", "-A"]), None, "add");
        run_ok(
            git(dir.path()).args(["commit", "-q", "-m", "base"]),
            None,
            "commit",
        );
        let out = run_ok(
            git(dir.path()).args(["rev-parse", "HEAD"]),
            None,
            "rev-parse",
        );
        let commit = String::from_utf8(out).unwrap().trim().to_string();
        BaseRepo { dir, commit, tree }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A git command on this repository with a separate index (and optionally work tree).
    fn git_with_index(&self, index: &Path, work_tree: Option<&Path>) -> Command {
        let mut cmd = git(self.path());
        cmd.env("GIT_INDEX_FILE", index);
        cmd.arg("--git-dir").arg(self.path().join(".git"));
        if let Some(wt) = work_tree {
            cmd.arg("--work-tree").arg(wt);
        }
        cmd
    }
}

// ---------------------------------------------------------------------------------------------
// The change: operations on the base, turned into a diff by real `git diff`

#[derive(Debug, Clone)]
enum Edit {
    Replace(Index, Line),
    Insert(Index, Line),
    Delete(Index),
    ToggleEol,
}

#[derive(Debug, Clone)]
enum Op {
    Modify(Index, Vec<Edit>),
    Add(Index, Vec<Line>, u8),
    Delete(Index),
    Rename(Index, Index, Vec<Edit>),
    Copy(Index, Index, Vec<Edit>),
    Chmod(Index, Vec<Edit>),
    TypeChange(Index),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<Index>(), line_strategy()).prop_map(|(i, l)| Edit::Replace(i, l)),
        3 => (any::<Index>(), line_strategy()).prop_map(|(i, l)| Edit::Insert(i, l)),
        2 => any::<Index>().prop_map(Edit::Delete),
        1 => Just(Edit::ToggleEol),
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let edits = |n| proptest::collection::vec(edit_strategy(), n);
    prop_oneof![
        6 => (any::<Index>(), edits(1..4)).prop_map(|(f, e)| Op::Modify(f, e)),
        3 => (any::<Index>(), proptest::collection::vec(line_strategy(), 0..6), 0..8u8)
            .prop_map(|(n, l, k)| Op::Add(n, l, k)),
        2 => any::<Index>().prop_map(Op::Delete),
        3 => (any::<Index>(), any::<Index>(), edits(0..2)).prop_map(|(f, n, e)| Op::Rename(f, n, e)),
        2 => (any::<Index>(), any::<Index>(), edits(0..2)).prop_map(|(f, n, e)| Op::Copy(f, n, e)),
        1 => (any::<Index>(), edits(0..2)).prop_map(|(f, e)| Op::Chmod(f, e)),
        1 => any::<Index>().prop_map(Op::TypeChange),
    ]
}

fn apply_edits(data: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut eol = data.last() == Some(&b'\n');
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let mut lines: Vec<Vec<u8>> = if data.is_empty() {
        Vec::new()
    } else {
        body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
    };
    for e in edits {
        match e {
            Edit::Replace(i, l) if !lines.is_empty() => {
                let k = i.index(lines.len());
                lines[k] = line_bytes(*l);
            }
            Edit::Insert(i, l) => {
                let k = i.index(lines.len() + 1);
                lines.insert(k, line_bytes(*l));
            }
            Edit::Delete(i) if !lines.is_empty() => {
                lines.remove(i.index(lines.len()));
            }
            Edit::ToggleEol => eol = !eol,
            _ => {}
        }
    }
    let mut out = lines.join(&b'\n');
    if eol && !lines.is_empty() {
        out.push(b'\n');
    }
    out
}

fn pick_key(tree: &Tree, i: &Index) -> Option<Vec<u8>> {
    if tree.is_empty() {
        return None;
    }
    tree.keys().nth(i.index(tree.len())).cloned()
}

fn edited(entry: &Entry, edits: &[Edit]) -> Entry {
    if entry.mode == MODE_LINK {
        return entry.clone();
    }
    Entry {
        mode: entry.mode,
        data: apply_edits(&entry.data, edits),
    }
}

/// The target tree; operations that cannot apply (a name conflict) are skipped.
fn apply_ops(base: &Tree, ops: &[Op]) -> Tree {
    let mut tree = base.clone();
    for op in ops {
        match op {
            Op::Modify(f, edits) => {
                let Some(key) = pick_key(&tree, f) else {
                    continue;
                };
                let entry = tree.get_mut(&key).unwrap();
                if entry.mode == MODE_LINK {
                    entry.data = if entry.data == b"src/main.rs" {
                        b"../outside".to_vec()
                    } else {
                        b"src/main.rs".to_vec()
                    };
                } else {
                    entry.data = apply_edits(&entry.data, edits);
                }
            }
            Op::Add(n, lines, kind) => {
                let name = NEW_NAMES[n.index(NEW_NAMES.len())].to_vec();
                if conflicts(&tree, &name) {
                    continue;
                }
                let entry = match kind {
                    0 => Entry {
                        mode: MODE_LINK,
                        data: b"README.md".to_vec(),
                    },
                    1 => Entry {
                        mode: MODE_EXEC,
                        data: content(lines, true),
                    },
                    2 => Entry {
                        mode: MODE_FILE,
                        data: content(lines, false),
                    },
                    _ => Entry {
                        mode: MODE_FILE,
                        data: content(lines, true),
                    },
                };
                tree.insert(name, entry);
            }
            Op::Delete(f) => {
                if let Some(key) = pick_key(&tree, f) {
                    tree.remove(&key);
                }
            }
            Op::Rename(f, n, edits) | Op::Copy(f, n, edits) => {
                let Some(key) = pick_key(&tree, f) else {
                    continue;
                };
                let name = NEW_NAMES[n.index(NEW_NAMES.len())].to_vec();
                let entry = tree[&key].clone();
                let mut rest = tree.clone();
                if matches!(op, Op::Rename(..)) {
                    rest.remove(&key);
                }
                if conflicts(&rest, &name) {
                    continue;
                }
                rest.insert(name, edited(&entry, edits));
                tree = rest;
            }
            Op::Chmod(f, edits) => {
                let Some(key) = pick_key(&tree, f) else {
                    continue;
                };
                let entry = tree.get_mut(&key).unwrap();
                if entry.mode == MODE_LINK {
                    continue;
                }
                *entry = edited(entry, edits);
                entry.mode = if entry.mode == MODE_EXEC {
                    MODE_FILE
                } else {
                    MODE_EXEC
                };
            }
            Op::TypeChange(f) => {
                let Some(key) = pick_key(&tree, f) else {
                    continue;
                };
                let entry = tree.get_mut(&key).unwrap();
                *entry = if entry.mode == MODE_LINK {
                    Entry {
                        mode: MODE_FILE,
                        data: b"was a link\n".to_vec(),
                    }
                } else {
                    Entry {
                        mode: MODE_LINK,
                        data: b"README.md".to_vec(),
                    }
                };
            }
        }
    }
    tree
}

#[derive(Debug, Clone)]
struct DiffOpts {
    /// 0 `--no-renames`, 1 `-M`, 2 `-C`, 3 `-C --find-copies-harder`.
    detect: u8,
    context: u8,
    full_index: bool,
    break_rewrites: bool,
}

fn diff_opts_strategy() -> impl Strategy<Value = DiffOpts> {
    (
        0..4u8,
        1..=3u8,
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(detect, context, full_index, break_rewrites)| DiffOpts {
            detect,
            context,
            full_index,
            break_rewrites,
        })
}

/// What real `git diff` writes for base -> target.
fn canonical_diff(base: &BaseRepo, target: &Tree, opts: &DiffOpts) -> Vec<u8> {
    let tmp = tempfile::Builder::new()
        .prefix("differential-target-")
        .tempdir()
        .unwrap();
    let wt = tmp.path().join("wt");
    std::fs::create_dir(&wt).unwrap();
    write_tree(target, &wt);
    let index = tmp.path().join("index");
    let mut add = base.git_with_index(&index, Some(&wt));
    add.args(["add", "-A"]);
    run_ok(&mut add, None, "add (target)");
    let mut diff = base.git_with_index(&index, Some(&wt));
    diff.args([
        "diff",
        "--cached",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
    ]);
    diff.arg(format!("-U{}", opts.context));
    match opts.detect {
        0 => diff.arg("--no-renames"),
        1 => diff.arg("-M"),
        2 => diff.arg("-C"),
        _ => diff.args(["-C", "--find-copies-harder"]),
    };
    if opts.full_index {
        diff.arg("--full-index");
    }
    if opts.break_rewrites {
        diff.arg("-B");
    }
    diff.arg(&base.commit);
    run_ok(&mut diff, None, "diff")
}

// ---------------------------------------------------------------------------------------------
// Mutations

/// A diff as lines (without their `\n`).
#[derive(Debug, Clone)]
struct Doc {
    lines: Vec<Vec<u8>>,
    final_newline: bool,
}

impl Doc {
    fn parse(bytes: &[u8]) -> Doc {
        if bytes.is_empty() {
            return Doc {
                lines: Vec::new(),
                final_newline: true,
            };
        }
        let (body, final_newline) = match bytes.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (bytes, false),
        };
        Doc {
            lines: body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect(),
            final_newline,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = self.lines.join(&b'\n');
        if self.final_newline && !self.lines.is_empty() {
            out.push(b'\n');
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    DiffGit,
    Ext,
    Minus,
    Plus,
    Hunk,
    Body,
    Marker,
    Other,
}

fn split_number(s: &[u8]) -> Option<(u64, &[u8])> {
    let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 18 {
        return None;
    }
    Some((std::str::from_utf8(&s[..n]).ok()?.parse().ok()?, &s[n..]))
}

/// `@@ -a[,b] +c[,d] @@rest` -> ([a, b, c, d], whether b and d were written, rest).
fn hunk_numbers(line: &[u8]) -> Option<([u64; 4], [bool; 2], Vec<u8>)> {
    let rest = line.strip_prefix(b"@@ -")?;
    let (a, rest) = split_number(rest)?;
    let (b, has_b, rest) = match rest.strip_prefix(b",") {
        Some(r) => {
            let (b, r) = split_number(r)?;
            (b, true, r)
        }
        None => (1, false, rest),
    };
    let rest = rest.strip_prefix(b" +")?;
    let (c, rest) = split_number(rest)?;
    let (d, has_d, rest) = match rest.strip_prefix(b",") {
        Some(r) => {
            let (d, r) = split_number(r)?;
            (d, true, r)
        }
        None => (1, false, rest),
    };
    let rest = rest.strip_prefix(b" @@")?;
    Some(([a, b, c, d], [has_b, has_d], rest.to_vec()))
}

fn hunk_line(n: [u64; 4], has: [bool; 2], rest: &[u8]) -> Vec<u8> {
    let side = |s: u64, c: u64, h: bool| {
        if h || c != 1 {
            format!("{s},{c}")
        } else {
            format!("{s}")
        }
    };
    let mut out = format!(
        "@@ -{} +{} @@",
        side(n[0], n[1], has[0]),
        side(n[2], n[3], has[1])
    )
    .into_bytes();
    out.extend_from_slice(rest);
    out
}

/// Classify lines the way a reader that honours hunk counts would.
fn classify(lines: &[Vec<u8>]) -> Vec<K> {
    let mut out = Vec::with_capacity(lines.len());
    let mut body: Option<(u64, u64)> = None;
    let mut in_header = false;
    for line in lines {
        if let Some((old, new)) = body.as_mut() {
            if line.first() == Some(&b'\\') {
                out.push(K::Marker);
                continue;
            }
            let consumed = match line.first() {
                Some(b' ') | None if *old > 0 && *new > 0 => {
                    *old -= 1;
                    *new -= 1;
                    true
                }
                Some(b'-') if *old > 0 => {
                    *old -= 1;
                    true
                }
                Some(b'+') if *new > 0 => {
                    *new -= 1;
                    true
                }
                _ => false,
            };
            if consumed {
                out.push(K::Body);
                if *old == 0 && *new == 0 {
                    body = None;
                }
                continue;
            }
            body = None;
        }
        let k = if line.starts_with(b"diff --git ") {
            in_header = true;
            K::DiffGit
        } else if line.starts_with(b"@@ ") {
            in_header = false;
            if let Some((n, _, _)) = hunk_numbers(line)
                && (n[1] > 0 || n[3] > 0)
            {
                body = Some((n[1], n[3]));
            }
            K::Hunk
        } else if line.starts_with(b"--- ") {
            in_header = false;
            K::Minus
        } else if line.starts_with(b"+++ ") {
            K::Plus
        } else if in_header {
            K::Ext
        } else {
            K::Other
        };
        out.push(k);
    }
    out
}

/// File patches as line ranges.
fn patches(kinds: &[K]) -> Vec<(usize, usize)> {
    let starts: Vec<usize> = (0..kinds.len())
        .filter(|&i| kinds[i] == K::DiffGit)
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(n, &s)| (s, starts.get(n + 1).copied().unwrap_or(kinds.len())))
        .collect()
}

fn patch_of(kinds: &[K], line: usize) -> Option<(usize, usize)> {
    patches(kinds)
        .into_iter()
        .find(|&(s, e)| (s..e).contains(&line))
}

fn pick<T: Copy>(items: &[T], i: &Index) -> Option<T> {
    if items.is_empty() {
        None
    } else {
        Some(items[i.index(items.len())])
    }
}

fn lines_where(doc: &Doc, kinds: &[K], f: impl Fn(K, &[u8]) -> bool) -> Vec<usize> {
    (0..doc.lines.len())
        .filter(|&i| f(kinds[i], &doc.lines[i]))
        .collect()
}

fn needs_quote(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f
}

/// git's C-style quoting (`core.quotePath=true`); `force` quotes even a plain name.
fn quote(name: &[u8], force: bool, octal_at: Option<usize>) -> Vec<u8> {
    if !force && octal_at.is_none() && !name.iter().any(|&b| needs_quote(b)) {
        return name.to_vec();
    }
    let mut out = vec![b'"'];
    for (i, &b) in name.iter().enumerate() {
        let esc: Option<&[u8]> = match b {
            0x07 => Some(b"\\a"),
            0x08 => Some(b"\\b"),
            b'\t' => Some(b"\\t"),
            b'\n' => Some(b"\\n"),
            0x0b => Some(b"\\v"),
            0x0c => Some(b"\\f"),
            b'\r' => Some(b"\\r"),
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            _ => None,
        };
        if octal_at == Some(i) || (esc.is_none() && needs_quote(b)) {
            out.extend(format!("\\{b:03o}").into_bytes());
        } else if let Some(e) = esc {
            out.extend_from_slice(e);
        } else {
            out.push(b);
        }
    }
    out.push(b'"');
    out
}

/// Decode a token: C-unquote it when it is quoted (leniently), else return it as is.
fn unquote(tok: &[u8]) -> Vec<u8> {
    if tok.len() < 2 || tok[0] != b'"' || tok[tok.len() - 1] != b'"' {
        return tok.to_vec();
    }
    let s = &tok[1..tok.len() - 1];
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 == s.len() {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let c = s[i + 1];
        i += 2;
        match c {
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'r' => out.push(b'\r'),
            b'0'..=b'3' if i + 2 <= s.len() => {
                let v = (u32::from(c - b'0') << 6)
                    | (u32::from(s[i].wrapping_sub(b'0')) << 3)
                    | u32::from(s[i + 1].wrapping_sub(b'0'));
                out.push(v as u8);
                i += 2;
            }
            other => out.push(other),
        }
    }
    out
}

/// End (exclusive) of a quoted token starting at `s[0] == '"'`.
fn quoted_end(s: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The two name tokens of a `diff --git` line, as ranges of the line.
fn diff_git_tokens(line: &[u8]) -> Vec<(usize, usize)> {
    let off = b"diff --git ".len();
    let rest = &line[off..];
    let split = if rest.first() == Some(&b'"') {
        quoted_end(rest).filter(|&e| rest.get(e) == Some(&b' '))
    } else if rest.last() == Some(&b'"') {
        rest.windows(2).rposition(|w| w == b" \"")
    } else {
        let mid = rest.len() / 2;
        if rest.len() % 2 == 1
            && rest[mid] == b' '
            && rest[..mid].get(2..) == rest[mid + 1..].get(2..)
        {
            Some(mid)
        } else {
            rest.windows(3)
                .position(|w| w == b" b/")
                .or_else(|| rest.iter().position(|&b| b == b' '))
        }
    };
    match split {
        Some(p) if p < rest.len() => vec![(off, off + p), (off + p + 1, line.len())],
        _ => vec![(off, line.len())],
    }
}

const FROM_TO: &[&[u8]] = &[b"rename from ", b"rename to ", b"copy from ", b"copy to "];

/// Name tokens of a line, as ranges.
fn name_tokens(line: &[u8], k: K) -> Vec<(usize, usize)> {
    match k {
        K::DiffGit => diff_git_tokens(line),
        K::Minus | K::Plus => {
            let end = if line[4..].first() != Some(&b'"') && line.last() == Some(&b'\t') {
                line.len() - 1
            } else {
                line.len()
            };
            vec![(4, end)]
        }
        K::Ext => FROM_TO
            .iter()
            .find(|p| line.starts_with(p))
            .map(|p| vec![(p.len(), line.len())])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Replace every name token of `line` by `f(decoded token)`.
fn restyle_line(line: &mut Vec<u8>, k: K, f: &dyn Fn(&[u8]) -> Vec<u8>) {
    let tokens = name_tokens(line, k);
    for &(s, e) in tokens.iter().rev() {
        let new = f(&unquote(&line[s..e]));
        line.splice(s..e, new);
    }
}

/// Apply `f` to the names of line `i`, or of every line of its file patch when `all`.
fn restyle(doc: &mut Doc, kinds: &[K], i: usize, all: bool, f: &dyn Fn(&[u8]) -> Vec<u8>) {
    let range = if all {
        patch_of(kinds, i).map_or(i..i + 1, |(s, e)| s..e)
    } else {
        i..i + 1
    };
    for j in range {
        restyle_line(&mut doc.lines[j], kinds[j], f);
    }
}

fn name_lines(doc: &Doc, kinds: &[K]) -> Vec<usize> {
    lines_where(doc, kinds, |k, l| !name_tokens(l, k).is_empty())
}

/// Replace the name in a prefixed token, keeping the `a/`/`b/` prefix and `/dev/null`.
fn renamed_token(tok: &[u8], name: &[u8], octal_first: bool) -> Vec<u8> {
    if tok == b"/dev/null" {
        return tok.to_vec();
    }
    let (prefix, at) = match tok.get(..2) {
        Some(b"a/") => (&b"a/"[..], 2),
        Some(b"b/") => (&b"b/"[..], 2),
        _ => (&b""[..], 0),
    };
    let mut full = prefix.to_vec();
    full.extend_from_slice(name);
    quote(&full, false, octal_first.then_some(at))
}

const GARBAGE: &[&[u8]] = &[
    b"garbage",
    b"",
    b"+injected",
    b" context",
    b"-removed",
    b"\\ No newline at end of file",
    b" diff --git a/.git/config b/.git/config",
    b"From: attacker@example.com",
    b"Subject: [PATCH] x",
    b"---",
    b"-- ",
    b"2.47.3",
    b"@@ -1 +1 @@",
    b"index 0000000..1111111",
    b"diff --git a/x",
    b"new file mode 100644",
    b"rename to y",
    b"#!/bin/sh",
    b"--- a/README.md",
    b"+++ b/README.md",
];

const DISGUISES: &[(&[u8], bool)] = &[
    (b".git/config", false),
    (b".git/hooks/pre-commit", true),
    (b".GIT/config", false),
    (b"git~1/config", false),
    (b".git./x", false),
    (b"sub/.git/x", true),
    (b".gitmodules", false),
    (b"../escape", false),
    (b"/etc/x", false),
    (b"a//b", false),
];

const INDEX_MODES: &[&[u8]] = &[
    b"", b" 100644", b" 100755", b" 120000", b" 160000", b" 100664", b" 040000", b" 644",
];

const SECTIONS: &[&[u8]] = &[
    b"",
    b" fn main() {",
    b" @@ -9 +9 @@",
    b"\tx",
    b"x",
    b" ",
    b" diff --git a/.git/config b/.git/config",
];

const SIMILARITIES: &[&[u8]] = &[b"100%", b"0%", b"101%", b"50", b"050%", b"50% "];

const MODE_PAIRS: &[(&[u8], &[u8])] = &[
    (b"100644", b"100755"),
    (b"100755", b"100644"),
    (b"100644", b"120000"),
    (b"100644", b"160000"),
    (b"100644", b"100644"),
];

#[derive(Debug, Clone)]
enum Mutation {
    /// Another name on a `+++` (or `---`) line.
    MarkerName(Index, Index),
    /// Another old or new name on the `diff --git` line.
    HeaderName(Index, Index, bool),
    /// Another name on a `rename`/`copy` from/to line.
    FromToName(Index, Index),
    /// `rename old`/`rename new`, git's old spelling.
    LegacyRename(Index),
    /// rename <-> copy.
    RenameCopySwap(Index),
    /// Drop the `a/`/`b/` prefixes of a line's names.
    DropPrefixes(Index),
    /// A traditional (non-git) patch of a base file, placed at a patch boundary.
    Traditional(Index, u8, Index),
    /// One hunk number +-1.
    HunkCount(Index, u8, bool),
    /// Both start lines of a hunk +-1 (git searches for the position).
    ShiftHunk(Index, bool),
    /// CR before the LF of a line outside hunk bodies.
    CrlfHeader(Index),
    /// CR before the LF of an added line.
    CrlfAdded(Index),
    /// A line after the last one.
    Append(Index),
    /// A line before a `diff --git` line.
    Insert(Index, Index),
    /// A file patch twice.
    Duplicate(Index),
    /// The mode on an `index` line.
    IndexMode(Index, Index),
    /// Quote names that need no quoting (one line, or the whole file patch).
    Quote(Index, bool),
    /// Write quoted names raw.
    Unquote(Index, bool),
    /// An octal escape for one byte of a name.
    OctalEscape(Index, Index, bool),
    /// Every name of a file patch becomes a `.git` (or otherwise unsafe) path.
    Disguise(Index, Index),
    /// Every name of a file patch becomes another name.
    RenamePatch(Index, Index),
    /// A space or TAB after a name (one line, or every name of the file patch).
    TrailingWhitespace(Index, bool, bool),
    /// Hunk counts of 1 written out (`-3,1`) or left implicit (`-3`).
    ExplicitCounts(Index),
    /// Text after a hunk header's closing `@@`.
    HunkSection(Index, Index),
    /// `/dev/null` <-> a name on a `---`/`+++` line.
    DevNull(Index),
    Nul(Index, Index),
    TruncateLastNewline,
    /// `new file mode` <-> `deleted file mode`.
    NewDeletedSwap(Index),
    /// Remove a line outside hunk bodies.
    DropLine(Index),
    /// Repeat a line outside hunk bodies.
    RepeatLine(Index),
    /// Swap the values of `old mode` and `new mode`.
    SwapModes(Index),
    /// A similarity value, or a `dissimilarity index` line.
    Similarity(Index, Index),
    /// Add `old mode`/`new mode` lines.
    AddModeLines(Index, Index),
    /// A `\ No newline at end of file` after a hunk line.
    NoNewlineMarker(Index),
    /// An empty context line written as an empty line.
    EmptyContext(Index),
    /// Hunks replaced by a `Binary files ... differ` line.
    Binary(Index),
    /// The `---`/`+++` lines and hunks removed.
    DropContent(Index),
    /// A hunk body rewritten so that it still matches the base (see [`HunkRewrite`]).
    HunkBody(Index, HunkRewrite),
    /// Two file patches change places.
    SwapPatches(Index, Index),
}

/// Rewrites of one hunk's body that keep its old side, so it still matches the base.
#[derive(Debug, Clone, Copy)]
enum HunkRewrite {
    /// Removed lines become context, added lines go: only context is left.
    ContextOnly,
    /// Every removed line is added back right after it, added lines go: a change to nothing.
    NoOp,
    /// Added lines go.
    DropAdded,
    /// Removed lines become context.
    KeepRemoved,
}

fn mutation_strategy() -> impl Strategy<Value = Mutation> {
    let i = any::<Index>;
    let b = any::<bool>;
    prop_oneof![
        1 => (i(), i()).prop_map(|(a, n)| Mutation::MarkerName(a, n)),
        1 => (i(), i(), b()).prop_map(|(a, n, s)| Mutation::HeaderName(a, n, s)),
        1 => (i(), i()).prop_map(|(a, n)| Mutation::FromToName(a, n)),
        1 => i().prop_map(Mutation::LegacyRename),
        1 => i().prop_map(Mutation::RenameCopySwap),
        1 => i().prop_map(Mutation::DropPrefixes),
        1 => (i(), any::<u8>(), i()).prop_map(|(f, s, at)| Mutation::Traditional(f, s, at)),
        1 => (i(), 0..4u8, b()).prop_map(|(h, f, up)| Mutation::HunkCount(h, f, up)),
        3 => (i(), b()).prop_map(|(h, up)| Mutation::ShiftHunk(h, up)),
        1 => i().prop_map(Mutation::CrlfHeader),
        3 => i().prop_map(Mutation::CrlfAdded),
        1 => i().prop_map(Mutation::Append),
        1 => (i(), i()).prop_map(|(a, t)| Mutation::Insert(a, t)),
        1 => i().prop_map(Mutation::Duplicate),
        3 => (i(), i()).prop_map(|(a, m)| Mutation::IndexMode(a, m)),
        3 => (i(), b()).prop_map(|(a, all)| Mutation::Quote(a, all)),
        3 => (i(), b()).prop_map(|(a, all)| Mutation::Unquote(a, all)),
        3 => (i(), i(), b()).prop_map(|(a, p, all)| Mutation::OctalEscape(a, p, all)),
        1 => (i(), i()).prop_map(|(a, d)| Mutation::Disguise(a, d)),
        3 => (i(), i()).prop_map(|(a, n)| Mutation::RenamePatch(a, n)),
        3 => (i(), b(), b()).prop_map(|(a, tab, all)| Mutation::TrailingWhitespace(a, tab, all)),
        3 => i().prop_map(Mutation::ExplicitCounts),
        3 => (i(), i()).prop_map(|(h, t)| Mutation::HunkSection(h, t)),
        1 => i().prop_map(Mutation::DevNull),
        1 => (i(), i()).prop_map(|(a, p)| Mutation::Nul(a, p)),
        1 => Just(Mutation::TruncateLastNewline),
        1 => i().prop_map(Mutation::NewDeletedSwap),
        1 => i().prop_map(Mutation::DropLine),
        1 => i().prop_map(Mutation::RepeatLine),
        1 => i().prop_map(Mutation::SwapModes),
        3 => (i(), i()).prop_map(|(a, v)| Mutation::Similarity(a, v)),
        1 => (i(), i()).prop_map(|(a, m)| Mutation::AddModeLines(a, m)),
        3 => i().prop_map(Mutation::NoNewlineMarker),
        3 => i().prop_map(Mutation::EmptyContext),
        1 => i().prop_map(Mutation::Binary),
        1 => i().prop_map(Mutation::DropContent),
        10 => (i(), hunk_rewrite()).prop_map(|(h, r)| Mutation::HunkBody(h, r)),
        3 => (i(), i()).prop_map(|(a, b)| Mutation::SwapPatches(a, b)),
    ]
}

fn hunk_rewrite() -> impl Strategy<Value = HunkRewrite> {
    prop_oneof![
        Just(HunkRewrite::ContextOnly),
        Just(HunkRewrite::NoOp),
        Just(HunkRewrite::DropAdded),
        Just(HunkRewrite::KeepRemoved),
    ]
}

/// Rewrite the body of the hunk whose header is line `h`.
fn rewrite_hunk(doc: &mut Doc, kinds: &[K], h: usize, how: HunkRewrite) {
    let Some((n, _, rest)) = hunk_numbers(&doc.lines[h]) else {
        return;
    };
    let end = (h + 1..doc.lines.len())
        .find(|&j| !matches!(kinds[j], K::Body | K::Marker))
        .unwrap_or(doc.lines.len());
    // (kind, content, followed by a `\ No newline` marker)
    let mut body: Vec<(u8, Vec<u8>, bool)> = Vec::new();
    for (l, k) in doc.lines[h + 1..end].iter().zip(&kinds[h + 1..end]) {
        if *k == K::Marker {
            if let Some(last) = body.last_mut() {
                last.2 = true;
            }
            continue;
        }
        body.push((
            l.first().copied().unwrap_or(b' '),
            l.get(1..).unwrap_or_default().to_vec(),
            false,
        ));
    }
    let mut out: Vec<(u8, Vec<u8>, bool)> = Vec::new();
    for (k, c, m) in body {
        match (how, k) {
            (_, b'+') if !matches!(how, HunkRewrite::KeepRemoved) => {}
            (HunkRewrite::ContextOnly | HunkRewrite::KeepRemoved, b'-') => out.push((b' ', c, m)),
            (HunkRewrite::NoOp, b'-') => {
                out.push((b'-', c.clone(), m));
                out.push((b'+', c, m));
            }
            _ => out.push((k, c, m)),
        }
    }
    let old = out.iter().filter(|(k, _, _)| *k != b'+').count() as u64;
    let new = out.iter().filter(|(k, _, _)| *k != b'-').count() as u64;
    if old == 0 && new == 0 {
        return;
    }
    let mut lines = vec![hunk_line([n[0], old, n[2], new], [true, true], &rest)];
    for (k, c, m) in out {
        lines.push([&[k][..], &c[..]].concat());
        if m {
            lines.push(b"\\ No newline at end of file".to_vec());
        }
    }
    doc.lines.splice(h..end, lines);
}

/// A traditional patch adding one line at the top of a base file.
fn traditional_patch(base: &Tree, file: &Index, style: u8) -> Vec<Vec<u8>> {
    let files: Vec<(&Vec<u8>, &Entry)> = base.iter().filter(|(_, e)| e.mode != MODE_LINK).collect();
    let (path, entry) = files[file.index(files.len())];
    let (old, new): (Vec<u8>, Vec<u8>) = match style % 4 {
        0 => ([b"a/", &path[..]].concat(), [b"b/", &path[..]].concat()),
        1 => (path.clone(), path.clone()),
        2 => (
            [b"orig/", &path[..]].concat(),
            [b"new/", &path[..]].concat(),
        ),
        _ => (
            [b"a/", &path[..]].concat(),
            [b"b/", NEW_NAMES[usize::from(style / 4) % NEW_NAMES.len()]].concat(),
        ),
    };
    let stamp: &[u8] = if style & 0x40 != 0 {
        b"\t2026-01-01 00:00:00.000000000 +0000"
    } else {
        b""
    };
    let mut out = vec![
        [b"--- ", &quote(&old, false, None)[..], stamp].concat(),
        [b"+++ ", &quote(&new, false, None)[..], stamp].concat(),
    ];
    let doc = Doc::parse(&entry.data);
    let n = doc.lines.len() as u64;
    if n == 0 {
        out.push(b"@@ -0,0 +1 @@".to_vec());
        out.push(b"+injected".to_vec());
    } else {
        out.push(format!("@@ -1,{n} +1,{} @@", n + 1).into_bytes());
        out.push(b"+injected".to_vec());
        for l in &doc.lines {
            out.push([b" ", &l[..]].concat());
        }
        if !doc.final_newline {
            out.push(b"\\ No newline at end of file".to_vec());
        }
    }
    out
}

/// Apply one mutation; a mutation with nothing to act on leaves the diff as it is.
fn mutate(doc: &mut Doc, m: &Mutation, base: &Tree) {
    let kinds = classify(&doc.lines);
    let of_kind = |wanted: &[K]| lines_where(doc, &kinds, |k, _| wanted.contains(&k));
    let starts = of_kind(&[K::DiffGit]);
    match m {
        Mutation::MarkerName(a, n) => {
            if let Some(i) = pick(&of_kind(&[K::Plus, K::Minus]), a) {
                let prefix: &[u8] = if kinds[i] == K::Plus { b"b/" } else { b"a/" };
                let name = [prefix, &any_name(*n)[..]].concat();
                doc.lines[i].truncate(4);
                doc.lines[i].extend(quote(&name, false, None));
            }
        }
        Mutation::HeaderName(a, n, new_side) => {
            if let Some(i) = pick(&starts, a) {
                let toks = diff_git_tokens(&doc.lines[i]);
                if let Some(&(s, e)) = toks.get(usize::from(*new_side)) {
                    let prefix: &[u8] = if *new_side { b"b/" } else { b"a/" };
                    let name = quote(&[prefix, &any_name(*n)[..]].concat(), false, None);
                    doc.lines[i].splice(s..e, name);
                }
            }
        }
        Mutation::FromToName(a, n) => {
            let c = lines_where(doc, &kinds, |k, l| {
                k == K::Ext && FROM_TO.iter().any(|p| l.starts_with(p))
            });
            if let Some(i) = pick(&c, a) {
                let name = any_name(*n);
                restyle_line(&mut doc.lines[i], K::Ext, &|_| quote(&name, false, None));
            }
        }
        Mutation::LegacyRename(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                for l in &mut doc.lines[s..e] {
                    if let Some(rest) = l.strip_prefix(b"rename from ") {
                        *l = [b"rename old ", rest].concat();
                    } else if let Some(rest) = l.strip_prefix(b"rename to ") {
                        *l = [b"rename new ", rest].concat();
                    }
                }
            }
        }
        Mutation::RenameCopySwap(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                for (l, k) in doc.lines[s..e].iter_mut().zip(&kinds[s..e]) {
                    if *k != K::Ext {
                        continue;
                    }
                    if let Some(rest) = l.strip_prefix(b"rename ") {
                        *l = [b"copy ", rest].concat();
                    } else if let Some(rest) = l.strip_prefix(b"copy ") {
                        *l = [b"rename ", rest].concat();
                    }
                }
            }
        }
        Mutation::DropPrefixes(a) => {
            if let Some(i) = pick(&of_kind(&[K::DiffGit, K::Minus, K::Plus]), a) {
                restyle_line(&mut doc.lines[i], kinds[i], &|t| {
                    let bare = t
                        .strip_prefix(b"a/")
                        .or_else(|| t.strip_prefix(b"b/"))
                        .unwrap_or(t);
                    quote(bare, false, None)
                });
            }
        }
        Mutation::Traditional(f, style, at) => {
            let patch = traditional_patch(base, f, *style);
            let mut places = starts.clone();
            places.push(doc.lines.len());
            let pos = pick(&places, at).unwrap_or(0);
            doc.lines.splice(pos..pos, patch);
        }
        Mutation::HunkCount(h, field, up) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((mut n, has, rest)) = hunk_numbers(&doc.lines[i])
            {
                let f = usize::from(*field % 4);
                n[f] = if *up {
                    n[f] + 1
                } else {
                    n[f].saturating_sub(1)
                };
                doc.lines[i] = hunk_line(n, has, &rest);
            }
        }
        Mutation::ShiftHunk(h, up) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((mut n, has, rest)) = hunk_numbers(&doc.lines[i])
            {
                for f in [0, 2] {
                    n[f] = if *up {
                        n[f] + 1
                    } else {
                        n[f].saturating_sub(1)
                    };
                }
                doc.lines[i] = hunk_line(n, has, &rest);
            }
        }
        Mutation::CrlfHeader(a) => {
            let c = lines_where(doc, &kinds, |k, _| k != K::Body);
            if let Some(i) = pick(&c, a) {
                doc.lines[i].push(b'\r');
            }
        }
        Mutation::CrlfAdded(a) => {
            let c = lines_where(doc, &kinds, |k, l| k == K::Body && l.first() == Some(&b'+'));
            if let Some(i) = pick(&c, a) {
                doc.lines[i].push(b'\r');
            }
        }
        Mutation::Append(t) => doc.lines.push(GARBAGE[t.index(GARBAGE.len())].to_vec()),
        Mutation::Insert(a, t) => {
            let mut places = starts.clone();
            places.push(doc.lines.len());
            let pos = pick(&places, a).unwrap_or(0);
            doc.lines
                .insert(pos, GARBAGE[t.index(GARBAGE.len())].to_vec());
        }
        Mutation::Duplicate(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                let copy: Vec<Vec<u8>> = doc.lines[s..e].to_vec();
                doc.lines.splice(e..e, copy);
            }
        }
        Mutation::IndexMode(a, m) => {
            let c = lines_where(doc, &kinds, |k, l| k == K::Ext && l.starts_with(b"index "));
            if let Some(i) = pick(&c, a) {
                let l = &mut doc.lines[i];
                if let Some(sp) = l[6..].iter().position(|&b| b == b' ') {
                    l.truncate(6 + sp);
                }
                l.extend_from_slice(INDEX_MODES[m.index(INDEX_MODES.len())]);
            }
        }
        Mutation::Quote(a, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                restyle(doc, &kinds, i, *all, &|t| quote(t, true, None));
            }
        }
        Mutation::Unquote(a, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                restyle(doc, &kinds, i, *all, &|t| t.to_vec());
            }
        }
        Mutation::OctalEscape(a, p, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                let p = *p;
                restyle(doc, &kinds, i, *all, &move |t| {
                    if t == b"/dev/null" || t.is_empty() {
                        t.to_vec()
                    } else {
                        quote(t, true, Some(p.index(t.len())))
                    }
                });
            }
        }
        Mutation::Disguise(a, d) => {
            if let Some(i) = pick(&starts, a) {
                let (name, octal) = DISGUISES[d.index(DISGUISES.len())];
                restyle(doc, &kinds, i, true, &|t| renamed_token(t, name, octal));
            }
        }
        Mutation::RenamePatch(a, n) => {
            if let Some(i) = pick(&starts, a) {
                let name = any_name(*n);
                restyle(doc, &kinds, i, true, &|t| renamed_token(t, &name, false));
            }
        }
        Mutation::TrailingWhitespace(a, tab, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                let ws = if *tab { b'\t' } else { b' ' };
                if *all {
                    restyle(doc, &kinds, i, true, &|t| {
                        if t == b"/dev/null" {
                            t.to_vec()
                        } else {
                            quote(&[t, &[ws][..]].concat(), false, None)
                        }
                    });
                } else {
                    doc.lines[i].push(ws);
                }
            }
        }
        Mutation::ExplicitCounts(h) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((n, has, rest)) = hunk_numbers(&doc.lines[i])
            {
                let has = if has.contains(&false) {
                    [true, true]
                } else {
                    [false, false]
                };
                doc.lines[i] = hunk_line(n, has, &rest);
            }
        }
        Mutation::HunkSection(h, t) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((n, has, _)) = hunk_numbers(&doc.lines[i])
            {
                doc.lines[i] = hunk_line(n, has, SECTIONS[t.index(SECTIONS.len())]);
            }
        }
        Mutation::DevNull(a) => {
            if let Some(i) = pick(&of_kind(&[K::Minus, K::Plus]), a) {
                if &doc.lines[i][4..] == b"/dev/null" {
                    let header = patch_of(&kinds, i).map(|(s, _)| s);
                    if let Some(h) = header {
                        let toks = diff_git_tokens(&doc.lines[h]);
                        let side = usize::from(kinds[i] == K::Plus);
                        if let Some(&(s, e)) = toks.get(side) {
                            let tok = doc.lines[h][s..e].to_vec();
                            doc.lines[i].truncate(4);
                            doc.lines[i].extend(tok);
                        }
                    }
                } else {
                    doc.lines[i].truncate(4);
                    doc.lines[i].extend_from_slice(b"/dev/null");
                }
            }
        }
        Mutation::Nul(a, p) => {
            if !doc.lines.is_empty() {
                let i = a.index(doc.lines.len());
                let pos = p.index(doc.lines[i].len() + 1);
                doc.lines[i].insert(pos, 0);
            }
        }
        Mutation::TruncateLastNewline => doc.final_newline = false,
        Mutation::NewDeletedSwap(a) => {
            let c = lines_where(doc, &kinds, |k, l| {
                k == K::Ext
                    && (l.starts_with(b"new file mode ") || l.starts_with(b"deleted file mode "))
            });
            if let Some(i) = pick(&c, a) {
                let l = &mut doc.lines[i];
                *l = if let Some(rest) = l.strip_prefix(b"new file mode ") {
                    [b"deleted file mode ", rest].concat()
                } else {
                    [b"new file mode ", &l[b"deleted file mode ".len()..]].concat()
                };
            }
        }
        Mutation::DropLine(a) => {
            let c = lines_where(doc, &kinds, |k, _| k != K::Body);
            if let Some(i) = pick(&c, a) {
                doc.lines.remove(i);
            }
        }
        Mutation::RepeatLine(a) => {
            let c = lines_where(doc, &kinds, |k, _| k != K::Body);
            if let Some(i) = pick(&c, a) {
                let l = doc.lines[i].clone();
                doc.lines.insert(i, l);
            }
        }
        Mutation::SwapModes(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                let old = (s..e).find(|&j| doc.lines[j].starts_with(b"old mode "));
                let new = (s..e).find(|&j| doc.lines[j].starts_with(b"new mode "));
                if let (Some(o), Some(n)) = (old, new) {
                    let ov = doc.lines[o][9..].to_vec();
                    let nv = doc.lines[n][9..].to_vec();
                    doc.lines[o].truncate(9);
                    doc.lines[o].extend(nv);
                    doc.lines[n].truncate(9);
                    doc.lines[n].extend(ov);
                }
            }
        }
        Mutation::Similarity(a, v) => {
            let value = SIMILARITIES[v.index(SIMILARITIES.len())];
            let c = lines_where(doc, &kinds, |k, l| {
                k == K::Ext
                    && (l.starts_with(b"similarity index ")
                        || l.starts_with(b"dissimilarity index "))
            });
            if let Some(i) = pick(&c, a) {
                let l = &mut doc.lines[i];
                let at = l.iter().rposition(|&b| b == b' ').unwrap_or(l.len()) + 1;
                l.truncate(at);
                l.extend_from_slice(value);
            } else if let Some(i) = pick(&starts, a) {
                doc.lines
                    .insert(i + 1, [b"dissimilarity index ", value].concat());
            }
        }
        Mutation::AddModeLines(a, m) => {
            if let Some(i) = pick(&starts, a) {
                let (o, n) = MODE_PAIRS[m.index(MODE_PAIRS.len())];
                doc.lines.insert(i + 1, [b"new mode ", n].concat());
                doc.lines.insert(i + 1, [b"old mode ", o].concat());
            }
        }
        Mutation::NoNewlineMarker(a) => {
            if let Some(i) = pick(&of_kind(&[K::Body]), a) {
                doc.lines
                    .insert(i + 1, b"\\ No newline at end of file".to_vec());
            }
        }
        Mutation::EmptyContext(a) => {
            let c = lines_where(doc, &kinds, |k, l| k == K::Body && l == b" ");
            if let Some(i) = pick(&c, a) {
                doc.lines[i].clear();
            }
        }
        Mutation::HunkBody(h, how) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h) {
                rewrite_hunk(doc, &kinds, i, *how);
            }
        }
        Mutation::SwapPatches(a, b) => {
            let ps = patches(&kinds);
            if ps.len() >= 2 {
                let (x, y) = (a.index(ps.len()), b.index(ps.len()));
                let (x, y) = (x.min(y), x.max(y));
                if x != y {
                    let (px, py) = (ps[x], ps[y]);
                    let mut lines = doc.lines[..px.0].to_vec();
                    lines.extend_from_slice(&doc.lines[py.0..py.1]);
                    lines.extend_from_slice(&doc.lines[px.1..py.0]);
                    lines.extend_from_slice(&doc.lines[px.0..px.1]);
                    lines.extend_from_slice(&doc.lines[py.1..]);
                    doc.lines = lines;
                }
            }
        }
        Mutation::Binary(a) | Mutation::DropContent(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i))
                && let Some(minus) = (s..e).find(|&j| kinds[j] == K::Minus)
            {
                let replacement = if matches!(m, Mutation::Binary(_)) {
                    let old = doc.lines[minus][4..].to_vec();
                    let new = doc
                        .lines
                        .get(minus + 1)
                        .and_then(|l| l.get(4..))
                        .unwrap_or_default()
                        .to_vec();
                    vec![[b"Binary files ", &old[..], b" and ", &new[..], b" differ"].concat()]
                } else {
                    Vec::new()
                };
                doc.lines.splice(minus..e, replacement);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The oracle: git's real effect on a throwaway index of the base

type Change = (char, u32, u32, String);

#[derive(Debug)]
enum Oracle {
    Applied(BTreeSet<Change>),
    Refused(String),
}

fn show_changes(set: Option<&BTreeSet<Change>>) -> String {
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
fn diff_kind(effect: &BTreeSet<Change>, expected: Option<&BTreeSet<Change>>) -> String {
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
fn refusal_kind(stderr: &str) -> String {
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

fn parse_octal(s: &[u8]) -> u32 {
    s.iter().fold(0, |acc, &b| acc * 8 + u32::from(b - b'0'))
}

fn oracle(base: &BaseRepo, diff: &[u8]) -> Oracle {
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
fn base_dependent_refusal(stderr: &str) -> bool {
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

fn type_of(mode: u32) -> u32 {
    mode & 0o170000
}

/// What `diff-index --no-renames` must show if git did what the verdict says. Modes the diff
/// leaves implicit (a pure rename or copy) are the base's. `None` when a mode is unknowable.
fn expected_effect(v: &Verdict, base: &HashMap<String, u32>) -> Option<BTreeSet<Change>> {
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
            Status::Added => {
                adds.insert(f.new_path.as_ref()?.display(), f.new_mode?);
            }
            Status::Deleted => {
                dels.insert(f.old_path.as_ref()?.display(), old?);
            }
            Status::Modified => {
                let (o, n) = (old?, f.new_mode.or(old)?);
                let s = if type_of(o) == type_of(n) { 'M' } else { 'T' };
                mods.push((s, o, n, f.new_path.as_ref()?.display()));
            }
            Status::Renamed => {
                dels.insert(f.old_path.as_ref()?.display(), old?);
                adds.insert(f.new_path.as_ref()?.display(), f.new_mode.or(old)?);
            }
            Status::Copied => {
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
fn contradicts_base(v: &Verdict, base: &HashMap<String, u32>) -> bool {
    let removed: BTreeSet<String> = v
        .files
        .iter()
        .filter(|f| matches!(f.status, Status::Deleted | Status::Renamed))
        .filter_map(|f| f.old_path.as_ref().map(|p| p.display()))
        .collect();
    v.files.iter().any(|f| {
        let old_wrong = f.status != Status::Added
            && f.old_path
                .as_ref()
                .is_none_or(|p| match base.get(&p.display()) {
                    None => true,
                    Some(&m) => f.old_mode.is_some_and(|claimed| claimed != m),
                });
        let new_taken = matches!(f.status, Status::Added | Status::Renamed | Status::Copied)
            && f.new_path.as_ref().map(|p| p.display()).is_some_and(|p| {
                (base.contains_key(&p) && !removed.contains(&p))
                    || base
                        .keys()
                        .any(|k| p.starts_with(&format!("{k}/")) || k.starts_with(&format!("{p}/")))
            });
        old_wrong || new_taken
    })
}

// ---------------------------------------------------------------------------------------------
// The property

#[derive(Debug, Clone)]
struct Case {
    base: usize,
    ops: Vec<Op>,
    opts: DiffOpts,
    mutations: Vec<Mutation>,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        0..BASES,
        proptest::collection::vec(op_strategy(), 1..=3),
        diff_opts_strategy(),
        prop_oneof![
            3 => Just(Vec::new()),
            7 => proptest::collection::vec(mutation_strategy(), 1..=2),
        ],
    )
        .prop_map(|(base, ops, opts, mutations)| Case {
            base,
            ops,
            opts,
            mutations,
        })
}

#[derive(Debug, Default)]
struct Stats {
    cases: u64,
    unmutated: u64,
    parser_accepted: u64,
    parser_accepted_mutated: u64,
    parser_rejected: u64,
    repo_accepted: u64,
    git_applied: u64,
    git_refused: u64,
    /// Parser-only acceptances whose file list git's effect matched exactly.
    agreed: u64,
    /// Parser-only acceptances git refused for a base reason.
    base_refused: u64,
    /// Parser-only acceptances whose claims (a mode, a path) contradict the base.
    base_contradicted: u64,
    disagreements: u64,
    /// Unmutated `git diff` output the guard's parser refuses (strictness, not a safety problem).
    canonical_parse_rejects: u64,
    rejected_by: BTreeMap<String, u64>,
    canonical_examples: Vec<String>,
}

struct Ctx {
    seed: u64,
    policy: Policy,
    bases: RefCell<HashMap<usize, BaseRepo>>,
    stats: RefCell<Stats>,
    /// Set after the first failure: shrinking runs are not counted.
    shrinking: RefCell<bool>,
    keep_going: bool,
    /// Kept-going disagreements: (kind, report).
    failures: RefCell<Vec<(String, String)>>,
}

fn seed_bytes(seed: u64, salt: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (k, chunk) in out.chunks_mut(8).enumerate() {
        let v = (seed ^ salt.rotate_left(17))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add((k as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    out
}

impl Ctx {
    fn with_base<R>(&self, n: usize, f: impl FnOnce(&BaseRepo) -> R) -> R {
        let mut bases = self.bases.borrow_mut();
        let repo = bases.entry(n).or_insert_with(|| {
            let rng =
                TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(self.seed, n as u64 + 1));
            let mut runner = TestRunner::new_with_rng(Config::default(), rng);
            let spec = base_spec_strategy()
                .new_tree(&mut runner)
                .unwrap()
                .current();
            BaseRepo::build(base_tree(&spec))
        });
        f(repo)
    }

    fn verdict(&self, diff: &[u8], repo: Option<RepoBase<'_>>) -> Verdict {
        let sha = guard::hash::sha256_hex(diff);
        let scope = vec!["**".to_string()];
        check(&CheckRequest {
            diff,
            expected_sha256: &sha,
            scope: &scope,
            policy: &self.policy,
            repo,
        })
        .expect("the check reaches a verdict")
    }
}

/// Bytes as a shell `printf '...'` argument.
fn printf_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("printf '");
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            b'%' => out.push_str("%%"),
            b'\'' => out.push_str("'\\''"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('\'');
    out
}

fn describe_verdict(v: &Verdict) -> String {
    let files: Vec<String> = v
        .files
        .iter()
        .map(|f| {
            format!(
                "{} {:?}->{:?} {:?} {:?}",
                f.status.letter(),
                f.old_mode.map(|m| format!("{m:o}")),
                f.new_mode.map(|m| format!("{m:o}")),
                f.old_path,
                f.new_path
            )
        })
        .collect();
    let violations: Vec<String> = v
        .violations
        .iter()
        .map(|x| format!("{:?}: {}", x.rule, x.message))
        .collect();
    format!(
        "accepted={} files=[{}] violations=[{}]",
        v.accepted(),
        files.join("; "),
        violations.join("; ")
    )
}

/// Write the failing case where a regression fixture can be made from it.
fn dump_failure(base: &BaseRepo, diff: &[u8], report: &str) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("differential-failure");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("base")).unwrap();
    write_tree(&base.tree, &dir.join("base"));
    std::fs::write(dir.join("patch.diff"), diff).unwrap();
    std::fs::write(dir.join("README"), report).unwrap();
}

fn run_case(ctx: &Ctx, case: &Case) -> Result<(), TestCaseError> {
    ctx.with_base(case.base, |base| {
        let target = apply_ops(&base.tree, &case.ops);
        let canonical = canonical_diff(base, &target, &case.opts);
        let mut doc = Doc::parse(&canonical);
        for m in &case.mutations {
            mutate(&mut doc, m, &base.tree);
        }
        let diff = if case.mutations.is_empty() {
            canonical.clone()
        } else {
            doc.bytes()
        };
        let parser = ctx.verdict(&diff, None);
        let with_repo = ctx.verdict(
            &diff,
            Some(RepoBase {
                dir: base.path(),
                base: &base.commit,
            }),
        );
        let git = oracle(base, &diff);
        let base_modes: HashMap<String, u32> = base
            .tree
            .iter()
            .map(|(p, e)| (display_bytes(p), e.mode))
            .collect();

        let mut problems: Vec<String> = Vec::new();
        // A short label per problem, for grouping the disagreements of a long run.
        let mut kinds: Vec<String> = Vec::new();
        // (agreed, refused for a base reason, claims contradict the base)
        let mut p1 = (false, false, false);
        // P1: parser only.
        if parser.accepted() {
            match &git {
                Oracle::Applied(effect) => {
                    let expected = expected_effect(&parser, &base_modes);
                    if expected.as_ref() == Some(effect) {
                        p1.0 = true;
                    } else {
                        if contradicts_base(&parser, &base_modes) {
                            p1.2 = true;
                        } else {
                            problems.push(format!(
                                "P1: the parser-only guard accepted, git applied with effect {}, \
                                 but the guard's file list means {}",
                                show_changes(Some(effect)),
                                show_changes(expected.as_ref())
                            ));
                            kinds.push(format!("P1 effect differs: {}", diff_kind(effect, expected.as_ref())));
                        }
                    }
                }
                Oracle::Refused(msg) => {
                    if base_dependent_refusal(msg) {
                        p1.1 = true;
                    } else {
                        problems.push(format!(
                            "P1: the parser-only guard accepted, git refused for a reason that does \
                             not depend on the base: {}",
                            msg.trim()
                        ));
                        kinds.push(format!("P1 git refused: {}", refusal_kind(msg)));
                    }
                }
            }
        }
        // P2: with the base.
        if with_repo.accepted() {
            match &git {
                Oracle::Refused(msg) => {
                    problems.push(format!(
                        "P2: the guard with --repo accepted, git refused: {}",
                        msg.trim()
                    ));
                    kinds.push(format!("P2 git refused: {}", refusal_kind(msg)));
                }
                Oracle::Applied(effect) => {
                    let expected = expected_effect(&with_repo, &base_modes);
                    if expected.as_ref() != Some(effect) {
                        problems.push(format!(
                            "P2: the guard with --repo accepted, git's effect {} is not the \
                             guard's file list {}",
                            show_changes(Some(effect)),
                            show_changes(expected.as_ref())
                        ));
                        kinds.push(format!("P2 effect differs: {}", diff_kind(effect, expected.as_ref())));
                    }
                }
            }
            if !parser.accepted() {
                problems.push("P2: accepted with --repo but rejected without a base".into());
                kinds.push("P2 accepted only with --repo".into());
            }
        }

        if !*ctx.shrinking.borrow() {
            let mut s = ctx.stats.borrow_mut();
            s.cases += 1;
            if case.mutations.is_empty() {
                s.unmutated += 1;
            }
            if parser.accepted() {
                s.parser_accepted += 1;
                if !case.mutations.is_empty() {
                    s.parser_accepted_mutated += 1;
                }
            } else {
                s.parser_rejected += 1;
                let mut rules: Vec<String> =
                    parser.violations.iter().map(|v| format!("{:?}", v.rule)).collect();
                rules.dedup();
                for r in rules {
                    *s.rejected_by.entry(r).or_default() += 1;
                }
                let parse_reject = parser.violations.iter().any(|v| {
                    matches!(
                        v.rule,
                        guard::rules::RuleId::MalformedDiff | guard::rules::RuleId::AmbiguousDiff
                    )
                });
                if case.mutations.is_empty() && parse_reject {
                    s.canonical_parse_rejects += 1;
                    if s.canonical_examples.len() < 3 {
                        s.canonical_examples.push(format!(
                            "{}\n  {}",
                            describe_verdict(&parser),
                            printf_bytes(&diff)
                        ));
                    }
                }
            }
            if with_repo.accepted() {
                s.repo_accepted += 1;
            }
            match &git {
                Oracle::Applied(_) => s.git_applied += 1,
                Oracle::Refused(_) => s.git_refused += 1,
            }
            s.agreed += u64::from(p1.0);
            s.base_refused += u64::from(p1.1);
            s.base_contradicted += u64::from(p1.2);
            if !problems.is_empty() {
                s.disagreements += 1;
            }
        }

        if problems.is_empty() {
            return Ok(());
        }
        let report = format!(
            "{}\n\nparser only: {}\nwith --repo: {}\ngit: {}\nbase tree: {:?}\ndiff:\n{}\n",
            problems.join("\n"),
            describe_verdict(&parser),
            describe_verdict(&with_repo),
            match &git {
                Oracle::Applied(effect) => format!("applied {}", show_changes(Some(effect))),
                Oracle::Refused(msg) => format!("refused: {}", msg.trim()),
            },
            base.tree
                .iter()
                .map(|(p, e)| format!("{:o} {}", e.mode, display_bytes(p)))
                .collect::<Vec<_>>(),
            printf_bytes(&diff)
        );
        dump_failure(base, &diff, &report);
        if ctx.keep_going {
            ctx.failures.borrow_mut().push((kinds.join(" / "), report));
            return Ok(());
        }
        *ctx.shrinking.borrow_mut() = true;
        Err(TestCaseError::fail(report))
    })
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

#[test]
fn guard_and_git_apply_agree() {
    let cases = env_number("DIFFERENTIAL_CASES")
        .or_else(|| env_number("PROPTEST_CASES"))
        .map_or(DEFAULT_CASES, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let seed = env_number("DIFFERENTIAL_SEED").unwrap_or(DEFAULT_SEED);
    let ctx = Ctx {
        seed,
        policy: Policy::embedded_default().unwrap(),
        bases: RefCell::new(HashMap::new()),
        stats: RefCell::new(Stats::default()),
        shrinking: RefCell::new(false),
        keep_going: std::env::var_os("DIFFERENTIAL_KEEP_GOING").is_some(),
        failures: RefCell::new(Vec::new()),
    };
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2048,
        max_shrink_time: 300_000,
        rng_algorithm: RngAlgorithm::ChaCha,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed, 0));
    let mut runner = TestRunner::new_with_rng(config, rng);
    let started = std::time::Instant::now();
    let result = runner.run(&case_strategy(), |case| run_case(&ctx, &case));

    let s = ctx.stats.borrow();
    eprintln!(
        "differential: seed {seed:#x}, {} cases ({} unmutated) in {:.1?}: parser-only accepted {} \
         ({} of them mutated; git's effect = file list {}, git refused for a base reason {}, \
         diff contradicts the base {}), rejected {}; with --repo accepted {}; git applied {}, \
         refused {}; disagreements {}",
        s.cases,
        s.unmutated,
        started.elapsed(),
        s.parser_accepted,
        s.parser_accepted_mutated,
        s.agreed,
        s.base_refused,
        s.base_contradicted,
        s.parser_rejected,
        s.repo_accepted,
        s.git_applied,
        s.git_refused,
        s.disagreements,
    );
    eprintln!(
        "differential: parser-only rejections by rule: {:?}",
        s.rejected_by
    );
    eprintln!(
        "differential: unmutated `git diff` output rejected as malformed/ambiguous: {}",
        s.canonical_parse_rejects
    );
    for e in &s.canonical_examples {
        eprintln!("  example: {e}");
    }
    let failures = ctx.failures.borrow();
    // Kept-going disagreements, grouped by kind; one example each.
    let mut kinds: BTreeMap<&String, (usize, &String)> = BTreeMap::new();
    for (kind, report) in failures.iter() {
        kinds.entry(kind).or_insert((0, report)).0 += 1;
    }
    for (key, (n, example)) in &kinds {
        eprintln!("differential: {n} x {key}\n--- first example:\n{example}");
    }
    match result {
        Ok(()) => assert!(
            failures.is_empty(),
            "{} disagreements between the guard and git (grouped above)",
            failures.len()
        ),
        Err(TestError::Fail(reason, case)) => {
            panic!("the guard and git disagree (minimal case {case:?}):\n{reason}")
        }
        Err(e) => panic!("{e}"),
    }
}
