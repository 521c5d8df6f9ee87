//! `gate mcp`: an MCP server over stdio (rmcp, the official Rust SDK) for an agent platform, run
//! on the trusted side (see [`gate::mcp`] for the tools' documents).
//!
//! Standard output carries only JSON-RPC; everything else goes to standard error. The server
//! ends when its input ends (exit 0), or with exit 2 when it cannot start (a `--repo` git does
//! not read, a policy that does not load, a dispatcher configuration without its key or token).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use gate::mcp::{
    CheckChange, CheckChangeInput, CheckChangeOutput, LocalClone, ProposeChangeInput,
    ReviseChangeInput, TaskStatusInput, ToolError,
};
use guard::escape::neutralize;

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
}

const INSTRUCTIONS: &str = "Check a change with check_change before proposing it: its verdict is the guard's, from the server's clone, with the rule ids, paths, diff lines and hints of every violation. A rejected change is never dispatched. The server holds the dispatch key and the token; the tools never return them.";

/// The server: the clone, and (later) the dispatcher.
#[derive(Clone)]
struct GateMcp {
    clone: Arc<LocalClone>,
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
        tool::<ProposeChangeInput, CheckChangeOutput>(
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
        tool::<ReviseChangeInput, CheckChangeOutput>(
            "revise_change",
            "Revise an open draft",
            "Not available yet: the revision of an open draft pull request is answered with a tool error; propose a new change instead.",
        ),
        tool::<TaskStatusInput, CheckChangeOutput>(
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name: Cow<'static, str> = request.name.clone();
        let result = match name.as_ref() {
            "check_change" => self.check_change(request).await,
            "revise_change" => tool_error(&ToolError::general(gate::mcp::REVISION_UNAVAILABLE)),
            "propose_change" | "task_status" => Self::without_dispatcher(&name),
            other => {
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
        .serve(rmcp::transport::stdio())
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
    let server = GateMcp {
        clone: Arc::new(clone),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    eprintln!(
        "gate mcp: serving check_change on {} over stdio",
        neutralize(&args.repo.display().to_string())
    );
    match runtime.block_on(serve(server)) {
        Ok(()) => contract::cli::Exit::Pass.code(),
        Err(e) => fail(&e),
    }
}
