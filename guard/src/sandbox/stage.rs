//! The inner stages, run by the guard binary itself (`guard __sandbox-stage`) inside the namespaces
//! that `unshare` created. They only return on failure: on success the last one execs the command.
//!
//! - **setup** (pid 1 of the new pid namespace, root of the first user namespace, which maps only
//!   the build user): loopback up, nested user namespaces limited, the planned view
//!   ([`super::view`]) built on an empty root under `/newroot`, the host sockets still visible in
//!   it masked, pivoted into, then `unshare --user --mount` into the second user namespace;
//! - **enter** (the build user in the second user namespace, no capability): resource limits,
//!   `no_new_privs`, Landlock, the proof, the announcement, `exec`.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::mount::{MntFlags, MsFlags};
use serde::{Deserialize, Serialize};

pub use super::cgroup::CgroupPlan;

use super::capture::MARKER;
use super::env::XDG_DIRS;
use super::mounts::{self, MountEntry};
use super::probe::{self, NetworkProbe};
use super::proof::{
    self, Capabilities, ContainmentProbe, Expectations, HomeProof, LandlockProof, MemoryProof,
    RlimitProof, SeccompProof,
};
use super::seccomp;
use super::view::{self, Role, Source, ViewEntry};

/// The hidden subcommand that runs a stage.
pub const STAGE_SUBCOMMAND: &str = "__sandbox-stage";

/// Where the setup stage assembles the command's view before pivoting into it.
const NEWROOT: &str = "/newroot";
/// Where the host's tree sits, in the scratch root, while the view is assembled.
const OLDROOT: &str = "/oldroot";
/// Sizes of the fresh writable tmpfs, together [`TMPFS_BUDGET`] with the 1 MiB ones (the root,
/// `/dev`, every hidden directory): their pages are memory, and without a control group nothing
/// else bounds them as a whole. `/tmp` holds the build's `HOME` (its caches) too.
const TMP_SIZE: &str = "size=3g";
const SMALL_SCRATCH_SIZE: &str = "size=512m";
/// What the writable tmpfs of the view may hold together, in bytes (3 GiB + 512 MiB + 512 MiB).
pub const TMPFS_BUDGET: u64 = 4 << 30;
/// Device nodes bound into the fresh `/dev`.
/// No `tty`: the command has no controlling terminal, and nothing may open the launcher's.
pub const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];
/// `/proc` entries covered with `/dev/null` (Docker's masked paths that list what other users
/// of the kernel hold): the kernel's keys and key quotas of every uid.
const PROC_MASKED: &[&str] = &["keys", "key-users"];
/// `/proc` entries made read-only over the fresh proc (as bubblewrap does).
const PROC_READ_ONLY: &[&str] = &["sys", "sysrq-trigger", "irq", "bus"];
/// Where, in the scratch root (never in the view), the empty file that masks host sockets is
/// made: a tmpfs of its own, read-only once the file exists, detached with the scratch root.
const SOCKET_MASK_DIR: &str = "/socket-mask";

/// The resource limits of the command (lowered, never raised).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub processes: u64,
    /// `RLIMIT_DATA` in bytes: heap and private writable mappings (address-space reservations,
    /// which JavaScript engines make by the gigabyte, are not counted).
    pub data_bytes: u64,
    pub file_bytes: u64,
    pub open_files: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            processes: 4096,
            data_bytes: 16 << 30,
            file_bytes: 8 << 30,
            open_files: 8192,
        }
    }
}

/// Everything the stages need, decided by the outer (trusted) process and passed as JSON on the
/// stages' command line. Paths are canonical host paths, and the same paths in the final view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagePlan {
    /// Random; prefixes the announcements so that no other text can pass for one.
    pub nonce: String,
    /// `readlink /proc/self/ns/{net,user,pid,mnt}` of the outer process.
    pub outer_netns: String,
    pub outer_userns: String,
    pub outer_pidns: String,
    pub outer_mntns: String,
    pub guard_exe: PathBuf,
    pub unshare: PathBuf,
    pub ip: Option<PathBuf>,
    /// The command's ids (host ids, shown unchanged inside); never 0.
    pub build_uid: u32,
    pub build_gid: u32,
    /// The command's working directory.
    pub cwd: PathBuf,
    /// The command's fresh `HOME`, created in the fresh `/tmp`, the build user's alone.
    pub home: PathBuf,
    /// `<repo>/.git`, bound read-only over the writable worktree.
    pub git_dir: Option<PathBuf>,
    /// Bound writable: the worktree (or working directory) and declared build outputs.
    pub writable: Vec<PathBuf>,
    /// Bound read-only: toolchains, the dependency cache, the guard binary itself.
    pub read_only: Vec<PathBuf>,
    /// Fresh writable tmpfs: `/tmp`, `/var/tmp`.
    pub scratch: Vec<PathBuf>,
    /// Fresh empty read-only tmpfs over directories inside the read-only binds: the runner's
    /// directories, `--hide`, directories of nothing but sockets.
    pub hidden: Vec<PathBuf>,
    /// The whole view, as the setup stage builds it and the enter stage proves it.
    pub view: Vec<ViewEntry>,
    /// The outer process (pid as the host's `/proc` shows it, and its start time): the setup
    /// stage reads the host's socket table again through `/proc/<pid>/net/unix`.
    pub outer_pid: u32,
    pub outer_start_time: u64,
    /// Pathname sockets bound on the host, read in the outer network namespace; the setup stage
    /// adds those its own reading finds, just before it masks them.
    pub host_sockets: Vec<PathBuf>,
    /// Set by the setup stage: the host sockets it covered with an empty read-only file, where
    /// in the view each mask is mounted (the socket's name resolved), and how many host sockets
    /// are bound under a relative name (not locatable).
    pub masked_sockets: Vec<PathBuf>,
    pub mask_points: Vec<PathBuf>,
    pub unlocated_sockets: u64,
    /// The setup stage runs as real root in the initial user namespace (the guard was started
    /// as root): it can reach every bind source (a toolchain in root's `0700` home), and leaves
    /// root through `setpriv` into the limit stage. Otherwise it runs as root of a first user
    /// namespace mapped to the build user.
    pub privileged_setup: bool,
    pub setpriv: Option<PathBuf>,
    pub limits: Limits,
    /// Whether the sandbox has a network namespace of its own (without one only under
    /// `--no-isolation-because`; the proof then skips its network part).
    pub network_namespace: bool,
    /// Test hook `no-landlock`: the enter stage skips Landlock, and its proof refuses.
    pub without_landlock: bool,
    /// Test hook: the highest Landlock ABI the proof credits the kernel with (the ruleset is
    /// the same whatever it says: it can only make the guard believe in fewer layers).
    pub landlock_abi_at_most: Option<u32>,
    /// The build's control group, made by the outer process, or why there is none.
    pub cgroup: Option<CgroupPlan>,
    pub cgroup_unavailable: Option<String>,
}

impl StagePlan {
    /// The arguments of the guard binary that run this plan as `stage`.
    pub fn to_args(&self, stage: &str, command: &[OsString]) -> Result<Vec<OsString>, String> {
        let json = serde_json::to_string(self).map_err(|e| format!("encode the plan: {e}"))?;
        let mut args: Vec<OsString> = vec![
            STAGE_SUBCOMMAND.into(),
            "--stage".into(),
            stage.into(),
            "--plan".into(),
            json.into(),
            "--".into(),
        ];
        args.extend(command.iter().cloned());
        Ok(args)
    }

    /// The mount points that may be writable in the final view.
    pub fn writable_allowed(&self) -> BTreeSet<PathBuf> {
        let mut allowed: BTreeSet<PathBuf> = self.writable.iter().cloned().collect();
        allowed.extend(self.scratch.iter().cloned());
        allowed.insert(PathBuf::from("/proc"));
        allowed.insert(PathBuf::from("/dev/shm"));
        allowed.insert(PathBuf::from("/dev/pts"));
        allowed.extend(DEVICES.iter().map(|d| Path::new("/dev").join(d)));
        allowed
    }

    pub fn expectations<'a>(
        &'a self,
        allowed: &'a BTreeSet<PathBuf>,
        home_entries: &'a [String],
    ) -> Expectations<'a> {
        Expectations {
            outer_netns: &self.outer_netns,
            outer_userns: &self.outer_userns,
            outer_pidns: &self.outer_pidns,
            outer_mntns: &self.outer_mntns,
            writable_allowed: allowed,
            build_uid: self.build_uid,
            build_gid: self.build_gid,
            home_entries,
            git_dir: self.git_dir.is_some(),
            network_namespace: self.network_namespace,
            cgroup: self.cgroup.as_ref(),
        }
    }

    /// Bind targets, for telling mount points from leftovers in hidden directories.
    fn bind_targets(&self) -> Vec<PathBuf> {
        let mut binds: Vec<PathBuf> = self.writable.clone();
        binds.extend(self.read_only.iter().cloned());
        binds
    }
}

enum Failure {
    /// Isolation could not be established or verified; the command was not started.
    Refuse(String),
    /// The command was announced but could not be executed.
    Exec(io::Error),
}

fn refuse(context: &str) -> impl FnOnce(nix::Error) -> Failure + '_ {
    move |e| Failure::Refuse(format!("{context}: {e}"))
}

fn refuse_io(context: &str) -> impl FnOnce(io::Error) -> Failure + '_ {
    move |e| Failure::Refuse(format!("{context}: {e}"))
}

/// Runs the stage; returns the process exit code only when it could not exec (2 when it refused,
/// 126/127 when the command itself could not be executed, as a shell would).
pub fn run_stage(stage: &str, plan: &StagePlan, command: &[OsString]) -> u8 {
    let result = match stage {
        "setup" => setup(plan, command),
        "limit" => limit(plan, command),
        "enter" => enter(plan, command),
        other => Err(Failure::Refuse(format!("unknown sandbox stage {other}"))),
    };
    match result {
        Ok(never) => match never {},
        Err(Failure::Refuse(reason)) => {
            let payload = serde_json::to_string(&reason).unwrap_or_default();
            // If even this write fails the outer process sees no `exec` and refuses anyway.
            let _ = announce(&plan.nonce, "refuse", &payload);
            2
        }
        Err(Failure::Exec(err)) => {
            let program = command
                .first()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            eprintln!(
                "guard run: cannot execute {}: {err}",
                crate::escape::neutralize(&program)
            );
            if err.kind() == io::ErrorKind::NotFound {
                127
            } else {
                126
            }
        }
    }
}

/// `path` (absolute) beneath `root`.
fn under(root: &str, path: &Path) -> PathBuf {
    Path::new(root).join(path.strip_prefix("/").unwrap_or(path))
}

fn mount_tmpfs(target: &Path, flags: MsFlags, options: &str) -> Result<(), Failure> {
    nix::mount::mount(Some("tmpfs"), target, Some("tmpfs"), flags, Some(options))
        .map_err(|e| Failure::Refuse(format!("mount tmpfs on {}: {e}", target.display())))
}

fn bind(source: &Path, target: &Path, recursive: bool) -> Result<(), Failure> {
    let mut flags = MsFlags::MS_BIND;
    if recursive {
        flags |= MsFlags::MS_REC;
    }
    nix::mount::mount(Some(source), target, None::<&str>, flags, None::<&str>).map_err(|e| {
        Failure::Refuse(format!(
            "bind {} on {}: {e}",
            source.display(),
            target.display()
        ))
    })
}

/// Makes the mount `entry` read-only, keeping its locked flags.
fn remount_read_only(entry: &MountEntry) -> nix::Result<()> {
    nix::mount::mount(
        None::<&str>,
        &entry.mount_point,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | entry.kept_flags(),
        None::<&str>,
    )
}

/// Makes every mount at or beneath `prefix` read-only (bubblewrap's per-submount remount:
/// `MS_REC` does not apply to a bind remount). A mount point the setup stage cannot reach
/// (`EACCES`) is left alone: the command, with fewer rights, cannot reach it either, and the
/// enter stage proves that for every writable mount it sees.
fn read_only_beneath(proc: &Path, prefix: &Path) -> Result<(), Failure> {
    let entries = mounts::read_mountinfo(proc).map_err(refuse_io("read mountinfo"))?;
    for entry in entries
        .iter()
        .filter(|e| mounts::within(&e.mount_point, prefix) && !e.read_only())
    {
        match remount_read_only(entry) {
            Ok(()) | Err(nix::Error::EACCES) => {}
            Err(e) => {
                return Err(Failure::Refuse(format!(
                    "remount {} read-only: {e}",
                    entry.mount_point.display()
                )));
            }
        }
    }
    Ok(())
}

/// Makes the single mount at `target` read-only.
fn read_only_at(proc: &Path, target: &Path) -> Result<(), Failure> {
    let entries = mounts::read_mountinfo(proc).map_err(refuse_io("read mountinfo"))?;
    let entry = entries
        .iter()
        .rev()
        .find(|e| e.mount_point == target)
        .ok_or_else(|| Failure::Refuse(format!("no mount at {}", target.display())))?;
    remount_read_only(entry)
        .map_err(|e| Failure::Refuse(format!("remount {} read-only: {e}", target.display())))
}

/// Creates the mount point `target` for a bind of `source` (a directory or a file), with its
/// parents; only possible inside a fresh tmpfs, since everything else is read-only by now.
fn mount_point(source: &Path, target: &Path) -> Result<(), Failure> {
    if std::fs::symlink_metadata(target).is_ok() {
        return Ok(());
    }
    let meta = std::fs::metadata(source)
        .map_err(|e| Failure::Refuse(format!("{}: {e}", source.display())))?;
    let create = |t: &Path| -> io::Result<()> {
        if meta.is_dir() {
            std::fs::create_dir_all(t)
        } else {
            if let Some(parent) = t.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(t, b"")
        }
    };
    create(target)
        .map_err(|e| Failure::Refuse(format!("create the mount point {}: {e}", target.display())))
}

fn setup(plan: &StagePlan, command: &[OsString]) -> Result<Infallible, Failure> {
    if std::process::id() != 1 {
        return Err(Failure::Refuse(
            "the setup stage is not the init process of a new pid namespace".into(),
        ));
    }
    close_inherited()?;
    // A session of its own, without a controlling terminal: nothing later can reach the
    // terminal the guard was started from (`TIOCSTI` into its input, `tcsetpgrp` to read it).
    nix::unistd::setsid().map_err(refuse("start a new session"))?;
    // Raised to 1 where the host's hard limit is 0 (possible as real root): 0 does not stop a
    // dump to a pipe `core_pattern`; the enter stage sets it to 1 in any case.
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 1, 1);
    // Loopback first, while the host's binaries are still at their paths.
    if let Some(ip) = &plan.ip {
        let _ = Command::new(ip)
            .args(["link", "set", "lo", "up"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    if !plan.privileged_setup {
        limit_user_namespaces(Path::new("/proc"))?;
    }

    let none = None::<&str>;
    nix::mount::mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)
        .map_err(refuse("make the mounts private"))?;
    // A scratch root: the host's tree moves to /oldroot beneath it.
    mount_tmpfs(
        Path::new("/tmp"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        "mode=0755",
    )?;
    std::fs::create_dir("/tmp/oldroot").map_err(refuse_io("mkdir oldroot"))?;
    nix::unistd::pivot_root("/tmp", "/tmp/oldroot").map_err(refuse("pivot to the scratch root"))?;
    nix::unistd::chdir("/").map_err(refuse("chdir /"))?;
    let host_proc = under(OLDROOT, Path::new("/proc"));

    // The view, from nothing: an empty root, then exactly the planned entries (see
    // `super::view`), each parent before what lies beneath it.
    let root = Path::new(NEWROOT);
    std::fs::create_dir(root).map_err(refuse_io("mkdir newroot"))?;
    mount_tmpfs(
        root,
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        "mode=0755,size=1m",
    )?;
    let mut hidden_mounts = Vec::new();
    for entry in &plan.view {
        let target = under(NEWROOT, &entry.path);
        match (entry.source, entry.role) {
            (_, Role::Root) => {}
            (Source::Host, _) => bind_host(&host_proc, entry, &target)?,
            (Source::Overlay, _) => overlay_host(entry, &target)?,
            (Source::Link, _) => {
                let Some(to) = &entry.from else {
                    return Err(Failure::Refuse(format!(
                        "no target for the link {}",
                        entry.path.display()
                    )));
                };
                std::os::unix::fs::symlink(to, &target)
                    .map_err(|e| Failure::Refuse(format!("link {}: {e}", entry.path.display())))?;
            }
            // Inside a read-only bind: a directory removed on the host since it was planned
            // has nothing left to hide.
            (Source::Tmpfs, Role::Hidden) => {
                if !std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
                    continue;
                }
                let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
                match mount_tmpfs(&target, flags, "mode=0755,size=1m") {
                    Ok(()) => hidden_mounts.push(target),
                    Err(_) if std::fs::symlink_metadata(&target).is_err() => {}
                    Err(failure) => return Err(failure),
                }
            }
            (Source::Tmpfs, _) => {
                let size = if entry.path == Path::new("/tmp") {
                    TMP_SIZE
                } else {
                    SMALL_SCRATCH_SIZE
                };
                std::fs::create_dir_all(&target)
                    .map_err(refuse_io("create a scratch directory"))?;
                mount_tmpfs(
                    &target,
                    MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                    &format!("mode=1777,{size}"),
                )?;
            }
            (Source::Dev, _) => fresh_dev(&target)?,
            (Source::Proc, _) => fresh_proc(plan, &host_proc, &target)?,
            (Source::Directory, _) => private_home(plan, &target)?,
        }
    }

    // Host sockets still visible in the view (bound inside a system directory or a bind):
    // covered, after every other mount, so that no bind puts one back.
    let mut plan = plan.clone();
    let table = host_socket_table(&host_proc, plan.outer_pid, plan.outer_start_time)?;
    plan.host_sockets.extend(table.paths);
    plan.host_sockets.sort();
    plan.host_sockets.dedup();
    plan.unlocated_sockets = table.relative;
    (plan.masked_sockets, plan.mask_points) = mask_sockets(&host_proc, &plan.host_sockets)?
        .into_iter()
        .unzip();
    let plan = &plan;
    // The hidden directories, /dev and the root hold only mount points and links from now on.
    // A hidden directory removed on the host meanwhile took its cover with it (the kernel
    // detaches mounts on a removed name in every namespace): nothing is left to show there.
    // One that came back is refused.
    for target in &hidden_mounts {
        if let Err(failure) = read_only_at(&host_proc, target)
            && std::fs::symlink_metadata(target).is_ok()
        {
            return Err(failure);
        }
    }
    read_only_at(&host_proc, &under(NEWROOT, Path::new("/dev")))?;
    read_only_at(&host_proc, root)?;

    // Into the view; the scratch root and the host's tree behind it are detached.
    nix::unistd::chdir(NEWROOT).map_err(refuse("chdir newroot"))?;
    nix::unistd::pivot_root(".", ".").map_err(refuse("pivot into the view"))?;
    nix::mount::umount2(".", MntFlags::MNT_DETACH).map_err(refuse("detach the host tree"))?;
    nix::unistd::chdir(&plan.cwd).map_err(refuse("enter the working directory"))?;

    if plan.privileged_setup {
        // Out of root: the build user, no group, CAP_SYS_ADMIN alone for the user namespace
        // (ubuntu's AppArmor strips namespaces created without it), into the limit stage.
        let Some(setpriv) = &plan.setpriv else {
            return Err(Failure::Refuse("no setpriv to leave root with".into()));
        };
        let args = plan.to_args("limit", command).map_err(Failure::Refuse)?;
        let err = Command::new(setpriv)
            .arg(format!("--reuid={}", plan.build_uid))
            .arg(format!("--regid={}", plan.build_gid))
            .args([
                "--clear-groups",
                "--inh-caps=+sys_admin",
                "--ambient-caps=+sys_admin",
                "--",
            ])
            .arg(&plan.unshare)
            .args([
                "--user",
                "--map-root-user",
                "--mount",
                "--propagation",
                "private",
                "--",
            ])
            .arg(&plan.guard_exe)
            .args(args)
            .exec();
        return Err(Failure::Refuse(format!(
            "cannot execute {}: {err}",
            setpriv.display()
        )));
    }
    exec_enter(plan, command)
}

/// A bind of the host's path (as the scratch root shows it, under `OLDROOT`) at `target`:
/// writable alone, or read-only with every submount (made read-only one by one), or, for
/// `.git`, read-only alone.
fn bind_host(host_proc: &Path, entry: &ViewEntry, target: &Path) -> Result<(), Failure> {
    let source = under(OLDROOT, &entry.path);
    mount_point(&source, target)?;
    match entry.role {
        Role::GitDir => {
            bind(&source, target, false)?;
            read_only_at(host_proc, target)
        }
        _ if entry.writable => bind(&source, target, false),
        _ => {
            bind(&source, target, true)?;
            read_only_beneath(host_proc, target)
        }
    }
}

/// The host's directory (as the scratch root shows it) as the lower layer of an overlay at
/// `target`, over the guard's write layer: the build writes only the upper layer, which the
/// outer process alone reads afterwards ([`super::layer`]). The lower layer must still be the
/// directory the plan named (device and inode), or the run is refused.
fn overlay_host(entry: &ViewEntry, target: &Path) -> Result<(), Failure> {
    let (Some(layer), Some([dev, ino])) = (&entry.layer, entry.identity) else {
        return Err(Failure::Refuse(format!(
            "the overlay at {} has no write layer or no planned identity",
            entry.path.display()
        )));
    };
    let lower = under(OLDROOT, &entry.path);
    let meta = std::fs::symlink_metadata(&lower)
        .map_err(|e| Failure::Refuse(format!("{}: {e}", entry.path.display())))?;
    if !meta.is_dir() || [meta.dev(), meta.ino()] != [dev, ino] {
        return Err(Failure::Refuse(format!(
            "the lower layer {} is device {} inode {}, planned {dev} {ino}",
            entry.path.display(),
            meta.dev(),
            meta.ino()
        )));
    }
    let layer = under(OLDROOT, layer);
    mount_point(&lower, target)?;
    let options = format!(
        "lowerdir={},upperdir={},workdir={},{}",
        lower.display(),
        layer.join("upper").display(),
        layer.join("work").display(),
        super::layer::OVERLAY_OPTIONS
    );
    nix::mount::mount(
        Some("overlay"),
        target,
        Some("overlay"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options.as_str()),
    )
    .map_err(|e| {
        Failure::Refuse(format!(
            "mount the worktree's overlay at {}: {e}",
            entry.path.display()
        ))
    })
}

/// A fresh `/dev`: a few device nodes bound from the host, nothing else.
fn fresh_dev(dev: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dev).map_err(refuse_io("create /dev"))?;
    mount_tmpfs(
        dev,
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        "mode=0755,size=1m",
    )?;
    for node in DEVICES {
        let source = under(OLDROOT, &Path::new("/dev").join(node));
        let target = dev.join(node);
        std::fs::write(&target, b"").map_err(refuse_io("create a device mount point"))?;
        bind(&source, &target, false)?;
    }
    for (link, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("ptmx", "pts/ptmx"),
    ] {
        std::os::unix::fs::symlink(to, dev.join(link)).map_err(refuse_io("create /dev links"))?;
    }
    for dir in ["shm", "pts"] {
        std::fs::create_dir(dev.join(dir)).map_err(refuse_io("create /dev directories"))?;
    }
    mount_tmpfs(
        &dev.join("shm"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        &format!("mode=1777,{SMALL_SCRATCH_SIZE}"),
    )?;
    // A private pty instance, where the kernel allows it; builds rarely need one.
    let _ = nix::mount::mount(
        Some("devpts"),
        &dev.join("pts"),
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=620"),
    );
    Ok(())
}

/// A proc of the new pid namespace; the kernel's keys covered, its system-wide knobs
/// read-only.
fn fresh_proc(plan: &StagePlan, host_proc: &Path, proc: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(proc).map_err(refuse_io("create /proc"))?;
    nix::mount::mount(
        Some("proc"),
        proc,
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(refuse("mount proc"))?;
    let null = under(OLDROOT, Path::new("/dev/null"));
    for entry in PROC_MASKED {
        let target = proc.join(entry);
        if std::fs::symlink_metadata(&target).is_ok() {
            bind(&null, &target, false)?;
            read_only_at(host_proc, &target)?;
        }
    }
    if !plan.privileged_setup {
        proc_read_only(host_proc, proc)?;
    }
    Ok(())
}

/// The build's `HOME` at `home` (in the fresh `/tmp`) with its empty XDG directories, the
/// build user's alone (`0700`). Started as root the setup stage makes them as real root and
/// hands them over; otherwise it is root of a namespace mapped to the build user, whose they
/// are already.
fn private_home(plan: &StagePlan, home: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |e: io::Error| Failure::Refuse(format!("create HOME {}: {e}", plan.home.display()));
    for (_, dir) in XDG_DIRS {
        std::fs::create_dir_all(home.join(dir)).map_err(fail)?;
    }
    let mut dirs = vec![home.to_path_buf()];
    dirs.extend(super::env::home_skeleton().iter().map(|e| home.join(e)));
    for dir in dirs {
        if plan.privileged_setup {
            std::os::unix::fs::lchown(&dir, Some(plan.build_uid), Some(plan.build_gid))
                .map_err(fail)?;
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)?;
    }
    Ok(())
}

/// The host's socket table, read again now through the outer process's `/proc/<pid>/net`
/// (`host_proc` is the host's proc, where that pid is the outer process's own, which its start
/// time confirms): a socket bound since the outer process read it is masked too.
fn host_socket_table(
    host_proc: &Path,
    pid: u32,
    start_time: u64,
) -> Result<proof::SocketTable, Failure> {
    let dir = host_proc.join(pid.to_string());
    let stat = std::fs::read_to_string(dir.join("stat"))
        .map_err(|e| Failure::Refuse(format!("read the outer process's stat: {e}")))?;
    if proof::start_time(&stat) != Some(start_time) {
        return Err(Failure::Refuse(format!(
            "process {pid} of the host's /proc is not the guard that started the sandbox"
        )));
    }
    proof::read_unix_sockets(&dir.join("net"))
        .map_err(|e| Failure::Refuse(format!("read the host's /proc/net/unix again: {e}")))
}

/// Covers every host socket that still resolves to a socket in the view under `NEWROOT` with an
/// empty regular file on a read-only mount: `connect()` then fails (`EROFS`: it asks for write
/// permission on the name before it looks for a socket). Each path is resolved as the command
/// will resolve it (`openat2` with `RESOLVE_IN_ROOT`: symbolic links stay inside the view), and
/// the mask is bound onto what it resolved to through `/proc/self/fd` (runc's way of naming a
/// mount target by descriptor). A path that does not resolve here is left: the proof checks
/// every path again in the final view and refuses a reachable one. Returns each masked socket
/// with the point in the view where its mask is mounted.
fn mask_sockets(host_proc: &Path, sockets: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, Failure> {
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

    let dir = Path::new(SOCKET_MASK_DIR);
    std::fs::create_dir(dir).map_err(refuse_io("create the socket mask directory"))?;
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount_tmpfs(dir, flags, "mode=0555,size=4k,nr_inodes=4")?;
    let mask = dir.join("empty");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(&mask)
        .map_err(refuse_io("create the socket mask"))?;
    // The super block read-only: no mount of it, and no name, can change the mask's bytes.
    nix::mount::mount(
        None::<&str>,
        dir,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | flags,
        None::<&str>,
    )
    .map_err(refuse("make the socket mask read-only"))?;

    let root = std::fs::File::open(NEWROOT).map_err(refuse_io("open the view's root"))?;
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    let mut masked = Vec::new();
    for socket in sockets {
        let relative = socket.strip_prefix("/").unwrap_or(socket);
        // EAGAIN: a rename or mount elsewhere raced a `..` step; the kernel asks to try again.
        let mut opened = nix::fcntl::openat2(&root, relative, how);
        for _ in 0..8 {
            if !matches!(opened, Err(nix::Error::EAGAIN)) {
                break;
            }
            opened = nix::fcntl::openat2(&root, relative, how);
        }
        let target = match opened {
            Ok(fd) => std::fs::File::from(fd),
            Err(nix::Error::ENOSYS) => {
                return Err(Failure::Refuse(
                    "openat2 is unavailable (Linux 5.6 or later is needed to mask host sockets)"
                        .into(),
                ));
            }
            // Not in the view (or not reachable from it): nothing to cover.
            Err(_) => continue,
        };
        if !target.metadata().is_ok_and(|m| m.file_type().is_socket()) {
            continue;
        }
        let by_fd = host_proc
            .join("self/fd")
            .join(target.as_raw_fd().to_string());
        // Where the mask lands in the view: the name as resolved, for the proof's accounting.
        let point = std::fs::read_link(&by_fd)
            .ok()
            .and_then(|p| p.strip_prefix(NEWROOT).ok().map(|p| Path::new("/").join(p)))
            .ok_or_else(|| {
                Failure::Refuse(format!(
                    "locate the host socket {} in the view",
                    socket.display()
                ))
            })?;
        match nix::mount::mount(
            Some(&mask),
            &by_fd,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        ) {
            Ok(()) => masked.push((socket.clone(), point)),
            // Unlinked on the host since it was opened: the name is gone, nothing to cover.
            Err(nix::Error::ENOENT) => {}
            Err(e) => {
                return Err(Failure::Refuse(format!(
                    "mask the host socket {}: {e}",
                    socket.display()
                )));
            }
        }
    }
    Ok(masked)
}

/// bubblewrap's `--disable-userns`: the current user namespace may hold exactly one more user
/// namespace, the command's; inside that one the count of every ancestor is full, so the command
/// cannot create another (and so cannot gain capabilities anywhere).
fn limit_user_namespaces(proc: &Path) -> Result<(), Failure> {
    std::fs::write(proc.join("sys/user/max_user_namespaces"), "1")
        .map_err(refuse_io("limit nested user namespaces"))
}

/// The system-wide knobs of `proc` made read-only (bubblewrap's list).
fn proc_read_only(mountinfo_proc: &Path, proc: &Path) -> Result<(), Failure> {
    for entry in PROC_READ_ONLY {
        let target = proc.join(entry);
        if std::fs::symlink_metadata(&target).is_ok() {
            bind(&target, &target, true)?;
            read_only_beneath(mountinfo_proc, &target)?;
        }
    }
    Ok(())
}

/// The limit stage (only after a privileged setup): root of a user namespace mapped to the build
/// user, in the final view, with a mount namespace of its own.
fn limit(plan: &StagePlan, command: &[OsString]) -> Result<Infallible, Failure> {
    if std::process::id() != 1 {
        return Err(Failure::Refuse(
            "the limit stage is not the init process of the new pid namespace".into(),
        ));
    }
    limit_user_namespaces(Path::new("/proc"))?;
    proc_read_only(Path::new("/proc"), Path::new("/proc"))?;
    exec_enter(plan, command)
}

/// Into the command's own user namespace (less privileged: every mount above is locked in its
/// new mount namespace), where it is the build user and holds no capability once exec'd.
fn exec_enter(plan: &StagePlan, command: &[OsString]) -> Result<Infallible, Failure> {
    let args = plan.to_args("enter", command).map_err(Failure::Refuse)?;
    let err = Command::new(&plan.unshare)
        .args(["--user", "--mount", "--propagation", "private"])
        .arg(format!("--map-user={}", plan.build_uid))
        .arg(format!("--map-group={}", plan.build_gid))
        .arg("--")
        .arg(&plan.guard_exe)
        .args(args)
        .exec();
    Err(Failure::Refuse(format!(
        "cannot execute {}: {err}",
        plan.unshare.display()
    )))
}

fn set_limits(limits: &Limits) -> Result<Vec<RlimitProof>, Failure> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let wanted = [
        ("processes", Resource::RLIMIT_NPROC, limits.processes),
        ("data", Resource::RLIMIT_DATA, limits.data_bytes),
        ("file-size", Resource::RLIMIT_FSIZE, limits.file_bytes),
        ("open-files", Resource::RLIMIT_NOFILE, limits.open_files),
    ];
    let shown = |v: u64| (v != nix::libc::RLIM_INFINITY).then_some(v);
    let mut proof = Vec::new();
    for (name, resource, limit) in wanted {
        let (soft, hard) = getrlimit(resource).map_err(refuse("getrlimit"))?;
        let hard = hard.min(limit);
        setrlimit(resource, soft.min(hard), hard).map_err(refuse("setrlimit"))?;
        let (soft, hard) = getrlimit(resource).map_err(refuse("getrlimit"))?;
        proof.push(RlimitProof {
            name: name.to_string(),
            soft: shown(soft),
            hard: shown(hard),
        });
    }
    // Exactly 1, not 0: the kernel ignores 0 for a pipe `core_pattern` (apport,
    // systemd-coredump, helpers that run as root in the host's namespaces), 1 stops those too
    // and any dump to a file (smaller than a page). The seccomp layer keeps it there. Where the
    // hard limit is already 0 and cannot be raised (no CAP_SYS_RESOURCE in the initial user
    // namespace), 0 stops every dump the kernel would write to a file: accepted only when
    // `core_pattern` is not a pipe.
    if let Err(e) = setrlimit(Resource::RLIMIT_CORE, 1, 1) {
        if proof::core_pattern_is_pipe() {
            return Err(refuse(
                "set RLIMIT_CORE to 1 (the host's hard limit is 0 and core_pattern is a pipe, which 0 does not stop)",
            )(e));
        }
        setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(refuse("set RLIMIT_CORE to 0"))?;
    }
    let (soft, hard) = getrlimit(Resource::RLIMIT_CORE).map_err(refuse("getrlimit"))?;
    proof.push(RlimitProof {
        name: "core".into(),
        soft: shown(soft),
        hard: shown(hard),
    });
    Ok(proof)
}

/// Landlock: read and execute everywhere, write — and, from ABI 9, connect to pathname UNIX
/// sockets (`ResolveUnix`, among the crate's write rights) — only beneath the allowlist;
/// abstract UNIX sockets and signals scoped to the sandbox. Rights the running kernel lacks are
/// dropped (best effort), which the proof records; a kernel without Landlock leaves the ruleset
/// not enforced, which the proof refuses.
fn landlock(plan: &StagePlan) -> Result<LandlockProof, Failure> {
    use landlock::{
        ABI, Access, AccessFs, LandlockStatus, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus, Scope,
    };
    // ABI 9 brings `LANDLOCK_ACCESS_FS_RESOLVE_UNIX`; ABI 7 and 8 add no file-system right.
    let abi = ABI::V9;
    let fail = |e: landlock::RulesetError| Failure::Refuse(format!("Landlock: {e}"));
    let write = AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?
        .scope(Scope::from_all(abi))
        .map_err(fail)?
        .create()
        .map_err(fail)?;
    let rule = |path: &Path, access| -> Result<Option<PathBeneath<PathFd>>, Failure> {
        match PathFd::new(path) {
            Ok(fd) => Ok(Some(PathBeneath::new(fd, access))),
            Err(_) if std::fs::symlink_metadata(path).is_err() => Ok(None),
            Err(e) => Err(Failure::Refuse(format!("Landlock {}: {e}", path.display()))),
        }
    };
    let mut rules = vec![rule(Path::new("/"), AccessFs::from_read(abi))?];
    for path in plan
        .writable
        .iter()
        .chain(plan.scratch.iter())
        .map(PathBuf::as_path)
        .chain([Path::new("/dev/shm"), Path::new("/dev/pts")])
    {
        rules.push(rule(path, write)?);
    }
    for node in DEVICES {
        rules.push(rule(
            &Path::new("/dev").join(node),
            AccessFs::from_file(abi) & write | AccessFs::from_read(abi) & AccessFs::from_file(abi),
        )?);
    }
    rules.push(rule(
        Path::new("/proc"),
        AccessFs::WriteFile | AccessFs::Truncate,
    )?);
    for rule in rules.into_iter().flatten() {
        ruleset = ruleset.add_rule(rule).map_err(fail)?;
    }
    let status = ruleset.restrict_self().map_err(fail)?;
    let abi_number = match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => kernel_abi
            .and_then(|k| u32::try_from(k).ok())
            .unwrap_or(effective_abi as u32),
        _ => 0,
    };
    // The test hook lowers what the proof credits, never what the kernel enforces.
    let abi_number = plan
        .landlock_abi_at_most
        .map_or(abi_number, |at_most| abi_number.min(at_most));
    let ruleset = match status.ruleset {
        RulesetStatus::FullyEnforced => "fully-enforced",
        RulesetStatus::PartiallyEnforced => "partially-enforced",
        RulesetStatus::NotEnforced => "not-enforced",
    };
    let enforced = ruleset != "not-enforced" && abi_number >= 1;
    Ok(LandlockProof {
        abi: abi_number,
        ruleset: ruleset.to_string(),
        writes_restricted: enforced,
        scoped: enforced && abi_number >= 6,
        pathname_sockets_restricted: enforced && abi_number >= 9,
    })
}

fn enter(plan: &StagePlan, command: &[OsString]) -> Result<Infallible, Failure> {
    if std::process::id() != 1 {
        return Err(Failure::Refuse(
            "the enter stage is not the init process of the new pid namespace".into(),
        ));
    }
    // Its parent is outside the namespace: tie the namespace's life to it again (a credential
    // change on the way may have cleared the death signal set by unshare).
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(refuse("set the parent-death signal"))?;
    close_inherited()?;
    let rlimits = set_limits(&plan.limits)?;
    nix::sys::prctl::set_no_new_privs().map_err(refuse("set no_new_privs"))?;
    let nested = nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER);
    let (nested_userns, nested_userns_refused) = match nested {
        Ok(()) => ("created".to_string(), false),
        Err(e) => (format!("refused: {}", e.desc()), true),
    };
    let landlock = if plan.without_landlock {
        LandlockProof {
            abi: 0,
            ruleset: "not-enforced".into(),
            writes_restricted: false,
            scoped: false,
            pathname_sockets_restricted: false,
        }
    } else {
        landlock(plan)?
    };
    // Last layer: from here on the stage makes no call the filters deny.
    let installed = seccomp::install().map_err(Failure::Refuse)?;
    let aslr = nix::sys::personality::set(nix::sys::personality::Persona::ADDR_NO_RANDOMIZE);
    let (aslr_weakening, aslr_weakening_refused) = match aslr {
        Ok(_) => ("accepted".to_string(), false),
        Err(e) => (format!("refused: {}", e.desc()), true),
    };

    let git_dir_read_only = plan
        .git_dir
        .as_deref()
        .map(|g| write_is_refused(g, &plan.nonce));
    let loopback_up = std::fs::read_to_string("/sys/class/net/lo/operstate")
        .map(|s| s.trim() != "down")
        .unwrap_or(true);
    let network = NetworkProbe::collect(loopback_up, git_dir_read_only)
        .map_err(|e| Failure::Refuse(format!("cannot read the network probe from /proc: {e}")))?;
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(refuse_io("read /proc/self/status"))?;
    let cap = |name: &str| proof::status_field(&status, name).unwrap_or_default();
    let entries =
        mounts::read_mountinfo(Path::new("/proc")).map_err(refuse_io("read mountinfo"))?;
    let (writable_mounts, read_only_mounts) = proof::writable_mounts(&entries);
    let ns = |kind: &str| probe::namespace_id(kind).unwrap_or_default();
    let stat =
        std::fs::read_to_string("/proc/self/stat").map_err(refuse_io("read /proc/self/stat"))?;
    let seccomp = SeccompProof {
        mode: proof::status_field(&status, "Seccomp").unwrap_or_default(),
        filters: proof::status_field(&status, "Seccomp_filters")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        installed: installed as u64,
        aslr_weakening,
        aslr_weakening_refused,
    };
    let memory = memory_proof(plan);
    let probe = ContainmentProbe {
        network,
        pidns: ns("pid"),
        mntns: ns("mnt"),
        ipcns: ns("ipc"),
        utsns: ns("uts"),
        uids: proof::status_ids(&status, "Uid"),
        gids: proof::status_ids(&status, "Gid"),
        groups: proof::status_ids(&status, "Groups"),
        capabilities: Capabilities {
            inheritable: cap("CapInh"),
            permitted: cap("CapPrm"),
            effective: cap("CapEff"),
            ambient: cap("CapAmb"),
            bounding: cap("CapBnd"),
        },
        no_new_privs: proof::status_field(&status, "NoNewPrivs").as_deref() == Some("1"),
        nested_userns,
        nested_userns_refused,
        landlock,
        writable_mounts,
        read_only_mounts,
        host_sockets_checked: plan.host_sockets.len() as u64,
        reachable_sockets: proof::reachable_sockets(&plan.host_sockets),
        masked_sockets: proof::masked_sockets(&plan.masked_sockets),
        unlocated_sockets: plan.unlocated_sockets,
        hidden_leftovers: proof::hidden_leftovers(&plan.hidden, &plan.bind_targets()),
        view: view::prove(
            &plan.view,
            &entries,
            &plan.mask_points,
            std::fs::read_dir("/").and_then(|d| d.map(|e| e.map(|e| e.file_name())).collect()),
        ),
        home: home_proof(plan),
        root_write_refused: write_is_refused(Path::new("/"), &plan.nonce),
        rlimits,
        open_fds: open_fds(),
        seccomp,
        controlling_terminal: proof::tty_nr(&stat).unwrap_or(u64::MAX),
        dev_tty_absent: std::fs::symlink_metadata("/dev/tty")
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound),
        memory,
        proc_keys_masked: match std::fs::read("/proc/keys") {
            Ok(keys) => keys.is_empty(),
            Err(e) => e.kind() == io::ErrorKind::NotFound,
        },
    };
    let allowed = plan.writable_allowed();
    let skeleton = super::env::home_skeleton();
    let problems = probe.problems(&plan.expectations(&allowed, &skeleton));
    let payload = serde_json::to_string(&probe)
        .map_err(|e| Failure::Refuse(format!("cannot encode the probe: {e}")))?;
    announce(&plan.nonce, "probe", &payload)
        .map_err(|e| Failure::Refuse(format!("cannot announce the probe: {e}")))?;
    if !problems.is_empty() {
        return Err(Failure::Refuse(format!(
            "isolation not proven: {}",
            problems.join("; ")
        )));
    }
    let Some((program, args)) = command.split_first() else {
        return Err(Failure::Refuse("no command".into()));
    };
    announce(&plan.nonce, "exec", "")
        .map_err(|e| Failure::Refuse(format!("cannot announce the command: {e}")))?;
    Err(Failure::Exec(Command::new(program).args(args).exec()))
}

/// The command's `HOME` as it finds it: owner, mode, what it holds, and whether it and each of
/// its XDG directories take a new file.
fn home_proof(plan: &StagePlan) -> HomeProof {
    use std::os::unix::fs::MetadataExt;
    let home = &plan.home;
    let meta = std::fs::symlink_metadata(home).ok();
    let mut entries = Vec::new();
    let mut stack = vec![home.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path.clone());
            }
            if let Ok(relative) = path.strip_prefix(home) {
                entries.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    entries.sort();
    let mut not_writable: Vec<String> = std::iter::once(home.clone())
        .chain(XDG_DIRS.iter().map(|(_, dir)| home.join(dir)))
        .filter(|dir| !dir.is_dir() || write_is_refused(dir, &plan.nonce))
        .map(|dir| dir.to_string_lossy().into_owned())
        .collect();
    if meta.is_none() {
        not_writable = vec![home.to_string_lossy().into_owned()];
    }
    HomeProof {
        path: home.to_string_lossy().into_owned(),
        uid: meta.as_ref().map_or(u32::MAX, MetadataExt::uid),
        gid: meta.as_ref().map_or(u32::MAX, MetadataExt::gid),
        mode: meta
            .as_ref()
            .map_or_else(String::new, |m| format!("{:04o}", m.mode() & 0o7777)),
        entries,
        not_writable,
    }
}

/// The memory bound in force: membership of the planned control group and its limits, read
/// back from the group's own files.
fn memory_proof(plan: &StagePlan) -> MemoryProof {
    let read = |path: PathBuf| std::fs::read_to_string(path).ok();
    let number = |text: Option<String>| text.and_then(|t| t.trim().parse::<u64>().ok());
    let mut proof = MemoryProof {
        cgroup_version: 0,
        cgroup_member: false,
        memory_max: None,
        pids_max: None,
        cgroup_unavailable: plan.cgroup_unavailable.clone(),
        tmpfs_budget: TMPFS_BUDGET,
    };
    if let Some(group) = &plan.cgroup {
        let files = super::cgroup::BuildCgroup::files(group.version);
        proof.cgroup_version = group.version;
        // pid 1 of this pid namespace is this very process (the stages exec each other).
        proof.cgroup_member = !group.dirs.is_empty()
            && group.dirs.iter().all(|d| {
                read(d.join("cgroup.procs")).is_some_and(|p| p.lines().any(|l| l.trim() == "1"))
            });
        proof.memory_max = group
            .dirs
            .iter()
            .find_map(|d| number(read(d.join(files.memory_max))));
        proof.pids_max = group
            .dirs
            .iter()
            .find_map(|d| number(read(d.join(files.pids_max))));
    }
    proof
}

/// Closes every descriptor above stderr that this process inherited (a parent of the guard may
/// have left some open without close-on-exec; none may reach the command).
fn close_inherited() -> Result<(), Failure> {
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map_err(refuse_io("list /proc/self/fd"))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in listed {
        // The listing's own descriptor is already closed: EBADF.
        match nix::unistd::close(fd) {
            Ok(()) | Err(nix::Error::EBADF) => {}
            Err(e) => return Err(Failure::Refuse(format!("close descriptor {fd}: {e}"))),
        }
    }
    Ok(())
}

/// The descriptors open in this process besides stdin, stdout and stderr (and the one listing
/// them): the command must inherit nothing else.
fn open_fds() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return vec!["(cannot list /proc/self/fd)".into()];
    };
    let mut fds: Vec<String> = dir
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !["0", "1", "2"].contains(&n.as_str()))
        .collect();
    // One of them is the listing's own descriptor, gone by now.
    fds.retain(|n| std::fs::read_link(format!("/proc/self/fd/{n}")).is_ok());
    fds.sort();
    fds
}

/// Whether creating a file in `dir` fails (read-only file system, or refused by Landlock); a
/// created file is removed again and counts as writable.
fn write_is_refused(dir: &Path, nonce: &str) -> bool {
    let path = dir.join(format!(".guard-run-write-probe-{nonce}"));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Err(err) => matches!(
            err.kind(),
            io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::PermissionDenied
        ),
        Ok(_) => {
            let _ = std::fs::remove_file(&path);
            false
        }
    }
}

/// One announcement line on stdout, flushed before anything else can happen (exec does not flush
/// Rust's buffer).
fn announce(nonce: &str, kind: &str, payload: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    let line = if payload.is_empty() {
        format!("{MARKER} {nonce} {kind}\n")
    } else {
        format!("{MARKER} {nonce} {kind} {payload}\n")
    };
    stdout.write_all(line.as_bytes())?;
    stdout.flush()
}
