//! Job `publish`: only after a pass (`needs.decide.result == 'success' &&
//! needs.decide.outputs.gate == 'pass'`). Re-decides, verifies the dispatcher's signature, plans
//! the publication from its own checkout and the diff bytes, then `gate publish` commits through
//! the simulated GitHub's API, reads the commit back and fails unless its tree id is the plan's,
//! opens the draft pull request and posts the check run.

use gate::decide::JobResult;
use gate::output::publish_plan_v2::PublishPlanDoc;
use gate::output::publish_result_v1::PublishResultDoc;
use github_standin::JobReport;
use guard::escape::neutralize;
use guard::inputs::Scope;

use super::{
    Context, Job, check_out, fetch_diff, read_json, read_policy, require_pass, run_decide,
    validate_inputs, verify_dispatch,
};
use crate::LocalRunError;
use crate::samples::{BASE_BRANCH, REPOSITORY};
use crate::stage::{
    GATE_PUBLISH, GATE_PUBLISH_PLAN, GATE_REDECIDE, GATE_VERIFY_DISPATCH, Invocation,
    PUBLISH_INPUTS, PUBLISH_READINESS, Runner,
};

/// What the publication left: the plan's tree (git's) and `gate publish`'s result.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub expected_tree: Option<String>,
    pub result: Option<PublishResultDoc>,
}

pub fn play(
    runner: &mut Runner<'_>,
    ctx: &Context,
    guard: &JobResult,
    build_test: &JobResult,
    decide: &JobResult,
) -> Result<(JobResult, JobReport, Published), LocalRunError> {
    let mut published = Published::default();
    let mut job = Job::start(
        runner,
        "publish",
        "environment agent-team-publish; never checks out, applies or runs the patch",
    )?;
    macro_rules! stop_unless {
        ($ok:expr) => {
            if !$ok {
                let (result, report) = job.finish(runner)?;
                return Ok((result, report, published));
            }
        };
    }
    stop_unless!(validate_inputs(runner, &mut job, PUBLISH_INPUTS)?);
    let trusted = check_out(
        runner,
        &mut job,
        ctx,
        "Check out the dispatched commit (trusted)",
        "trusted",
    )?;
    let policy = read_policy(runner, &mut job, &trusted)?;

    // Its own decision, from the jobs' results (decide's included).
    let (end, passed, _) = run_decide(
        runner,
        &job,
        ctx,
        GATE_REDECIDE,
        &[
            ("guard", guard, &[]),
            ("build-test", build_test, &[]),
            ("decide", decide, &[("gate", "pass")]),
        ],
    )?;
    let decision = job.dir.join("decision.json");
    stop_unless!(job.step(GATE_REDECIDE.step, end.ok()));
    stop_unless!(require_pass(runner, &mut job, passed)?);

    stop_unless!(verify_dispatch(
        runner,
        &mut job,
        ctx,
        GATE_VERIFY_DISPATCH
    )?);

    let Some(diff) = fetch_diff(runner, &mut job, ctx)? else {
        let (result, report) = job.finish(runner)?;
        return Ok((result, report, published));
    };
    // The scope split as the workflow's SPLIT_SCOPE does it: guard's own rule.
    let scope = Scope::parse_described(&ctx.dispatched.input("declared_scope"))
        .map_err(|message| LocalRunError::Stage(format!("declared_scope: {message}")))?;
    let plan = job.dir.join("plan.json");
    let verdict = job.dir.join("verdict.json");
    let branch = format!("agent-team/{}", ctx.task_id());
    let mut invocation = Invocation::new(GATE_PUBLISH_PLAN)
        .flag("--repo", &trusted)
        .flag("--base", ctx.base())
        .flag("--diff", &diff)
        .flag("--expected-sha256", ctx.expected())
        .flag("--branch", &branch)
        .flag("--base-branch", BASE_BRANCH)
        .flag("--repository", REPOSITORY)
        .flag("--task-id", ctx.task_id())
        .flag("--run-id", ctx.run_id())
        .flag(
            "--dispatch-nonce",
            dispatch_nonce(&ctx.dispatched.input("dispatch_mac")),
        )
        .flag("--pr-title", ctx.dispatched.input("pr_title"))
        .flag("--pr-description", ctx.dispatched.input("pr_description"))
        .flag("--revise", ctx.dispatched.input("revise_pull_request"))
        .flag("--policy", &policy);
    for glob in scope.globs() {
        invocation = invocation.flag("--scope", glob);
    }
    let (end, _) = runner.stage(
        invocation
            .flag("--out", &plan)
            .flag("--verdict-out", &verdict),
    )?;
    stop_unless!(job.step(GATE_PUBLISH_PLAN.step, end.ok()));
    let plan_doc: Option<PublishPlanDoc> = read_json(&plan);
    if let Some(doc) = &plan_doc {
        published.expected_tree = Some(doc.tree.to_string());
        print_plan(runner, doc)?;
    }

    // The second execution again, before anything is written (the simulated default branch has
    // not moved since the base).
    let readiness = job.dir.join("readiness-publish.json");
    let (end, _) = runner.stage(
        Invocation::new(PUBLISH_READINESS)
            .flag("--repo", &trusted)
            .flag("--base", ctx.base())
            .flag("--branch", &branch)
            .flag("--default-head", ctx.base())
            .flag("--base-branch", BASE_BRANCH)
            .flag("--repository", REPOSITORY)
            .flag("--policy", &policy)
            .flag("--format", "json")
            .stdout_to(&readiness),
    )?;
    stop_unless!(job.step(PUBLISH_READINESS.step, end.ok()));

    runner.say(
        "  - Mint the App installation token\n    the simulated GitHub's token (GH_TOKEN), never printed\n",
    )?;
    job.step("Mint the App installation token", true);

    let result = job.dir.join("publish-result.json");
    let (end, _) = runner.stage(
        Invocation::new(GATE_PUBLISH)
            .flag("--plan", &plan)
            .flag("--repository", REPOSITORY)
            .flag("--branch", &branch)
            .flag("--base", ctx.base())
            .flag("--base-branch", BASE_BRANCH)
            .flag("--decision", &decision)
            .flag("--verdict", &verdict)
            .flag("--run-attempt", "1")
            // The reusable workflow's defaults (its inputs check-run-name, protected-label and
            // protected-reviewers).
            .flag("--check-name", gate::names::DEFAULT_CHECK_RUN_NAME)
            .flag("--protected-label", gate::names::DEFAULT_PROTECTED_LABEL)
            .flag("--protected-reviewers", "")
            .flag(
                "--details-url",
                format!(
                    "https://github.com/{REPOSITORY}/actions/runs/{}",
                    ctx.run_id()
                ),
            )
            .flag("--revise", ctx.dispatched.input("revise_pull_request"))
            .flag("--out", &result)
            .env("AGENT_TEAM_APP_ID", ctx.app_id.to_string())
            .env("GH_TOKEN", &ctx.token)
            .env("GITHUB_API_URL", &ctx.api_url),
    )?;
    published.result = read_json(&result);
    if let Some(doc) = &published.result {
        let tree = &doc.tree;
        runner.say(&format!(
            "    publish-result: {} (exit {}), branch {}, method {}\n    tree expected (git's): {}\n    tree published (read back): {}{}\n",
            doc.outcome,
            doc.exit_code,
            doc.branch_state.as_deref().unwrap_or("not written"),
            doc.method.name(),
            tree.expected,
            tree.published.as_deref().unwrap_or("(none)"),
            if tree.proven { " = expected (proven)" } else { " (NOT proven)" },
        ))?;
        if let Some(failure) = &doc.failure {
            runner.say(&format!(
                "    failure {}: {}\n",
                neutralize(&failure.code),
                neutralize(&failure.message)
            ))?;
        }
    }
    job.step(GATE_PUBLISH.step, end.ok());
    let (result, report) = job.finish(runner)?;
    Ok((result, report, published))
}

/// The nonce of a verified `v2:<nonce>:<expires>:<tag>`, as the workflow's step cuts it.
fn dispatch_nonce(mac: &str) -> String {
    let rest = mac.strip_prefix("v2:").unwrap_or(mac);
    rest.split(':').next().unwrap_or_default().to_owned()
}

fn print_plan(runner: &mut Runner<'_>, plan: &PublishPlanDoc) -> Result<(), LocalRunError> {
    use std::fmt::Write as _;
    let input = &plan.input;
    let mut text = format!("    PUBLICATION PLAN ({})\n", plan.schema);
    let _ = writeln!(
        text,
        "      branch:          {}",
        neutralize(&input.branch.branch_name)
    );
    let _ = writeln!(text, "      expectedHeadOid: {}", input.expected_head_oid);
    let _ = writeln!(text, "      method:          {}", plan.method.name());
    let _ = writeln!(text, "      tree (git's):    {}", plan.tree);
    for addition in &input.file_changes.additions {
        let _ = writeln!(text, "      add/modify {}", neutralize(&addition.path));
    }
    for deletion in &input.file_changes.deletions {
        let _ = writeln!(text, "      delete     {}", neutralize(&deletion.path));
    }
    let _ = writeln!(
        text,
        "      commit headline: {}",
        neutralize(&input.message.headline)
    );
    let _ = writeln!(
        text,
        "      pull request:    {}",
        neutralize(&plan.pull_request.title)
    );
    runner.say(&text)
}
