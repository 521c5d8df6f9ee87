//! `gate dispatch` against the stand-in for GitHub's API (`github-standin`, shapes cited there):
//! each case asserts the exit code, the requests made and that the token reached no output.
//! In-process cases run on a virtual clock (waits are recorded, not slept); the CLI cases run the
//! real binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use gate::dispatch::{DispatchReport, DispatchRequest, run};
use gate::dispatch_mac::{
    DispatchKey, FullRef, KeySlot, RepositoryName, SignedFields, VerifyingKeys, WorkflowPath,
    verify,
};
use github::{ApiUrl, Client, ClientConfig, Repository, Token, VirtualClock};
use github_standin::{
    Canned, DispatchMode, Fault, Forgery, IntruderRun, Outcome, PriorRun, Recorded, Scenario,
    StandIn,
};
use guard::inputs::{BaseSha, DiffSha256, DispatchMac, Nonce, Scope, TaskId};

const BASE: &str = "0123456789abcdef0123456789abcdef01234567";
const KEY: &str = "dispatch-key-dispatch-key-dispatch-key-0123";
const DIFF: &[u8] = b"diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n";
const RUNS: &str = "/repos/octo/repo/actions/runs/";
/// The stand-in's publishing App.
const APP_ID: u64 = 424_242;
const NONCE: &str = "00112233445566778899aabbccddeeff";

struct Case {
    report: DispatchReport,
    requests: Vec<Recorded>,
    log: Vec<String>,
    clock: Arc<VirtualClock>,
    gh: StandIn,
}

fn request(diff: &[u8], wait: bool) -> DispatchRequest {
    DispatchRequest {
        repository: Repository::parse("octo/repo").unwrap(),
        workflow: "agent-team-apply.yml".into(),
        git_ref: FullRef::parse("main").unwrap(),
        task_id: TaskId::parse("T-1").unwrap(),
        base: BaseSha::parse(BASE).unwrap(),
        scope: Scope::parse("src/**").unwrap(),
        diff: diff.to_vec(),
        key: DispatchKey::new(KEY.as_bytes(), "test").unwrap(),
        wait,
        timeout: Duration::from_secs(3600),
        app_id: Some(APP_ID),
        check_name: gate::dispatch::CHECK_NAME.to_owned(),
        pr_title: String::new(),
        pr_description: String::new(),
        lifetime: Duration::from_secs(3600),
        nonce: Some(Nonce::parse(NONCE).unwrap()),
        preflight: None,
        revision: None,
        dispatcher: None,
    }
}

fn client(gh: &StandIn, token: &str, clock: &Arc<VirtualClock>, timeout: Duration) -> Client {
    let env = |name: &str| (name == "GH_TOKEN").then(|| token.to_owned());
    let mut config = ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&env).unwrap(),
        clock.clone(),
    );
    config.deadline = Some(timeout);
    Client::new(config).unwrap()
}

/// The branch's head the dispatched runs run on (seeded in the stand-in's Git database).
fn seed_main(gh: &StandIn) -> String {
    let mut state = gh.state();
    let tree = state.git.put_tree(Vec::new());
    let head = state
        .git
        .put_commit(&tree, &[], "main's head\n", 1_772_366_000, false);
    state
        .git
        .refs
        .insert("refs/heads/main".into(), head.clone());
    head
}

fn run_case_with(scenario: Scenario, req: DispatchRequest, token: Option<&str>) -> Case {
    let gh = StandIn::start(scenario).unwrap();
    seed_main(&gh);
    let token = token.map_or_else(|| gh.token(), str::to_owned);
    let clock = Arc::new(VirtualClock::new(1_772_366_400));
    let client = client(&gh, &token, &clock, req.timeout);
    let mut log = Vec::new();
    let report = run(&client, &req, &mut |line: &str| log.push(line.to_owned()));
    let requests = gh.requests();
    let case = Case {
        report,
        requests,
        log,
        clock,
        gh,
    };
    assert_no_secret(&case, &token);
    case
}

fn run_case(scenario: Scenario, wait: bool) -> Case {
    run_case_with(scenario, request(DIFF, wait), None)
}

/// Neither the token nor the key reaches the document or the progress lines.
fn assert_no_secret(case: &Case, token: &str) {
    let json = serde_json::to_string(&case.report.doc).unwrap();
    for secret in [token, KEY] {
        assert!(!json.contains(secret), "a secret reached the JSON: {json}");
        for line in &case.log {
            assert!(!line.contains(secret), "a secret reached the log: {line}");
        }
    }
}

fn lines(requests: &[Recorded]) -> Vec<String> {
    requests.iter().map(Recorded::line).collect()
}

fn count(requests: &[Recorded], line: &str) -> usize {
    requests.iter().filter(|r| r.line() == line).count()
}

fn dispatches(requests: &[Recorded]) -> Vec<&Recorded> {
    requests
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/dispatches"))
        .collect()
}

fn run_id(case: &Case) -> u64 {
    case.report.doc.run.as_ref().expect("a run").id
}

/// The signed inputs verify with the key, over exactly what was sent.
fn assert_signed(inputs: &serde_json::Value) {
    let get = |k: &str| inputs[k].as_str().unwrap_or_default().to_owned();
    let mac = DispatchMac::parse(&get("dispatch_mac")).unwrap();
    let fields = SignedFields {
        repository: RepositoryName::parse("octo/repo").unwrap(),
        git_ref: FullRef::parse("refs/heads/main").unwrap(),
        workflow: WorkflowPath::parse(".github/workflows/agent-team-apply.yml").unwrap(),
        task_id: TaskId::parse(&get("task_id")).unwrap(),
        base: BaseSha::parse(&get("base_sha")).unwrap(),
        diff_sha256: DiffSha256::parse(&get("expected_diff_sha256")).unwrap(),
        nonce: mac.nonce().clone(),
        expires_at: mac.expires_at(),
        scope: Scope::parse(&get("declared_scope")).unwrap(),
        pr_title: get("pr_title"),
        pr_description: get("pr_description"),
        revision: gate::dispatch_mac::parse_revision(&get("revise_pull_request")).unwrap(),
    };
    let keys = VerifyingKeys {
        current: DispatchKey::new(KEY.as_bytes(), "test").unwrap(),
        previous: None,
    };
    assert_eq!(verify(&fields, Some(&mac), &keys), Ok(KeySlot::Current));
}

#[test]
fn run_details_then_passed_gate() {
    let case = run_case(Scenario::default(), true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(case.report.doc.decision, "pass");
    let id = run_id(&case);
    let head = case
        .report
        .doc
        .pull_request
        .as_ref()
        .unwrap()
        .head_sha
        .clone();
    assert_eq!(
        lines(&case.requests),
        [
            "GET /repos/octo/repo/actions/workflows/agent-team-apply.yml".to_owned(),
            "POST /repos/octo/repo/actions/workflows/agent-team-apply.yml/dispatches".to_owned(),
            format!("GET /repos/octo/repo/actions/runs/{id}"),
            format!("GET /repos/octo/repo/actions/runs/{id}/jobs"),
            "GET /repos/octo/repo/pulls".to_owned(),
            format!("GET /repos/octo/repo/commits/{head}/check-runs"),
            format!("GET /repos/octo/repo/git/commits/{head}"),
        ]
    );
    // The check runs are asked of the publishing App only.
    let checks = case
        .requests
        .iter()
        .find(|r| r.path.ends_with("/check-runs"))
        .unwrap();
    assert_eq!(checks.query("app_id"), Some("424242"));
    let publication = case.report.doc.publication.as_ref().unwrap();
    assert_eq!(publication.author, "agent-team-apply[bot]");
    assert_eq!(publication.tree, publication.proven_tree);
    assert_eq!(case.report.doc.nonce, NONCE);
    let token = case.gh.token();
    for r in &case.requests {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {token}").as_str())
        );
        assert_eq!(r.header("x-github-api-version"), Some("2022-11-28"));
    }
    let body = dispatches(&case.requests)[0].json();
    assert_eq!(body["ref"], "refs/heads/main");
    assert_eq!(body["return_run_details"], true);
    let inputs = &body["inputs"];
    let mut keys: Vec<&str> = inputs
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "base_sha",
            "declared_scope",
            "diff_b64",
            "dispatch_mac",
            "expected_diff_sha256",
            "task_id"
        ]
    );
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(inputs["diff_b64"].as_str().unwrap())
            .unwrap(),
        DIFF
    );
    assert_eq!(
        inputs["expected_diff_sha256"],
        DiffSha256::of(DIFF).as_str()
    );
    assert_signed(inputs);
    let pulls = case
        .requests
        .iter()
        .find(|r| r.path.ends_with("/pulls"))
        .unwrap();
    assert_eq!(pulls.query("head"), Some("octo:agent-team/T-1"));
    assert_eq!(pulls.query("state"), Some("open"));
    let doc = &case.report.doc;
    assert_eq!(doc.run.as_ref().unwrap().found_by, "return_run_details");
    assert_eq!(doc.jobs.len(), 4);
    assert!(
        doc.jobs
            .iter()
            .all(|j| j.conclusion.as_deref() == Some("success"))
    );
    assert!(doc.pull_request.as_ref().unwrap().draft);
    assert_eq!(
        doc.check_run.as_ref().unwrap().conclusion.as_deref(),
        Some("success")
    );
    assert!(case.clock.sleeps().is_empty());
}

#[test]
fn without_wait_the_run_is_reported_and_not_followed() {
    let case = run_case(Scenario::default(), false);
    assert_eq!(case.report.exit_code, 0);
    assert_eq!(case.report.doc.decision, "dispatched");
    assert_eq!(case.requests.len(), 3, "{:?}", lines(&case.requests));
    assert!(case.report.doc.jobs.is_empty());
}

#[test]
fn no_content_falls_back_to_the_run_name_and_never_a_stale_run() {
    let scenario = Scenario {
        dispatch: DispatchMode::NoContent,
        listed_after: 2,
        prior_runs: vec![
            PriorRun {
                display_title: "agent-team-apply T-1".into(),
                age_seconds: 30,
                conclusion: Some("success".into()),
            },
            PriorRun {
                display_title: "agent-team-apply T-10".into(),
                age_seconds: -100,
                conclusion: None,
            },
        ],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    let doc = &case.report.doc;
    assert_eq!(doc.run.as_ref().unwrap().found_by, "run-name-and-watermark");
    let created = &case.gh.state().runs;
    let dispatched = created.iter().find(|r| !r.inputs.is_empty()).unwrap().id;
    assert_eq!(
        run_id(&case),
        dispatched,
        "the stale run of the same name was not taken"
    );
    assert_eq!(dispatches(&case.requests).len(), 1);
    let listings: Vec<&Recorded> = case
        .requests
        .iter()
        .filter(|r| r.path.ends_with("/runs"))
        .collect();
    assert_eq!(
        listings.len(),
        3,
        "listed twice without the run, then found"
    );
    assert_eq!(listings[0].query("event"), Some("workflow_dispatch"));
    assert_eq!(listings[0].query("branch"), Some("main"));
    assert_eq!(
        case.clock.sleeps(),
        [Duration::from_secs(2), Duration::from_secs(4)]
    );
}

fn parameter_refused(status: u16) {
    let scenario = Scenario {
        dispatch: DispatchMode::RejectParameter(status),
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    let posts = dispatches(&case.requests);
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[0].json()["return_run_details"], true);
    assert!(posts[1].json().get("return_run_details").is_none());
    assert_eq!(posts[0].json()["inputs"], posts[1].json()["inputs"]);
    assert_eq!(
        case.report.doc.run.as_ref().unwrap().found_by,
        "run-name-and-watermark"
    );
    assert_eq!(case.gh.state().runs.len(), 1, "exactly one run was started");
}

#[test]
fn status_422_naming_the_parameter_falls_back_once() {
    parameter_refused(422);
}

#[test]
fn status_400_naming_the_parameter_falls_back_once() {
    parameter_refused(400);
}

#[test]
fn a_422_about_something_else_is_an_error() {
    let scenario = Scenario {
        faults: vec![Fault::new(
            "POST",
            "/repos/octo/repo/actions/workflows/",
            vec![Canned::status(
                422,
                "Unexpected inputs provided: [\"dispatch_mac\"]",
            )],
        )],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 2);
    assert_eq!(dispatches(&case.requests).len(), 1);
    assert!(
        case.report.doc.reasons[0].contains("HTTP 422: Unexpected inputs provided"),
        "{:?}",
        case.report.doc.reasons
    );
}

#[test]
fn large_diff_goes_through_the_git_database() {
    let mut diff = b"diff --git a/src/big.rs b/src/big.rs\nnew file mode 100644\n--- /dev/null\n+++ b/src/big.rs\n@@ -0,0 +1,3000 @@\n".to_vec();
    for i in 0..3000 {
        diff.extend_from_slice(format!("+// line {i} of a large generated file\n").as_bytes());
    }
    assert!(
        diff.len() > 65_535 * 3 / 4,
        "the diff must not fit diff_b64"
    );
    let case = run_case_with(Scenario::default(), request(&diff, true), None);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(case.report.doc.transport, "diff_ref");
    assert_eq!(
        case.report.doc.diff_ref.as_deref(),
        Some("agent-team-diffs/T-1")
    );
    let l = lines(&case.requests);
    assert_eq!(
        l[1..5],
        [
            "POST /repos/octo/repo/git/blobs",
            "POST /repos/octo/repo/git/trees",
            "POST /repos/octo/repo/git/commits",
            "POST /repos/octo/repo/git/refs",
        ]
    );
    let find = |suffix: &str| {
        case.requests
            .iter()
            .find(|r| r.path.ends_with(suffix))
            .unwrap()
    };
    assert_eq!(find("/git/blobs").json()["encoding"], "base64");
    let tree = find("/git/trees").json();
    assert_eq!(tree["tree"][0]["path"], "T-1.patch");
    assert_eq!(tree["tree"][0]["mode"], "100644");
    assert!(tree.get("base_tree").is_none());
    let commit = find("/git/commits").json();
    assert_eq!(commit["parents"], serde_json::json!([]));
    for identity in ["author", "committer", "signature"] {
        assert!(
            commit.get(identity).is_none(),
            "GitHub signs only without {identity}"
        );
    }
    assert_eq!(
        find("/git/refs").json()["ref"],
        "refs/heads/agent-team-diffs/T-1"
    );
    let inputs = dispatches(&case.requests)[0].json()["inputs"].clone();
    assert_eq!(inputs["diff_ref"], "agent-team-diffs/T-1");
    assert!(inputs.get("diff_b64").is_none());
    assert_signed(&inputs);
    // What a job would download is exactly the diff.
    let state = case.gh.state();
    let head = state.git.refs["refs/heads/agent-team-diffs/T-1"].clone();
    assert_eq!(
        state.git.read_path(&head, "T-1.patch"),
        Some(diff.as_slice())
    );
}

#[test]
fn a_diff_branch_left_by_an_earlier_attempt_is_moved() {
    let mut diff = b"diff --git a/src/big.rs b/src/big.rs\n".to_vec();
    diff.extend(std::iter::repeat_n(b'x', 70_000));
    let gh = StandIn::start(Scenario::default()).unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client(&gh, &gh.token(), &clock, Duration::from_secs(60));
    let first = run(&client, &request(&diff, false), &mut |_| {});
    assert_eq!(first.exit_code, 0, "{:?}", first.doc.reasons);
    diff.push(b'y');
    let second = run(&client, &request(&diff, false), &mut |_| {});
    assert_eq!(second.exit_code, 0, "{:?}", second.doc.reasons);
    let requests = gh.requests();
    let tail: Vec<String> = lines(&requests)
        .into_iter()
        .filter(|l| l.contains("/git/ref"))
        .collect();
    assert_eq!(
        tail,
        [
            "POST /repos/octo/repo/git/refs",
            "POST /repos/octo/repo/git/refs",
            "GET /repos/octo/repo/git/ref/heads/agent-team-diffs/T-1",
            "PATCH /repos/octo/repo/git/refs/heads/agent-team-diffs/T-1",
        ]
    );
    let state = gh.state();
    let head = state.git.refs["refs/heads/agent-team-diffs/T-1"].clone();
    assert_eq!(
        state.git.read_path(&head, "T-1.patch"),
        Some(diff.as_slice())
    );
}

fn refused(status: u16, message: &str, faults: Vec<Fault>, token: Option<&str>) -> Case {
    let scenario = Scenario {
        faults,
        ..Scenario::default()
    };
    let case = run_case_with(scenario, request(DIFF, true), token);
    assert_eq!(case.report.exit_code, 2);
    assert_eq!(case.report.doc.decision, "error");
    let reason = &case.report.doc.reasons[0];
    assert!(
        reason.contains(&format!("HTTP {status}: {message}")),
        "{reason}"
    );
    assert!(case.clock.sleeps().is_empty(), "a {status} is not retried");
    case
}

#[test]
fn status_401_is_not_retried() {
    let case = refused(
        401,
        "Bad credentials",
        Vec::new(),
        Some("ghs_wrongTOKENwrongTOKEN"),
    );
    assert_eq!(
        lines(&case.requests),
        ["GET /repos/octo/repo/actions/workflows/agent-team-apply.yml"]
    );
}

#[test]
fn status_403_on_the_dispatch_is_not_retried() {
    let faults = vec![Fault::new(
        "POST",
        "/repos/octo/repo/actions/workflows/",
        vec![Canned::status(
            403,
            "Resource not accessible by integration",
        )],
    )];
    let case = refused(403, "Resource not accessible by integration", faults, None);
    assert_eq!(dispatches(&case.requests).len(), 1);
    assert!(case.gh.state().runs.is_empty());
}

#[test]
fn status_404_for_an_unknown_workflow() {
    let mut req = request(DIFF, true);
    req.workflow = "other.yml".into();
    let case = run_case_with(Scenario::default(), req, None);
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0].contains("HTTP 404: Not Found"),
        "{:?}",
        case.report.doc.reasons
    );
    assert_eq!(case.requests.len(), 1);
}

#[test]
fn server_errors_on_reads_are_retried_with_backoff() {
    let scenario = Scenario {
        faults: vec![Fault::new(
            "GET",
            RUNS,
            vec![
                Canned::status(503, "Service Unavailable"),
                Canned::status(502, "Server Error"),
            ],
        )],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    let id = run_id(&case);
    assert_eq!(count(&case.requests, &format!("GET {RUNS}{id}")), 3);
    assert_eq!(
        case.clock.sleeps(),
        [Duration::from_secs(1), Duration::from_secs(2)]
    );
}

#[test]
fn server_errors_are_retried_a_bounded_number_of_times() {
    let scenario = Scenario {
        faults: vec![Fault::new(
            "GET",
            "/repos/octo/repo/actions/workflows/",
            vec![Canned::status(500, "Server Error"); 10],
        )],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 2);
    assert_eq!(case.requests.len(), 4, "four attempts in all");
    assert!(
        case.report.doc.reasons[0].contains("HTTP 500"),
        "{:?}",
        case.report.doc.reasons
    );
}

#[test]
fn an_ambiguous_dispatch_is_never_sent_twice() {
    let scenario = Scenario {
        faults: vec![Fault::new(
            "POST",
            "/repos/octo/repo/actions/workflows/",
            vec![Canned::status(502, "Server Error")],
        )],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(
        dispatches(&case.requests).len(),
        1,
        "never dispatched again"
    );
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0]
            .contains(&format!("no run named \"agent-team-apply T-1 v2:{NONCE}:")),
        "{:?}",
        case.report.doc.reasons
    );
    assert!(
        case.log
            .iter()
            .any(|l| l.contains("looking for it instead of dispatching again"))
    );
}

#[test]
fn an_ambiguous_second_dispatch_after_a_refused_parameter_is_not_sent_again() {
    let scenario = Scenario {
        faults: vec![Fault::new(
            "POST",
            "/repos/octo/repo/actions/workflows/",
            vec![
                Canned::status(
                    422,
                    "Invalid request.\n\n\"return_run_details\" is not a permitted key.",
                ),
                Canned::status(502, "Server Error"),
            ],
        )],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    let posts = dispatches(&case.requests);
    assert_eq!(posts.len(), 2);
    assert!(posts[1].json().get("return_run_details").is_none());
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.log
            .iter()
            .any(|l| l.contains("looking for it instead of dispatching again"))
    );
}

#[test]
fn a_dropped_connection_after_sending_the_dispatch_is_not_retried() {
    let scenario = Scenario {
        faults: vec![Fault::new(
            "POST",
            "/repos/octo/repo/actions/workflows/",
            vec![Canned::drop_connection()],
        )],
        ..Scenario::default()
    };
    let case = run_case(scenario, false);
    assert_eq!(dispatches(&case.requests).len(), 1);
    assert_eq!(case.report.exit_code, 2);
}

#[test]
fn secondary_rate_limit_waits_retry_after() {
    let scenario = Scenario {
        faults: vec![Fault::new("GET", RUNS, vec![Canned::retry_after(403, 7)])],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(case.clock.sleeps(), [Duration::from_secs(7)]);
}

#[test]
fn status_429_waits_retry_after_even_for_the_dispatch() {
    let scenario = Scenario {
        faults: vec![Fault::new(
            "POST",
            "/repos/octo/repo/actions/workflows/",
            vec![Canned::retry_after(429, 3)],
        )],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(
        dispatches(&case.requests).len(),
        2,
        "a rate-limited dispatch was not processed"
    );
    assert_eq!(case.gh.state().runs.len(), 1);
    assert_eq!(case.clock.sleeps(), [Duration::from_secs(3)]);
}

#[test]
fn primary_rate_limit_waits_for_the_reset() {
    let scenario = Scenario {
        faults: vec![Fault::new("GET", RUNS, vec![Canned::rate_limit_reset(30)])],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    // Reset 30 s after the response's own Date, plus one second.
    assert_eq!(case.clock.sleeps(), [Duration::from_secs(31)]);
}

#[test]
fn a_rate_limit_past_the_deadline_is_an_error() {
    let scenario = Scenario {
        faults: vec![Fault::new("GET", RUNS, vec![Canned::retry_after(403, 600)])],
        ..Scenario::default()
    };
    let mut req = request(DIFF, true);
    req.timeout = Duration::from_secs(60);
    let case = run_case_with(scenario, req, None);
    assert_eq!(case.report.exit_code, 2);
    assert!(case.clock.sleeps().is_empty(), "no wait past the deadline");
    assert!(
        case.report.doc.reasons[0].contains("deadline"),
        "{:?}",
        case.report.doc.reasons
    );
}

/// Without a run id in the dispatch answer, a run started beside ours (listed before ours,
/// which GitHub lists two polls late) that carries this dispatch's name, nonce included.
fn correlate_beside(intruder: IntruderRun) -> Case {
    let scenario = Scenario {
        dispatch: DispatchMode::NoContent,
        listed_after: 2,
        intruders: vec![intruder],
        ..Scenario::default()
    };
    run_case(scenario, true)
}

/// The run the dispatch itself created (the intruders never complete).
fn dispatched_run(case: &Case) -> u64 {
    let state = case.gh.state();
    let ours: Vec<u64> = state
        .runs
        .iter()
        .filter(|r| r.outcome != Outcome::Pending)
        .map(|r| r.id)
        .collect();
    assert_eq!(ours.len(), 1, "one dispatched run");
    ours[0]
}

fn intruder(actor: &str) -> IntruderRun {
    IntruderRun {
        offset_seconds: 1,
        actor: actor.into(),
        git_ref: "refs/heads/main".into(),
        head_sha: None,
        workflow_path: None,
    }
}

/// The intruder is not reported: the dispatch's own run is, and the log names the rule that
/// set the intruder aside.
fn assert_only_ours(case: &Case, rule: &str) {
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(run_id(case), dispatched_run(case));
    assert_eq!(
        case.report.doc.run.as_ref().unwrap().found_by,
        "run-name-and-watermark"
    );
    assert!(
        case.log.iter().any(
            |l| l.contains("bears this dispatch's name but is not its run") && l.contains(rule)
        ),
        "{:?}",
        case.log
    );
}

/// Anyone with `actions: write` can dispatch a copy of the inputs (the same run name, nonce
/// included) a second after ours. Before the dispatcher's identity was required, the copy,
/// listed first, was reported as the dispatch's run.
#[test]
fn a_same_task_run_by_another_actor_one_second_later_is_not_reported() {
    let case = correlate_beside(intruder("mallory"));
    assert_only_ours(
        &case,
        "started by mallory, not by the dispatcher octo-dispatcher",
    );
    let user = count(&case.requests, "GET /user");
    assert_eq!(user, 1, "the token's identity is read once");
}

/// A tag named like the branch: GitHub reports its name as `head_branch`, and the `branch`
/// filter lists it. Before the branch's head was required, it was reported.
#[test]
fn a_run_on_a_tag_named_like_the_branch_is_not_reported() {
    let case = correlate_beside(IntruderRun {
        git_ref: "refs/tags/main".into(),
        head_sha: Some("2222222222222222222222222222222222222222".into()),
        ..intruder("octo-dispatcher")
    });
    assert_only_ours(&case, "a tag of the branch's name");
}

#[test]
fn a_run_created_before_the_dispatch_is_not_reported() {
    let case = correlate_beside(IntruderRun {
        offset_seconds: -60,
        ..intruder("octo-dispatcher")
    });
    assert_only_ours(&case, "before the dispatch");
}

#[test]
fn a_run_of_another_workflow_file_is_not_reported() {
    let case = correlate_beside(IntruderRun {
        workflow_path: Some(".github/workflows/other.yml".into()),
        ..intruder("octo-dispatcher")
    });
    assert_only_ours(&case, "workflow \".github/workflows/other.yml\"");
}

/// A tag named like the branch at the branch's very head, its path qualified with the tag
/// (`@refs/tags/main`): only the dispatched ref's path is the dispatch's.
#[test]
fn a_run_on_a_tag_at_the_branchs_head_is_not_reported() {
    let case = correlate_beside(IntruderRun {
        git_ref: "refs/tags/main".into(),
        workflow_path: Some(".github/workflows/agent-team-apply.yml@refs/tags/main".into()),
        ..intruder("octo-dispatcher")
    });
    assert_only_ours(
        &case,
        "workflow \".github/workflows/agent-team-apply.yml@refs/tags/main\"",
    );
}

/// The guard verdict is read from the run found, never from a same-name run beside it: only
/// the found run's own artifact listing is asked for.
#[test]
fn the_verdict_artifact_is_read_only_from_the_run_found() {
    let scenario = Scenario {
        dispatch: DispatchMode::NoContent,
        listed_after: 2,
        intruders: vec![intruder("mallory")],
        ..guard_failed(3)
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 1, "{:?}", case.report.doc.reasons);
    let id = run_id(&case);
    assert_eq!(id, dispatched_run(&case));
    let verdict = case.report.doc.guard_verdict.as_ref().expect("the verdict");
    assert_eq!(
        verdict.artifact.as_deref(),
        Some(format!("agent-team-guard-{id}-1-standin.json").as_str())
    );
    let intruders: Vec<u64> = case
        .gh
        .state()
        .runs
        .iter()
        .map(|r| r.id)
        .filter(|r| *r != id)
        .collect();
    assert_eq!(intruders.len(), 1);
    for line in lines(&case.requests) {
        assert!(
            !line.contains(&format!("/actions/runs/{}", intruders[0])),
            "the intruder's run was read: {line}"
        );
    }
    assert_eq!(
        count(
            &case.requests,
            &format!("GET /repos/octo/repo/actions/runs/{id}/artifacts")
        ),
        1
    );
}

/// Two runs that pass every rule (the dispatcher's own token used twice): an error, neither
/// reported.
#[test]
fn two_runs_of_the_dispatcher_with_the_nonce_are_ambiguous_not_reported() {
    let scenario = Scenario {
        dispatch: DispatchMode::NoContent,
        intruders: vec![intruder("octo-dispatcher")],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 2, "{:?}", case.report.doc);
    assert!(case.report.doc.run.is_none(), "{:?}", case.report.doc.run);
    assert!(
        case.report.doc.reasons[0].contains("none is guessed"),
        "{:?}",
        case.report.doc.reasons
    );
    assert!(case.report.doc.guard_verdict.is_none());
}

/// An installation token has no user: the run cannot be matched to its dispatcher, and that is
/// said, not guessed.
#[test]
fn a_token_without_an_identity_cannot_correlate() {
    let scenario = Scenario {
        dispatch: DispatchMode::NoContent,
        installation_tokens: vec!["ghs_installationTOKEN000000000000000000".into()],
        ..Scenario::default()
    };
    let case = run_case_with(
        scenario,
        request(DIFF, true),
        Some("ghs_installationTOKEN000000000000000000"),
    );
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0].contains("token's identity, which could not be read"),
        "{:?}",
        case.report.doc.reasons
    );
}

#[test]
fn a_run_that_never_appears_is_not_guessed() {
    let scenario = Scenario {
        dispatch: DispatchMode::NoContent,
        creates_run: false,
        prior_runs: vec![PriorRun {
            display_title: "agent-team-apply T-1".into(),
            age_seconds: 5,
            conclusion: Some("success".into()),
        }],
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 2);
    assert!(case.report.doc.run.is_none());
    assert!(
        case.report.doc.reasons[0].contains("appeared within 300 s"),
        "{:?}",
        case.report.doc.reasons
    );
    let waited: Duration = case.clock.sleeps().iter().sum();
    assert!(waited <= Duration::from_secs(300), "{waited:?}");
    let listings = case
        .requests
        .iter()
        .filter(|r| r.path.ends_with("/runs"))
        .count();
    assert!((5..=30).contains(&listings), "{listings} listings");
}

#[test]
fn cancelled_run_has_no_verdict() {
    let scenario = Scenario {
        outcome: Outcome::Cancelled,
        polls_until_complete: 2,
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 2);
    assert_eq!(case.report.doc.decision, "error");
    assert!(
        case.report.doc.reasons[0].contains("concluded \"cancelled\""),
        "{:?}",
        case.report.doc.reasons
    );
    let id = run_id(&case);
    assert_eq!(count(&case.requests, &format!("GET {RUNS}{id}")), 3);
    assert_eq!(
        case.clock.sleeps(),
        [Duration::from_secs(2), Duration::from_secs(4)]
    );
}

#[test]
fn failed_gate_names_the_job_and_step_with_a_non_authoritative_log_tail() {
    let scenario = Scenario {
        outcome: Outcome::Failed {
            job: "build-test".into(),
            step: "Verify the tree after the build".into(),
        },
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 1);
    let doc = &case.report.doc;
    assert_eq!(doc.decision, "fail");
    let failed = doc.failed.as_ref().unwrap();
    assert_eq!(failed.job, "apply / build-test");
    assert_eq!(
        failed.step.as_deref(),
        Some("Verify the tree after the build")
    );
    assert_eq!(
        doc.reasons,
        ["job apply / build-test failed at step \"Verify the tree after the build\""]
    );
    let conclusions: Vec<(&str, Option<&str>)> = doc
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.conclusion.as_deref()))
        .collect();
    assert_eq!(
        conclusions,
        [
            ("apply / guard", Some("success")),
            ("apply / build-test", Some("failure")),
            ("apply / decide", Some("failure")),
            ("apply / publish", Some("skipped")),
        ]
    );
    let tail = doc.log_tail.as_ref().unwrap();
    assert!(!tail.authoritative);
    assert!(
        tail.text.contains("Process completed with exit code 1."),
        "{}",
        tail.text
    );
    assert!(doc.pull_request.is_none());
    // The signed log URL is fetched without the token.
    let blob = case
        .requests
        .iter()
        .find(|r| r.path.starts_with("/_blob/"))
        .unwrap();
    assert_eq!(blob.header("authorization"), None);
    let logs = case
        .requests
        .iter()
        .find(|r| r.path.ends_with("/logs"))
        .unwrap();
    assert!(logs.header("authorization").is_some());
}

#[test]
fn a_pass_without_the_draft_pull_request_is_not_a_pass() {
    let scenario = Scenario {
        outcome: Outcome::PassedWithoutPullRequest,
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0].contains("0 open pull requests"),
        "{:?}",
        case.report.doc.reasons
    );
}

#[test]
fn a_run_that_does_not_finish_times_out() {
    let scenario = Scenario {
        outcome: Outcome::Pending,
        ..Scenario::default()
    };
    let mut req = request(DIFF, true);
    req.timeout = Duration::from_secs(120);
    let case = run_case_with(scenario, req, None);
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0].starts_with("timed out"),
        "{:?}",
        case.report.doc.reasons
    );
    let waited: Duration = case.clock.sleeps().iter().sum();
    assert!(waited <= Duration::from_secs(120), "{waited:?}");
}

#[test]
fn a_run_of_another_name_is_refused() {
    // The run GitHub names in its answer must be this dispatch's: a workflow on the ref whose
    // run-name differs (or any other run) is not believed.
    let scenario = Scenario {
        run_name: Some("agent-team-apply T-2".into()),
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0].contains("is not this dispatch's"),
        "{:?}",
        case.report.doc.reasons
    );
    assert_eq!(count(&case.requests, "GET /repos/octo/repo/pulls"), 0);
}

#[test]
fn proxy_variables_are_honoured() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let token = gh.token();
    let proxy = gh.url();
    let env = |name: &str| match name {
        "GH_TOKEN" => Some(token.clone()),
        "HTTP_PROXY" => Some(proxy.clone()),
        "NO_PROXY" => Some("example.org,.internal".to_owned()),
        _ => None,
    };
    let mut config = ClientConfig::new(
        ApiUrl::parse("http://localhost:9").unwrap(),
        Token::from_env(&env).unwrap(),
        clock,
    );
    config.proxy = github::ProxySettings::from_env(&env);
    let client = Client::new(config).unwrap();
    let report = run(&client, &request(DIFF, true), &mut |_| {});
    assert_eq!(report.exit_code, 0, "{:?}", report.doc.reasons);
    let requests = gh.requests();
    assert!(!requests.is_empty());
    for r in requests.iter().filter(|r| !r.path.starts_with("/_blob/")) {
        assert!(
            r.via_proxy.as_deref() == Some("localhost:9")
                && r.path.starts_with("/repos/octo/repo/"),
            "{r:?}"
        );
    }

    // NO_PROXY naming the host sends the requests directly (to a port where nothing listens).
    let no_proxy_env = |name: &str| match name {
        "HTTP_PROXY" => Some(proxy.clone()),
        "NO_PROXY" => Some("localhost".to_owned()),
        _ => None,
    };
    let before = gh.requests().len();
    let mut config = ClientConfig::new(
        ApiUrl::parse("http://localhost:9").unwrap(),
        Token::from_env(&|_| Some(token.clone())).unwrap(),
        Arc::new(VirtualClock::new(0)),
    );
    config.proxy = github::ProxySettings::from_env(&no_proxy_env);
    let report = run(
        &Client::new(config).unwrap(),
        &request(DIFF, true),
        &mut |_| {},
    );
    assert_eq!(report.exit_code, 2);
    assert_eq!(
        gh.requests().len(),
        before,
        "nothing went through the proxy"
    );
}

#[test]
fn plain_http_is_refused_except_to_loopback() {
    for url in [
        "http://api.github.com",
        "http://10.0.0.1:8080",
        "ftp://x",
        "https://u:p@host",
    ] {
        assert!(ApiUrl::parse(url).is_err(), "{url}");
    }
    for url in [
        "https://api.github.com",
        "https://ghe.example/api/v3/",
        "http://127.0.0.1:1",
        "http://[::1]:2",
    ] {
        assert!(ApiUrl::parse(url).is_ok(), "{url}");
    }
}

// ---------------------------------------------------------------------------------------------
// The binary.

struct CliRun {
    code: i32,
    stdout: String,
    stderr: String,
}

fn gate_dispatch(gh: &StandIn, env: &[(&str, &str)], extra: &[&str], diff: &[u8]) -> CliRun {
    let app = format!("--app-id={APP_ID}");
    let mut args = vec![app.as_str()];
    args.extend_from_slice(extra);
    gate_dispatch_without_app(gh, env, &args, diff)
}

fn gate_dispatch_without_app(
    gh: &StandIn,
    env: &[(&str, &str)],
    extra: &[&str],
    diff: &[u8],
) -> CliRun {
    let dir = tempfile::tempdir().unwrap();
    let diff_path = dir.path().join("candidate.diff");
    std::fs::write(&diff_path, diff).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    cmd.env_clear()
        .arg("dispatch")
        .args([
            "--repository=octo/repo",
            "--workflow=agent-team-apply.yml",
            "--ref=main",
            "--task-id=T-1",
            &format!("--base={BASE}"),
            "--scope=src/**",
            &format!("--diff={}", diff_path.display()),
        ])
        .args(extra);
    let url = gh.url();
    let has_api_env = env.iter().any(|(n, _)| *n == "GITHUB_API_URL");
    if !has_api_env {
        cmd.arg(format!("--api-url={url}"));
    }
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    let run = CliRun {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    let token = gh.token();
    for secret in [token.as_str(), KEY] {
        assert!(
            !run.stdout.contains(secret) && !run.stderr.contains(secret),
            "a secret reached the output:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
    run
}

#[test]
fn cli_passed_gate_prints_the_result_document() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let token = gh.token();
    let run = gate_dispatch(
        &gh,
        &[("GH_TOKEN", &token), ("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &["--wait", "--format=json"],
        DIFF,
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["schema"], "agent-team-apply/dispatch-result/v2");
    assert_eq!(doc["decision"], "pass");
    assert_eq!(doc["diff_sha256"], DiffSha256::of(DIFF).as_str());
    assert_eq!(doc["pull_request"]["draft"], true);
    assert!(
        doc["pull_request"]["html_url"]
            .as_str()
            .unwrap()
            .ends_with("/pull/1")
    );
}

#[test]
fn cli_reads_github_token_and_github_api_url() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let token = gh.token();
    let url = gh.url();
    let run = gate_dispatch(
        &gh,
        &[
            ("GITHUB_TOKEN", &token),
            ("GITHUB_API_URL", &url),
            ("AGENT_TEAM_DISPATCH_KEY", KEY),
        ],
        &[],
        DIFF,
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("DISPATCH: dispatched (exit 0)\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn cli_without_a_token_or_key_sends_nothing() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let run = gate_dispatch(&gh, &[("AGENT_TEAM_DISPATCH_KEY", KEY)], &["--wait"], DIFF);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("no token: set GH_TOKEN or GITHUB_TOKEN"),
        "{}",
        run.stderr
    );
    let token = gh.token();
    let run = gate_dispatch(&gh, &[("GH_TOKEN", &token)], &["--wait"], DIFF);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no dispatch key"), "{}", run.stderr);
    assert!(gh.requests().is_empty());
}

#[test]
fn cli_401_exits_2_without_the_token() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let wrong = "ghp_notTheRightTokenAtAll0123456789";
    let run = gate_dispatch(
        &gh,
        &[("GH_TOKEN", wrong), ("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &["--wait"],
        DIFF,
    );
    assert_eq!(run.code, 2);
    assert!(!run.stdout.contains(wrong) && !run.stderr.contains(wrong));
    assert!(
        run.stdout.contains("HTTP 401: Bad credentials"),
        "{}",
        run.stdout
    );
}

#[test]
fn cli_failed_gate_exits_1_and_escapes_and_redacts_the_log_tail() {
    let scenario = Scenario {
        outcome: Outcome::Failed {
            job: "guard".into(),
            step: "Validate the diff as data".into(),
        },
        ..Scenario::default()
    };
    let token = scenario.token.clone();
    let scenario = Scenario {
        // A hostile build prints an escape sequence and, somehow, the dispatcher's token.
        failed_log_extra: format!("\u{1b}]8;;https://evil\u{7}click\u{1b}[2J {token}\n"),
        ..scenario
    };
    let gh = StandIn::start(scenario).unwrap();
    for format in ["--format=text", "--format=json"] {
        let run = gate_dispatch(
            &gh,
            &[("GH_TOKEN", &token), ("AGENT_TEAM_DISPATCH_KEY", KEY)],
            &["--wait", format],
            DIFF,
        );
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        assert!(!run.stdout.contains('\u{1b}'), "{}", run.stdout);
        assert!(run.stdout.contains("<redacted>"), "{}", run.stdout);
        if format == "--format=text" {
            assert!(
                run.stdout
                    .contains("job apply / guard: failure (step \"Validate the diff as data\")"),
                "{}",
                run.stdout
            );
            assert!(
                run.stdout.contains("\\u{1b}]8;;https://evil"),
                "{}",
                run.stdout
            );
        }
    }
}

#[test]
fn cli_refuses_bad_arguments_before_any_request() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let token = gh.token();
    for extra in [
        vec!["--scope=a,b"],
        vec!["--timeout=0"],
        vec!["--api-url=http://example.com"],
    ] {
        let run = gate_dispatch(
            &gh,
            &[("GH_TOKEN", &token), ("AGENT_TEAM_DISPATCH_KEY", KEY)],
            &extra,
            DIFF,
        );
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
    }
    let run = gate_dispatch(
        &gh,
        &[("GH_TOKEN", &token), ("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &[],
        b"",
    );
    assert_eq!(run.code, 2);
    assert!(gh.requests().is_empty());
}

#[test]
fn required_jobs_are_found_under_the_callers_prefix_and_only_once() {
    use gate::dispatch::job_named;
    let job = |name: &str| -> github::actions::Job {
        serde_json::from_value(serde_json::json!({
            "id": 1, "run_id": 1, "name": name, "status": "completed", "conclusion": "success",
            "html_url": "https://github.com/o/r/actions/runs/1/job/1", "steps": []
        }))
        .unwrap()
    };
    let jobs = vec![job("apply / guard"), job("guard-extra"), job("decide")];
    assert_eq!(job_named(&jobs, "guard").unwrap().name, "apply / guard");
    assert_eq!(job_named(&jobs, "decide").unwrap().name, "decide");
    assert!(job_named(&jobs, "publish").is_none());
    // Two jobs answering to one name: neither is taken.
    let twice = vec![job("apply / guard"), job("other / guard")];
    assert!(job_named(&twice, "guard").is_none());
}

/// A driver that plays the jobs itself (local-run) records their real conclusions and steps on a
/// pending run: the run then concludes from them, as GitHub concludes a run from its jobs, and the
/// jobs list and the failed step are what the dispatcher reads.
#[test]
fn a_pending_run_finished_by_a_driver_concludes_from_its_jobs() {
    use github_standin::JobReport;
    let report = |name: &str, conclusion: &str, steps: &[(&str, &str)]| JobReport {
        name: name.to_owned(),
        conclusion: conclusion.to_owned(),
        steps: steps
            .iter()
            .map(|(s, c)| ((*s).to_owned(), (*c).to_owned()))
            .collect(),
        log: format!("{name}: log\n"),
        started_at: None,
        completed_at: None,
    };
    for (failing, want) in [(false, "success"), (true, "failure")] {
        let case = run_case(
            Scenario {
                outcome: Outcome::Pending,
                ..Scenario::default()
            },
            false,
        );
        let id = run_id(&case);
        let build_test = if failing {
            report("build-test", "failure", &[("Build and test", "failure")])
        } else {
            report("build-test", "success", &[("Build and test", "success")])
        };
        let jobs = vec![
            report(
                "guard",
                "success",
                &[("Validate the diff as data", "success")],
            ),
            build_test,
            report("decide", if failing { "failure" } else { "success" }, &[]),
            report("publish", if failing { "skipped" } else { "success" }, &[]),
        ];
        assert!(
            !case.gh.finish_run_with_jobs(id + 1, jobs.clone()),
            "an unknown run"
        );
        assert!(case.gh.finish_run_with_jobs(id, jobs.clone()));
        assert!(!case.gh.finish_run_with_jobs(id, jobs), "finished twice");
        let clock = Arc::new(VirtualClock::new(1_772_366_400));
        let client = client(&case.gh, &case.gh.token(), &clock, Duration::from_secs(60));
        let repo = Repository::parse("octo/repo").unwrap();
        let run = client.get_run(&repo, id).unwrap();
        assert_eq!(run.status.as_deref(), Some("completed"));
        assert_eq!(run.conclusion.as_deref(), Some(want));
        let listed = client.list_run_jobs(&repo, id).unwrap().jobs;
        let names: Vec<&str> = listed.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "apply / guard",
                "apply / build-test",
                "apply / decide",
                "apply / publish"
            ]
        );
        let build_test = gate::dispatch::job_named(&listed, "build-test").unwrap();
        let step = build_test
            .steps
            .iter()
            .find(|s| s.name == "Build and test")
            .unwrap();
        assert_eq!(
            step.conclusion.as_deref(),
            Some(if failing { "failure" } else { "success" })
        );
        // Nothing was published on the driver's behalf.
        assert!(case.gh.state().pulls.is_empty());
        assert!(case.gh.state().check_runs.is_empty());
    }
    // A run the stand-in scripts itself is not the driver's to finish.
    let scripted = run_case(Scenario::default(), false);
    let id = run_id(&scripted);
    assert!(!scripted.gh.finish_run_with_jobs(id, Vec::new()));
}

// ---------------------------------------------------------------------------------------------
// Forged publications: what someone with a workflow token but without the App's key can make.

fn forged(forgery: Forgery) -> Case {
    let scenario = Scenario {
        forgery: Some(forgery),
        ..Scenario::default()
    };
    run_case(scenario, true)
}

fn only_reason(case: &Case) -> &str {
    assert_eq!(
        case.report.doc.reasons.len(),
        1,
        "{:?}",
        case.report.doc.reasons
    );
    &case.report.doc.reasons[0]
}

#[test]
fn a_check_run_from_another_app_is_not_a_pass() {
    // The check run has the gate's name and succeeded, but github-actions created it (any
    // workflow token with checks: write can).
    let case = forged(Forgery::CheckRunFromOtherApp);
    assert_eq!(case.report.exit_code, 2);
    assert_eq!(case.report.doc.decision, "error");
    assert!(case.report.doc.publication.is_none());
    let reason = only_reason(&case);
    assert!(
        reason.starts_with("no check run \"agent-team-apply / gate\" from App 424242 on "),
        "{reason}"
    );
}

#[test]
fn a_server_ignoring_the_app_filter_still_cannot_pass_another_apps_run() {
    // A check run listed despite the app_id filter is checked by its app.id.
    let gh = StandIn::start(Scenario {
        forgery: Some(Forgery::CheckRunFromOtherApp),
        ..Scenario::default()
    })
    .unwrap();
    let clock = Arc::new(VirtualClock::new(1_772_366_400));
    let client = client(&gh, &gh.token(), &clock, Duration::from_secs(3600));
    let mut req = request(DIFF, true);
    // Ask as if the other App were the publisher: the filter matches, the run is its own.
    req.app_id = Some(github_standin::OTHER_APP_ID);
    let report = run(&client, &req, &mut |_| {});
    // The other App's run is found, but its commit is not signed for its bot.
    assert_eq!(report.exit_code, 2);
    assert!(
        report.doc.reasons[0].contains("is signed for another identity"),
        "{:?}",
        report.doc.reasons
    );
}

#[test]
fn an_unsigned_head_commit_is_not_a_pass() {
    let case = forged(Forgery::UnsignedHead);
    assert_eq!(case.report.exit_code, 2);
    let reason = only_reason(&case);
    assert!(
        reason.contains(
            "is not signed as verified (verification.verified false, reason \"unsigned\")"
        ),
        "{reason}"
    );
}

#[test]
fn a_head_commit_signed_by_someone_else_is_not_a_pass() {
    let case = forged(Forgery::ForeignSignedHead);
    assert_eq!(case.report.exit_code, 2);
    let reason = only_reason(&case);
    assert!(
        reason.contains(
            "is signed for another identity: author mallory <mallory@example.com>, committer mallory <mallory@example.com>; the publishing App's commits are authored by agent-team-apply[bot]"
        ),
        "{reason}"
    );
}

#[test]
fn a_tree_other_than_the_proven_one_is_not_a_pass() {
    let other = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    let case = forged(Forgery::ProvenTree(other.into()));
    assert_eq!(case.report.exit_code, 2);
    let reason = only_reason(&case);
    let head = case
        .report
        .doc
        .pull_request
        .as_ref()
        .unwrap()
        .head_sha
        .clone();
    let tree = {
        let state = case.gh.state();
        let github_standin::git::Object::Commit { tree, .. } = &state.git.objects[&head] else {
            panic!("no head commit");
        };
        tree.clone()
    };
    // Both ids are named.
    assert!(
        reason.contains(&format!("the head commit {head}'s tree {tree} ")),
        "{reason}"
    );
    assert!(
        reason.ends_with(&format!("is not the tree the publish job proved ({other})")),
        "{reason}"
    );
}

#[test]
fn cli_wait_needs_the_app_id() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let token = gh.token();
    let run = gate_dispatch_without_app(
        &gh,
        &[("GH_TOKEN", &token), ("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &["--wait"],
        DIFF,
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("--wait needs the publishing App's id"),
        "{}",
        run.stderr
    );
    assert!(gh.requests().is_empty(), "nothing was dispatched");
    // AGENT_TEAM_APP_ID stands for the flag.
    let run = gate_dispatch_without_app(
        &gh,
        &[
            ("GH_TOKEN", &token),
            ("AGENT_TEAM_DISPATCH_KEY", KEY),
            ("AGENT_TEAM_APP_ID", "424242"),
        ],
        &["--wait"],
        DIFF,
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn cli_forged_publication_exits_2_naming_the_app() {
    let gh = StandIn::start(Scenario {
        forgery: Some(Forgery::CheckRunFromOtherApp),
        ..Scenario::default()
    })
    .unwrap();
    let token = gh.token();
    let run = gate_dispatch(
        &gh,
        &[("GH_TOKEN", &token), ("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &["--wait"],
        DIFF,
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("DISPATCH: error (exit 2)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("from App 424242"), "{}", run.stdout);
}

#[test]
fn the_last_poll_lands_on_the_deadline() {
    let scenario = Scenario {
        outcome: Outcome::Pending,
        ..Scenario::default()
    };
    let mut req = request(DIFF, true);
    req.timeout = Duration::from_secs(8);
    let case = run_case_with(scenario, req, None);
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0].starts_with("timed out"),
        "{:?}",
        case.report.doc.reasons
    );
    let waited: Duration = case.clock.sleeps().iter().sum();
    assert_eq!(waited, Duration::from_secs(8), "{:?}", case.clock.sleeps());
}

/// On the real clock (where time moves between reading it and sleeping), a `--timeout 3` polls at
/// 0, 2 and 3 s and gives up at the deadline, not at 2 s: the wait cut to the deadline is not
/// refused for the moment that passed since it was computed. Issue 28, "the deadline".
#[test]
fn the_last_poll_lands_on_the_deadline_on_the_real_clock() {
    let gh = StandIn::start(Scenario {
        outcome: Outcome::Pending,
        ..Scenario::default()
    })
    .unwrap();
    let mut req = request(DIFF, true);
    req.timeout = Duration::from_secs(3);
    let env = |name: &str| (name == "GH_TOKEN").then(|| gh.token());
    let mut config = ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&env).unwrap(),
        Arc::new(github::SystemClock::new()),
    );
    config.deadline = Some(req.timeout);
    let client = Client::new(config).unwrap();
    let started = std::time::Instant::now();
    let report = run(&client, &req, &mut |_: &str| {});
    let took = started.elapsed();
    assert_eq!(report.exit_code, 2);
    assert!(
        report.doc.reasons[0].starts_with("timed out"),
        "{:?}",
        report.doc.reasons
    );
    assert!(
        took >= req.timeout,
        "gave up after {took:?}, before the deadline"
    );
    assert!(took < req.timeout + Duration::from_secs(2), "{took:?}");
    let run_id = report.doc.run.as_ref().unwrap().id;
    let polls = count(&gh.requests(), &format!("GET {RUNS}{run_id}"));
    // The run as the dispatch found it (0 s), then after 2 s, then on the deadline (3 s).
    assert_eq!(polls, 3, "{:?}", lines(&gh.requests()));
}

// ---------------------------------------------------------------------------------------------
// --preflight: the guard's check on a local clone at the base, before anything is dispatched.

/// A clone whose base commit has `src/lib.rs` = "a"; its commit id.
fn clone_at_base(dir: &std::path::Path) -> String {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "a\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    git(&["rev-parse", "HEAD"])
}

#[test]
fn preflight_rejection_is_reported_with_its_violations_and_nothing_is_dispatched() {
    let clone = tempfile::tempdir().unwrap();
    let base = clone_at_base(clone.path());
    let mut req = request(DIFF, true);
    req.base = BaseSha::parse(&base).unwrap();
    req.scope = Scope::parse("docs/**").unwrap();
    req.preflight = Some(gate::dispatch::Preflight {
        dir: clone.path().to_path_buf(),
        policy: None,
    });
    let case = run_case_with(Scenario::default(), req, None);
    assert_eq!(case.report.exit_code, 1, "{:?}", case.report.doc.reasons);
    assert_eq!(case.report.doc.decision, "fail");
    assert!(case.requests.is_empty(), "{:?}", lines(&case.requests));
    let verdict = case.report.doc.guard_verdict.as_ref().unwrap();
    assert_eq!(
        (verdict.source.as_str(), verdict.verdict.as_str()),
        ("preflight", "reject")
    );
    assert!(verdict.authoritative);
    let v = &verdict.violations[0];
    assert_eq!(v.rule, "out-of-scope");
    assert_eq!(
        v.path.as_ref().map(|p| p.display()).as_deref(),
        Some("src/lib.rs")
    );
    assert!(v.line.is_some());
    assert!(!v.hint.is_empty());
    assert!(
        case.report.doc.reasons[0].starts_with("preflight: guard check rejected the diff"),
        "{:?}",
        case.report.doc.reasons
    );

    // In scope, the preflight accepts and the dispatch goes on.
    let mut req = request(DIFF, true);
    req.base = BaseSha::parse(&base).unwrap();
    req.preflight = Some(gate::dispatch::Preflight {
        dir: clone.path().to_path_buf(),
        policy: None,
    });
    let case = run_case_with(Scenario::default(), req, None);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(
        case.report.doc.guard_verdict.as_ref().unwrap().verdict,
        "accept"
    );
}

// ---------------------------------------------------------------------------------------------
// The guard job's verdict, from its artifact, as authoritative reasons.

/// The guard job's artifact: a verdict rejecting DIFF (scope `docs/**`), computed by the guard.
fn guard_artifact() -> Vec<u8> {
    let policy = guard::policy::Policy::embedded_default().unwrap();
    let sha = DiffSha256::of(DIFF);
    let verdict = guard::check::check(&guard::check::CheckRequest {
        diff: DIFF,
        expected_sha256: sha.as_str(),
        scope: &["docs/**".to_owned()],
        policy: &policy,
        repo: None,
    })
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(
        &guard::output::json_v1::document(&verdict)
            .to_json()
            .unwrap(),
    )
    .unwrap();
    let file = serde_json::json!({
        "schema": "agent-team-apply/guard-reasons/v1",
        "run_id": 0,
        "run_attempt": 1,
        "verdict": doc,
        "readiness": null,
    });
    file.to_string()
        .replace("\"run_id\":0", "\"run_id\":RUN_ID")
        .into_bytes()
}

fn guard_failed(artifact_at: i64) -> Scenario {
    Scenario {
        outcome: Outcome::Failed {
            job: "guard".into(),
            step: "Validate the diff as data".into(),
        },
        guard_artifact: Some((artifact_at, guard_artifact())),
        ..Scenario::default()
    }
}

#[test]
fn the_guard_jobs_violations_reach_the_result_as_authoritative_data() {
    let case = run_case(guard_failed(3), true);
    assert_eq!(case.report.exit_code, 1, "{:?}", case.report.doc.reasons);
    assert_eq!(case.report.doc.decision, "fail");
    let verdict = case.report.doc.guard_verdict.as_ref().expect("the verdict");
    let id = run_id(&case);
    assert_eq!(verdict.source, "guard-job");
    assert!(verdict.authoritative);
    assert_eq!(verdict.verdict, "reject");
    assert_eq!(
        verdict.artifact.as_deref(),
        Some(format!("agent-team-guard-{id}-1-standin.json").as_str())
    );
    let v = &verdict.violations[0];
    assert_eq!(v.rule, "out-of-scope");
    assert_eq!(
        v.path.as_ref().map(|p| p.display()).as_deref(),
        Some("src/lib.rs")
    );
    assert!(v.line.is_some() && !v.hint.is_empty());
    // Beside it, the log tail stays marked non-authoritative.
    assert!(!case.report.doc.log_tail.as_ref().unwrap().authoritative);
    assert!(
        lines(&case.requests)
            .contains(&format!("GET /repos/octo/repo/actions/runs/{id}/artifacts")),
        "{:?}",
        lines(&case.requests)
    );
}

#[test]
fn an_artifact_created_after_build_test_started_is_not_believed() {
    // build-test runs the diff's code with the runner's tokens: an artifact of that name made
    // then (a replaced one) is not the guard job's.
    let scenario = Scenario {
        outcome: Outcome::Failed {
            job: "build-test".into(),
            step: "Build and test the patched tree, then check what it wrote".into(),
        },
        guard_artifact: Some((12, guard_artifact())),
        ..Scenario::default()
    };
    let case = run_case(scenario, true);
    assert_eq!(case.report.exit_code, 1);
    assert!(case.report.doc.guard_verdict.is_none());
    let why = case
        .report
        .doc
        .guard_verdict_unavailable
        .as_deref()
        .unwrap();
    assert!(
        why.contains("was created at 2026-03-01T12:00:")
            && why.contains(", outside the guard job ("),
        "{why}"
    );
    // Before the guard job began is not its either.
    let case = run_case(guard_failed(-1), true);
    assert!(case.report.doc.guard_verdict.is_none());
    let why = case
        .report
        .doc
        .guard_verdict_unavailable
        .as_deref()
        .unwrap();
    assert!(why.contains("outside the guard job"), "{why}");
    // No artifact at all: said so, and the rest of the result stands.
    let case = run_case(
        Scenario {
            outcome: Outcome::Failed {
                job: "guard".into(),
                step: "Validate the diff as data".into(),
            },
            ..Scenario::default()
        },
        true,
    );
    assert_eq!(case.report.exit_code, 1);
    assert!(
        case.report
            .doc
            .guard_verdict_unavailable
            .as_deref()
            .unwrap()
            .starts_with("0 artifacts named agent-team-guard-"),
        "{:?}",
        case.report.doc.guard_verdict_unavailable
    );
}

// ---------------------------------------------------------------------------------------------
// `gate verify-dispatch --run-id`, as the guard job runs it: a replay is refused before
// any reviewer is asked.

fn verify_replay(gh: &StandIn, inputs: &serde_json::Value, run_id: &str, attempt: &str) -> CliRun {
    let get = |k: &str| inputs[k].as_str().unwrap_or_default().to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .arg("verify-dispatch")
        .arg("--repository=octo/repo")
        .arg("--ref=refs/heads/main")
        .arg(format!("--task-id={}", get("task_id")))
        .arg(format!("--base={}", get("base_sha")))
        .arg(format!("--diff-sha256={}", get("expected_diff_sha256")))
        .arg(format!("--declared-scope={}", get("declared_scope")))
        .arg("--workflow-ref=octo/repo/.github/workflows/agent-team-apply.yml@refs/heads/main")
        .arg(format!("--mac={}", get("dispatch_mac")))
        .arg("--now=1772366500")
        .arg(format!("--run-id={run_id}"))
        .arg(format!("--run-attempt={attempt}"))
        .env("AGENT_TEAM_DISPATCH_KEY", KEY)
        .env("AGENT_TEAM_APP_ID", "424242")
        .env("GH_TOKEN", gh.token())
        .env("GITHUB_API_URL", gh.url())
        .output()
        .unwrap();
    CliRun {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn verify_dispatch_refuses_replays_before_anything_runs() {
    let case = run_case(Scenario::default(), true);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    let first = run_id(&case).to_string();
    let inputs = dispatches(&case.requests)[0].json()["inputs"].clone();

    // Another run with the same signed inputs, the first publication open: refused.
    let run = verify_replay(&case.gh, &inputs, "777000", "1");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with(&format!(
            "dispatch signature rejected: this dispatch (Dispatch-Nonce {NONCE}) was already published by run {first}: replay record check run "
        )),
        "{}",
        run.stdout
    );
    // Looked up exactly: the App's check runs of the record's name on the base.
    let lookup = case
        .gh
        .requests()
        .into_iter()
        .rfind(|r| r.path.ends_with("/check-runs"))
        .unwrap();
    assert_eq!(
        lookup.query("check_name"),
        Some(format!("agent-team-apply dispatch {NONCE}").as_str())
    );
    assert_eq!(lookup.query("app_id"), Some("424242"));
    assert_eq!(
        lookup.path,
        format!(
            "/repos/octo/repo/commits/{}/check-runs",
            inputs["base_sha"].as_str().unwrap()
        )
    );
    // The first run's own re-run may finish it.
    let run = verify_replay(&case.gh, &inputs, &first, "2");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    // Closed, and the branch deleted: a replay is still refused, whoever runs it.
    case.gh.state().pulls[0].state = "closed".into();
    case.gh.state().git.refs.remove("refs/heads/agent-team/T-1");
    for (id, attempt, expected) in [
        (
            "777000",
            "1",
            format!("was already published by run {first}: replay record check run "),
        ),
        (
            first.as_str(),
            "2",
            format!(
                "pull request #1 of this dispatch (Dispatch-Nonce {NONCE}, replay record check run "
            ),
        ),
    ] {
        let run = verify_replay(&case.gh, &inputs, id, attempt);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(&expected), "{}", run.stdout);
    }

    // Nothing published yet: a first attempt may start, a second attempt may not.
    let gh = StandIn::start(Scenario::default()).unwrap();
    let run = verify_replay(&gh, &inputs, "888000", "1");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run = verify_replay(&gh, &inputs, "888000", "2");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with(
            "dispatch signature rejected: run attempt 2 may only finish the publication its run started"
        ),
        "{}",
        run.stdout
    );
    for out in [&run.stdout, &run.stderr] {
        assert!(!out.contains(&gh.token()) && !out.contains(KEY));
    }
}

#[test]
fn verify_dispatch_with_a_run_id_needs_the_apps_id() {
    let case = run_case(Scenario::default(), true);
    let inputs = dispatches(&case.requests)[0].json()["inputs"].clone();
    let get = |k: &str| inputs[k].as_str().unwrap_or_default().to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .arg("verify-dispatch")
        .arg("--repository=octo/repo")
        .arg("--ref=refs/heads/main")
        .arg(format!("--task-id={}", get("task_id")))
        .arg(format!("--base={}", get("base_sha")))
        .arg(format!("--diff-sha256={}", get("expected_diff_sha256")))
        .arg(format!("--declared-scope={}", get("declared_scope")))
        .arg("--workflow-ref=octo/repo/.github/workflows/agent-team-apply.yml@refs/heads/main")
        .arg(format!("--mac={}", get("dispatch_mac")))
        .arg("--now=1772366500")
        .arg("--run-id=777000")
        .env("AGENT_TEAM_DISPATCH_KEY", KEY)
        .env("GH_TOKEN", case.gh.token())
        .env("GITHUB_API_URL", case.gh.url())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("--run-id needs the publishing App's id"),
        "{stdout}"
    );
}

/// The caller renamed its check run (`check-run-name`): the dispatcher reads the name it is
/// given, and a dispatcher still looking for the default finds no check run and fails.
#[test]
fn a_renamed_check_run_is_read_by_its_name_and_only_by_it() {
    let renamed = || Scenario {
        check_name: "ci / agent gate".into(),
        ..Scenario::default()
    };
    let mut req = request(b"diff", true);
    req.check_name = "ci / agent gate".into();
    let case = run_case_with(renamed(), req, None);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    let checks = case
        .requests
        .iter()
        .find(|r| r.path.ends_with("/check-runs"))
        .unwrap();
    assert_eq!(checks.query("check_name"), Some("ci / agent gate"));

    let case = run_case_with(renamed(), request(b"diff", true), None);
    assert_ne!(case.report.exit_code, 0);
    let reasons = format!("{:?}", case.report.doc.reasons);
    assert!(
        reasons.contains("no check run \\\"agent-team-apply / gate\\\" from App 424242"),
        "{reasons}"
    );
}

// ---------------------------------------------------------------------------------------------
// The dispatcher App: `gate dispatch` mints its own installation token and revokes it.

const DISPATCHER_APP_ID: u64 = 515_151;
const DISPATCHER_SLUG: &str = "octo-dispatcher-app";
/// Test-only RSA keys (2048 bits): the dispatcher App's (PKCS#1, as GitHub's download) and one
/// that is not its (PKCS#8).
const DISPATCHER_KEY_PEM: &str = include_str!("fixtures/dispatcher-app-key.pem");
const OTHER_KEY_PEM: &str = include_str!("fixtures/other-app-key.pem");

fn dispatcher_key(pem: &str) -> gate::app_auth::AppKey {
    gate::app_auth::AppKey::from_pem(pem.as_bytes()).unwrap()
}

/// A scenario whose dispatcher App verifies JSON web tokens against DISPATCHER_KEY_PEM.
fn with_dispatcher_app(scenario: Scenario) -> Scenario {
    let public = dispatcher_key(DISPATCHER_KEY_PEM).public_key_der().to_vec();
    Scenario {
        dispatcher_app: Some(github_standin::dispatcher_app::DispatcherApp::new(
            DISPATCHER_APP_ID,
            DISPATCHER_SLUG,
            public,
        )),
        ..scenario
    }
}

/// `gate::dispatch::run_as_app` with the App key `pem` against the stand-in.
fn run_as_app_case(scenario: Scenario, req: DispatchRequest, pem: &str) -> Case {
    let start = scenario.start_unix;
    let gh = StandIn::start(scenario).unwrap();
    seed_main(&gh);
    let clock = Arc::new(VirtualClock::new(1_772_366_400));
    let app = gate::app_auth::DispatcherApp {
        app_id: DISPATCHER_APP_ID,
        key: dispatcher_key(pem),
    };
    let timeout = req.timeout;
    let connect = |bearer: &str| Ok(client(&gh, bearer, &clock, timeout));
    let mut log = Vec::new();
    let report = gate::dispatch::run_as_app(&connect, &app, start, req, &mut |line: &str| {
        log.push(line.to_owned())
    });
    let requests = gh.requests();
    let case = Case {
        report,
        requests,
        log,
        clock,
        gh,
    };
    let minted = minted_tokens(&case);
    for token in &minted {
        assert_no_secret(&case, token);
    }
    case
}

fn minted_tokens(case: &Case) -> Vec<String> {
    case.gh
        .state()
        .scenario
        .dispatcher_app
        .as_ref()
        .map(|a| a.minted.clone())
        .unwrap_or_default()
}

fn bearer_of(r: &Recorded) -> &str {
    r.header("authorization")
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or("")
}

/// The token is minted for this repository with exactly the permissions the dispatch uses,
/// every call of the dispatch presents it (none the caller's token), the run is matched to the
/// App's bot (a same-name run by the token user is not the dispatch's), and the token is
/// revoked as the last request.
#[test]
fn a_minted_token_dispatches_and_is_revoked() {
    let scenario = with_dispatcher_app(Scenario {
        dispatch: DispatchMode::NoContent,
        listed_after: 2,
        intruders: vec![intruder("octo-dispatcher")],
        ..Scenario::default()
    });
    let case = run_as_app_case(scenario, request(DIFF, true), DISPATCHER_KEY_PEM);
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(case.report.doc.decision, "pass");
    assert_eq!(run_id(&case), dispatched_run(&case));
    let minted = minted_tokens(&case);
    assert_eq!(minted.len(), 1, "one token minted");
    let token = &minted[0];

    let state = case.gh.state();
    let app = state.scenario.dispatcher_app.as_ref().unwrap();
    assert_eq!(
        app.token_requests[0],
        serde_json::json!({
            "repositories": ["repo"],
            "permissions": {"actions": "write", "checks": "read", "contents": "read",
                            "metadata": "read", "pull_requests": "read"},
        })
    );
    let ours = state.runs.iter().find(|r| r.id == run_id(&case)).unwrap();
    assert_eq!(ours.actor, format!("{DISPATCHER_SLUG}[bot]"));
    assert!(state.revoked_tokens.contains(token), "the token is revoked");
    drop(state);

    let lines = lines(&case.requests);
    assert_eq!(
        &lines[..3],
        [
            "GET /app",
            "GET /repos/octo/repo/installation",
            "POST /app/installations/77001/access_tokens"
        ],
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), "DELETE /installation/token");
    assert_eq!(bearer_of(case.requests.last().unwrap()), token);
    assert_eq!(bearer_of(dispatches(&case.requests)[0]), token);
    for r in &case.requests[3..] {
        assert_eq!(bearer_of(r), token, "{}", r.line());
    }
    assert_eq!(count(&case.requests, "GET /user"), 0, "the bot is known");
    assert!(
        case.log.iter().any(|l| l.contains(
            "started by octo-dispatcher, not by the dispatcher octo-dispatcher-app[bot]"
        )),
        "{:?}",
        case.log
    );
}

/// A diff too large for the inputs travels on a branch: only then is `contents: write` asked
/// for; without `--wait`, no `checks` or `pull_requests`.
#[test]
fn a_large_diff_asks_for_contents_write_and_no_wait_for_no_reads() {
    let mut diff = b"diff --git a/src/big.rs b/src/big.rs\nnew file mode 100644\n--- /dev/null\n+++ b/src/big.rs\n@@ -0,0 +1,3000 @@\n".to_vec();
    for i in 0..3000 {
        diff.extend_from_slice(format!("+// line {i} of a large generated file\n").as_bytes());
    }
    let case = run_as_app_case(
        with_dispatcher_app(Scenario::default()),
        request(&diff, false),
        DISPATCHER_KEY_PEM,
    );
    assert_eq!(case.report.exit_code, 0, "{:?}", case.report.doc.reasons);
    assert_eq!(case.report.doc.transport, "diff_ref");
    let state = case.gh.state();
    let app = state.scenario.dispatcher_app.as_ref().unwrap();
    assert_eq!(
        app.token_requests[0]["permissions"],
        serde_json::json!({"actions": "write", "contents": "write", "metadata": "read"})
    );
    assert!(state.revoked_tokens.contains(&app.minted[0]));
}

/// A key that is not the App's: GitHub refuses its JSON web token (401), nothing is dispatched
/// and the error says what to check.
#[test]
fn a_key_that_is_not_the_apps_is_refused_with_a_clear_message() {
    let scenario = with_dispatcher_app(Scenario::default());
    let case = run_as_app_case(scenario, request(DIFF, true), OTHER_KEY_PEM);
    assert_eq!(case.report.exit_code, 2);
    let reason = &case.report.doc.reasons[0];
    assert!(
        reason.contains(&format!(
            "the dispatcher App {DISPATCHER_APP_ID} was refused"
        )) && reason.contains("HTTP 401")
            && reason.contains("is the key the App's"),
        "{reason}"
    );
    assert!(dispatches(&case.requests).is_empty());
    assert!(minted_tokens(&case).is_empty());
}

/// Not a PEM private key at all: refused before any request.
#[test]
fn a_malformed_key_is_refused_before_any_request() {
    let err = gate::app_auth::AppKey::from_pem(b"-----BEGIN RSA PRIVATE KEY-----\nnot base64\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("the dispatcher App's key is not a PEM private key"),
        "{err}"
    );
    let err = gate::app_auth::AppKey::from_pem(b"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a PEM private key"), "{err}");
}

/// The dispatch fails after the token was minted (403 on the dispatch): the token is revoked
/// all the same.
#[test]
fn the_minted_token_is_revoked_when_the_dispatch_fails() {
    let scenario = with_dispatcher_app(Scenario {
        faults: vec![Fault::new(
            "POST",
            "/repos/octo/repo/actions/workflows/",
            vec![Canned::status(
                403,
                "Resource not accessible by integration",
            )],
        )],
        ..Scenario::default()
    });
    let case = run_as_app_case(scenario, request(DIFF, true), DISPATCHER_KEY_PEM);
    assert_eq!(case.report.exit_code, 2);
    assert!(
        case.report.doc.reasons[0].contains("HTTP 403"),
        "{:?}",
        case.report.doc.reasons
    );
    let minted = minted_tokens(&case);
    assert_eq!(minted.len(), 1);
    assert!(case.gh.state().revoked_tokens.contains(&minted[0]));
    let last = case.requests.last().unwrap();
    assert_eq!(last.line(), "DELETE /installation/token");
    assert_eq!(bearer_of(last), minted[0]);
}

/// The JSON web token is GitHub's shape: RS256, `iat` 60 s back, `exp` within 10 minutes,
/// `iss` the App's id; it verifies with the App's public key.
#[test]
fn the_json_web_token_has_githubs_claims() {
    let key = dispatcher_key(DISPATCHER_KEY_PEM);
    let jwt = key.jwt(DISPATCHER_APP_ID, 1_772_366_400).unwrap();
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: serde_json::Value = serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
    let claims: serde_json::Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(header["alg"], "RS256");
    assert_eq!(claims["iat"], 1_772_366_400 - 60);
    let exp = claims["exp"].as_i64().unwrap();
    assert!(exp > 1_772_366_400 && exp <= 1_772_366_400 + 600, "{exp}");
    assert_eq!(claims["iss"], DISPATCHER_APP_ID.to_string());
    let signed = format!("{}.{}", parts[0], parts[1]);
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        key.public_key_der(),
    )
    .verify(signed.as_bytes(), &b64.decode(parts[2]).unwrap())
    .unwrap();
    let other = dispatcher_key(OTHER_KEY_PEM);
    assert!(
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            other.public_key_der(),
        )
        .verify(signed.as_bytes(), &b64.decode(parts[2]).unwrap())
        .is_err()
    );
}

/// The CLI: the App from the environment, no GH_TOKEN at all; the dispatch goes through with
/// the minted token, revoked afterwards.
#[test]
fn cli_dispatches_with_the_dispatcher_apps_token() {
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    let gh = StandIn::start(with_dispatcher_app(Scenario {
        start_unix: now,
        ..Scenario::default()
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key_path = dir.path().join("dispatcher.pem");
    std::fs::write(&key_path, DISPATCHER_KEY_PEM).unwrap();
    let run = gate_dispatch_without_app(
        &gh,
        &[
            ("AGENT_TEAM_DISPATCH_KEY", KEY),
            (
                "AGENT_TEAM_DISPATCHER_APP_ID",
                &DISPATCHER_APP_ID.to_string(),
            ),
            (
                "AGENT_TEAM_DISPATCHER_APP_KEY_FILE",
                key_path.to_str().unwrap(),
            ),
        ],
        &["--format=json"],
        DIFF,
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["decision"], "dispatched");
    let state = gh.state();
    let minted = &state.scenario.dispatcher_app.as_ref().unwrap().minted;
    assert_eq!(minted.len(), 1);
    assert!(state.revoked_tokens.contains(&minted[0]));
    assert!(!run.stdout.contains(&minted[0]) && !run.stderr.contains(&minted[0]));
    assert!(
        run.stderr
            .contains("dispatching as octo-dispatcher-app[bot]"),
        "{}",
        run.stderr
    );
}

#[test]
fn cli_refuses_half_a_dispatcher_app_and_an_unreadable_key() {
    let gh = StandIn::start(with_dispatcher_app(Scenario::default())).unwrap();
    let run = gate_dispatch_without_app(
        &gh,
        &[("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &["--dispatcher-app-id=515151"],
        DIFF,
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("the dispatcher App's id is given but not its key"),
        "{}",
        run.stderr
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "not a key\n").unwrap();
    let run = gate_dispatch_without_app(
        &gh,
        &[("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &[
            "--dispatcher-app-id=515151",
            &format!("--dispatcher-app-key-file={}", bad.display()),
        ],
        DIFF,
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("the dispatcher App's key is not a PEM private key"),
        "{}",
        run.stderr
    );
    assert!(gh.requests().is_empty(), "nothing sent");
}

// ---------------------------------------------------------------------------------------------
// The build-test report's findings, read from its artifact when build-test failed: shown as
// non-authoritative data, never read by the decision.

/// A build-test report (`agent-team-apply/build-test-report/v1`) whose after-build check found
/// the build writing `path`.
fn build_report(path: &str, output_tail: &str) -> serde_json::Value {
    let tree = |check: &str, findings: serde_json::Value| {
        serde_json::json!({
            "check": check,
            "result": if findings.as_array().unwrap().is_empty() { "pass" } else { "fail" },
            "entries": 3,
            "baseline_sha256": "2".repeat(64),
            "findings": findings,
        })
    };
    serde_json::json!({
        "schema": "agent-team-apply/build-test-report/v1",
        "authoritative": false,
        "note": report::build_test::NOTE,
        "diff_sha256": DiffSha256::of(DIFF).as_str(),
        "verdict": "accept",
        "base_commit": BASE,
        "build": {
            "command": ["cargo", "test"],
            "exit": {"code": 0, "signal": null},
            "timed_out": false,
            "duration_ms": 10,
            "passed": true,
            "network": {"network": "namespace", "reason": null, "unavailable": null,
                        "proof": null, "git_dir_read_only": true},
            "env": {"passed": ["PATH"], "dropped": []},
            "output_tail": output_tail,
            "output_truncated_bytes": 0
        },
        "tree_after_apply": tree("after-apply", serde_json::json!([])),
        "tree_after_build": tree("after-build", serde_json::json!([{
            "rule": "build-wrote",
            "path": path,
            "change": "created",
            "message": "the build created a file in the denied trust-control surface",
            "policy_entry": "deny: .github/**",
            "docs": "https://example.invalid/#build-wrote"
        }])),
    })
}

/// The artifact as "Download an artifact" serves it: a zip of the job's report directory.
fn report_zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn build_failed(artifact: Option<Vec<u8>>) -> Case {
    run_case(
        Scenario {
            outcome: Outcome::Failed {
                job: "build-test".into(),
                step: "Build and test the patched tree, then check what it wrote".into(),
            },
            build_test_artifact: artifact,
            ..Scenario::default()
        },
        true,
    )
}

/// The decision, its exit code and reasons: what the gate decided, which the build's findings
/// must not change.
fn decided(case: &Case) -> (String, u8, Vec<String>, Option<String>) {
    let doc = &case.report.doc;
    (
        doc.decision.clone(),
        case.report.exit_code,
        doc.reasons.clone(),
        doc.failed.as_ref().map(|f| f.job.clone()),
    )
}

#[test]
fn a_failed_build_shows_the_build_reports_findings_as_non_authoritative_data() {
    let report = build_report(".github/workflows/release.yml", "ok\n");
    let json = report.to_string();
    // The fixture is the report type itself.
    serde_json::from_str::<report::build_test::BuildTestReport>(&json).unwrap();
    let zip = report_zip(&[
        ("build-test.json", b"{}"),
        ("build-test-report.json", json.as_bytes()),
    ]);
    let case = build_failed(Some(zip));
    let without = build_failed(None);
    assert_eq!(decided(&case), decided(&without));
    assert_eq!(case.report.doc.decision, "fail");
    let build = case
        .report
        .doc
        .build_findings_non_authoritative
        .as_ref()
        .expect("the build's findings");
    assert!(!build.authoritative);
    assert!(
        build.note.starts_with("non-authoritative"),
        "{}",
        build.note
    );
    assert_eq!(build.status, "available", "{:?}", build.reason);
    assert_eq!(
        build.artifact.as_deref(),
        Some("build-test-report-non-authoritative-standin-attempt-1")
    );
    assert_eq!(build.findings.len(), 1);
    let f = &build.findings[0];
    assert_eq!(
        (f.check.as_str(), f.rule.as_str()),
        ("after-build", "build-wrote")
    );
    assert_eq!(f.path.display(), ".github/workflows/release.yml");
    assert_eq!(build.left_out, 0);
    let text = gate::output::text::dispatch(&case.report.doc);
    assert!(
        text.contains("build findings (non-authoritative, from build-test-report-non-authoritative-standin-attempt-1): 1 finding(s)"),
        "{text}"
    );
    assert!(
        text.contains("after-build[build-wrote]: .github/workflows/release.yml: the build created"),
        "{text}"
    );
    // The agent sees them through `gate mcp`'s propose_change result too, still labelled.
    #[cfg(feature = "mcp")]
    {
        let out =
            serde_json::to_value(gate::mcp::ProposeChangeOutput::new(&case.report.doc)).unwrap();
        let seen = &out["build_findings_non_authoritative"];
        assert_eq!(seen["authoritative"], false);
        assert_eq!(seen["findings"][0]["rule"], "build-wrote");
        assert_eq!(seen["findings"][0]["path"], ".github/workflows/release.yml");
        assert_eq!(out["decision"], "fail");
    }
    // Without the artifact: unavailable, with the reason.
    let none = without
        .report
        .doc
        .build_findings_non_authoritative
        .as_ref()
        .unwrap();
    assert_eq!(none.status, "unavailable");
    assert!(
        none.reason
            .as_deref()
            .unwrap()
            .starts_with("0 artifacts named build-test-report-non-authoritative-"),
        "{:?}",
        none.reason
    );
    // A failure elsewhere than build-test reads no build report.
    let guard = run_case(guard_failed(3), true);
    assert!(guard.report.doc.build_findings_non_authoritative.is_none());
}

#[test]
fn a_hostile_path_in_a_build_finding_is_exact_in_json_and_escaped_in_text() {
    let path = ".github/\u{1b}]0;owned\u{7}\u{202e}x\n::error::forged.yml";
    let json = build_report(path, "").to_string();
    let case = build_failed(Some(report_zip(&[(
        "build-test-report.json",
        json.as_bytes(),
    )])));
    let doc = serde_json::to_value(&case.report.doc).unwrap();
    assert_eq!(
        doc["build_findings_non_authoritative"]["findings"][0]["path"],
        serde_json::json!(path)
    );
    let text = gate::output::text::dispatch(&case.report.doc);
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!text.contains(raw), "{raw:?} raw in {text:?}");
    }
    assert!(!text.lines().any(|l| l.starts_with("::error::")), "{text}");
    assert!(
        text.contains(".github/\\u{1b}]0;owned\\u{7}\\u{202e}x\\u{a}::error::forged.yml"),
        "{text}"
    );
}

#[test]
fn an_oversized_or_malformed_build_report_is_unavailable_with_the_reason() {
    let good = build_report(".github/x.yml", "").to_string();
    let huge = build_report(".github/x.yml", &"a".repeat(3 << 20)).to_string();
    let unknown_key = good.replacen("\"entries\":3", "\"entries\":3,\"extra\":1", 1);
    assert_ne!(unknown_key, good);
    let authoritative = good.replacen("\"authoritative\":false", "\"authoritative\":true", 1);
    assert_ne!(authoritative, good);
    let duplicate = good.replacen(
        "{\"authoritative\":false",
        "{\"authoritative\":false,\"authoritative\":false",
        1,
    );
    assert_ne!(duplicate, good);
    let baseline = build_failed(None);
    for (artifact, reason) in [
        (
            report_zip(&[("build-test-report.json", huge.as_bytes())]),
            "over the 2097152-byte limit",
        ),
        (
            report_zip(&[("build-test-report.json", b"{")]),
            "is not a build-test report",
        ),
        (
            report_zip(&[("build-test-report.json", unknown_key.as_bytes())]),
            "unknown field `extra`",
        ),
        (
            report_zip(&[("build-test-report.json", duplicate.as_bytes())]),
            "duplicate field `authoritative`",
        ),
        (
            report_zip(&[("build-test-report.json", authoritative.as_bytes())]),
            "says it is authoritative",
        ),
        (
            report_zip(&[("other.json", good.as_bytes())]),
            "no build-test-report.json in the archive",
        ),
        (good.clone().into_bytes(), "not a zip archive"),
        (vec![b'P'; 5 << 20], "larger than 4194304 bytes"),
    ] {
        let case = build_failed(Some(artifact));
        assert_eq!(decided(&case), decided(&baseline), "{reason}");
        let build = case
            .report
            .doc
            .build_findings_non_authoritative
            .as_ref()
            .unwrap();
        assert_eq!(build.status, "unavailable", "{reason}");
        assert!(build.findings.is_empty());
        let why = build.reason.as_deref().unwrap();
        assert!(why.contains(reason), "{reason}: {why}");
        let text = gate::output::text::dispatch(&case.report.doc);
        assert!(
            text.contains("build findings (non-authoritative): unavailable ("),
            "{text}"
        );
    }
}
