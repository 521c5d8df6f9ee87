//! Fifty `gate dispatch --wait` at once (threads calling [`gate::dispatch::run`], each its own
//! client and token) against one stand-in imposing GitHub's secondary rate limits: every
//! dispatch reports its own run and publication (no cross-talk), within a bounded number of API
//! requests counted by the stand-in, polling the run with conditional requests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod concurrency;

use std::collections::BTreeSet;
use std::time::Duration;

use concurrency::{Many, nonce, run_many, task_id};
use github_standin::{Canned, RateLimits, Scenario};

const DISPATCHES: usize = 50;
/// The requests of one dispatch when nothing is limited: the workflow, the dispatch, the run,
/// four polls, the jobs, the pull requests, the check runs and the head commit.
const UNLIMITED: usize = 11;
/// With every 4th request of a client refused: 11 answered, 3 refused (the 4th, 8th and 12th).
const EVERY_FOURTH: usize = 14;
/// The most any dispatch may send under a concurrency cap as well.
const BOUND: usize = 2 * UNLIMITED;

/// A secondary limit that names no wait (the client backs off from a minute), on every 4th
/// request of each client, and optionally on any request arriving while `cap` are in flight.
fn limited(cap: Option<u32>) -> Scenario {
    Scenario {
        polls_until_complete: 4,
        rate_limits: RateLimits {
            every: Some(4),
            max_concurrent: cap,
            secondary: Canned::secondary_limit(403),
            primary: None,
            service_time: Duration::from_millis(2),
        },
        ..Scenario::default()
    }
}

/// The dispatch reports its own task's run and publication.
fn assert_own_run(many: &Many, i: usize, run_ids: &mut BTreeSet<u64>) {
    let report = &many.reports[i];
    let doc = &report.doc;
    assert_eq!(
        (doc.decision.as_str(), report.exit_code),
        ("pass", 0),
        "dispatch {i}: {:?}",
        doc.reasons
    );
    assert_eq!(doc.task_id, task_id(i));
    assert_eq!(doc.nonce, nonce(i));
    let run = doc.run.as_ref().expect("a run");
    assert_eq!(
        many.runs.get(&run.id).map(String::as_str),
        Some(task_id(i).as_str()),
        "dispatch {i} reports run {} of another task",
        run.id
    );
    assert!(run_ids.insert(run.id), "run {} reported twice", run.id);
    let pull = doc.pull_request.as_ref().expect("a pull request");
    let publication = doc.publication.as_ref().expect("a publication");
    assert_eq!(pull.head_sha, publication.commit);
}

/// Fifty at once, every 4th request of each refused with a `403` naming the secondary limit and
/// no header: each dispatch passes with its own run, in exactly 14 requests, waiting a minute
/// for each refusal, and polls the unchanged run with `If-None-Match` (answered `304`). Before
/// the client knew a `403` by its message, each dispatch failed at its 4th request.
#[test]
fn fifty_concurrent_dispatches_each_report_their_own_run_within_a_bounded_number_of_requests() {
    let many = run_many(DISPATCHES, limited(None));
    let mut run_ids = BTreeSet::new();
    for i in 0..DISPATCHES {
        assert_own_run(&many, i, &mut run_ids);
        let minutes = many.sleeps[i]
            .iter()
            .filter(|s| **s == Duration::from_secs(60))
            .count();
        assert_eq!(minutes, 3, "dispatch {i} waited {:?}", many.sleeps[i]);
        assert!(many.sleeps[i].iter().all(|s| !s.is_zero()));
    }
    assert_eq!(run_ids.len(), DISPATCHES);
    assert_eq!(many.requests, vec![EVERY_FOURTH; DISPATCHES]);
    let limits = &many.limits;
    assert_eq!(limits.secondary_every as usize, 3 * DISPATCHES);
    assert_eq!(limits.api_requests as usize, EVERY_FOURTH * DISPATCHES);
    // Conditional polls: the run is read once unconditionally, then polled four times, three
    // of them with the last ETag, two of those while it stood still (`304`).
    assert!(
        many.conditional.iter().all(|&n| n >= 2),
        "{:?}",
        many.conditional
    );
    assert_eq!(limits.not_modified as usize, 2 * DISPATCHES);
}

/// Add a concurrency cap of 10 (GitHub's is 100): which requests meet it depends on timing, so
/// what is asserted is what must hold whatever the timing: the cap was met; every dispatch
/// either reports its own run or fails naming the secondary rate limit (never another's run,
/// never an unbounded retry); none sends more than [`BOUND`] requests.
#[test]
fn under_a_concurrency_cap_each_dispatch_passes_or_names_the_rate_limit() {
    let many = run_many(DISPATCHES, limited(Some(10)));
    let limits = &many.limits;
    assert!(
        limits.secondary_concurrent > 0,
        "the cap was never met: {}",
        limits.max_in_flight
    );
    let mut run_ids = BTreeSet::new();
    let mut passed = 0;
    for i in 0..DISPATCHES {
        let doc = &many.reports[i].doc;
        if doc.decision == "pass" {
            assert_own_run(&many, i, &mut run_ids);
            passed += 1;
        } else {
            assert_eq!(many.reports[i].exit_code, 2);
            assert!(
                doc.reasons
                    .iter()
                    .any(|r| r.contains("secondary rate limit")
                        && r.contains("still limited after 3 waits")),
                "dispatch {i}: {:?}",
                doc.reasons
            );
        }
        assert!(
            (UNLIMITED.min(4)..=BOUND).contains(&many.requests[i]),
            "dispatch {i}: {} requests",
            many.requests[i]
        );
    }
    assert!(passed > 0);
}

/// The same fifty without limits: exactly the unlimited count each, the baseline of the counts
/// above.
#[test]
fn without_limits_each_dispatch_makes_the_same_requests() {
    let scenario = Scenario {
        polls_until_complete: 4,
        ..Scenario::default()
    };
    let many = run_many(DISPATCHES, scenario);
    let mut run_ids = BTreeSet::new();
    for i in 0..DISPATCHES {
        assert_own_run(&many, i, &mut run_ids);
    }
    assert_eq!(many.requests, vec![UNLIMITED; DISPATCHES]);
    assert_eq!(
        many.limits.secondary_every + many.limits.secondary_concurrent,
        0
    );
}
