//! The tools of `gate mcp`, the MCP server an agent platform runs on the trusted side: their
//! input and output documents (with the JSON schemas the server lists), the reading of a call's
//! arguments (every refusal names its field), and `check_change`, the guard's verdict from the
//! local clone. The server itself (the protocol, stdio, the dispatcher's calls) is in the binary.
//!
//! The agent holds nothing: the dispatch key and the token stay with the server, and a tool's
//! answer carries only the verdict, the run's outcome and the draft's address.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use contract::repo_path::RepoPath;
use contract::verdict::{ChangeKind, ViolationDoc};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;
use serde_json::{Map, Value};

/// The largest diff a tool takes, in bytes (the policy's `limits.diff-bytes` may lower it). A
/// request is one JSON line of at most 16 MiB on stdio (rmcp's limit), and a diff's escapes
/// (`\n`, `\t`, `\"`) can nearly double it there.
pub const MAX_DIFF_BYTES: usize = 8 << 20;
/// The most scope globs a call declares.
pub const MAX_SCOPE_GLOBS: usize = 256;
/// The longest `base` revision taken.
pub const MAX_BASE_CHARS: usize = 255;

/// The tools, in the order they are listed.
pub const TOOLS: [&str; 4] = [
    "check_change",
    "propose_change",
    "revise_change",
    "task_status",
];

/// A call the tool refuses before doing any work: the field at fault (when one is) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub field: Option<&'static str>,
    pub message: String,
}

impl ToolError {
    pub fn field(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field: Some(field),
            message: message.into(),
        }
    }

    pub fn general(message: impl Into<String>) -> Self {
        Self {
            field: None,
            message: message.into(),
        }
    }

    /// The document of the error (the tool result's `structuredContent` when `isError`).
    pub fn document(&self) -> Value {
        serde_json::json!({
            "error": self.to_string(),
            "field": self.field,
        })
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field {
            Some(field) => write!(f, "{field}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

// ---- inputs ---------------------------------------------------------------------------------

/// `check_change`'s arguments.
#[derive(Debug, Clone, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CheckChangeInput {
    /// The candidate change as `git diff` prints it (a unified diff with `diff --git` headers),
    /// made against `base`.
    pub diff: String,
    /// The declared scope: one glob per entry; every path the diff touches must match one.
    /// `*` stays within a path component, `**` crosses them (`src/**`, not `src`).
    pub scope: Vec<String>,
    /// The revision of the server's clone the diff applies to (default `HEAD`).
    pub base: Option<String>,
}

/// `propose_change`'s arguments.
#[derive(Debug, Clone, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProposeChangeInput {
    /// The candidate change as `git diff` prints it, made against `base`.
    pub diff: String,
    /// The declared scope: one glob per entry (as for check_change).
    pub scope: Vec<String>,
    /// The draft pull request's title (the agent's words; at most one line).
    pub title: Option<String>,
    /// The draft pull request's description (the agent's words).
    pub description: Option<String>,
    /// The revision of the server's clone the diff applies to (default `HEAD`); it is resolved
    /// to its full commit id, which is what is dispatched.
    pub base: Option<String>,
}

/// `revise_change`'s arguments: a revision of the open draft of a task proposed through this
/// server (its declared scope is that proposal's).
#[derive(Debug, Clone, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReviseChangeInput {
    /// The task whose open draft pull request is to be revised.
    pub task_id: String,
    /// The revision as `git diff` prints it, made against the draft's head.
    pub diff: String,
    pub title: Option<String>,
    pub description: Option<String>,
}

/// `task_status`'s arguments.
#[derive(Debug, Clone, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TaskStatusInput {
    /// A task id that propose_change returned.
    pub task_id: String,
}

/// A call's arguments, read field by field: an unknown field, a missing one or one of the wrong
/// type is refused with its name.
pub struct Arguments {
    object: Map<String, Value>,
}

impl Arguments {
    /// The arguments of a call to a tool that takes `known` fields.
    pub fn new(arguments: Option<Map<String, Value>>, known: &[&str]) -> Result<Self, ToolError> {
        let object = arguments.unwrap_or_default();
        if let Some(unknown) = object.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ToolError::general(format!(
                "unknown argument {}: the tool takes {}",
                serde_json::to_string(unknown).unwrap_or_default(),
                known.join(", ")
            )));
        }
        Ok(Self { object })
    }

    fn value(&self, field: &'static str) -> Option<&Value> {
        self.object.get(field).filter(|v| !v.is_null())
    }

    pub fn string(&self, field: &'static str) -> Result<Option<&str>, ToolError> {
        match self.value(field) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(ToolError::field(field, "must be a string")),
        }
    }

    pub fn required_string(&self, field: &'static str) -> Result<&str, ToolError> {
        self.string(field)?
            .ok_or_else(|| ToolError::field(field, "is required"))
    }

    pub fn string_list(&self, field: &'static str) -> Result<Vec<String>, ToolError> {
        let not_list = || {
            ToolError::field(
                field,
                "must be a list of glob strings, e.g. [\"src/**\", \"tests/*.rs\"]",
            )
        };
        match self.value(field) {
            None => Err(ToolError::field(field, "is required")),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned).ok_or_else(not_list))
                .collect(),
            Some(_) => Err(not_list()),
        }
    }
}

/// The diff field: text in git's form, within the size limit.
pub fn checked_diff<'a>(
    field: &'static str,
    diff: &'a str,
    limit: u64,
) -> Result<&'a str, ToolError> {
    let limit = limit.min(MAX_DIFF_BYTES as u64);
    if diff.is_empty() {
        return Err(ToolError::field(
            field,
            "is empty: pass the change as `git diff` prints it",
        ));
    }
    if diff.len() as u64 > limit {
        return Err(ToolError::field(
            field,
            format!(
                "is {} bytes, more than the limit of {limit} bytes: split the change",
                diff.len()
            ),
        ));
    }
    let has_header = diff.split('\n').any(|line| line.starts_with("diff --git "));
    if !has_header {
        return Err(ToolError::field(
            field,
            "is not a diff in git's form: no `diff --git` line (make it with `git diff`, without --no-prefix or an external diff tool)",
        ));
    }
    Ok(diff)
}

/// The scope field: a non-empty list of globs, each one the workflow's input can carry.
pub fn checked_scope(field: &'static str, globs: Vec<String>) -> Result<Vec<String>, ToolError> {
    if globs.is_empty() {
        return Err(ToolError::field(
            field,
            "is empty: declare at least one glob the change stays within, e.g. [\"src/**\"]",
        ));
    }
    if globs.len() > MAX_SCOPE_GLOBS {
        return Err(ToolError::field(
            field,
            format!("has more than {MAX_SCOPE_GLOBS} globs"),
        ));
    }
    guard::inputs::Scope::from_globs(&globs)
        .map_err(|errors| {
            ToolError::field(
                field,
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })
        .map(|scope| scope.globs().to_vec())
}

/// The base field: a revision (default `HEAD`) git is asked about after `--end-of-options`.
pub fn checked_base(field: &'static str, base: Option<&str>) -> Result<String, ToolError> {
    let base = base.unwrap_or("HEAD");
    let ok = !base.is_empty()
        && base.chars().count() <= MAX_BASE_CHARS
        && !base.starts_with('-')
        && !base.chars().any(|c| c.is_control() || c.is_whitespace());
    if ok {
        Ok(base.to_owned())
    } else {
        Err(ToolError::field(
            field,
            format!(
                "must be a revision of the server's clone (a commit id or a branch name, at most {MAX_BASE_CHARS} characters, no spaces, not starting with `-`)"
            ),
        ))
    }
}

/// A checked `check_change` call.
#[derive(Debug, Clone)]
pub struct CheckChange {
    pub diff: String,
    pub scope: Vec<String>,
    pub base: String,
}

impl CheckChange {
    pub const FIELDS: [&'static str; 3] = ["diff", "scope", "base"];

    pub fn parse(
        arguments: Option<Map<String, Value>>,
        diff_limit: u64,
    ) -> Result<Self, ToolError> {
        let args = Arguments::new(arguments, &Self::FIELDS)?;
        let diff = checked_diff("diff", args.required_string("diff")?, diff_limit)?.to_owned();
        let scope = checked_scope("scope", args.string_list("scope")?)?;
        let base = checked_base("base", args.string("base")?)?;
        Ok(Self { diff, scope, base })
    }
}

// ---- check_change -----------------------------------------------------------------------------

/// The clone `check_change` reads, and the policy it checks with.
#[derive(Debug, Clone)]
pub struct LocalClone {
    pub dir: PathBuf,
    /// `--policy`; without it the clone's `.github/agent-team-policy.yml` when it exists (read at
    /// every call, as the clone moves), else the embedded default.
    pub policy: Option<PathBuf>,
}

impl LocalClone {
    /// The clone, after git has confirmed it is one.
    pub fn open(dir: &Path, policy: Option<PathBuf>) -> Result<Self, String> {
        guard::git::GitRepo::open(dir).map_err(|e| e.to_string())?;
        let clone = Self {
            dir: dir.to_path_buf(),
            policy,
        };
        clone.load_policy()?;
        Ok(clone)
    }

    pub fn load_policy(&self) -> Result<guard::policy::Policy, String> {
        let default = self.dir.join(".github/agent-team-policy.yml");
        let path = match &self.policy {
            Some(path) => Some(path.clone()),
            None => default.is_file().then_some(default),
        };
        guard::policy::Policy::load(path.as_deref())
    }

    /// The policy's diff limit (the tool's own limit when the policy cannot be read: the call
    /// then fails on the policy).
    pub fn diff_limit(&self) -> u64 {
        self.load_policy()
            .map(|p| p.limits.max_diff_bytes)
            .unwrap_or(MAX_DIFF_BYTES as u64)
    }

    /// The guard's verdict on the call's diff at its base, with git's cross-check: exactly the
    /// check of `guard check --repo DIR --base REV` (and of `gate dispatch --preflight`).
    pub fn check(&self, call: &CheckChange) -> Result<CheckChangeOutput, ToolError> {
        let policy = self
            .load_policy()
            .map_err(|e| ToolError::general(format!("the server's policy: {e}")))?;
        let sha256 = guard::hash::sha256_hex(call.diff.as_bytes());
        let verdict = guard::check::check(&guard::check::CheckRequest {
            diff: call.diff.as_bytes(),
            expected_sha256: &sha256,
            scope: &call.scope,
            policy: &policy,
            repo: Some(guard::check::RepoBase {
                dir: &self.dir,
                base: &call.base,
            }),
        })
        .map_err(|e| match e {
            guard::check::CheckError::Scope(e) => ToolError::field("scope", e.to_string()),
            guard::check::CheckError::Git(e @ guard::git::GitError::UnknownBase { .. }) => {
                ToolError::field("base", e.to_string())
            }
            e => ToolError::general(format!("no verdict could be reached: {e}")),
        })?;
        Ok(CheckChangeOutput::new(
            &guard::output::json_v1::document(&verdict),
            &call.base,
        ))
    }
}

// ---- outputs ----------------------------------------------------------------------------------

/// The schema of `check_change`'s result.
pub const CHECK_CHANGE_SCHEMA: &str = "agent-team-apply/mcp-check-change/v1";

/// A path of the repository: its text, or `{"bytes_hex": ...}` when it is not UTF-8 (exact, as
/// in the guard's verdict).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct PathDoc(pub RepoPath);

impl JsonSchema for PathDoc {
    fn schema_name() -> Cow<'static, str> {
        "RepoPath".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A path of the repository: its text, or its bytes in hex when they are not UTF-8.",
            "oneOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "properties": { "bytes_hex": { "type": "string" } },
                    "required": ["bytes_hex"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// Accept or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictWord {
    Accept,
    Reject,
}

/// One file the diff patches.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileOut {
    /// added, deleted, modified, renamed or copied.
    pub status: String,
    pub old_path: Option<PathDoc>,
    pub new_path: Option<PathDoc>,
    /// The 1-based line of the file's `diff --git` header in the diff.
    pub line: usize,
}

/// One finding of the guard.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FindingOut {
    /// The rule's stable id (`out-of-scope`, `denied-path`, ...).
    pub rule: String,
    /// The path at fault (the new name of a rename).
    pub path: Option<PathDoc>,
    /// The old name of a rename or copy, when it is the one at fault too.
    pub old_path: Option<PathDoc>,
    /// The 1-based line of the diff the finding comes from.
    pub line: Option<usize>,
    /// What is wrong, for this diff.
    pub message: String,
    /// What to change so that it passes: the scope entry that would admit this path, that a
    /// denied path cannot be admitted, or the rule's general remedy.
    pub hint: String,
    /// What the rule checks, in full.
    pub rule_text: String,
    /// The policy entry that decided.
    pub policy_entry: Option<String>,
    /// The rule's documentation (an anchor of the project's README).
    pub docs: String,
}

/// `check_change`'s result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckChangeOutput {
    /// `agent-team-apply/mcp-check-change/v1`.
    pub schema: String,
    pub verdict: VerdictWord,
    /// The SHA-256 of the diff's bytes, as the workflow will check it.
    pub diff_sha256: String,
    /// The revision checked against, as given.
    pub base: String,
    /// How far the check went: `git-cross-checked` (the guard's reading agreed with git's
    /// applying the diff to the base), or `stopped-before-git` (rejected before).
    pub mode: String,
    pub files: Vec<FileOut>,
    /// Why the diff is rejected; empty when accepted.
    pub violations: Vec<FindingOut>,
    /// Protected paths the diff touches: not a rejection, but a human reviews them.
    pub protected: Vec<FindingOut>,
    /// One line for the agent.
    pub summary: String,
}

fn kind_name(kind: ChangeKind) -> String {
    match kind {
        ChangeKind::Added => "added",
        ChangeKind::Deleted => "deleted",
        ChangeKind::Modified => "modified",
        ChangeKind::Renamed => "renamed",
        ChangeKind::Copied => "copied",
    }
    .to_owned()
}

impl FindingOut {
    pub fn new(v: &ViolationDoc) -> Self {
        Self {
            rule: v.rule.name().to_owned(),
            path: v.path.clone().map(PathDoc),
            old_path: v.old_path.clone().map(PathDoc),
            line: v.line,
            message: v.message.clone(),
            hint: v.hint_or_remedy().to_owned(),
            rule_text: v.rule.description().to_owned(),
            policy_entry: v.policy_entry.clone(),
            docs: v.docs.clone(),
        }
    }
}

impl CheckChangeOutput {
    pub fn new(doc: &contract::verdict::VerdictDoc, base: &str) -> Self {
        let accepted = doc.accepted();
        let violations: Vec<FindingOut> = doc.violations.iter().map(FindingOut::new).collect();
        let summary = if accepted {
            format!(
                "accepted: {} file(s) patched, all within the scope; {} protected path(s) for a human's review",
                doc.files.len(),
                doc.protected.len()
            )
        } else {
            let mut rules: Vec<&str> = Vec::new();
            for v in &violations {
                if !rules.contains(&v.rule.as_str()) {
                    rules.push(&v.rule);
                }
            }
            format!(
                "rejected: {} violation(s) ({}); fix the diff and check again",
                violations.len(),
                rules.join(", ")
            )
        };
        Self {
            schema: CHECK_CHANGE_SCHEMA.to_owned(),
            verdict: if accepted {
                VerdictWord::Accept
            } else {
                VerdictWord::Reject
            },
            diff_sha256: doc.diff_sha256.to_string(),
            base: base.to_owned(),
            mode: doc.mode.name().to_owned(),
            files: doc
                .files
                .iter()
                .map(|f| FileOut {
                    status: kind_name(f.status),
                    old_path: f.old_path.clone().map(PathDoc),
                    new_path: f.new_path.clone().map(PathDoc),
                    line: f.line,
                })
                .collect(),
            violations,
            protected: doc.protected.iter().map(FindingOut::new).collect(),
            summary,
        }
    }
}

// ---- propose_change and task_status -----------------------------------------------------------

/// A checked `propose_change` call (the base is resolved in the clone by the server).
#[derive(Debug, Clone)]
pub struct ProposeChange {
    pub diff: String,
    pub scope: Vec<String>,
    pub title: String,
    pub description: String,
    pub base: String,
}

impl ProposeChange {
    pub const FIELDS: [&'static str; 5] = ["diff", "scope", "title", "description", "base"];

    pub fn parse(
        arguments: Option<Map<String, Value>>,
        diff_limit: u64,
    ) -> Result<Self, ToolError> {
        let args = Arguments::new(arguments, &Self::FIELDS)?;
        let diff = checked_diff("diff", args.required_string("diff")?, diff_limit)?.to_owned();
        let scope = checked_scope("scope", args.string_list("scope")?)?;
        let (title, description) = checked_pr_text(&args)?;
        let base = checked_base("base", args.string("base")?)?;
        Ok(Self {
            diff,
            scope,
            title,
            description,
            base,
        })
    }
}

/// A checked `task_status` call.
#[derive(Debug, Clone)]
pub struct TaskStatus {
    pub task_id: guard::inputs::TaskId,
}

impl TaskStatus {
    pub const FIELDS: [&'static str; 1] = ["task_id"];

    pub fn parse(arguments: Option<Map<String, Value>>) -> Result<Self, ToolError> {
        let args = Arguments::new(arguments, &Self::FIELDS)?;
        let task_id = guard::inputs::TaskId::parse(args.required_string("task_id")?)
            .map_err(|e| ToolError::field("task_id", e.to_string()))?;
        Ok(Self { task_id })
    }
}

/// `revise_change`'s fields.
pub const REVISE_CHANGE_FIELDS: [&str; 4] = ["task_id", "diff", "title", "description"];

/// A checked `revise_change` call: the task whose open draft is revised, the diff against the
/// draft's head, the agent's words for this round.
#[derive(Debug, Clone)]
pub struct ReviseChange {
    pub task_id: guard::inputs::TaskId,
    pub diff: String,
    pub title: String,
    pub description: String,
}

/// The optional `title` and `description` of a change, checked as the workflow checks them.
fn checked_pr_text(args: &Arguments) -> Result<(String, String), ToolError> {
    let title = args.string("title")?.unwrap_or_default().to_owned();
    guard::inputs::check_pr_title(&title).map_err(|e| ToolError::field("title", e.to_string()))?;
    let description = args.string("description")?.unwrap_or_default().to_owned();
    guard::inputs::check_pr_description(&description)
        .map_err(|e| ToolError::field("description", e.to_string()))?;
    Ok((title, description))
}

impl ReviseChange {
    pub fn parse(
        arguments: Option<Map<String, Value>>,
        diff_limit: u64,
    ) -> Result<Self, ToolError> {
        let args = Arguments::new(arguments, &REVISE_CHANGE_FIELDS)?;
        let task_id = guard::inputs::TaskId::parse(args.required_string("task_id")?)
            .map_err(|e| ToolError::field("task_id", e.to_string()))?;
        let diff = checked_diff("diff", args.required_string("diff")?, diff_limit)?.to_owned();
        let (title, description) = checked_pr_text(&args)?;
        Ok(Self {
            task_id,
            diff,
            title,
            description,
        })
    }
}

/// The schema of `propose_change`'s result (and of a finished task's outcome).
pub const PROPOSE_CHANGE_SCHEMA: &str = "agent-team-apply/mcp-propose-change/v1";
/// The schema of `task_status`'s result.
pub const TASK_STATUS_SCHEMA: &str = "agent-team-apply/mcp-task-status/v1";

/// The draft pull request a passed run published.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DraftOut {
    pub number: u64,
    pub url: String,
    pub head_sha: String,
}

/// `propose_change`'s result: the dispatcher's authenticated outcome.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProposeChangeOutput {
    /// `agent-team-apply/mcp-propose-change/v1`.
    pub schema: String,
    /// The task the change was dispatched as (for task_status).
    pub task_id: String,
    /// `pass` (a draft pull request was published and proven), `fail` (refused: see
    /// `violations` and `reasons`), `error` (no outcome could be established), or `running`.
    pub decision: String,
    /// The full commit the change was dispatched against.
    pub base_sha: String,
    pub diff_sha256: String,
    /// The workflow run.
    pub run_url: Option<String>,
    /// The draft pull request (on `pass`).
    pub draft: Option<DraftOut>,
    /// The failed job and step (on `fail`).
    pub failed_job: Option<String>,
    pub failed_step: Option<String>,
    /// The guard's findings (from the preflight on the server's clone, or the run's guard job).
    pub violations: Vec<FindingOut>,
    /// When build-test failed: the findings of the build-test job's report, NOT authoritative
    /// (written after the diff's code ran there; the decision does not read them), or why they
    /// are unavailable.
    pub build_findings_non_authoritative: Option<BuildFindingsOut>,
    /// Why, in words.
    pub reasons: Vec<String>,
    /// One line for the agent.
    pub summary: String,
}

/// The build-test report's findings (`build_findings_non_authoritative` of the dispatch result).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BuildFindingsOut {
    /// Always `false`.
    pub authoritative: bool,
    pub note: String,
    /// `available`, or `unavailable` with the `reason`.
    pub status: String,
    pub reason: Option<String>,
    pub findings: Vec<BuildFindingOut>,
    /// Findings beyond `findings`.
    pub left_out: u64,
}

/// One finding of the build's tree checks.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BuildFindingOut {
    /// `after-apply` or `after-build`.
    pub check: String,
    /// `tree-mismatch` or `build-wrote`.
    pub rule: String,
    pub path: PathDoc,
    pub message: String,
}

impl ProposeChangeOutput {
    pub fn new(doc: &crate::output::dispatch_result_v2::DispatchResultDoc) -> Self {
        let draft = doc.pull_request.as_ref().map(|p| DraftOut {
            number: p.number,
            url: p.html_url.clone(),
            head_sha: p.head_sha.clone(),
        });
        let violations: Vec<FindingOut> = doc
            .guard_verdict
            .as_ref()
            .map(|v| {
                v.violations
                    .iter()
                    .map(|r| FindingOut {
                        rule: r.rule.clone(),
                        path: r.path.clone().map(PathDoc),
                        old_path: r.old_path.clone().map(PathDoc),
                        line: r.line,
                        message: r.message.clone(),
                        hint: r.hint.clone(),
                        rule_text: r.rule_text.clone(),
                        policy_entry: r.policy_entry.clone(),
                        docs: r.docs.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let summary = match (doc.decision.as_str(), &draft) {
            ("pass", Some(draft)) => {
                format!("passed: draft pull request #{} {}", draft.number, draft.url)
            }
            ("fail", _) if !violations.is_empty() => format!(
                "refused by the guard: {} violation(s); fix the diff and propose it again",
                violations.len()
            ),
            ("fail", _) => match &doc.failed {
                Some(failed) => format!("the gate failed in job {}", failed.job),
                None => "the gate failed".to_owned(),
            },
            ("dispatched", _) => "dispatched; not followed".to_owned(),
            (_, _) => format!(
                "no outcome: {}",
                doc.reasons.last().map(String::as_str).unwrap_or("error")
            ),
        };
        Self {
            schema: PROPOSE_CHANGE_SCHEMA.to_owned(),
            task_id: doc.task_id.clone(),
            decision: doc.decision.clone(),
            base_sha: doc.base_sha.clone(),
            diff_sha256: doc.diff_sha256.clone(),
            run_url: doc.run.as_ref().map(|r| r.html_url.clone()),
            draft,
            failed_job: doc.failed.as_ref().map(|f| f.job.clone()),
            failed_step: doc.failed.as_ref().and_then(|f| f.step.clone()),
            violations,
            build_findings_non_authoritative: doc.build_findings_non_authoritative.as_ref().map(
                |b| BuildFindingsOut {
                    authoritative: b.authoritative,
                    note: b.note.clone(),
                    status: b.status.clone(),
                    reason: b.reason.clone(),
                    findings: b
                        .findings
                        .iter()
                        .map(|f| BuildFindingOut {
                            check: f.check.clone(),
                            rule: f.rule.clone(),
                            path: PathDoc(f.path.clone()),
                            message: f.message.clone(),
                        })
                        .collect(),
                    left_out: b.left_out,
                },
            ),
            reasons: doc.reasons.clone(),
            summary,
        }
    }
}

/// `task_status`'s result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskStatusOutput {
    /// `agent-team-apply/mcp-task-status/v1`.
    pub schema: String,
    pub task_id: String,
    /// `running` (dispatched, waiting for the run) or `finished`.
    pub state: String,
    /// The outcome, once finished.
    pub outcome: Option<ProposeChangeOutput>,
}
