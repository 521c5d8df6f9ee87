//! `guard run` through the real binary: credentials scrubbed, network closed (proved without
//! traffic), `.git` read-only, time and output bounded, exit status kept, fail closed.
//!
//! Needs what CI and this machine have: root (or unprivileged user namespaces), util-linux
//! `unshare`, `mount`, `ip`, `git`, `bash`. No packet ever leaves loopback.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../tests/support/git.rs"]
mod git_support;

const HOOK: &str = "GUARD_RUN_SIMULATE_NO_NAMESPACES";
const LANDLOCK_HOOK: &str = "GUARD_RUN_SIMULATE_LANDLOCK_ABI_AT_MOST";

/// The guard binary with the ambient CI/runner variables (and the test hook) removed.
fn guard() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
    for (name, _) in std::env::vars_os() {
        let n = name.to_string_lossy();
        if ["GITHUB_", "ACTIONS_", "RUNNER_"]
            .iter()
            .any(|p| n.starts_with(p))
            || n == "CI"
            || n == HOOK
            || n == LANDLOCK_HOOK
        {
            cmd.env_remove(&name);
        }
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs `guard run --report <dir>/report.json <args>` and returns the output and the report.
fn run_with_report(mut cmd: Command, dir: &Path, args: &[&str]) -> (Output, Value) {
    let report = dir.join("report.json");
    let output = cmd
        .arg("run")
        .arg("--report")
        .arg(&report)
        .args(args)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| {
        panic!(
            "no report ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema"], "agent-team-apply/guard-run/v1");
    (output, doc)
}

/// `run_with_report` for the guard binary working in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> (Output, Value) {
    let mut cmd = guard();
    cmd.current_dir(dir);
    run_with_report(cmd, dir, args)
}

fn tail(doc: &Value) -> &str {
    doc["output_tail"].as_str().unwrap()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// Token values of common formats are dropped even under an allowlisted, innocent name.
#[test]
fn token_values_are_dropped_under_any_name() {
    let dir = tempfile::tempdir().unwrap();
    let planted = [
        (
            "GUARD_T_VALUE_1",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwbGFudGVkLWp3dCIsImlhdCI6MTUxNjIzOTAyMn0.c2lnbmF0dXJlLXBsYW50ZWQtand0",
        ),
        (
            "GUARD_T_VALUE_2",
            "pypi-AgEIcHlwaS5vcmcCJGE3ZDYwNDg3LTU3ZjItNGFlZC1hY2Q3LXBsYW50ZWRwbGFudGVk",
        ),
        ("GUARD_T_VALUE_4", "sk_live_51PlantedStripeKey0123456789"),
        ("GUARD_T_VALUE_3", "rk_live_51PlantedRestrictedKey012345"),
        ("GUARD_T_VALUE_5", "AIzaSyPlanted-GoogleApiKey_0123456789ab"),
        (
            "GUARD_T_VALUE_6",
            "sv=2022-11-02&ss=b&srt=co&sp=rwdlac&se=2030-01-01T00:00:00Z&sig=PlantedSasSignature0123456789abcdefghij%3D",
        ),
        (
            "GUARD_T_VALUE_7",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY",
        ),
    ];
    let mut cmd = guard();
    cmd.current_dir(dir.path())
        .envs(planted)
        .env("GUARD_T_PLAIN", "plain-visible-value");
    let mut args: Vec<&str> = Vec::new();
    for (name, _) in &planted {
        args.extend(["--allow-env", name]);
    }
    args.extend(["--allow-env", "GUARD_T_PLAIN", "--", "env"]);
    let (output, doc) = run_with_report(cmd, dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", tail(&doc));
    let env_output = tail(&doc);
    assert!(
        env_output.contains("GUARD_T_PLAIN=plain-visible-value"),
        "{env_output}"
    );
    let dropped: Vec<&str> = doc["env"]["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for (name, value) in planted {
        assert!(!env_output.contains(value), "{name} reached the command");
        assert!(
            dropped.contains(&name),
            "{name} not reported dropped: {dropped:?}"
        );
    }
}

#[test]
fn secrets_are_dropped_even_when_requested() {
    let dir = tempfile::tempdir().unwrap();
    let planted = [
        ("GITHUB_TOKEN", "ghs_plantedGithubToken0123456789abcdef"),
        ("ACTIONS_RUNTIME_TOKEN", "planted-runtime-token-value"),
        (
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "planted-oidc-request-token",
        ),
        (
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "https://planted.invalid/oidc",
        ),
        ("AWS_SECRET_ACCESS_KEY", "planted-aws-secret-access-key"),
        ("NPM_TOKEN", "planted-npm-token-value"),
        ("MY_API_KEY", "planted-my-api-key-value"),
        ("DB_PASSWORD", "planted-db-password-value"),
    ];
    let mut cmd = guard();
    cmd.current_dir(dir.path())
        .envs(planted)
        .env("GUARD_TEST_PLAIN", "plain-visible-value");
    let (output, doc) = run_with_report(
        cmd,
        dir.path(),
        &[
            "--allow-env",
            "GITHUB_TOKEN",
            "--allow-env",
            "MY_API_KEY",
            "--allow-env",
            "GUARD_TEST_PLAIN",
            "--",
            "env",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let env_output = tail(&doc);
    let everything = format!(
        "{env_output}{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // The control: a requested plain variable does reach the command, so `env` output is real.
    assert!(
        env_output.contains("GUARD_TEST_PLAIN=plain-visible-value"),
        "{env_output}"
    );
    let dropped = names(&doc["env"]["dropped"]);
    let passed = names(&doc["env"]["passed"]);
    for (name, value) in planted {
        assert!(
            !env_output.contains(name),
            "{name} reached the command:\n{env_output}"
        );
        assert!(
            !everything.contains(value),
            "the value of {name} was printed"
        );
        assert!(
            dropped.contains(&name),
            "{name} not listed as dropped: {dropped:?}"
        );
        assert!(!passed.contains(&name), "{name} listed as passed");
    }
    assert!(
        !doc.to_string().contains("planted"),
        "a planted value reached the report"
    );
    // HOME is a fresh directory, not the real one.
    let home = env_output
        .lines()
        .find_map(|l| l.strip_prefix("HOME="))
        .unwrap();
    assert!(home.contains("guard-run-home-"), "HOME={home}");
    assert_ne!(Some(home.to_string()), std::env::var("HOME").ok());
    assert!(
        !Path::new(home).exists(),
        "the fresh HOME is removed afterwards"
    );
}

#[test]
fn network_is_closed_and_proved_without_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED");
    let (output, doc) = run_in(dir.path(), &["--", "bash", "-c", &connect]);

    assert_eq!(
        output.status.code(),
        Some(1),
        "the connect must fail: {}",
        tail(&doc)
    );
    assert!(!tail(&doc).contains("CONNECTED"));
    assert!(
        tail(&doc).contains("Connection refused"),
        "loopback inside is up but empty: {}",
        tail(&doc)
    );
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the host listener saw a connection: {other:?}"),
    }
    let isolation = &doc["isolation"];
    assert_eq!(isolation["network"], "namespace");
    let proof = &isolation["proof"];
    assert_eq!(names(&proof["interfaces"]), ["lo"]);
    for route in proof["routes"].as_array().unwrap() {
        assert_eq!(route["interface"], "lo", "non-loopback route {route}");
    }
    assert_eq!(proof["netns_differs"], true);
    assert_eq!(proof["userns_differs"], true);
    assert_eq!(proof["loopback_up"], true);
}

/// The control for the test above: the same probe does connect when guard is told to run without
/// namespaces, so a failure to connect there is the namespace's doing.
#[test]
fn opted_out_run_does_reach_the_host_listener() {
    if landlock_abi() < 6 {
        eprintln!(
            "this kernel's Landlock cannot scope abstract sockets: the opt-out is refused here"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED");
    let mut cmd = guard();
    cmd.current_dir(dir.path()).env(HOOK, "no-network");
    let (output, doc) = run_with_report(
        cmd,
        dir.path(),
        &[
            "--no-isolation-because",
            "test: outer layer",
            "--",
            "bash",
            "-c",
            &connect,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", tail(&doc));
    assert!(tail(&doc).contains("CONNECTED"));
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_ok(), "the connection was accepted");
}

#[test]
fn git_dir_is_read_only_and_cannot_be_remounted() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let init = git_support::git(dir.path())
        .args(["init", "-q"])
        .arg(&repo)
        .status()
        .unwrap();
    assert!(init.success());
    let script = "echo built > built.txt; cat built.txt; \
                  mount -o remount,bind,rw \"$PWD/.git\" && echo REMOUNTED; \
                  umount \"$PWD/.git\" && echo UNMOUNTED; \
                  echo evil > .git/hooks/pre-commit && echo WROTE";
    let (output, doc) = run_with_report(
        guard(),
        dir.path(),
        &["--repo", repo.to_str().unwrap(), "--", "sh", "-c", script],
    );
    assert_eq!(output.status.code(), Some(1), "{}", tail(&doc));
    for forbidden in ["REMOUNTED", "UNMOUNTED", "WROTE"] {
        assert!(
            !tail(&doc).contains(forbidden),
            "{forbidden}: {}",
            tail(&doc)
        );
    }
    assert!(
        tail(&doc).contains("Read-only file system"),
        "{}",
        tail(&doc)
    );
    assert!(!repo.join(".git/hooks/pre-commit").exists());
    assert!(
        tail(&doc).starts_with("built\n"),
        "the worktree stays writable: {}",
        tail(&doc)
    );
    assert!(
        !repo.join("built.txt").exists(),
        "the build's layer reached the checkout"
    );
    assert_eq!(doc["isolation"]["git_dir_read_only"], true);
    let leftovers: Vec<_> = std::fs::read_dir(repo.join(".git"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".guard-run"))
        .collect();
    assert!(leftovers.is_empty(), "the write probe left {leftovers:?}");
}

/// Whether any process runs `sleep <arg>`.
fn sleeping(arg: &str) -> bool {
    let wanted = format!("sleep\0{arg}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == wanted.as_bytes()))
}

#[test]
fn timeout_kills_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    // A unique duration marks the grandchild's command line.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let marker = format!("30.{}{}", std::process::id(), nanos % 1000);
    let script = format!("sleep {marker} & sleep 30");
    let report = dir.path().join("report.json");
    let start = Instant::now();
    let mut child = guard()
        .current_dir(dir.path())
        .args(["run", "--timeout", "1", "--report"])
        .arg(&report)
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = false;
    while !seen && start.elapsed() < Duration::from_secs(5) {
        seen = sleeping(&marker);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(seen, "the grandchild never started");
    let status = child.wait().unwrap();
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}");
    assert_eq!(status.code(), Some(1));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(doc["timed_out"], true);
    assert_eq!(doc["exit"]["signal"], 9);
    assert!(doc["duration_ms"].as_u64().unwrap() >= 1000);
    let deadline = Instant::now() + Duration::from_secs(2);
    while sleeping(&marker) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!sleeping(&marker), "the grandchild survived the timeout");
}

#[test]
fn output_keeps_the_tail_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (output, doc) = run_in(
        dir.path(),
        &[
            "--max-output",
            "1000",
            "--",
            "sh",
            "-c",
            "yes | head -c 10000000",
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(tail(&doc), "y\n".repeat(500));
    assert_eq!(doc["output_truncated_bytes"], 10_000_000 - 1000);
}

#[test]
fn exit_status_is_recorded_as_is() {
    let dir = tempfile::tempdir().unwrap();
    let (output, doc) = run_in(
        dir.path(),
        &["--", "sh", "-c", "echo out; echo err >&2; exit 3"],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "a failing command is a rejection"
    );
    assert_eq!(doc["exit"], serde_json::json!({"code": 3, "signal": null}));
    assert_eq!(doc["timed_out"], false);
    assert_eq!(
        doc["command"],
        serde_json::json!(["sh", "-c", "echo out; echo err >&2; exit 3"])
    );
    assert_eq!(
        tail(&doc),
        "out\nerr\n",
        "stdout and stderr, nothing of the sandbox's own"
    );

    let (output, doc) = run_in(dir.path(), &["--", "true"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(doc["exit"]["code"], 0);

    let (output, doc) = run_in(dir.path(), &["--", "no-such-command-guard-test"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(doc["exit"]["code"], 127);
}

#[test]
fn usage_errors_exit_2_without_running_anything() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let cases: &[&[&str]] = &[
        &[],
        &["--"],
        &["--timeout", "0", "--", "sh", "-c", &touch],
        &["--timeout", "soon", "--", "sh", "-c", &touch],
        &["--allow-env", "BAD-NAME", "--", "sh", "-c", &touch],
        &["--no-isolation-because", " ", "--", "sh", "-c", &touch],
        &[
            "--repo",
            "/nonexistent/guard-test-repo",
            "--",
            "sh",
            "-c",
            &touch,
        ],
        &[
            "--repo",
            dir.path().to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &touch,
        ],
        &["--policy", "policy.yml", "--", "sh", "-c", &touch],
        &["sh", "-c", &touch],
    ];
    for args in cases {
        let output = guard()
            .current_dir(dir.path())
            .arg("run")
            .args(*args)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!marker.exists(), "{args:?} ran the command");
    }
}

/// A directory outside the worktree that the build may write a marker into (`--writable`), and
/// that outlives the run: started as root the build's worktree is an overlay that is discarded,
/// so a marker written there would never be seen whether the command ran or not.
fn marker_dir() -> tempfile::TempDir {
    let dir = if root() {
        tempfile::Builder::new()
            .prefix("guard-marker-")
            .tempdir_in("/home")
            .unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    dir
}

/// The precondition of a "the command did not run" assertion: where nothing is simulated, the
/// same command in the same place does leave its marker (which is then removed).
fn marker_is_made_when_the_command_runs(cwd: &Path, markers: &Path) {
    let marker = markers.join("ran");
    let output = guard()
        .current_dir(cwd)
        .arg("run")
        .arg("--writable")
        .arg(markers)
        .args(["--", "sh", "-c", "touch \"$0\""])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(marker.exists(), "the control run left no marker");
    std::fs::remove_file(&marker).unwrap();
}

/// A missing layer is a refusal, with `--no-isolation-because` too: the opt-out replaces the
/// network namespace and nothing else, so neither the refusal nor the run without a layer may
/// follow from it (it once ran the build as root with no layer at all). The message does not
/// point at the flag.
#[test]
fn a_missing_layer_fails_closed_also_when_opted_out() {
    for hook in ["missing", "silent", "no-landlock"] {
        for opt_out in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let markers = marker_dir();
            marker_is_made_when_the_command_runs(dir.path(), markers.path());
            let report = dir.path().join("report.json");
            let mut cmd = guard();
            cmd.current_dir(dir.path())
                .env(HOOK, hook)
                .arg("run")
                .arg("--report")
                .arg(&report)
                .arg("--writable")
                .arg(markers.path());
            if opt_out {
                cmd.args(["--no-isolation-because", "harden-runner egress block"]);
            }
            let output = cmd
                .args(["--", "sh", "-c", "touch \"$0\""])
                .arg(markers.path().join("ran"))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{hook} {opt_out}: {stderr}");
            assert!(
                stderr.contains("isolation could not be established, so the command was not run"),
                "{stderr}"
            );
            assert!(
                !stderr.contains("no-isolation-because"),
                "the refusal points at the opt-out: {stderr}"
            );
            if hook == "no-landlock" {
                assert!(
                    stderr.contains("Landlock does not restrict writes"),
                    "{stderr}"
                );
            }
            assert!(
                !markers.path().join("ran").exists(),
                "{hook} {opt_out}: the command ran with a layer missing"
            );
            assert!(!report.exists());
        }
    }
}

/// The Landlock ABI this kernel offers, as a contained run's proof records it.
fn landlock_abi() -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let (output, doc) = run_in(dir.path(), &["--", "true"]);
    assert_eq!(output.status.code(), Some(0), "{}", tail(&doc));
    doc["isolation"]["containment"]["probe"]["landlock"]["abi"]
        .as_u64()
        .unwrap()
}

/// Where only the network namespace cannot be made, the opt-out builds the same sandbox without
/// it: every other layer proven, the build not root. (Only where Landlock scopes abstract
/// sockets: see the next test.)
#[test]
fn the_opt_out_replaces_the_network_namespace_only() {
    if landlock_abi() < 6 {
        eprintln!(
            "this kernel's Landlock cannot scope abstract sockets: the opt-out is refused here, \
             as the_opt_out_is_refused_where_landlock_cannot_scope_abstract_sockets checks"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = guard()
        .current_dir(dir.path())
        .env(HOOK, "no-network")
        .args(["run", "--", "sh", "-c", "echo RAN-HERE"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("RAN-HERE"));

    let mut cmd = guard();
    cmd.current_dir(dir.path()).env(HOOK, "no-network");
    let (output, doc) = run_with_report(
        cmd,
        dir.path(),
        &[
            "--no-isolation-because",
            "harden-runner egress block",
            "--",
            "sh",
            "-c",
            "touch ran && echo RAN-HERE; id -u",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", tail(&doc));
    assert!(tail(&doc).starts_with("RAN-HERE\n"), "{}", tail(&doc));
    let isolation = &doc["isolation"];
    assert_eq!(isolation["network"], "opted-out");
    assert_eq!(isolation["reason"], "harden-runner egress block");
    assert!(
        isolation["unavailable"]
            .as_str()
            .unwrap()
            .contains("no network namespace"),
        "{isolation}"
    );
    let layers: Vec<&str> = isolation["containment"]["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(!layers.contains(&"network-namespace"), "{layers:?}");
    for layer in [
        "user-namespaces",
        "pid-namespace",
        "read-only-locked-host",
        "no-capabilities",
        "no-new-privs",
        "seccomp",
        "no-controlling-terminal",
    ] {
        assert!(layers.contains(&layer), "{layer}: {layers:?}");
    }
    assert!(
        layers.iter().any(|l| l.starts_with("landlock-abi-")),
        "{layers:?}"
    );
    let uid = isolation["containment"]["probe"]["uids"][0]
        .as_u64()
        .unwrap();
    assert_ne!(uid, 0, "the build ran as root");
    if root() {
        assert_eq!(tail(&doc), "RAN-HERE\n65534\n", "{}", tail(&doc));
    }
}

/// Without a network namespace the host's abstract UNIX sockets are one `connect()` away, and
/// only Landlock's scoping (ABI 6, Linux 6.12) keeps the build from them. Where the kernel
/// lacks it (a hosted runner's 6.8 has ABI 4; simulated here by lowering what the guard
/// credits the kernel with), the opt-out is refused with that reason and the build never runs.
#[test]
fn the_opt_out_is_refused_where_landlock_cannot_scope_abstract_sockets() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("guard-test-opt-out-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let markers = marker_dir();
    let marker = markers.path().join("ran");
    marker_is_made_when_the_command_runs(dir.path(), markers.path());
    let report = dir.path().join("report.json");
    let script = format!(
        "touch '{}'; python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); \
         s.connect(\"\\0\"+sys.argv[1]); print(\"CONNECTED\")' '{name}'",
        marker.display()
    );
    let output = guard()
        .current_dir(dir.path())
        .env(HOOK, "no-network")
        .env(LANDLOCK_HOOK, "4")
        .arg("run")
        .arg("--report")
        .arg(&report)
        .arg("--writable")
        .arg(markers.path())
        .args(["--no-isolation-because", "harden-runner egress block"])
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--no-isolation-because cannot be honoured here")
            && stderr.contains("unless Landlock scopes them (ABI 6, Linux 6.12)")
            && stderr.contains("this kernel's Landlock is ABI 4"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the build ran");
    assert!(!report.exists());
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the host's abstract socket received a connection: {other:?}"),
    }

    // The hook lowers belief only: with a network namespace the same build runs, its proof
    // crediting ABI 4 at most and no scoping; it never credits more than the kernel has.
    let real = landlock_abi();
    for (at_most, credited) in [("4", real.min(4)), ("99", real)] {
        let mut cmd = guard();
        cmd.current_dir(dir.path()).env(LANDLOCK_HOOK, at_most);
        let (output, doc) = run_with_report(cmd, dir.path(), &["--", "true"]);
        assert_eq!(output.status.code(), Some(0), "{at_most}: {}", tail(&doc));
        let landlock = &doc["isolation"]["containment"]["probe"]["landlock"];
        assert_eq!(landlock["abi"], credited, "{at_most}: {landlock}");
        assert_eq!(landlock["scoped"], credited >= 6, "{at_most}: {landlock}");
    }
    // Anything but a number is ABI 0: no Landlock at all, a refusal.
    let output = guard()
        .current_dir(dir.path())
        .env(LANDLOCK_HOOK, "six")
        .args(["run", "--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Landlock does not restrict writes (ABI 0"),
        "{stderr}"
    );
}

#[test]
fn opt_out_is_not_used_when_namespaces_work() {
    let dir = tempfile::tempdir().unwrap();
    let (output, doc) = run_in(
        dir.path(),
        &["--no-isolation-because", "just in case", "--", "true"],
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(doc["isolation"]["network"], "namespace");
    assert_eq!(doc["isolation"]["reason"], Value::Null);
}

#[test]
fn toolchain_still_works_with_a_fresh_home() {
    let dir = tempfile::tempdir().unwrap();
    let (output, doc) = run_in(dir.path(), &["--", "cargo", "--version"]);
    assert_eq!(output.status.code(), Some(0), "{}", tail(&doc));
    assert!(tail(&doc).starts_with("cargo "), "{}", tail(&doc));
}

fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .is_some_and(|ids| ids.split_whitespace().nth(1) == Some("0"))
}

/// The guard binary where uid 65534 can reach it: the one cargo built, or, where the checkout
/// lies beneath a directory that user cannot search (a clone under root's `0700` home), a copy
/// in a root-owned `0755` directory (kept alive by the returned guard).
fn guard_reachable_by_nobody() -> (Option<tempfile::TempDir>, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let built = std::path::PathBuf::from(env!("CARGO_BIN_EXE_guard"));
    let searchable = as_nobody()
        .args(["/usr/bin/test", "-r"])
        .arg(&built)
        .status()
        .is_ok_and(|s| s.success());
    if searchable {
        return (None, built);
    }
    let dir = tempfile::Builder::new()
        .prefix("guard-bin-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o755)).unwrap();
    let copy = dir.path().join("guard");
    std::fs::copy(&built, &copy).unwrap();
    std::fs::set_permissions(&copy, PermissionsExt::from_mode(0o755)).unwrap();
    eprintln!(
        "note: uid 65534 cannot reach {} (a parent it cannot search); running a copy at {}",
        built.display(),
        copy.display()
    );
    (Some(dir), copy)
}

fn as_nobody() -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
    cmd
}

/// Unprivileged, stage 1 needs a user namespace of its own: where the platform allows that, the
/// run is isolated just the same; where it does not (Ubuntu's AppArmor restriction), it fails
/// closed.
#[test]
fn unprivileged_runs_isolated_or_fails_closed() {
    if !root() {
        eprintln!("skipped: switching to an unprivileged uid needs root");
        return;
    }
    let (_copy, guard_bin) = guard_reachable_by_nobody();
    let reachable = as_nobody().arg(&guard_bin).arg("--version").output();
    assert!(
        reachable.is_ok_and(|o| o.status.success()),
        "uid 65534 cannot run {}",
        guard_bin.display()
    );
    let platform_allows = as_nobody()
        .args([
            "unshare",
            "--user",
            "--map-root-user",
            "--net",
            "--mount",
            "true",
        ])
        .status()
        .is_ok_and(|s| s.success());
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    assert!(
        git_support::git(dir.path())
            .args(["init", "-q"])
            .arg(&repo)
            .status()
            .unwrap()
            .success()
    );
    for writable in [dir.path(), repo.as_path()] {
        std::fs::set_permissions(
            writable,
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
    }
    // A host socket in a directory the view shows (declared read-only: nothing else of /home is
    // in the view): masked by the setup stage, which here is root of a user namespace, not of
    // the machine.
    let visible = tempfile::Builder::new()
        .prefix("guard-unprivileged-socket-")
        .tempdir_in("/home")
        .unwrap();
    std::fs::set_permissions(
        visible.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(visible.path().join("notes.txt"), "x\n").unwrap();
    let socket = visible.path().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::fs::set_permissions(&socket, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let report = dir.path().join("report.json");
    let script = format!(
        "python3 -c 'import errno,socket,sys\n\
         try:\n    socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print(\"CONNECTED\")\n\
         except OSError as e:\n    print(\"REFUSED\", errno.errorcode[e.errno])' '{}'; \
         touch ran; mount -o remount,bind,rw \"$PWD/.git\"; echo evil > .git/hooks/pre-commit",
        socket.display()
    );
    let output = as_nobody()
        .arg(&guard_bin)
        .current_dir(dir.path())
        .arg("run")
        .arg("--report")
        .arg(&report)
        .arg("--read-only")
        .arg(visible.path())
        .args(["--repo", repo.to_str().unwrap(), "--", "sh", "-c", &script])
        .env_remove(HOOK)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!repo.join(".git/hooks/pre-commit").exists());
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the host socket received a connection: {other:?}\n{stderr}"),
    }
    if platform_allows {
        assert_eq!(
            output.status.code(),
            Some(1),
            "the write into .git fails: {stderr}"
        );
        assert!(repo.join("ran").exists());
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(doc["isolation"]["network"], "namespace");
        assert_eq!(doc["isolation"]["git_dir_read_only"], true);
        assert_eq!(names(&doc["isolation"]["proof"]["interfaces"]), ["lo"]);
        assert!(tail(&doc).contains("REFUSED EROFS"), "{}", tail(&doc));
        let probe = &doc["isolation"]["containment"]["probe"];
        assert!(
            names(&probe["masked_sockets"]).contains(&socket.to_str().unwrap()),
            "{probe}"
        );
    } else {
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(!repo.join("ran").exists());
    }
}
