//! GitHub's rate limits and conditional requests, against the stand-in's [`RateLimits`] and its
//! `ETag`s: how long the client waits for each kind of limit
//! (<https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#handle-rate-limit-errors-appropriately>),
//! when it stops instead, and that an unchanged run polled with `If-None-Match` is a `304` that
//! the primary limit does not count
//! (<https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate>).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use github::actions::{DispatchOutcome, RunPoll};
use github::{
    ApiUrl, Client, ClientConfig, Clock, Error, RateLimitSignal, RateLimitStop, Repository, Token,
    VirtualClock,
};
use github_standin::{Canned, Fault, RateLimits, Scenario, StandIn};

const WORKFLOW: &str = "agent-team-apply.yml";
const WORKFLOW_PATH: &str = "/repos/octo/repo/actions/workflows/agent-team-apply.yml";

fn client(gh: &StandIn, clock: &Arc<VirtualClock>, deadline: Option<Duration>) -> Client {
    let token = gh.token();
    let env = move |name: &str| (name == "GH_TOKEN").then(|| token.clone());
    let mut config = ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&env).unwrap(),
        clock.clone(),
    );
    config.deadline = deadline;
    Client::new(config).unwrap()
}

fn repo() -> Repository {
    Repository::parse("octo/repo").unwrap()
}

fn with_faults(responses: Vec<Canned>) -> StandIn {
    StandIn::start(Scenario {
        faults: vec![Fault::new("GET", WORKFLOW_PATH, responses)],
        ..Scenario::default()
    })
    .unwrap()
}

fn secs(list: &[u64]) -> Vec<Duration> {
    list.iter().map(|s| Duration::from_secs(*s)).collect()
}

/// "Otherwise, wait for at least one minute before retrying. If your request continues to fail
/// due to a secondary rate limit, wait for an exponentially increasing amount of time": a `403`
/// whose message alone names the secondary limit waits 60 s, then 120 s. (It used to be passed
/// on as an HTTP 403.)
#[test]
fn a_secondary_limit_without_headers_backs_off_from_one_minute_doubling() {
    let gh = with_faults(vec![
        Canned::secondary_limit(403),
        Canned::secondary_limit(403),
    ]);
    let clock = Arc::new(VirtualClock::new(0));
    let client = client(&gh, &clock, None);
    let (workflow, _) = client.get_workflow(&repo(), WORKFLOW).unwrap();
    assert_eq!(workflow.state, "active");
    assert_eq!(clock.sleeps(), secs(&[60, 120]));
    assert_eq!(gh.requests().len(), 3);
}

#[test]
fn a_429_without_headers_also_waits_a_minute() {
    let gh = with_faults(vec![Canned::secondary_limit(429)]);
    let clock = Arc::new(VirtualClock::new(0));
    client(&gh, &clock, None)
        .get_workflow(&repo(), WORKFLOW)
        .unwrap();
    assert_eq!(clock.sleeps(), secs(&[60]));
}

/// "If the `retry-after` response header is present, you should not retry your request until
/// after that many seconds has elapsed": a `403` and a `429` alike, each waited as told, and the
/// request then served.
#[test]
fn retry_after_is_waited_as_told_for_403_and_429_alike() {
    let gh = with_faults(vec![
        Canned::retry_after(403, 7),
        Canned::retry_after(429, 3),
    ]);
    let clock = Arc::new(VirtualClock::new(0));
    let (workflow, _) = client(&gh, &clock, Some(Duration::from_secs(60)))
        .get_workflow(&repo(), WORKFLOW)
        .unwrap();
    assert_eq!(workflow.state, "active");
    assert_eq!(clock.sleeps(), secs(&[7, 3]));
    assert_eq!(gh.requests().len(), 3);
}

/// "If the `x-ratelimit-remaining` header is `0`, you should not retry your request until after
/// the time specified by the `x-ratelimit-reset` header": the reset is compared with the
/// response's own `Date` (the client's clock is decades off), plus one second.
#[test]
fn remaining_zero_waits_until_the_reset_by_the_responses_date() {
    let gh = with_faults(vec![Canned::rate_limit_reset(30)]);
    let clock = Arc::new(VirtualClock::new(86_400));
    client(&gh, &clock, Some(Duration::from_secs(60)))
        .get_workflow(&repo(), WORKFLOW)
        .unwrap();
    assert_eq!(clock.sleeps(), secs(&[31]));
}

/// A reset after the deadline: no wait, and the error names the primary limit's headers.
#[test]
fn a_reset_past_the_deadline_fails_naming_the_primary_limit() {
    let gh = with_faults(vec![Canned::rate_limit_reset(600)]);
    let clock = Arc::new(VirtualClock::new(0));
    let err = client(&gh, &clock, Some(Duration::from_secs(60)))
        .get_workflow(&repo(), WORKFLOW)
        .unwrap_err();
    assert!(clock.sleeps().is_empty(), "{:?}", clock.sleeps());
    assert!(
        matches!(
            err,
            Error::RateLimited {
                status: 403,
                limit: RateLimitSignal::Reset,
                wait_secs: 601,
                stop: RateLimitStop::Deadline { .. },
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("x-ratelimit-remaining: 0") && text.contains("deadline"),
        "{text}"
    );
}

/// Without a deadline, a wait longer than the policy's longest (15 minutes) is not made either.
#[test]
fn a_wait_longer_than_allowed_is_not_made() {
    let gh = with_faults(vec![Canned::retry_after(429, 3600)]);
    let clock = Arc::new(VirtualClock::new(0));
    let err = client(&gh, &clock, None)
        .get_workflow(&repo(), WORKFLOW)
        .unwrap_err();
    assert!(clock.sleeps().is_empty(), "{:?}", clock.sleeps());
    assert!(
        matches!(
            err,
            Error::RateLimited {
                stop: RateLimitStop::TooLong {
                    wait_secs: 3600,
                    max_secs: 900
                },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(gh.requests().len(), 1);
}

/// `retry-after: 0` (or a reset already past) is no reason for a tight loop: at least 1 s.
#[test]
fn retry_after_zero_still_waits_a_second() {
    let gh = with_faults(vec![
        Canned::retry_after(429, 0),
        Canned::retry_after(403, 0),
        Canned::rate_limit_reset(-5),
    ]);
    let clock = Arc::new(VirtualClock::new(0));
    client(&gh, &clock, None)
        .get_workflow(&repo(), WORKFLOW)
        .unwrap();
    assert_eq!(clock.sleeps(), secs(&[1, 1, 1]));
}

/// A wait that would end after the deadline is not made, and the error names the rate limit,
/// the wait and the time left (it used to be a bare "deadline would pass").
#[test]
fn a_limit_whose_wait_passes_the_deadline_fails_at_once_naming_the_limit() {
    let gh = with_faults(vec![Canned::retry_after(429, 90)]);
    let clock = Arc::new(VirtualClock::new(0));
    let err = client(&gh, &clock, Some(Duration::from_secs(60)))
        .get_workflow(&repo(), WORKFLOW)
        .unwrap_err();
    assert!(clock.sleeps().is_empty(), "{:?}", clock.sleeps());
    assert!(
        matches!(
            err,
            Error::RateLimited {
                status: 429,
                limit: RateLimitSignal::RetryAfter,
                wait_secs: 90,
                stop: RateLimitStop::Deadline { left_secs: 60, .. },
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("rate limit") && text.contains("deadline"),
        "{text}"
    );
}

/// The back-off without a header must fit the deadline too: 60 s fits in 100 s, 120 s then not.
#[test]
fn the_exponential_backoff_is_used_only_while_it_fits_the_deadline() {
    let gh = with_faults(vec![
        Canned::secondary_limit(403),
        Canned::secondary_limit(403),
    ]);
    let clock = Arc::new(VirtualClock::new(0));
    let err = client(&gh, &clock, Some(Duration::from_secs(100)))
        .get_workflow(&repo(), WORKFLOW)
        .unwrap_err();
    assert_eq!(clock.sleeps(), secs(&[60]));
    assert!(
        matches!(
            err,
            Error::RateLimited {
                limit: RateLimitSignal::NoHeader,
                wait_secs: 120,
                stop: RateLimitStop::Deadline { left_secs: 40, .. },
                ..
            }
        ),
        "{err:?}"
    );
}

/// At most three waits per request; the fourth limit is an error.
#[test]
fn retries_are_bounded() {
    let gh = with_faults(vec![Canned::retry_after(429, 2); 6]);
    let clock = Arc::new(VirtualClock::new(0));
    let err = client(&gh, &clock, None)
        .get_workflow(&repo(), WORKFLOW)
        .unwrap_err();
    assert_eq!(clock.sleeps(), secs(&[2, 2, 2]));
    assert_eq!(gh.requests().len(), 4);
    assert!(
        matches!(
            err,
            Error::RateLimited {
                stop: RateLimitStop::Retries(3),
                ..
            }
        ),
        "{err:?}"
    );
}

/// The stand-in's secondary limit on every third request, answered with `retry-after`: the
/// limited request took no effect and the client waited as told.
#[test]
fn the_stand_ins_every_nth_request_limit() {
    let gh = StandIn::start(Scenario {
        rate_limits: RateLimits {
            every: Some(3),
            secondary: Canned::retry_after(403, 5),
            ..RateLimits::default()
        },
        ..Scenario::default()
    })
    .unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client(&gh, &clock, None);
    for _ in 0..3 {
        client.get_workflow(&repo(), WORKFLOW).unwrap();
    }
    assert_eq!(
        gh.requests().len(),
        4,
        "the third was limited and sent again"
    );
    assert_eq!(gh.state().limits.secondary_every, 1);
    assert_eq!(clock.sleeps(), secs(&[5]));
}

fn dispatch(client: &Client) -> u64 {
    let inputs = BTreeMap::from([("task_id".to_owned(), "T-1".to_owned())]);
    let dispatched = client
        .dispatch_workflow(&repo(), WORKFLOW, "refs/heads/main", &inputs, true)
        .unwrap();
    match dispatched.outcome {
        DispatchOutcome::RunDetails(details) => details.workflow_run_id,
        other => panic!("{other:?}"),
    }
}

/// Polls with the last `ETag`: `304` while the run is unchanged, the run again when it changed;
/// the `304`s are not counted against the primary limit (its `x-ratelimit-used` stays).
#[test]
fn polling_the_run_with_its_etag_is_answered_not_modified_and_not_counted() {
    let gh = StandIn::start(Scenario {
        polls_until_complete: 3,
        rate_limits: RateLimits {
            primary: Some((100, 3600)),
            ..RateLimits::default()
        },
        ..Scenario::default()
    })
    .unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client(&gh, &clock, None);
    let id = dispatch(&client);
    let RunPoll::Changed { run, etag } = client.poll_run(&repo(), id, None).unwrap() else {
        panic!("the first poll has nothing to compare with");
    };
    assert_eq!(run.status.as_deref(), Some("in_progress"));
    let etag = etag.expect("an ETag");
    assert!(etag.starts_with("W/\""), "{etag}");
    for _ in 0..2 {
        assert_eq!(
            client.poll_run(&repo(), id, Some(&etag)).unwrap(),
            RunPoll::NotModified
        );
    }
    let RunPoll::Changed { run, etag: next } = client.poll_run(&repo(), id, Some(&etag)).unwrap()
    else {
        panic!("the run completed: it changed");
    };
    assert_eq!(run.status.as_deref(), Some("completed"));
    assert_ne!(next.as_deref(), Some(etag.as_str()));

    let requests = gh.requests();
    let conditional: Vec<_> = requests
        .iter()
        .filter_map(|r| r.header("if-none-match"))
        .collect();
    assert_eq!(conditional, [etag.as_str(); 3]);
    let state = gh.state();
    assert_eq!(state.limits.not_modified, 2);
    // The dispatch, the first poll and the last: the two 304s are not among the primary
    // limit's used.
    assert_eq!(state.limits.api_requests, 5);
    assert_eq!(state.limits.window_used, 3);
}

/// A client's clock whose sleeps also pass on the stand-in (one simulated time for both).
struct SharedTime {
    clock: VirtualClock,
    gh: Arc<StandIn>,
}

impl Clock for SharedTime {
    fn elapsed(&self) -> Duration {
        self.clock.elapsed()
    }
    fn sleep(&self, duration: Duration) {
        self.clock.sleep(duration);
        self.gh.advance(i64::try_from(duration.as_secs()).unwrap());
    }
    fn unix_seconds(&self) -> i64 {
        self.clock.unix_seconds()
    }
}

/// The primary limit: past it, a `403` with `x-ratelimit-remaining: 0`, waited out until the
/// reset (by the response's own `Date`), after which the new window serves the request.
#[test]
fn the_stand_ins_primary_limit_is_waited_out_until_the_reset() {
    let gh = Arc::new(
        StandIn::start(Scenario {
            rate_limits: RateLimits {
                primary: Some((2, 30)),
                ..RateLimits::default()
            },
            ..Scenario::default()
        })
        .unwrap(),
    );
    let time = Arc::new(SharedTime {
        clock: VirtualClock::new(0),
        gh: Arc::clone(&gh),
    });
    let token = gh.token();
    let env = move |name: &str| (name == "GH_TOKEN").then(|| token.clone());
    let client = Client::new(ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&env).unwrap(),
        time.clone(),
    ))
    .unwrap();
    for _ in 0..3 {
        client.get_workflow(&repo(), WORKFLOW).unwrap();
    }
    assert_eq!(gh.state().limits.primary_refused, 1);
    // The window opened at the first request and is 30 s long; the refusal came 2 s later: 28 s,
    // and one more for the reset instant itself.
    assert_eq!(time.clock.sleeps(), secs(&[29]));
    assert_eq!(gh.requests().len(), 4);
}
