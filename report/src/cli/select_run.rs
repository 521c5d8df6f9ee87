use clap::{Args, ValueEnum};

use report::select_run::{self, TaskId, Timestamp};

#[derive(Args)]
pub struct SelectRunArgs {
    /// The task id; the run is named `agent-team-apply <TASK_ID>`.
    #[arg(long, value_name = "ID")]
    task_id: String,
    /// Watermark taken before dispatching (RFC 3339); older runs are not considered.
    #[arg(long, value_name = "RFC3339")]
    since: String,
    /// Output of `gh run list --json databaseId,displayTitle,status,conclusion,createdAt,event,headSha,url`,
    /// or `-` for stdin.
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    runs: String,
    /// Print the run's databaseId, or the run as JSON.
    #[arg(long, value_enum, default_value = "id")]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Id,
    Json,
}

/// Exit 0 with the run, 1 when no run qualifies (never a guess), 2 on malformed input.
pub fn run(args: SelectRunArgs) -> u8 {
    let task = match TaskId::parse(&args.task_id) {
        Ok(task) => task,
        Err(e) => return super::fail(&e.to_string()),
    };
    let since = match Timestamp::parse_rfc3339(&args.since) {
        Ok(since) => since,
        Err(e) => return super::fail(&format!("--since: {e}")),
    };
    let json = match super::read_input(&args.runs) {
        Ok(json) => json,
        Err(e) => return super::fail(&e),
    };
    let runs = match select_run::parse_runs(&json) {
        Ok(runs) => runs,
        Err(e) => return super::fail(&e.to_string()),
    };
    let Some(run) = select_run::select(&runs, &task, since) else {
        eprintln!(
            "report: no run named \"{}\" created at or after {}",
            contract::escape::neutralize(&task.run_name()),
            contract::escape::neutralize(&args.since)
        );
        return contract::cli::Exit::Fail.code();
    };
    let output = match args.format {
        Format::Id => format!("{}\n", run.record.database_id),
        Format::Json => match contract::doc_json::to_string_pretty(&run.record) {
            Ok(json) => json,
            Err(e) => return super::fail(&format!("cannot serialize run: {e}")),
        },
    };
    super::write_stdout(&output)
}
