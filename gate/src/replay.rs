//! One publication per signed dispatch: the replay record.
//!
//! A signed dispatch is readable by anyone who can read its run, and can be sent again (by a
//! collaborator with `actions: write`, or by a re-run) until it expires. Before the publishing
//! App writes anything of a publication (before the branch), it records the dispatch as **its
//! own check run on the base commit**, named [`record_name`] after the dispatch's nonce, with
//! the nonce as its `external_id` and this run's id in its summary ([`write`]). The record has
//! the properties a replay check needs, from GitHub's REST documentation for check runs
//! (<https://docs.github.com/en/rest/checks/runs>):
//!
//! - **only the App writes it**: "Write permission for the REST API to interact with checks is
//!   only available to GitHub Apps"; a workflow's `GITHUB_TOKEN` (the `github-actions` App) or
//!   another App can post a check run of the same name, but not with this App's id, and the
//!   look-up filters by `app_id` and checks each run's `app.id`;
//! - **nobody erases it**: the API has no operation that deletes a check run (create, get,
//!   update, list, rerequest), and a commit's check runs stay with the commit whatever happens
//!   to branches and pull requests (moving the head or renaming the branch, which erased the
//!   earlier record, the heads of the task branch's pull requests, changes nothing); GitHub
//!   deletes old check runs only past 1,000 of one name in one check suite, and each record's
//!   name is its own nonce's;
//! - **nobody hides it**: it is looked up exactly, `GET /repos/{owner}/{repo}/commits/{base}/check-runs`
//!   with `check_name`, `app_id` and `filter=all` ("List check runs for a Git reference",
//!   <https://docs.github.com/en/rest/checks/runs#list-check-runs-for-a-git-reference>), never
//!   by scanning a list others can lengthen; every page is read ([`github::paginate`]).
//!
//! [`find`] judges what the look-up returns: no record and a first attempt: a fresh
//! publication; a record of another run: refused (one signed dispatch publishes once); a record
//! of this run (a re-run attempt finishing what its first attempt started, a crash between the
//! record and the branch included): finishing, unless the record names a pull request that is
//! no longer open (closed by a human, or for any reason: never opened again); no record and a
//! re-run attempt: refused (a re-run never starts a publication). A run of this App with the
//! record's name but another `external_id`, or a record whose summary names no run, is not one
//! this gate wrote: refused. Each refusal says what was found.

use github::checks::CheckRun;
use github::{Client, Error, Repository};

/// The record's name is this followed by the nonce.
pub const RECORD_PREFIX: &str = "agent-team-apply dispatch ";
/// The line of the record's summary naming the run that published.
pub const RECORD_RUN: &str = "Run-Id: ";
/// The line of the record's summary naming the task branch.
pub const RECORD_BRANCH: &str = "Branch: ";
/// The line of the record's summary naming the draft pull request, once it is open.
pub const RECORD_PULL: &str = "Pull-Request: ";

/// The replay record's check-run name for `nonce`.
pub fn record_name(nonce: &str) -> String {
    format!("{RECORD_PREFIX}{nonce}")
}

/// What is being looked up or recorded.
#[derive(Debug, Clone, Copy)]
pub struct Dispatch<'a> {
    pub repo: &'a Repository,
    /// The base commit (40 hex digits): the record lives there.
    pub base: &'a str,
    pub nonce: &'a str,
    /// The publishing App's id: only its check runs are records.
    pub app_id: u64,
    /// This run's id and `GITHUB_RUN_ATTEMPT`.
    pub run_id: &'a str,
    pub attempt: u32,
}

/// A record as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub check_run_id: u64,
    pub run_id: String,
    pub branch: Option<String>,
    pub pull_request: Option<u64>,
}

impl Record {
    fn describe(&self) -> String {
        format!(
            "replay record check run {} (run {}{})",
            self.check_run_id,
            self.run_id,
            self.pull_request
                .map(|n| format!(", pull request #{n}"))
                .unwrap_or_default()
        )
    }
}

/// What [`find`] concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No record of this dispatch: a first publication may start (and must [`write`] one first).
    Fresh,
    /// This run's own earlier attempt recorded it: finish that publication.
    Finishing(Record),
    /// Why the publication must not happen.
    Refused(String),
}

fn summary_line<'s>(summary: &'s str, key: &str) -> Option<&'s str> {
    summary.lines().find_map(|l| l.strip_prefix(key))
}

/// `run` as a record of `dispatch`, or why it cannot be one (it is this App's and has the
/// record's name: anything else about it is wrong).
fn read_record(run: &CheckRun, dispatch: &Dispatch<'_>) -> Result<Record, String> {
    if run.external_id.as_deref() != Some(dispatch.nonce) {
        return Err(format!(
            "check run {} of App {} on {} is named {:?} but its external_id is {:?}, not the \
             nonce: it is not a record this gate wrote; refusing",
            run.id, dispatch.app_id, dispatch.base, run.name, run.external_id
        ));
    }
    let summary = run
        .output
        .as_ref()
        .and_then(|o| o.summary.as_deref())
        .unwrap_or("");
    let run_id = summary_line(summary, RECORD_RUN)
        .filter(|r| crate::decide::valid_run_id(r))
        .ok_or_else(|| {
            format!(
                "the replay record check run {} names no run ({RECORD_RUN:?} line): it is not a \
                 record this gate wrote; refusing",
                run.id
            )
        })?;
    let pull_request = match summary_line(summary, RECORD_PULL) {
        None => None,
        Some(n) => Some(n.trim_start_matches('#').parse::<u64>().map_err(|_| {
            format!(
                "the replay record check run {} names pull request {n:?}, not a number; refusing",
                run.id
            )
        })?),
    };
    Ok(Record {
        check_run_id: run.id,
        run_id: run_id.to_owned(),
        branch: summary_line(summary, RECORD_BRANCH).map(str::to_owned),
        pull_request,
    })
}

/// Look up the record of `dispatch` and judge it (see the module documentation).
pub fn find(client: &Client, dispatch: &Dispatch<'_>) -> Result<Verdict, Error> {
    let name = record_name(dispatch.nonce);
    let listed =
        client.list_app_check_runs(dispatch.repo, dispatch.base, &name, dispatch.app_id)?;
    let mut records = Vec::new();
    // What the filters should have left out (another App's run of this name, another name or
    // commit from a server that ignored a filter) is not a record, whoever posted it.
    for run in listed.check_runs.iter().filter(|c| {
        c.name == name
            && c.head_sha.eq_ignore_ascii_case(dispatch.base)
            && c.app.as_ref().and_then(|a| a.id) == Some(dispatch.app_id)
    }) {
        match read_record(run, dispatch) {
            Ok(record) => records.push(record),
            Err(why) => return Ok(Verdict::Refused(why)),
        }
    }
    if let Some(other) = records.iter().find(|r| r.run_id != dispatch.run_id) {
        return Ok(Verdict::Refused(format!(
            "this dispatch (Dispatch-Nonce {}) was already published by run {}: {} on the base \
             {}. One signed dispatch publishes once; dispatch anew (a new signature, a new nonce) \
             if the change is still wanted",
            dispatch.nonce,
            other.run_id,
            other.describe(),
            dispatch.base
        )));
    }
    let Some(record) = records.into_iter().next() else {
        if dispatch.attempt > 1 {
            return Ok(Verdict::Refused(format!(
                "run attempt {} may only finish the publication its run started, and no replay \
                 record of this dispatch (Dispatch-Nonce {}) exists on the base {}: a re-run never \
                 starts a publication. Dispatch anew",
                dispatch.attempt, dispatch.nonce, dispatch.base
            )));
        }
        return Ok(Verdict::Fresh);
    };
    if let Some(number) = record.pull_request {
        let state = client
            .get_pull(dispatch.repo, number)?
            .map_or_else(|| "gone".to_owned(), |p| p.state);
        if state != "open" {
            return Ok(Verdict::Refused(format!(
                "pull request #{number} of this dispatch (Dispatch-Nonce {}, {}) is {state}: a \
                 closed publication is never opened again. Dispatch anew (a new signature, a new \
                 nonce) if the change is still wanted",
                dispatch.nonce,
                record.describe()
            )));
        }
    }
    Ok(Verdict::Finishing(record))
}

fn summary(dispatch: &Dispatch<'_>, branch: &str, pull_request: Option<u64>) -> String {
    let mut summary = format!("{RECORD_RUN}{}\n{RECORD_BRANCH}{branch}\n", dispatch.run_id);
    if let Some(number) = pull_request {
        summary.push_str(&format!("{RECORD_PULL}#{number}\n"));
    }
    summary
}

fn body(dispatch: &Dispatch<'_>, branch: &str, pull_request: Option<u64>) -> serde_json::Value {
    serde_json::json!({
        "name": record_name(dispatch.nonce),
        "head_sha": dispatch.base,
        "external_id": dispatch.nonce,
        "status": "completed",
        "conclusion": "neutral",
        "output": {
            "title": "Dispatch recorded: published once",
            "summary": summary(dispatch, branch, pull_request),
        },
    })
}

/// Why a record could not be written or updated: GitHub's error, or a check run that came back
/// as another App's (the token is not the App's whose id was given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("{0}")]
    GitHub(#[from] Error),
    #[error(
        "the replay record came back as check run {id} of App {found:?}, not of App {expected}: \
         the token is not the publishing App's (--app-id)"
    )]
    OtherApp {
        id: u64,
        found: Option<u64>,
        expected: u64,
    },
}

fn check_own(run: CheckRun, dispatch: &Dispatch<'_>) -> Result<CheckRun, WriteError> {
    let found = run.app.as_ref().and_then(|a| a.id);
    if found != Some(dispatch.app_id) || run.external_id.as_deref() != Some(dispatch.nonce) {
        return Err(WriteError::OtherApp {
            id: run.id,
            found,
            expected: dispatch.app_id,
        });
    }
    Ok(run)
}

/// Record `dispatch` (published on `branch`): the App's check run on the base, before anything
/// else is written.
pub fn write(client: &Client, dispatch: &Dispatch<'_>, branch: &str) -> Result<Record, WriteError> {
    let run = check_own(
        client.create_check_run(dispatch.repo, &body(dispatch, branch, None))?,
        dispatch,
    )?;
    Ok(Record {
        check_run_id: run.id,
        run_id: dispatch.run_id.to_owned(),
        branch: Some(branch.to_owned()),
        pull_request: None,
    })
}

/// Add the draft pull request to the record (so a re-run refuses once it is closed).
pub fn note_pull_request(
    client: &Client,
    dispatch: &Dispatch<'_>,
    record: &Record,
    branch: &str,
    number: u64,
) -> Result<Record, WriteError> {
    check_own(
        client.update_check_run(
            dispatch.repo,
            record.check_run_id,
            &body(dispatch, branch, Some(number)),
        )?,
        dispatch,
    )?;
    Ok(Record {
        pull_request: Some(number),
        ..record.clone()
    })
}
