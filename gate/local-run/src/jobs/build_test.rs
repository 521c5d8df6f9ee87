//! Job `build-test`: the only job that applies and runs the patch; no secrets.

use std::path::{Path, PathBuf};
use std::process::Output;

use contract::tree::VerifyTreeDoc;
use contract::verdict::VerdictDoc;
use gate::decide::JobResult;
use github_standin::JobReport;
use guard::hash;

use super::{
    Context, Job, open_with_diff, print_tree_doc, read_json, tree_evidence, verdict_evidence,
};
use crate::samples::BUILD_COMMAND;
use crate::stage::{
    BUILD_TEST_INPUTS, GUARD_APPLY, GUARD_RUN, GUARD_VERIFY_TREE, Invocation, REPORT_BUILD_TEST,
    Runner, StepEnd,
};
use crate::{LocalRunError, io_error};

/// `guard run --timeout` (the workflow gives the build its job's timeout less 10 minutes).
const BUILD_TIMEOUT_SECONDS: &str = "600";
/// `guard run --max-output`, as the workflow passes it.
const MAX_OUTPUT: &str = "8388608";
/// The write budget the workflow passes (its `guard run` step).
const WRITE_BUDGET_BYTES: &str = "4294967296";
const WRITE_BUDGET_INODES: &str = "500000";

pub fn play(
    runner: &mut Runner<'_>,
    ctx: &Context,
) -> Result<(JobResult, JobReport), LocalRunError> {
    let mut job = Job::start(
        runner,
        "build-test",
        "contents: read, no secrets; the only job that applies and runs the patch",
    )?;
    let Some(opened) = open_with_diff(runner, &mut job, ctx, BUILD_TEST_INPUTS, None, "work")?
    else {
        return job.finish(runner);
    };
    let (work, policy) = (opened.checkout.clone(), opened.policy.clone());
    let report_dir = job.dir.join("report");
    std::fs::create_dir_all(&report_dir)
        .map_err(io_error(format!("create {}", report_dir.display())))?;
    let verdict = report_dir.join("verdict.json");
    let baseline = job.dir.join("tree-baseline.json");
    let tree_after_apply = report_dir.join("tree-after-apply.json");
    let run_report = report_dir.join("build-test.json");
    let tree_after_build = report_dir.join("tree-after-build.json");

    // Step `apply`: guard apply, then the tree check that writes the baseline.
    let (end, _) = runner.stage(
        opened
            .diff_flags(Invocation::new(GUARD_APPLY), ctx)
            .flag("--verdict-out", &verdict),
    )?;
    runner.evidence(
        read_json::<VerdictDoc>(&verdict)
            .map(|d| verdict_evidence(&d))
            .unwrap_or_default(),
    );
    let mut applied = end.ok();
    let mut baseline_sha256 = String::new();
    if applied {
        let (end, _) = runner.stage(
            Invocation::new(GUARD_VERIFY_TREE)
                .flag("--verdict", &verdict)
                .flag("--repo", &work)
                .flag("--base", ctx.base())
                .flag("--out", &baseline)
                .flag("--format", "json")
                .stdout_to(&tree_after_apply),
        )?;
        let doc = read_json::<VerifyTreeDoc>(&tree_after_apply);
        runner.evidence(doc.as_ref().map(tree_evidence).unwrap_or_default());
        print_tree_doc(runner, doc.as_ref())?;
        applied = end.ok();
        if applied {
            let bytes = std::fs::read(&baseline)
                .map_err(io_error(format!("read {}", baseline.display())))?;
            // The workflow pins it in a step output, which the build cannot rewrite.
            baseline_sha256 = hash::sha256_hex(&bytes);
            runner.say(&format!("    baseline_sha256={baseline_sha256}\n"))?;
        }
    }
    if !job.step(GUARD_APPLY.step, applied) {
        return job.finish(runner);
    }

    // The patch's code runs here and nowhere else; guard run checks the tree itself once the
    // build is gone, against the baseline pinned above.
    let deps = job.dir.join("deps");
    std::fs::create_dir_all(&deps).map_err(io_error(format!("create {}", deps.display())))?;
    let toolchain = toolchain_bin_dir();
    let build = |deviation: Option<&str>| {
        let mut inv = Invocation::new(GUARD_RUN)
            .flag("--repo", &work)
            .flag("--read-only", &toolchain)
            .flag("--read-only", &deps)
            .flag("--allow-env", "AGENT_TEAM_DEPS")
            .flag("--policy", &policy)
            .flag("--verdict", &verdict)
            .flag("--baseline", &baseline)
            .flag("--baseline-sha256", &baseline_sha256)
            .flag("--tree-report", &tree_after_build)
            .flag("--timeout", BUILD_TIMEOUT_SECONDS)
            .flag("--max-output", MAX_OUTPUT)
            .flag("--write-budget-bytes", WRITE_BUDGET_BYTES)
            .flag("--write-budget-inodes", WRITE_BUDGET_INODES)
            .flag("--report", &run_report)
            .trailing(&["bash", "-euo", "pipefail", "-c", BUILD_COMMAND])
            .env("AGENT_TEAM_DEPS", &deps);
        if let Some(reason) = deviation {
            inv = inv.deviation("--no-isolation-because", reason);
        }
        inv
    };
    let (mut end, output) = runner.stage(build(None))?;
    if isolation_unavailable(&end, &output, &run_report) {
        // The failed attempt is not the step's result: the retry below is.
        runner.records.pop();
        runner.say(
            "    !!! WARNING: guard run could not create its namespaces on this machine.\n    \
             !!! Re-running it with --no-isolation-because: the build below runs WITHOUT\n    \
             !!! network isolation, and nothing else blocks its network here (the workflow\n    \
             !!! never opts out: there the job fails instead).\n",
        )?;
        let reason = "local-run: network namespaces are unavailable on this machine; the bundled \
                      sample has no dependencies and builds --offline. NOTHING isolates the \
                      network of this build";
        end = runner.stage(build(Some(reason)))?.0;
    }
    let doc = read_json::<VerifyTreeDoc>(&tree_after_build);
    runner.evidence(doc.as_ref().map(tree_evidence).unwrap_or_default());
    print_tree_doc(runner, doc.as_ref())?;
    job.step(GUARD_RUN.step, end.ok());

    // The report runs whenever the patch was applied (`!cancelled() && steps.apply.outcome !=
    // 'skipped'`), and only from files that exist, like the workflow's `-s` tests.
    if run_report.is_file() && tree_after_apply.is_file() && tree_after_build.is_file() {
        let (end, _) = runner.stage(
            Invocation::new(REPORT_BUILD_TEST)
                .flag("--run", &run_report)
                .flag("--tree-before", &tree_after_apply)
                .flag("--tree-after", &tree_after_build)
                .flag("--verdict", &verdict)
                .stdout_to(&report_dir.join("build-test-report.json")),
        )?;
        job.step(REPORT_BUILD_TEST.step, end.ok());
    } else {
        runner.say("  - report build-test: nothing to assemble (no run report or tree check)\n")?;
    }
    job.finish(runner)
}

/// The directory of the `cargo` the build finds on PATH (the workflow's `$HOME/.cargo/bin`),
/// visible read-only inside the sandbox.
fn toolchain_bin_dir() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .find(|dir| dir.join("cargo").is_file())
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default()
                .join(".cargo/bin")
        })
}

/// `guard run` exiting 2 without a report because it could not establish its namespaces.
fn isolation_unavailable(end: &StepEnd, output: &Output, report: &Path) -> bool {
    *end == StepEnd::Error("exit 2 (an error, not a verdict)".to_owned())
        && !report.exists()
        && String::from_utf8_lossy(&output.stderr).contains("isolation could not be established")
}
