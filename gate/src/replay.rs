//! One publication per signed dispatch.
//!
//! A signed dispatch is readable by anyone who can read its run, and can be sent again (by a
//! collaborator with `actions: write`, or by a re-run) until it expires. Its nonce is recorded on
//! every publication: the commit's `Dispatch-Nonce` trailer and the check run's output. Before
//! anything is written, [`find`] looks at what exists for the task's branch:
//!
//! - every pull request from the branch, **open or closed** (`state=all`; a closed one is listed
//!   even after its branch was deleted), and the commit at its head;
//! - the branch's head commit.
//!
//! A commit carrying this nonce with another `Run-Id` means another run already published this
//! dispatch: refused. A closed pull request whose head carries this nonce means the publication
//! was rejected by a human (or closed for any reason): refused, never re-opened, whoever asks.
//! A run attempt after the first (`GITHUB_RUN_ATTEMPT` > 1) may only finish the publication its
//! own run started (the branch head or an open pull request carrying this nonce and this run's
//! id); it never starts one. Each refusal says what was found.

use github::{Client, Error, Repository};

use crate::publication::{NONCE_TRAILER, RUN_TRAILER, commit_trailer};

/// What [`find`] concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing of this dispatch exists: a first publication may start.
    Fresh,
    /// This run's own earlier attempt published (part of) it; what was found.
    Finishing(String),
    /// Why the publication must not happen.
    Refused(String),
}

/// Look for earlier publications of the dispatch `nonce` on `branch` (see the module
/// documentation). `run_id` is this run's, `attempt` its `GITHUB_RUN_ATTEMPT`.
pub fn find(
    client: &Client,
    repo: &Repository,
    branch: &str,
    nonce: &str,
    run_id: &str,
    attempt: u32,
) -> Result<Verdict, Error> {
    let full_name = repo.full_name();
    let mut ours = Vec::new();
    let pulls = client.list_all_pulls_from(repo, branch)?;
    for pull in pulls.iter().filter(|p| {
        p.head.name == branch
            && p.head
                .repo
                .as_ref()
                .is_none_or(|r| r.full_name.eq_ignore_ascii_case(&full_name))
    }) {
        let commit = client.get_commit(repo, &pull.head.sha)?;
        if commit_trailer(&commit.message, NONCE_TRAILER) != Some(nonce) {
            continue;
        }
        let by = commit_trailer(&commit.message, RUN_TRAILER).unwrap_or("(none)");
        if pull.state != "open" {
            return Ok(Verdict::Refused(format!(
                "pull request #{} from {branch} carried this dispatch (Dispatch-Nonce {nonce}, \
                 published by run {by}) and is {}: a closed publication is never opened again. \
                 Dispatch anew (a new signature, a new nonce) if the change is still wanted",
                pull.number, pull.state
            )));
        }
        if by != run_id {
            return Ok(Verdict::Refused(format!(
                "this dispatch (Dispatch-Nonce {nonce}) was already published by run {by} \
                 (pull request #{}): one signed dispatch publishes once",
                pull.number
            )));
        }
        ours.push(format!("pull request #{}", pull.number));
    }
    if let Some(head) = client.get_ref(repo, &format!("heads/{branch}"))? {
        let commit = client.get_commit(repo, &head.object.sha)?;
        if commit_trailer(&commit.message, NONCE_TRAILER) == Some(nonce) {
            let by = commit_trailer(&commit.message, RUN_TRAILER).unwrap_or("(none)");
            if by != run_id {
                return Ok(Verdict::Refused(format!(
                    "this dispatch (Dispatch-Nonce {nonce}) was already published by run {by} \
                     (commit {} on {branch}): one signed dispatch publishes once",
                    commit.sha
                )));
            }
            ours.push(format!("commit {} on {branch}", commit.sha));
        }
    }
    match (ours.is_empty(), attempt > 1) {
        (true, false) => Ok(Verdict::Fresh),
        (true, true) => Ok(Verdict::Refused(format!(
            "run attempt {attempt} may only finish the publication its run started, and none \
             exists for this dispatch (Dispatch-Nonce {nonce}) on {branch}: a re-run never \
             starts a publication. Dispatch anew"
        ))),
        (false, _) => Ok(Verdict::Finishing(ours.join(", "))),
    }
}
