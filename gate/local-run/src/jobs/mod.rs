//! The jobs of `.github/workflows/agent-team-apply-verify.yml`, each played as its steps are:
//! the steps that run an installed binary run it through the [`crate::stage`] runner; the steps
//! that are the runner's or GitHub's own (checkouts, the policy file, the diff's transport and
//! re-hash, `if:` conditions) are done here and said so. No job reads a file another job wrote,
//! except that `gate decide` is given `toJSON(needs)` built from the jobs' real conclusions, as
//! GitHub would. Every job reads the dispatch's inputs as the simulated GitHub received them.
//!
//! | job | stages |
//! |---|---|
//! | `guard` | `guard inputs`; `gate verify-dispatch`; `guard check`; `guard readiness` |
//! | `build-test` | `guard inputs`; `guard apply`, `guard verify-tree`; `guard run -- bash -euo pipefail -c "<build-command>"`; `report build-test` |
//! | `decide` | `guard inputs`; `gate decide` (`--require guard,build-test`) |
//! | `publish` (only when decide passed) | `guard inputs`; `gate decide` (`--require guard,build-test,decide`); `gate verify-dispatch`; `gate publish-plan`; `guard readiness`; `gate publish` |

pub mod build_test;
pub mod decide;
pub mod dispatcher;
pub mod guard;
pub mod publish;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ::guard::hash;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use contract::tree::VerifyTreeDoc;
use contract::verdict::VerdictDoc;
use gate::decide::JobResult;
use github_standin::JobReport;

use crate::github::Dispatched;
use crate::samples::DEFAULT_POLICY;
use crate::stage::{Evidence, Invocation, Runner, StageSpec, StepEnd, checkout};
use crate::{LocalRunError, io_error};

/// What every job reads: the dispatch as GitHub received it, and where the repository is.
pub struct Context {
    pub origin: PathBuf,
    pub dispatched: Dispatched,
    /// The simulated GitHub's API URL and token (GH_TOKEN of the steps that call it).
    pub api_url: String,
    pub token: String,
    /// The dispatch key the publish job's environment holds.
    pub key: String,
    /// The publishing App's id: the environments' variable `AGENT_TEAM_APP_ID`.
    pub app_id: u64,
}

impl Context {
    pub fn base(&self) -> String {
        self.dispatched.input("base_sha")
    }

    pub fn expected(&self) -> String {
        self.dispatched.input("expected_diff_sha256")
    }

    pub fn task_id(&self) -> String {
        self.dispatched.input("task_id")
    }

    pub fn run_id(&self) -> String {
        self.dispatched.run_id.to_string()
    }
}

/// One job's steps and conclusion, as the simulated GitHub will list them.
pub struct Job {
    pub name: &'static str,
    pub dir: PathBuf,
    steps: Vec<(String, String)>,
    failed: bool,
}

impl Job {
    /// Opens the job: its directory under the run's root, its header line.
    pub fn start(
        runner: &mut Runner<'_>,
        name: &'static str,
        about: &str,
    ) -> Result<Job, LocalRunError> {
        runner.say(&format!("\njob {name} ({about})\n"))?;
        let dir = runner.root.join(name);
        std::fs::create_dir_all(&dir).map_err(io_error(format!("create {}", dir.display())))?;
        let mut job = Job {
            name,
            dir,
            steps: Vec::new(),
            failed: false,
        };
        // The binaries were installed (and hash-checked) once, before the dispatch.
        job.step("Install the pinned agent-team binaries", true);
        Ok(job)
    }

    /// Records a step; a failed step fails the job.
    pub fn step(&mut self, name: &str, ok: bool) -> bool {
        self.steps.push((
            name.to_owned(),
            if ok { "success" } else { "failure" }.to_owned(),
        ));
        self.failed |= !ok;
        ok
    }

    pub fn failed(&self) -> bool {
        self.failed
    }

    pub fn result(&self) -> JobResult {
        if self.failed {
            JobResult::Failure
        } else {
            JobResult::Success
        }
    }

    /// Ends the job: prints its conclusion and returns it with its report for GitHub.
    pub fn finish(self, runner: &mut Runner<'_>) -> Result<(JobResult, JobReport), LocalRunError> {
        let result = self.result();
        runner.say(&format!("  job {}: {}\n", self.name, result.as_str()))?;
        let report = JobReport {
            name: self.name.to_owned(),
            conclusion: result.as_str().to_owned(),
            steps: self.steps,
            log: runner.job_log(self.name),
            started_at: None,
            completed_at: None,
        };
        Ok((result, report))
    }
}

/// A job that did not run, as GitHub lists it.
pub fn skipped(
    runner: &mut Runner<'_>,
    name: &str,
    why: &str,
) -> Result<(JobResult, JobReport), LocalRunError> {
    runner.say(&format!("\njob {name}: skipped ({why})\n"))?;
    Ok((
        JobResult::Skipped,
        JobReport {
            name: name.to_owned(),
            conclusion: "skipped".to_owned(),
            steps: Vec::new(),
            log: String::new(),
            started_at: None,
            completed_at: None,
        },
    ))
}

/// The "Validate inputs" step: `guard inputs` on the workflow's input variables.
pub fn validate_inputs(
    runner: &mut Runner<'_>,
    job: &mut Job,
    spec: StageSpec,
) -> Result<bool, LocalRunError> {
    let (end, _) = runner.stage(crate::stage::Invocation::new(spec))?;
    Ok(job.step(spec.step, end.ok()))
}

/// The checkout steps: a fresh clone of the repository at `sha` in the job's directory.
pub fn check_out(
    runner: &mut Runner<'_>,
    job: &mut Job,
    ctx: &Context,
    step: &str,
    path: &str,
) -> Result<PathBuf, LocalRunError> {
    let dest = job.dir.join(path);
    checkout(&ctx.origin, &dest, &ctx.base())?;
    runner.say(&format!(
        "  - {step}\n    {}: a clone at {}\n",
        runner.show(&dest),
        ctx.base()
    ))?;
    job.step(step, true);
    Ok(dest)
}

/// "Read the policy from the trusted commit": the repository holds no
/// `.github/agent-team-policy.yml`, so the embedded default, as the workflow writes it.
pub fn read_policy(
    runner: &mut Runner<'_>,
    job: &mut Job,
    trusted: &Path,
) -> Result<PathBuf, LocalRunError> {
    const STEP: &str = "Read the policy from the trusted commit";
    let path = job.dir.join("policy.yml");
    let from_repo = trusted.join(".github/agent-team-policy.yml");
    let (bytes, source) = if from_repo.is_file() {
        (
            std::fs::read(&from_repo).map_err(io_error(format!("read {}", from_repo.display())))?,
            ".github/agent-team-policy.yml",
        )
    } else {
        (DEFAULT_POLICY.as_bytes().to_vec(), "the embedded default")
    };
    std::fs::write(&path, bytes).map_err(io_error(format!("write {}", path.display())))?;
    runner.say(&format!(
        "  - {STEP}\n    {}: {source}\n",
        runner.show(&path)
    ))?;
    job.step(STEP, true);
    Ok(path)
}

/// "Fetch the diff and re-hash it": the bytes from the dispatch's `diff_b64`, compared with its
/// `expected_diff_sha256` before any binary sees them.
pub fn fetch_diff(
    runner: &mut Runner<'_>,
    job: &mut Job,
    ctx: &Context,
) -> Result<Option<PathBuf>, LocalRunError> {
    const STEP: &str = "Fetch the diff and re-hash it";
    let path = job.dir.join("diff.patch");
    let encoded = ctx.dispatched.input("diff_b64");
    let Ok(bytes) = BASE64.decode(encoded.as_bytes()) else {
        runner.say(&format!("  - {STEP}\n    diff_b64 is not base64\n"))?;
        job.step(STEP, false);
        return Ok(None);
    };
    std::fs::write(&path, &bytes).map_err(io_error(format!("write {}", path.display())))?;
    let actual = hash::sha256_hex(&bytes);
    let ok = actual == ctx.expected();
    runner.say(&format!(
        "  - {STEP}\n    {} (from the dispatch's diff_b64): sha256 {actual} ({})\n",
        runner.show(&path),
        if ok {
            "matches"
        } else {
            "does NOT match expected_diff_sha256"
        }
    ))?;
    job.step(STEP, ok);
    Ok(ok.then_some(path))
}

/// What the steps that open `guard` and `build-test` leave: the checkout of the base, the policy,
/// the re-hashed diff.
pub struct Opened {
    pub checkout: PathBuf,
    pub policy: PathBuf,
    pub diff: PathBuf,
}

impl Opened {
    /// `--diff --expected-sha256 --declared-scope --policy --repo --base`: what `guard check`
    /// and `guard apply` are given.
    pub fn diff_flags(&self, invocation: Invocation, ctx: &Context) -> Invocation {
        invocation
            .flag("--diff", &self.diff)
            .flag("--expected-sha256", ctx.expected())
            .flag("--declared-scope", ctx.dispatched.input("declared_scope"))
            .flag("--policy", &self.policy)
            .flag("--repo", &self.checkout)
            .flag("--base", ctx.base())
    }
}

/// `guard inputs`, the trusted checkout, the checkout of the base at `path`, the policy and the
/// diff; `None` when a step failed (the job's later steps do not run).
pub fn open_with_diff(
    runner: &mut Runner<'_>,
    job: &mut Job,
    ctx: &Context,
    inputs: StageSpec,
    verify_first: Option<StageSpec>,
    path: &str,
) -> Result<Option<Opened>, LocalRunError> {
    if !validate_inputs(runner, job, inputs)? {
        return Ok(None);
    }
    if let Some(verify) = verify_first
        && !verify_dispatch(runner, job, ctx, verify)?
    {
        return Ok(None);
    }
    let trusted = check_out(
        runner,
        job,
        ctx,
        "Check out the dispatched commit (trusted)",
        "trusted",
    )?;
    let checkout = check_out(runner, job, ctx, "Check out the base commit", path)?;
    let policy = read_policy(runner, job, &trusted)?;
    Ok(fetch_diff(runner, job, ctx)?.map(|diff| Opened {
        checkout,
        policy,
        diff,
    }))
}

/// `gate verify-dispatch` over the run's inputs, as guard and publish run it: the caller
/// workflow from `GITHUB_WORKFLOW_REF` (`owner/name/.github/workflows/FILE@ref`), the key the
/// verifying environments hold. Whether the step passed.
pub fn verify_dispatch(
    runner: &mut Runner<'_>,
    job: &mut Job,
    ctx: &Context,
    spec: StageSpec,
) -> Result<bool, LocalRunError> {
    let workflow_ref = format!(
        "{}/.github/workflows/{}@{}",
        crate::samples::REPOSITORY,
        crate::samples::WORKFLOW_FILE,
        ctx.dispatched.git_ref
    );
    let mut invocation = Invocation::new(spec)
        .flag("--repository", crate::samples::REPOSITORY)
        .flag("--ref", &ctx.dispatched.git_ref)
        .flag("--task-id", ctx.task_id())
        .flag("--base", ctx.base())
        .flag("--diff-sha256", ctx.expected())
        .flag("--declared-scope", ctx.dispatched.input("declared_scope"))
        .flag("--workflow-ref", workflow_ref)
        .flag("--pr-title", ctx.dispatched.input("pr_title"))
        .flag("--pr-description", ctx.dispatched.input("pr_description"))
        .flag("--revise", ctx.dispatched.input("revise_pull_request"));
    if spec.flags.contains(&"--run-id") {
        // guard's replay check, with the job's own (read-only) token.
        invocation = invocation
            .flag("--run-id", ctx.run_id())
            .flag("--run-attempt", "1")
            .env("AGENT_TEAM_APP_ID", ctx.app_id.to_string())
            .env("GH_TOKEN", &ctx.token)
            .env("GITHUB_API_URL", &ctx.api_url);
    }
    let (end, _) = runner.stage(
        invocation
            .flag("--mac", ctx.dispatched.input("dispatch_mac"))
            .env("AGENT_TEAM_DISPATCH_KEY", &ctx.key),
    )?;
    Ok(job.step(spec.step, end.ok()))
}

pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The rule and `path: message` of each of a verdict's violations.
pub fn verdict_evidence(verdict: &VerdictDoc) -> Vec<Evidence> {
    verdict
        .violations
        .iter()
        .map(|v| Evidence {
            rule: v.rule.to_string(),
            detail: match &v.path {
                Some(path) => format!("{}: {}", path.display(), v.message),
                None => v.message.clone(),
            },
        })
        .collect()
}

/// The rule and `path (change): message (policy: ...)` of each of a tree check's findings.
pub fn tree_evidence(doc: &VerifyTreeDoc) -> Vec<Evidence> {
    doc.findings
        .iter()
        .map(|f| {
            let mut detail = format!("{} ({}): {}", f.path.display(), f.change, f.message);
            if let Some(entry) = &f.policy_entry {
                detail.push_str(&format!(" (policy: {entry})"));
            }
            Evidence {
                rule: f.rule.to_string(),
                detail,
            }
        })
        .collect()
}

pub fn print_tree_doc(
    runner: &mut Runner<'_>,
    doc: Option<&VerifyTreeDoc>,
) -> Result<(), LocalRunError> {
    let Some(doc) = doc else { return Ok(()) };
    let mut text = format!(
        "    {}: {}, {} entries walked, {} finding(s)\n",
        doc.check,
        doc.result,
        doc.entries,
        doc.findings.len()
    );
    for item in tree_evidence(doc) {
        let _ = writeln!(text, "      {}", item.render());
    }
    runner.say(&text)
}

/// `toJSON(needs)` as GitHub renders it: two-space indentation, keys in `needs:` order, each
/// job's `result` and `outputs`.
/// One entry of `needs`: the job, its result, its outputs (name, value).
pub type Need<'a> = (&'a str, &'a JobResult, &'a [(&'a str, &'a str)]);

pub fn needs_json(jobs: &[Need<'_>]) -> String {
    let mut out = String::from("{\n");
    for (i, (job, result, outputs)) in jobs.iter().enumerate() {
        let comma = if i + 1 < jobs.len() { "," } else { "" };
        let outputs = if outputs.is_empty() {
            "{}".to_owned()
        } else {
            let body: Vec<String> = outputs
                .iter()
                .map(|(k, v)| format!("      \"{k}\": \"{v}\""))
                .collect();
            format!("{{\n{}\n    }}", body.join(",\n"))
        };
        let _ = write!(
            out,
            "  \"{job}\": {{\n    \"result\": \"{}\",\n    \"outputs\": {outputs}\n  }}{comma}\n",
            result.as_str()
        );
    }
    out.push('}');
    out
}

/// Shows `toJSON(needs)` and aliases it in command lines as the workflow passes it.
pub fn show_needs(runner: &mut Runner<'_>, needs: &str) -> Result<(), LocalRunError> {
    runner.alias(needs, "\"$NEEDS_JSON\"");
    let mut shown =
        String::from("  - NEEDS_JSON = toJSON(needs), from the jobs' real conclusions:\n");
    for line in needs.lines() {
        let _ = writeln!(shown, "      {line}");
    }
    runner.say(&shown)
}

/// A decide step: `toJSON(needs)` of `needs`, `gate decide --require <the needs' jobs>` with a
/// fresh GITHUB_OUTPUT, the decision document in the job's `decision.json`. Returns the stage's
/// end, whether it passed and its reasons (an exit that disagrees with its output is an error).
pub fn run_decide(
    runner: &mut Runner<'_>,
    job: &Job,
    ctx: &Context,
    spec: StageSpec,
    needs: &[Need<'_>],
) -> Result<(StepEnd, bool, String), LocalRunError> {
    let text = needs_json(needs);
    show_needs(runner, &text)?;
    let github_output = job.dir.join("github_output");
    std::fs::write(&github_output, b"").map_err(io_error("create the GITHUB_OUTPUT file"))?;
    let require: Vec<&str> = needs.iter().map(|(name, _, _)| *name).collect();
    let (end, _) = runner.stage(
        Invocation::new(spec)
            .flag("--needs", &text)
            .flag("--require", require.join(","))
            .flag("--run-id", ctx.run_id())
            .flag("--diff-sha256", ctx.expected())
            .flag("--github-output", &github_output)
            .flag("--format", "json")
            .stdout_to(&job.dir.join("decision.json")),
    )?;
    let (passed, reasons) = decision_output(runner, &end, &github_output)?;
    Ok((end, passed, reasons))
}

/// `gate decide`'s GITHUB_OUTPUT (`gate`, `reasons`), read with the shared reader; an exit that
/// disagrees with the output is an error.
pub fn decision_output(
    runner: &mut Runner<'_>,
    end: &StepEnd,
    github_output: &Path,
) -> Result<(bool, String), LocalRunError> {
    if let StepEnd::Error(what) = end {
        return Err(LocalRunError::Stage(format!("gate decide failed: {what}")));
    }
    let text =
        std::fs::read_to_string(github_output).map_err(io_error("read the GITHUB_OUTPUT file"))?;
    let entries = contract::github_output::parse(&text)
        .map_err(|e| LocalRunError::Stage(format!("gate decide's GITHUB_OUTPUT: {e}")))?;
    let word = contract::github_output::last(&entries, "gate")
        .unwrap_or_default()
        .to_owned();
    let reasons = contract::github_output::last(&entries, "reasons")
        .unwrap_or_default()
        .to_owned();
    let mut shown = format!(
        "    GITHUB_OUTPUT: gate={}\n",
        ::guard::escape::neutralize(&word)
    );
    for line in reasons.lines() {
        let _ = writeln!(
            shown,
            "    GITHUB_OUTPUT: reasons: {}",
            ::guard::escape::neutralize(line)
        );
    }
    runner.say(&shown)?;
    match (word.as_str(), end) {
        ("pass", StepEnd::Exit(0)) => Ok((true, reasons)),
        ("fail", StepEnd::Exit(1)) => Ok((false, reasons)),
        _ => Err(LocalRunError::Stage(format!(
            "gate decide exited with {} but wrote gate={word:?}",
            end.describe()
        ))),
    }
}

/// "Require a pass decision": the step output, checked a second time.
pub fn require_pass(
    runner: &mut Runner<'_>,
    job: &mut Job,
    passed: bool,
) -> Result<bool, LocalRunError> {
    const STEP: &str = "Require a pass decision";
    if passed {
        runner.say(&format!("  - {STEP}: gate is 'pass'\n"))?;
    }
    Ok(job.step(STEP, passed))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use gate::decide::decide;

    #[test]
    fn needs_json_is_what_the_gate_reads() {
        let text = needs_json(&[
            ("guard", &JobResult::Success, &[]),
            ("build-test", &JobResult::Skipped, &[]),
        ]);
        assert_eq!(
            text,
            "{\n  \"guard\": {\n    \"result\": \"success\",\n    \"outputs\": {}\n  },\n  \
             \"build-test\": {\n    \"result\": \"skipped\",\n    \"outputs\": {}\n  }\n}"
        );
        let sha = "a".repeat(64);
        let required = ["guard", "build-test"];
        assert!(!decide(text.as_bytes(), &required, "7", &sha).pass());
        let ok = needs_json(&[
            ("guard", &JobResult::Success, &[]),
            ("build-test", &JobResult::Success, &[]),
        ]);
        assert!(decide(ok.as_bytes(), &required, "7", &sha).pass());
        let with_decide = needs_json(&[
            ("guard", &JobResult::Success, &[]),
            ("build-test", &JobResult::Success, &[]),
            ("decide", &JobResult::Success, &[("gate", "pass")]),
        ]);
        let value: serde_json::Value = serde_json::from_str(&with_decide).unwrap();
        assert_eq!(value["decide"]["outputs"]["gate"], "pass");
        let required = ["guard", "build-test", "decide"];
        assert!(decide(with_decide.as_bytes(), &required, "7", &sha).pass());
        let failed_decide = with_decide.replace(
            "\"decide\": {\n    \"result\": \"success\"",
            "\"decide\": {\n    \"result\": \"failure\"",
        );
        assert!(!decide(failed_decide.as_bytes(), &required, "7", &sha).pass());
    }
}
