//! Job `decide`: `gate decide` over `toJSON(needs)`; no environment, no secret. It runs whatever
//! happened upstream (`if: !cancelled()`), and fails on a skipped or failed job.

use gate::decide::JobResult;
use github_standin::JobReport;

use super::{Context, Job, decision_output, needs_json, require_pass, show_needs, validate_inputs};
use crate::LocalRunError;
use crate::stage::{DECIDE_INPUTS, GATE_DECIDE, Invocation, Runner};

/// The job's conclusion, its report, whether it passed (its `gate` output) and the reasons.
pub struct Decided {
    pub result: JobResult,
    pub report: JobReport,
    pub passed: bool,
    pub reasons: String,
}

pub fn play(
    runner: &mut Runner<'_>,
    ctx: &Context,
    guard: &JobResult,
    build_test: &JobResult,
) -> Result<Decided, LocalRunError> {
    let mut job = Job::start(
        runner,
        "decide",
        "no environment, no secret; if: !cancelled()",
    )?;
    if !validate_inputs(runner, &mut job, DECIDE_INPUTS)? {
        let (result, report) = job.finish(runner)?;
        return Ok(Decided {
            result,
            report,
            passed: false,
            reasons: String::new(),
        });
    }
    let needs = needs_json(&[("guard", guard, &[]), ("build-test", build_test, &[])]);
    show_needs(runner, &needs)?;
    let github_output = job.dir.join("github_output");
    std::fs::write(&github_output, b"")
        .map_err(crate::io_error("create the GITHUB_OUTPUT file"))?;
    let (end, _) = runner.stage(
        Invocation::new(GATE_DECIDE)
            .flag("--needs", &needs)
            .flag("--require", "guard,build-test")
            .flag("--run-id", ctx.run_id())
            .flag("--diff-sha256", ctx.expected())
            .flag("--github-output", &github_output)
            .flag("--format", "json")
            .stdout_to(&job.dir.join("decision.json")),
    )?;
    let (passed, reasons) = decision_output(runner, &end, &github_output)?;
    job.step(GATE_DECIDE.step, end.ok());
    if job.failed() {
        job.step("Require a pass decision", false);
    } else {
        require_pass(runner, &mut job, passed)?;
    }
    let (result, report) = job.finish(runner)?;
    Ok(Decided {
        result,
        report,
        passed,
        reasons,
    })
}
