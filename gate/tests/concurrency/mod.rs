//! Many `gate dispatch --wait` at once against one stand-in: each dispatch its own thread, client,
//! token (so the stand-in's record tells each dispatch's requests apart), task id and nonce. Used
//! by `tests/concurrent_dispatch.rs` and `benches/concurrent_dispatch.rs`.
//!
//! Each client runs on a [`ScaledClock`]: simulated time (what deadlines, backoffs and
//! rate-limit waits are measured in) that also really sleeps a thousandth of every wait, so a
//! client told to wait does leave the server alone for a while, as on GitHub, without the test
//! lasting minutes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gate::dispatch::{DispatchReport, DispatchRequest, run};
use gate::dispatch_mac::{DispatchKey, FullRef};
use github::{ApiUrl, Client, ClientConfig, Clock, Repository, Token, VirtualClock};
use github_standin::{LimitCounts, Scenario, StandIn};
use guard::inputs::{BaseSha, Nonce, Scope, TaskId};

pub const BASE: &str = "0123456789abcdef0123456789abcdef01234567";
const KEY: &str = "dispatch-key-dispatch-key-dispatch-key-0123";
const DIFF: &[u8] = b"diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n";
pub const APP_ID: u64 = 424_242;

/// Simulated time; every sleep also sleeps a thousandth of it for real.
#[derive(Debug)]
pub struct ScaledClock {
    clock: VirtualClock,
}

impl ScaledClock {
    pub fn new() -> Self {
        ScaledClock {
            clock: VirtualClock::new(1_772_366_400),
        }
    }
    pub fn sleeps(&self) -> Vec<Duration> {
        self.clock.sleeps()
    }
}

impl Clock for ScaledClock {
    fn elapsed(&self) -> Duration {
        self.clock.elapsed()
    }
    fn sleep(&self, duration: Duration) {
        self.clock.sleep(duration);
        std::thread::sleep(duration / 1000);
    }
    fn unix_seconds(&self) -> i64 {
        self.clock.unix_seconds()
    }
}

/// Dispatch `i`'s task id, nonce and token.
pub fn task_id(i: usize) -> String {
    format!("T-{i}")
}
pub fn nonce(i: usize) -> String {
    format!("{:032x}", 0xa000 + i)
}
pub fn token(i: usize) -> String {
    format!("ghs_concurrent{i:04}TOKENstandin0123456789")
}

fn request(i: usize) -> DispatchRequest {
    DispatchRequest {
        repository: Repository::parse("octo/repo").unwrap(),
        workflow: "agent-team-apply.yml".into(),
        git_ref: FullRef::parse("main").unwrap(),
        task_id: TaskId::parse(&task_id(i)).unwrap(),
        base: BaseSha::parse(BASE).unwrap(),
        scope: Scope::parse("src/**").unwrap(),
        diff: DIFF.to_vec(),
        key: DispatchKey::new(KEY.as_bytes(), "test").unwrap(),
        wait: true,
        timeout: Duration::from_secs(3600),
        app_id: Some(APP_ID),
        check_name: gate::dispatch::CHECK_NAME.to_owned(),
        pr_title: String::new(),
        pr_description: String::new(),
        lifetime: Duration::from_secs(3600),
        nonce: Some(Nonce::parse(&nonce(i)).unwrap()),
        preflight: None,
        revision: None,
        dispatcher: None,
    }
}

/// What `n` dispatches at once came to.
pub struct Many {
    pub reports: Vec<DispatchReport>,
    /// Each dispatch's simulated waits.
    pub sleeps: Vec<Vec<Duration>>,
    /// Requests the stand-in received with each dispatch's token.
    pub requests: Vec<usize>,
    /// Of them, conditional (`If-None-Match`).
    pub conditional: Vec<usize>,
    pub limits: LimitCounts,
    /// Each dispatch's run id in the stand-in and the task id it was dispatched with.
    pub runs: BTreeMap<u64, String>,
    pub wall: Duration,
}

/// `n` dispatches at once (released together) against one stand-in of `scenario`.
pub fn run_many(n: usize, mut scenario: Scenario) -> Many {
    scenario.installation_tokens.extend((0..n).map(token));
    let gh = StandIn::start(scenario).unwrap();
    let url = gh.url();
    let barrier = Arc::new(std::sync::Barrier::new(n + 1));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let url = url.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let clock = Arc::new(ScaledClock::new());
                let tok = token(i);
                let env = move |name: &str| (name == "GH_TOKEN").then(|| tok.clone());
                let mut config = ClientConfig::new(
                    ApiUrl::parse(&url).unwrap(),
                    Token::from_env(&env).unwrap(),
                    clock.clone(),
                );
                config.deadline = Some(Duration::from_secs(3600));
                let client = Client::new(config).unwrap();
                let req = request(i);
                barrier.wait();
                let report = run(&client, &req, &mut |_| {});
                (report, clock.sleeps())
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let mut reports = Vec::new();
    let mut sleeps = Vec::new();
    for handle in handles {
        let (report, slept) = handle.join().unwrap();
        reports.push(report);
        sleeps.push(slept);
    }
    let wall = start.elapsed();
    let recorded = gh.requests();
    let of = |i: usize| {
        let bearer = format!("Bearer {}", token(i));
        recorded
            .iter()
            .filter(move |r| r.header("authorization") == Some(bearer.as_str()))
    };
    let requests = (0..n).map(|i| of(i).count()).collect();
    let conditional = (0..n)
        .map(|i| {
            of(i)
                .filter(|r| r.header("if-none-match").is_some())
                .count()
        })
        .collect();
    let state = gh.state();
    let runs = state
        .runs
        .iter()
        .map(|r| (r.id, r.inputs.get("task_id").cloned().unwrap_or_default()))
        .collect();
    Many {
        reports,
        sleeps,
        requests,
        conditional,
        limits: state.limits.clone(),
        runs,
        wall,
    }
}
