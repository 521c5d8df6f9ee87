//! The gate decision: a pure function of the `needs` context, the required job set, and the run id
//! and diff hash the decision is keyed to.
//!
//! # Input shape
//!
//! `needs` is the text of `${{ toJSON(needs) }}`. GitHub documents the context (docs.github.com,
//! "Contexts reference" → "`needs` context"; source `content/actions/reference/workflows-and-actions/
//! contexts.md` in `github/docs`) as an object keyed by the id of each job the current job depends
//! on, each with `result` — "Possible values are `success`, `failure`, `cancelled`, or `skipped`" —
//! and `outputs`, an object of strings. The documented example:
//!
//! ```json
//! {
//!   "build": { "result": "success", "outputs": { "build_id": "ABC123" } },
//!   "deploy": { "result": "failure", "outputs": {} }
//! }
//! ```
//!
//! # Rule
//!
//! Pass only if every input is well formed, every required job is present with `result` exactly
//! `"success"` (case and whitespace matter), and no other job is present. Everything else fails,
//! with one [`Reason`] per problem. Keys of a job object other than `result` are not read.
//!
//! In the workflow, pass `toJSON(needs)` through an environment variable or a file, never by
//! interpolating it into a script, and run the gate job with `if: always()`: a job whose
//! dependency failed is otherwise skipped, and the gate must see and record that.

use std::collections::BTreeSet;
use std::fmt;

use crate::strict_json::{self, Json, JsonError};

/// Largest accepted `needs` text. `toJSON(needs)` of this workflow's jobs is a few KiB; anything
/// near this size is not what the workflow produces.
pub const MAX_NEEDS_BYTES: usize = 1024 * 1024;
/// Longest accepted required job id.
pub const MAX_JOB_NAME_LEN: usize = 100;
/// Longest accepted run id, in digits (GitHub run ids are 64-bit).
pub const MAX_RUN_ID_DIGITS: usize = 20;
/// The only result that passes.
pub const SUCCESS: &str = "success";

/// A job's `result` as GitHub reports it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JobResult {
    Success,
    Failure,
    Cancelled,
    Skipped,
    /// Any other string, kept verbatim: `""`, `"neutral"`, `"Success"`, `" success"`.
    Unknown(String),
}

impl JobResult {
    /// Exact, case-sensitive match against GitHub's four documented values.
    pub fn parse(text: &str) -> Self {
        match text {
            "success" => JobResult::Success,
            "failure" => JobResult::Failure,
            "cancelled" => JobResult::Cancelled,
            "skipped" => JobResult::Skipped,
            other => JobResult::Unknown(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            JobResult::Success => "success",
            JobResult::Failure => "failure",
            JobResult::Cancelled => "cancelled",
            JobResult::Skipped => "skipped",
            JobResult::Unknown(other) => other,
        }
    }
}

/// What the `needs` context said about one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// `result` is a string.
    Result(JobResult),
    /// The job is not a key of `needs`.
    Missing,
    /// The job's value is not an object; `found` is its JSON type.
    NotAnObject { found: &'static str },
    /// The job object has no `result` key.
    NoResult,
    /// `result` is not a string; `found` is its JSON type.
    ResultNotString { found: &'static str },
}

/// One job the decision looked at: every required job, then every unexpected one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobObservation {
    pub job: String,
    pub required: bool,
    pub state: JobState,
}

pub use contract::decision::ReasonCode;

/// Why a decision fails. Text carried here is raw input; every renderer escapes it for its sink.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    InvalidRunId {
        value: String,
    },
    InvalidDiffSha256 {
        value: String,
    },
    NoRequiredJobs,
    InvalidJobName {
        name: String,
        problem: &'static str,
    },
    DuplicateRequiredJob {
        name: String,
    },
    NeedsTooLarge {
        len: usize,
        limit: usize,
    },
    MalformedNeeds {
        detail: String,
    },
    NeedsNotObject {
        found: &'static str,
    },
    /// `path` runs from the job key down to the duplicated key.
    DuplicateKey {
        path: Vec<String>,
    },
    MissingJob {
        job: String,
    },
    UnexpectedJob {
        job: String,
    },
    JobNotObject {
        job: String,
        found: &'static str,
    },
    MissingResult {
        job: String,
    },
    ResultNotString {
        job: String,
        found: &'static str,
    },
    JobNotSuccessful {
        job: String,
        result: JobResult,
    },
}

impl Reason {
    pub fn code(&self) -> ReasonCode {
        match self {
            Reason::InvalidRunId { .. } => ReasonCode::InvalidRunId,
            Reason::InvalidDiffSha256 { .. } => ReasonCode::InvalidDiffSha256,
            Reason::NoRequiredJobs => ReasonCode::NoRequiredJobs,
            Reason::InvalidJobName { .. } => ReasonCode::InvalidJobName,
            Reason::DuplicateRequiredJob { .. } => ReasonCode::DuplicateRequiredJob,
            Reason::NeedsTooLarge { .. } => ReasonCode::NeedsTooLarge,
            Reason::MalformedNeeds { .. } => ReasonCode::MalformedNeeds,
            Reason::NeedsNotObject { .. } => ReasonCode::NeedsNotObject,
            Reason::DuplicateKey { .. } => ReasonCode::DuplicateKey,
            Reason::MissingJob { .. } => ReasonCode::MissingJob,
            Reason::UnexpectedJob { .. } => ReasonCode::UnexpectedJob,
            Reason::JobNotObject { .. } => ReasonCode::JobNotObject,
            Reason::MissingResult { .. } => ReasonCode::MissingResult,
            Reason::ResultNotString { .. } => ReasonCode::ResultNotString,
            Reason::JobNotSuccessful { .. } => ReasonCode::JobNotSuccessful,
        }
    }

    /// The job (or required-list entry) the reason is about, if any.
    pub fn job(&self) -> Option<&str> {
        match self {
            Reason::InvalidJobName { name, .. } | Reason::DuplicateRequiredJob { name } => {
                Some(name)
            }
            Reason::DuplicateKey { path } => path.first().map(String::as_str),
            Reason::MissingJob { job }
            | Reason::UnexpectedJob { job }
            | Reason::JobNotObject { job, .. }
            | Reason::MissingResult { job }
            | Reason::ResultNotString { job, .. }
            | Reason::JobNotSuccessful { job, .. } => Some(job),
            Reason::InvalidRunId { .. }
            | Reason::InvalidDiffSha256 { .. }
            | Reason::NoRequiredJobs
            | Reason::NeedsTooLarge { .. }
            | Reason::MalformedNeeds { .. }
            | Reason::NeedsNotObject { .. } => None,
        }
    }
}

/// The message, unescaped (job names and values verbatim).
impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::InvalidRunId { value } => write!(
                f,
                "run id `{value}` is not a decimal number of at most {MAX_RUN_ID_DIGITS} digits without leading zeros"
            ),
            Reason::InvalidDiffSha256 { value } => {
                write!(f, "diff sha256 `{value}` is not 64 lower-case hex digits")
            }
            Reason::NoRequiredJobs => f.write_str("no required jobs were given"),
            Reason::InvalidJobName { name, problem } => {
                write!(f, "required job name `{name}` {problem}")
            }
            Reason::DuplicateRequiredJob { name } => {
                write!(f, "job `{name}` is required more than once")
            }
            Reason::NeedsTooLarge { len, limit } => {
                write!(f, "needs is {len} bytes or more, over the limit of {limit}")
            }
            Reason::MalformedNeeds { detail } => write!(f, "needs is not valid JSON: {detail}"),
            Reason::NeedsNotObject { found } => {
                write!(f, "needs is a JSON {found}, not an object")
            }
            Reason::DuplicateKey { path } => write!(
                f,
                "job `{}`: key `{}` appears twice in needs",
                path.first().map(String::as_str).unwrap_or_default(),
                path.join(".")
            ),
            Reason::MissingJob { job } => write!(f, "job `{job}`: required but absent from needs"),
            Reason::UnexpectedJob { job } => {
                write!(f, "job `{job}`: present in needs but not required")
            }
            Reason::JobNotObject { job, found } => {
                write!(f, "job `{job}`: entry is a JSON {found}, not an object")
            }
            Reason::MissingResult { job } => write!(f, "job `{job}`: entry has no `result`"),
            Reason::ResultNotString { job, found } => {
                write!(f, "job `{job}`: `result` is a JSON {found}, not a string")
            }
            Reason::JobNotSuccessful { job, result } => write!(
                f,
                "job `{job}`: result is \"{}\", not \"{SUCCESS}\"",
                result.as_str()
            ),
        }
    }
}

/// The outcome, keyed to the run id and diff hash it was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decision {
    /// As given (validated; an invalid one is a [`Reason`]).
    pub run_id: String,
    /// As given (validated; an invalid one is a [`Reason`]).
    pub diff_sha256: String,
    /// As given, in order.
    pub required: Vec<String>,
    /// Required jobs in `required` order, then unexpected jobs in document order. Empty when the
    /// inputs were too broken to evaluate jobs.
    pub jobs: Vec<JobObservation>,
    /// Empty exactly when the decision passes.
    pub reasons: Vec<Reason>,
}

impl Decision {
    /// Whether the gate passes. Rechecks the positive condition from the observations rather than
    /// trusting the absence of reasons alone.
    pub fn pass(&self) -> bool {
        let success = JobState::Result(JobResult::Success);
        self.reasons.is_empty()
            && !self.required.is_empty()
            && self.jobs.len() == self.required.len()
            && self
                .jobs
                .iter()
                .zip(&self.required)
                .all(|(seen, name)| seen.required && seen.job == *name && seen.state == success)
    }
}

/// Decide. Never panics, never reads anything but its arguments.
///
/// Checks, in order: the run id, the diff hash and the required list (each failing problem is a
/// reason); then the needs text (size, JSON syntax, duplicate keys, top-level object — the first
/// problem is the only reason about it, as nothing in a broken document can be relied on). Jobs
/// are evaluated only if both the needs document and the required list are sound: every required
/// job in order, then every job of needs that is not required.
pub fn decide<S: AsRef<str>>(
    needs: &[u8],
    required: &[S],
    run_id: &str,
    diff_sha256: &str,
) -> Decision {
    let required: Vec<String> = required.iter().map(|s| s.as_ref().to_owned()).collect();
    let mut decision = Decision {
        run_id: run_id.to_owned(),
        diff_sha256: diff_sha256.to_owned(),
        required,
        jobs: Vec::new(),
        reasons: Vec::new(),
    };
    let reasons = &mut decision.reasons;

    if !valid_run_id(run_id) {
        reasons.push(Reason::InvalidRunId {
            value: run_id.to_owned(),
        });
    }
    if !valid_sha256(diff_sha256) {
        reasons.push(Reason::InvalidDiffSha256 {
            value: diff_sha256.to_owned(),
        });
    }
    let required_ok = check_required(&decision.required, reasons);

    let Some(document) = read_needs(needs, reasons) else {
        return decision;
    };
    if !required_ok {
        return decision;
    }

    let mut jobs = Vec::new();
    for name in &decision.required {
        let state = observe(document.get(name));
        match &state {
            JobState::Result(JobResult::Success) => {}
            JobState::Result(result) => reasons.push(Reason::JobNotSuccessful {
                job: name.clone(),
                result: result.clone(),
            }),
            JobState::Missing => reasons.push(Reason::MissingJob { job: name.clone() }),
            JobState::NotAnObject { found } => reasons.push(Reason::JobNotObject {
                job: name.clone(),
                found,
            }),
            JobState::NoResult => reasons.push(Reason::MissingResult { job: name.clone() }),
            JobState::ResultNotString { found } => reasons.push(Reason::ResultNotString {
                job: name.clone(),
                found,
            }),
        }
        jobs.push(JobObservation {
            job: name.clone(),
            required: true,
            state,
        });
    }
    if let Json::Object(entries) = &document {
        for (name, value) in entries {
            if !decision.required.contains(name) {
                reasons.push(Reason::UnexpectedJob { job: name.clone() });
                jobs.push(JobObservation {
                    job: name.clone(),
                    required: false,
                    state: observe(Some(value)),
                });
            }
        }
    }
    decision.jobs = jobs;
    decision
}

/// Parse and vet the needs text; `None` (with a reason pushed) when it cannot be evaluated.
fn read_needs(needs: &[u8], reasons: &mut Vec<Reason>) -> Option<Json> {
    if needs.len() > MAX_NEEDS_BYTES {
        reasons.push(Reason::NeedsTooLarge {
            len: needs.len(),
            limit: MAX_NEEDS_BYTES,
        });
        return None;
    }
    match strict_json::parse(needs) {
        Err(JsonError::Syntax(detail)) => {
            reasons.push(Reason::MalformedNeeds { detail });
            None
        }
        Err(JsonError::DuplicateKey { path }) => {
            reasons.push(Reason::DuplicateKey { path });
            None
        }
        Ok(document @ Json::Object(_)) => Some(document),
        Ok(other) => {
            reasons.push(Reason::NeedsNotObject {
                found: other.kind(),
            });
            None
        }
    }
}

fn observe(entry: Option<&Json>) -> JobState {
    match entry {
        None => JobState::Missing,
        Some(job @ Json::Object(_)) => match job.get("result") {
            None => JobState::NoResult,
            Some(Json::String(result)) => JobState::Result(JobResult::parse(result)),
            Some(other) => JobState::ResultNotString {
                found: other.kind(),
            },
        },
        Some(other) => JobState::NotAnObject {
            found: other.kind(),
        },
    }
}

/// Validate the required list, pushing a reason per problem; whether it is sound.
fn check_required(required: &[String], reasons: &mut Vec<Reason>) -> bool {
    let before = reasons.len();
    if required.is_empty() {
        reasons.push(Reason::NoRequiredJobs);
    }
    let mut seen = BTreeSet::new();
    for name in required {
        if let Some(problem) = job_name_problem(name) {
            reasons.push(Reason::InvalidJobName {
                name: name.clone(),
                problem,
            });
        } else if !seen.insert(name.to_ascii_lowercase()) {
            reasons.push(Reason::DuplicateRequiredJob { name: name.clone() });
        }
    }
    reasons.len() == before
}

/// GitHub's job id rule: "must start with a letter or `_` and contain only alphanumeric
/// characters, `-`, or `_`" (ASCII), plus a length bound.
pub fn job_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_JOB_NAME_LEN {
        Some("is too long")
    } else if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        Some("must start with an ASCII letter or `_`")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Some("may contain only ASCII letters, digits, `-` and `_`")
    } else {
        None
    }
}

/// Decimal digits, no leading zero, fits in 64 bits: the contract's one rule
/// ([`contract::ids::RunId`]).
pub fn valid_run_id(run_id: &str) -> bool {
    contract::ids::RunId::parse(run_id).is_ok()
}

/// 64 lower-case hex digits: the contract's one rule ([`contract::ids::Sha256Hex`]), so guard,
/// gate and report accept exactly the same hashes.
pub fn valid_sha256(hex: &str) -> bool {
    contract::ids::Sha256Hex::parse(hex).is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn ok_needs() -> &'static [u8] {
        br#"{"guard": {"result": "success", "outputs": {}}, "build-test": {"result": "success", "outputs": {"x": "y"}}}"#
    }

    #[test]
    fn every_code_is_registered_once() {
        let names: BTreeSet<_> = ReasonCode::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), ReasonCode::ALL.len());
        assert_eq!(ReasonCode::ALL.len(), 15);
        for code in ReasonCode::ALL {
            assert!(!code.description().is_empty());
            assert!(
                code.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            );
        }
    }

    #[test]
    fn documented_example_shape_passes() {
        let d = decide(ok_needs(), &["guard", "build-test"], "123", SHA);
        assert_eq!(d.reasons, vec![]);
        assert!(d.pass());
        assert_eq!(d.jobs.len(), 2);
    }

    #[test]
    fn run_ids() {
        for good in ["1", "123456789", "18446744073709551615"] {
            assert!(valid_run_id(good), "{good}");
        }
        for bad in [
            "",
            "0",
            "0123",
            "-1",
            "+1",
            " 1",
            "1 ",
            "1e3",
            "12a",
            "18446744073709551616",
            "١٢٣",
        ] {
            assert!(!valid_run_id(bad), "{bad}");
        }
    }

    #[test]
    fn sha256s() {
        assert!(valid_sha256(SHA));
        for bad in [
            "",
            &SHA[..63],
            &format!("{SHA}0"),
            &SHA.to_uppercase(),
            &format!("g{}", &SHA[1..]),
            &format!(" {}", &SHA[1..]),
        ] {
            assert!(!valid_sha256(bad), "{bad}");
        }
    }

    #[test]
    fn job_names() {
        for good in ["guard", "build-test", "_x", "A1_-"] {
            assert_eq!(job_name_problem(good), None, "{good}");
        }
        for bad in ["", "1a", "-a", "a b", "a,b", "a.b", "é", "a\n", "a`b"] {
            assert!(job_name_problem(bad).is_some(), "{bad:?}");
        }
        assert!(job_name_problem(&"a".repeat(MAX_JOB_NAME_LEN)).is_none());
        assert!(job_name_problem(&"a".repeat(MAX_JOB_NAME_LEN + 1)).is_some());
    }

    #[test]
    fn bad_keys_fail_without_evaluating_jobs() {
        let d = decide(ok_needs(), &["guard", "build-test"], "0", "nope");
        assert!(!d.pass());
        assert_eq!(
            d.reasons.iter().map(Reason::code).collect::<Vec<_>>(),
            vec![ReasonCode::InvalidRunId, ReasonCode::InvalidDiffSha256]
        );
        // Jobs are still evaluated: the keys are wrong, the needs are not.
        assert_eq!(d.jobs.len(), 2);
    }

    #[test]
    fn broken_required_lists() {
        let none: [&str; 0] = [];
        let d = decide(ok_needs(), &none, "1", SHA);
        assert_eq!(d.reasons, vec![Reason::NoRequiredJobs]);
        assert!(!d.pass());

        let d = decide(ok_needs(), &["guard", "", "build-test", "Guard"], "1", SHA);
        assert_eq!(
            d.reasons,
            vec![
                Reason::InvalidJobName {
                    name: String::new(),
                    problem: "is empty"
                },
                Reason::DuplicateRequiredJob {
                    name: "Guard".into()
                },
            ]
        );
        assert!(d.jobs.is_empty());
        assert!(!d.pass());
    }

    #[test]
    fn pass_rechecks_observations() {
        let mut d = decide(ok_needs(), &["guard", "build-test"], "1", SHA);
        assert!(d.pass());
        d.jobs[1].state = JobState::Result(JobResult::Skipped);
        assert!(!d.pass());
        let mut d = decide(ok_needs(), &["guard", "build-test"], "1", SHA);
        d.jobs.pop();
        assert!(!d.pass());
    }

    #[test]
    fn too_large_needs_is_not_parsed() {
        let mut big = b"{\"guard\": {\"result\": \"success\", \"outputs\": {\"x\": \"".to_vec();
        big.resize(MAX_NEEDS_BYTES + 1, b'a');
        let d = decide(&big, &["guard"], "1", SHA);
        assert_eq!(
            d.reasons,
            vec![Reason::NeedsTooLarge {
                len: MAX_NEEDS_BYTES + 1,
                limit: MAX_NEEDS_BYTES
            }]
        );
    }

    #[test]
    fn messages_name_the_job() {
        let d = decide(
            br#"{"guard": {"result": "failure"}, "extra": 1}"#,
            &["guard", "build-test"],
            "1",
            SHA,
        );
        let messages: Vec<String> = d.reasons.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            vec![
                "job `guard`: result is \"failure\", not \"success\"",
                "job `build-test`: required but absent from needs",
                "job `extra`: present in needs but not required",
            ]
        );
        assert_eq!(
            d.jobs.last().map(|j| &j.state),
            Some(&JobState::NotAnObject { found: "number" })
        );
    }
}
