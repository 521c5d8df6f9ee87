//! The inner stages, run by the guard binary itself (`guard __sandbox-stage`) inside the namespaces
//! that `unshare` created. They only return on failure: on success the last one execs the command.
//!
//! - **setup** (pid 1 of the new pid namespace, root of the first user namespace, which maps only
//!   the build user): loopback up, nested user namespaces limited, the deny-all view built under
//!   `/newroot` and pivoted into, then `unshare --user --mount` into the second user namespace;
//! - **enter** (the build user in the second user namespace, no capability): resource limits,
//!   `no_new_privs`, Landlock, the proof, the announcement, `exec`.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::mount::{MntFlags, MsFlags};
use serde::{Deserialize, Serialize};

use super::capture::MARKER;
use super::mounts::{self, MountEntry};
use super::probe::{self, NetworkProbe};
use super::proof::{
    self, Capabilities, ContainmentProbe, Expectations, LandlockProof, RlimitProof,
};

/// The hidden subcommand that runs a stage.
pub const STAGE_SUBCOMMAND: &str = "__sandbox-stage";

/// Where the setup stage assembles the command's view before pivoting into it.
const NEWROOT: &str = "/newroot";
/// Where the host's tree sits, in the scratch root, while the view is assembled.
const OLDROOT: &str = "/oldroot";
/// Size of each fresh writable tmpfs (`/tmp`, `/var/tmp`, `/dev/shm`).
const SCRATCH_SIZE: &str = "size=4g";
/// Device nodes bound into the fresh `/dev`.
pub const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];
/// `/proc` entries made read-only over the fresh proc (as bubblewrap does).
const PROC_READ_ONLY: &[&str] = &["sys", "sysrq-trigger", "irq", "bus"];

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
    /// The command's fresh `HOME`, created in the fresh `/tmp`.
    pub home: PathBuf,
    /// `<repo>/.git`, bound read-only over the writable worktree.
    pub git_dir: Option<PathBuf>,
    /// Bound writable: the worktree (or working directory) and declared build outputs.
    pub writable: Vec<PathBuf>,
    /// Bound read-only where a hidden directory would cover them: toolchains, the dependency
    /// cache, the guard binary itself.
    pub read_only: Vec<PathBuf>,
    /// Fresh writable tmpfs: `/tmp`, `/var/tmp`.
    pub scratch: Vec<PathBuf>,
    /// Fresh empty read-only tmpfs: `/run`, `HOME`, the runner's directories, `--hide`.
    pub hidden: Vec<PathBuf>,
    /// Pathname sockets bound on the host, read in the outer network namespace.
    pub host_sockets: Vec<PathBuf>,
    /// The setup stage runs as real root in the initial user namespace (the guard was started
    /// as root): it can reach every bind source (a toolchain in root's `0700` home), and leaves
    /// root through `setpriv` into the limit stage. Otherwise it runs as root of a first user
    /// namespace mapped to the build user.
    pub privileged_setup: bool,
    pub setpriv: Option<PathBuf>,
    pub limits: Limits,
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

    pub fn expectations<'a>(&'a self, allowed: &'a BTreeSet<PathBuf>) -> Expectations<'a> {
        Expectations {
            outer_netns: &self.outer_netns,
            outer_userns: &self.outer_userns,
            outer_pidns: &self.outer_pidns,
            outer_mntns: &self.outer_mntns,
            writable_allowed: allowed,
            build_uid: self.build_uid,
            build_gid: self.build_gid,
            git_dir: self.git_dir.is_some(),
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

    // The whole host tree, read-only, every submount included.
    std::fs::create_dir(NEWROOT).map_err(refuse_io("mkdir newroot"))?;
    bind(Path::new(OLDROOT), Path::new(NEWROOT), true)?;
    read_only_beneath(&host_proc, Path::new(NEWROOT))?;

    // Hidden and scratch directories: fresh tmpfs, parents first. One inside another is already
    // covered by it (its path no longer exists there).
    let mut covers: Vec<(&PathBuf, bool)> = plan
        .scratch
        .iter()
        .map(|p| (p, true))
        .chain(plan.hidden.iter().map(|p| (p, false)))
        .collect();
    covers.sort_by_key(|(p, _)| p.components().count());
    let mut hidden_mounts = Vec::new();
    for (path, writable) in covers {
        let target = under(NEWROOT, path);
        if !std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        if writable {
            mount_tmpfs(&target, flags, &format!("mode=1777,{SCRATCH_SIZE}"))?;
        } else {
            mount_tmpfs(&target, flags, "mode=0755,size=1m")?;
            hidden_mounts.push(target);
        }
    }

    // A fresh /dev: a few device nodes bound from the host, nothing else.
    let dev = under(NEWROOT, Path::new("/dev"));
    mount_tmpfs(
        &dev,
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
        &format!("mode=1777,{SCRATCH_SIZE}"),
    )?;
    // A private pty instance, where the kernel allows it; builds rarely need one.
    let _ = nix::mount::mount(
        Some("devpts"),
        &dev.join("pts"),
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=620"),
    );

    // A proc of the new pid namespace; its system-wide knobs read-only.
    let proc = under(NEWROOT, Path::new("/proc"));
    nix::mount::mount(
        Some("proc"),
        &proc,
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        none,
    )
    .map_err(refuse("mount proc"))?;
    if !plan.privileged_setup {
        proc_read_only(&host_proc, &proc)?;
    }

    // What the build needs back: the worktree and outputs writable, toolchains read-only.
    let source_of = |path: &Path| under(OLDROOT, path);
    let mut binds: Vec<(&PathBuf, bool)> = plan
        .writable
        .iter()
        .map(|p| (p, true))
        .chain(plan.read_only.iter().map(|p| (p, false)))
        .collect();
    binds.sort_by_key(|(p, _)| p.components().count());
    for (path, writable) in binds {
        let source = source_of(path);
        let target = under(NEWROOT, path);
        if !writable && std::fs::symlink_metadata(&source).is_err() {
            continue;
        }
        mount_point(&source, &target)?;
        bind(&source, &target, !writable)?;
        if !writable {
            read_only_beneath(&host_proc, &target)?;
        }
    }
    if let Some(git_dir) = &plan.git_dir {
        let target = under(NEWROOT, git_dir);
        bind(&source_of(git_dir), &target, false)?;
        read_only_at(&host_proc, &target)?;
    }

    // The command's HOME, in the fresh /tmp.
    let home = under(NEWROOT, &plan.home);
    std::fs::create_dir_all(&home).map_err(refuse_io("create HOME"))?;
    // Hidden directories and /dev hold only mount points from now on.
    for target in hidden_mounts.iter().chain(std::iter::once(&dev)) {
        read_only_at(&host_proc, target)?;
    }

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
        ("core", Resource::RLIMIT_CORE, 0),
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
    Ok(proof)
}

/// Landlock: read and execute everywhere, write only beneath the allowlist, abstract UNIX sockets
/// and signals scoped to the sandbox. Rights the running kernel lacks are dropped (best effort),
/// which the proof records; a kernel without Landlock leaves the ruleset not enforced, which the
/// proof refuses.
fn landlock(plan: &StagePlan) -> Result<LandlockProof, Failure> {
    use landlock::{
        ABI, Access, AccessFs, LandlockStatus, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus, Scope,
    };
    let abi = ABI::V6;
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
    let ruleset = match status.ruleset {
        RulesetStatus::FullyEnforced => "fully-enforced",
        RulesetStatus::PartiallyEnforced => "partially-enforced",
        RulesetStatus::NotEnforced => "not-enforced",
    };
    Ok(LandlockProof {
        abi: abi_number,
        ruleset: ruleset.to_string(),
        writes_restricted: ruleset != "not-enforced",
        scoped: ruleset != "not-enforced" && abi_number >= 6,
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
    let landlock = landlock(plan)?;

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
        hidden_leftovers: proof::hidden_leftovers(&plan.hidden, &plan.bind_targets()),
        root_write_refused: write_is_refused(Path::new("/"), &plan.nonce),
        rlimits,
        open_fds: open_fds(),
    };
    let allowed = plan.writable_allowed();
    let problems = probe.problems(&plan.expectations(&allowed));
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
