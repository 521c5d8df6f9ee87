//! `gate init`: write the caller, a starting policy, the App manifest and the rulesets for the
//! repository in `--dir` (see [`gate::init`]), then print the remaining steps. Exit 0: written
//! (or already there, identical); 1: a file exists with other contents and `--force` was not
//! given (nothing written); 2: usage or I/O error.

use std::path::PathBuf;

use clap::Args;
use clap::builder::PossibleValuesParser;

use contract::cli::emit;
use gate::init::{BuildSystem, InitRequest, ReadinessScan, Written, changes, plan, write};
use guard::escape::neutralize;

#[derive(Args)]
pub struct InitArgs {
    /// The repository's work tree.
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The build system, `examples/<name>.yml` (default: detected from the files at the root:
    /// Cargo.toml, go.mod, package.json, pyproject.toml, setup.py or requirements.txt, then the
    /// lock file: pnpm-lock.yaml, yarn.lock (with .yarnrc.yml: Yarn 2+), uv.lock, poetry.lock,
    /// pdm.lock).
    #[arg(long, value_name = "NAME", value_parser = PossibleValuesParser::new(BuildSystem::ALL.map(BuildSystem::name)))]
    build_system: Option<String>,
    /// The release commit to pin the reusable workflow to: the commit the release's tag names
    /// (with --tag). Default: an existing caller's pin, else the placeholder, to replace.
    #[arg(long, value_name = "COMMIT", requires = "tag")]
    pin: Option<String>,
    /// The release's tag (vX.Y.Z), written beside the pin (with --pin).
    #[arg(long, value_name = "vX.Y.Z", requires = "pin")]
    tag: Option<String>,
    /// Show what would change, as a diff per file, and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The App's id: writes the rulesets, which name it.
    #[arg(long, value_name = "ID", value_parser = clap::value_parser!(u64).range(1..))]
    app_id: Option<u64>,
    /// OWNER/NAME, for the App's name and homepage and the steps.
    #[arg(long, value_name = "OWNER/NAME")]
    repository: Option<String>,
    /// Replace the caller and the policy with the templates too (the caller keeps its pin).
    #[arg(long)]
    force: bool,
}

pub fn run_cli(args: InitArgs) -> u8 {
    let fail = |message: &str| {
        eprintln!("gate init: {}", neutralize(message));
        contract::cli::Exit::Error.code()
    };
    if let Some(r) = &args.repository
        && let Err(e) = github::Repository::parse(r)
    {
        return fail(&e.to_string());
    }
    let request = InitRequest {
        dir: args.dir.clone(),
        build_system: args
            .build_system
            .as_deref()
            .and_then(BuildSystem::from_name),
        pin: args.pin.clone(),
        tag: args.tag.clone(),
        app_id: args.app_id,
        repository: args.repository.clone(),
    };
    let plan = match plan(&request) {
        Ok(plan) => plan,
        Err(e) => return fail(&e.to_string()),
    };
    if args.dry_run {
        return dry_run(&args, &plan);
    }
    let done = match write(&args.dir, &plan, args.force) {
        Ok(Ok(done)) => done,
        Ok(Err(conflicts)) => {
            for path in &conflicts.0 {
                eprintln!(
                    "gate init: {} exists with other contents; not replaced (use --force)",
                    neutralize(path)
                );
            }
            eprintln!("gate init: nothing written");
            return contract::cli::Exit::Fail.code();
        }
        Err(e) => return fail(&e.to_string()),
    };
    let mut out = gate::output::text::TextLines::default();
    out.line(&format!(
        "gate init: a {} repository",
        plan.build_system.name()
    ));
    for &(path, action) in &done {
        let verb = match action {
            Written::Created => "wrote",
            Written::Unchanged => "unchanged",
            Written::Replaced => "replaced",
            Written::Updated => "updated",
            Written::Kept => "kept",
        };
        let note = match action {
            Written::Updated => " (its release pin; nothing else)",
            Written::Kept => " (the repository's own; --force replaces it)",
            _ => "",
        };
        out.line(&format!("  {verb:<9} {path}{note}"));
    }
    let kept = done
        .iter()
        .any(|(path, action)| *path == gate::doctor::POLICY_PATH && *action == Written::Kept);
    readiness_lines(&mut out, &plan, kept);
    out.line("The setup's steps, in order (ADOPTING.md, \"Setting up\"):");
    for (i, step) in plan.steps.iter().enumerate() {
        out.line(&format!("  {}. {step}", i + 1));
    }
    let out = out.finish();
    match emit(&out) {
        Ok(()) => contract::cli::Exit::Pass.code(),
        Err(e) => fail(&e),
    }
}

/// `--dry-run`: each file's action and, where it would change, a unified diff; nothing written.
/// Exit 0, or 1 when a file is in the way (as a real run would).
fn dry_run(args: &InitArgs, plan: &gate::init::Plan) -> u8 {
    let fail = |message: &str| {
        eprintln!("gate init: {}", neutralize(message));
        contract::cli::Exit::Error.code()
    };
    let (changes, blocked) = match changes(&args.dir, plan, args.force) {
        Ok(Ok(changes)) => (changes, Vec::new()),
        Ok(Err(conflicts)) => (Vec::new(), conflicts.0),
        Err(e) => return fail(&e.to_string()),
    };
    let mut out = gate::output::text::TextLines::default();
    out.line(&format!(
        "gate init --dry-run: a {} repository; nothing written",
        plan.build_system.name()
    ));
    for path in &blocked {
        out.line(&format!(
            "  in the way {path}: exists and does not call the reusable workflow (use --force)"
        ));
    }
    let kept = changes
        .iter()
        .any(|c| c.path == gate::doctor::POLICY_PATH && c.action == Written::Kept);
    for change in &changes {
        let verb = match change.action {
            Written::Created => "would write",
            Written::Unchanged => "unchanged",
            Written::Replaced => "would replace",
            Written::Updated => "would update",
            Written::Kept => "would keep",
        };
        out.line(&format!("  {verb} {}", change.path));
        let before = change.before.as_deref().unwrap_or("");
        if before != change.after {
            let old = format!("a/{}", change.path);
            let new = format!("b/{}", change.path);
            let diff = similar::TextDiff::from_lines(before, &change.after);
            let unified = diff
                .unified_diff()
                .context_radius(3)
                .header(
                    if change.before.is_some() {
                        &old
                    } else {
                        "/dev/null"
                    },
                    &new,
                )
                .to_string();
            // The diff's own lines stay lines (each escaped on its own).
            for line in unified.lines() {
                out.line(line);
            }
        }
    }
    readiness_lines(&mut out, plan, kept);
    let out = out.finish();
    match emit(&out) {
        Ok(()) if blocked.is_empty() => contract::cli::Exit::Pass.code(),
        Ok(()) => contract::cli::Exit::Fail.code(),
        Err(e) => fail(&e),
    }
}

/// What readiness found in HEAD's workflows, and where its proposals are (`kept`: the policy is
/// the repository's own, so they are printed instead of written). Every line is escaped.
fn readiness_lines(out: &mut gate::output::text::TextLines, plan: &gate::init::Plan, kept: bool) {
    let policy = gate::doctor::POLICY_PATH;
    match &plan.readiness {
        ReadinessScan::NotRun(why) => {
            out.line(&format!(
                "Readiness: not run: {why}; `guard readiness` runs in the workflow regardless."
            ));
        }
        ReadinessScan::Ran {
            commit,
            base_branch,
            workflows,
            findings,
            environments,
        } => {
            out.line(&format!(
                "Readiness of HEAD {commit} ({} workflow file(s), read as `guard readiness` reads them for an agent-team/** branch into {base_branch}):",
                workflows.len()
            ));
            if findings.is_empty() {
                out.line("  no job would run the branch's code with credentials");
            }
            for finding in findings {
                let state = if finding.accepted.is_some() {
                    "accepted"
                } else {
                    "found"
                };
                out.line(&format!(
                    "  {state}[{}]: {}: {}",
                    finding.rule,
                    finding.workflow,
                    finding.message()
                ));
                out.line(&format!("    fix: {}", finding.fix()));
            }
            if !environments.is_empty() {
                out.line(&format!(
                    "  environments named, not listed as protected: {}",
                    environments.join(", ")
                ));
            }
            if plan.proposals.is_empty() {
                out.line("  nothing to propose for the policy");
            } else if kept {
                out.line(&format!(
                    "  {policy} is the repository's own and was kept; the proposals (commented; add them by hand if wanted):"
                ));
                for line in plan.proposals.lines().filter(|l| !l.is_empty()) {
                    out.line(&format!("    {line}"));
                }
            } else {
                out.line(&format!(
                    "  proposals: commented out at the end of {policy} (readiness.accept, readiness.protected-environments); none is in force until you uncomment it"
                ));
            }
        }
    }
}
