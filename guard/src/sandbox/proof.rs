//! The isolation proof: what the last stage sees from inside, under every layer, just before it
//! execs the command. It is read without sending traffic (the network part is [`NetworkProbe`]),
//! announced on the output pipe before the command exists (see [`super::capture`]), and checked
//! twice: by the stage, which refuses to exec on any problem, and by the outer process.

use std::collections::BTreeSet;
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cgroup::CgroupPlan;
use super::mounts::{self, MountEntry};
use super::probe::NetworkProbe;
use super::view::ViewProof;

/// Everything the last stage proves about its own view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainmentProbe {
    pub network: NetworkProbe,
    /// `readlink /proc/self/ns/{pid,mnt,ipc,uts}`.
    pub pidns: String,
    pub mntns: String,
    pub ipcns: String,
    pub utsns: String,
    /// Real, effective, saved and file-system ids as the command's namespace shows them.
    pub uids: Vec<u32>,
    pub gids: Vec<u32>,
    pub groups: Vec<u32>,
    /// `CapInh`, `CapPrm`, `CapEff`, `CapAmb`, `CapBnd` of `/proc/self/status`, hex.
    pub capabilities: Capabilities,
    pub no_new_privs: bool,
    /// What `unshare(CLONE_NEWUSER)` answered: it must be refused.
    pub nested_userns: String,
    pub nested_userns_refused: bool,
    pub landlock: LandlockProof,
    /// Mount points the command can reach whose mount is writable.
    pub writable_mounts: Vec<String>,
    /// Read-only mounts in the view.
    pub read_only_mounts: u64,
    /// Pathname UNIX sockets bound on the host (outer network namespace) that were checked, and
    /// those of them that still resolve to a socket in this view.
    pub host_sockets_checked: u64,
    pub reachable_sockets: Vec<String>,
    /// Host sockets the setup stage covered with an empty read-only file, each seen covered here
    /// (the path resolves to an empty regular file, no longer to a socket).
    pub masked_sockets: Vec<String>,
    /// Host sockets bound under a relative name: the binder's directory is unknown, so they
    /// cannot be located, masked or checked (only Landlock's `ResolveUnix` covers them).
    pub unlocated_sockets: u64,
    /// Entries visible in a hidden directory that are not mount points the plan put there.
    pub hidden_leftovers: Vec<String>,
    /// The view: every source the command can see, each checked to be what the plan built.
    pub view: ViewProof,
    /// The command's `HOME` as it finds it.
    pub home: HomeProof,
    /// Whether creating a file at the root of the view failed.
    pub root_write_refused: bool,
    pub rlimits: Vec<RlimitProof>,
    /// Descriptors open besides 0, 1 and 2 just before `exec`.
    pub open_fds: Vec<String>,
    pub seccomp: SeccompProof,
    /// `tty_nr` of `/proc/self/stat`: 0 when the process has no controlling terminal (its own
    /// session, made by the setup stage).
    pub controlling_terminal: u64,
    /// Whether `/dev/tty` is absent from the view.
    pub dev_tty_absent: bool,
    /// Whether `/proc/keys` shows nothing (masked, as Docker masks it).
    pub proc_keys_masked: bool,
    pub memory: MemoryProof,
}

/// The build's private `HOME`: a directory of the fresh `/tmp` that only the build user may
/// enter, holding nothing but the empty XDG directories, all of them writable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeProof {
    pub path: String,
    pub uid: u32,
    pub gid: u32,
    /// Permission bits, octal (`0700`).
    pub mode: String,
    /// Everything beneath it before the command starts, relative, sorted.
    pub entries: Vec<String>,
    /// Directories among it and its XDG directories where a new file cannot be created.
    pub not_writable: Vec<String>,
}

/// Which bound holds the build's memory as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryProof {
    /// 0: no control group of its own (then `cgroup_unavailable` says why, and only the tmpfs
    /// sizes and the per-process limits bound it).
    pub cgroup_version: u8,
    /// Whether this process is in the planned group (its `cgroup.procs` lists it).
    pub cgroup_member: bool,
    /// The group's limits as its files read (`memory.max` or `memory.limit_in_bytes`, `pids.max`).
    pub memory_max: Option<u64>,
    pub pids_max: Option<u64>,
    pub cgroup_unavailable: Option<String>,
    /// What the writable tmpfs of the view may hold together, in bytes.
    pub tmpfs_budget: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeccompProof {
    /// `Seccomp:` of `/proc/self/status` (2: filter mode) and `Seccomp_filters:`.
    pub mode: String,
    pub filters: u64,
    /// The filters this stage installed.
    pub installed: u64,
    /// What `personality(ADDR_NO_RANDOMIZE)` answered: it must be refused.
    pub aslr_weakening: String,
    pub aslr_weakening_refused: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    pub inheritable: String,
    pub permitted: String,
    pub effective: String,
    pub ambient: String,
    pub bounding: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LandlockProof {
    /// The kernel's Landlock ABI version (0: none).
    pub abi: u32,
    /// `fully-enforced`, `partially-enforced` or `not-enforced`.
    pub ruleset: String,
    /// Write access handled (denied outside the allowlist).
    pub writes_restricted: bool,
    /// Abstract UNIX sockets and signals scoped to the sandbox (ABI 6).
    pub scoped: bool,
    /// `connect()`/`sendmsg()` to pathname UNIX sockets allowed only beneath the writable
    /// directories (`LANDLOCK_ACCESS_FS_RESOLVE_UNIX`, ABI 9): a host socket bound after the
    /// masks were placed is unreachable too.
    pub pathname_sockets_restricted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RlimitProof {
    pub name: String,
    /// `None`: unlimited.
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// What the plan expects the proof to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectations<'a> {
    pub outer_netns: &'a str,
    pub outer_userns: &'a str,
    pub outer_pidns: &'a str,
    pub outer_mntns: &'a str,
    /// The only mount points that may be writable.
    pub writable_allowed: &'a BTreeSet<PathBuf>,
    pub build_uid: u32,
    pub build_gid: u32,
    /// The skeleton of the fresh `HOME` ([`super::env::XDG_DIRS`] and their parents).
    pub home_entries: &'a [String],
    pub git_dir: bool,
    /// Whether the sandbox has a network namespace of its own.
    pub network_namespace: bool,
    /// The control group the sandbox must be in.
    pub cgroup: Option<&'a CgroupPlan>,
}

const ZERO_CAPS: &str = "0000000000000000";

impl ContainmentProbe {
    /// Why this proof does not show the sandbox (empty when it does).
    pub fn problems(&self, expect: &Expectations<'_>) -> Vec<String> {
        let mut problems = self.network.problems(
            expect.outer_netns,
            expect.outer_userns,
            expect.network_namespace,
        );
        if expect.git_dir && self.network.git_dir_read_only != Some(true) {
            problems.push(".git is not read-only".into());
        }
        if self.pidns == expect.outer_pidns {
            problems.push(format!("pid namespace {} is the outer one", self.pidns));
        }
        if self.mntns == expect.outer_mntns {
            problems.push(format!("mount namespace {} is the outer one", self.mntns));
        }
        let caps = &self.capabilities;
        for (name, value) in [
            ("inheritable", &caps.inheritable),
            ("permitted", &caps.permitted),
            ("effective", &caps.effective),
            ("ambient", &caps.ambient),
        ] {
            if value != ZERO_CAPS {
                problems.push(format!(
                    "the command would hold {name} capabilities {value}"
                ));
            }
        }
        if self.uids.iter().any(|u| *u != expect.build_uid) || self.uids.len() != 4 {
            problems.push(format!(
                "uids {:?} are not the build user {}",
                self.uids, expect.build_uid
            ));
        }
        if self.gids.iter().any(|g| *g != expect.build_gid) || self.gids.len() != 4 {
            problems.push(format!(
                "gids {:?} are not the build group {}",
                self.gids, expect.build_gid
            ));
        }
        if expect.build_uid == 0 {
            problems.push("the build user is root".into());
        }
        if self.groups.iter().any(|g| *g != expect.build_gid) {
            problems.push(format!("supplementary groups {:?}", self.groups));
        }
        if !self.no_new_privs {
            problems.push("no_new_privs is not set".into());
        }
        if !self.nested_userns_refused {
            problems.push(format!(
                "a nested user namespace could be created ({})",
                self.nested_userns
            ));
        }
        if self.landlock.ruleset == "not-enforced" || !self.landlock.writes_restricted {
            problems.push(format!(
                "Landlock does not restrict writes (ABI {}, ruleset {})",
                self.landlock.abi, self.landlock.ruleset
            ));
        }
        let unexpected: Vec<&str> = self
            .writable_mounts
            .iter()
            .filter(|m| !expect.writable_allowed.contains(Path::new(m.as_str())))
            .map(String::as_str)
            .collect();
        if !unexpected.is_empty() {
            problems.push(format!(
                "writable mounts outside the allowlist: {}",
                unexpected.join(", ")
            ));
        }
        if !self.reachable_sockets.is_empty() {
            problems.push(format!(
                "host UNIX sockets reachable: {}",
                self.reachable_sockets.join(", ")
            ));
        }
        problems.extend(self.view.problems());
        let home = &self.home;
        if (home.uid, home.gid) != (expect.build_uid, expect.build_gid) || home.mode != "0700" {
            problems.push(format!(
                "HOME {} is {}:{} mode {}, not the build user's alone",
                home.path, home.uid, home.gid, home.mode
            ));
        }
        if home.entries != expect.home_entries {
            problems.push(format!(
                "HOME {} holds {:?} before the build",
                home.path, home.entries
            ));
        }
        if !home.not_writable.is_empty() {
            problems.push(format!(
                "the build cannot write {}",
                home.not_writable.join(", ")
            ));
        }
        // Without a network namespace the host's abstract UNIX sockets are one `connect()`
        // away, and only Landlock's scoping (ABI 6) keeps the build from them.
        if !expect.network_namespace && self.landlock.writes_restricted && !self.landlock.scoped {
            problems.push(format!(
                "--no-isolation-because cannot be honoured here: without a network namespace \
                 the build reaches the host's abstract UNIX sockets unless Landlock scopes them \
                 (ABI 6, Linux 6.12), and this kernel's Landlock is ABI {}",
                self.landlock.abi
            ));
        }
        if !self.hidden_leftovers.is_empty() {
            problems.push(format!(
                "hidden directories show entries: {}",
                self.hidden_leftovers.join(", ")
            ));
        }
        if !self.open_fds.is_empty() {
            problems.push(format!(
                "descriptors {} would leak into the command",
                self.open_fds.join(", ")
            ));
        }
        if !self.root_write_refused {
            problems.push("the root of the view is writable".into());
        }
        let seccomp = &self.seccomp;
        if seccomp.mode != "2" || seccomp.installed < 2 || seccomp.filters < seccomp.installed {
            problems.push(format!(
                "the seccomp filters are not in force (mode {}, {} filters, {} installed)",
                seccomp.mode, seccomp.filters, seccomp.installed
            ));
        }
        if !seccomp.aslr_weakening_refused {
            problems.push(format!(
                "personality(ADDR_NO_RANDOMIZE) was not refused ({})",
                seccomp.aslr_weakening
            ));
        }
        if self.controlling_terminal != 0 {
            problems.push(format!(
                "the command would have a controlling terminal (tty {})",
                self.controlling_terminal
            ));
        }
        if !self.dev_tty_absent {
            problems.push("/dev/tty is in the view".into());
        }
        if let Some(group) = expect.cgroup {
            let memory = &self.memory;
            if !memory.cgroup_member
                || memory.memory_max != Some(group.memory_max)
                || memory.pids_max != Some(group.pids_max)
            {
                problems.push(format!(
                    "not bounded by the control group {:?} (member: {}, memory {:?}, pids {:?})",
                    group.dirs, memory.cgroup_member, memory.memory_max, memory.pids_max
                ));
            }
        }
        if !self.proc_keys_masked {
            problems.push("/proc/keys shows the kernel's keys".into());
        }
        // 1 stops every dump; 0 stops every dump but one to a pipe `core_pattern`.
        let core = self.rlimits.iter().find(|r| r.name == "core");
        let stopped =
            |value: u64| core.is_some_and(|c| c.soft == Some(value) && c.hard == Some(value));
        let zero_suffices = stopped(0) && !core_pattern_is_pipe();
        if !stopped(1) && !zero_suffices {
            problems.push(format!(
                "RLIMIT_CORE is not 1 (the value that also stops a dump to a pipe), nor 0 with a core_pattern that is not a pipe: {core:?}"
            ));
        }
        problems
    }
}

/// Whether the kernel hands core dumps to a program (`core_pattern` starting with `|`), which
/// ignores an `RLIMIT_CORE` of 0; unreadable counts as a pipe.
pub fn core_pattern_is_pipe() -> bool {
    std::fs::read("/proc/sys/kernel/core_pattern").map_or(true, |p| p.starts_with(b"|"))
}

/// `Name:\tvalue` lines of `/proc/self/status`.
pub fn status_field(status: &str, name: &str) -> Option<String> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// Numbers of a `/proc/self/status` id line (`Uid:`, `Gid:`, `Groups:`).
pub fn status_ids(status: &str, name: &str) -> Vec<u32> {
    status_field(status, name)
        .map(|v| {
            v.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The mount id of the mount `path` resolves to, from `/proc/self/fdinfo` of an `O_PATH`
/// descriptor; `None` when the path cannot be reached (it does not resolve, or a component is
/// not searchable): then the command cannot reach it either.
fn reached_mount_id(path: &Path) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_PATH.bits() | nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
        .ok()?;
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", file.as_raw_fd())).ok()?;
    status_field(&info, "mnt_id")?.parse().ok()
}

/// The writable mounts the calling process can reach, and how many read-only mounts it sees. A
/// writable mount is reachable when opening its mount point lands on that very mount (not on
/// one mounted over it, and not refused on the way).
pub fn writable_mounts(entries: &[MountEntry]) -> (Vec<String>, u64) {
    let mut writable = Vec::new();
    let mut read_only = 0;
    for entry in entries {
        if entry.read_only() {
            read_only += 1;
            continue;
        }
        if reached_mount_id(&entry.mount_point) == Some(entry.id) {
            writable.push(entry.mount_point.to_string_lossy().into_owned());
        }
    }
    writable.sort();
    writable.dedup();
    (writable, read_only)
}

/// The sockets among `paths` that still resolve to a socket (following links, as `connect`
/// does).
pub fn reachable_sockets(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.file_type().is_socket()))
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// The paths among `masked` that show the mask: they resolve (following links, as `connect`
/// does) to an empty regular file.
pub fn masked_sockets(masked: &[PathBuf]) -> Vec<String> {
    masked
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() == 0))
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// The bound pathname sockets of one network namespace, from its `/proc/net/unix`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SocketTable {
    /// Absolute names, sorted, without duplicates.
    pub paths: Vec<PathBuf>,
    /// Sockets bound under a relative name (relative to a working directory the table does
    /// not show).
    pub relative: u64,
}

/// Parses `/proc/net/unix`. The kernel prints each socket as `%pK: %08X %08X %08X %04X %02X
/// %5lu`, then, for a bound socket, one space and the name byte for byte, unescaped (`@` first
/// for an abstract name): a name may hold spaces, and a newline in a name continues it on the
/// next line, which then does not have the shape of an entry.
pub fn parse_unix_sockets(text: &[u8]) -> SocketTable {
    use std::os::unix::ffi::OsStrExt;
    let mut names: Vec<Vec<u8>> = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    // Every entry ends with a newline: the one after the last entry ends the table (it does not
    // start a continuation line). The header line has no entry shape; it comes before any name.
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    for line in text.split(|b| *b == b'\n') {
        match socket_entry(line) {
            Some(name) => {
                names.extend(current.take());
                current = name.map(<[u8]>::to_vec);
            }
            None => {
                if let Some(name) = current.as_mut() {
                    name.push(b'\n');
                    name.extend_from_slice(line);
                }
            }
        }
    }
    names.extend(current);
    let mut table = SocketTable::default();
    for name in names {
        match name.first() {
            Some(b'/') => table
                .paths
                .push(PathBuf::from(std::ffi::OsStr::from_bytes(&name))),
            Some(b'@') | None => {}
            Some(_) => table.relative += 1,
        }
    }
    table.paths.sort();
    table.paths.dedup();
    table
}

/// `Some(name)` when `line` has the shape of a socket entry (`name` is `None` for an unbound
/// socket), `None` otherwise.
fn socket_entry(line: &[u8]) -> Option<Option<&[u8]>> {
    let hex = |t: &[u8], len: usize| t.len() == len && t.iter().all(u8::is_ascii_hexdigit);
    let mut rest = line;
    let mut token = || -> Option<&[u8]> {
        let start = rest.iter().position(|b| *b != b' ')?;
        let tail = &rest[start..];
        let end = tail.iter().position(|b| *b == b' ').unwrap_or(tail.len());
        rest = &tail[end..];
        Some(&tail[..end])
    };
    let pointer = token()?;
    let ok = pointer
        .strip_suffix(b":")
        .is_some_and(|p| !p.is_empty() && p.iter().all(u8::is_ascii_hexdigit))
        && hex(token()?, 8)
        && hex(token()?, 8)
        && hex(token()?, 8)
        && hex(token()?, 4)
        && hex(token()?, 2)
        && token().is_some_and(|i| !i.is_empty() && i.iter().all(u8::is_ascii_digit));
    if !ok {
        return None;
    }
    match rest.split_first() {
        None => Some(None),
        Some((b' ', name)) if !name.is_empty() => Some(Some(name)),
        Some(_) => None,
    }
}

/// The bound pathname sockets of the network namespace of the process whose `/proc/<pid>/net`
/// (or `/proc/net`) directory is `net`.
pub fn read_unix_sockets(net: &Path) -> io::Result<SocketTable> {
    Ok(parse_unix_sockets(&std::fs::read(net.join("unix"))?))
}

/// The host's bound pathname sockets, read in the calling process's network namespace.
pub fn host_unix_sockets() -> io::Result<SocketTable> {
    read_unix_sockets(Path::new("/proc/net"))
}

/// Field 7 of `/proc/<pid>/stat`, `tty_nr`: the controlling terminal's device number (0: none).
pub fn tty_nr(stat: &str) -> Option<u64> {
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(4)?.parse().ok()
}

/// Field 22 of `/proc/<pid>/stat`, the process's start time in clock ticks after boot: with the
/// pid, it names one process (a pid can be reused, the pair cannot).
pub fn start_time(stat: &str) -> Option<u64> {
    // The command name (field 2) is in parentheses and may hold anything but ends at the last ')'.
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Entries of the hidden directories that are neither bind mount points nor on the way to one.
pub fn hidden_leftovers(hidden: &[PathBuf], binds: &[PathBuf]) -> Vec<String> {
    let mut leftovers = Vec::new();
    for dir in hidden {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !binds.iter().any(|b| mounts::within(b, &path)) {
                leftovers.push(path.to_string_lossy().into_owned());
            }
        }
    }
    leftovers
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn parses_proc_net_unix() {
        let text = b"Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20395 /run/dbus/system_bus_socket
0000000000000000: 00000002 00000000 00010000 0001 01 20396 @/tmp/.X11-unix/X0
0000000000000000: 00000003 00000000 00000000 0001 03 20397
0000000000000000: 00000002 00000000 00010000 0001 01 20398 /tmp/x.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20399 /tmp/x.sock
";
        assert_eq!(
            parse_unix_sockets(text),
            SocketTable {
                paths: vec![
                    PathBuf::from("/run/dbus/system_bus_socket"),
                    PathBuf::from("/tmp/x.sock")
                ],
                relative: 0,
            }
        );
    }

    /// Names are printed raw: spaces (also leading and trailing ones), newlines, bytes that are
    /// not UTF-8; the inode is padded to five columns; relative names are counted, not located.
    #[test]
    fn parses_socket_names_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let mut text = b"Num       RefCount Protocol Flags    Type St Inode Path
00000000b3d9ff72: 00000002 00000000 00010000 0001 01   812 /home/a b.sock
00000000b3d9ff73: 00000002 00000000 00010000 0001 01 20396 /srv/line
two.sock
00000000b3d9ff74: 00000002 00000000 00010000 0001 01 20397 /srv/trailing 
00000000b3d9ff75: 00000002 00000000 00010000 0001 01 20398 relative.sock
00000000b3d9ff76: 00000002 00000000 00010000 0001 01 20399 @abstract name
00000000b3d9ff77: 00000002 00000000 00010000 0001 01 20400 /srv/"
            .to_vec();
        text.extend_from_slice(b"\xff\xfe.sock\n");
        let table = parse_unix_sockets(&text);
        assert_eq!(
            table.paths,
            [
                PathBuf::from("/home/a b.sock"),
                PathBuf::from("/srv/line\ntwo.sock"),
                PathBuf::from("/srv/trailing "),
                PathBuf::from(std::ffi::OsStr::from_bytes(b"/srv/\xff\xfe.sock")),
            ]
        );
        assert_eq!(table.relative, 1);
        // The last entry keeps its exact name; a name may itself end with a newline.
        let last = parse_unix_sockets(
            b"Num RefCount Protocol Flags Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20395 /srv/last.sock
",
        );
        assert_eq!(last.paths, [PathBuf::from("/srv/last.sock")]);
        let newline = parse_unix_sockets(
            b"Num RefCount Protocol Flags Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20395 /srv/nl

",
        );
        assert_eq!(newline.paths, [PathBuf::from("/srv/nl\n")]);
        // Not an entry: a header, a malformed line before any name, an empty table.
        assert_eq!(
            parse_unix_sockets(b"garbage /x.sock\n"),
            SocketTable::default()
        );
        assert_eq!(parse_unix_sockets(b""), SocketTable::default());
    }

    #[test]
    fn start_time_is_field_22() {
        let stat =
            "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 200";
        assert_eq!(start_time(stat), Some(98765));
        assert_eq!(tty_nr(stat), Some(0));
        assert_eq!(tty_nr("1 (sh) S 0 1 1 34816 1"), Some(34816));
        assert_eq!(start_time("4242 (x) S 1"), None);
    }

    #[test]
    fn status_lines() {
        let status =
            "Name:\tx\nUid:\t1001\t1001\t1001\t1001\nGroups:\t\nCapEff:\t0000000000000000\n";
        assert_eq!(status_ids(status, "Uid"), [1001, 1001, 1001, 1001]);
        assert!(status_ids(status, "Groups").is_empty());
        assert_eq!(status_field(status, "CapEff").as_deref(), Some(ZERO_CAPS));
    }
}
