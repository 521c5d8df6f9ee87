//! GitHub's rate limits, as "Rate limits for the REST API" documents them
//! (<https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api>):
//!
//! - **Secondary** ("About secondary rate limits"): GitHub refuses requests that come too many at
//!   once ("No more than 100 concurrent requests are allowed") or too fast, with `403` or `429`
//!   and a message naming the secondary rate limit, with or without `retry-after`. Scripted by
//!   [`RateLimits::every`] (each `every`-th API request of a client is refused) and
//!   [`RateLimits::max_concurrent`] (a request arriving while that many are being served is
//!   refused), answered with [`RateLimits::secondary`].
//! - **Primary** ("Primary rate limit for ..."): so many requests per window; every response
//!   carries `x-ratelimit-limit`, `-remaining`, `-used` and `-reset`, and a request past the
//!   limit is a `403` with `x-ratelimit-remaining: 0`. A `304 Not Modified` to a conditional
//!   request is not counted: it "does not count against your primary rate limit"
//!   (<https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate>).
//!
//! A refused request takes no effect. Signed download URLs (`/_blob/...`) are not the API and are
//! never limited.

use std::time::Duration;

use crate::http::{Recorded, Reply};
use crate::{Canned, State};

/// The rate limits a stand-in imposes (none by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimits {
    /// Each `every`-th API request of one client (by its `Authorization` header: GitHub limits
    /// each user or App installation) meets the secondary limit.
    pub every: Option<u32>,
    /// A request arriving while this many (itself included: more than this many) are being
    /// served meets the secondary limit.
    pub max_concurrent: Option<u32>,
    /// The answer to a request that meets the secondary limit: [`Canned::retry_after`],
    /// [`Canned::rate_limit_reset`] or [`Canned::secondary_limit`] (no header at all).
    pub secondary: Canned,
    /// The primary limit: requests per window of seconds (a `304` not counted).
    pub primary: Option<(u32, i64)>,
    /// Real time each request is held after it is handled, before it is answered (while it
    /// counts as being served): lets concurrent clients overlap as they do on GitHub.
    pub service_time: Duration,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            every: None,
            max_concurrent: None,
            secondary: Canned::retry_after(429, 60),
            primary: None,
            service_time: Duration::ZERO,
        }
    }
}

/// What the limits did, for assertions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitCounts {
    /// API requests received (limited or not).
    pub api_requests: u32,
    /// The same, per client (`Authorization` header).
    pub per_client: std::collections::BTreeMap<String, u32>,
    /// Requests refused by a secondary limit (by `every`, by `max_concurrent`).
    pub secondary_every: u32,
    pub secondary_concurrent: u32,
    /// Requests refused by the primary limit.
    pub primary_refused: u32,
    /// `304 Not Modified` answers.
    pub not_modified: u32,
    /// Requests being served now, and the most at once.
    pub in_flight: u32,
    pub max_in_flight: u32,
    /// The primary window: its start and the requests counted in it (`x-ratelimit-used`).
    pub window_start: Option<i64>,
    pub window_used: u32,
}

fn is_api(req: &Recorded) -> bool {
    !req.path.starts_with("/_blob/")
}

/// The answer when `req` meets a limit (it then takes no effect).
pub fn refuse(state: &mut State, req: &Recorded) -> Option<Canned> {
    if !is_api(req) {
        return None;
    }
    state.limits.api_requests += 1;
    let client = req.header("authorization").unwrap_or_default().to_owned();
    let of_client = {
        let count = state.limits.per_client.entry(client).or_insert(0);
        *count += 1;
        *count
    };
    let limits = state.scenario.rate_limits.clone();
    if let Some(cap) = limits.max_concurrent
        && state.limits.in_flight > cap
    {
        state.limits.secondary_concurrent += 1;
        return Some(limits.secondary);
    }
    if let Some(every) = limits.every.filter(|n| *n > 0)
        && of_client.is_multiple_of(every)
    {
        state.limits.secondary_every += 1;
        return Some(limits.secondary);
    }
    if let Some((limit, window)) = limits.primary {
        let (start, used) = primary_window(state, window);
        if used >= limit {
            state.limits.primary_refused += 1;
            let reset = start + window - state.now;
            return Some(Canned::rate_limit_reset(reset));
        }
    }
    None
}

/// The current window's start and use, a new window begun when the last has ended.
fn primary_window(state: &mut State, window: i64) -> (i64, u32) {
    let now = state.now;
    let counts = &mut state.limits;
    match counts.window_start {
        Some(start) if now < start + window => {}
        _ => {
            counts.window_start = Some(now);
            counts.window_used = 0;
        }
    }
    (counts.window_start.unwrap_or(now), counts.window_used)
}

/// Count an answer against the primary limit (not a `304`) and add the primary limit's headers.
pub fn account(state: &mut State, req: &Recorded, reply: &mut Reply) {
    if !is_api(req) {
        return;
    }
    if reply.status == 304 {
        state.limits.not_modified += 1;
    }
    let Some((limit, window)) = state.scenario.rate_limits.primary else {
        return;
    };
    let (start, _) = primary_window(state, window);
    if reply.status != 304 && state.limits.window_used < limit {
        state.limits.window_used += 1;
    }
    let used = state.limits.window_used;
    for (name, value) in [
        ("x-ratelimit-limit", limit.to_string()),
        (
            "x-ratelimit-remaining",
            limit.saturating_sub(used).to_string(),
        ),
        ("x-ratelimit-used", used.to_string()),
        ("x-ratelimit-reset", (start + window).to_string()),
        ("x-ratelimit-resource", "core".to_owned()),
    ] {
        if !reply.headers.iter().any(|(n, _)| n == name) {
            reply.headers.push((name.to_owned(), value));
        }
    }
}
