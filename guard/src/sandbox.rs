//! `guard run`: run the build/test command of an applied candidate diff contained, and judge what
//! it wrote once it is gone. This is the only place the untrusted patch is executed.
//!
//! The command is assumed hostile. The view is built from nothing (STYLE 13, bubblewrap's
//! `bubblewrap.c`, nsjail's `mnt.cc`): an empty root, then only what the build needs, each from a
//! named source ([`view`]): the system directories read-only and locked, the worktree, the
//! declared toolchains, fresh `/tmp`, `/dev`, `/proc` and a private `HOME`; a second layer
//! (Landlock) that needs no privilege; no capability anywhere; and a proof of all of it, the list
//! of what is mounted and from where included, written before the command exists.
//!
//! # Layers
//!
//! | layer | mechanism | what it stops |
//! |---|---|---|
//! | environment | `env_clear()`, then [`env::BASE_ALLOWLIST`] plus `--allow-env` and the policy's `build.env`; secret-looking names and values dropped even when allowlisted; `HOME` a fresh directory in the fresh `/tmp` with `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`, `XDG_DATA_HOME`, `XDG_STATE_HOME` inside it ([`env::XDG_DIRS`]), `TMPDIR=/tmp` | tokens in the environment (`GITHUB_TOKEN`, `ACTIONS_RUNTIME_TOKEN`, OIDC request tokens, cloud keys) |
//! | namespaces | user (two levels), pid, mount, network, IPC, UTS, cgroup | the network (only `lo`), the runner's processes (signals, `ptrace`, `/proc/<pid>/environ`), SysV IPC, abstract UNIX sockets of the host (they belong to a network namespace) |
//! | allowlisted view | a fresh tmpfs as the root (read-only once built), holding only the entries [`view::plan`] lists: [`view::SYSTEM_DIRS`] (`/usr`, `/etc`, `/sys`) and the merged-usr names ([`view::SYSTEM_LINKS`], copied as links), the worktree (or working directory) and `--writable` outputs writable, its `.git`, `--read-only` directories, `CARGO_HOME`, `RUSTUP_HOME` and the guard binary read-only, fresh `/tmp`, `/var/tmp`, `/dev`, `/proc`, and `HOME`; the parents of a bind are empty directories of the root. The proof carries the list and checks it ([`view::prove`]): every mount it sees is an entry, a submount a read-only bind carried, or a socket mask; every host entry has the planned device and inode; `/` holds nothing else | by construction, everything else of the host: `/run`, `/var/run`, `/var/lib`, `/home`, `/root`, `/opt`, `/srv`, `/mnt`, `/media`, `/snap`, `/boot`, the runner's directories and credentials; with them the runtime socket directories of every network namespace (Docker's, containerd's, a container's daemon on a host path), which no reading of the host's socket table sees; and every host file an inotify watch could otherwise observe there |
//! | read-only host | every host entry but the writable binds bound read-only, then each of its submounts remounted read-only one by one (`MS_REC` does not apply to a bind remount), keeping each mount's locked flags | writes to `/etc`, `/usr/local/bin`, the toolchains, the trusted binaries |
//! | locked mounts | the view is made in the mount namespace of a more privileged user namespace; the command runs in a new mount namespace of a less privileged one, where the kernel locks every inherited mount | `umount`/`mount -o remount,rw` of the read-only host, of `.git`, of the tmpfs covers (also from a nested namespace: there is none) |
//! | hidden inside the binds | where a read-only bind would show them (a toolchain declared above them, `--read-only /home/runner`), fresh empty read-only tmpfs over `/run`, `/var/run`, `/root`, `HOME`, the build user's home, `RUNNER_TEMP` and its parent (the runner's work root: `_temp`, `_actions`, `_tool`, the other checkouts), `RUNNER_WORKSPACE`, `GITHUB_WORKSPACE` and its parent, every ancestor of `RUNNER_TEMP` that holds the runner's `.credentials`, `.runner` or `_diag`, `--hide`, and every directory of nothing but host sockets; never inside a writable bind | what a broad declaration would show: `~/.git-credentials`, `gh`'s `hosts.yml`, the runner's credentials and `_diag` logs, its file commands (`GITHUB_ENV`, `GITHUB_PATH`), actions' code, the job's baseline and reports |
//! | masked sockets | every pathname UNIX socket bound in the host's network namespace that still resolves in the view (inside a declared directory, a system directory or the worktree) is covered, after every other mount, by an empty file from a private tmpfs whose super block is read-only (`connect()` then fails with `EROFS`; a read-only mount alone does not stop `connect()`) (see [Sockets](#sockets)) | connecting to a host daemon whose socket lies inside what the build must see, without refusing the build for its presence |
//! | fresh `/dev`, `/proc` | a tmpfs with `null`, `zero`, `full`, `random`, `urandom` bound from the host (no `tty`), a private `devpts`; a proc of the new pid namespace with `sys`, `sysrq-trigger`, `irq`, `bus` read-only and `keys`, `key-users` covered by `/dev/null` | raw disks and other device nodes; kernel knobs (`core_pattern`); the kernel's keys of every uid |
//! | own session | `setsid()` in the setup stage: no controlling terminal (`tty_nr` 0 in the proof) | `TIOCSTI` into the terminal the guard was started from, `tcsetpgrp` to read it (bubblewrap's CVE-2017-5226) |
//! | no privilege | the command is an ordinary user (the build user, never uid 0) in its user namespace: no capability in any set (`CapInh`, `CapPrm`, `CapEff`, `CapAmb` all zero), `no_new_privs`, no supplementary group, and the namespace above it may hold only one child user namespace (`max_user_namespaces=1`, bubblewrap's `--disable-userns`), so it cannot create another and gain capabilities there | setuid binaries (`sudo`), file capabilities, capability-gated kernel paths, nested-namespace escapes |
//! | Landlock | read and execute everywhere, every write right (`AccessFs::from_all(ABI::V9)` minus device creation) only beneath the writable binds, `/tmp`, `/var/tmp`, `/dev/shm`, `/dev/pts`, the device nodes and `/proc`; among them, from ABI 9, `ResolveUnix` (`LANDLOCK_ACCESS_FS_RESOLVE_UNIX`: `connect()`/`sendmsg()` to a pathname UNIX socket); abstract UNIX sockets and signals scoped to the sandbox (ABI 6) | a mistake in the mount setup reopening a host path for writing; abstract sockets and signals if a namespace were shared; from ABI 9, every host socket outside the writable directories, also one bound after the masks were placed |
//! | seccomp | [`seccomp`]'s deny-list, installed last before the proof and `exec` | the keyrings of the build's host uid and of the launcher's session, `TIOCSTI`/`TIOCLINUX`, kexec and modules, `bpf`, `perf_event_open`, `userfaultfd`, `open_by_handle_at`, ASLR-weakening `personality`, `io_uring`, the mount API, a change of `RLIMIT_CORE`; watches on the host files the view shows (inotify, fanotify, dnotify), which report the host's reads of them |
//! | resource limits | `RLIMIT_NPROC` 4096, `RLIMIT_DATA` 16 GiB, `RLIMIT_FSIZE` 8 GiB, `RLIMIT_NOFILE` 8192 (lowered only), `RLIMIT_CORE` exactly 1 (0 does not stop a pipe `core_pattern`) | fork bombs, runaway memory, disk-filling files, core dumps of secrets (also to apport or systemd-coredump) |
//! | memory as a whole | a control group of its own where the host allows one ([`cgroup`]: `memory.max`, `pids.max`), writable tmpfs within [`stage::TMPFS_BUDGET`] | tmpfs files and `memfd`s, which `RLIMIT_DATA` does not count |
//! | time, output | `--timeout` kills the whole tree; the last `--max-output` bytes are kept | hangs, floods |
//! | after the build | the trusted outer process waits until no process is left in the sandbox's pid namespace, then (with `--verdict`/`--baseline`) compares the worktree with the baseline it read before the build started: identity of the worktree and `.git`, every file's SHA-256 ([`crate::tree::verify_against`]) | a build that wrote `.github/**`, out of scope, into `.git`, or swapped the worktree; the exit status carries it (1) |
//!
//! Not covered: the build can read what its user can read in the view (the system directories,
//! the toolchains, the worktree), and write its worktree, its outputs, `HOME` and the fresh
//! `/tmp`; loopback inside its own network namespace works. A file's access time (`relatime`)
//! and the page cache still hint, coarsely, that the host read a file both can see. Its output is
//! a channel to whoever reads the log or the report. Nothing can be fetched during the build:
//! dependencies are fetched beforehand by a trusted step.
//!
//! # Process layout
//!
//! Started as root (the workflow's `sudo`, a root CI container, `local-run` as root):
//!
//! ```text
//! guard run ─spawn (own process group)─► setpriv --pdeathsig KILL --
//!   unshare --pid --fork --kill-child --mount --net --ipc --uts --cgroup --propagation private --
//!     guard __sandbox-stage --stage setup    pid 1, real root: lo up, the view on an empty
//!                                            root under /newroot, host sockets masked, pivot
//!   setpriv --reuid=<build uid> --regid=65534 --clear-groups --inh-caps=+sys_admin --ambient-caps=+sys_admin --
//!   unshare --user --map-root-user --mount --
//!     guard __sandbox-stage --stage limit    root of user ns 1 (= build user): max_user_namespaces=1, /proc/sys read-only
//!   unshare --user --mount --map-user=<build uid> --map-group=65534 --
//!     guard __sandbox-stage --stage enter    the build user in user ns 2: limits, no_new_privs, Landlock, proof, exec
//!   <command>                                pid 1, no capability, mounts locked
//! ```
//!
//! Started as an ordinary user (which must hold no supplementary group): the first `unshare` adds
//! `--user --map-root-user`, the setup stage is root of that user namespace and also does the
//! limit stage's work, then enters the command's user namespace directly.
//!
//! The build user is the one that started the guard; started as root, the owner of the worktree
//! with group `nogroup` (65534), never the owner's primary group (on GitHub's runners it is
//! `docker`, whose socket is root access). On a root-owned worktree it is `nobody`, and the trusted
//! process lends the worktree (except `.git`) to `nobody` before the build and gives it back once
//! the build is gone (ownership only, `lchown`, no link followed). The setup stage runs as real
//! root then, so it can bind toolchains from directories the build user cannot search (root's
//! `0700` home); `CAP_SYS_ADMIN` is handed on, ambient, only because Ubuntu's AppArmor strips the
//! capabilities of a user namespace created without it, and it ends at the first user namespace.
//!
//! The command is the init process of its pid namespace: when it exits, the kernel kills
//! everything left in it. `--kill-child` ties the namespace to the outer `unshare`,
//! `setpriv --pdeathsig KILL` ties that to the guard, the enter stage sets its own death signal
//! again, and on timeout the guard kills the process group with the `kill` binary and `unshare`
//! with `Child::kill`. Before the tree check, the guard waits until `/proc` shows no process in the
//! sandbox's pid namespace. Descriptors inherited from the guard's parent are closed by the stages
//! (and the proof shows none is left). Helper binaries are taken from fixed system paths, never
//! from `PATH`.
//!
//! # Proof
//!
//! The enter stage, under every layer, reads without sending traffic: the interfaces, routes and
//! namespace identities (network, user, pid, mount, IPC, UTS), its ids, groups and capability
//! sets, `no_new_privs`, whether `unshare(CLONE_NEWUSER)` is refused, the Landlock ABI and whether
//! the ruleset is enforced, every writable mount it can reach (mount id through an `O_PATH`
//! descriptor, so a mount hidden under another does not count), whether `.git` and `/` refuse a
//! new file, what the hidden directories show, the view (the planned list of entries, each
//! checked, and any mount or name at the root outside it), its `HOME` (owner, mode `0700`, only
//! the empty XDG directories, writable), its open descriptors, its resource limits; and,
//! for every pathname UNIX socket bound on the host (`/proc/net/unix`, read by the outer process
//! in the host's network namespace before the sandbox is made), whether it still resolves to a
//! socket (the setup stage read the table again and masked what it found; the proof lists the
//! masked ones, counts the sockets bound under a relative name, and says whether Landlock
//! restricts pathname sockets). It announces this proof on the output pipe *before* exec'ing the command, so the
//! command cannot forge it (see [`capture`]), and refuses to exec on any problem
//! ([`proof::ContainmentProbe::problems`]); the outer process checks the same again and records it
//! with the layers in force in the report. A machine without Landlock, without user namespaces,
//! or where anything above fails, does not run the command: **fail closed**, exit 2. There is no
//! switch to run without Landlock: the other layers would hold alone, but a kernel too old for
//! Landlock (before 5.13) is too old for this sandbox's other assumptions as well.
//! `--no-isolation-because` replaces one layer, the network namespace, where an outer layer
//! blocks egress and the kernel refuses a network namespace: the sandbox is then built again
//! without `--net`, every other layer is still proven (the same proof, without its network
//! part), and a failure of any of them is a refusal as before. Without a network namespace the
//! host's abstract UNIX sockets are one `connect()` away, and only Landlock's scoping (ABI 6,
//! Linux 6.12) keeps the build from them: where the kernel lacks it (ubuntu-24.04's 6.8 has ABI
//! 4), the opt-out is refused, with that reason. The build never runs without the
//! sandbox and never as root. The opt-out is recorded in the report (`network: opted-out`), and
//! the workflow never passes it (a test enforces that).
//!
//! # Sockets
//!
//! A daemon's UNIX socket is reachable from the build's network namespace through the file
//! system alone, whatever network namespace the daemon bound it in: `connect()` needs only a
//! name that resolves and write permission on it, and a read-only mount still allows that (the
//! name is checked, not written). The allowlisted view is the layer that stops this: no runtime
//! directory of the host (`/run`, `/var/run`, `/var/lib`, `/tmp`, the homes, `/opt`) is in it,
//! so no socket there, of this network namespace or another, has a name in the view. What is
//! left is a socket inside an entry: a declared toolchain or output directory, the worktree, a
//! system directory. For those bound in the host's network namespace there are the masks:
//! without such a declaration the proof's `masked_sockets` stays empty (the tests check it),
//! with one the masks are what refuses the connection, at the cost of a second reading of the
//! table and one `openat2` per bound name:
//!
//! 1. The outer process reads the host's `/proc/net/unix` (in its own, the host's, network
//!    namespace), byte for byte: a name may hold spaces, newlines and bytes that are not UTF-8.
//!    A directory of a bound socket that holds nothing but sockets (a daemon's socket directory)
//!    inside a read-only bind is added to the hidden directories.
//! 2. The setup stage reads the table again, through `/proc/<pid>/net/unix` of the outer process
//!    (confirmed by its start time), once the view is complete, and for every bound name resolves
//!    it inside the view as the command will (`openat2` with `RESOLVE_IN_ROOT`: symbolic links
//!    stay inside the view) and, if it is still a socket, binds over it an empty file from a
//!    private tmpfs whose super block is read-only (the tmpfs is never in the view and is
//!    detached with the scratch root). The command's mount namespace then inherits the masks
//!    locked. A socket inode is a valid bind target (checked on Linux 6.18): `connect()` on the
//!    mask fails with `EROFS`.
//! 3. The proof checks every name of both readings again in the final view: one that still
//!    resolves to a socket refuses the run (the backstop), the masked ones are listed.
//!
//! What masking cannot see, and only Landlock's `ResolveUnix` (ABI 9) closes, since it denies
//! `connect()` to every socket outside the writable directories whatever its name:
//!
//! - a socket bound on the host after the setup stage's reading, where the view shows the host
//!   (a daemon that starts, or restarts and binds its name again, during the build: the mask
//!   over the old inode goes away with the old name), unless its directory holds only sockets;
//! - a socket reached by a name the table does not show: a hard link, a rename after `bind()`,
//!   a name bound relative to the binder's working directory (counted in the proof as
//!   `unlocated_sockets`), a name bound in another mount namespace (a container sharing the
//!   host's network namespace) that resolves elsewhere in this one, and a socket bound in
//!   another network namespace (a container's daemon) inside an entry of the view;
//! - a name whose newline is followed by text shaped like a table entry (the kernel does not
//!   escape names): the name is cut there.
//!
//! Landlock ABI 7 (from Linux 6.15; Linux 6.18, where this was tested, reports 7) adds only
//! audit-log flags, and ABI 8 (Linux 7.0) only the synchronisation of all threads;
//! `LANDLOCK_ACCESS_FS_RESOLVE_UNIX` arrives with ABI 9 (Linux 7.1, per the `landlock` crate). The ruleset asks for it in best
//! effort: on an older kernel it is dropped and the ruleset reads `partially-enforced`; the proof
//! records `pathname_sockets_restricted` and the layer `landlock-pathname-unix-sockets` only
//! where it is in force. The view, and inside it the masks, are therefore the layers that hold
//! on today's kernels; do not declare a directory where a daemon binds sockets (or `--hide` it).
//!
//! # GitHub-hosted Ubuntu 24.04
//!
//! `kernel.apparmor_restrict_unprivileged_userns=1` there strips every capability from a user
//! namespace that a process without `CAP_SYS_ADMIN` creates. The workflow therefore starts the
//! root-owned guard with `sudo` (build-test keeps sudo; harden-runner's `disable-sudo` is not
//! used) and guard leaves root itself as described above. The alternative, a trusted step that
//! sets `kernel.apparmor_restrict_unprivileged_userns=0`, was not taken: it loosens the host for
//! every later process of the job, while the capability is handed only to the guard's own
//! `unshare`. Not verified from here: that AppArmor's exemption follows the capability (as root's
//! own namespaces rely on), and the Landlock ABI of the runner's kernel (6.8: ABI 4, no scoping;
//! recorded in the report, and scoping is covered by the namespaces there, which is also why the
//! opt-out is refused there).
//!
//! # Test hook
//!
//! [`NamespaceHook`] (environment variable `GUARD_RUN_SIMULATE_NO_NAMESPACES`, read by the CLI)
//! makes layers unavailable — `missing`: `unshare` does not exist; `silent`: `true(1)`
//! stands in for `unshare`, exiting 0 without running anything; `no-network`: an attempt with a
//! network namespace is unavailable; `no-landlock`: the enter stage does not restrict itself with
//! Landlock (its proof then refuses). It can only take isolation away, which fails closed; it
//! cannot choose what runs. [`LANDLOCK_ABI_ENV`] (`GUARD_RUN_SIMULATE_LANDLOCK_ABI_AT_MOST=N`)
//! caps the Landlock ABI the proof credits the kernel with at `N` (not a number: 0): the ruleset
//! the enter stage enforces is the same whatever it says, so it can only make the guard believe
//! in fewer layers and refuse more (the opt-out on a kernel without scoping, simulated), never
//! raise what it credits or loosen what it enforces. Both are read from the guard's own
//! environment, which the workflow's `sudo` resets and the build never reaches.

pub mod capture;
pub mod cgroup;
pub mod env;
pub mod json_v1;
pub mod layer;
pub mod mounts;
pub mod probe;
pub mod proof;
pub mod seccomp;
pub mod stage;
pub mod view;

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use capture::Capture;
use cgroup::BuildCgroup;
use env::EnvPlan;
use layer::{WriteBudget, WriteLayer};
use proof::ContainmentProbe;
use stage::{Limits, StagePlan};

use crate::output::json_v1::VerdictDoc;
use crate::policy::Policy;
use crate::tree::walk::WalkLimits;
use crate::tree::{self, Baseline, Finding, TreeError};

/// How often the guard checks whether the command has exited or its time is up.
const POLL: Duration = Duration::from_millis(10);
/// How long the guard waits for the output pipe to close after the command has exited.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);
/// How long the guard waits for the last process of the sandbox's pid namespace to be gone.
const NAMESPACE_GRACE: Duration = Duration::from_secs(10);

const UNSHARE: &[&str] = &["/usr/bin/unshare", "/bin/unshare"];
const IP: &[&str] = &["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"];
const KILL: &[&str] = &["/usr/bin/kill", "/bin/kill"];
const SETPRIV: &[&str] = &["/usr/bin/setpriv", "/bin/setpriv"];
const TRUE: &[&str] = &["/usr/bin/true", "/bin/true"];

/// The ids a build gets when the guard is started as root on a root-owned worktree: `nobody` and
/// `nogroup`. As root on a worktree owned by someone else, the build is that owner with group
/// `nogroup` (never the owner's primary group: on GitHub's runners it is `docker`).
pub const NOBODY: u32 = 65534;
pub const NOGROUP: u32 = 65534;

/// Fresh writable tmpfs in every view.
const SCRATCH: &[&str] = &["/tmp", "/var/tmp"];
/// Directories hidden wherever a read-only bind would show them (a toolchain declared as `/`
/// or `/var`): where daemons keep their sockets, and root's home.
const ALWAYS_HIDDEN: &[&str] = &["/run", "/var/run", "/root"];
/// Variables naming directories of a CI runner that the build must not see: their directories
/// (and the parent of `RUNNER_TEMP`, the runner's work root, with `_actions`, `_temp`, the other
/// checkouts) are hidden; so is every ancestor of `RUNNER_TEMP` that holds the runner's own files.
const RUNNER_DIRS: &[&str] = &["RUNNER_TEMP", "RUNNER_WORKSPACE", "GITHUB_WORKSPACE"];
const RUNNER_ROOT_MARKERS: &[&str] = &[".credentials", ".runner", "_diag"];

/// What to run and how.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub command: Vec<OsString>,
    pub timeout: Duration,
    pub max_output: usize,
    /// Extra variable names to pass through (still subject to the secret filter).
    pub allow_env: Vec<String>,
    /// The repository the command builds: its working directory, and its `.git` is made read-only.
    pub repo: Option<PathBuf>,
    /// `--no-isolation-because`: run without a network namespace if one cannot be established
    /// (every other layer still proven).
    pub opt_out: Option<String>,
    /// The guard binary, re-entered for the inner stages.
    pub guard_exe: PathBuf,
    pub hook: Option<NamespaceHook>,
    /// Test hook ([`LANDLOCK_ABI_ENV`]): the highest Landlock ABI the proof may credit.
    pub landlock_abi_at_most: Option<u32>,
    /// Declared build outputs outside the worktree, writable (`--writable`).
    pub writable: Vec<PathBuf>,
    /// Toolchains and caches outside the system directories, visible read-only.
    pub read_only: Vec<PathBuf>,
    /// More directories to hide inside the read-only binds (`--hide`).
    pub hide: Vec<PathBuf>,
    pub limits: Limits,
    /// `--memory-max`: the bound of the build's control group (default: three quarters of the
    /// host's memory).
    pub memory_max: Option<u64>,
    /// The tree check after the build, against a baseline held in memory.
    pub tree: Option<TreeSpec>,
    /// The bounds of the build's write layer (started as root: the worktree is an overlay).
    pub write_budget: WriteBudget,
}

/// The after-build tree check that `guard run` does itself once the sandbox is gone.
#[derive(Debug, Clone)]
pub struct TreeSpec {
    pub baseline: Baseline,
    pub verdict: VerdictDoc,
    pub policy: Policy,
    pub walk: WalkLimits,
}

/// Test hook that makes layers unavailable (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamespaceHook {
    /// The `unshare` binary does not exist.
    Missing,
    /// `true(1)` stands in for `unshare`: exits 0 without running anything.
    Silent,
    /// A network namespace cannot be made (the attempt with one is unavailable).
    NoNetwork,
    /// The enter stage does not restrict itself with Landlock.
    NoLandlock,
}

/// Test hook: the highest Landlock ABI the proof may credit the kernel with (a number; anything
/// else means 0). It lowers the guard's belief, never the ruleset it enforces.
pub const LANDLOCK_ABI_ENV: &str = "GUARD_RUN_SIMULATE_LANDLOCK_ABI_AT_MOST";

/// The value of [`LANDLOCK_ABI_ENV`]: unparsable is 0, the strictest.
pub fn landlock_abi_at_most(value: &str) -> u32 {
    value.trim().parse().unwrap_or(0)
}

impl NamespaceHook {
    pub const ENV: &'static str = "GUARD_RUN_SIMULATE_NO_NAMESPACES";

    /// An unknown value means `missing`: it must not loosen anything.
    pub fn from_value(value: &str) -> NamespaceHook {
        match value {
            "silent" => NamespaceHook::Silent,
            "no-network" => NamespaceHook::NoNetwork,
            "no-landlock" => NamespaceHook::NoLandlock,
            _ => NamespaceHook::Missing,
        }
    }
}

/// How the command ended: an exit code, or the signal that killed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitRecord {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl ExitRecord {
    fn from_status(status: ExitStatus) -> ExitRecord {
        ExitRecord {
            code: status.code(),
            signal: status.signal(),
        }
    }

    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// "exited with code 3", "was killed by signal 9", "timed out and was killed".
    pub fn describe(&self, timed_out: bool) -> String {
        match (self.code, self.signal) {
            _ if timed_out => "timed out and was killed".to_string(),
            (Some(code), _) => format!("exited with code {code}"),
            (_, Some(signal)) => format!("was killed by signal {signal}"),
            _ => "ended".to_string(),
        }
    }
}

/// `--no-isolation-because` in effect: the network namespace could not be made and was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkOptOut {
    pub reason: String,
    /// Why the attempt with a network namespace failed.
    pub unavailable: String,
}

/// Which layers contained the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    Namespace {
        probe: Box<ContainmentProbe>,
        netns_differs: bool,
        userns_differs: bool,
        git_dir_read_only: bool,
        /// The layers in force, by name, in the order they are listed in the module docs.
        layers: Vec<String>,
        /// Which host directories were hidden, and which were bound back.
        hidden: Vec<PathBuf>,
        writable: Vec<PathBuf>,
        /// Set when the sandbox was built without a network namespace.
        network_opt_out: Option<NetworkOptOut>,
    },
}

/// The names (never the values) of the command's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvNames {
    pub passed: Vec<String>,
    pub dropped: Vec<String>,
    /// Allowlisted or requested, but secret-looking (a subset of `dropped`).
    pub refused: Vec<String>,
}

/// The tree check after the build.
#[derive(Debug, Clone)]
pub struct TreeOutcome {
    pub findings: Vec<Finding>,
    pub entries: u64,
}

/// Where the build's writes to its worktree went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Worktree {
    /// An overlay over the checkout (never written), discarded after the check.
    Overlay {
        /// The checkout's device and inode, checked before the overlay was mounted and after
        /// the build.
        lower: [u64; 2],
        budget: WriteBudget,
        /// What the build wrote, in bytes and inodes of the upper layer.
        used_bytes: u64,
        used_inodes: u64,
    },
    /// Started as an ordinary user: the checkout itself, bound writable.
    InPlace,
}

#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub command: Vec<OsString>,
    pub exit: ExitRecord,
    pub timed_out: bool,
    pub duration: Duration,
    pub isolation: Isolation,
    pub env: EnvNames,
    pub output_tail: Vec<u8>,
    pub output_truncated_bytes: u64,
    /// With a [`TreeSpec`]: what the build wrote, judged after every process of it was gone.
    pub tree: Option<TreeOutcome>,
    pub worktree: Worktree,
}

impl RunOutcome {
    /// Whether the command succeeded (exit code 0 within the time limit) and the tree check, if
    /// any, found nothing.
    pub fn passed(&self) -> bool {
        self.exit.success()
            && !self.timed_out
            && self.tree.as_ref().is_none_or(|t| t.findings.is_empty())
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    #[error("no command given")]
    EmptyCommand,
    #[error("--allow-env {0:?}: not a variable name ([A-Za-z_][A-Za-z0-9_]*)")]
    InvalidEnvName(String),
    #[error("--no-isolation-because needs a non-empty reason")]
    EmptyReason,
    #[error("--repo {path}: {reason}")]
    Repo { path: PathBuf, reason: String },
    #[error("{flag} {path}: {reason}")]
    Path {
        flag: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("{context}: {source}")]
    Io { context: String, source: io::Error },
    /// Deliberately without a hint at `--no-isolation-because`: the opt-out replaces the network
    /// namespace only, and this refusal may be about any layer.
    #[error("isolation could not be established, so the command was not run: {detail}")]
    IsolationUnavailable { detail: String },
    #[error("the sandbox broke its protocol: {detail}")]
    Protocol { detail: String },
    #[error("the build user is not safe to run the command as: {0}")]
    Identity(String),
    #[error("the tree changed after the check that took its baseline, before the build: {0}")]
    TreeChanged(String),
    #[error("tree check: {0}")]
    Tree(#[from] TreeError),
    #[error(transparent)]
    Layer(#[from] layer::LayerError),
}

fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> SandboxError {
    let context = context.into();
    move |source| SandboxError::Io { context, source }
}

/// Runs the command as [`RunSpec`] says. `Err` means the guard itself failed (or isolation was
/// required and unavailable); the command's own failure is an `Ok` outcome.
pub fn run(spec: &RunSpec) -> Result<RunOutcome, SandboxError> {
    if spec.command.is_empty() {
        return Err(SandboxError::EmptyCommand);
    }
    if let Some(bad) = spec.allow_env.iter().find(|n| !env::valid_name(n)) {
        return Err(SandboxError::InvalidEnvName(bad.clone()));
    }
    if spec.opt_out.as_deref().is_some_and(|r| r.trim().is_empty()) {
        return Err(SandboxError::EmptyReason);
    }
    let (cwd, git_dir) = match &spec.repo {
        Some(repo) => {
            let (repo, git_dir) = repository(repo)?;
            (repo, Some(git_dir))
        }
        None => (
            std::env::current_dir()
                .and_then(|d| d.canonicalize())
                .map_err(io_error("current directory"))?,
            None,
        ),
    };
    let mut inodes_before = None;
    if let Some(tree) = &spec.tree {
        let (changed, inodes) = tree::changed_since(&tree.baseline, &tree.walk)?;
        if !changed.is_empty() {
            return Err(SandboxError::TreeChanged(changed.join(", ")));
        }
        inodes_before = Some(inodes);
    }
    let nonce = nonce()?;
    let sandbox_home = PathBuf::from(format!("/tmp/guard-run-home-{nonce}"));
    let env_plan = sandbox_env(
        env::plan(std::env::vars_os(), &spec.allow_env, &sandbox_home),
        &sandbox_home,
    );
    let names = EnvNames {
        passed: env_plan.passed.clone(),
        dropped: env_plan.dropped.clone(),
        refused: env_plan.refused.clone(),
    };

    let attempt = sandboxed(spec, &env_plan, &cwd, git_dir.clone(), &sandbox_home, true)?;
    let (finished, isolation, chowned, layer) = match (attempt, &spec.opt_out) {
        (Attempt::Ran(finished, isolation, chowned, layer), _) => {
            (*finished, isolation, chowned, layer)
        }
        (Attempt::Unavailable(detail), None) => {
            return Err(SandboxError::IsolationUnavailable { detail });
        }
        // The command did not start: build the same sandbox again without its network
        // namespace, every other layer proven as before.
        (Attempt::Unavailable(unavailable), Some(reason)) => {
            match sandboxed(spec, &env_plan, &cwd, git_dir, &sandbox_home, false)? {
                Attempt::Ran(finished, mut isolation, chowned, layer) => {
                    let Isolation::Namespace {
                        network_opt_out, ..
                    } = &mut isolation;
                    *network_opt_out = Some(NetworkOptOut {
                        reason: reason.clone(),
                        unavailable,
                    });
                    (*finished, isolation, chowned, layer)
                }
                Attempt::Unavailable(detail) => {
                    return Err(SandboxError::IsolationUnavailable { detail });
                }
            }
        }
    };
    // Every process of the build is gone now (its pid namespace is dead): what it left is final.
    let mut layer = layer;
    if let (Some(chowned), Some(inodes), Some(t)) = (&chowned, inodes_before.as_mut(), &spec.tree)
        && chowned.roots.first() == Some(&cwd)
    {
        chowned.as_lent(&t.baseline.snapshot, inodes);
    }
    let (tree, worktree) = after_build(spec, layer.as_deref_mut(), inodes_before.as_ref());
    let mut isolation = isolation;
    if matches!(worktree, Worktree::Overlay { .. }) {
        let Isolation::Namespace { layers, .. } = &mut isolation;
        layers.push("worktree-overlay-discarded".into());
    }
    if let Some(chowned) = &chowned {
        chowned.restore()?;
    }
    // What the build wrote is gone with the layer: nothing of it reaches a later step.
    if let Some(layer) = layer {
        layer.discard()?;
    }
    let tree = tree.transpose()?;
    let (output_tail, output_truncated_bytes) = finished.capture.tail.finish();
    Ok(RunOutcome {
        command: spec.command.clone(),
        exit: finished.exit,
        timed_out: finished.timed_out,
        duration: finished.duration,
        isolation,
        env: names,
        output_tail,
        output_truncated_bytes,
        tree,
        worktree,
    })
}

/// A `build-wrote` finding at the worktree's top.
fn top_finding(message: String) -> Finding {
    Finding {
        rule: crate::rules::RuleId::BuildWrote,
        path: crate::repo_path::RepoPath::from("."),
        change: tree::Change::Modified,
        message,
        policy_entry: None,
    }
}

/// The check after the build: the tree the build left (with a write layer, the read-only merged
/// view of it over the untouched checkout), judged against the baseline; a write budget reached
/// is a finding too. A check that cannot finish is a failing check with its reason: the report
/// is written either way (the evidence must not disappear).
fn after_build(
    spec: &RunSpec,
    layer: Option<&mut WriteLayer>,
    inodes_before: Option<&tree::BaselineInodes>,
) -> (Option<Result<TreeOutcome, SandboxError>>, Worktree) {
    let mut findings = Vec::new();
    let mut view = None;
    let mut unreadable = false;
    let worktree = match layer {
        None => Worktree::InPlace,
        Some(layer) => {
            let budget = layer.budget();
            let (used_bytes, used_inodes) = match layer.usage() {
                Ok(usage) => {
                    if usage.exhausted {
                        findings.push(top_finding(format!(
                            "the build reached its write budget ({} bytes, {} inodes; it wrote {} bytes, {} inodes): what did not fit was refused, and the build cannot pass (raise --write-budget-bytes or --write-budget-inodes)",
                            budget.bytes, budget.inodes, usage.bytes, usage.inodes
                        )));
                    }
                    (usage.bytes, usage.inodes)
                }
                Err(e) => {
                    findings.push(top_finding(format!(
                        "the build's write layer cannot be measured: {e}"
                    )));
                    (0, 0)
                }
            };
            let lower = layer.lower_identity();
            match std::fs::symlink_metadata(layer.lower()) {
                Ok(m) if [m.dev(), m.ino()] == lower => {}
                _ => findings.push(top_finding(
                    "the checkout under the build's overlay is not the directory it was".into(),
                )),
            }
            match layer.merged() {
                Ok(merged) => view = Some(merged),
                Err(e) => {
                    unreadable = true;
                    findings.push(top_finding(format!(
                        "the tree the build left cannot be read: {e}"
                    )));
                }
            }
            Worktree::Overlay {
                lower,
                budget,
                used_bytes,
                used_inodes,
            }
        }
    };
    let Some(t) = &spec.tree else {
        return (None, worktree);
    };
    if unreadable {
        return (
            Some(Ok(TreeOutcome {
                entries: 0,
                findings,
            })),
            worktree,
        );
    }
    let result = tree::verify_against(
        &t.baseline,
        &t.verdict,
        &t.policy,
        &t.walk,
        inodes_before,
        view.as_deref(),
        false,
    );
    let outcome = match result {
        Ok(after) => {
            findings.extend(after.findings);
            TreeOutcome {
                entries: after.entries,
                findings,
            }
        }
        Err(e) => {
            findings.push(top_finding(format!(
                "the check after the build could not finish: {e}"
            )));
            TreeOutcome {
                entries: 0,
                findings,
            }
        }
    };
    (Some(Ok(outcome)), worktree)
}

/// The sandbox's `TMPDIR` is its fresh `/tmp`: a host temporary directory passed through would
/// be hidden, or worse, shared. The XDG base directories are those of its fresh `HOME`.
fn sandbox_env(mut plan: EnvPlan, home: &Path) -> EnvPlan {
    let mut own: Vec<(&str, OsString)> = vec![("TMPDIR", "/tmp".into())];
    for (name, dir) in env::XDG_DIRS {
        own.push((name, home.join(dir).into_os_string()));
    }
    plan.vars
        .retain(|(name, _)| !own.iter().any(|(n, _)| name == n));
    for (name, value) in own {
        plan.vars.push((name.into(), value));
        plan.dropped.retain(|n| n != name);
        if !plan.passed.iter().any(|n| n == name) {
            plan.passed.push(name.into());
        }
    }
    plan.passed.sort();
    plan
}

/// The canonical repository directory and its `.git`, which must be a real directory: a `.git`
/// file (worktree, submodule) points elsewhere, so protecting it would protect nothing.
fn repository(repo: &Path) -> Result<(PathBuf, PathBuf), SandboxError> {
    let fail = |reason: String| SandboxError::Repo {
        path: repo.to_path_buf(),
        reason,
    };
    let canonical = repo.canonicalize().map_err(|e| fail(e.to_string()))?;
    let git_dir = canonical.join(".git");
    match std::fs::symlink_metadata(&git_dir) {
        Ok(meta) if meta.is_dir() => Ok((canonical, git_dir)),
        Ok(_) => Err(fail(".git is not a directory (a worktree/submodule pointer or a symlink); pass the main repository".into())),
        Err(e) => Err(fail(format!(".git: {e}"))),
    }
}

enum Attempt {
    Ran(
        Box<Finished>,
        Isolation,
        Option<Chowned>,
        Option<Box<WriteLayer>>,
    ),
    /// Isolation could not be established; the command did not run.
    Unavailable(String),
}

/// Who the build runs as, and how the guard reaches that identity.
struct BuildIdentity {
    uid: u32,
    gid: u32,
    /// Started as root: switch with `setpriv` (groups cleared, `CAP_SYS_ADMIN` alone, ambient,
    /// for the namespace setup).
    switch: bool,
    /// Started as root on a root-owned worktree: lend it to `nobody` for the build.
    lend: bool,
}

fn build_identity(cwd: &Path) -> Result<BuildIdentity, SandboxError> {
    let status =
        std::fs::read_to_string("/proc/self/status").map_err(io_error("read /proc/self/status"))?;
    let euid = proof::status_ids(&status, "Uid").get(1).copied();
    let egid = proof::status_ids(&status, "Gid").get(1).copied();
    let (Some(euid), Some(egid)) = (euid, egid) else {
        return Err(SandboxError::Identity(
            "no Uid/Gid line in /proc/self/status".into(),
        ));
    };
    if euid == 0 {
        let owner = std::fs::metadata(cwd)
            .map_err(io_error(format!("{}", cwd.display())))?
            .uid();
        return Ok(if owner == 0 {
            BuildIdentity {
                uid: NOBODY,
                gid: NOGROUP,
                switch: true,
                lend: true,
            }
        } else {
            BuildIdentity {
                uid: owner,
                gid: NOGROUP,
                switch: true,
                lend: false,
            }
        });
    }
    let groups = proof::status_ids(&status, "Groups");
    if groups.iter().any(|g| *g != egid) {
        return Err(SandboxError::Identity(format!(
            "supplementary groups {groups:?} would reach the build (start the guard with setpriv --clear-groups, or as root)"
        )));
    }
    for socket in ["/run/docker.sock", "/var/run/docker.sock"] {
        if let Ok(meta) = std::fs::metadata(socket)
            && meta.gid() == egid
        {
            return Err(SandboxError::Identity(format!(
                "group {egid} owns {socket}: docker access is root access"
            )));
        }
    }
    Ok(BuildIdentity {
        uid: euid,
        gid: egid,
        switch: false,
        lend: false,
    })
}

/// A root-owned worktree lent to `nobody` for the build (owner changed, nothing else), given
/// back afterwards. Only the trusted process does this, before the build starts and after every
/// process of it is gone; the walk follows no link (`lchown`) and leaves `.git` alone.
struct Chowned {
    roots: Vec<PathBuf>,
    skip: Option<PathBuf>,
    uid: u32,
    gid: u32,
}

impl Chowned {
    fn lend(
        roots: Vec<PathBuf>,
        skip: Option<PathBuf>,
        uid: u32,
        gid: u32,
    ) -> Result<Chowned, SandboxError> {
        let lent = Chowned {
            roots,
            skip,
            uid,
            gid,
        };
        lent.change(0, uid, gid)?;
        Ok(lent)
    }

    /// The owners read before the build, as lending left them: what the check after the build
    /// compares with (every root-owned entry of the worktree but `.git`'s is `nobody`'s now).
    fn as_lent(&self, entries: &tree::store::Store, inodes: &mut tree::BaselineInodes) {
        for (index, inode) in inodes.iter_mut() {
            if inode.uid == 0 && !tree::in_git_dir(entries.path(index)) {
                inode.uid = self.uid;
                inode.gid = self.gid;
            }
        }
    }

    fn restore(&self) -> Result<(), SandboxError> {
        self.change(self.uid, 0, 0)
    }

    /// Every entry owned by `from` gets `to_uid:to_gid`.
    fn change(&self, from: u32, to_uid: u32, to_gid: u32) -> Result<(), SandboxError> {
        let mut stack = self.roots.clone();
        while let Some(path) = stack.pop() {
            if self.skip.as_deref() == Some(path.as_path()) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path)
                .map_err(io_error(format!("{}", path.display())))?;
            if meta.uid() == from {
                std::os::unix::fs::lchown(&path, Some(to_uid), Some(to_gid))
                    .map_err(io_error(format!("chown {}", path.display())))?;
            }
            if meta.is_dir() {
                for entry in
                    std::fs::read_dir(&path).map_err(io_error(format!("{}", path.display())))?
                {
                    stack.push(
                        entry
                            .map_err(io_error(format!("{}", path.display())))?
                            .path(),
                    );
                }
            }
        }
        Ok(())
    }
}

/// The canonical form of an existing directory, or `None` when it does not exist.
fn existing_dir(path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok().filter(|p| p.is_dir())
}

/// Which host directories the build must not see (see the module docs).
fn hidden_dirs(spec: &RunSpec, build_uid: u32) -> Vec<PathBuf> {
    let mut hidden: Vec<PathBuf> = ALWAYS_HIDDEN.iter().map(PathBuf::from).collect();
    if let Some(home) = std::env::var_os("HOME") {
        hidden.push(PathBuf::from(home));
    }
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        let uid = build_uid.to_string();
        for line in passwd.lines() {
            let fields: Vec<&str> = line.split(':').collect();
            if fields.get(2) == Some(&uid.as_str())
                && let Some(home) = fields.get(5)
            {
                hidden.push(PathBuf::from(home));
            }
        }
    }
    for name in RUNNER_DIRS {
        if let Some(dir) = std::env::var_os(name).map(PathBuf::from) {
            hidden.push(dir.clone());
            if *name == "RUNNER_TEMP" {
                if let Some(work_root) = dir.parent() {
                    hidden.push(work_root.to_path_buf());
                }
                for ancestor in dir.ancestors().skip(1) {
                    if RUNNER_ROOT_MARKERS
                        .iter()
                        .any(|m| ancestor.join(m).exists())
                    {
                        hidden.push(ancestor.to_path_buf());
                    }
                }
            }
            if *name == "GITHUB_WORKSPACE"
                && let Some(parent) = dir.parent()
            {
                hidden.push(parent.to_path_buf());
            }
        }
    }
    hidden.extend(spec.hide.iter().cloned());
    let mut out: Vec<PathBuf> = hidden
        .iter()
        .filter_map(|p| existing_dir(p))
        .filter(|p| p.parent().is_some())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The directories to cover inside the view: each candidate strictly beneath a read-only source
/// (a system directory, a toolchain), unless it is, or lies inside, a writable bind (the build's
/// own files), is bound itself (what is declared is shown), is scratch, or lies inside another
/// cover with no source between them.
fn covers(
    candidates: Vec<PathBuf>,
    ro_sources: &[PathBuf],
    writable: &[PathBuf],
    bound: &[PathBuf],
    scratch: &[PathBuf],
) -> Vec<PathBuf> {
    let mut kept: Vec<PathBuf> = candidates
        .into_iter()
        .filter(|h| ro_sources.iter().any(|s| h != s && mounts::within(h, s)))
        .filter(|h| !view::beneath_any(h, writable) && !bound.contains(h) && !scratch.contains(h))
        .collect();
    kept.sort();
    kept.dedup();
    // Inside another cover a directory is hidden already, unless a source between the two
    // shows the host's tree again.
    let outer = kept.clone();
    kept.retain(|h| {
        !outer.iter().any(|o| {
            o != h
                && mounts::within(h, o)
                && !ro_sources
                    .iter()
                    .any(|s| s != o && mounts::within(s, o) && mounts::within(h, s))
        })
    });
    kept
}

/// The directories of `sockets` that hold nothing but sockets (a daemon's socket directory):
/// hidden whole, so that a socket bound there later, or bound again after a restart, is hidden
/// too. A directory with anything else in it may hold what the build needs: its sockets are
/// masked one by one in the setup stage.
fn socket_dirs(sockets: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let only_sockets = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            let mut any = false;
            for entry in entries {
                match entry.and_then(|e| e.file_type()) {
                    Ok(t) if t.is_socket() => any = true,
                    _ => return false,
                }
            }
            any
        })
    };
    let mut dirs: Vec<PathBuf> = sockets
        .iter()
        .filter_map(|s| s.parent())
        .filter_map(existing_dir)
        .filter(|d| d.parent().is_some() && only_sockets(d))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Tries the namespaces.
fn sandboxed(
    spec: &RunSpec,
    env_plan: &EnvPlan,
    cwd: &Path,
    git_dir: Option<PathBuf>,
    home: &Path,
    network: bool,
) -> Result<Attempt, SandboxError> {
    if network && spec.hook == Some(NamespaceHook::NoNetwork) {
        return Ok(Attempt::Unavailable(
            "no network namespace (simulated by the test hook)".into(),
        ));
    }
    let unshare = match spec.hook {
        None | Some(NamespaceHook::NoNetwork | NamespaceHook::NoLandlock) => find_tool(UNSHARE),
        Some(NamespaceHook::Missing) => Some(PathBuf::from("/nonexistent/unshare")),
        Some(NamespaceHook::Silent) => find_tool(TRUE),
    };
    let Some(unshare) = unshare else {
        return Ok(Attempt::Unavailable(format!(
            "no unshare binary at {}",
            UNSHARE.join(" or ")
        )));
    };
    let identity = build_identity(cwd)?;
    let setpriv = find_tool(SETPRIV);
    if identity.switch && setpriv.is_none() {
        return Ok(Attempt::Unavailable(format!(
            "started as root, the guard needs setpriv ({}) to leave root for the build",
            SETPRIV.join(" or ")
        )));
    }
    let canonical = |flag: &'static str, path: &Path| -> Result<PathBuf, SandboxError> {
        existing_dir(path).ok_or_else(|| SandboxError::Path {
            flag,
            path: path.to_path_buf(),
            reason: "not an existing directory".into(),
        })
    };
    let mut writable = vec![cwd.to_path_buf()];
    for dir in &spec.writable {
        writable.push(canonical("--writable", dir)?);
    }
    let mut read_only = Vec::new();
    for dir in &spec.read_only {
        read_only.push(canonical("--read-only", dir)?);
    }
    for (name, value) in &env_plan.vars {
        if (name == "CARGO_HOME" || name == "RUSTUP_HOME")
            && let Some(dir) = existing_dir(Path::new(value))
        {
            read_only.push(dir);
        }
    }
    let guard_exe = spec.guard_exe.canonicalize().map_err(io_error(format!(
        "locate the guard binary {} (the stages run it again, as the build user)",
        spec.guard_exe.display()
    )))?;
    let scratch: Vec<PathBuf> = SCRATCH.iter().map(PathBuf::from).collect();
    let system = view::system_entries().map_err(io_error("read the system directories"))?;
    let host_sockets = proof::host_unix_sockets().map_err(io_error("read /proc/net/unix"))?;
    // Only a read-only bind shows the host's tree, so only there is anything left to hide.
    let ro_sources: Vec<PathBuf> = system
        .iter()
        .filter(|e| e.source == view::Source::Host)
        .map(|e| e.path.clone())
        .chain(read_only.iter().cloned())
        .collect();
    // Started as root, the build writes to an overlay over the checkout, never to the checkout;
    // the layer's directory is hidden wherever a read-only bind would show it.
    let layer = if identity.switch {
        Some(Box::new(WriteLayer::create(
            &std::env::temp_dir(),
            cwd,
            spec.write_budget,
        )?))
    } else {
        None
    };
    let mut candidates = hidden_dirs(spec, identity.uid);
    candidates.extend(layer.as_ref().map(|l| l.dir().to_path_buf()));
    candidates.extend(socket_dirs(&host_sockets.paths));
    let hidden = covers(candidates, &ro_sources, &writable, &read_only, &scratch);
    let view = view::plan(
        system,
        &view::Parts {
            worktree: cwd,
            layer: layer.as_deref().map(WriteLayer::dir),
            git_dir: git_dir.as_deref(),
            outputs: writable.get(1..).unwrap_or_default(),
            toolchains: &read_only,
            guard: &guard_exe,
            scratch: &scratch,
            hidden: &hidden,
            home,
        },
    )
    .map_err(io_error("plan the view"))?;
    read_only.push(guard_exe.clone());
    let stat =
        std::fs::read_to_string("/proc/self/stat").map_err(io_error("read /proc/self/stat"))?;
    let outer_start_time = proof::start_time(&stat).ok_or_else(|| SandboxError::Io {
        context: "read /proc/self/stat".into(),
        source: io::Error::new(io::ErrorKind::InvalidData, "no start time"),
    })?;
    let ns = |kind: &str| {
        probe::namespace_id(kind).map_err(io_error(format!("read /proc/self/ns/{kind}")))
    };
    let nonce = nonce()?;
    // A control group where the host allows one (root): the bound of all the build's memory.
    // Whole 64 KiB units: the kernel keeps the limit in pages (up to 64 KiB on aarch64) and
    // reads back what it kept, which the proof compares.
    let memory_max = spec
        .memory_max
        .or_else(|| cgroup::mem_total().map(|m| m / 4 * 3))
        .unwrap_or(4 << 30)
        & !0xffff;
    let (group, cgroup_unavailable) = if identity.switch {
        match BuildCgroup::create(&nonce, memory_max, spec.limits.processes) {
            Ok(group) => (Some(group), None),
            Err(reason) => (None, Some(reason)),
        }
    } else {
        (
            None,
            Some("started as an ordinary user: no control group of its own".to_string()),
        )
    };
    let plan = StagePlan {
        nonce,
        outer_netns: ns("net")?,
        outer_userns: ns("user")?,
        outer_pidns: ns("pid")?,
        outer_mntns: ns("mnt")?,
        guard_exe,
        unshare,
        ip: find_tool(IP),
        build_uid: identity.uid,
        build_gid: identity.gid,
        cwd: cwd.to_path_buf(),
        home: home.to_path_buf(),
        git_dir,
        writable,
        read_only,
        scratch,
        hidden,
        view,
        outer_pid: std::process::id(),
        outer_start_time,
        host_sockets: host_sockets.paths,
        masked_sockets: Vec::new(),
        mask_points: Vec::new(),
        unlocated_sockets: host_sockets.relative,
        limits: spec.limits,
        privileged_setup: identity.switch,
        setpriv: setpriv.clone(),
        network_namespace: network,
        without_landlock: spec.hook == Some(NamespaceHook::NoLandlock),
        landlock_abi_at_most: spec.landlock_abi_at_most,
        cgroup: group.as_ref().map(|g| stage::CgroupPlan {
            version: g.version,
            dirs: g.dirs.clone(),
            memory_max: g.memory_max,
            pids_max: g.pids_max,
        }),
        cgroup_unavailable,
    };
    // The core limit every stage inherits, raised here while this process may still raise a
    // hard limit (root in the host's user namespace; `sudo` starts commands with a hard core
    // limit of 0, and no capability inside a new user namespace raises it): 0 does not stop a
    // dump to a pipe `core_pattern`, 1 does. Unprivileged, a hard limit of 0 stays 0 and the
    // enter stage refuses.
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 1, 1);
    let mut cmd = match &setpriv {
        Some(setpriv) => {
            let mut cmd = Command::new(setpriv);
            cmd.args(["--pdeathsig", "KILL", "--"]).arg(&plan.unshare);
            cmd
        }
        None => Command::new(&plan.unshare),
    };
    if !identity.switch {
        // Not root: the first user namespace maps only the build user (its root).
        cmd.args(["--user", "--map-root-user"]);
    }
    cmd.args(["--pid", "--fork", "--kill-child", "--mount"]);
    if network {
        cmd.arg("--net");
    }
    cmd.args([
        "--ipc",
        "--uts",
        "--cgroup",
        "--propagation",
        "private",
        "--",
    ])
    .arg(&plan.guard_exe)
    .args(
        plan.to_args("setup", &spec.command)
            .map_err(|detail| SandboxError::Protocol { detail })?,
    );
    let chowned = if identity.lend {
        Some(Chowned::lend(
            plan.writable.clone(),
            plan.git_dir.clone(),
            identity.uid,
            identity.gid,
        )?)
    } else {
        None
    };
    if let Some(layer) = &layer {
        layer.match_root()?;
    }
    let capture = Capture::sandboxed(&plan.nonce, spec.max_output);
    let finished = supervise(cmd, env_plan, cwd, capture, spec.timeout, group.as_ref())?;
    let finished = match finished {
        Ok(finished) => finished,
        Err(err) => {
            if let Some(c) = &chowned {
                c.restore()?;
            }
            return Ok(Attempt::Unavailable(format!(
                "cannot start {}: {err}",
                plan.unshare.display()
            )));
        }
    };
    let result = judge(&plan, finished);
    if let Some(c) = &chowned
        && !matches!(result, Ok(Attempt::Ran(..)))
    {
        c.restore()?;
    }
    match result? {
        Attempt::Ran(finished, isolation, _, _) => {
            Ok(Attempt::Ran(finished, isolation, chowned, layer))
        }
        other => Ok(other),
    }
}

/// The outer process's reading of a finished sandbox: it started, its proof holds, and nothing
/// of it is alive any more.
fn judge(plan: &StagePlan, finished: Finished) -> Result<Attempt, SandboxError> {
    if !finished.capture.started {
        return Ok(Attempt::Unavailable(not_started(&finished)));
    }
    let probe = match &finished.capture.probe {
        Some(Ok(probe)) => probe.clone(),
        Some(Err(e)) => return Err(SandboxError::Protocol { detail: e.clone() }),
        None => {
            return Err(SandboxError::Protocol {
                detail: "the command started without a probe".into(),
            });
        }
    };
    let allowed = plan.writable_allowed();
    let skeleton = env::home_skeleton();
    let problems = probe.problems(&plan.expectations(&allowed, &skeleton));
    if !problems.is_empty() {
        return Err(SandboxError::Protocol {
            detail: format!(
                "the command started although isolation was not proven: {}",
                problems.join("; ")
            ),
        });
    }
    wait_for_namespace_end(&probe.pidns)?;
    let layers = layers(&probe, plan.network_namespace);
    let isolation = Isolation::Namespace {
        netns_differs: probe.network.netns != plan.outer_netns,
        userns_differs: probe.network.userns != plan.outer_userns,
        git_dir_read_only: probe.network.git_dir_read_only == Some(true),
        layers,
        hidden: plan.hidden.clone(),
        writable: plan.writable.clone(),
        probe: Box::new(probe),
        network_opt_out: None,
    };
    Ok(Attempt::Ran(Box::new(finished), isolation, None, None))
}

/// The layers a passing proof shows, by name.
fn layers(probe: &ContainmentProbe, network: bool) -> Vec<String> {
    let mut layers: Vec<String> = [
        "environment-scrubbed",
        "user-namespaces",
        "pid-namespace",
        "network-namespace",
        "ipc-uts-cgroup-namespaces",
        "allowlisted-view",
        "read-only-locked-host",
        "host-sockets-masked",
        "fresh-dev-proc-tmp",
        "private-home",
        "no-capabilities",
        "no-new-privs",
        "no-nested-user-namespaces",
        "resource-limits",
        "core-dumps-off",
        "no-controlling-terminal",
        "proc-keys-masked",
    ]
    .iter()
    .filter(|s| network || **s != "network-namespace")
    .map(|s| s.to_string())
    .collect();
    if probe.network.git_dir_read_only == Some(true) {
        layers.push("git-dir-read-only".into());
    }
    layers.push(format!(
        "landlock-abi-{}-{}",
        probe.landlock.abi, probe.landlock.ruleset
    ));
    if probe.landlock.scoped {
        layers.push("landlock-scoped-abstract-sockets-and-signals".into());
    }
    if probe.landlock.pathname_sockets_restricted {
        layers.push("landlock-pathname-unix-sockets".into());
    }
    // Proven by every passing probe (mode 2, both filters, ADDR_NO_RANDOMIZE refused).
    layers.push("seccomp".into());
    if probe.memory.cgroup_version > 0 {
        layers.push(format!("memory-cgroup-v{}", probe.memory.cgroup_version));
    }
    layers.push(format!(
        "tmpfs-budget-{}-mib",
        probe.memory.tmpfs_budget >> 20
    ));
    layers
}

/// Waits until no process is left in the pid namespace `pidns` (`pid:[N]`).
fn wait_for_namespace_end(pidns: &str) -> Result<(), SandboxError> {
    let deadline = Instant::now() + NAMESPACE_GRACE;
    loop {
        let alive: Vec<String> = std::fs::read_dir("/proc")
            .map_err(io_error("read /proc"))?
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .filter(|e| {
                std::fs::read_link(e.path().join("ns/pid"))
                    .is_ok_and(|l| l.as_os_str() == OsStr::new(pidns))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if alive.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(SandboxError::Protocol {
                detail: format!(
                    "processes {} of the sandbox's pid namespace outlived it",
                    alive.join(", ")
                ),
            });
        }
        thread::sleep(POLL);
    }
}

/// Why a sandbox attempt ended before its `exec` announcement.
fn not_started(finished: &Finished) -> String {
    let capture = &finished.capture;
    let mut detail = match &capture.refused {
        Some(reason) => format!("the sandbox refused: {reason}"),
        None => {
            let how = finished.exit.describe(finished.timed_out);
            format!("the sandbox {how} before starting the command")
        }
    };
    let preamble = capture.preamble_text();
    if !preamble.is_empty() {
        detail.push_str(&format!(" ({})", crate::escape::neutralize(&preamble)));
    }
    detail
}

fn find_tool(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// 128 random bits from the kernel, hex.
fn nonce() -> Result<String, SandboxError> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(io_error("read /dev/urandom"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

struct Finished {
    exit: ExitRecord,
    timed_out: bool,
    duration: Duration,
    capture: Capture,
}

/// Spawns `cmd` in its own process group with the planned environment, captures its output and
/// enforces the timeout. The inner `Err` is a failure to spawn. `cgroup`: the group the child
/// starts in (this process enters it for the spawn and leaves it right after).
fn supervise(
    mut cmd: Command,
    env_plan: &EnvPlan,
    cwd: &Path,
    capture: Capture,
    timeout: Duration,
    cgroup: Option<&BuildCgroup>,
) -> Result<Result<Finished, io::Error>, SandboxError> {
    let (mut reader, writer) = io::pipe().map_err(io_error("create the output pipe"))?;
    let writer_err = writer
        .try_clone()
        .map_err(io_error("create the output pipe"))?;
    cmd.env_clear()
        .envs(env_plan.vars.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_err)
        .process_group(0);
    let start = Instant::now();
    if let Some(group) = cgroup
        && let Err(e) = group.enter()
    {
        let _ = group.leave();
        return Err(SandboxError::Io {
            context: "enter the build's control group".into(),
            source: e,
        });
    }
    let spawned = cmd.spawn();
    if let Some(group) = cgroup {
        group
            .leave()
            .map_err(io_error("leave the build's control group"))?;
    }
    // The Command holds our copies of the pipe's write end; the reader sees EOF only without them.
    drop(cmd);
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => return Ok(Err(err)),
    };
    let shared = Arc::new(Mutex::new(capture));
    let reader_thread = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => lock(&shared).feed(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })
    };
    let pgid = child.id();
    let (status, timed_out) = wait_with_timeout(&mut child, pgid, timeout)?;
    let duration = start.elapsed();
    let deadline = Instant::now() + OUTPUT_GRACE;
    while !reader_thread.is_finished() && Instant::now() < deadline {
        thread::sleep(POLL);
    }
    // A process that escaped the group may still hold the pipe; what was read so far is kept.
    let capture = std::mem::replace(&mut *lock(&shared), Capture::direct(0));
    Ok(Ok(Finished {
        exit: ExitRecord::from_status(status),
        timed_out,
        duration,
        capture,
    }))
}

fn wait_with_timeout(
    child: &mut Child,
    pgid: u32,
    timeout: Duration,
) -> Result<(ExitStatus, bool), SandboxError> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(io_error("wait for the command"))? {
            return Ok((status, false));
        }
        if start.elapsed() >= timeout {
            // The group first (while its leader is unreaped, its id cannot be reused), then the
            // leader itself in case there is no kill binary. With a pid namespace, the leader's
            // death takes the namespace's init, and with it everything inside, down too.
            kill_group(pgid);
            let _ = child.kill();
            let status = child
                .wait()
                .map_err(io_error("wait for the killed command"))?;
            return Ok((status, true));
        }
        thread::sleep(POLL);
    }
}

/// `kill -KILL -- -PGID` with the system's kill binary.
fn kill_group(pgid: u32) {
    let Some(kill) = find_tool(KILL) else { return };
    let _ = Command::new(kill)
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn lock(shared: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// Only what a read-only source would show is covered: not what the view does not hold
    /// anyway, not the build's own writable tree, not a declared directory itself, and not a
    /// directory inside another cover.
    #[test]
    fn covers_are_kept_only_inside_read_only_sources() {
        let p = |s: &str| PathBuf::from(s);
        let kept = covers(
            vec![
                p("/run"),
                p("/home/runner"),
                p("/home/runner/work/_temp"),
                p("/home/runner/.cargo/bin"),
                p("/opt/tool/secret"),
                p("/opt/tool"),
                p("/home/runner/work/r/r/work/sub"),
                p("/tmp"),
                p("/usr/local/daemon"),
                p("/home/runner/deps/secret"),
            ],
            &[
                p("/usr"),
                p("/home"),
                p("/opt/tool"),
                p("/home/runner/.cargo/bin"),
                p("/home/runner/deps"),
            ],
            &[p("/home/runner/work/r/r/work")],
            &[
                p("/opt/tool"),
                p("/home/runner/.cargo/bin"),
                p("/home/runner/deps"),
            ],
            &[p("/tmp"), p("/var/tmp")],
        );
        // `/home/runner/work/_temp` is inside the cover of `/home/runner`; the declared
        // `/home/runner/deps` shows the host's tree again beneath it, so its `secret` is covered
        // on its own.
        assert_eq!(
            kept,
            [
                p("/home/runner"),
                p("/home/runner/deps/secret"),
                p("/opt/tool/secret"),
                p("/usr/local/daemon")
            ]
        );
    }
}
