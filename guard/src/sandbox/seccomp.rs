//! The seccomp layer: a deny-list of system calls that no build needs and that reach past the
//! other layers (the kernel's keyrings, the terminal's input queue, watches that report the
//! host's reads of the files the view shares with it, the kernel itself), compiled
//! with Firecracker's `seccompiler` and installed by the enter stage as the last step before the
//! proof is announced and the command exec'd. Filters survive `execve` and are inherited by every
//! child; nothing in the sandbox can remove them.
//!
//! Everything not listed is allowed. A call of another architecture's ABI (i386's `int 0x80` on
//! x86_64) kills the process: the filter is compiled for the guard's own architecture and
//! `seccompiler` kills on any other. The x32 ABI (the same numbers with bit 30 set on x86_64) is
//! denied for every listed call too. A guard built for an architecture `seccompiler` does not know
//! refuses to run the command (fail closed).
//!
//! Sources of the list: Docker's default profile (`profiles/seccomp/default.json`, moby), the
//! sets systemd names `@obsolete`, `@debug`, `@mount`, `@module`, `@reboot`, `@swap`, `@clock`,
//! `@raw-io`, `@cpu-emulation` (`systemd.exec(5)`, `SystemCallFilter=`), and the kernel's
//! `Documentation/userspace-api/seccomp_filter.rst`.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `TIOCSTI`: push bytes into a terminal's input queue (bubblewrap's CVE-2017-5226).
pub const TIOCSTI: u64 = 0x5412;
/// `TIOCLINUX`: the virtual console's subcommands, among them a selection paste into the input.
pub const TIOCLINUX: u64 = 0x541C;
/// `personality(2)` values that weaken nothing (Docker's list): `PER_LINUX`, `PER_LINUX32`,
/// `UNAME26`, `UNAME26 | PER_LINUX32`, and `0xffffffff`, which only queries.
pub const PERSONALITIES_ALLOWED: [u64; 5] = [0x0, 0x8, 0x20000, 0x20008, 0xffff_ffff];
/// Numbers the `libc` crate does not name on every target (its musl aarch64 module lacks
/// `kexec_file_load`, its glibc aarch64 module `setrlimit`): asm-generic's `unistd.h`, which
/// aarch64 and riscv64 use, numbers them 294 and 164.
#[cfg(target_arch = "x86_64")]
const SYS_KEXEC_FILE_LOAD: i64 = libc::SYS_kexec_file_load;
#[cfg(not(target_arch = "x86_64"))]
const SYS_KEXEC_FILE_LOAD: i64 = 294;
#[cfg(target_arch = "x86_64")]
const SYS_SETRLIMIT: i64 = libc::SYS_setrlimit;
#[cfg(not(target_arch = "x86_64"))]
const SYS_SETRLIMIT: i64 = 164;
/// Bit 30 of the call number: the x32 ABI of x86_64.
#[cfg(target_arch = "x86_64")]
const X32: i64 = 0x4000_0000;

/// Calls answered with `ENOSYS`, as on a kernel built without them: their callers probe for
/// them and fall back (a keyring-less credential cache, a thread-pool instead of `io_uring`).
fn enosys() -> Vec<(&'static str, i64)> {
    let mut calls = vec![
        // The kernel's keyrings: the build keeps a host uid, whose per-uid keyrings it would
        // share with the host's processes of that uid (and the launcher's session keyring).
        ("add_key", libc::SYS_add_key),
        ("keyctl", libc::SYS_keyctl),
        ("request_key", libc::SYS_request_key),
        // io_uring: a second system-call interface whose operations seccomp does not see, and a
        // steady source of kernel privilege escalations (Google disabled it on ChromeOS,
        // Android and its servers, 2023); Docker denies it since 25.0.
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("io_uring_enter", libc::SYS_io_uring_enter),
        ("io_uring_register", libc::SYS_io_uring_register),
        // inotify: a watch on a host file the view shows (a system file, a toolchain) reports
        // every read of it by the host's processes during the build. No build needs one to
        // build or test; watchers (`tail -f`, GLib, Gradle's file-system watching) fall back
        // to polling, as on a kernel without inotify.
        ("inotify_init1", libc::SYS_inotify_init1),
        ("inotify_add_watch", libc::SYS_inotify_add_watch),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.push(("inotify_init", libc::SYS_inotify_init));
    calls
}

/// Calls answered with `EPERM`, as without the privilege they need.
fn eperm() -> Vec<(&'static str, i64)> {
    let mut calls = vec![
        // The kernel itself (@module, @reboot, kexec).
        ("kexec_load", libc::SYS_kexec_load),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("reboot", libc::SYS_reboot),
        // Kernel programs and observation (@debug without ptrace, which the pid namespace
        // confines to the build's own processes and sanitizers need).
        ("bpf", libc::SYS_bpf),
        ("perf_event_open", libc::SYS_perf_event_open),
        // Stalling the kernel on a page fault: the primitive of many race exploits.
        ("userfaultfd", libc::SYS_userfaultfd),
        // Opening any inode of a mounted file system by handle, past every path check.
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
        // @mount: the view is locked and no capability is held; no build mounts.
        ("mount", libc::SYS_mount),
        ("umount2", libc::SYS_umount2),
        ("pivot_root", libc::SYS_pivot_root),
        ("open_tree", libc::SYS_open_tree),
        ("move_mount", libc::SYS_move_mount),
        ("fsopen", libc::SYS_fsopen),
        ("fsconfig", libc::SYS_fsconfig),
        ("fsmount", libc::SYS_fsmount),
        ("fspick", libc::SYS_fspick),
        ("mount_setattr", libc::SYS_mount_setattr),
        // Other namespaces: joining one needs a descriptor and a capability the build lacks.
        ("setns", libc::SYS_setns),
        // fanotify: the other watch on host files (unprivileged since Linux 5.13, for inode
        // marks), answered as without `CAP_SYS_ADMIN`.
        ("fanotify_init", libc::SYS_fanotify_init),
        ("fanotify_mark", libc::SYS_fanotify_mark),
        // @swap, @clock, accounting, quotas, the kernel log.
        ("swapon", libc::SYS_swapon),
        ("swapoff", libc::SYS_swapoff),
        ("settimeofday", libc::SYS_settimeofday),
        ("clock_settime", libc::SYS_clock_settime),
        ("clock_adjtime", libc::SYS_clock_adjtime),
        ("acct", libc::SYS_acct),
        ("quotactl", libc::SYS_quotactl),
        ("quotactl_fd", libc::SYS_quotactl_fd),
        ("syslog", libc::SYS_syslog),
        ("vhangup", libc::SYS_vhangup),
        ("kexec_file_load", SYS_KEXEC_FILE_LOAD),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        // @raw-io, @cpu-emulation and @obsolete of x86_64.
        ("iopl", libc::SYS_iopl),
        ("ioperm", libc::SYS_ioperm),
        ("modify_ldt", libc::SYS_modify_ldt),
        ("uselib", libc::SYS_uselib),
        ("ustat", libc::SYS_ustat),
        ("sysfs", libc::SYS_sysfs),
        ("_sysctl", libc::SYS__sysctl),
        ("nfsservctl", libc::SYS_nfsservctl),
        ("lookup_dcookie", libc::SYS_lookup_dcookie),
        ("afs_syscall", libc::SYS_afs_syscall),
        ("getpmsg", libc::SYS_getpmsg),
        ("putpmsg", libc::SYS_putpmsg),
        ("security", libc::SYS_security),
        ("tuxcall", libc::SYS_tuxcall),
        ("vserver", libc::SYS_vserver),
    ]);
    calls
}

/// Every call the layer denies outright, by name (for the documentation and the tests).
pub fn denied_calls() -> Vec<&'static str> {
    let mut names: Vec<&str> = enosys()
        .into_iter()
        .chain(eperm())
        .map(|(n, _)| n)
        .collect();
    names.extend([
        "ioctl(TIOCSTI)",
        "ioctl(TIOCLINUX)",
        "fcntl(F_NOTIFY)",
        "personality(other)",
    ]);
    names.extend(["setrlimit(RLIMIT_CORE)", "prlimit64(RLIMIT_CORE, new)"]);
    names
}

fn condition(
    index: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, String> {
    SeccompCondition::new(index, len, op, value).map_err(|e| format!("seccomp condition: {e}"))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| format!("seccomp rule: {e}"))
}

/// The same call under the x32 ABI (x86_64 only).
fn with_x32(nr: i64) -> Vec<i64> {
    #[cfg(target_arch = "x86_64")]
    {
        vec![nr, nr | X32]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        vec![nr]
    }
}

/// The argument-filtered rules (all answered with `EPERM`).
fn conditional() -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    use SeccompCmpArgLen::Dword;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // ioctl's request is an `unsigned int` in the kernel: only its low 32 bits are compared, so
    // high bits set by the caller do not slip past (the kernel drops them too).
    let ioctl = vec![
        rule(vec![condition(1, Dword, SeccompCmpOp::Eq, TIOCSTI)?])?,
        rule(vec![condition(1, Dword, SeccompCmpOp::Eq, TIOCLINUX)?])?,
    ];
    rules.insert(libc::SYS_ioctl, ioctl);
    // dnotify (`fcntl(F_NOTIFY)`): the oldest watch, on a directory, with a signal for every
    // access of a file in it; `cmd` is an `unsigned int` in the kernel.
    let notify = u64::try_from(libc::F_NOTIFY).map_err(|e| format!("F_NOTIFY: {e}"))?;
    for nr in with_x32(libc::SYS_fcntl) {
        rules.insert(
            nr,
            vec![rule(vec![condition(1, Dword, SeccompCmpOp::Eq, notify)?])?],
        );
    }
    #[cfg(target_arch = "x86_64")]
    {
        // x32's ioctl is a call of its own (512 + 2); x32 is denied whole where it matters.
        rules.insert(514 | X32, Vec::new());
        rules.insert(libc::SYS_ioctl | X32, Vec::new());
        // x32's kexec_load (528) is numbered apart from x86_64's as well.
        rules.insert(528 | X32, Vec::new());
    }
    // personality: anything but the harmless values (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...
    // weaken the address-space layout of what the build runs next).
    let mut not_allowed = Vec::new();
    for value in PERSONALITIES_ALLOWED {
        not_allowed.push(condition(0, Dword, SeccompCmpOp::Ne, value)?);
    }
    for nr in with_x32(libc::SYS_personality) {
        rules.insert(nr, vec![rule(not_allowed.clone())?]);
    }
    // RLIMIT_CORE stays at 1, the value that also stops a dump to a pipe `core_pattern` (the
    // kernel ignores 0 there): it cannot be lowered to 0 or changed at all. Reading it works.
    let core = libc::RLIMIT_CORE as u64;
    for nr in with_x32(SYS_SETRLIMIT) {
        rules.insert(
            nr,
            vec![rule(vec![condition(0, Dword, SeccompCmpOp::Eq, core)?])?],
        );
    }
    for nr in with_x32(libc::SYS_prlimit64) {
        rules.insert(
            nr,
            vec![rule(vec![
                condition(1, Dword, SeccompCmpOp::Eq, core)?,
                condition(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)?,
            ])?],
        );
    }
    Ok(rules)
}

/// The two filters (`ENOSYS` calls, `EPERM` calls), compiled for this architecture.
pub fn filters() -> Result<Vec<BpfProgram>, String> {
    let arch: TargetArch = std::env::consts::ARCH.try_into().map_err(|_| {
        format!(
            "seccomp: no filter for the architecture {}",
            std::env::consts::ARCH
        )
    })?;
    let unconditional = |calls: Vec<(&str, i64)>| {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for (_, nr) in calls {
            for nr in with_x32(nr) {
                rules.insert(nr, Vec::new());
            }
        }
        rules
    };
    let compile = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32| {
        let errno = u32::try_from(errno).map_err(|e| format!("seccomp errno: {e}"))?;
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno),
            arch,
        )
        .map_err(|e| format!("seccomp filter: {e}"))?;
        BpfProgram::try_from(filter).map_err(|e| format!("seccomp filter: {e}"))
    };
    let mut eperm_rules = unconditional(eperm());
    for (nr, rules) in conditional()? {
        if eperm_rules.insert(nr, rules).is_some() {
            return Err(format!("seccomp: call {nr} listed twice"));
        }
    }
    Ok(vec![
        compile(unconditional(enosys()), libc::ENOSYS)?,
        compile(eperm_rules, libc::EPERM)?,
    ])
}

/// Installs the filters on the calling thread (`no_new_privs` must be set, which the enter
/// stage does first). Returns how many were installed.
pub fn install() -> Result<usize, String> {
    let filters = filters()?;
    for filter in &filters {
        seccompiler::apply_filter(filter).map_err(|e| format!("install seccomp: {e}"))?;
    }
    Ok(filters.len())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn both_filters_compile_for_this_architecture() {
        let filters = filters().unwrap();
        assert_eq!(filters.len(), 2);
        assert!(filters.iter().all(|f| !f.is_empty() && f.len() < 4096));
    }

    #[test]
    fn the_list_names_the_calls_that_crossed_the_sandbox() {
        let denied = denied_calls();
        for name in [
            "add_key",
            "keyctl",
            "request_key",
            "ioctl(TIOCSTI)",
            "bpf",
            "perf_event_open",
            "userfaultfd",
            "open_by_handle_at",
            "io_uring_setup",
            "kexec_load",
            "init_module",
            "inotify_init1",
            "inotify_add_watch",
            "fanotify_init",
            "fcntl(F_NOTIFY)",
        ] {
            assert!(denied.contains(&name), "{name}");
        }
        let mut sorted = denied.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), denied.len(), "a call listed twice");
    }
}
