//! Attacks that got through the namespaces, the mounts and Landlock, replayed through the real
//! `guard run` started as root (as the workflow's `sudo` starts it): the terminal the guard was
//! started from, the kernel's keyrings, kernel interfaces no build needs, core dumps to a pipe
//! `core_pattern`, and the opt-out. Each attack is a small Python program using `ctypes`'s raw
//! `syscall`, so the test sees the kernel's own answer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use serde_json::Value;

#[path = "../../tests/support/git.rs"]
mod git_support;

const PYTHON: &str = "/usr/bin/python3";

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A root-owned repository with `attack.py` in it, under `/home` (not hidden by the fresh `/tmp`).
fn repo_with(program: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("guard-hardening-")
        .tempdir_in("/home")
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let repo = dir.path().join("repo");
    let out = git_support::git(dir.path())
        .args(["init", "-q"])
        .arg(&repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    std::fs::write(repo.join("attack.py"), program).unwrap();
    (dir, repo)
}

/// `guard run` as root over `repo`, the command `sh -c script`; `wrap` may put it under
/// another program (a pty). Returns the output and the report.
fn guard_run(dir: &Path, repo: &Path, extra: &[&str], script: &str) -> (Output, Option<Value>) {
    guard_run_wrapped(dir, repo, extra, script, None)
}

fn guard_cmd(report: &Path, repo: &Path, extra: &[&str], script: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .arg("run")
        .arg("--repo")
        .arg(repo)
        .arg("--report")
        .arg(report)
        .args(["--timeout", "60"])
        .args(extra)
        .args(["--", "sh", "-c", script]);
    cmd
}

fn guard_run_wrapped(
    dir: &Path,
    repo: &Path,
    extra: &[&str],
    script: &str,
    pty: Option<&Path>,
) -> (Output, Option<Value>) {
    let report = dir.join("run.json");
    let _ = std::fs::remove_file(&report);
    let out = match pty {
        None => guard_cmd(&report, repo, extra, script)
            .stdin(Stdio::null())
            .output()
            .unwrap(),
        Some(log) => {
            // script(1) makes a pty, runs the guard on it as its controlling terminal (as an
            // interactive shell would), and logs what reaches the terminal.
            let cmd = guard_cmd(&report, repo, extra, script);
            let mut line = String::new();
            line.push_str(&shell_quote(cmd.get_program().to_str().unwrap()));
            for arg in cmd.get_args() {
                line.push(' ');
                line.push_str(&shell_quote(arg.to_str().unwrap()));
            }
            Command::new("/usr/bin/script")
                .env_clear()
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .args(["--quiet", "--return", "--command", &line])
                .arg(log)
                .stdin(Stdio::null())
                .output()
                .unwrap()
        }
    };
    let doc = std::fs::read(&report)
        .ok()
        .map(|json| serde_json::from_slice(&json).unwrap());
    (out, doc)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn tail(doc: &Value) -> &str {
    doc["output_tail"].as_str().unwrap()
}

fn layers(doc: &Value) -> Vec<String> {
    doc["isolation"]["containment"]["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

/// Runs `program` contained and returns its output, asserting the run passed.
fn contained(program: &str) -> (String, Value) {
    let (dir, repo) = repo_with(program);
    let (out, doc) = guard_run(dir.path(), &repo, &[], &format!("{PYTHON} attack.py 2>&1"));
    let doc = doc.unwrap_or_else(|| panic!("no report: {}", text(&out)));
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out), tail(&doc));
    (tail(&doc).to_string(), doc)
}

const SYSCALL_PRELUDE: &str = r#"
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    e = ctypes.get_errno()
    print(f"{name}: {'OK' if r >= 0 else 'ERR'} {r if r >= 0 else errno.errorcode.get(e, e)}")
    sys.stdout.flush()
    return r
"#;

/// The keyrings: the build keeps a host uid, so without a layer of its own it reaches that
/// uid's keyrings (shared with every host process of the uid) and the launcher's session
/// keyring. Every keyring call is refused (ENOSYS, as on a kernel without keys), and
/// `/proc/keys` shows nothing.
#[test]
fn the_build_reaches_no_kernel_keyring() {
    let program = format!(
        r#"{SYSCALL_PRELUDE}
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5
call("add_key-user", 248, b"user", b"guard-test-planted", b"value", 5, KEY_SPEC_USER_KEYRING)
call("add_key-session", 248, b"user", b"guard-test-planted", b"value", 5, KEY_SPEC_SESSION_KEYRING)
call("keyctl-get-user", 250, 0, KEY_SPEC_USER_KEYRING, 0)
call("keyctl-get-user-session", 250, 0, KEY_SPEC_USER_SESSION_KEYRING, 0)
call("keyctl-join-session", 250, 1, 0)
call("request_key", 249, b"user", b"guard-test-planted", 0, 0)
# keyctl with a high bit in the operation still is keyctl
call("keyctl-high", 250, (1 << 32) | 0, KEY_SPEC_USER_KEYRING, 0)
keys = open("/proc/keys").read() if os.path.exists("/proc/keys") else ""
print("PROC-KEYS-LINES", len(keys.splitlines()))
"#
    );
    let (t, doc) = contained(&program);
    for name in [
        "add_key-user",
        "add_key-session",
        "keyctl-get-user",
        "keyctl-get-user-session",
        "keyctl-join-session",
        "request_key",
        "keyctl-high",
    ] {
        assert!(t.contains(&format!("{name}: ERR ENOSYS")), "{name}: {t}");
    }
    assert!(t.contains("PROC-KEYS-LINES 0"), "{t}");
    let l = layers(&doc);
    assert!(l.contains(&"seccomp".to_string()), "{l:?}");
    assert!(l.contains(&"proc-keys-masked".to_string()), "{l:?}");
    let seccomp = &doc["isolation"]["containment"]["probe"]["seccomp"];
    assert_eq!(seccomp["mode"], "2", "{seccomp}");
    assert_eq!(seccomp["aslr_weakening_refused"], true, "{seccomp}");
}

/// Kernel interfaces no build needs, each a known way past a sandbox or into the kernel.
#[test]
fn kernel_interfaces_no_build_needs_are_refused() {
    let program = format!(
        r#"{SYSCALL_PRELUDE}
# personality: the query and PER_LINUX work, ADDR_NO_RANDOMIZE and READ_IMPLIES_EXEC do not
call("personality-query", 135, 0xffffffff)
call("personality-linux", 135, 0)
call("personality-no-aslr", 135, 0x0040000)
call("personality-read-implies-exec", 135, 0x0400000)
print("ASLR", open("/proc/sys/kernel/randomize_va_space").read().strip(), open("/proc/self/personality").read().strip())
params = ctypes.create_string_buffer(120)
call("io_uring_setup", 425, 4, params)
call("userfaultfd", 323, os.O_CLOEXEC | 1)
attr = ctypes.create_string_buffer(128)
call("bpf", 321, 0, attr, 128)
pattr = ctypes.create_string_buffer(128)
ctypes.memmove(pattr, (ctypes.c_uint32 * 2)(1, 128), 8)  # PERF_TYPE_SOFTWARE, size 128
call("perf_event_open", 298, pattr, 0, -1, -1, 0)
call("kexec_load", 246, 0, 0, 0, 0)
call("init_module", 175, 0, 0, b"")
call("finit_module", 313, 0, b"", 0)
call("delete_module", 176, b"guardtest", 0)
call("open_by_handle_at", 304, -100, 0, 0)
call("getpid", 39)
# RLIMIT_CORE stays at 1: lowering it to 0 would let a dump reach a pipe core_pattern again
import resource
print("CORE", resource.getrlimit(resource.RLIMIT_CORE))
try:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); print("CORE-LOWERED")
except (OSError, ValueError) as e:
    print("CORE-KEPT", e)
"#
    );
    let (t, _) = contained(&program);
    assert!(t.contains("personality-query: OK"), "{t}");
    assert!(t.contains("personality-linux: OK"), "{t}");
    assert!(t.contains("personality-no-aslr: ERR EPERM"), "{t}");
    assert!(
        t.contains("personality-read-implies-exec: ERR EPERM"),
        "{t}"
    );
    assert!(t.contains("io_uring_setup: ERR ENOSYS"), "{t}");
    for name in [
        "userfaultfd",
        "bpf",
        "perf_event_open",
        "kexec_load",
        "init_module",
        "finit_module",
        "delete_module",
        "open_by_handle_at",
    ] {
        assert!(t.contains(&format!("{name}: ERR EPERM")), "{name}: {t}");
    }
    assert!(
        t.contains("getpid: OK 1") || t.contains("getpid: OK"),
        "{t}"
    );
    assert!(t.contains("CORE (1, 1)"), "{t}");
    assert!(
        t.contains("CORE-KEPT") && !t.contains("CORE-LOWERED"),
        "{t}"
    );
}

/// Started from a terminal (here a pty of script(1), as an interactive root shell would start
/// it), the build must not reach that terminal: no `/dev/tty`, no controlling terminal, so
/// neither `TIOCSTI` into the shell's input nor `tcsetpgrp` to read what the user types; and
/// `TIOCSTI` is refused even on a pty the build makes itself its controlling terminal (also with
/// high bits set in the request, which the kernel drops).
#[test]
fn the_build_cannot_reach_the_terminal_it_was_started_from() {
    let program = r##"
import fcntl, os, sys, termios, pty
def report(what, f):
    try:
        f(); print(what, "OK")
    except OSError as e:
        print(what, "ERR", e.errno)
    sys.stdout.flush()
print("SID", os.getsid(0), "PID", os.getpid())
try:
    tty = os.open("/dev/tty", os.O_RDWR)
    print("DEV-TTY-OPENED")
    report("TIOCSTI-LAUNCHER", lambda: fcntl.ioctl(tty, termios.TIOCSTI, b"#"))
    report("TCSETPGRP-LAUNCHER", lambda: os.tcsetpgrp(tty, os.getpgrp()))
except OSError as e:
    print("DEV-TTY", "ERR", e.errno)
sys.stdout.flush()
# A pty of its own, made the controlling terminal of a new session.
master, slave_name = None, None
try:
    master, slave = pty.openpty()
    slave_name = os.ttyname(slave)
    os.close(slave)
except OSError as e:
    print("OPENPTY ERR", e.errno)
if slave_name:
    pid = os.fork()
    if pid == 0:
        os.setsid()
        fd = os.open(slave_name, os.O_RDWR)
        fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
        report("TIOCSTI-OWN", lambda: fcntl.ioctl(fd, termios.TIOCSTI, b"x"))
        report("TIOCSTI-OWN-HIGH", lambda: fcntl.ioctl(fd, (1 << 32) | termios.TIOCSTI, b"x"))
        os._exit(0)
    os.waitpid(pid, 0)
print("DONE")
"##;
    let (dir, repo) = repo_with(program);
    let log = dir.path().join("typescript");
    let (out, doc) = guard_run_wrapped(
        dir.path(),
        &repo,
        &[],
        &format!("{PYTHON} attack.py 2>&1"),
        Some(&log),
    );
    let doc = doc.unwrap_or_else(|| panic!("no report: {}", text(&out)));
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(t.contains("DONE"), "{t}");
    assert!(!t.contains("DEV-TTY-OPENED"), "{t}");
    assert!(t.contains("DEV-TTY ERR"), "{t}");
    assert!(!t.contains("LAUNCHER OK"), "{t}");
    assert!(t.contains("TIOCSTI-OWN ERR 1"), "{t}");
    assert!(t.contains("TIOCSTI-OWN-HIGH ERR 1"), "{t}");
    let typed = std::fs::read(&log).unwrap_or_default();
    assert!(
        !typed.contains(&b'#'),
        "something was pushed into the launcher's terminal: {}",
        String::from_utf8_lossy(&typed)
    );
    let l = layers(&doc);
    assert!(l.contains(&"no-controlling-terminal".to_string()), "{l:?}");
    assert_eq!(
        doc["isolation"]["containment"]["probe"]["controlling_terminal"],
        0
    );
}

/// The kernel's `core_pattern` is global: the tests of this binary that change it or crash a
/// program take this lock.
static CORE_PATTERN: Mutex<()> = Mutex::new(());

/// Restores `/proc/sys/kernel/core_pattern` when dropped, also when the test fails.
struct CorePattern {
    saved: Vec<u8>,
}

impl CorePattern {
    fn set(pattern: &str) -> CorePattern {
        let path = "/proc/sys/kernel/core_pattern";
        let saved = std::fs::read(path).unwrap();
        std::fs::write(path, pattern).unwrap_or_else(|e| panic!("set core_pattern: {e}"));
        CorePattern { saved }
    }
}

impl Drop for CorePattern {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/kernel/core_pattern", &self.saved);
    }
}

/// With a pipe `core_pattern` (apport, systemd-coredump), the kernel ignores `RLIMIT_CORE` 0 and
/// hands a crashing process's memory to a helper running as root in the host's namespaces. The
/// build's limit is 1, the value that stops a pipe dump too, and it cannot lower it.
#[test]
fn a_crashing_build_dumps_no_core_to_a_pipe_helper() {
    let _lock = CORE_PATTERN.lock().unwrap_or_else(|p| p.into_inner());
    let (dir, repo) = repo_with(
        "import os, resource, signal, sys\n\
         try:\n    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\nexcept Exception as e:\n    print('LOWER-REFUSED', e)\n\
         print('CRASHING', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    );
    let helper_dir = tempfile::Builder::new()
        .prefix("guard-core-helper-")
        .tempdir_in("/home")
        .unwrap();
    let dumps = helper_dir.path().join("dumps");
    std::fs::create_dir(&dumps).unwrap();
    let helper = helper_dir.path().join("helper.sh");
    std::fs::write(
        &helper,
        format!("#!/bin/sh\ncat > '{}/core-'\"$1\"\n", dumps.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dumped = {
        let _pattern = CorePattern::set(&format!("|{} %p", helper.display()));
        let (out, doc) = guard_run(
            dir.path(),
            &repo,
            &[],
            &format!("{PYTHON} attack.py 2>&1; echo EXIT=$?"),
        );
        let doc = doc.unwrap_or_else(|| panic!("no report: {}", text(&out)));
        assert!(tail(&doc).contains("CRASHING"), "{}", tail(&doc));
        assert!(tail(&doc).contains("EXIT=139"), "{}", tail(&doc));
        // The helper runs asynchronously to the crash.
        std::thread::sleep(std::time::Duration::from_millis(500));
        std::fs::read_dir(&dumps).unwrap().count()
    };
    assert_eq!(dumped, 0, "a core dump reached the pipe helper");
}

/// The fresh tmpfs are sized to add up to a budget (their pages are memory): `/dev/shm` and
/// `/var/tmp` hold 512 MiB each, not the 4 GiB each they held.
#[test]
fn the_scratch_file_systems_keep_to_their_budget() {
    let (dir, repo) = repo_with("");
    let (out, doc) = guard_run(
        dir.path(),
        &repo,
        &[],
        "for d in /dev/shm /var/tmp; do \
           if head -c 629145600 /dev/zero > $d/fill 2>/dev/null; then echo \"FILLED $d\"; else echo \"FULL $d\"; fi; \
           rm -f $d/fill; done",
    );
    let doc = doc.unwrap_or_else(|| panic!("no report: {}", text(&out)));
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(
        t.contains("FULL /dev/shm") && t.contains("FULL /var/tmp"),
        "{t}"
    );
    assert!(!t.contains("FILLED"), "{t}");
    let l = layers(&doc);
    assert!(l.contains(&"tmpfs-budget-4096-mib".to_string()), "{l:?}");
    let memory = &doc["isolation"]["containment"]["probe"]["memory"];
    assert_eq!(memory["tmpfs_budget"], 4u64 << 30, "{memory}");
}

/// Memory the per-process limits do not count (a `memfd`, tmpfs pages) is bounded as a whole by
/// the build's control group: past `--memory-max` the kernel kills inside the group. This host
/// has a memory controller (cgroup v1 or v2) for root; where it has none, the proof says so and
/// this test fails with the reason.
#[test]
fn memory_the_rlimits_miss_is_bounded_by_the_control_group() {
    let (dir, repo) = repo_with(
        "import os\nfd = os.memfd_create('fill')\nchunk = b'x' * (1 << 20)\n\
         for i in range(512):\n    os.write(fd, chunk)\nprint('FILLED 512 MiB', flush=True)\n",
    );
    let (out, doc) = guard_run(
        dir.path(),
        &repo,
        &["--memory-max", "268435456"],
        &format!("{PYTHON} attack.py; echo EXIT=$?"),
    );
    let doc = doc.unwrap_or_else(|| panic!("no report: {}", text(&out)));
    let t = tail(&doc);
    let memory = &doc["isolation"]["containment"]["probe"]["memory"];
    assert!(
        memory["cgroup_version"].as_u64().unwrap() > 0,
        "no control group: {memory}"
    );
    assert_eq!(memory["memory_max"], 268435456u64, "{memory}");
    assert_eq!(memory["cgroup_member"], true, "{memory}");
    assert!(!t.contains("FILLED"), "{t}");
    assert!(t.contains("EXIT=137"), "{t}");
    let l = layers(&doc);
    assert!(l.iter().any(|x| x.starts_with("memory-cgroup-v")), "{l:?}");
}

/// `sudo` starts its command with a hard core limit of 0 (as the workflow starts guard run on a
/// hosted runner): the outer guard, still root in the host's user namespace, raises it to 1
/// for the build; no capability inside the sandbox's user namespace could.
#[test]
fn a_hard_core_limit_of_0_from_sudo_still_gives_the_build_exactly_1() {
    let (dir, repo) =
        repo_with("import resource\nprint('CORE', resource.getrlimit(resource.RLIMIT_CORE))\n");
    let report = dir.path().join("run.json");
    let inner = guard_cmd(&report, &repo, &[], &format!("{PYTHON} attack.py"));
    let out = Command::new("prlimit")
        .arg("--core=0:0")
        .arg("--")
        .arg(inner.get_program())
        .args(inner.get_args())
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // Whether this host lets root raise a hard limit (real root on a hosted runner does; root
    // without CAP_SYS_RESOURCE in the initial user namespace does not).
    let can_raise = Command::new("prlimit")
        .args(["--core=0:0", "--", PYTHON, "-c"])
        .arg("import resource; resource.setrlimit(resource.RLIMIT_CORE, (1, 1))")
        .status()
        .unwrap()
        .success();
    if can_raise {
        let doc: Value = serde_json::from_slice(
            &std::fs::read(&report).unwrap_or_else(|_| panic!("no report: {}", text(&out))),
        )
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(tail(&doc).contains("CORE (1, 1)"), "{}", tail(&doc));
        assert!(
            layers(&doc).contains(&"core-dumps-off".to_owned()),
            "{:?}",
            layers(&doc)
        );
    } else if std::fs::read("/proc/sys/kernel/core_pattern").map_or(true, |p| p.starts_with(b"|")) {
        // The limit cannot be made 1 and 0 does not stop a piped dump: a refusal.
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            text(&out).contains("set RLIMIT_CORE to 1"),
            "{}",
            text(&out)
        );
    } else {
        // 0 stops every dump to a file, which is where this kernel writes them.
        let doc: Value = serde_json::from_slice(
            &std::fs::read(&report).unwrap_or_else(|_| panic!("no report: {}", text(&out))),
        )
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(tail(&doc).contains("CORE (0, 0)"), "{}", tail(&doc));
        assert!(
            layers(&doc).contains(&"core-dumps-off".to_owned()),
            "{:?}",
            layers(&doc)
        );
    }
}

/// A watch on a host file the build can see (a declared toolchain directory here; `/usr` and
/// `/etc` alike) reports every read of it by the host's processes while the build runs: inotify,
/// fanotify (unprivileged since Linux 5.13) and dnotify (`fcntl(F_NOTIFY)`). All three are
/// refused, as on a kernel without them; the host does read the file meanwhile.
#[test]
fn the_build_cannot_watch_the_hosts_reads_of_files_it_sees() {
    let program = r#"
import ctypes, errno, fcntl, os, select, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
watched = sys.argv[1].encode()
def err():
    return errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())
fds = {}
fd = libc.inotify_init1(0)
if fd < 0:
    print("inotify_init1: ERR", err())
else:
    print("inotify_init1: OK")
    if libc.inotify_add_watch(fd, watched, 0x1 | 0x20) < 0:
        print("inotify_add_watch: ERR", err())
    else:
        fds["INOTIFY"] = fd
print("inotify_add_watch-bad-fd:", "ERR" if libc.inotify_add_watch(-1, watched, 1) < 0 else "OK", err())
if os.uname().machine == "x86_64":
    libc.syscall.restype = ctypes.c_long
    print("inotify_init:", "ERR" if libc.syscall(ctypes.c_long(253)) < 0 else "OK", err())
fan = libc.fanotify_init(0x200, 0)  # FAN_CLASS_NOTIF | FAN_REPORT_FID
if fan < 0:
    print("fanotify_init: ERR", err())
else:
    print("fanotify_init: OK")
    if libc.fanotify_mark(fan, 1, ctypes.c_uint64(0x1 | 0x20), -100, watched) < 0:
        print("fanotify_mark: ERR", err())
    else:
        fds["FANOTIFY"] = fan
dnotified = []
signal.signal(signal.SIGIO, lambda *a: dnotified.append(1))
try:
    d = os.open(os.path.dirname(watched), os.O_RDONLY)
    fcntl.fcntl(d, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
    print("F_NOTIFY: OK")
except OSError as e:
    print("F_NOTIFY: ERR", errno.errorcode[e.errno])
sys.stdout.flush()
open(sys.argv[2], "w").close()
seen = set()
deadline = time.time() + 6
while time.time() < deadline and len(seen) < len(fds) + 1:
    ready = select.select(list(fds.values()), [], [], 0.2)[0] if fds else (time.sleep(0.2) or [])
    for name, f in fds.items():
        if f in ready:
            os.read(f, 4096)
            seen.add(name)
    if dnotified:
        seen.add("DNOTIFY")
for name in sorted(seen):
    print(name, "OBSERVED")
print("DONE")
"#;
    let (dir, repo) = repo_with(program);
    let tool = dir.path().join("tool");
    std::fs::create_dir(&tool).unwrap();
    let watched = tool.join("watched.txt");
    std::fs::write(&watched, "read by the host\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [&tool, &watched] {
        let mode = if p.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    // The build's signal to the host goes through a declared output (written in place): its
    // worktree is an overlay the host does not see.
    let signal = dir.path().join("signal");
    std::fs::create_dir(&signal).unwrap();
    let marker = signal.join("watching");
    let (out, doc, host_reads) = std::thread::scope(|scope| {
        let build = scope.spawn(|| {
            guard_run(
                dir.path(),
                &repo,
                &[
                    "--read-only",
                    tool.to_str().unwrap(),
                    "--writable",
                    signal.to_str().unwrap(),
                ],
                &format!(
                    "{PYTHON} attack.py '{}' '{}' 2>&1",
                    watched.display(),
                    marker.display()
                ),
            )
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !marker.exists() && !build.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The host's side: reads of the file the build sees, while the build watches.
        let mut reads = 0;
        if marker.exists() {
            for _ in 0..40 {
                std::fs::read(&watched).unwrap();
                reads += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        let (out, doc) = build.join().unwrap();
        (out, doc, reads)
    });
    let doc = doc.unwrap_or_else(|| panic!("no report: {}", text(&out)));
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(t.contains("DONE"), "{t}");
    assert!(host_reads > 0, "the build never started watching: {t}");
    assert!(
        !t.contains("OBSERVED"),
        "the build saw the host's reads: {t}"
    );
    for line in [
        "inotify_init1: ERR ENOSYS",
        "inotify_add_watch-bad-fd: ERR ENOSYS",
        "fanotify_init: ERR EPERM",
        "F_NOTIFY: ERR EPERM",
    ] {
        assert!(t.contains(line), "{line}: {t}");
    }
    if cfg!(target_arch = "x86_64") {
        assert!(t.contains("inotify_init: ERR ENOSYS"), "{t}");
    }
}
