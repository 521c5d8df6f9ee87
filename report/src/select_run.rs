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

/// An instant in UTC: seconds since the Unix epoch and nanoseconds within the second. Ordered
/// chronologically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
}

/// Why a timestamp is not strict RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not an RFC 3339 timestamp: {reason}")]
pub struct TimestampError {
    pub input: String,
    pub reason: &'static str,
}

impl Timestamp {
    pub fn unix_seconds(&self) -> i64 {
        self.secs
    }

    pub fn subsec_nanos(&self) -> u32 {
        self.nanos
    }

    /// Parse RFC 3339 `date-time` (§5.6): `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`.
    ///
    /// Strict: exactly that grammar (`T` and `Z` may be lower case, as §5.6 allows; no space
    /// separator, no missing seconds or offset), calendar-valid dates, hours 00-23, minutes and
    /// seconds 00-59. A leap second (`:60`) is refused, and so is a fraction of more than 9
    /// digits (finer than the nanoseconds kept).
    pub fn parse_rfc3339(input: &str) -> Result<Self, TimestampError> {
        let fail = |reason| TimestampError {
            input: input.to_string(),
            reason,
        };
        let b = input.as_bytes();
        if b.len() < 20 {
            return Err(fail("too short"));
        }
        let digits = |range: std::ops::Range<usize>| -> Option<i64> {
            let part = b.get(range)?;
            if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(
                part.iter()
                    .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')),
            )
        };
        let year = digits(0..4).ok_or_else(|| fail("bad year"))?;
        let month = digits(5..7).ok_or_else(|| fail("bad month"))?;
        let day = digits(8..10).ok_or_else(|| fail("bad day"))?;
        let hour = digits(11..13).ok_or_else(|| fail("bad hour"))?;
        let minute = digits(14..16).ok_or_else(|| fail("bad minute"))?;
        let second = digits(17..19).ok_or_else(|| fail("bad second"))?;
        if b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
            return Err(fail("bad separator"));
        }
        if b[10] != b'T' && b[10] != b't' {
            return Err(fail("date and time must be separated by T"));
        }
        if !(1..=12).contains(&month) {
            return Err(fail("month out of range"));
        }
        if day < 1 || day > days_in_month(year, month) {
            return Err(fail("day out of range"));
        }
        if hour > 23 || minute > 59 {
            return Err(fail("time out of range"));
        }
        if second > 59 {
            return Err(fail("second out of range (leap seconds are not accepted)"));
        }

        let mut pos = 19;
        let mut nanos: u32 = 0;
        if b[pos] == b'.' {
            pos += 1;
            let start = pos;
            while pos < b.len() && b[pos].is_ascii_digit() {
                pos += 1;
            }
            let count = pos - start;
            if count == 0 || count > 9 {
                return Err(fail("fraction must have 1 to 9 digits"));
            }
            for (i, d) in b[start..pos].iter().enumerate() {
                nanos += u32::from(d - b'0') * 10u32.pow(8 - i as u32);
            }
        }

        let offset_secs = match b.get(pos) {
            Some(b'Z' | b'z') if pos + 1 == b.len() => 0,
            Some(sign @ (b'+' | b'-')) if pos + 6 == b.len() => {
                let oh = digits(pos + 1..pos + 3).ok_or_else(|| fail("bad offset hour"))?;
                let om = digits(pos + 4..pos + 6).ok_or_else(|| fail("bad offset minute"))?;
                if b[pos + 3] != b':' {
                    return Err(fail("bad offset separator"));
                }
                if oh > 23 || om > 59 {
                    return Err(fail("offset out of range"));
                }
                let magnitude = oh * 3600 + om * 60;
                if *sign == b'+' { magnitude } else { -magnitude }
            }
            _ => return Err(fail("missing or malformed offset (Z or +HH:MM)")),
        };

        let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
        Ok(Timestamp {
            secs: local - offset_secs,
            nanos,
        })
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
        assert_eq!(ts("2024-05-01T10:00:00+02:00"), ts("2024-05-01T08:00:00Z"));
        assert_eq!(ts("2024-05-01T10:00:00-00:30"), ts("2024-05-01T10:30:00z"));
        assert_eq!(ts("2024-05-01t10:00:00.5Z").subsec_nanos(), 500_000_000);
        assert_eq!(ts("2024-05-01T10:00:00.000000001Z").subsec_nanos(), 1);
        assert!(ts("2024-05-01T10:00:00.1Z") > ts("2024-05-01T10:00:00Z"));
        assert!(ts("2024-05-01T10:00:00+01:00") < ts("2024-05-01T09:30:00Z"));
    }

    #[test]
    fn invalid_timestamps() {
        for (input, reason) in [
            (
                "2024-05-01 10:00:00Z",
                "date and time must be separated by T",
            ),
            ("2024-05-01T10:00:00", "too short"),
            (
                "2024-05-01T10:00:00+0200",
                "missing or malformed offset (Z or +HH:MM)",
            ),
            ("2024-05-01T10:00Z", "too short"),
            ("2024-13-01T10:00:00Z", "month out of range"),
            ("2023-02-29T10:00:00Z", "day out of range"),
            ("2024-04-31T10:00:00Z", "day out of range"),
            ("2024-05-01T24:00:00Z", "time out of range"),
            ("2024-05-01T10:60:00Z", "time out of range"),
            (
                "2016-12-31T23:59:60Z",
                "second out of range (leap seconds are not accepted)",
            ),
            ("2024-05-01T10:00:00.Z", "fraction must have 1 to 9 digits"),
            (
                "2024-05-01T10:00:00.1234567890Z",
                "fraction must have 1 to 9 digits",
            ),
            (
                "2024-05-01T10:00:00ZZ",
                "missing or malformed offset (Z or +HH:MM)",
            ),
            ("2024-05-01T10:00:00+24:00", "offset out of range"),
            ("+024-05-01T10:00:00Z", "bad year"),
            ("2024-5-01T10:00:00.0Z", "bad month"),
            (
                "2024-05-01T10:00:00\u{ff}Z",
                "missing or malformed offset (Z or +HH:MM)",
            ),
            ("２０２４-05-01T10:00:00Z", "bad year"),
        ] {
            assert_eq!(
                Timestamp::parse_rfc3339(input).map_err(|e| e.reason),
                Err(reason),
                "{input}"
            );
        }
    }
}
