//! `gate app create` against the stand-in, with the test as the browser: it opens the loopback
//! page, posts the form to the stand-in's copy of GitHub's "register a GitHub App" page, follows
//! GitHub's redirect back to the callback, and the binary exchanges the code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use github_standin::{Scenario, StandIn};
use serde_json::Value;

/// A raw HTTP/1.1 request to `127.0.0.1:port`, with the given `Host`; the status and body.
fn http(port: u16, method: &str, target: &str, host: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let location = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("location:")
                .then(|| l[9..].trim().to_owned())
        })
        .unwrap_or_default();
    (status, body.to_owned(), location)
}

fn unescape_html(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn encode_form(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The form of the loopback page: its action and its manifest.
fn form(page: &str) -> (String, Value) {
    let action = page
        .split("action=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let manifest = page
        .split("value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    (
        unescape_html(action),
        serde_json::from_str(&unescape_html(manifest)).unwrap(),
    )
}

struct Run {
    child: Child,
    stdout: BufReader<ChildStdout>,
    port: u16,
}

fn start(gh: &StandIn, key: &Path, extra: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .args([
            "app",
            "create",
            "--repository",
            "octo/repo",
            "--timeout",
            "60",
        ])
        .arg(format!("--api-url={}", gh.url()))
        .arg(format!("--web-url={}", gh.url()))
        .arg(format!("--key-out={}", key.display()))
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let port = line
        .split("http://127.0.0.1:")
        .nth(1)
        .unwrap_or_else(|| panic!("no page address in {line:?}"))
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    Run {
        child,
        stdout,
        port,
    }
}

impl Run {
    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn page(&self) -> (String, Value) {
        let (status, body, _) = http(self.port, "GET", "/", &self.host(), "");
        assert_eq!(status, 200, "{body}");
        form(&body)
    }

    fn finish(mut self) -> (i32, String, String) {
        let mut out = String::new();
        self.stdout.read_to_string(&mut out).unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = self.child.wait().unwrap();
        (status.code().unwrap(), out, err)
    }
}

/// The browser's part: post the manifest to the stand-in's form at `action`, and return where
/// GitHub sends the browser back (the callback's target on the loopback page).
fn register(gh: &StandIn, action: &str, manifest: &Value) -> String {
    let target = action.strip_prefix(&gh.url()).unwrap();
    let gh_port: u16 = gh.url().rsplit(':').next().unwrap().parse().unwrap();
    let (status, body, location) = http(
        gh_port,
        "POST",
        target,
        &format!("127.0.0.1:{gh_port}"),
        &format!("manifest={}", encode_form(&manifest.to_string())),
    );
    assert_eq!(status, 302, "{body}");
    location
        .split_once("/callback")
        .map(|(_, rest)| format!("/callback{rest}"))
        .unwrap()
}

fn permissions(manifest: &Value) -> Vec<(String, String)> {
    manifest["default_permissions"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn the_publishing_app_is_registered_from_its_manifest_and_its_key_written_0600() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("app.pem");
    let run = start(&gh, &key, &["--kind", "publish", "--org"]);
    let (action, manifest) = run.page();
    assert_eq!(
        action,
        format!(
            "{}/organizations/octo/settings/apps/new?state={}",
            gh.url(),
            action.rsplit('=').next().unwrap()
        )
    );
    assert_eq!(action.rsplit('=').next().unwrap().len(), 32);
    assert_eq!(
        permissions(&manifest),
        [
            ("checks", "write"),
            ("contents", "write"),
            ("metadata", "read"),
            ("pull_requests", "write")
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    assert_eq!(manifest["default_events"], serde_json::json!([]));
    assert_eq!(manifest["public"], false);
    assert_eq!(manifest["hook_attributes"]["active"], false);
    assert_eq!(
        manifest["redirect_url"],
        format!("http://{}/callback", run.host())
    );
    let callback = register(&gh, &action, &manifest);
    let (status, body, _) = http(run.port, "GET", &callback, &run.host(), "");
    assert_eq!(status, 200, "{body}");
    let (code, out, err) = run.finish();
    assert_eq!(code, 0, "{out}{err}");
    let pem = std::fs::read_to_string(&key).unwrap();
    assert_eq!(pem, github_standin::manifests::TEST_PEM);
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(out.contains("Created the App repo-agent-team"), "{out}");
    assert!(
        out.contains("/apps/repo-agent-team/installations/new"),
        "{out}"
    );
    assert!(
        out.contains("gate init --repository octo/repo --app-id "),
        "{out}"
    );
    // Nothing secret reaches the terminal.
    for secret in ["client-secret-", "webhook-secret-", "PRIVATE KEY"] {
        assert!(
            !out.contains(secret) && !err.contains(secret),
            "{secret}: {out}{err}"
        );
    }
    // The code was exchanged once, without a token.
    let conversions: Vec<_> = gh
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/app-manifests/"))
        .collect();
    assert_eq!(conversions.len(), 1);
    assert!(conversions[0].header("authorization").is_none());
}

#[test]
fn the_dispatchers_app_asks_for_the_dispatchers_permissions() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("dispatcher.pem");
    let run = start(&gh, &key, &["--kind", "dispatcher"]);
    let (action, manifest) = run.page();
    assert!(action.starts_with(&format!("{}/settings/apps/new?state=", gh.url())));
    assert_eq!(
        permissions(&manifest),
        [
            ("actions", "write"),
            ("checks", "read"),
            ("contents", "write"),
            ("metadata", "read"),
            ("pull_requests", "read")
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    let callback = register(&gh, &action, &manifest);
    http(run.port, "GET", &callback, &run.host(), "");
    let (code, out, err) = run.finish();
    assert_eq!(code, 0, "{out}{err}");
    assert!(key.exists());
}

/// Another site's page that a rebound name points at 127.0.0.1 sends its own `Host`: refused
/// before it could read the page's `state`; a callback with another state is refused too; only
/// then does the real browser finish.
#[test]
fn a_foreign_host_and_a_foreign_state_are_refused_and_the_flow_goes_on() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("app.pem");
    let run = start(&gh, &key, &["--kind", "publish", "--org"]);
    let (status, body, _) = http(
        run.port,
        "GET",
        "/",
        &format!("evil.example:{}", run.port),
        "",
    );
    assert_eq!(status, 421);
    assert!(!body.contains("state="), "{body}");
    let (action, manifest) = run.page();
    let callback = register(&gh, &action, &manifest);
    let forged = format!(
        "{}&state=00000000000000000000000000000000",
        callback.split("&state=").next().unwrap()
    );
    let (status, body, _) = http(run.port, "GET", &forged, &run.host(), "");
    assert_eq!(status, 400);
    assert!(body.contains("not this run's state"), "{body}");
    let (status, _, _) = http(run.port, "POST", &callback, &run.host(), "");
    assert_eq!(status, 405);
    assert!(!key.exists(), "nothing is written before the real callback");
    let (status, _, _) = http(run.port, "GET", &callback, &run.host(), "");
    assert_eq!(status, 200);
    let (code, out, err) = run.finish();
    assert_eq!(code, 0, "{out}{err}");
}

/// The code of another manifest (more permissions, events, another owner) brings another App:
/// refused, exit 1, and its key is never written.
#[test]
fn an_app_other_than_the_manifests_is_refused_and_its_key_not_written() {
    for (tamper, want) in [
        ("permissions", "its permissions are"),
        ("events", "it subscribes to events"),
        ("owner", "not to the repository's owner"),
    ] {
        let gh = StandIn::start(Scenario::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("app.pem");
        let run = start(&gh, &key, &["--kind", "publish", "--org"]);
        let (mut action, mut manifest) = run.page();
        match tamper {
            "permissions" => manifest["default_permissions"]["workflows"] = "write".into(),
            "events" => manifest["default_events"] = serde_json::json!(["push"]),
            _ => action = action.replace("/organizations/octo/", "/organizations/other/"),
        }
        let callback = register(&gh, &action, &manifest);
        http(run.port, "GET", &callback, &run.host(), "");
        let (code, out, err) = run.finish();
        assert_eq!(code, 1, "{tamper}: {out}{err}");
        assert!(err.contains(want), "{tamper}: {err}");
        assert!(err.contains("delete it"), "{err}");
        assert!(!key.exists(), "{tamper}");
    }
}

#[test]
fn an_existing_key_file_and_a_spent_code_fail_closed() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("app.pem");
    std::fs::write(&key, "mine").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .args([
            "app",
            "create",
            "--kind",
            "publish",
            "--repository",
            "octo/repo",
        ])
        .arg(format!("--api-url={}", gh.url()))
        .arg(format!("--key-out={}", key.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists"));
    assert_eq!(std::fs::read_to_string(&key).unwrap(), "mine");
    assert!(gh.requests().is_empty());

    // A code GitHub does not know (spent, expired, made up) fails the exchange: exit 2, no key.
    let key = dir.path().join("new.pem");
    let run = start(&gh, &key, &["--kind", "publish"]);
    let (action, _) = run.page();
    let state = action.rsplit('=').next().unwrap().to_owned();
    http(
        run.port,
        "GET",
        &format!("/callback?code=deadbeef&state={state}"),
        &run.host(),
        "",
    );
    let (code, out, err) = run.finish();
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("exchanging the code"), "{err}");
    assert!(!key.exists());
}
