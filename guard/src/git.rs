//! git's own reading of a diff, obtained without touching the worktree: the diff is applied with
//! `git apply --cached` to a throwaway index (`GIT_INDEX_FILE`) whose new objects go to a throwaway
//! object directory, and the result is read back with `git diff-index --raw -z --no-renames`.
//!
//! git runs with a fixed environment: no system or global configuration, no inherited `GIT_*`
//! variables, `C` locale, and the NTFS/HFS path protections on. Nothing here applies with libgit2,
//! which was measured writing through symlinks.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::diff::MODE_GITLINK;

/// How git failed to run at all (as opposed to git refusing the diff, which is a finding).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    #[error("could not run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("could not create a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    #[error("`git {command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("--repo {dir} is not a git repository (pass a checkout of the base commit): {stderr}")]
    NotARepository { dir: String, stderr: String },
    #[error(
        "--base `{}` does not name a commit in {dir}: pass the full id of the commit the diff was made against (`git rev-parse HEAD` where the diff was made){}",
        crate::escape::neutralize(.rev),
        if .stderr.is_empty() { String::new() } else { format!("; git: {}", .stderr) }
    )]
    UnknownBase {
        rev: String,
        dir: String,
        stderr: String,
    },
    #[error("unexpected output from `git {command}`")]
    BadOutput { command: String },
}

/// One entry of `git diff-index --raw -z --no-renames`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RawChange {
    pub status: char,
    pub old_mode: u32,
    pub new_mode: u32,
    pub path: Vec<u8>,
}

impl std::fmt::Display for RawChange {
    /// `M 100644->100755 path`, the path in display form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {:06o}->{:06o} {}",
            self.status,
            self.old_mode,
            self.new_mode,
            crate::escape::display_bytes(&self.path)
        )
    }
}

/// git settings for the throwaway index and objects, which live only as long as one check: loose
/// objects stored uncompressed, nothing flushed to disk, no checksum over the index file. What git
/// computes (object ids, the index entries, `diff-index`'s result) is unchanged: these choose how
/// bytes are stored, not which bytes.
pub const THROWAWAY_CONFIG: &[&str] = &[
    "core.looseCompression=0",
    "core.fsync=none",
    "index.skipHash=true",
];

/// git frees and re-grows its heap for every blob it writes (thousands of `brk` calls); a larger
/// trim threshold keeps the memory instead. Only glibc reads this (`GLIBC_TUNABLES`); elsewhere it
/// is ignored.
pub const THROWAWAY_MALLOC: &str =
    "glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=67108864";

/// One entry of a tree listing: its mode and object id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub mode: u32,
    pub oid: String,
}

/// 40 (SHA-1) or 64 (SHA-256) hex digits.
fn is_object_id(oid: &str) -> bool {
    (oid.len() == 40 || oid.len() == 64) && oid.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A repository checkout consulted read-only.
#[derive(Debug, Clone)]
pub struct GitRepo {
    dir: PathBuf,
    objects: PathBuf,
}

/// The one way this project runs git: `git -C dir` with a fixed environment. The environment is
/// cleared (no inherited `GIT_*` variable can redirect the repository, index, objects or
/// configuration) and only `PATH` (and Windows' `SYSTEMROOT`) kept; no system or global
/// configuration (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`, `HOME=/nonexistent`);
/// the `C` locale; no terminal prompt; pathspecs read literally; the NTFS/HFS path protections on
/// and paths quoted in output. stdin is empty and stdout and stderr are captured.
///
/// Callers add their subcommand and any variables of their own (a test adds a fixed identity and
/// date, the cross-check its throwaway index).
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.env_clear();
    for key in ["PATH", "SYSTEMROOT"] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.env("LC_ALL", "C")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("HOME", "/nonexistent")
        .arg("-c")
        .arg("core.protectNTFS=true")
        .arg("-c")
        .arg("core.protectHFS=true")
        .arg("-c")
        .arg("core.quotePath=true")
        .arg("-C")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn lossy(bytes: &[u8]) -> String {
    crate::escape::display_bytes(bytes.trim_ascii_end())
}

/// git's message as lines, each in display form ([`crate::escape::display_bytes`]) and joined with
/// `\n`: shown as lines, and no line can carry a terminal control or a line break of its own.
fn message_lines(bytes: &[u8]) -> String {
    bytes
        .trim_ascii_end()
        .split(|&b| b == b'\n')
        .map(|line| crate::escape::display_bytes(line.strip_suffix(b"\r").unwrap_or(line)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn run(mut cmd: Command, stdin: Option<&[u8]>) -> Result<std::process::Output, GitError> {
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn().map_err(GitError::Spawn)?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // Write from a thread so a large diff cannot deadlock against git's full stderr pipe.
        let input = input.to_vec();
        let writer = std::thread::spawn(move || pipe.write_all(&input));
        let out = child.wait_with_output().map_err(GitError::Spawn)?;
        // git may exit early (refusing the diff) and close its stdin: a broken pipe is not an error.
        let _ = writer.join();
        return Ok(out);
    }
    child.wait_with_output().map_err(GitError::Spawn)
}

fn failed(command: &str, out: &std::process::Output) -> GitError {
    GitError::Failed {
        command: command.to_string(),
        stderr: lossy(&out.stderr),
    }
}

/// `git rev-parse` of the repository's common directory, read by [`opened`].
fn open_command(dir: &Path) -> Command {
    let mut cmd = command(dir);
    cmd.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    cmd
}

fn opened(dir: &Path, out: &std::process::Output) -> Result<GitRepo, GitError> {
    if !out.status.success() {
        return Err(GitError::NotARepository {
            dir: dir.display().to_string(),
            stderr: lossy(&out.stderr),
        });
    }
    let common = String::from_utf8(out.stdout.trim_ascii_end().to_vec()).map_err(|_| {
        GitError::BadOutput {
            command: "rev-parse".into(),
        }
    })?;
    Ok(GitRepo {
        dir: dir.to_path_buf(),
        objects: PathBuf::from(common).join("objects"),
    })
}

/// `git rev-parse` of the commit `rev` names, read by [`resolved`].
fn resolve_command(dir: &Path, rev: &str) -> Command {
    let mut cmd = command(dir);
    cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"));
    cmd
}

fn resolved(dir: &Path, rev: &str, out: &std::process::Output) -> Result<String, GitError> {
    let id = String::from_utf8_lossy(out.stdout.trim_ascii_end()).to_string();
    if !out.status.success() || id.is_empty() {
        return Err(GitError::UnknownBase {
            rev: rev.to_string(),
            dir: dir.display().to_string(),
            stderr: lossy(&out.stderr),
        });
    }
    Ok(id)
}

/// One workflow file of a commit: its path (display form) and its bytes, or why it cannot be read
/// as a regular file.
pub type WorkflowEntry = (String, Result<Vec<u8>, String>);

impl GitRepo {
    /// Open the repository at `dir` (its worktree or bare directory).
    pub fn open(dir: &Path) -> Result<GitRepo, GitError> {
        let out = run(open_command(dir), None)?;
        opened(dir, &out)
    }

    /// Open the repository at `dir` and resolve `rev` to the full id of the commit it names: the
    /// two `git rev-parse` run at once, and their answers are read as [`GitRepo::open`] and
    /// [`GitRepo::resolve_commit`] read them (a directory that is no repository is reported as
    /// such first).
    pub fn open_resolved(dir: &Path, rev: &str) -> Result<(GitRepo, String), GitError> {
        let opening = open_command(dir).spawn().map_err(GitError::Spawn);
        let resolving = resolve_command(dir, rev).spawn().map_err(GitError::Spawn);
        // Both children are waited for before either answer is read.
        let opened_out = opening.and_then(|c| c.wait_with_output().map_err(GitError::Spawn));
        let resolved_out = resolving.and_then(|c| c.wait_with_output().map_err(GitError::Spawn));
        let repo = opened(dir, &opened_out?)?;
        let commit = resolved(dir, rev, &resolved_out?)?;
        Ok((repo, commit))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self) -> Command {
        command(&self.dir)
    }

    /// The full commit id `rev` names.
    pub fn resolve_commit(&self, rev: &str) -> Result<String, GitError> {
        let out = run(resolve_command(&self.dir, rev), None)?;
        resolved(&self.dir, rev, &out)
    }

    /// Every entry of the commit's tree, trees included, as path → mode.
    pub fn tree_modes(&self, commit: &str) -> Result<HashMap<Vec<u8>, u32>, GitError> {
        Ok(self
            .tree_entries(commit)?
            .into_iter()
            .map(|(path, entry)| (path, entry.mode))
            .collect())
    }

    /// Every entry of the commit's tree, trees included, with its mode and object id, in git's
    /// order (a tree before the entries beneath it).
    pub fn tree_entries(&self, commit: &str) -> Result<Vec<(Vec<u8>, TreeEntry)>, GitError> {
        let mut cmd = self.command();
        cmd.args([
            "ls-tree",
            "-r",
            "-t",
            "-z",
            "--full-tree",
            "--end-of-options",
            commit,
        ]);
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("ls-tree", &out));
        }
        let mut entries = Vec::new();
        for record in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            // "<mode> SP <type> SP <object> TAB <path>"
            let bad = || GitError::BadOutput {
                command: "ls-tree".into(),
            };
            let tab = record.iter().position(|&b| b == b'\t').ok_or_else(bad)?;
            let mut fields = record[..tab].split(|&b| b == b' ');
            let mode = fields.next().and_then(parse_octal).ok_or_else(bad)?;
            let oid = fields
                .nth(1)
                .and_then(|o| String::from_utf8(o.to_vec()).ok())
                .filter(|o| is_object_id(o))
                .ok_or_else(bad)?;
            entries.push((record[tab + 1..].to_vec(), TreeEntry { mode, oid }));
        }
        Ok(entries)
    }

    /// The contents of the blobs `oids`, in order, read by one `git cat-file --batch`.
    pub fn blobs(&self, oids: &[&str]) -> Result<Vec<Vec<u8>>, GitError> {
        Ok(read_blobs(self.command(), oids)?.to_vecs())
    }

    /// The workflow files of `commit`: the `*.yml` and `*.yaml` entries directly in
    /// `.github/workflows/` (GitHub reads no subdirectory), read from git's objects, in path
    /// order. An entry that is not a regular file (a symlink, a gitlink) is returned with the
    /// error that it cannot be read as one.
    pub fn workflow_files(&self, commit: &str) -> Result<Vec<WorkflowEntry>, GitError> {
        let mut cmd = self.command();
        cmd.args(["ls-tree", "-z", "--full-tree", "--end-of-options", commit])
            .arg("--")
            .arg(".github/workflows/");
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("ls-tree", &out));
        }
        let bad = || GitError::BadOutput {
            command: "ls-tree".into(),
        };
        let mut files = Vec::new();
        for record in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            // "<mode> SP <type> SP <object> TAB <path>"
            let tab = record.iter().position(|&b| b == b'\t').ok_or_else(bad)?;
            let head =
                std::str::from_utf8(record.get(..tab).ok_or_else(bad)?).map_err(|_| bad())?;
            let path = record.get(tab + 1..).ok_or_else(bad)?;
            let mut fields = head.split(' ');
            let (Some(mode), Some(kind), Some(oid)) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(bad());
            };
            let lower = path.to_ascii_lowercase();
            if !(lower.ends_with(b".yml") || lower.ends_with(b".yaml")) {
                continue;
            }
            let shown = crate::escape::display_bytes(path);
            let content = if kind == "blob" && (mode == "100644" || mode == "100755") {
                let mut cat = self.command();
                cat.args(["cat-file", "blob", oid]);
                let out = run(cat, None)?;
                if !out.status.success() {
                    return Err(failed("cat-file", &out));
                }
                Ok(out.stdout)
            } else {
                Err(format!("not a regular file (mode {mode}, {kind})"))
            };
            files.push((shown, content));
        }
        Ok(files)
    }

    /// A throwaway index (and object directory) holding `commit`'s tree.
    pub fn throwaway_index(&self, commit: &str) -> Result<ThrowawayIndex, GitError> {
        let scratch = Scratch::new()?;
        self.read_tree(&scratch, commit)?;
        Ok(self.index_in(scratch, commit))
    }

    /// A throwaway index holding `commit`'s tree, with `diff` staged beside it for
    /// [`StagedIndex::apply`] (written while `git read-tree` runs).
    pub fn staged_index(&self, commit: &str, diff: &[u8]) -> Result<StagedIndex, GitError> {
        let scratch = Scratch::new()?;
        let (read, staged) = std::thread::scope(|s| {
            let staging = s.spawn(|| scratch.stage(diff));
            let read = self.read_tree(&scratch, commit);
            (read, staging.join())
        });
        read?;
        staged
            .map_err(|_| GitError::TempDir(std::io::Error::other("the staging thread failed")))??;
        Ok(self.staged_in(scratch, commit))
    }

    /// `git read-tree` of `commit` into the index of `scratch`.
    pub fn read_tree(&self, scratch: &Scratch, commit: &str) -> Result<(), GitError> {
        let mut cmd = throwaway_command(self, scratch);
        cmd.args(["read-tree", "--end-of-options", commit]);
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("read-tree", &out));
        }
        Ok(())
    }

    /// The throwaway index of `scratch`, which [`GitRepo::read_tree`] filled with `commit`'s tree.
    pub fn index_in(&self, scratch: Scratch, commit: &str) -> ThrowawayIndex {
        ThrowawayIndex {
            repo: self.clone(),
            commit: commit.to_string(),
            tmp: scratch,
        }
    }

    /// Like [`GitRepo::index_in`], for a scratch directory where [`Scratch::stage`] wrote the diff.
    pub fn staged_in(&self, scratch: Scratch, commit: &str) -> StagedIndex {
        StagedIndex {
            index: self.index_in(scratch, commit),
        }
    }

    /// Apply `diff` to a throwaway index holding `commit`'s tree. The worktree, the real index and
    /// the repository's object store are left untouched.
    pub fn apply_cached(&self, commit: &str, diff: &[u8]) -> Result<Applied, GitError> {
        self.staged_index(commit, diff)?.apply()
    }
}

/// The private directory (0700) of one throwaway index: the index file, the object directory git
/// writes new objects to, and the diff staged for git. Thousands of small loose objects are
/// written there; on a memory file system (`/dev/shm`, when there is one) that costs a fraction of
/// what it costs on a journaling disk. Removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    tmp: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Result<Scratch, GitError> {
        let builder = || {
            let mut b = tempfile::Builder::new();
            b.prefix("guard-index-");
            b
        };
        let shm = Path::new("/dev/shm");
        let tmp = match shm.is_dir().then(|| builder().tempdir_in(shm)) {
            Some(Ok(dir)) => dir,
            _ => builder().tempdir().map_err(GitError::TempDir)?,
        };
        let scratch = Scratch { tmp };
        std::fs::create_dir_all(scratch.objects()).map_err(GitError::TempDir)?;
        Ok(scratch)
    }

    /// Write the diff where [`StagedIndex::apply`] has git read it: git reads a file in a few large
    /// reads, where a pipe costs a round trip per 64 KiB. Callers stage only bytes whose hash
    /// was checked; the directory is private, so nothing else can change them before git reads.
    pub fn stage(&self, diff: &[u8]) -> Result<(), GitError> {
        std::fs::write(self.patch(), diff).map_err(GitError::TempDir)
    }

    fn patch(&self) -> PathBuf {
        self.tmp.path().join("candidate.diff")
    }

    fn index(&self) -> PathBuf {
        self.tmp.path().join("index")
    }

    fn objects(&self) -> PathBuf {
        self.tmp.path().join("objects")
    }
}

/// A git command on the throwaway index and object directory of `scratch`.
fn throwaway_command(repo: &GitRepo, scratch: &Scratch) -> Command {
    let mut cmd = repo.command();
    // The inherited environment was cleared, so the repository's own objects are the only
    // alternate; objects git writes while applying land in the temporary directory.
    let alternates = OsString::from(repo.objects.as_os_str());
    cmd.env("GIT_INDEX_FILE", scratch.index())
        .env("GIT_OBJECT_DIRECTORY", scratch.objects())
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", alternates);
    for setting in THROWAWAY_CONFIG {
        cmd.arg("-c").arg(setting);
    }
    cmd.env("GLIBC_TUNABLES", THROWAWAY_MALLOC);
    cmd
}

/// A throwaway index with the diff to apply to it staged in its private directory.
#[derive(Debug)]
pub struct StagedIndex {
    index: ThrowawayIndex,
}

impl StagedIndex {
    /// Apply the staged diff to the index with `git apply --cached`; its new objects go to the
    /// throwaway object directory.
    pub fn apply(self) -> Result<Applied, GitError> {
        let index = self.index;
        let patch = index.tmp.patch();
        let mut cmd = index.command();
        cmd.args(["-c", "apply.whitespace=nowarn", "apply", "--cached", "--"])
            .arg(&patch);
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Ok(Applied::Refused(message_lines(&out.stderr)));
        }
        Ok(Applied::Applied(index))
    }
}

impl GitRepo {
    /// A git command that reads or writes the worktree. On top of the fixed environment, the
    /// repository's own configuration is overridden where it could run a program or let git skip
    /// looking at a file: no fsmonitor, no untracked cache, no sparse checkout, and file modes and
    /// symbolic links taken from the file system as they are.
    fn worktree_command(&self) -> Command {
        let mut cmd = self.command();
        add_worktree_config(&mut cmd);
        cmd
    }

    /// The top level of the worktree `dir` belongs to (absolute).
    pub fn toplevel(&self) -> Result<PathBuf, GitError> {
        let mut cmd = self.command();
        cmd.args(["rev-parse", "--show-toplevel"]);
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("rev-parse --show-toplevel", &out));
        }
        let top = String::from_utf8(out.stdout.trim_ascii_end().to_vec()).map_err(|_| {
            GitError::BadOutput {
                command: "rev-parse --show-toplevel".into(),
            }
        })?;
        if top.is_empty() {
            return Err(GitError::BadOutput {
                command: "rev-parse --show-toplevel".into(),
            });
        }
        Ok(PathBuf::from(top))
    }

    /// Every entry `git status --porcelain=v2 -z --untracked-files=all --ignored` reports:
    /// changed, unmerged, untracked and ignored paths alike, each as its path bytes.
    pub fn status_entries(&self) -> Result<Vec<StatusEntry>, GitError> {
        let mut cmd = self.worktree_command();
        cmd.args([
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=all",
            "--ignored",
            "--no-renames",
        ]);
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("status", &out));
        }
        parse_status(&out.stdout).ok_or(GitError::BadOutput {
            command: "status".into(),
        })
    }

    /// Apply `diff` to the worktree with `git apply` (the index is not touched). git applies all
    /// or nothing; `Ok(Err(message))` is git's refusal.
    pub fn apply_to_worktree(&self, diff: &[u8]) -> Result<Result<(), String>, GitError> {
        let mut cmd = self.worktree_command();
        cmd.args(["-c", "apply.whitespace=nowarn", "apply", "-"]);
        let out = run(cmd, Some(diff))?;
        if out.status.success() {
            Ok(Ok(()))
        } else {
            Ok(Err(lossy(&out.stderr)))
        }
    }

    /// What the worktree, as it is on disk, differs in from `commit`: every file is staged into a
    /// throwaway index holding `commit`'s tree with `git add --all --force` (ignored files count),
    /// and the index is compared with `commit`, renames not detected. The real index and the
    /// repository's object store are not touched. git does not see what it cannot stage (nested
    /// `.git` directories, sockets, FIFOs): a walk of the file system has to cover those.
    pub fn worktree_changes(&self, commit: &str) -> Result<Vec<RawChange>, GitError> {
        let index = self.throwaway_index(commit)?;
        let mut cmd = index.command();
        add_worktree_config(&mut cmd);
        cmd.args(["add", "--all", "--force"]);
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("add --all --force", &out));
        }
        index.changes()
    }
}

fn add_worktree_config(cmd: &mut Command) {
    for setting in [
        "core.fsmonitor=false",
        "core.untrackedCache=false",
        "core.sparseCheckout=false",
        "core.fileMode=true",
        "core.symlinks=true",
        "core.ignoreCase=false",
    ] {
        cmd.arg("-c").arg(setting);
    }
}

/// One record of `git status --porcelain=v2 -z`: its kind (`1` changed, `2` renamed or copied,
/// `u` unmerged, `?` untracked, `!` ignored) and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEntry {
    pub kind: char,
    pub path: Vec<u8>,
}

/// Records are NUL-terminated; `1`, `2` and `u` records carry 8, 9 and 10 space-separated fields
/// before the path, and a `2` record is followed by one more NUL-terminated field (the source).
fn parse_status(out: &[u8]) -> Option<Vec<StatusEntry>> {
    let mut entries = Vec::new();
    let mut fields = out.split(|&b| b == 0);
    while let Some(record) = fields.next() {
        if record.is_empty() {
            continue;
        }
        let kind = char::from(*record.first()?);
        let skip = match kind {
            '?' | '!' => 1,
            '1' => 8,
            '2' => 9,
            'u' => 10,
            // Headers (`# branch.*`) are only printed with --branch.
            _ => return None,
        };
        let path = record.splitn(skip + 1, |&b| b == b' ').nth(skip)?.to_vec();
        if kind == '2' {
            fields.next()?;
        }
        entries.push(StatusEntry { kind, path });
    }
    Some(entries)
}

/// The outcome of `git apply --cached` on a throwaway index.
#[derive(Debug)]
pub enum Applied {
    /// git refused the diff; its message, one line per line git wrote.
    Refused(String),
    Applied(ThrowawayIndex),
}

/// A temporary index (and object directory) holding the base tree with the diff applied.
#[derive(Debug)]
pub struct ThrowawayIndex {
    repo: GitRepo,
    commit: String,
    tmp: Scratch,
}

impl ThrowawayIndex {
    fn command(&self) -> Command {
        throwaway_command(&self.repo, &self.tmp)
    }

    /// Remove the objects git wrote while applying, keeping the (then empty) object directory:
    /// for a caller that reads only [`ThrowawayIndex::changes`], which compares index entries with
    /// the base tree by id and reads no new object. Run beside `git diff-index`, so the removal of
    /// thousands of files is not a step of its own. Once called, the new contents cannot be read.
    pub fn discard_objects(&self) -> std::io::Result<()> {
        for entry in std::fs::read_dir(self.tmp.objects())? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(entry.path())?;
            } else {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(())
    }

    /// What the index now differs in from the base commit, renames not detected.
    pub fn changes(&self) -> Result<Vec<RawChange>, GitError> {
        Ok(self
            .changes_with_ids()?
            .into_iter()
            .map(|(change, _)| change)
            .collect())
    }

    /// Like [`ThrowawayIndex::changes`], each with the object id of the new content (all zeros
    /// for a deletion). Contents must be read by this id: a `:<path>` lookup would read
    /// `0:name` as stage 0 of `name`.
    pub fn changes_with_ids(&self) -> Result<Vec<(RawChange, String)>, GitError> {
        self.changes_from(&self.commit)
    }

    /// What the index differs in from `commit`, another commit of the repository (a revision's
    /// merge base with the base branch: what the whole branch changes), renames not detected.
    pub fn changes_since(&self, commit: &str) -> Result<Vec<RawChange>, GitError> {
        Ok(self
            .changes_from(commit)?
            .into_iter()
            .map(|(change, _)| change)
            .collect())
    }

    fn changes_from(&self, commit: &str) -> Result<Vec<(RawChange, String)>, GitError> {
        let mut cmd = self.command();
        cmd.args([
            "diff-index",
            "--cached",
            "--raw",
            "-z",
            "--no-renames",
            "--no-abbrev",
            "--end-of-options",
        ])
        .arg(commit);
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("diff-index", &out));
        }
        parse_raw(&out.stdout).ok_or(GitError::BadOutput {
            command: "diff-index".into(),
        })
    }

    /// `git write-tree` of the index: the id of the tree git itself makes of the base with the
    /// diff applied (its objects go to the throwaway object directory).
    pub fn write_tree(&self) -> Result<String, GitError> {
        let mut cmd = self.command();
        cmd.arg("write-tree");
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("write-tree", &out));
        }
        object_id(&out.stdout, "write-tree")
    }

    /// The id of the base commit's tree (`<commit>^{tree}`).
    pub fn base_tree(&self) -> Result<String, GitError> {
        let mut cmd = self.command();
        cmd.args(["rev-parse", "--verify", "--end-of-options"])
            .arg(format!("{}^{{tree}}", self.commit));
        let out = run(cmd, None)?;
        if !out.status.success() {
            return Err(failed("rev-parse", &out));
        }
        object_id(&out.stdout, "rev-parse")
    }

    /// The contents of the blobs `oids` (40 or 64 hex digits each), in order, from the throwaway
    /// or the base objects, read by one `git cat-file --batch` for all of them.
    pub fn blobs(&self, oids: &[&str]) -> Result<BlobBatch, GitError> {
        read_blobs(self.command(), oids)
    }
}

/// The contents of several blobs, read by one `git cat-file --batch`: git's output kept whole,
/// each blob a span of it.
#[derive(Debug, Default)]
pub struct BlobBatch {
    bytes: Vec<u8>,
    spans: Vec<std::ops::Range<usize>>,
}

impl BlobBatch {
    /// The number of blobs.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the batch holds no blob.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The content of the `i`-th blob requested, if there is one.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        self.spans
            .get(i)
            .and_then(|span| self.bytes.get(span.clone()))
    }

    fn to_vecs(&self) -> Vec<Vec<u8>> {
        (0..self.len())
            .filter_map(|i| self.get(i).map(<[u8]>::to_vec))
            .collect()
    }
}

/// `git cat-file --batch` of `oids` (each 40 or 64 hex digits), run by `cmd`. Strict: every
/// record must be `<oid> SP blob SP <size> LF <contents> LF` for the id asked, in order, and
/// nothing may follow the last; a `missing` line, another type, a short read or trailing output
/// is an error.
fn read_blobs(mut cmd: Command, oids: &[&str]) -> Result<BlobBatch, GitError> {
    if oids.is_empty() {
        return Ok(BlobBatch::default());
    }
    let bad = || GitError::BadOutput {
        command: "cat-file --batch".into(),
    };
    let mut input = Vec::with_capacity(oids.len() * 65);
    for oid in oids {
        if !is_object_id(oid) {
            return Err(bad());
        }
        input.extend_from_slice(oid.as_bytes());
        input.push(b'\n');
    }
    cmd.args(["cat-file", "--batch"]);
    let out = run(cmd, Some(&input))?;
    if !out.status.success() {
        return Err(failed("cat-file --batch", &out));
    }
    let spans = batch_spans(&out.stdout, oids).ok_or_else(bad)?;
    Ok(BlobBatch {
        bytes: out.stdout,
        spans,
    })
}

/// The span of each blob's contents in `cat-file --batch` output, or `None` if the output is not
/// exactly one blob record for each of `oids`, in order.
fn batch_spans(out: &[u8], oids: &[&str]) -> Option<Vec<std::ops::Range<usize>>> {
    let mut at = 0usize;
    let mut spans = Vec::with_capacity(oids.len());
    for oid in oids {
        let rest = out.get(at..)?;
        let newline = rest.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(rest.get(..newline)?).ok()?;
        let mut fields = header.split(' ');
        let (Some(got), Some("blob"), Some(size), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return None;
        };
        if got != *oid || size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let size: usize = size.parse().ok()?;
        let start = at.checked_add(newline)?.checked_add(1)?;
        let end = start.checked_add(size)?;
        if out.get(end) != Some(&b'\n') {
            return None;
        }
        spans.push(start..end);
        at = end + 1;
    }
    (at == out.len()).then_some(spans)
}

/// One object id (40 or 64 lower-case hex digits) and a newline, as git prints it.
fn object_id(stdout: &[u8], command: &str) -> Result<String, GitError> {
    let id = stdout.strip_suffix(b"\n").unwrap_or(stdout);
    let valid = (id.len() == 40 || id.len() == 64)
        && id.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !valid {
        return Err(GitError::BadOutput {
            command: command.to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(id).into_owned())
}

fn parse_octal(text: &[u8]) -> Option<u32> {
    if text.is_empty() || text.len() > 7 {
        return None;
    }
    text.iter().try_fold(0u32, |acc, &b| {
        if (b'0'..=b'7').contains(&b) {
            Some(acc * 8 + u32::from(b - b'0'))
        } else {
            None
        }
    })
}

/// `:<old mode> <new mode> <old id> <new id> <status>\0<path>\0` records.
fn parse_raw(out: &[u8]) -> Option<Vec<(RawChange, String)>> {
    let mut changes = Vec::new();
    let mut fields = out.split(|&b| b == 0);
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            break;
        }
        let meta = meta.strip_prefix(b":")?;
        let parts: Vec<&[u8]> = meta.split(|&b| b == b' ').collect();
        let [old_mode, new_mode, _, new_oid, status] = parts.as_slice() else {
            return None;
        };
        let path = fields.next()?.to_vec();
        let status = match *status {
            b"A" => 'A',
            b"D" => 'D',
            b"M" => 'M',
            b"T" => 'T',
            _ => return None,
        };
        let change = RawChange {
            status,
            old_mode: parse_octal(old_mode)?,
            new_mode: parse_octal(new_mode)?,
            path,
        };
        changes.push((change, String::from_utf8(new_oid.to_vec()).ok()?));
    }
    Some(changes)
}

/// Whether `mode` is a gitlink or a symlink: a path beneath one escapes the tree.
pub fn is_link(mode: u32) -> bool {
    mode == crate::diff::MODE_SYMLINK || mode == MODE_GITLINK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_output_is_read_strictly() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let oids = [a.as_str(), b.as_str()];
        let good = format!("{a} blob 3\nx\ny\n{b} blob 0\n\n");
        let spans = batch_spans(good.as_bytes(), &oids);
        assert_eq!(
            spans,
            Some(vec![41 + 7..41 + 10, 41 + 11 + 48..41 + 11 + 48])
        );
        let invalid = [
            format!("{a} blob 3\nx\ny\n{b} missing\n"),
            format!("{a} blob 3\nx\ny\n"),
            format!("{a} blob 3\nx\ny\n{b} blob 2\nz\n"),
            format!("{a} blob 3\nx\ny\n{b} blob 1\nzz"),
            format!("{a} blob 3\nx\ny\n{b} tree 0\n\n"),
            format!("{b} blob 3\nx\ny\n{a} blob 0\n\n"),
            format!("{a} blob +3\nx\ny\n{b} blob 0\n\n"),
            format!("{a} blob 3\nx\ny\n{b} blob 0\n\nextra"),
            format!("{a} blob 3 x\nx\ny\n{b} blob 0\n\n"),
        ];
        for out in &invalid {
            assert_eq!(batch_spans(out.as_bytes(), &oids), None, "{out:?}");
        }
    }

    #[test]
    fn parses_raw_records() {
        let out = b":100644 100755 aaaa bbbb M\0src/a b\0:000000 120000 0000 cccc A\0l\0";
        let changes: Vec<RawChange> = parse_raw(out)
            .unwrap_or_default()
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        assert_eq!(changes.len(), 2);
        assert_eq!(
            changes[0],
            RawChange {
                status: 'M',
                old_mode: 0o100644,
                new_mode: 0o100755,
                path: b"src/a b".to_vec()
            }
        );
        assert_eq!(changes[1].new_mode, 0o120000);
        assert_eq!(parse_raw(b":100644 X\0p\0"), None);
    }

    #[test]
    fn parses_status_records() {
        let out = b"1 .M N... 100644 100644 100644 aaaa bbbb src/a b.rs\0\
2 R. N... 100644 100644 100644 aaaa bbbb R100 new\0old\0\
? un tracked\0! target/\0";
        let entries = parse_status(out).unwrap_or_default();
        let shown: Vec<(char, &[u8])> = entries.iter().map(|e| (e.kind, &e.path[..])).collect();
        assert_eq!(
            shown,
            [
                ('1', &b"src/a b.rs"[..]),
                ('2', &b"new"[..]),
                ('?', &b"un tracked"[..]),
                ('!', &b"target/"[..])
            ]
        );
        assert_eq!(parse_status(b"# branch.oid x\0"), None);
        assert_eq!(parse_status(b""), Some(Vec::new()));
    }
}
