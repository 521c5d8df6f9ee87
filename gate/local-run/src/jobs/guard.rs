//! Job `guard`: validates the diff as data and reads the base's own workflows; never applies or
//! runs the diff.

use std::fmt::Write as _;

use contract::readiness::ReadinessDoc;
use contract::verdict::VerdictDoc;
use gate::decide::JobResult;
use github_standin::JobReport;

use super::{
    Context, Job, check_out, fetch_diff, read_json, read_policy, validate_inputs, verdict_evidence,
};
use crate::LocalRunError;
use crate::samples::{BASE_BRANCH, REPOSITORY};
use crate::stage::{GUARD_CHECK, GUARD_INPUTS, GUARD_READINESS, Invocation, Runner};

pub fn play(
    runner: &mut Runner<'_>,
    ctx: &Context,
) -> Result<(JobResult, JobReport), LocalRunError> {
    let mut job = Job::start(
        runner,
        "guard",
        "contents: read; validates the diff as data, never applies it",
    )?;
    if !validate_inputs(runner, &mut job, GUARD_INPUTS)? {
        return job.finish(runner);
    }
    let trusted = check_out(
        runner,
        &mut job,
        ctx,
        "Check out the dispatched commit (trusted)",
        "trusted",
    )?;
    let base = check_out(runner, &mut job, ctx, "Check out the base commit", "base")?;
    let policy = read_policy(runner, &mut job, &trusted)?;
    let Some(diff) = fetch_diff(runner, &mut job, ctx)? else {
        return job.finish(runner);
    };

    let verdict = job.dir.join("verdict.json");
    let (end, _) = runner.stage(
        Invocation::new(GUARD_CHECK)
            .flag("--diff", &diff)
            .flag("--expected-sha256", ctx.expected())
            .flag("--declared-scope", ctx.dispatched.input("declared_scope"))
            .flag("--policy", &policy)
            .flag("--repo", &base)
            .flag("--base", ctx.base())
            .flag("--format", "json")
            .stdout_to(&verdict),
    )?;
    if let Some(doc) = read_json::<VerdictDoc>(&verdict) {
        let mut summary = format!(
            "    verdict: {}, {} file(s), {} violation(s), {}\n",
            doc.verdict,
            doc.files.len(),
            doc.violations.len(),
            doc.mode
        );
        for file in &doc.files {
            let path = file.new_path.as_ref().or(file.old_path.as_ref());
            let _ = writeln!(
                summary,
                "      {:?} {}",
                file.status,
                path.map_or_else(|| "?".to_string(), |p| p.display())
            );
        }
        let evidence = verdict_evidence(&doc);
        for item in &evidence {
            let _ = writeln!(summary, "      {}", item.render());
        }
        runner.say(&summary)?;
        runner.evidence(evidence);
    }
    if !job.step(GUARD_CHECK.step, end.ok()) {
        return job.finish(runner);
    }

    let readiness = job.dir.join("readiness.json");
    let (end, _) = runner.stage(
        Invocation::new(GUARD_READINESS)
            .flag("--repo", &base)
            .flag("--base", ctx.base())
            .flag("--branch", format!("agent-team/{}", ctx.task_id()))
            .flag("--base-branch", BASE_BRANCH)
            .flag("--repository", REPOSITORY)
            .flag("--policy", &policy)
            .flag("--format", "json")
            .stdout_to(&readiness),
    )?;
    if let Some(doc) = read_json::<ReadinessDoc>(&readiness) {
        runner.say(&format!(
            "    readiness: {:?}, {} workflow file(s) read, {} finding(s)\n",
            doc.result,
            doc.workflows.len(),
            doc.findings.len()
        ))?;
    }
    job.step(GUARD_READINESS.step, end.ok());
    job.finish(runner)
}
