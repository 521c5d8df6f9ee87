//! `gate mcp`: an MCP server over stdio (rmcp, the official Rust SDK) for an agent platform, run
//! on the trusted side (see [`gate::mcp`] for the tools' documents).
//!
//! Standard output carries only JSON-RPC; everything else goes to standard error. The server
//! ends when its input ends (exit 0), or with exit 2 when it cannot start (a `--repo` git does
//! not read, a policy that does not load, a dispatcher configuration without its key or token).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use gate::dispatch::{DispatchRequest, Preflight};
use gate::dispatch_mac::{DispatchKey, FullRef, signing_key};
use gate::mcp::{
    CheckChange, CheckChangeInput, CheckChangeOutput, LocalClone, ProposeChange,
    ProposeChangeInput, ProposeChangeOutput, ReviseChange, ReviseChangeInput, TaskStatus,
    TaskStatusInput, TaskStatusOutput, ToolError,
};
use github::{ApiUrl, Client, ClientConfig, ProxySettings, Repository, SystemClock, Token};
use guard::escape::neutralize;
use guard::inputs::{BaseSha, Scope, TaskId};

#[derive(Args)]
pub struct McpArgs {
    /// A clone of the repository the agent works on: check_change's verdict is the guard's on
    /// it (with git's cross-check), at the call's `base` (default HEAD).
    #[arg(long, value_name = "DIR")]
    repo: PathBuf,
    /// The policy (default: DIR/.github/agent-team-policy.yml when it exists, else the embedded
    /// default), read at every call.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The dispatcher configuration: the repository whose workflow propose_change dispatches.
    /// Without it only check_change is served. The token comes from GH_TOKEN or GITHUB_TOKEN
    /// and the key from AGENT_TEAM_DISPATCH_KEY (or AGENT_TEAM_DISPATCH_KEY_FILE), read once at
    /// start; neither reaches a tool's answer.
    #[arg(long, value_name = "OWNER/NAME", requires_all = ["workflow", "git_ref"])]
    repository: Option<String>,
    /// The workflow file to dispatch (the caller, e.g. agent-team-apply.yml).
    #[arg(long, value_name = "FILE", requires = "repository")]
    workflow: Option<String>,
    /// The branch (or full ref) the workflow runs on; the key is bound to it.
    #[arg(long = "ref", value_name = "BRANCH", requires = "repository")]
    git_ref: Option<String>,
    /// The publishing App's numeric id (default: $AGENT_TEAM_APP_ID): a pass is reported only
    /// for its check run and the commit GitHub signed for its bot.
    #[arg(long, value_name = "ID", requires = "repository")]
    app_id: Option<u64>,
    /// The API URL (default: $GITHUB_API_URL, else https://api.github.com).
    #[arg(long, value_name = "URL", requires = "repository")]
    api_url: Option<String>,
    /// The check run the caller's publication posts.
    #[arg(long, value_name = "NAME", default_value = gate::dispatch::CHECK_NAME)]
    check_name: String,
    /// How long one propose_change may take, its wait for the run included.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout: u64,
    /// How long a signed dispatch stays valid.
    #[arg(long, value_name = "SECONDS", default_value_t = gate::dispatch_mac::DEFAULT_LIFETIME_SECONDS, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    lifetime: u64,
}

/// What propose_change dispatches with; the key and the token are the server's alone.
struct Dispatcher {
    repository: Repository,
    workflow: String,
    git_ref: FullRef,
    app_id: u64,
    check_name: String,
    api_url: ApiUrl,
    proxy: ProxySettings,
    token: Token,
    key: DispatchKey,
    timeout: Duration,
    lifetime: Duration,
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Dispatcher {
    /// The configuration from the arguments and the environment; `None` without --repository.
    fn configure(args: &McpArgs) -> Result<Option<Self>, String> {
        let Some(repository) = &args.repository else {
            return Ok(None);
        };
        let (Some(workflow), Some(git_ref)) = (&args.workflow, &args.git_ref) else {
            return Err("--repository needs --workflow and --ref".to_owned());
        };
        let app_id = super::dispatch::app_id(args.app_id)?.ok_or(
            "propose_change needs the publishing App's id (--app-id ID or AGENT_TEAM_APP_ID): a pass is only reported for that App's check run and signed commit",
        )?;
        gate::names::check_check_run_name(&args.check_name)
            .map_err(|e| format!("--check-name: {e}"))?;
        let env_bytes = |name: &str| std::env::var_os(name).map(|v| v.into_encoded_bytes());
        Ok(Some(Self {
            repository: Repository::parse(repository).map_err(|e| e.to_string())?,
            workflow: gate::dispatch::parse_workflow_file(workflow)?,
            git_ref: FullRef::parse(git_ref).map_err(|e| e.to_string())?,
            app_id,
            check_name: args.check_name.clone(),
            api_url: ApiUrl::resolve(args.api_url.as_deref(), &env_text)
                .map_err(|e| e.to_string())?,
            proxy: ProxySettings::from_env(&env_text),
            token: Token::from_env(&env_text).map_err(|e| e.to_string())?,
            key: signing_key(&env_bytes).map_err(|e| e.to_string())?,
            timeout: Duration::from_secs(args.timeout),
            lifetime: Duration::from_secs(args.lifetime),
        }))
    }

    fn client(&self) -> Result<Client, String> {
        let mut config = ClientConfig::new(
            self.api_url.clone(),
            self.token.clone(),
            Arc::new(SystemClock::new()),
        );
        config.proxy = self.proxy.clone();
        config.deadline = Some(self.timeout);
        Client::new(config).map_err(|e| e.to_string())
    }
}

/// A task proposed through this server: running, or its outcome.
#[derive(Clone)]
enum TaskState {
    Running,
    Finished(Box<ProposeChangeOutput>),
}

/// A fresh task id: `mcp-<unix seconds>-<8 random hex digits>`.
fn new_task_id() -> Result<TaskId, String> {
    let nonce = gate::dispatch_mac::random_nonce().map_err(|e| e.to_string())?;
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let random = nonce.as_str().get(..8).unwrap_or("0");
    TaskId::parse(&format!("mcp-{seconds}-{random}")).map_err(|e| e.to_string())
}

const INSTRUCTIONS: &str = "Check a change with check_change before proposing it: its verdict is the guard's, from the server's clone, with the rule ids, paths, diff lines and hints of every violation. A rejected change is never dispatched. The server holds the dispatch key and the token; the tools never return them.";

/// The server: the clone, the dispatcher when configured, and the tasks it proposed.
#[derive(Clone)]
struct GateMcp {
    clone: Arc<LocalClone>,
    dispatcher: Option<Arc<Dispatcher>>,
    tasks: Arc<Mutex<BTreeMap<String, TaskState>>>,
    /// The declared scope of each task proposed here, which its revisions keep.
    scopes: Arc<Mutex<BTreeMap<String, Vec<String>>>>,
}

fn tool<I, O>(name: &'static str, title: &str, description: &'static str) -> Tool
where
    I: schemars::JsonSchema + 'static,
    O: schemars::JsonSchema + 'static,
{
    let input = schema_for_input::<I>().unwrap_or_default();
    Tool::new(name, description, input)
        .with_title(title)
        .with_raw_output_schema(schema_for_output::<O>())
}

fn tools() -> Vec<Tool> {
    vec![
        tool::<CheckChangeInput, CheckChangeOutput>(
            "check_change",
            "Check a change",
            "The guard's verdict on a diff, from the server's clone of the repository, offline and in seconds: accept, or reject with every violation's rule id, path, diff line and a hint. Nothing is applied or run.",
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
        tool::<ProposeChangeInput, ProposeChangeOutput>(
            "propose_change",
            "Propose a change",
            "Check the diff, then sign and dispatch the repository's agent-team-apply workflow and wait for it: the draft pull request's URL, or the reasons it was refused.",
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        ),
        tool::<ReviseChangeInput, ProposeChangeOutput>(
            "revise_change",
            "Revise an open draft",
            "Revise the open draft pull request of a task proposed through this server: the diff is made against the draft's head (fetch agent-team/<task_id> into the clone), checked there, then signed and dispatched as the next round on the same draft; the same result as propose_change.",
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        ),
        tool::<TaskStatusInput, TaskStatusOutput>(
            "task_status",
            "A task's status",
            "The state of a task proposed through this server: running, or its outcome (the draft pull request, or the reasons).",
        )
        .with_annotations(ToolAnnotations::new().read_only(true)),
    ]
}

fn tool_error(error: &ToolError) -> CallToolResult {
    eprintln!("gate mcp: tool error: {}", neutralize(&error.to_string()));
    CallToolResult::error(vec![ContentBlock::text(error.to_string())])
}

fn structured<T: serde::Serialize>(doc: &T, is_error: bool) -> CallToolResult {
    match serde_json::to_value(doc) {
        Ok(value) if is_error => CallToolResult::structured_error(value),
        Ok(value) => CallToolResult::structured(value),
        Err(e) => tool_error(&ToolError::general(format!(
            "cannot encode the result: {e}"
        ))),
    }
}

impl GateMcp {
    async fn check_change(&self, params: CallToolRequestParams) -> CallToolResult {
        let clone = Arc::clone(&self.clone);
        let outcome = tokio::task::spawn_blocking(move || {
            let call = CheckChange::parse(params.arguments, clone.diff_limit())?;
            clone.check(&call)
        })
        .await;
        match outcome {
            Ok(Ok(doc)) => {
                eprintln!("gate mcp: check_change: {}", neutralize(&doc.summary));
                structured(&doc, false)
            }
            Ok(Err(error)) => tool_error(&error),
            Err(e) => tool_error(&ToolError::general(format!("the check failed: {e}"))),
        }
    }

    async fn propose_change(
        &self,
        dispatcher: Arc<Dispatcher>,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let call = match ProposeChange::parse(params.arguments, self.clone.diff_limit()) {
            Ok(call) => call,
            Err(error) => return tool_error(&error),
        };
        let task_id = match new_task_id() {
            Ok(id) => id,
            Err(e) => return tool_error(&ToolError::general(e)),
        };
        if let Ok(mut scopes) = self.scopes.lock() {
            scopes.insert(task_id.as_str().to_owned(), call.scope.clone());
        }
        let clone = Arc::clone(&self.clone);
        let id = task_id.clone();
        let blocking = Arc::clone(&dispatcher);
        self.run_task(
            dispatcher,
            task_id,
            context,
            "propose_change",
            move |lines| propose_blocking(&clone, &blocking, &call, id, lines),
        )
        .await
    }

    /// A revision of the open draft of a task proposed through this server: its declared scope
    /// is that proposal's; the draft and its head are read through the API.
    async fn revise_change(
        &self,
        dispatcher: Arc<Dispatcher>,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let call = match ReviseChange::parse(params.arguments, self.clone.diff_limit()) {
            Ok(call) => call,
            Err(error) => return tool_error(&error),
        };
        let scope = self
            .scopes
            .lock()
            .ok()
            .and_then(|scopes| scopes.get(call.task_id.as_str()).cloned());
        let Some(scope) = scope else {
            return tool_error(&ToolError::field(
                "task_id",
                "no task of this id was proposed through this server: a revision keeps the \
                 proposal's declared scope, which is unknown here",
            ));
        };
        let clone = Arc::clone(&self.clone);
        let blocking = Arc::clone(&dispatcher);
        let task_id = call.task_id.clone();
        self.run_task(
            dispatcher,
            task_id,
            context,
            "revise_change",
            move |lines| revise_blocking(&clone, &blocking, &call, &scope, lines),
        )
        .await
    }

    /// Run a dispatch on a blocking thread, forwarding its progress, and record its outcome as
    /// the task's.
    async fn run_task<F>(
        &self,
        dispatcher: Arc<Dispatcher>,
        task_id: TaskId,
        context: RequestContext<RoleServer>,
        tool: &'static str,
        job: F,
    ) -> CallToolResult
    where
        F: FnOnce(
                &tokio::sync::mpsc::UnboundedSender<String>,
            ) -> Result<ProposeChangeOutput, ToolError>
            + Send
            + 'static,
    {
        let previous =
            self.tasks.lock().ok().and_then(|mut tasks| {
                tasks.insert(task_id.as_str().to_owned(), TaskState::Running)
            });
        // The dispatcher's progress lines, forwarded while the blocking call runs: to stderr,
        // and as progress notifications when the client asked for them.
        let (lines, mut received) = tokio::sync::mpsc::unbounded_channel::<String>();
        let mut work = tokio::task::spawn_blocking(move || job(&lines));
        let progress_token = context.meta.get_progress_token();
        let mut step = 0u32;
        let mut notify = async |message: String| {
            let message = dispatcher.token.redact(&message);
            eprintln!("gate mcp: {tool}: {}", neutralize(&message));
            if let Some(token) = &progress_token {
                step += 1;
                let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                    .with_message(message);
                // A client that has gone does not stop the dispatch's outcome being recorded.
                let _ = context.peer.notify_progress(param).await;
            }
        };
        notify(format!("task {}: checking the change", task_id.as_str())).await;
        let mut heartbeat = tokio::time::interval(Duration::from_secs(15));
        heartbeat.tick().await;
        let outcome = loop {
            tokio::select! {
                done = &mut work => break done,
                Some(line) = received.recv() => notify(line).await,
                _ = heartbeat.tick() => notify(format!("task {}: waiting for the run", task_id.as_str())).await,
            }
        };
        while let Ok(line) = received.try_recv() {
            notify(line).await;
        }
        let result = match outcome {
            Ok(result) => result,
            Err(e) => Err(ToolError::general(format!("the dispatch failed: {e}"))),
        };
        match result {
            Ok(output) => {
                if let Ok(mut tasks) = self.tasks.lock() {
                    tasks.insert(
                        task_id.as_str().to_owned(),
                        TaskState::Finished(Box::new(output.clone())),
                    );
                }
                notify(output.summary.clone()).await;
                if output.decision == "error" {
                    tool_error(&ToolError::general(format!(
                        "task {}: {}; reasons: {}",
                        output.task_id,
                        output.summary,
                        output.reasons.join("; ")
                    )))
                } else {
                    structured(&output, false)
                }
            }
            Err(error) => {
                if let Ok(mut tasks) = self.tasks.lock() {
                    match previous {
                        Some(state) => tasks.insert(task_id.as_str().to_owned(), state),
                        None => tasks.remove(task_id.as_str()),
                    };
                }
                tool_error(&error)
            }
        }
    }

    fn task_status(&self, params: CallToolRequestParams) -> CallToolResult {
        let call = match TaskStatus::parse(params.arguments) {
            Ok(call) => call,
            Err(error) => return tool_error(&error),
        };
        let state = self
            .tasks
            .lock()
            .ok()
            .and_then(|tasks| tasks.get(call.task_id.as_str()).cloned());
        let (state, outcome) = match state {
            None => {
                return tool_error(&ToolError::field(
                    "task_id",
                    "no task of this id was proposed through this server",
                ));
            }
            Some(TaskState::Running) => ("running", None),
            Some(TaskState::Finished(output)) => ("finished", Some(*output)),
        };
        structured(
            &TaskStatusOutput {
                schema: gate::mcp::TASK_STATUS_SCHEMA.to_owned(),
                task_id: call.task_id.as_str().to_owned(),
                state: state.to_owned(),
                outcome,
            },
            false,
        )
    }

    fn without_dispatcher(name: &str) -> CallToolResult {
        tool_error(&ToolError::general(format!(
            "{name} is not available: this server was started without a dispatcher configuration (gate mcp --repository OWNER/NAME --workflow FILE --ref BRANCH --app-id ID, with the token and the dispatch key in its environment); check_change works without one"
        )))
    }
}

impl ServerHandler for GateMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new(
                "gate",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name: Cow<'static, str> = request.name.clone();
        let result = match (name.as_ref(), &self.dispatcher) {
            ("check_change", _) => self.check_change(request).await,
            ("revise_change", Some(dispatcher)) => {
                self.revise_change(Arc::clone(dispatcher), request, context)
                    .await
            }
            ("propose_change", Some(dispatcher)) => {
                self.propose_change(Arc::clone(dispatcher), request, context)
                    .await
            }
            ("task_status", Some(_)) => self.task_status(request),
            ("propose_change" | "revise_change" | "task_status", None) => {
                Self::without_dispatcher(&name)
            }
            (other, _) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool {}: the tools are {}",
                        serde_json::to_string(other).unwrap_or_default(),
                        gate::mcp::TOOLS.join(", ")
                    ),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

async fn serve(server: GateMcp) -> Result<(), String> {
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("the MCP session failed: {e}"))
}

pub fn run(args: McpArgs) -> u8 {
    let fail = |message: &str| {
        eprintln!("gate mcp: {}", neutralize(message));
        contract::cli::Exit::Error.code()
    };
    let clone = match LocalClone::open(&args.repo, args.policy.clone()) {
        Ok(clone) => clone,
        Err(e) => return fail(&e),
    };
    let dispatcher = match Dispatcher::configure(&args) {
        Ok(dispatcher) => dispatcher.map(Arc::new),
        Err(e) => return fail(&e),
    };
    let serving = match &dispatcher {
        Some(d) => format!(
            "check_change, propose_change and task_status (dispatching {} on {})",
            d.workflow,
            d.repository.full_name()
        ),
        None => "check_change (no dispatcher configuration)".to_owned(),
    };
    let server = GateMcp {
        clone: Arc::new(clone),
        dispatcher,
        tasks: Arc::default(),
        scopes: Arc::default(),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    eprintln!(
        "gate mcp: serving {serving} on {} over stdio",
        neutralize(&args.repo.display().to_string())
    );
    match runtime.block_on(serve(server)) {
        Ok(()) => contract::cli::Exit::Pass.code(),
        Err(e) => fail(&e),
    }
}

/// The propose_change call on a blocking thread: resolve the base in the clone, then dispatch as
/// `gate dispatch --preflight DIR --wait` does (the guard's check on the clone first: a
/// rejection is never dispatched).
fn propose_blocking(
    clone: &LocalClone,
    dispatcher: &Dispatcher,
    call: &ProposeChange,
    task_id: TaskId,
    lines: &tokio::sync::mpsc::UnboundedSender<String>,
) -> Result<ProposeChangeOutput, ToolError> {
    let (_, base) = guard::git::GitRepo::open_resolved(&clone.dir, &call.base)
        .map_err(|e| ToolError::field("base", e.to_string()))?;
    let base = BaseSha::parse(&base).map_err(|e| ToolError::field("base", e.to_string()))?;
    let scope = scope_of(&call.scope).map_err(|e| ToolError::field("scope", e))?;
    let client = dispatcher.client().map_err(ToolError::general)?;
    let change = Change {
        task_id,
        base,
        scope,
        diff: &call.diff,
        title: &call.title,
        description: &call.description,
        revision: None,
    };
    Ok(dispatch_change(clone, dispatcher, &client, change, lines))
}

/// What one dispatch of propose_change or revise_change carries.
struct Change<'a> {
    task_id: TaskId,
    base: BaseSha,
    scope: Scope,
    diff: &'a str,
    title: &'a str,
    description: &'a str,
    /// The draft pull request a revision adds its commit to; None for a first round.
    revision: Option<u64>,
}

/// Dispatch a change as `gate dispatch --preflight DIR --wait` does (the guard's check on the
/// clone first: a rejection is never dispatched), the run's lines sent as progress.
fn dispatch_change(
    clone: &LocalClone,
    dispatcher: &Dispatcher,
    client: &Client,
    change: Change<'_>,
    lines: &tokio::sync::mpsc::UnboundedSender<String>,
) -> ProposeChangeOutput {
    let request = DispatchRequest {
        repository: dispatcher.repository.clone(),
        workflow: dispatcher.workflow.clone(),
        git_ref: dispatcher.git_ref.clone(),
        task_id: change.task_id,
        base: change.base,
        scope: change.scope,
        diff: change.diff.as_bytes().to_vec(),
        key: dispatcher.key.clone(),
        wait: true,
        timeout: dispatcher.timeout,
        app_id: Some(dispatcher.app_id),
        check_name: dispatcher.check_name.clone(),
        pr_title: change.title.to_owned(),
        pr_description: change.description.to_owned(),
        lifetime: dispatcher.lifetime,
        nonce: None,
        preflight: Some(Preflight {
            dir: clone.dir.clone(),
            policy: clone.policy.clone(),
        }),
        revision: change.revision,
        dispatcher: None,
    };
    let report = gate::dispatch::run(client, &request, &mut |line: &str| {
        let _ = lines.send(line.to_owned());
    });
    // The document holds what GitHub and the run said; the token is taken out of it all the
    // same, as `gate dispatch` does before printing.
    let mut output = ProposeChangeOutput::new(&report.doc);
    output.reasons = output
        .reasons
        .iter()
        .map(|r| dispatcher.token.redact(r))
        .collect();
    output.summary = dispatcher.token.redact(&output.summary);
    output
}

/// The globs of a scope, or every reason they are not one, joined.
fn scope_of(globs: &[String]) -> Result<Scope, String> {
    Scope::from_globs(globs).map_err(|errors| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The revise_change call on a blocking thread: the task's one open draft from
/// `agent-team/<task_id>` and its head, read through the API; then the dispatch of the revision
/// on that head, as `gate dispatch --revise N --base <head> --preflight DIR --wait` does.
fn revise_blocking(
    clone: &LocalClone,
    dispatcher: &Dispatcher,
    call: &ReviseChange,
    scope: &[String],
    lines: &tokio::sync::mpsc::UnboundedSender<String>,
) -> Result<ProposeChangeOutput, ToolError> {
    let client = dispatcher.client().map_err(ToolError::general)?;
    let branch = call.task_id.publish_branch();
    let full_name = dispatcher.repository.full_name();
    let pulls = client
        .list_open_pulls_from(&dispatcher.repository, &branch)
        .map_err(|e| ToolError::general(dispatcher.token.redact(&e.to_string())))?;
    let drafts: Vec<_> = pulls
        .iter()
        .filter(|p| {
            p.head.name == branch
                && p.draft == Some(true)
                && p.head
                    .repo
                    .as_ref()
                    .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&full_name))
        })
        .collect();
    let [draft] = drafts.as_slice() else {
        return Err(ToolError::field(
            "task_id",
            format!(
                "task {} has {} open draft pull requests from {branch}, not one: only an open \
                 draft is revised (propose a new change instead)",
                call.task_id.as_str(),
                drafts.len()
            ),
        ));
    };
    let head = BaseSha::parse(&draft.head.sha).map_err(|e| ToolError::general(e.to_string()))?;
    let _ = lines.send(format!(
        "revising draft pull request #{} at its head {}",
        draft.number,
        head.as_str()
    ));
    let scope = scope_of(scope).map_err(ToolError::general)?;
    let change = Change {
        task_id: call.task_id.clone(),
        base: head,
        scope,
        diff: &call.diff,
        title: &call.title,
        description: &call.description,
        revision: Some(draft.number),
    };
    Ok(dispatch_change(clone, dispatcher, &client, change, lines))
}
