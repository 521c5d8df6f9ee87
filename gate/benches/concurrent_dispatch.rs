//! `gate dispatch --wait` at 1 and at 50 at once against one stand-in of GitHub's API, with and
//! without GitHub's secondary rate limits: wall time and API requests per dispatch, each as a
//! ratio to the single dispatch of the same scenario in the same run.
//!
//! Run: `cargo bench -p gate --bench concurrent_dispatch` (optionally `-- --runs 5 --n 50`).
//!
//! Each dispatch is a thread calling [`gate::dispatch::run`] with its own client, token, task id
//! and nonce (`tests/concurrency`), released together; its clock is simulated time that also
//! really sleeps a thousandth of every wait (a minute's back-off is 60 ms), so what is measured is
//! the stand-in's serving, the client's work and the waits the limits impose, in proportion. The
//! stand-in holds each request 2 ms (its service time) and counts every API request by token.
//!
//! Scenarios: *none* (no limits); *every 4th* (each client's every 4th request refused with a
//! `403` naming the secondary limit and no header: the client backs off from a minute); the same
//! with *cap 10* (and any request arriving while 10 are being served: which ones meet it depends
//! on timing, so some dispatches may run out of their three waits and fail naming the limit: the
//! `passed` column). Each row is the median wall of `--runs` rounds, the rounds of a scenario's
//! two sizes interleaved so the machine's load falls on both alike.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/concurrency/mod.rs"]
mod concurrency;

use std::time::Duration;

use concurrency::{Many, run_many};
use github_standin::{Canned, RateLimits, Scenario};

fn scenario(every: Option<u32>, cap: Option<u32>) -> Scenario {
    Scenario {
        polls_until_complete: 4,
        rate_limits: RateLimits {
            every,
            max_concurrent: cap,
            secondary: Canned::secondary_limit(403),
            primary: None,
            service_time: Duration::from_millis(2),
        },
        ..Scenario::default()
    }
}

/// One size of one scenario: the median wall and the counts of every round.
struct Row {
    n: usize,
    walls: Vec<Duration>,
    passed: usize,
    dispatches: usize,
    requests: usize,
    limited: usize,
    not_modified: usize,
}

impl Row {
    fn new(n: usize) -> Self {
        Row {
            n,
            walls: Vec::new(),
            passed: 0,
            dispatches: 0,
            requests: 0,
            limited: 0,
            not_modified: 0,
        }
    }

    fn add(&mut self, many: &Many) {
        self.walls.push(many.wall);
        self.dispatches += many.reports.len();
        self.passed += many
            .reports
            .iter()
            .filter(|r| r.doc.decision == "pass")
            .count();
        self.requests += many.requests.iter().sum::<usize>();
        self.limited += (many.limits.secondary_every + many.limits.secondary_concurrent) as usize;
        self.not_modified += many.limits.not_modified as usize;
    }

    fn median(&self) -> Duration {
        let mut walls = self.walls.clone();
        walls.sort();
        walls[walls.len() / 2]
    }

    fn per_dispatch(&self, count: usize) -> f64 {
        count as f64 / self.dispatches as f64
    }
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = arg(&args, "--runs", 5).max(1);
    let n = arg(&args, "--n", 50).max(2);
    let scenarios = [
        ("none", None, None),
        ("every 4th", Some(4), None),
        ("every 4th + cap 10", Some(4), Some(10)),
    ];
    println!(
        "{runs} rounds; medians; ratios to the single dispatch of the same scenario in the same run"
    );
    println!(
        "{:<20} {:>4} {:>9} {:>10} {:>7} {:>10} {:>7} {:>9} {:>9}",
        "scenario", "n", "passed", "wall ms", "ratio", "req/disp", "ratio", "limited", "304/disp"
    );
    for (name, every, cap) in scenarios {
        let mut single = Row::new(1);
        let mut many = Row::new(n);
        for _ in 0..runs {
            single.add(&run_many(1, scenario(every, cap)));
            many.add(&run_many(n, scenario(every, cap)));
        }
        let base_wall = single.median().as_secs_f64();
        let base_requests = single.per_dispatch(single.requests);
        for row in [&single, &many] {
            let wall = row.median().as_secs_f64();
            let requests = row.per_dispatch(row.requests);
            println!(
                "{:<20} {:>4} {:>9} {:>10.1} {:>7.2} {:>10.2} {:>7.2} {:>9.2} {:>9.2}",
                name,
                row.n,
                format!("{}/{}", row.passed, row.dispatches),
                wall * 1000.0,
                wall / base_wall,
                requests,
                requests / base_requests,
                row.per_dispatch(row.limited),
                row.per_dispatch(row.not_modified),
            );
        }
    }
}
