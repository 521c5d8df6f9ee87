//! `guard readiness`: the jobs of the repository's own workflows that would run the published
//! branch's code with credentials before a person decided (see [`guard::readiness`]): the base
//! commit's workflows for the branch's own commit, the default branch head's (`--default-head`)
//! for the pull request's merge commit and the privileged triggers.
//!
//! Exit 0 when there is none (or every one is accepted by the policy's `readiness.accept`), or
//! when the policy's `allow.unprotected-secret-jobs` lets them be reported only; 1 when there are
//! (strict, the default); 2 when the check could not run.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use contract::cli::Exit;
use contract::escape::neutralize;
use contract::readiness::{ReadinessDoc, ReadinessMode, ReadinessResult};
use guard::git::GitRepo;
use guard::readiness::{Commits, Reads, Target, document_with, review_in};

use super::check::load_policy;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct ReadinessArgs {
    /// A checkout (or bare clone) holding the base commit.
    #[arg(long, value_name = "DIR")]
    repo: PathBuf,
    /// The base commit whose `.github/workflows/` are read (from git's objects, not the work tree).
    #[arg(long, value_name = "REV")]
    base: String,
    /// The default branch's head now: its workflows run for the pull request's merge commit and
    /// for the privileged triggers. Without it, the base commit's are read for every event.
    #[arg(long, value_name = "REV")]
    default_head: Option<String>,
    /// The branch the publication pushes, `agent-team/<task_id>`.
    #[arg(long, value_name = "NAME")]
    branch: String,
    /// The branch the draft pull request targets (the default branch).
    #[arg(long, value_name = "NAME")]
    base_branch: String,
    /// `owner/name` of the repository.
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// A YAML policy; `allow.unprotected-secret-jobs: true` reports instead of failing.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub fn run(args: ReadinessArgs) -> u8 {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("guard readiness: error: {}", neutralize(&message));
            Exit::Error.code()
        }
    }
}

fn check_name(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() || value.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "{what} must be a non-empty name without spaces or controls"
        ));
    }
    Ok(())
}

fn run_inner(args: ReadinessArgs) -> Result<u8, String> {
    let policy = load_policy(args.policy.as_ref())?;
    check_name("--branch", &args.branch)?;
    check_name("--base-branch", &args.base_branch)?;
    check_name("--repository", &args.repository)?;
    if args.repository.split('/').count() != 2 || args.repository.split('/').any(str::is_empty) {
        return Err("--repository must be OWNER/NAME".into());
    }
    let repo = GitRepo::open(&args.repo).map_err(|e| e.to_string())?;
    let base = repo.resolve_commit(&args.base).map_err(|e| e.to_string())?;
    let base_commit = contract::ids::CommitId::parse(&base)
        .map_err(|e| format!("the base commit id {base:?}: {e}"))?;
    let default_head = match &args.default_head {
        None => base.clone(),
        Some(rev) => repo.resolve_commit(rev).map_err(|e| e.to_string())?,
    };
    let default_head_commit = contract::ids::CommitId::parse(&default_head)
        .map_err(|e| format!("the default head commit id {default_head:?}: {e}"))?;
    let target = Target {
        branch: args.branch,
        base_branch: args.base_branch,
        repository: args.repository,
    };
    let sets: Vec<(&str, &contract::ids::CommitId, Reads)> = if default_head == base {
        vec![(base.as_str(), &base_commit, Reads::Both)]
    } else {
        vec![
            (base.as_str(), &base_commit, Reads::Base),
            (
                default_head.as_str(),
                &default_head_commit,
                Reads::DefaultHead,
            ),
        ]
    };
    let mut findings = Vec::new();
    let mut cleared = Vec::new();
    let mut names_at: Vec<Vec<String>> = Vec::new();
    for (rev, commit, reads) in sets {
        // Local actions and reusable workflows are read from the same commit's tree.
        let read_commit = guard::readiness::CommitFiles::read(&repo, rev)?;
        let read = |path: &str| read_commit.file(&repo, path);
        for finding in &read_commit.unreadable {
            findings.push((commit.clone(), finding.clone()));
        }
        let review = review_in(&read_commit.files, &read, &target, &policy.readiness, reads);
        for finding in review.findings {
            findings.push((commit.clone(), finding));
        }
        for job in review.cleared {
            cleared.push((commit.clone(), job));
        }
        names_at.push(read_commit.names.clone());
    }
    let base_workflows = names_at.first().cloned().unwrap_or_default();
    let default_head_workflows = names_at
        .get(1)
        .cloned()
        .unwrap_or_else(|| base_workflows.clone());
    let mode = if policy.allow_unprotected_secret_jobs {
        ReadinessMode::Report
    } else {
        ReadinessMode::Strict
    };
    let commits = Commits {
        base: base_commit.clone(),
        base_workflows,
        default_head: default_head_commit.clone(),
        default_head_workflows,
    };
    let doc = document_with(&target, commits, &findings, &cleared, mode);
    let text = match args.format {
        Format::Json => guard::doc_json::to_string_pretty(&doc)
            .map_err(|e| format!("cannot serialize the readiness document: {e}"))?,
        Format::Text => render_text(&doc),
    };
    contract::cli::emit(&text)?;
    Ok(Exit::verdict(doc.result != ReadinessResult::Fail).code())
}

fn render_text(doc: &ReadinessDoc) -> String {
    let mut out = format!(
        "readiness: {} ({} workflow file(s) of {} and {} of the default head {} read for {} into {}, mode {})\n",
        doc.result,
        doc.workflows.len(),
        doc.base_commit.as_str(),
        doc.default_head_workflows.len(),
        doc.default_head.as_str(),
        neutralize(&doc.branch),
        neutralize(&doc.base_branch),
        doc.mode
    );
    for finding in &doc.findings {
        let level = match (&finding.accepted, doc.mode) {
            (Some(_), _) => "accepted",
            (None, ReadinessMode::Strict) => "error",
            (None, ReadinessMode::Report) => "warning",
        };
        out.push_str(&format!(
            "  {level}[{}]: {}: {}\n    fix: {}\n",
            finding.rule,
            neutralize(&finding.workflow),
            neutralize(&finding.message),
            neutralize(&finding.fix)
        ));
        if let Some(reason) = &finding.accepted {
            out.push_str(&format!(
                "    accepted by the policy: {}\n",
                neutralize(reason)
            ));
        }
    }
    for job in &doc.cleared {
        out.push_str(&format!(
            "  cleared: {}: job `{}`: {}\n",
            neutralize(&job.workflow),
            neutralize(&job.job),
            neutralize(&job.reason)
        ));
    }
    out
}
