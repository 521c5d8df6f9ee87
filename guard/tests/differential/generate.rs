//! Generated base repositories and honest changes to them, turned into canonical diffs by real
//! `git diff`. Shared with the pipeline differential (`gate/tests/pipeline_differential.rs`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use proptest::prelude::*;
use proptest::sample::Index;

pub const MODE_FILE: u32 = 0o100644;
pub const MODE_EXEC: u32 = 0o100755;
pub const MODE_LINK: u32 = 0o120000;

// ---------------------------------------------------------------------------------------------
// git, run with no ambient configuration (the shared test command: the library's own fixed
// environment, a fixed identity and date; stdin empty, stdout and stderr captured), which the
// including crate provides as `crate::git_support`. Only the command is shared: the oracle's
// reading of a patch stays its own.

pub use crate::git_support::git;

pub fn run(cmd: &mut Command, stdin: Option<&[u8]>) -> Output {
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

pub fn run_ok(cmd: &mut Command, stdin: Option<&[u8]>, what: &str) -> Vec<u8> {
    let out = run(cmd, stdin);
    assert!(
        out.status.success(),
        "git {what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub fn os(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

// ---------------------------------------------------------------------------------------------
// Trees: path -> (mode, data); a symlink's data is its target

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub mode: u32,
    pub data: Vec<u8>,
}

pub type Tree = BTreeMap<Vec<u8>, Entry>;

pub fn write_tree(tree: &Tree, dir: &Path) {
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

pub fn ancestors(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .map(move |(i, _)| &path[..i])
}

/// Whether `path` cannot be created in `tree`: it exists, lies beneath a file, or is a directory.
pub fn conflicts(tree: &Tree, path: &[u8]) -> bool {
    let mut dir = path.to_vec();
    dir.push(b'/');
    tree.contains_key(path)
        || ancestors(path).any(|a| tree.contains_key(a))
        || tree.keys().any(|k| k.starts_with(&dir))
}

// ---------------------------------------------------------------------------------------------
// Generated content

/// Lines that look like diff syntax, whitespace and encoding edge cases.
pub const TRICKY: &[&[u8]] = &[
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
pub enum Line {
    Unique(u16),
    Tricky(u8),
}

pub fn line_bytes(l: Line) -> Vec<u8> {
    match l {
        Line::Unique(n) => format!("line {n}").into_bytes(),
        Line::Tricky(i) => TRICKY[usize::from(i) % TRICKY.len()].to_vec(),
    }
}

pub fn line_strategy() -> impl Strategy<Value = Line> {
    prop_oneof![
        8 => any::<u16>().prop_map(Line::Unique),
        2 => (0..TRICKY.len() as u8).prop_map(Line::Tricky),
    ]
}

pub fn content(lines: &[Line], eol: bool) -> Vec<u8> {
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
pub enum Kind {
    File,
    Exec,
    Link(&'static [u8]),
    NoEol,
    Empty,
}

/// Always in the base.
pub const CORE: &[(&[u8], Kind)] = &[
    (b"README.md", Kind::File),
    (b"src/main.rs", Kind::File),
    (b"bin/run.sh", Kind::Exec),
    (b"link", Kind::Link(b"README.md")),
    (b"docs/with space.txt", Kind::File),
    ("docs/caf\u{e9}.md".as_bytes(), Kind::File),
    (b"noeol.txt", Kind::NoEol),
];

/// Some of these.
pub const OPTIONAL: &[(&[u8], Kind)] = &[
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
    (
        "\u{5e9}\u{5dc}\u{5d5}\u{5dd}/\u{263a}\u{fe0f}.txt".as_bytes(),
        Kind::File,
    ),
    (b"a/b/c/d/e.txt", Kind::File),
    (b"x b/y b/z.txt", Kind::File),
];

/// Names for created files, rename/copy targets and name mutations.
pub const NEW_NAMES: &[&[u8]] = &[
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
pub fn any_name(i: Index) -> Vec<u8> {
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
pub struct BaseSpec {
    pub optional: Vec<usize>,
    /// Per pool entry (CORE then OPTIONAL): lines, no final newline, executable.
    pub files: Vec<(Vec<Line>, bool, bool)>,
}

pub fn base_spec_strategy() -> impl Strategy<Value = BaseSpec> {
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

pub fn base_tree(spec: &BaseSpec) -> Tree {
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

pub struct BaseRepo {
    pub dir: tempfile::TempDir,
    pub commit: String,
    pub tree: Tree,
}

impl BaseRepo {
    pub fn build(tree: Tree) -> BaseRepo {
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

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A git command on this repository with a separate index (and optionally work tree).
    pub fn git_with_index(&self, index: &Path, work_tree: Option<&Path>) -> Command {
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
pub enum Edit {
    Replace(Index, Line),
    Insert(Index, Line),
    Delete(Index),
    ToggleEol,
}

#[derive(Debug, Clone)]
pub enum Op {
    Modify(Index, Vec<Edit>),
    Add(Index, Vec<Line>, u8),
    Delete(Index),
    Rename(Index, Index, Vec<Edit>),
    Copy(Index, Index, Vec<Edit>),
    Chmod(Index, Vec<Edit>),
    TypeChange(Index),
}

pub fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<Index>(), line_strategy()).prop_map(|(i, l)| Edit::Replace(i, l)),
        3 => (any::<Index>(), line_strategy()).prop_map(|(i, l)| Edit::Insert(i, l)),
        2 => any::<Index>().prop_map(Edit::Delete),
        1 => Just(Edit::ToggleEol),
    ]
}

pub fn op_strategy() -> impl Strategy<Value = Op> {
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

pub fn apply_edits(data: &[u8], edits: &[Edit]) -> Vec<u8> {
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

pub fn pick_key(tree: &Tree, i: &Index) -> Option<Vec<u8>> {
    if tree.is_empty() {
        return None;
    }
    tree.keys().nth(i.index(tree.len())).cloned()
}

pub fn edited(entry: &Entry, edits: &[Edit]) -> Entry {
    if entry.mode == MODE_LINK {
        return entry.clone();
    }
    Entry {
        mode: entry.mode,
        data: apply_edits(&entry.data, edits),
    }
}

/// The target tree; operations that cannot apply (a name conflict) are skipped.
pub fn apply_ops(base: &Tree, ops: &[Op]) -> Tree {
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
pub struct DiffOpts {
    /// 0 `--no-renames`, 1 `-M`, 2 `-C`, 3 `-C --find-copies-harder`.
    pub detect: u8,
    pub context: u8,
    pub full_index: bool,
    pub break_rewrites: bool,
}

pub fn diff_opts_strategy() -> impl Strategy<Value = DiffOpts> {
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
pub fn canonical_diff(base: &BaseRepo, target: &Tree, opts: &DiffOpts) -> Vec<u8> {
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
