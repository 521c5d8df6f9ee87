//! `guard readiness`: the jobs of the base commit's own workflows that would run on the published
//! branch's push or pull request with secrets and no environment (see [`guard::readiness`]).
//!
//! Exit 0 when there is none, or when the policy's `allow.unprotected-secret-jobs` lets them be
//! reported only; 1 when there are (strict, the default); 2 when the check could not run.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use contract::cli::Exit;
use contract::escape::neutralize;
use contract::readiness::{ReadinessDoc, ReadinessMode, ReadinessResult};
use guard::git::GitRepo;
use guard::readiness::{Finding, Target, WorkflowFile, assess, document};

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
    let entries = repo.workflow_files(&base).map_err(|e| e.to_string())?;
    let target = Target {
        branch: args.branch,
        base_branch: args.base_branch,
        repository: args.repository,
    };
    let mut findings = Vec::new();
    let mut files = Vec::new();
    let mut names = Vec::new();
    for (path, content) in entries {
        names.push(path.clone());
        match content {
            Ok(bytes) => files.push(WorkflowFile { path, bytes }),
            Err(reason) => findings.push(Finding::UnreadableWorkflow {
                workflow: path,
                reason,
            }),
        }
    }
    findings.extend(assess(&files, &target));
    let mode = if policy.allow_unprotected_secret_jobs {
        ReadinessMode::Report
    } else {
        ReadinessMode::Strict
    };
    let doc = document(&target, base_commit, names, &findings, mode);
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
        "readiness: {} ({} workflow file(s) of {} read for {} into {}, mode {})\n",
        doc.result,
        doc.workflows.len(),
        doc.base_commit.as_str(),
        neutralize(&doc.branch),
        neutralize(&doc.base_branch),
        doc.mode
    );
    for finding in &doc.findings {
        out.push_str(&format!(
            "  {}[{}]: {}: {}\n",
            if doc.mode == ReadinessMode::Strict {
                "error"
            } else {
                "warning"
            },
            finding.rule,
            neutralize(&finding.workflow),
            neutralize(&finding.message)
        ));
    }
    out
}
