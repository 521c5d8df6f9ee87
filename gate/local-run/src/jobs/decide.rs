//! Job `decide`: `gate decide` over `toJSON(needs)`; no environment, no secret. It runs whatever
//! happened upstream (`if: !cancelled()`), and fails on a skipped or failed job.

use gate::decide::JobResult;
use github_standin::JobReport;

use super::{Context, Job, require_pass, run_decide, validate_inputs};
use crate::LocalRunError;
use crate::stage::{DECIDE_INPUTS, GATE_DECIDE, Runner};

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
    let (end, passed, reasons) = run_decide(
        runner,
        &job,
        ctx,
        GATE_DECIDE,
        &[("guard", guard, &[]), ("build-test", build_test, &[])],
    )?;
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
