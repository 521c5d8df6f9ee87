//! The dispatcher's correlation: which workflow run did my `workflow_dispatch` start?
//!
//! `workflow_dispatch` returns no run id. The workflow names its run `agent-team-apply <task_id>`
//! (`run-name`), and the dispatcher records a watermark just before dispatching; the run is then
//! found in `gh run list --json databaseId,displayTitle,status,conclusion,createdAt,event,headSha,url`
//! (`displayTitle` is the run's name, REST `display_title`; gh's `name` is the workflow's):
//!
//! 1. the name must equal `agent-team-apply <task_id>` exactly (`... 12` never matches `... 123`);
//! 2. it must be created at or after the watermark (timestamps parsed, not compared as strings);
//! 3. a `cancelled` run is skipped when a non-cancelled run of the same name qualifies (it was
//!    superseded, typically by the concurrency group); if only cancelled runs qualify, the latest
//!    of them is the answer, since that is what happened to the dispatch;
//! 4. among the rest the latest `createdAt` wins, ties broken by the larger `databaseId`.
//!
//! No qualifying run is `None`, never a guess.

use serde::{Deserialize, Serialize};

use crate::escape::is_hidden;

/// The run-name prefix the workflow sets.
pub const RUN_NAME_PREFIX: &str = "agent-team-apply ";

/// Why the input could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SelectRunError {
    #[error("run list is not the expected `gh run list --json` array: {0}")]
    Json(#[from] serde_json::Error),
    #[error("run {database_id}: {source}")]
    CreatedAt {
        database_id: u64,
        source: TimestampError,
    },
    #[error(
        "task id {found:?} is empty, too long, padded with spaces or has control or hidden characters"
    )]
    TaskId { found: String },
}

/// A task id as it appears in the run name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskId(String);

impl TaskId {
    pub fn parse(id: &str) -> Result<Self, SelectRunError> {
        if id.is_empty() || id.len() > 200 || id.trim() != id || id.chars().any(is_hidden) {
            return Err(SelectRunError::TaskId {
                found: id.to_string(),
            });
        }
        Ok(TaskId(id.to_string()))
    }

    /// The run name the workflow gives this task's run.
    pub fn run_name(&self) -> String {
        format!("{RUN_NAME_PREFIX}{}", self.0)
    }
}

/// One element of `gh run list --json databaseId,displayTitle,status,conclusion,createdAt,event,headSha,url`.
/// `displayTitle` is the run name (`run-name:`, REST `display_title`); gh's `name` field is the
/// workflow's name, the same for every run, and is not read.
/// `conclusion` is empty (or null) while a run is not completed. Fields not listed are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub database_id: u64,
    pub display_title: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A run record whose `createdAt` parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub record: RunRecord,
    pub created: Timestamp,
}

impl Run {
    pub fn is_cancelled(&self) -> bool {
        self.record.conclusion.as_deref() == Some("cancelled")
    }
}

/// Parse the whole list; any element that does not parse (including its `createdAt`) makes the
/// input malformed.
pub fn parse_runs(json: &str) -> Result<Vec<Run>, SelectRunError> {
    let records: Vec<RunRecord> = serde_json::from_str(json)?;
    records
        .into_iter()
        .map(
            |record| match Timestamp::parse_rfc3339(&record.created_at) {
                Ok(created) => Ok(Run { record, created }),
                Err(source) => Err(SelectRunError::CreatedAt {
                    database_id: record.database_id,
                    source,
                }),
            },
        )
        .collect()
}

/// The run started for `task` by a dispatch at or after `since`, per the module rules.
pub fn select<'a>(runs: &'a [Run], task: &TaskId, since: Timestamp) -> Option<&'a Run> {
    let name = task.run_name();
    let candidates: Vec<&Run> = runs
        .iter()
        .filter(|r| r.record.display_title == name && r.created >= since)
        .collect();
    let live: Vec<&Run> = candidates
        .iter()
        .copied()
        .filter(|r| !r.is_cancelled())
        .collect();
    let pool = if live.is_empty() { candidates } else { live };
    pool.into_iter()
        .max_by_key(|r| (r.created, r.record.database_id))
}

/// An instant, read from an RFC 3339 timestamp by `jiff`. Ordered chronologically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(jiff::Timestamp);

/// Why a timestamp is not strict RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not an RFC 3339 timestamp: {reason}")]
pub struct TimestampError {
    pub input: String,
    pub reason: String,
}

impl Timestamp {
    /// Whole seconds since the Unix epoch, rounded down (jiff's own count is truncated toward
    /// zero, with a negative sub-second part before the epoch).
    pub fn unix_seconds(&self) -> i64 {
        let secs = self.0.as_second();
        if self.0.subsec_nanosecond() < 0 {
            secs - 1
        } else {
            secs
        }
    }

    /// Nanoseconds after [`Timestamp::unix_seconds`], 0 to 999,999,999.
    pub fn subsec_nanos(&self) -> u32 {
        u32::try_from(self.0.subsec_nanosecond().rem_euclid(1_000_000_000)).unwrap_or(0)
    }

    /// Parse RFC 3339 `date-time` (§5.6): `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`.
    ///
    /// `jiff` reads the value: the date must exist in the calendar, hours are 00-23, minutes and
    /// seconds 00-59, the fraction is 1 to 9 digits, and the offset is applied. jiff's reading
    /// (ISO 8601 as Temporal and RFC 9557 take it) also accepts other spellings, so the shape
    /// RFC 3339 allows is required first: exactly that grammar (`T` and `Z` may be lower case, as
    /// §5.6 allows; no space separator, no missing seconds or offset, no basic format, no comma
    /// fraction, no bracketed annotation), an offset hour of at most 23 (jiff takes up to 25),
    /// and no leap second (`:60`, which jiff would read as `:59`).
    pub fn parse_rfc3339(input: &str) -> Result<Self, TimestampError> {
        let fail = |reason: &str| TimestampError {
            input: input.to_string(),
            reason: reason.to_string(),
        };
        rfc3339_shape(input.as_bytes()).map_err(fail)?;
        input
            .parse::<jiff::Timestamp>()
            .map(Timestamp)
            .map_err(|e| fail(&e.to_string()))
    }
}

/// Whether `b` has the shape of RFC 3339's `date-time`: digits and separators where the grammar
/// puts them, and the two limits jiff's reading does not apply.
fn rfc3339_shape(b: &[u8]) -> Result<(), &'static str> {
    let digits_at = |at: &[usize]| at.iter().all(|&i| b.get(i).is_some_and(u8::is_ascii_digit));
    let byte_at = |i: usize, allowed: &[u8]| b.get(i).is_some_and(|c| allowed.contains(c));
    if b.len() < 20 {
        return Err("too short");
    }
    for (at, reason) in [
        (&[0, 1, 2, 3][..], "bad year"),
        (&[5, 6], "bad month"),
        (&[8, 9], "bad day"),
        (&[11, 12], "bad hour"),
        (&[14, 15], "bad minute"),
        (&[17, 18], "bad second"),
    ] {
        if !digits_at(at) {
            return Err(reason);
        }
    }
    if !(byte_at(4, b"-") && byte_at(7, b"-") && byte_at(13, b":") && byte_at(16, b":")) {
        return Err("bad separator");
    }
    if !byte_at(10, b"Tt") {
        return Err("date and time must be separated by T");
    }
    if b.get(17..19) == Some(b"60") {
        return Err("second out of range (leap seconds are not accepted)");
    }
    let mut pos = 19;
    if byte_at(pos, b".") {
        let count = b[pos + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if count == 0 || count > 9 {
            return Err("fraction must have 1 to 9 digits");
        }
        pos += 1 + count;
    }
    match &b[pos..] {
        [b'Z' | b'z'] => Ok(()),
        [b'+' | b'-', h1, h2, b':', m1, m2]
            if [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()) =>
        {
            if (*h1, *h2) > (b'2', b'3') {
                Err("offset out of range")
            } else {
                Ok(())
            }
        }
        _ => Err("missing or malformed offset (Z or +HH:MM)"),
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        match Timestamp::parse_rfc3339(s) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn valid_timestamps() {
        assert_eq!(ts("1970-01-01T00:00:00Z").unix_seconds(), 0);
        assert_eq!(ts("2000-03-01T00:00:00Z").unix_seconds(), 951_868_800);
        assert_eq!(ts("2024-02-29T12:34:56Z").unix_seconds(), 1_709_210_096);
        assert_eq!(ts("1969-12-31T23:59:59Z").unix_seconds(), -1);
        let before_epoch = ts("1969-12-31T23:59:59.25Z");
        assert_eq!(
            (before_epoch.unix_seconds(), before_epoch.subsec_nanos()),
            (-1, 250_000_000)
        );
        assert_eq!(ts("2024-05-01T10:00:00+02:00"), ts("2024-05-01T08:00:00Z"));
        assert_eq!(ts("2024-05-01T10:00:00-00:30"), ts("2024-05-01T10:30:00z"));
        assert_eq!(ts("2024-05-01t10:00:00.5Z").subsec_nanos(), 500_000_000);
        assert_eq!(ts("2024-05-01T10:00:00.000000001Z").subsec_nanos(), 1);
        assert!(ts("2024-05-01T10:00:00.1Z") > ts("2024-05-01T10:00:00Z"));
        assert!(ts("2024-05-01T10:00:00+01:00") < ts("2024-05-01T09:30:00Z"));
    }

    #[test]
    fn invalid_timestamps() {
        // `Some(reason)`: refused for its shape, before jiff reads it; `None`: of RFC 3339's
        // shape, refused by jiff's reading of the value (a date or time that does not exist).
        for (input, shape) in [
            (
                "2024-05-01 10:00:00Z",
                Some("date and time must be separated by T"),
            ),
            ("2024-05-01T10:00:00", Some("too short")),
            (
                "2024-05-01T10:00:00+0200",
                Some("missing or malformed offset (Z or +HH:MM)"),
            ),
            ("2024-05-01T10:00Z", Some("too short")),
            ("2024-13-01T10:00:00Z", None),
            ("2023-02-29T10:00:00Z", None),
            ("2024-04-31T10:00:00Z", None),
            ("2024-05-01T24:00:00Z", None),
            ("2024-05-01T10:60:00Z", None),
            (
                "2016-12-31T23:59:60Z",
                Some("second out of range (leap seconds are not accepted)"),
            ),
            (
                "2024-05-01T10:00:00.Z",
                Some("fraction must have 1 to 9 digits"),
            ),
            (
                "2024-05-01T10:00:00.1234567890Z",
                Some("fraction must have 1 to 9 digits"),
            ),
            (
                "2024-05-01T10:00:00ZZ",
                Some("missing or malformed offset (Z or +HH:MM)"),
            ),
            ("2024-05-01T10:00:00+24:00", Some("offset out of range")),
            ("+024-05-01T10:00:00Z", Some("bad year")),
            ("2024-5-01T10:00:00.0Z", Some("bad month")),
            (
                "2024-05-01T10:00:00\u{ff}Z",
                Some("missing or malformed offset (Z or +HH:MM)"),
            ),
            ("２０２４-05-01T10:00:00Z", Some("bad year")),
            // Spellings jiff's own reading accepts and RFC 3339 does not.
            (
                "2024-05-01T10:00:00,5Z",
                Some("missing or malformed offset (Z or +HH:MM)"),
            ),
            (
                "2024-05-01T10:00:00Z[UTC]",
                Some("missing or malformed offset (Z or +HH:MM)"),
            ),
            ("20240501T100000Z", Some("too short")),
            (
                "2024-05-01T10:00:00.000Z[UTC]",
                Some("missing or malformed offset (Z or +HH:MM)"),
            ),
            (
                "2024-05-01T10:00:00+02",
                Some("missing or malformed offset (Z or +HH:MM)"),
            ),
        ] {
            let got = Timestamp::parse_rfc3339(input);
            assert!(got.is_err(), "{input} was accepted");
            assert_eq!(rfc3339_shape(input.as_bytes()).err(), shape, "{input}");
            if let (Err(e), Some(reason)) = (&got, shape) {
                assert_eq!(e.reason, reason, "{input}");
                assert_eq!(e.input, input);
            }
        }
    }
}
