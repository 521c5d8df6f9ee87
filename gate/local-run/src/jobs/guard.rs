//! Job `guard`: verifies the dispatcher's signature first (environment agent-team-verify), then
//! validates the diff as data and reads the base's own workflows; never applies or runs the diff.

use std::fmt::Write as _;

use contract::readiness::ReadinessDoc;
use contract::verdict::VerdictDoc;
use gate::decide::JobResult;
use github_standin::JobReport;

use super::{Context, Job, open_with_diff, read_json, verdict_evidence};
use crate::LocalRunError;
use crate::samples::{BASE_BRANCH, REPOSITORY};
use crate::stage::{
    GUARD_CHECK, GUARD_INPUTS, GUARD_READINESS, GUARD_VERIFY_DISPATCH, Invocation, Runner,
};

pub fn play(
    runner: &mut Runner<'_>,
    ctx: &Context,
) -> Result<(JobResult, JobReport), LocalRunError> {
    let mut job = Job::start(
        runner,
        "guard",
        "contents: read; validates the diff as data, never applies it",
    )?;
    let Some(opened) = open_with_diff(
        runner,
        &mut job,
        ctx,
        GUARD_INPUTS,
        Some(GUARD_VERIFY_DISPATCH),
        "base",
    )?
    else {
        return job.finish(runner);
    };
    let verdict = job.dir.join("verdict.json");
    let (end, _) = runner.stage(
        opened
            .diff_flags(Invocation::new(GUARD_CHECK), ctx)
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
            .flag("--repo", &opened.checkout)
            .flag("--base", ctx.base())
            .flag("--branch", format!("agent-team/{}", ctx.task_id()))
            // The simulated default branch has not moved since the base.
            .flag("--default-head", ctx.base())
            .flag("--base-branch", BASE_BRANCH)
            .flag("--repository", REPOSITORY)
            .flag("--policy", &opened.policy)
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
