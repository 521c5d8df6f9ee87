//! The attacks that broke the build-test job, replayed through the real binaries on a replica of a
//! GitHub-hosted runner's layout, with the exact invocation the workflow uses (run as root here:
//! `sudo` is the only part of the workflow's command line left out, since the tests already run as
//! root), and the honest builds that must keep working under the same containment.
//!
//! The replica (built by [`Replica::new`], under `/home`, not `/tmp`, so that hiding `/tmp` does
//! not hide it by accident): a non-root `runner`-like user created with `useradd` whose primary
//! group stands for `docker`; `HOME` with `~/.git-credentials` and `~/.config/gh/hosts.yml`; a
//! runner root with `.credentials`, `.runner` and `_diag/`, and its `_work/` with `_temp/`
//! (`_runner_file_commands/set_env_*`, `add_path_*`, `agent-team/`), `_actions/` and the
//! checkouts `trusted` and `work`; the workflow's root-owned `/opt/.../bin` with the guard binary.
//!
//! No silent skip: a machine that cannot build the namespaces fails these tests with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

#[path = "../../tests/support/git.rs"]
mod git_support;

const USER: &str = "guardtest-runner";
const DOCKER_GROUP: &str = "guardtest-docker";
const SECRET: &str = "s3cr3t-guard-test-token-0b6f1e";
const SCOPE: &str = "src/**";

fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    check(&out, what);
    out
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The runner-like user (uid, gid of its primary group standing for `docker`), created once.
fn runner_user() -> (u32, u32) {
    static USER_IDS: OnceLock<(u32, u32)> = OnceLock::new();
    *USER_IDS.get_or_init(|| {
        let root = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .any(|l| l.starts_with("Uid:\t0\t"));
        assert!(
            root,
            "these tests create a user and run the workflow's root step: run them as root (CI does)"
        );
        let exists = |args: &[&str]| {
            Command::new("getent")
                .args(args)
                .output()
                .unwrap()
                .status
                .success()
        };
        // System ids: the first ordinary uid (1001 after the image's own user) is the act
        // harness's `runner` (tests/act/setup.sh), which must get it as on GitHub's images.
        if !exists(&["group", DOCKER_GROUP]) {
            run(
                Command::new("groupadd").args(["--system", DOCKER_GROUP]),
                "groupadd",
            );
        }
        if !exists(&["passwd", USER]) {
            run(
                Command::new("useradd").args([
                    "--system",
                    "--no-create-home",
                    "--gid",
                    DOCKER_GROUP,
                    USER,
                ]),
                "useradd",
            );
        }
        let id = |flag: &str| -> u32 {
            let out = run(Command::new("id").args([flag, USER]), "id");
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        (id("-u"), id("-g"))
    })
}

/// `setpriv` switching to the runner user, groups cleared, as the runner's own steps run; the
/// program to run comes next.
fn runner_launcher() -> Command {
    let (uid, gid) = runner_user();
    let mut cmd = Command::new("setpriv");
    cmd.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"))
        .args(["--clear-groups", "--"]);
    cmd
}

/// A command run as the runner user, groups cleared, as the runner's own steps run.
fn as_runner(program: &Path) -> Command {
    let mut cmd = runner_launcher();
    cmd.arg(program)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/nonexistent");
    cmd
}

fn git_as_runner(dir: &Path, args: &[&str]) -> String {
    let out = run(
        git_support::git_through(runner_launcher(), dir).args(args),
        &format!("git {args:?}"),
    );
    String::from_utf8(out.stdout).unwrap()
}

fn chown_runner(path: &Path) {
    let (uid, gid) = runner_user();
    run(
        Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{gid}"))
            .arg(path),
        "chown",
    );
}

/// The hosted-runner layout, a base commit with an applied and verified candidate diff, and the
/// workflow's root-owned binary directory.
struct Replica {
    _top: tempfile::TempDir,
    _bin_top: tempfile::TempDir,
    home: PathBuf,
    runner_root: PathBuf,
    runner_temp: PathBuf,
    workspace: PathBuf,
    work: PathBuf,
    bin: PathBuf,
    set_env: PathBuf,
    add_path: PathBuf,
    baseline_sha256: String,
    /// Unique to this replica (tests run side by side, each with its own replica).
    secret: String,
}

impl Replica {
    fn new() -> Replica {
        runner_user();
        let top = tempfile::Builder::new()
            .prefix("guard-replica-")
            .tempdir_in("/home")
            .unwrap();
        std::fs::set_permissions(top.path(), PermissionsExt::from_mode(0o755)).unwrap();
        let secret = format!(
            "{SECRET}-{}",
            top.path().file_name().unwrap().to_string_lossy()
        );
        let secret = secret.as_str();
        let home = top.path().join("runner");
        let runner_root = top.path().join("actions-runner");
        let work_root = runner_root.join("_work");
        let runner_temp = work_root.join("_temp");
        let workspace = work_root.join("repo/repo");
        let work = workspace.join("work");
        for dir in [
            home.join(".config/gh"),
            runner_root.join("_diag"),
            runner_temp.join("_runner_file_commands"),
            runner_temp.join("agent-team/report"),
            work_root.join("_actions/actions/checkout/v7/dist"),
            workspace.join("trusted"),
            work.join("src"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let write = |path: PathBuf, body: &str| std::fs::write(path, body).unwrap();
        write(
            home.join(".git-credentials"),
            &format!("https://x-access-token:{secret}-git@github.com\n"),
        );
        write(
            home.join(".config/gh/hosts.yml"),
            &format!("github.com:\n    oauth_token: {secret}-gh\n"),
        );
        write(
            runner_root.join(".credentials"),
            &format!(
                "{{\"scheme\": \"OAuth\", \"data\": {{\"clientId\": \"{secret}-runner\"}}}}\n"
            ),
        );
        write(
            runner_root.join(".runner"),
            "{\"agentName\": \"replica\"}\n",
        );
        write(
            runner_root.join("_diag/Worker_20260101.log"),
            &format!("ACTIONS_RUNTIME_TOKEN={secret}-diag\n"),
        );
        write(
            work_root.join("_actions/actions/checkout/v7/dist/index.js"),
            "// the action's code\n",
        );
        let set_env = runner_temp.join("_runner_file_commands/set_env_6b1c");
        let add_path = runner_temp.join("_runner_file_commands/add_path_6b1c");
        write(set_env.clone(), "");
        write(add_path.clone(), "");
        write(
            work.join("src/lib.rs"),
            "pub fn answer() -> u32 {\n    41\n}\n",
        );
        write(work.join("README.md"), "# Replica\n");
        write(work.join(".gitignore"), "target/\n");
        chown_runner(top.path());

        // The workflow's root-owned binary directory, created before anything the runner owns.
        let bin_top = tempfile::Builder::new()
            .prefix("guard-replica-bin-")
            .tempdir_in("/opt")
            .or_else(|_| {
                std::fs::create_dir_all("/opt")?;
                tempfile::Builder::new()
                    .prefix("guard-replica-bin-")
                    .tempdir_in("/opt")
            })
            .unwrap();
        let bin = bin_top.path().join("bin");
        run(
            Command::new("install")
                .args(["-d", "-o", "root", "-g", "root", "-m", "0755"])
                .arg(&bin),
            "install -d",
        );
        run(
            Command::new("install")
                .args(["-o", "root", "-g", "root", "-m", "0555"])
                .arg(env!("CARGO_BIN_EXE_guard"))
                .arg(bin.join("guard")),
            "install guard",
        );

        // The base commit, then the candidate diff, as the runner's own steps make them.
        git_as_runner(&work, &["init", "--quiet", "--initial-branch=main"]);
        git_as_runner(&work, &["add", "--all"]);
        git_as_runner(&work, &["commit", "--quiet", "-m", "base"]);
        let base = git_as_runner(&work, &["rev-parse", "HEAD"])
            .trim()
            .to_string();
        std::fs::write(
            work.join("src/lib.rs"),
            "pub fn answer() -> u32 {\n    42\n}\n",
        )
        .unwrap();
        let diff = git_as_runner(&work, &["diff", "--no-color", "--no-ext-diff"]);
        git_as_runner(&work, &["checkout", "--quiet", "--", "src/lib.rs"]);
        let agent = runner_temp.join("agent-team");
        let diff_file = agent.join("diff.patch");
        std::fs::write(&diff_file, &diff).unwrap();
        chown_runner(&agent);
        let sha = guard::hash::sha256_hex(diff.as_bytes());
        let guard = bin.join("guard");
        let verdict = agent.join("report/verdict.json");
        let baseline = agent.join("tree-baseline.json");
        run(
            as_runner(&guard)
                .arg("apply")
                .arg("--diff")
                .arg(&diff_file)
                .args(["--expected-sha256", &sha, "--scope", SCOPE, "--repo"])
                .arg(&work)
                .args(["--base", &base, "--verdict-out"])
                .arg(&verdict),
            "guard apply",
        );
        run(
            as_runner(&guard)
                .arg("verify-tree")
                .arg("--verdict")
                .arg(&verdict)
                .arg("--repo")
                .arg(&work)
                .args(["--base", &base, "--out"])
                .arg(&baseline),
            "guard verify-tree",
        );
        let baseline_sha256 = guard::hash::sha256_hex(&std::fs::read(&baseline).unwrap());
        Replica {
            _top: top,
            _bin_top: bin_top,
            home,
            runner_root,
            runner_temp,
            workspace,
            work,
            bin,
            set_env,
            add_path,
            baseline_sha256,
            secret: secret.to_string(),
        }
    }

    fn agent(&self, name: &str) -> PathBuf {
        self.runner_temp.join("agent-team").join(name)
    }

    /// The workflow's build step, `sudo` left out (the tests are root already): the trusted,
    /// root-owned guard, started as root with the runner's variables, contains the build and
    /// checks the tree itself.
    fn build(&self, script: &str) -> (Output, Value) {
        self.build_with(script, &[])
    }

    /// [`Replica::build`] with more arguments of `guard run` before the command.
    fn build_with(&self, script: &str, extra: &[&str]) -> (Output, Value) {
        self.build_from(Command::new("/usr/bin/env"), script, extra)
    }

    /// [`Replica::build`] with the guard started as the runner user, not as root: no overlay,
    /// the build writes the checkout in place (and the check after the build is all there is).
    fn build_as_runner(&self, script: &str) -> (Output, Value) {
        let mut launcher = runner_launcher();
        launcher.arg("/usr/bin/env");
        self.build_from(launcher, script, &[])
    }

    fn build_from(&self, mut launcher: Command, script: &str, extra: &[&str]) -> (Output, Value) {
        let report = self.agent("report/build-test.json");
        let _ = std::fs::remove_file(&report);
        // A report a run as root left would be root's: one run as the runner could not replace it.
        let _ = std::fs::remove_file(self.agent("report/tree-after-build.json"));
        let out = launcher
            .env_clear()
            .arg("PATH=/usr/local/bin:/usr/bin:/bin")
            .arg(format!("HOME={}", self.home.display()))
            .arg(format!("RUNNER_TEMP={}", self.runner_temp.display()))
            .arg(format!("GITHUB_WORKSPACE={}", self.workspace.display()))
            .arg(format!("GITHUB_TOKEN=ghs_{SECRET}0123456789"))
            .arg(self.bin.join("guard"))
            .arg("run")
            .arg("--repo")
            .arg(&self.work)
            .arg("--verdict")
            .arg(self.agent("report/verdict.json"))
            .arg("--baseline")
            .arg(self.agent("tree-baseline.json"))
            .arg("--baseline-sha256")
            .arg(&self.baseline_sha256)
            .arg("--tree-report")
            .arg(self.agent("report/tree-after-build.json"))
            .args(["--timeout", "120", "--report"])
            .arg(&report)
            .args(extra)
            .args(["--", "sh", "-c", script])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let doc = match std::fs::read_to_string(&report) {
            Ok(json) => serde_json::from_str(&json).unwrap(),
            Err(e) => panic!(
                "no report ({e}): the namespaces could not be built here?\n{}",
                text(&out)
            ),
        };
        (out, doc)
    }
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

/// Every file's bytes beneath `dir`, by path.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

#[test]
fn env_file_injection_leaves_the_runner_file_commands_unchanged() {
    let r = Replica::new();
    // What the build must leave alone: everything under RUNNER_TEMP except the reports the
    // trusted guard writes there itself.
    let reports = r.agent("report");
    let outside_reports = |r: &Replica| {
        let mut c = contents(&r.runner_temp);
        c.retain(|p, _| !p.starts_with(&reports));
        c
    };
    let before = outside_reports(&r);
    let script = format!(
        "printf 'BASH_ENV=/tmp/x.sh\\n' >> '{env}' && echo APPENDED-ENV; \
         mkdir -p /tmp/evil-bin && printf '/tmp/evil-bin\\n' >> '{path}' && echo APPENDED-PATH; \
         for f in '{dir}'/*; do echo \"BASH_ENV=/tmp/x.sh\" >> \"$f\" && echo \"WROTE $f\"; done; \
         ls -A '{dir}' && echo LISTED; true",
        env = r.set_env.display(),
        path = r.add_path.display(),
        dir = r.set_env.parent().unwrap().display(),
    );
    let (out, doc) = r.build(&script);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out), tail(&doc));
    for marker in ["APPENDED-ENV", "APPENDED-PATH", "WROTE", "LISTED"] {
        assert!(!tail(&doc).contains(marker), "{marker}: {}", tail(&doc));
    }
    assert_eq!(
        std::fs::read(&r.set_env).unwrap(),
        b"",
        "set_env file changed"
    );
    assert_eq!(
        std::fs::read(&r.add_path).unwrap(),
        b"",
        "add_path file changed"
    );
    assert!(
        outside_reports(&r) == before,
        "something under RUNNER_TEMP changed"
    );
    // Not hidden after the fact: nothing of RUNNER_TEMP was ever put in the view.
    let view = view_entries(&doc);
    assert!(
        !view
            .iter()
            .any(|(path, _, _)| path.starts_with(&r.runner_temp)),
        "RUNNER_TEMP is in the view: {view:?}"
    );
}

/// The proof's view: every entry's path, role and source.
fn view_entries(doc: &Value) -> Vec<(PathBuf, String, String)> {
    doc["isolation"]["containment"]["probe"]["view"]["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no view in the proof: {doc}"))
        .iter()
        .map(|e| {
            (
                PathBuf::from(e["path"].as_str().unwrap()),
                e["role"].as_str().unwrap().to_string(),
                e["source"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn trusted_binaries_cannot_be_replaced_and_the_after_build_check_still_fails() {
    let r = Replica::new();
    let guard = r.bin.join("guard");
    let before = std::fs::read(&guard).unwrap();
    let script = format!(
        "mv '{bin}' '{bin}.orig' && echo RENAMED; \
         mkdir -p '{bin}' && printf '#!/bin/sh\\nexit 0\\n' > '{bin}/guard' && echo PLANTED; \
         printf 'fake' > '{bin}/guard' && echo OVERWROTE; \
         mkdir -p '{old}' && printf '#!/bin/sh\\nexit 0\\n' > '{old}/guard' && echo PLANTED-OLD; \
         mkdir -p .github/workflows && echo 'on: push' > .github/workflows/release.yml && echo HOOKED",
        bin = r.bin.display(),
        old = r.agent("bin").display(),
    );
    let (out, doc) = r.build(&script);
    let t = tail(&doc);
    for marker in ["RENAMED", "PLANTED", "OVERWROTE", "PLANTED-OLD"] {
        assert!(!t.contains(marker), "{marker}: {t}");
    }
    assert!(
        t.contains("HOOKED"),
        "the build did write into its worktree: {t}"
    );
    assert_eq!(
        std::fs::read(&guard).unwrap(),
        before,
        "the trusted guard changed"
    );
    assert_eq!(
        std::fs::metadata(&guard).unwrap().uid(),
        0,
        "the trusted guard is no longer root-owned"
    );
    assert!(!r.bin.with_extension("orig").exists());
    assert!(
        !r.agent("bin").exists(),
        "a fake bin dir was planted under RUNNER_TEMP"
    );
    // The write into the denied surface is caught by the trusted process itself.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let findings = doc["after_build"]["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["rule"] == "build-wrote"
            && f["path"] == ".github/workflows/release.yml"
            && f["policy_entry"] == "deny: .github/**"),
        "{findings:?}"
    );
    assert_eq!(doc["after_build"]["result"], "fail");
    let tree: Value =
        serde_json::from_slice(&std::fs::read(r.agent("report/tree-after-build.json")).unwrap())
            .unwrap();
    assert_eq!(tree["schema"], "agent-team-apply/verify-tree/v1");
    assert_eq!(tree["check"], "after-build");
    assert_eq!(tree["result"], "fail");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("error[build-wrote]: .github/workflows/release.yml")
    );
}

fn listener(path: &Path) -> UnixListener {
    let _ = std::fs::remove_file(path);
    let l = UnixListener::bind(path).unwrap();
    l.set_nonblocking(true).unwrap();
    std::fs::set_permissions(path, PermissionsExt::from_mode(0o777)).unwrap();
    l
}

#[test]
fn unix_sockets_outside_are_unreachable() {
    let r = Replica::new();
    let tag = format!(
        "{}-{}",
        std::process::id(),
        r.baseline_sha256.get(..8).unwrap()
    );
    let tmp_sock = PathBuf::from(format!("/tmp/guard-test-{tag}.sock"));
    let run_dir = PathBuf::from(format!("/run/guard-test-{tag}"));
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::set_permissions(&run_dir, PermissionsExt::from_mode(0o755)).unwrap();
    let bus_sock = run_dir.join("system_bus_socket");
    // The runner's primary group stands for docker: a socket only that group may use.
    let docker_sock = run_dir.join("docker.sock");
    let home_sock = r.home.join("agent.sock");
    let listeners: Vec<(PathBuf, UnixListener)> = [&tmp_sock, &bus_sock, &docker_sock, &home_sock]
        .into_iter()
        .map(|p| (p.clone(), listener(p)))
        .collect();
    let (_, gid) = runner_user();
    std::os::unix::fs::chown(&docker_sock, Some(0), Some(gid)).unwrap();
    std::fs::set_permissions(&docker_sock, PermissionsExt::from_mode(0o660)).unwrap();
    let abstract_name = format!("guard-test-abstract-{tag}");
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let addr =
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let l = UnixListener::bind_addr(&addr).unwrap();
        l.set_nonblocking(true).unwrap();
        l
    };
    let mut script = String::new();
    for (path, _) in &listeners {
        script.push_str(&format!(
            "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b\"x\"); print(\"CONNECTED\", sys.argv[1])' '{}'; ",
            path.display()
        ));
    }
    script.push_str(&format!(
        "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0\"+sys.argv[1]); print(\"CONNECTED abstract\")' '{abstract_name}'; true"
    ));
    let (out, doc) = r.build(&script);
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(!t.contains("CONNECTED"), "{t}");
    assert!(
        t.matches("No such file or directory").count() >= listeners.len(),
        "every pathname connect must fail for want of the path: {t}"
    );
    for (path, l) in &listeners {
        match l.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            other => panic!("{} received a connection: {other:?}", path.display()),
        }
    }
    match abstract_listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the abstract socket received a connection: {other:?}"),
    }
    let probe = &doc["isolation"]["containment"]["probe"];
    assert!(
        probe["host_sockets_checked"].as_u64().unwrap() >= listeners.len() as u64,
        "{probe}"
    );
    assert_eq!(probe["reachable_sockets"], serde_json::json!([]));
    // Not masked either: none of them is in the view at all.
    assert_eq!(probe["masked_sockets"], serde_json::json!([]), "{probe}");
    assert_eq!(
        probe["groups"],
        serde_json::json!([]),
        "no supplementary group"
    );
    assert_ne!(
        probe["gids"][0], gid,
        "not the runner's docker-like primary group"
    );
    assert!(layers(&doc).iter().any(|l| l == "allowlisted-view"));
    let _ = std::fs::remove_dir_all(&run_dir);
    let _ = std::fs::remove_file(&tmp_sock);
}

/// A `python3` line that connects to the pathname socket `path` and prints `CONNECTED <path>`
/// or `REFUSED <errno name> <path>`.
fn connect_line(path: &Path) -> String {
    format!(
        "python3 -c 'import errno,socket,sys\n\
         try:\n    s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b\"x\"); print(\"CONNECTED\", sys.argv[1])\n\
         except OSError as e:\n    print(\"REFUSED\", errno.errorcode[e.errno], sys.argv[1])' '{}'; ",
        path.display()
    )
}

fn received_nothing(path: &Path, l: &UnixListener) {
    match l.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("{} received a connection: {other:?}", path.display()),
    }
}

fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// Sockets bound where the view shows the host (here inside the replica's top directory,
/// declared read-only as a toolchain directory could be) are masked, not refused: the build
/// runs, sees the rest of their directory, and reaches none of them. A directory holding nothing
/// but sockets is hidden whole; a socket next to ordinary files is covered by an empty file on a
/// read-only mount, whatever its name (spaces, reached through a symbolic link): `connect()` asks
/// for write permission on the name before it looks for a socket, and fails with `EROFS`. The
/// runner's home and directories inside that bind stay hidden.
#[test]
fn sockets_in_visible_host_directories_are_masked_and_the_build_still_runs() {
    let r = Replica::new();
    let top = r.home.parent().unwrap().to_path_buf();
    let data = top.join("srv-data");
    let daemon = top.join("daemon-sockets");
    for dir in [&data, &daemon] {
        std::fs::create_dir(dir).unwrap();
        std::fs::set_permissions(dir, PermissionsExt::from_mode(0o755)).unwrap();
    }
    std::fs::write(data.join("data.txt"), "VISIBLE-DATA\n").unwrap();
    std::os::unix::fs::symlink(&data, top.join("data-link")).unwrap();
    let masked = [
        data.join("agent.sock"),
        data.join("with space.sock"),
        top.join("data-link/via-link.sock"),
    ];
    let hidden_socket = daemon.join("daemon.sock");
    let listeners: Vec<(PathBuf, UnixListener)> = masked
        .iter()
        .chain([&hidden_socket])
        .map(|p| (p.clone(), listener(p)))
        .collect();
    let mut script = String::new();
    for (path, _) in &listeners {
        script.push_str(&connect_line(path));
    }
    script.push_str(&format!(
        "cat '{}'; ls -A '{}'; echo LISTED; cat '{}' || echo NO-CREDENTIALS; true",
        data.join("data.txt").display(),
        daemon.display(),
        r.home.join(".git-credentials").display(),
    ));
    let (out, doc) = r.build_with(&script, &["--read-only", top.to_str().unwrap()]);
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(!t.contains("CONNECTED"), "{t}");
    for path in &masked {
        assert!(
            t.contains(&format!("REFUSED EROFS {}", path.display())),
            "{} is not covered by the mask: {t}",
            path.display()
        );
    }
    assert!(
        t.contains(&format!("REFUSED ENOENT {}", hidden_socket.display())),
        "the socket directory is not hidden: {t}"
    );
    assert!(
        t.contains("VISIBLE-DATA\nLISTED"),
        "the rest stays visible: {t}"
    );
    assert!(
        t.contains("NO-CREDENTIALS") && !t.contains(&r.secret),
        "{t}"
    );
    for (path, l) in &listeners {
        received_nothing(path, l);
    }
    let probe = &doc["isolation"]["containment"]["probe"];
    assert_eq!(probe["reachable_sockets"], serde_json::json!([]), "{probe}");
    let listed = strings(&probe["masked_sockets"]);
    for path in &masked {
        assert!(
            listed.contains(&path.to_str().unwrap().to_string()),
            "{} not in the proof's masked sockets {listed:?}",
            path.display()
        );
    }
    assert!(!listed.contains(&hidden_socket.to_str().unwrap().to_string()));
    assert!(
        strings(&doc["isolation"]["containment"]["hidden"])
            .contains(&daemon.to_str().unwrap().to_string()),
        "{doc}"
    );
    assert!(layers(&doc).iter().any(|l| l == "host-sockets-masked"));
    assert_eq!(doc["after_build"]["result"], "pass", "{doc}");
    // The host's side is untouched: the sockets are still there, still sockets.
    for (path, _) in &listeners {
        assert!(
            std::fs::symlink_metadata(path)
                .unwrap()
                .file_type()
                .is_socket(),
            "{}",
            path.display()
        );
    }
}

/// The pids of the processes whose command line is `sh -c <script containing tag>`: the build's
/// own shell, which only exists once the proof was announced.
fn build_shell_started(tag: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
            let args: Vec<&[u8]> = c.split(|b| *b == 0).collect();
            args.first() == Some(&b"sh".as_slice())
                && args.get(1) == Some(&b"-c".as_slice())
                && args
                    .get(2)
                    .is_some_and(|s| String::from_utf8_lossy(s).contains(tag))
        })
    })
}

/// The masks cover the sockets bound when the sandbox was made; a socket bound on the host
/// later, where the view shows the host (a declared read-only directory), is out of their reach. Only Landlock's `ResolveUnix`
/// (ABI 9) closes that, and the proof says whether it is in force: this checks that claim
/// against what such a late socket sees, on whatever kernel runs the test.
#[test]
fn a_socket_bound_after_the_masks_is_reachable_exactly_when_the_proof_says_so() {
    let r = Replica::new();
    let top = r.home.parent().unwrap().to_path_buf();
    let late_dir = top.join("late");
    std::fs::create_dir(&late_dir).unwrap();
    std::fs::set_permissions(&late_dir, PermissionsExt::from_mode(0o755)).unwrap();
    // An ordinary file too, so that the directory is not taken for a daemon's socket directory.
    std::fs::write(late_dir.join("readme"), "x\n").unwrap();
    let late = late_dir.join("late.sock");
    let tag = format!("late-socket-{}", r.baseline_sha256.get(..12).unwrap());
    let script = format!(
        ": {tag}; i=0; while [ ! -S '{sock}' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; {connect} true",
        sock = late.display(),
        connect = connect_line(&late),
    );
    let (out, doc, accepted) = std::thread::scope(|scope| {
        let build =
            scope.spawn(|| r.build_with(&script, &["--read-only", late_dir.to_str().unwrap()]));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !build_shell_started(&tag) {
            assert!(
                std::time::Instant::now() < deadline && !build.is_finished(),
                "the build's shell never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let l = listener(&late);
        let (out, doc) = build.join().unwrap();
        let accepted = match l.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        };
        (out, doc, accepted)
    });
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    let landlock = &doc["isolation"]["containment"]["probe"]["landlock"];
    let restricted = landlock["pathname_sockets_restricted"].as_bool().unwrap();
    assert_eq!(
        restricted,
        landlock["abi"].as_u64().unwrap() >= 9,
        "{landlock}"
    );
    assert_eq!(
        layers(&doc)
            .iter()
            .any(|l| l == "landlock-pathname-unix-sockets"),
        restricted
    );
    if restricted {
        assert!(
            t.contains(&format!("REFUSED EACCES {}", late.display())),
            "{t}"
        );
        assert!(!accepted, "the late socket received a connection: {t}");
    } else {
        assert!(
            t.contains(&format!("CONNECTED {}", late.display())),
            "without ResolveUnix a late socket is reachable, as the docs say: {t}"
        );
        assert!(accepted, "{t}");
    }
}

fn dir_id(path: &Path) -> (u64, u64) {
    let m = std::fs::symlink_metadata(path).unwrap();
    (m.dev(), m.ino())
}

/// A loose object of the repository (any), and same-size different bytes for it.
fn some_object(work: &Path) -> PathBuf {
    let objects = work.join(".git/objects");
    for entry in std::fs::read_dir(&objects).unwrap().flatten() {
        let name = entry.file_name();
        if name.len() == 2
            && entry.path().is_dir()
            && let Some(obj) = std::fs::read_dir(entry.path()).unwrap().flatten().next()
        {
            return obj.path();
        }
    }
    panic!("no loose object");
}

#[test]
fn worktree_swap_and_object_rewrite_are_refused_inside_and_detected_outside() {
    let r = Replica::new();
    let object = some_object(&r.work);
    let object_bytes = std::fs::read(&object).unwrap();
    let ids = (dir_id(&r.work), dir_id(&r.work.join(".git")));
    let script = format!(
        "cd .. && mv work work.orig && echo SWAPPED && mkdir work && cp -a work.orig/. work/; \
         cd '{work}'; chmod u+w '{obj}' && echo CHMOD; \
         head -c $(stat -c %s '{obj}') /dev/zero > '{obj}' && echo REWROTE; true",
        work = r.work.display(),
        obj = object.display(),
    );
    let (out, doc) = r.build(&script);
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    for marker in ["SWAPPED", "CHMOD", "REWROTE"] {
        assert!(!t.contains(marker), "{marker}: {t}");
    }
    assert_eq!((dir_id(&r.work), dir_id(&r.work.join(".git"))), ids);
    assert_eq!(std::fs::read(&object).unwrap(), object_bytes);
    assert_eq!(doc["after_build"]["result"], "pass", "{doc}");

    // The same attack outside any sandbox (a build run directly as the runner user): the tree
    // check finds the swapped worktree by identity...
    let verify = |r: &Replica| {
        Command::new(r.bin.join("guard"))
            .args([
                "verify-tree",
                "--after-build",
                "--format",
                "json",
                "--verdict",
            ])
            .arg(r.agent("report/verdict.json"))
            .arg("--baseline")
            .arg(r.agent("tree-baseline.json"))
            .arg("--repo")
            .arg(&r.work)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    run(
        as_runner(Path::new("/bin/sh")).arg("-c").arg(format!(
            "cd '{}' && mv work work.orig && mkdir work && cp -a work.orig/. work/",
            r.workspace.display()
        )),
        "swap",
    );
    let out = verify(&r);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&".") && paths.contains(&".git"), "{doc}");

    // ...and a same-size rewrite of an object by its content hash.
    let r = Replica::new();
    let object = some_object(&r.work);
    let size = std::fs::metadata(&object).unwrap().len();
    run(
        as_runner(Path::new("/bin/sh")).arg("-c").arg(format!(
            "chmod u+w '{o}' && head -c {size} /dev/zero > '{o}'",
            o = object.display()
        )),
        "rewrite",
    );
    assert_eq!(std::fs::metadata(&object).unwrap().len(), size);
    let out = verify(&r);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rel = object.strip_prefix(&r.work).unwrap().to_str().unwrap();
    assert!(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == rel && f["change"] == "modified" && f["rule"] == "build-wrote"),
        "{doc}"
    );
}

#[test]
fn credentials_of_the_runner_are_not_visible() {
    let r = Replica::new();
    let files = [
        r.home.join(".git-credentials"),
        r.home.join(".config/gh/hosts.yml"),
        r.runner_root.join(".credentials"),
        r.runner_root.join("_diag/Worker_20260101.log"),
    ];
    let mut script = String::from("env; ");
    for f in &files {
        script.push_str(&format!("cat '{}'; ", f.display()));
    }
    // A pattern that matches the secret without spelling it (the report shows the script).
    let pattern = format!(".{}", &r.secret[1..]);
    script.push_str(&format!(
        "ls -la '{home}' '{root}' '{root}/_diag'; \
         grep -rs '{secret}' /home /tmp /run /var/tmp /opt /root 2>/dev/null | head -5; true",
        secret = pattern,
        home = r.home.display(),
        root = r.runner_root.display(),
    ));
    let (out, doc) = r.build(&script);
    let everything = format!("{}{}{}", tail(&doc), text(&out), doc);
    assert_eq!(out.status.code(), Some(0), "{everything}");
    assert!(
        tail(&doc).contains("No such file or directory"),
        "the files are not there at all: {}",
        tail(&doc)
    );
    assert!(
        !everything.contains(&r.secret),
        "secret bytes reached the output or the report:\n{everything}"
    );
    // The control: the files really hold the secret.
    for f in &files {
        assert!(std::fs::read_to_string(f).unwrap().contains(&r.secret));
    }
}

#[test]
fn started_as_root_the_build_cannot_write_the_host() {
    let r = Replica::new();
    let tag = std::process::id();
    let etc_marker = PathBuf::from(format!("/etc/guard-test-{tag}"));
    let bin_marker = PathBuf::from(format!("/usr/local/bin/guard-test-{tag}"));
    let passwd = std::fs::read("/etc/passwd").unwrap();
    let etc_before: Vec<_> = std::fs::read_dir("/etc")
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let script = format!(
        "id; echo x > '{etc}' && echo WROTE-ETC; echo x > '{bin}' && echo WROTE-BIN; \
         echo 'evil::0:0::/:/bin/sh' >> /etc/passwd && echo WROTE-PASSWD; \
         mount -o remount,rw / && echo REMOUNTED; umount -l /etc && echo UNMOUNTED; \
         unshare -Urm sh -c 'mount -o remount,rw /' && echo NESTED; \
         echo x > /dev/vda && echo WROTE-DISK; \
         echo '|/bin/sh' > /proc/sys/kernel/core_pattern && echo WROTE-SYSCTL; \
         sudo -n true && echo SUDO; true",
        etc = etc_marker.display(),
        bin = bin_marker.display(),
    );
    let (out, doc) = r.build(&script);
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    for marker in [
        "WROTE-ETC",
        "WROTE-BIN",
        "WROTE-PASSWD",
        "REMOUNTED",
        "UNMOUNTED",
        "NESTED",
        "WROTE-DISK",
        "WROTE-SYSCTL",
        "SUDO",
    ] {
        assert!(!t.contains(marker), "{marker}: {t}");
    }
    assert!(!etc_marker.exists() && !bin_marker.exists());
    assert_eq!(std::fs::read("/etc/passwd").unwrap(), passwd);
    let etc_after: Vec<_> = std::fs::read_dir("/etc")
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(etc_before, etc_after);
    let (uid, _) = runner_user();
    assert!(
        t.contains(&format!("uid={uid}")),
        "runs as the worktree's owner: {t}"
    );
    let probe = &doc["isolation"]["containment"]["probe"];
    assert_eq!(probe["capabilities"]["effective"], "0000000000000000");
    assert_eq!(probe["capabilities"]["permitted"], "0000000000000000");
    assert_eq!(probe["no_new_privs"], true);
    assert_eq!(probe["nested_userns_refused"], true);
    assert!(
        !probe["writable_mounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "/"),
        "{probe}"
    );
    assert_eq!(probe["root_write_refused"], true);
    let landlock = &probe["landlock"];
    assert!(landlock["abi"].as_u64().unwrap() >= 1, "{landlock}");
    assert_eq!(landlock["writes_restricted"], true);
    let l = layers(&doc);
    for layer in [
        "read-only-locked-host",
        "no-capabilities",
        "no-new-privs",
        "no-nested-user-namespaces",
        "resource-limits",
    ] {
        assert!(l.iter().any(|x| x == layer), "{layer} not in force: {l:?}");
    }
    assert!(l.iter().any(|x| x.starts_with("landlock-abi-")), "{l:?}");
}

/// A worktree owned by root (a root CI container, `local-run` as root): the build runs as
/// `nobody`, the tree is lent to it and given back unchanged; what the build wrote (it sees its
/// writes) stayed in its discarded layer.
#[test]
fn root_owned_worktree_is_lent_to_nobody_and_given_back() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    run(
        git_support::git(dir.path()).args(["init", "-q"]).arg(&repo),
        "git init",
    );
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    let report = dir.path().join("run.json");
    let out = Command::new(env!("CARGO_BIN_EXE_guard"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .arg("run")
        .arg("--repo")
        .arg(&repo)
        .arg("--report")
        .arg(&report)
        .args(["--", "sh", "-c", "id -u; echo b > b.txt; echo x >> a.txt; cat a.txt b.txt; touch /etc/guard-lent-test && echo WROTE; true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(
        &std::fs::read(&report).unwrap_or_else(|e| panic!("{e}: {}", text(&out))),
    )
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(tail(&doc).starts_with("65534\na\nx\nb\n"), "{}", tail(&doc));
    assert!(!tail(&doc).contains("WROTE"));
    for f in ["a.txt", ".git/config"] {
        let m = std::fs::metadata(repo.join(f)).unwrap();
        assert_eq!((m.uid(), m.gid()), (0, 0), "{f} not given back to root");
    }
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "a\n");
    assert!(!repo.join("b.txt").exists());
    assert_eq!(std::fs::metadata(&repo).unwrap().uid(), 0);
}

fn benign(dir: &Path, envs: &[(&str, &str)], extra: &[&str], script: &str) -> (Output, Value) {
    let report = dir.join("run.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
    cmd.env_clear()
        .env("PATH", "/root/.cargo/bin:/usr/local/bin:/usr/bin:/bin")
        .envs(envs.iter().copied())
        .arg("run")
        .arg("--repo")
        .arg(dir.join("repo"))
        .arg("--report")
        .arg(&report)
        .args(extra)
        .args(["--", "sh", "-c", script])
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    let json = std::fs::read(&report).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    (out, serde_json::from_slice(&json).unwrap())
}

fn repo_in(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    run(
        git_support::git(dir).args(["init", "-q"]).arg(&repo),
        "git init",
    );
    repo
}

#[test]
fn cargo_builds_with_a_read_only_registry_cache_and_a_writable_target() {
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| "/root/.cargo".into());
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    std::fs::create_dir_all(repo.join("src")).unwrap();
    // A registry dependency the workspace itself uses, so the cache already holds it.
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"benign\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nmemchr = \"=2.8.3\"\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("src/lib.rs"),
        "pub fn find(h: &[u8]) -> Option<usize> { memchr::memchr(b'x', h) }\n\
         #[test] fn finds() { assert_eq!(find(b\"abx\"), Some(2)); }\n",
    )
    .unwrap();
    run(
        Command::new("cargo")
            .env("CARGO_HOME", &cargo_home)
            .args(["generate-lockfile", "--offline", "--manifest-path"])
            .arg(repo.join("Cargo.toml")),
        "generate-lockfile",
    );
    let registry = PathBuf::from(&cargo_home).join("registry");
    let registry_before = std::fs::metadata(&registry).unwrap().mtime();
    let (out, doc) = benign(
        dir.path(),
        &[("CARGO_HOME", &cargo_home), ("HOME", "/root")],
        &[],
        "cargo test --offline --locked -q 2>&1 && touch \"$CARGO_HOME/registry/x\" 2>/dev/null || echo CACHE-READ-ONLY",
    );
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(t.contains("test result: ok. 1 passed"), "{t}");
    assert!(t.contains("CACHE-READ-ONLY"), "{t}");
    // Written in the build's layer, which is discarded: the checkout never holds it.
    assert!(
        !repo.join("target").exists(),
        "target/ reached the checkout"
    );
    assert!(!registry.join("x").exists());
    assert_eq!(
        std::fs::metadata(&registry).unwrap().mtime(),
        registry_before
    );
}

#[test]
fn a_node_test_run_passes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    std::fs::write(
        repo.join("package.json"),
        "{\"name\": \"benign\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node --test\"}}\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("sum.test.js"),
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');\n\
         test('sums and writes a temp file', () => {\n  const f = path.join(os.tmpdir(), 'sum.txt');\n  \
         fs.writeFileSync(f, String(1 + 2));\n  assert.strictEqual(fs.readFileSync(f, 'utf8'), '3');\n});\n",
    )
    .unwrap();
    let (out, doc) = benign(dir.path(), &[], &[], "npm test 2>&1");
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(t.contains("# pass 1") && t.contains("# fail 0"), "{t}");
}

#[test]
fn a_python_test_run_that_writes_to_tmp_passes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    std::fs::write(
        repo.join("test_tmp.py"),
        "import os, tempfile, unittest\n\n\
         class T(unittest.TestCase):\n    def test_tmp(self):\n        \
         with tempfile.NamedTemporaryFile('w', delete=False) as f:\n            f.write('ok')\n        \
         self.assertTrue(f.name.startswith('/tmp/'))\n        \
         self.assertEqual(open(f.name).read(), 'ok')\n        os.unlink(f.name)\n\n\
         if __name__ == '__main__':\n    unittest.main()\n",
    )
    .unwrap();
    let (out, doc) = benign(dir.path(), &[], &[], "/usr/bin/python3 -m unittest -v 2>&1");
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(t.contains("OK") && t.contains("test_tmp"), "{t}");
}

fn findings_by_path(doc: &Value) -> BTreeMap<String, String> {
    doc["after_build"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["rule"], "build-wrote", "{f}");
            (
                f["path"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// What a reused workspace would carry into the next job, and the content check did not see:
/// special files and special mode bits in scope, permissions of a directory outside it, a
/// directory the runner cannot remove, an extended attribute, a modification time and a hard
/// link on files outside the scope; and a sparse 8 GiB file is a finding without being read.
#[test]
fn the_after_build_check_sees_every_kind_of_change() {
    let r = Replica::new();
    let script = "mkfifo src/fifo && echo FIFO; \
         /usr/bin/python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.bind('src/sock')\" && echo SOCKET; \
         chmod 4755 src/lib.rs && echo SETUID; \
         mkdir src/shared && chmod 2775 src/shared && echo SETGID; \
         chmod 0777 src && echo DIR-0777; \
         mkdir src/locked && chmod 000 src/locked && echo DIR-000; \
         /usr/bin/python3 -c \"import os; os.setxattr('README.md', 'user.mark', b'planted')\" && echo XATTR; \
         touch -d '2001-01-01 00:00' .gitignore && echo MTIME; \
         ln README.md src/readme-link && echo HARDLINK; \
         truncate -s 8G src/sparse.bin && echo SPARSE";
    let (out, doc) = r.build(script);
    let t = tail(&doc);
    for marker in [
        "FIFO", "SOCKET", "SETUID", "SETGID", "DIR-0777", "DIR-000", "XATTR", "MTIME", "HARDLINK",
        "SPARSE",
    ] {
        assert!(t.contains(marker), "the build could not do {marker}: {t}");
    }
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(doc["after_build"]["result"], "fail");
    let found = findings_by_path(&doc);
    for (path, words) in [
        ("src/fifo", "special file"),
        ("src/sock", "special file"),
        ("src/lib.rs", "set-user-ID"),
        ("src/shared", "set-group-ID"),
        ("src", "permissions of a directory from 0755 to 0777"),
        ("src/locked", "cannot remove"),
        ("README.md", "hard links"),
        (".gitignore", "modification time"),
        ("src/readme-link", "hard links"),
        ("src/sparse.bin", "more than any diff"),
    ] {
        let message = found
            .get(path)
            .unwrap_or_else(|| panic!("no finding for {path}: {found:?}"));
        assert!(message.contains(words), "{path}: {message}");
    }
    // The sparse file was not read: the whole run took seconds, not a minute of hashing.
    assert!(
        doc["duration_ms"].as_u64().unwrap() < 30_000,
        "{}",
        doc["duration_ms"]
    );
    let tree: Value =
        serde_json::from_slice(&std::fs::read(r.agent("report/tree-after-build.json")).unwrap())
            .unwrap();
    assert_eq!(tree["result"], "fail");
    // The runner can clean up after it again (the test's own cleanup needs that too).
    let _ = std::fs::set_permissions(r.work.join("src/locked"), PermissionsExt::from_mode(0o755));
}

/// An extended attribute alone, on a file outside the scope, is a finding.
#[test]
fn an_extended_attribute_outside_the_scope_is_a_finding() {
    let r = Replica::new();
    let (out, doc) = r.build(
        "/usr/bin/python3 -c \"import os; os.setxattr('README.md', 'user.mark', b'planted')\" && echo XATTR",
    );
    assert!(tail(&doc).contains("XATTR"), "{}", tail(&doc));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let found = findings_by_path(&doc);
    assert!(
        found
            .get("README.md")
            .is_some_and(|m| m.contains("extended attributes")),
        "{found:?}"
    );
}

/// The finding at `path`, asserted to be `build-wrote` with `words` in its message.
fn assert_finding(doc: &Value, path: &str, words: &str) {
    let found = findings_by_path(doc);
    let message = found
        .get(path)
        .unwrap_or_else(|| panic!("no finding for {path}: {found:?}"));
    assert!(message.contains(words), "{path}: {message}");
}

/// A group change alone (`chgrp`, which the owner may make to a group of its own), on a file
/// outside the scope, is a finding: the content, mode and modification time are unchanged.
#[test]
fn a_group_change_outside_the_scope_is_a_finding() {
    let r = Replica::new();
    let readme = r.work.join("README.md");
    std::os::unix::fs::lchown(&readme, None, Some(0)).unwrap();
    let (out, doc) = r.build("chgrp \"$(id -g)\" README.md && stat -c 'CHGRP %g' README.md");
    let t = tail(&doc);
    assert!(t.contains("CHGRP ") && !t.contains("CHGRP 0"), "{t}");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_finding(&doc, "README.md", "changed the group from gid 0 to gid");
    // The checkout under the overlay was never written.
    assert_eq!(std::fs::metadata(&readme).unwrap().gid(), 0);
}

/// An inode flag alone (`chattr +d`, no dump, `+A`, no atime updates, `+S`, synchronous
/// updates: what an owner may set on a file without a capability), on a file outside the scope,
/// is a finding. Started as root the build writes to an overlay whose
/// upper layer (tmpfs) may take no such flags, so the build is also started as the runner user,
/// writing the checkout in place, on a file system that keeps them (`/home`, ext4 here and on
/// the hosted images).
#[test]
fn an_inode_flag_outside_the_scope_is_a_finding() {
    let r = Replica::new();
    let (_, doc) = r.build("chattr +dA README.md 2>&1; echo OVERLAY-DONE");
    let t = tail(&doc);
    assert!(t.contains("OVERLAY-DONE"), "{t}");
    if !t.contains("Operation not supported") {
        // Where the overlay takes them after all, they are seen there too.
        assert_finding(
            &doc,
            "README.md",
            "inode flags of an entry outside the declared scope from none to dA",
        );
    }
    let (out, doc) =
        r.build_as_runner("chattr +dAS README.md 2>&1 && lsattr README.md && echo CHATTR");
    let t = tail(&doc);
    if !t.contains("CHATTR") {
        let fs = Command::new("stat")
            .args(["-f", "-c", "%T"])
            .arg(&r.work)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        // Only where the checkout's file system has no inode flags at all.
        assert!(
            t.contains("Inappropriate ioctl") || t.contains("Operation not supported"),
            "chattr failed for another reason: {t}"
        );
        eprintln!("skipped: the checkout's file system ({fs:?}) takes no inode flags: {t}");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        !layers(&doc)
            .iter()
            .any(|l| l == "worktree-overlay-discarded"),
        "{:?}",
        layers(&doc)
    );
    assert_finding(
        &doc,
        "README.md",
        "inode flags of an entry outside the declared scope from none to SdA",
    );
    assert_eq!(
        findings_by_path(&doc).len(),
        1,
        "{:?}",
        findings_by_path(&doc)
    );
}

/// A POSIX ACL alone (`system.posix_acl_access`, what `setfacl -m u:<uid>:r` writes; the mask
/// keeps the mode bits as they were), on a file outside the scope, is a finding. The named user
/// is the build's own uid: an id the build's user namespace does not map is refused (EINVAL).
#[test]
fn an_acl_outside_the_scope_is_a_finding() {
    let r = Replica::new();
    // version 2; user::rw-, user:<uid>:r--, group::r--, mask::r--, other::r--
    let script = "/usr/bin/python3 -c \"import os, struct; \
         acl = struct.pack('<I' + 'HHI' * 5, 2, 1, 6, 0xffffffff, 2, 4, os.getuid(), 4, 4, 0xffffffff, 0x10, 4, 0xffffffff, 0x20, 4, 0xffffffff); \
         os.setxattr('README.md', 'system.posix_acl_access', acl); \
         print('ACL', oct(os.stat('README.md').st_mode), len(os.getxattr('README.md', 'system.posix_acl_access')))\" 2>&1";
    let (out, doc) = r.build(script);
    let t = tail(&doc);
    if !t.contains("ACL ") {
        // Only where the build's layer has no POSIX ACLs at all.
        assert!(t.contains("Operation not supported"), "{t}");
        eprintln!("skipped: the build's layer takes no POSIX ACL here: {t}");
        return;
    }
    // The mode bits did not change: the ACL alone is what the check must see.
    assert!(t.contains("ACL 0o100644 44"), "{t}");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_finding(&doc, "README.md", "extended attributes (POSIX ACLs");
    assert_eq!(
        findings_by_path(&doc).len(),
        1,
        "{:?}",
        findings_by_path(&doc)
    );
}

/// Stray files by the thousand fail the check with a bounded report and log: the first findings
/// by path in full, the rest counted.
#[test]
fn many_findings_are_counted_not_listed() {
    let r = Replica::new();
    let (out, doc) = r.build("mkdir stray && cd stray && seq 1 3000 | xargs touch && echo MADE");
    assert!(tail(&doc).contains("MADE"), "{}", tail(&doc));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let findings = doc["after_build"]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), guard::tree::MAX_FINDINGS + 1);
    let last = findings.last().unwrap();
    assert_eq!(last["rule"], "build-wrote");
    assert_eq!(last["path"], ".");
    // 3000 files (the directory alone is no finding): 1000 listed, the first by path.
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .starts_with("and 2,000 more findings"),
        "{last}"
    );
    assert_eq!(findings[0]["path"], "stray/1");
    assert_eq!(findings[1]["path"], "stray/10");
    let log = text(&out);
    assert!(log.contains("and 2,000 more findings"), "{log}");
}

/// More entries than the walk may read is a failing check with its report written, not an
/// error that leaves no evidence.
#[test]
fn a_tree_too_large_to_walk_fails_the_check_with_a_report() {
    let r = Replica::new();
    let (out, doc) = r.build_with(
        "mkdir -p target/many && cd target/many && seq 1 3000 | xargs touch && echo MADE",
        &["--max-entries", "2000"],
    );
    assert!(tail(&doc).contains("MADE"), "{}", tail(&doc));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let found = findings_by_path(&doc);
    assert!(
        found
            .get(".")
            .is_some_and(|m| m.contains("more than 2000 entries")),
        "{found:?}"
    );
    let tree: Value =
        serde_json::from_slice(&std::fs::read(r.agent("report/tree-after-build.json")).unwrap())
            .unwrap();
    assert_eq!(tree["result"], "fail");
}

/// Removes a directory when dropped, also when the test fails.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A container's daemon binds its socket in its own network namespace, on a path the host's
/// file system holds (`/var/lib/<x>`, `/opt/<x>`): the host's `/proc/net/unix` does not list it,
/// so no reading of the host's socket table can find it. The view does not hold it either:
/// nothing of `/var/lib` or `/opt` is ever mounted there, and the proof says what is.
#[test]
fn a_socket_of_another_network_namespace_is_not_in_the_view() {
    use std::io::BufRead;
    let r = Replica::new();
    let tag = format!(
        "{}-{}",
        std::process::id(),
        r.baseline_sha256.get(..8).unwrap()
    );
    let dirs = [
        PathBuf::from(format!("/var/lib/guard-test-{tag}")),
        PathBuf::from(format!("/opt/guard-test-{tag}")),
    ];
    let _cleanup: Vec<RemoveOnDrop> = dirs.iter().map(|d| RemoveOnDrop(d.clone())).collect();
    for dir in &dirs {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::set_permissions(dir, PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("readme"), "x\n").unwrap();
    }
    let sockets: Vec<PathBuf> = dirs.iter().map(|d| d.join("daemon.sock")).collect();
    let mut daemon = Command::new("unshare")
        .args(["--net", "--", "/usr/bin/python3", "-c"])
        .arg(
            "import os, select, socket, sys\n\
             socks = []\n\
             for p in sys.argv[1:]:\n    s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o777); s.listen(8); socks.append(s)\n\
             print('READY', os.readlink('/proc/self/ns/net'), flush=True)\n\
             while True:\n    for s in select.select(socks, [], [])[0]:\n        c, _ = s.accept(); print('ACCEPTED', s.getsockname(), flush=True); c.close()\n",
        )
        .args(&sockets)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(daemon.stdout.take().unwrap()).lines();
    let ready = lines.next().unwrap().unwrap();
    let host_netns = std::fs::read_link("/proc/self/ns/net").unwrap();
    assert!(
        ready.starts_with("READY ") && !ready.ends_with(host_netns.to_str().unwrap()),
        "the daemon is not in a network namespace of its own: {ready}"
    );
    // The premise: the host's socket table does not show them, only the file system does.
    let table = std::fs::read_to_string("/proc/net/unix").unwrap();
    for socket in &sockets {
        assert!(!table.contains(socket.to_str().unwrap()), "{table}");
        assert!(
            std::fs::symlink_metadata(socket)
                .unwrap()
                .file_type()
                .is_socket()
        );
    }
    let mut script = String::from("ls -A /; echo ROOT-LISTED; ");
    for socket in &sockets {
        script.push_str(&connect_line(socket));
    }
    script.push_str("echo \"VAR: $(ls -A /var)\"; echo \"OPT: $(ls -A /opt)\"; true");
    let (out, doc) = r.build(&script);
    let _ = daemon.kill();
    let _ = daemon.wait();
    let accepted: Vec<String> = lines.map_while(Result::ok).collect();
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    assert!(!t.contains("CONNECTED"), "{t}");
    assert!(
        accepted.is_empty(),
        "the daemon accepted: {accepted:?}\n{t}"
    );
    for socket in &sockets {
        assert!(
            t.contains(&format!("REFUSED ENOENT {}", socket.display())),
            "{t}"
        );
    }
    // What the build saw at its root is what the proof lists, and nothing else of the host.
    let view = view_entries(&doc);
    let listed: Vec<&str> = t.split("ROOT-LISTED").next().unwrap().lines().collect();
    let tops: std::collections::BTreeSet<String> = view
        .iter()
        .filter_map(|(p, _, _)| p.components().nth(1))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for name in &listed {
        assert!(
            tops.contains(*name),
            "/{name} is not in the proof's view {view:?}"
        );
    }
    for gone in ["run", "srv", "mnt", "media", "snap", "root", "boot"] {
        assert!(
            !listed.contains(&gone),
            "/{gone} is in the view: {listed:?}"
        );
    }
    // /var holds its fresh tmp alone, /opt the way to the guard binary alone.
    let guard_dir = r
        .bin
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert!(t.contains("VAR: tmp\n"), "{t}");
    assert!(t.contains(&format!("OPT: {guard_dir}\n")), "{t}");
    // Every host source is a system directory, the worktree and its .git, or the guard binary.
    for (path, role, source) in &view {
        if source == "host" {
            let expected = match role.as_str() {
                "system" => ["/usr", "/etc", "/sys"].contains(&path.to_str().unwrap()),
                "worktree" => path == &r.work,
                "git-dir" => path == &r.work.join(".git"),
                "guard" => path == &r.bin.join("guard"),
                _ => false,
            };
            assert!(expected, "unexpected host source {path:?} ({role})");
        }
    }
    let proof = &doc["isolation"]["containment"]["probe"]["view"];
    for list in ["mismatched", "unplanned_mounts", "unplanned_root_entries"] {
        assert_eq!(proof[list], serde_json::json!([]), "{list}: {proof}");
    }
    assert!(layers(&doc).iter().any(|l| l == "allowlisted-view"));
}

/// The build's `HOME` is its own: a directory of its fresh `/tmp` owned by the build user
/// (the runner user here) with mode 0700, holding nothing but the empty XDG directories, every
/// one of them writable; the XDG variables point there; nothing of it is left on the host.
#[test]
fn the_build_has_a_private_writable_home_that_is_gone_afterwards() {
    let r = Replica::new();
    // Assembled at run time, so that the report's copy of the script does not hold it.
    let script = "m=\"$(printf 'pla''nted-home-con''tent')\"; \
         echo \"HOME=$HOME\"; stat -c 'OWNER %u:%g MODE %a' \"$HOME\"; \
         find \"$HOME\" -mindepth 1 | sort | sed \"s|^$HOME/|AT-START |\"; \
         for v in HOME XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME; do \
           d=$(printenv $v); echo \"$v=$d\"; echo \"$m\" > \"$d/planted\" && echo \"WROTE $v\"; done; \
         mkdir -p \"$XDG_CACHE_HOME/pip\" && echo CACHE-DIR";
    let (out, doc) = r.build(script);
    let t = tail(&doc);
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    let home = t
        .lines()
        .find_map(|l| l.strip_prefix("HOME="))
        .unwrap_or_else(|| panic!("{t}"))
        .to_string();
    let (uid, _) = runner_user();
    assert!(
        t.contains(&format!("OWNER {uid}:65534 MODE 700")),
        "HOME is not the build user's alone: {t}"
    );
    let at_start: Vec<&str> = t
        .lines()
        .filter_map(|l| l.strip_prefix("AT-START "))
        .collect();
    assert_eq!(
        at_start,
        [
            ".cache",
            ".config",
            ".local",
            ".local/share",
            ".local/state"
        ],
        "{t}"
    );
    for (var, dir) in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
    ] {
        assert!(t.contains(&format!("{var}={home}/{dir}\n")), "{var}: {t}");
    }
    for var in [
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
    ] {
        assert!(
            t.contains(&format!("WROTE {var}")),
            "{var} is not writable: {t}"
        );
    }
    assert!(t.contains("CACHE-DIR"), "{t}");
    let probe = &doc["isolation"]["containment"]["probe"]["home"];
    assert_eq!(probe["mode"], "0700", "{probe}");
    assert_eq!(probe["uid"], uid, "{probe}");
    assert_eq!(probe["not_writable"], serde_json::json!([]), "{probe}");
    assert!(layers(&doc).iter().any(|l| l == "private-home"));
    // Gone with the sandbox: not on the host's /tmp, nowhere in the runner's tree.
    assert!(!Path::new(&home).exists(), "{home} is on the host");
    let top = r.home.parent().unwrap();
    for (path, bytes) in contents(top) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("planted-home-content"),
            "{} holds what the build wrote in its HOME",
            path.display()
        );
    }
    let host_tmp: Vec<PathBuf> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("planted").exists() || p.join(".cache/planted").exists())
        .collect();
    assert!(host_tmp.is_empty(), "{host_tmp:?}");
}

/// Filling the runner's disk: the build writes through a layer of a fixed size and inode count.
/// Past either, writes fail inside the build (`ENOSPC`), the runner's disk keeps its space, and
/// the check after the build fails with a finding naming the budget, even for a build that
/// ignores its write errors and exits 0.
#[test]
fn a_build_past_its_write_budget_fails_and_the_disk_keeps_its_space() {
    let r = Replica::new();
    for (what, script, extra) in [
        (
            "bytes",
            "mkdir -p target && dd if=/dev/zero of=target/fill bs=1M count=64 2>/dev/null; echo WROTE; exit 0",
            ["--write-budget-bytes", "8388608"],
        ),
        (
            "inodes",
            "mkdir -p target/many && cd target/many && (seq 1 3000 | xargs touch) 2>/dev/null; echo WROTE; exit 0",
            ["--write-budget-inodes", "500"],
        ),
    ] {
        let (out, doc) = r.build_with(script, &extra);
        assert!(tail(&doc).contains("WROTE"), "{what}: {}", tail(&doc));
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
        let found = findings_by_path(&doc);
        assert!(
            found
                .get(".")
                .is_some_and(|m| m.contains("reached its write budget")),
            "{what}: {found:?}"
        );
        // Nothing of it reached the checkout on the runner's disk.
        assert!(!r.work.join("target/fill").exists(), "{what}");
        assert!(!r.work.join("target/many").exists(), "{what}");
    }
    // Within the budget, the same build output is no finding.
    let (out, doc) = r.build_with(
        "mkdir -p target && dd if=/dev/zero of=target/fill bs=1M count=1 2>/dev/null; echo WROTE",
        &["--write-budget-bytes", "8388608"],
    );
    assert!(tail(&doc).contains("WROTE"), "{}", tail(&doc));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
