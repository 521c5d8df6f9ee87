//! `gate doctor`: read the repository's settings (see [`gate::doctor`]) with a read-only token
//! from `GH_TOKEN` or `GITHUB_TOKEN` (never a flag; it reaches no output). Exit 0: every
//! required setting is ok; 1: one is missing or cannot be read; 2: usage or I/O error.

use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};

use contract::cli::emit;
use gate::doctor::{DoctorRequest, Report, Status, run};
use gate::output::doctor_v1::{document, error_document};
use github::{ApiUrl, Client, ClientConfig, ProxySettings, Repository, SystemClock, Token};
use guard::escape::neutralize;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct DoctorArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The publishing App's slug (github.com/apps/<slug>).
    #[arg(long, value_name = "SLUG")]
    app: String,
    /// The publication's environment (the caller's input `environment`).
    #[arg(long, value_name = "NAME", default_value = gate::doctor::ENVIRONMENT)]
    environment: String,
    /// The check run's name (the caller's input `check-run-name`): the required status check.
    #[arg(long, value_name = "NAME", default_value = gate::doctor::CHECK_NAME)]
    check_name: String,
    /// The API URL (default: $GITHUB_API_URL, else https://api.github.com).
    #[arg(long, value_name = "URL")]
    api_url: Option<String>,
    /// The whole command's time limit.
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn client(args: &DoctorArgs) -> Result<(Client, Token), String> {
    let token = Token::from_env(&env_text).map_err(|e| e.to_string())?;
    let api_url = ApiUrl::resolve(args.api_url.as_deref(), &env_text).map_err(|e| e.to_string())?;
    let mut config = ClientConfig::new(api_url, token.clone(), Arc::new(SystemClock::new()));
    config.proxy = ProxySettings::from_env(&env_text);
    config.deadline = Some(Duration::from_secs(args.timeout));
    Ok((Client::new(config).map_err(|e| e.to_string())?, token))
}

/// One line per setting (`ok`, `missing`, `cannot read`), the fix under each that is not ok,
/// and the outcome; every line escaped for the terminal.
pub fn render_text(report: &Report) -> String {
    let mut out = format!("gate doctor: {} (App {})\n", report.repository, report.app);
    for f in &report.findings {
        let kind = if f.setting.required() {
            ""
        } else {
            " (advice)"
        };
        out.push_str(&format!(
            "  {:<11} {}{kind}: {}\n",
            f.status.as_str(),
            f.setting.id(),
            f.detail
        ));
        if f.status == Status::CannotRead {
            out.push_str(&format!(
                "              read with: {}\n",
                f.setting.reads_with()
            ));
        }
        if let Some(fix) = f.fix() {
            out.push_str(&format!("              fix: {fix}\n"));
        }
    }
    let failing = report
        .findings
        .iter()
        .filter(|f| f.setting.required() && f.status != Status::Ok)
        .count();
    if failing == 0 {
        out.push_str("DOCTOR: ok, every required setting is in place (exit 0)\n");
    } else {
        out.push_str(&format!(
            "DOCTOR: {failing} required setting(s) missing or unreadable (exit 1)\n"
        ));
    }
    out.lines()
        .map(|l| format!("{}\n", neutralize(l)))
        .collect()
}

pub fn run_cli(args: DoctorArgs) -> u8 {
    // Every exit has its document: with `--format json`, an error is a JSON document on
    // standard output too (`result: error`), beside the message on standard error.
    let fail = |message: &str| {
        eprintln!("gate doctor: {}", neutralize(message));
        if matches!(args.format, Format::Json) {
            let doc = error_document(&args.repository, &args.app, message);
            if let Ok(json) = serde_json::to_string_pretty(&doc) {
                let _ = emit(&format!("{json}\n"));
            }
        }
        contract::cli::Exit::Error.code()
    };
    let repository = match Repository::parse(&args.repository) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    if let Err(e) = gate::names::check_environment(&args.environment) {
        return fail(&format!("--environment: {e}"));
    }
    if let Err(e) = gate::names::check_check_run_name(&args.check_name) {
        return fail(&format!("--check-name: {e}"));
    }
    let (client, token) = match client(&args) {
        Ok(pair) => pair,
        Err(e) => return fail(&e),
    };
    let request = DoctorRequest {
        repository,
        app: args.app.clone(),
        environment: args.environment.clone(),
        check_name: args.check_name.clone(),
    };
    let report = match run(&client, &request) {
        Ok(report) => report,
        Err(e) => return fail(&token.redact(&e.to_string())),
    };
    let rendered = match args.format {
        Format::Text => render_text(&report),
        Format::Json => match serde_json::to_string_pretty(&document(&report)) {
            Ok(json) => format!("{json}\n"),
            Err(e) => return fail(&format!("cannot serialize the result: {e}")),
        },
    };
    match emit(&token.redact(&rendered)) {
        Ok(()) => report.exit_code(),
        Err(e) => fail(&e),
    }
}
