//! `gate verify-environments`: every environment the policy counts as protection
//! (`readiness.protected-environments`, which `guard readiness` lets hold back a job with
//! credentials) really holds back a run of the branch about to be published, read through the
//! API just before the publication:
//!
//! - it exists (GitHub creates an environment a job names, unprotected, on first use);
//! - it has required reviewers with at least one reviewer, or custom deployment branch policies
//!   none of which admits the branch (GitHub's name patterns: `*` does not match `/`).
//!
//! An environment limited to "protected branches" is not accepted: whether `agent-team/**` is
//! protected is a ruleset's business, not the environment's. Exit 0: every listed environment
//! holds; 1: one does not (each named, with why and the fix); 2: usage, configuration or I/O
//! error, or a setting that could not be read. The token (`GH_TOKEN`, the job's `github.token`
//! with `actions: read`) reaches no output.

use std::path::PathBuf;

use clap::Args;
use contract::cli::Exit;
use gate::publish::{branch_name_problem, repository_problem};
use github::{Client, Repository};
use guard::escape::neutralize;

#[derive(Args)]
pub struct VerifyEnvironmentsArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The guard policy whose `readiness.protected-environments` are checked (default: the
    /// embedded default, which lists none).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The branch the publication writes: the one each environment must hold back.
    #[arg(long, value_name = "NAME")]
    branch: String,
}

/// Whether GitHub's deployment branch pattern `pattern` admits `branch`: `*` and `?` never
/// match `/`. A pattern this cannot read admits it (fail closed).
pub fn branch_pattern_admits(pattern: &str, branch: &str) -> bool {
    match guard::glob::Glob::new(pattern, false).and_then(|g| g.compile()) {
        Ok(set) => set.is_match(branch),
        Err(_) => true,
    }
}

/// How one environment stands, or why it could not be read.
enum Standing {
    Holds(String),
    Admits(String),
}

fn standing(
    client: &Client,
    repo: &Repository,
    name: &str,
    branch: &str,
) -> Result<Standing, String> {
    let environment = match client.get_environment(repo, name) {
        Ok(environment) => environment,
        Err(e) if e.status() == Some(404) => {
            return Ok(Standing::Admits(
                "does not exist: GitHub creates it, unprotected, the first time a job names it; create it with required reviewers".to_owned(),
            ));
        }
        Err(e) => return Err(client.redact(&e.to_string())),
    };
    let reviewers = environment
        .protection_rules
        .iter()
        .filter(|r| r.kind == "required_reviewers")
        .map(|r| r.reviewers.len())
        .sum::<usize>();
    if reviewers > 0 {
        return Ok(Standing::Holds(format!("{reviewers} required reviewer(s)")));
    }
    match environment.deployment_branch_policy {
        None => Ok(Standing::Admits(
            "has no required reviewers and admits every branch; add required reviewers, or custom deployment branch policies that exclude agent-team/**".to_owned(),
        )),
        Some(policy) if policy.custom_branch_policies => {
            let listed = client
                .list_deployment_branch_policies(repo, name)
                .map_err(|e| client.redact(&e.to_string()))?;
            if listed.total_count > listed.branch_policies.len() as u64 {
                return Err(format!(
                    "environment {}: more deployment branch policies ({}) than one page reads",
                    neutralize(name),
                    listed.total_count
                ));
            }
            let admitting = listed
                .branch_policies
                .iter()
                .filter(|p| p.kind.as_deref().unwrap_or("branch") == "branch")
                .find(|p| branch_pattern_admits(&p.name, branch));
            Ok(match admitting {
                Some(p) => Standing::Admits(format!(
                    "admits {} through its deployment branch policy `{}`; narrow it so no agent-team/** branch matches",
                    neutralize(branch),
                    neutralize(&p.name)
                )),
                None => Standing::Holds(format!(
                    "{} deployment branch policy(ies), none admitting {}",
                    listed.branch_policies.len(),
                    neutralize(branch)
                )),
            })
        }
        Some(_) => Ok(Standing::Admits(
            "admits protected branches, and whether agent-team/** is one is a ruleset's setting: add required reviewers, or custom deployment branch policies that exclude agent-team/**".to_owned(),
        )),
    }
}

pub fn run(args: VerifyEnvironmentsArgs) -> u8 {
    match run_inner(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("gate verify-environments: error: {}", neutralize(&message));
            Exit::Error.code()
        }
    }
}

fn run_inner(args: &VerifyEnvironmentsArgs) -> Result<u8, String> {
    let repo = match Repository::parse(&args.repository) {
        Ok(repo) if repository_problem(&args.repository).is_none() => repo,
        _ => {
            return Err(format!(
                "--repository {:?} is not OWNER/NAME",
                args.repository
            ));
        }
    };
    if let Some(problem) = branch_name_problem(&args.branch) {
        return Err(format!("--branch {:?}: {problem}", args.branch));
    }
    let policy = guard::policy::Policy::load(args.policy.as_deref())?;
    let listed = &policy.readiness.protected_environments;
    if listed.is_empty() {
        println!(
            "no environment is listed as protection (readiness.protected-environments): nothing to verify"
        );
        return Ok(Exit::Pass.code());
    }
    let client = super::repo_steps::client()?;
    let mut failed = 0;
    for name in listed {
        match standing(&client, &repo, name, &args.branch)? {
            Standing::Holds(why) => println!("environment {}: holds ({why})", neutralize(name)),
            Standing::Admits(why) => {
                failed += 1;
                eprintln!(
                    "gate verify-environments: environment {} {why}",
                    neutralize(name)
                );
            }
        }
    }
    Ok(if failed == 0 {
        Exit::Pass.code()
    } else {
        Exit::Fail.code()
    })
}
