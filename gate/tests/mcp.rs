//! `gate mcp` end to end: the built binary spawned over stdio, driven by rmcp's own client (the
//! `initialize` handshake an agent platform makes), and once by hand, line by line, to show that
//! standard output carries JSON-RPC and nothing else.
//!
//! The clone is a real temporary git repository; the diffs are made by git itself. The binary
//! runs with PATH only (no ambient GITHUB_*, token or key).
#![cfg(feature = "mcp")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

mod common;
use common::git_command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A clone with `src/lib.rs`, `README.md` and a workflow, one commit.
fn clone() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join(".github/workflows")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    41\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("README.md"), "# widgets\n").unwrap();
    std::fs::write(dir.join(".github/workflows/ci.yml"), "on: push\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    tmp
}

/// The diff git makes of writing `contents` to `path`, the clone left as it was.
fn diff_of(dir: &Path, path: &str, contents: &str) -> String {
    let file = dir.join(path);
    let before = std::fs::read(&file).ok();
    std::fs::write(&file, contents).unwrap();
    git(dir, &["add", "-N", path]);
    let diff = git(dir, &["diff", "--no-color", "--no-ext-diff"]);
    match before {
        Some(bytes) => std::fs::write(&file, bytes).unwrap(),
        None => {
            git(dir, &["reset", "-q", "--", path]);
            std::fs::remove_file(&file).unwrap();
        }
    }
    assert!(diff.starts_with("diff --git "), "{diff}");
    diff
}

fn gate_command(repo: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_gate"));
    cmd.arg("mcp")
        .arg("--repo")
        .arg(repo)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd
}

async fn connect(repo: &Path) -> RunningService<RoleClient, ()> {
    let (transport, _stderr) = TokioChildProcess::builder(gate_command(repo))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn call<S: rmcp::Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(arguments) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool error whose message starts with the field at fault.
fn assert_field_error(result: &CallToolResult, field: &str) {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let message = text(result);
    assert!(
        message.starts_with(&format!("{field}: ")),
        "expected an error naming `{field}`, got {message:?}"
    );
}

fn rules(doc: &Value) -> Vec<String> {
    doc["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rule"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn lists_the_four_tools_with_input_and_output_schemas() {
    let repo = clone();
    let client = connect(repo.path()).await;
    let info = client.peer_info().unwrap();
    assert!(info.capabilities.tools.is_some());
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, gate::mcp::TOOLS);
    let expect: [(&str, &[&str], &[&str]); 4] = [
        (
            "check_change",
            &["diff", "scope", "base"],
            &["diff", "scope"],
        ),
        (
            "propose_change",
            &["diff", "scope", "title", "description", "base"],
            &["diff", "scope"],
        ),
        (
            "revise_change",
            &["task_id", "diff", "title", "description"],
            &["task_id", "diff"],
        ),
        ("task_status", &["task_id"], &["task_id"]),
    ];
    for (tool, (name, properties, required)) in tools.iter().zip(expect) {
        assert_eq!(tool.name, name);
        let input = Value::Object((*tool.input_schema).clone());
        assert_eq!(input["type"], "object", "{name}");
        let mut found: Vec<&str> = input["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        found.sort_unstable();
        let mut want = properties.to_vec();
        want.sort_unstable();
        assert_eq!(found, want, "{name}'s input properties");
        let mut found_required: Vec<&str> = input["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        found_required.sort_unstable();
        let mut want_required = required.to_vec();
        want_required.sort_unstable();
        assert_eq!(found_required, want_required, "{name}'s required inputs");
        assert_eq!(input["additionalProperties"], false, "{name}");
        let output = Value::Object((**tool.output_schema.as_ref().unwrap()).clone());
        assert_eq!(output["type"], "object", "{name}'s output schema");
        assert!(
            tool.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{name}"
        );
    }
    let check = Value::Object((**tools[0].output_schema.as_ref().unwrap()).clone());
    for key in ["verdict", "violations", "files", "diff_sha256", "summary"] {
        assert!(check["properties"].get(key).is_some(), "{key}");
    }
    let propose = tools
        .iter()
        .find(|t| t.name == "propose_change")
        .and_then(|t| t.output_schema.as_ref())
        .map(|s| Value::Object((**s).clone()))
        .unwrap();
    assert!(
        propose["properties"]
            .get("build_findings_non_authoritative")
            .is_some(),
        "{propose}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn check_change_accepts_an_honest_diff_and_rejects_with_rule_ids() {
    let repo = clone();
    let dir = repo.path();
    let honest = diff_of(dir, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let workflow = diff_of(
        dir,
        ".github/workflows/ci.yml",
        "on: [push, pull_request]\n",
    );
    let readme = diff_of(dir, "README.md", "# widgets\n\nMore.\n");
    let client = connect(dir).await;

    let accepted = call(
        &client,
        "check_change",
        json!({"diff": honest, "scope": ["src/**"]}),
    )
    .await;
    assert_eq!(accepted.is_error, Some(false), "{}", text(&accepted));
    let doc = accepted.structured_content.clone().unwrap();
    assert_eq!(doc["schema"], gate::mcp::CHECK_CHANGE_SCHEMA);
    assert_eq!(doc["verdict"], "accept", "{doc}");
    assert_eq!(doc["mode"], "git-cross-checked");
    assert_eq!(doc["violations"], json!([]));
    assert_eq!(doc["files"][0]["new_path"], "src/lib.rs");
    assert_eq!(doc["files"][0]["status"], "modified");
    assert_eq!(
        doc["diff_sha256"],
        guard::hash::sha256_hex(honest.as_bytes())
    );
    // The text content is the same document, for clients that read only text.
    assert_eq!(
        serde_json::from_str::<Value>(&text(&accepted)).unwrap(),
        doc
    );

    // The same diff at a named base (the commit's id) is accepted too.
    let head = git(dir, &["rev-parse", "HEAD"]);
    let at_head = call(
        &client,
        "check_change",
        json!({"diff": honest, "scope": ["src/**"], "base": head.trim()}),
    )
    .await;
    assert_eq!(at_head.structured_content.unwrap()["verdict"], "accept");

    let denied = call(
        &client,
        "check_change",
        json!({"diff": workflow, "scope": ["**"]}),
    )
    .await;
    // A rejection is the tool's answer, not a tool error.
    assert_eq!(denied.is_error, Some(false));
    let doc = denied.structured_content.unwrap();
    assert_eq!(doc["verdict"], "reject");
    assert!(rules(&doc).contains(&"denied-path".to_owned()), "{doc}");
    let finding = doc["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["rule"] == "denied-path")
        .unwrap();
    assert_eq!(finding["path"], ".github/workflows/ci.yml");
    assert_eq!(finding["line"], 1);
    assert!(!finding["hint"].as_str().unwrap().is_empty());
    assert_eq!(finding["docs"], "README.md#rule-denied-path");

    let out_of_scope = call(
        &client,
        "check_change",
        json!({"diff": readme, "scope": ["src/**"]}),
    )
    .await;
    let doc = out_of_scope.structured_content.unwrap();
    assert_eq!(doc["verdict"], "reject");
    assert_eq!(rules(&doc), ["out-of-scope"], "{doc}");
    assert_eq!(doc["violations"][0]["path"], "README.md");
    assert!(doc["summary"].as_str().unwrap().contains("out-of-scope"));

    // A diff git cannot apply to the base (its context is not the base's) is rejected by git.
    let stale = honest.replace("    41", "    40");
    let doc = call(
        &client,
        "check_change",
        json!({"diff": stale, "scope": ["src/**"]}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(doc["verdict"], "reject");
    assert_eq!(rules(&doc), ["git-refused"], "{doc}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn bad_inputs_are_tool_errors_naming_the_field() {
    let repo = clone();
    let dir = repo.path();
    let honest = diff_of(dir, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let client = connect(dir).await;
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"diff": "please add a test", "scope": ["src/**"]}),
            "diff",
        ),
        (json!({"diff": "", "scope": ["src/**"]}), "diff"),
        (json!({"diff": 7, "scope": ["src/**"]}), "diff"),
        (json!({"scope": ["src/**"]}), "diff"),
        (json!({"diff": honest, "scope": "src/**"}), "scope"),
        (json!({"diff": honest, "scope": []}), "scope"),
        (json!({"diff": honest, "scope": [3]}), "scope"),
        (
            json!({"diff": honest, "scope": ["src/**,README.md"]}),
            "scope",
        ),
        (json!({"diff": honest, "scope": [" src/**"]}), "scope"),
        (json!({"diff": honest}), "scope"),
        (
            json!({"diff": honest, "scope": ["src/**"], "base": "--output=/tmp/x"}),
            "base",
        ),
        (
            json!({"diff": honest, "scope": ["src/**"], "base": "no-such-branch"}),
            "base",
        ),
        (
            json!({"diff": honest, "scope": ["src/**"], "base": ["main"]}),
            "base",
        ),
    ];
    for (args, field) in cases {
        let result = call(&client, "check_change", args.clone()).await;
        assert_field_error(&result, field);
        assert!(result.structured_content.is_none(), "{args}");
    }
    // Oversized: one byte over the tool's limit.
    let mut big = honest.clone();
    big.push_str(&"+".repeat(gate::mcp::MAX_DIFF_BYTES + 1 - honest.len()));
    let result = call(
        &client,
        "check_change",
        json!({"diff": big, "scope": ["src/**"]}),
    )
    .await;
    assert_field_error(&result, "diff");
    assert!(text(&result).contains("limit"), "{}", text(&result));
    // An unknown argument is named.
    let result = call(
        &client,
        "check_change",
        json!({"diff": honest, "scope": ["src/**"], "expected_sha256": "00"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("\"expected_sha256\""),
        "{}",
        text(&result)
    );
    // The server is still there and still right.
    let after = call(
        &client,
        "check_change",
        json!({"diff": honest, "scope": ["src/**"]}),
    )
    .await;
    assert_eq!(after.structured_content.unwrap()["verdict"], "accept");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn without_a_dispatcher_only_check_change_works() {
    let repo = clone();
    let dir = repo.path();
    let honest = diff_of(dir, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let client = connect(dir).await;
    for (tool, args) in [
        (
            "propose_change",
            json!({"diff": honest, "scope": ["src/**"]}),
        ),
        ("task_status", json!({"task_id": "task-1"})),
        (
            "revise_change",
            json!({"task_id": "task-1", "diff": honest}),
        ),
    ] {
        let result = call(&client, tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert!(
            text(&result).contains("without a dispatcher configuration"),
            "{tool}: {}",
            text(&result)
        );
    }
    let ok = call(
        &client,
        "check_change",
        json!({"diff": honest, "scope": ["src/**"]}),
    )
    .await;
    assert_eq!(ok.structured_content.unwrap()["verdict"], "accept");
    client.cancel().await.unwrap();
}

/// The handshake as a client in another language makes it, one JSON line at a time, at an older
/// protocol version: every line on standard output is a JSON-RPC 2.0 message, the answers carry
/// the request ids, and the server ends with exit 0 when its input ends.
#[test]
fn stdout_carries_only_json_rpc_at_an_older_protocol_version() {
    let repo = clone();
    let dir = repo.path();
    let honest = diff_of(dir, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gate"))
        .args(["mcp", "--repo"])
        .arg(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    fn send(stdin: &mut impl Write, message: Value) {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }
    let mut read = || {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout closed");
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    };
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "hand", "version": "0"}
        }}),
    );
    let init = read();
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "gate");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let list = read();
    assert_eq!(list["id"], 2);
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 4);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "check_change",
            "arguments": {"diff": honest, "scope": ["src/**"]}
        }}),
    );
    let answer = read();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["isError"], false);
    assert_eq!(answer["result"]["structuredContent"]["verdict"], "accept");
    drop(stdin);
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "", "nothing but the answers on stdout");
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_repo_git_does_not_read_is_refused_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gate"))
        .args(["mcp", "--repo"])
        .arg(tmp.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a git repository"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- with a dispatcher configuration, against the GitHub stand-in --------------------------------

const KEY: &str = "dispatch-key-dispatch-key-dispatch-key-0123";
/// The stand-in's publishing App.
const APP_ID: &str = "424242";

/// The progress notifications a client received.
#[derive(Clone, Default)]
struct Progress(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl rmcp::ClientHandler for Progress {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.0
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

async fn connect_dispatching(
    repo: &Path,
    gh: &github_standin::StandIn,
) -> (
    RunningService<RoleClient, Progress>,
    Progress,
    tokio::task::JoinHandle<String>,
) {
    let mut cmd = gate_command(repo);
    cmd.args([
        "--repository=octo/repo",
        "--workflow=agent-team-apply.yml",
        "--ref=main",
    ])
    .arg(format!("--app-id={APP_ID}"))
    .arg(format!("--api-url={}", gh.url()))
    .env("GH_TOKEN", gh.token())
    .env("AGENT_TEAM_DISPATCH_KEY", KEY);
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = stderr.unwrap();
    let stderr = tokio::spawn(async move {
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text)
            .await
            .unwrap();
        text
    });
    let progress = Progress::default();
    let client = progress.clone().serve(transport).await.unwrap();
    (client, progress, stderr)
}

async fn propose(client: &RunningService<RoleClient, Progress>, args: Value) -> CallToolResult {
    let Value::Object(arguments) = args else {
        panic!("arguments must be an object")
    };
    let mut params = CallToolRequestParams::new("propose_change").with_arguments(arguments);
    params.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
        rmcp::model::ProgressToken(rmcp::model::NumberOrString::Number(7)),
    ));
    client.call_tool(params).await.unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn propose_change_dispatches_waits_and_returns_the_draft() {
    let gh = github_standin::StandIn::start(github_standin::Scenario::default()).unwrap();
    let repo = clone();
    let dir = repo.path();
    let honest = diff_of(dir, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let (client, progress, stderr) = connect_dispatching(dir, &gh).await;
    let result = propose(
        &client,
        json!({"diff": honest, "scope": ["src/**"], "title": "Answer 42"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let doc = result.structured_content.clone().unwrap();
    assert_eq!(doc["schema"], gate::mcp::PROPOSE_CHANGE_SCHEMA);
    assert_eq!(doc["decision"], "pass", "{doc}");
    assert!(
        doc["draft"]["url"].as_str().unwrap().ends_with("/pull/1"),
        "{doc}"
    );
    assert_eq!(doc["base_sha"], git(dir, &["rev-parse", "HEAD"]).trim());
    assert_eq!(
        doc["diff_sha256"],
        guard::hash::sha256_hex(honest.as_bytes())
    );
    let task_id = doc["task_id"].as_str().unwrap().to_owned();
    assert!(task_id.starts_with("mcp-"), "{task_id}");
    // Exactly one dispatch, signed for this task.
    let dispatches: Vec<_> = gh
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/dispatches"))
        .collect();
    assert_eq!(dispatches.len(), 1);
    let body: Value = serde_json::from_slice(&dispatches[0].body).unwrap();
    assert_eq!(body["inputs"]["task_id"], task_id.as_str());
    assert_eq!(body["inputs"]["pr_title"], "Answer 42");
    // Progress was reported while the call ran.
    let seen = progress.0.lock().unwrap().clone();
    assert!(
        seen.iter().any(|m| m.contains("checking the change")),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|m| m.starts_with("passed: draft pull request #1")),
        "{seen:?}"
    );

    let status = call(&client, "task_status", json!({"task_id": task_id})).await;
    let status = status.structured_content.unwrap();
    assert_eq!(status["state"], "finished");
    assert_eq!(status["outcome"]["decision"], "pass");
    let unknown = call(&client, "task_status", json!({"task_id": "mcp-1-00000000"})).await;
    assert_field_error(&unknown, "task_id");
    let bad = call(&client, "task_status", json!({"task_id": "../x"})).await;
    assert_field_error(&bad, "task_id");
    let bad_title = propose(
        &client,
        json!({"diff": honest, "scope": ["src/**"], "title": "two\nlines"}),
    )
    .await;
    assert_field_error(&bad_title, "title");

    client.cancel().await.unwrap();
    let stderr = stderr.await.unwrap();
    for secret in [gh.token().as_str(), KEY] {
        assert!(!stderr.contains(secret), "a secret reached stderr");
        assert!(
            !doc.to_string().contains(secret),
            "a secret reached the answer"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn propose_change_never_dispatches_a_rejected_change() {
    let gh = github_standin::StandIn::start(github_standin::Scenario::default()).unwrap();
    let repo = clone();
    let dir = repo.path();
    let workflow = diff_of(
        dir,
        ".github/workflows/ci.yml",
        "on: [push, pull_request]\n",
    );
    let (client, _progress, _stderr) = connect_dispatching(dir, &gh).await;
    let result = propose(&client, json!({"diff": workflow, "scope": ["**"]})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let doc = result.structured_content.unwrap();
    assert_eq!(doc["decision"], "fail", "{doc}");
    assert!(rules(&doc).contains(&"denied-path".to_owned()), "{doc}");
    assert!(doc["draft"].is_null());
    assert!(
        gh.requests().is_empty(),
        "nothing reaches GitHub: {:?}",
        gh.requests().iter().map(|r| r.line()).collect::<Vec<_>>()
    );
    client.cancel().await.unwrap();
}

#[test]
fn a_dispatcher_configuration_without_its_key_is_refused_at_start() {
    let repo = clone();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gate"))
        .args(["mcp", "--repo"])
        .arg(repo.path())
        .args([
            "--repository=octo/repo",
            "--workflow=agent-team-apply.yml",
            "--ref=main",
            "--app-id=424242",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GH_TOKEN", "ghs_0123456789abcdef0123456789abcdef0123")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("AGENT_TEAM_DISPATCH_KEY"), "{stderr}");
}

/// git with `stdin` and, when given, a throwaway index.
fn git_in(dir: &Path, index: Option<&Path>, args: &[&str], stdin: &str) -> String {
    let mut cmd = git_command(dir);
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test(flavor = "current_thread")]
async fn revise_change_revises_the_tasks_open_draft_on_its_head() {
    let gh = github_standin::StandIn::start(github_standin::Scenario::default()).unwrap();
    let repo = clone();
    let dir = repo.path();
    let honest = diff_of(dir, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let (client, _progress, _stderr) = connect_dispatching(dir, &gh).await;

    // Not a task of this server: its scope is unknown, nothing is sent.
    let unknown = call(
        &client,
        "revise_change",
        json!({"task_id": "mcp-1-00000000", "diff": honest}),
    )
    .await;
    assert_field_error(&unknown, "task_id");
    assert!(gh.requests().is_empty());

    let first = propose(&client, json!({"diff": honest, "scope": ["src/**"]})).await;
    let first = first.structured_content.unwrap();
    assert_eq!(first["decision"], "pass", "{first}");
    let task_id = first["task_id"].as_str().unwrap().to_owned();
    let head1 = first["draft"]["head_sha"].as_str().unwrap().to_owned();

    // The draft's head fetched into the clone (the stand-in's publication: CHANGES.txt only).
    let blob = git_in(
        dir,
        None,
        &["hash-object", "-w", "--stdin"],
        "published by the stand-in\n",
    );
    git_in(
        dir,
        None,
        &["mktree"],
        &format!("100644 blob {blob}\tCHANGES.txt\n"),
    );
    github_standin::export_commit(&gh, dir, &head1).unwrap();
    // The revision, made against that head.
    let index = dir.join(".git/revise-index");
    git_in(dir, Some(&index), &["read-tree", &head1], "");
    let new_blob = git_in(dir, None, &["hash-object", "-w", "--stdin"], "// round 2\n");
    git_in(
        dir,
        Some(&index),
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{new_blob},src/round2.rs"),
        ],
        "",
    );
    let revision = format!(
        "{}\n",
        git_in(
            dir,
            Some(&index),
            &["diff", "--cached", "--no-color", &head1],
            ""
        )
    );

    let before = gh.requests().len();
    let mut params = CallToolRequestParams::new("revise_change").with_arguments(
        json!({"task_id": task_id, "diff": revision, "title": "Round two"})
            .as_object()
            .unwrap()
            .clone(),
    );
    params.meta = None;
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let doc = result.structured_content.unwrap();
    assert_eq!(doc["decision"], "pass", "{doc}");
    assert_eq!(doc["task_id"], task_id.as_str());
    assert_eq!(doc["base_sha"], head1.as_str());
    // The same draft, now at a new head.
    assert!(
        doc["draft"]["url"].as_str().unwrap().ends_with("/pull/1"),
        "{doc}"
    );
    assert_ne!(doc["draft"]["head_sha"], head1.as_str());
    assert_eq!(gh.state().pulls.len(), 1);
    // One dispatch, signed as a revision of #1 on its head.
    let dispatches: Vec<_> = gh.requests()[before..]
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/dispatches"))
        .cloned()
        .collect();
    assert_eq!(dispatches.len(), 1);
    let body: Value = serde_json::from_slice(&dispatches[0].body).unwrap();
    assert_eq!(body["inputs"]["revise_pull_request"], "1");
    assert_eq!(body["inputs"]["base_sha"], head1.as_str());
    assert_eq!(body["inputs"]["task_id"], task_id.as_str());
    assert_eq!(body["inputs"]["pr_title"], "Round two");
    client.cancel().await.unwrap();
}
