//! `gate app create`: register the publishing App or the dispatcher's from its manifest (see
//! [`gate::app_create`]). Exit 0: the App exists, is the one asked for, and its key is written;
//! 1: GitHub returned another App (its key not written); 2: usage, I/O, network, or no browser
//! came back in time.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use contract::cli::emit;
use gate::app_create::{AppCreateError, CreateRequest, Kind, finish, listen, next_steps};
use github::{ApiUrl, Client, ClientConfig, ProxySettings, SystemClock, Token};
use guard::escape::neutralize;

#[derive(Subcommand)]
pub enum AppCommand {
    /// Register an App from its manifest: a page on 127.0.0.1 posts the manifest to GitHub, the
    /// browser comes back with a code, and the code is exchanged for the App and its key.
    Create(CreateArgs),
}

#[derive(Args)]
pub struct AppArgs {
    #[command(subcommand)]
    command: AppCommand,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Which {
    /// The App `publish` uses (contents, pull requests, checks write).
    Publish,
    /// The dispatcher's App (actions write; checks, pull requests read; contents write).
    Dispatcher,
}

#[derive(Args)]
pub struct CreateArgs {
    #[arg(long, value_enum)]
    kind: Which,
    /// OWNER/NAME: the App is the owner's, named after the repository, to be installed there.
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// Register the App under the organization that owns the repository (default: your
    /// personal account, which must then be the owner).
    #[arg(long)]
    org: bool,
    /// Where the App's private key is written (a new file, mode 0600).
    #[arg(long, value_name = "FILE")]
    key_out: PathBuf,
    /// The loopback port of the page (0: any free port).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    port: u16,
    /// GitHub's web address (a GitHub Enterprise Server's, say).
    #[arg(long, value_name = "URL", default_value = "https://github.com")]
    web_url: String,
    /// The API URL (default: $GITHUB_API_URL, else https://api.github.com).
    #[arg(long, value_name = "URL")]
    api_url: Option<String>,
    /// How long to wait for the browser (GitHub's code is good for an hour).
    #[arg(long, value_name = "SECONDS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

pub fn run_cli(args: AppArgs) -> u8 {
    match args.command {
        AppCommand::Create(args) => create(&args),
    }
}

fn create(args: &CreateArgs) -> u8 {
    let fail = |message: &str, code: contract::cli::Exit| {
        eprintln!("gate app create: {}", neutralize(message));
        code.code()
    };
    let api_url = match ApiUrl::resolve(args.api_url.as_deref(), &env_text) {
        Ok(url) => url,
        Err(e) => return fail(&e.to_string(), contract::cli::Exit::Error),
    };
    // The exchange takes no token; none is sent.
    let mut config = ClientConfig::new(api_url, Token::anonymous(), Arc::new(SystemClock::new()));
    config.proxy = ProxySettings::from_env(&env_text);
    let client = match Client::new(config) {
        Ok(client) => client,
        Err(e) => return fail(&e.to_string(), contract::cli::Exit::Error),
    };
    let request = CreateRequest {
        kind: match args.kind {
            Which::Publish => Kind::Publish,
            Which::Dispatcher => Kind::Dispatcher,
        },
        repository: args.repository.clone(),
        organization: args.org,
        web_url: args.web_url.clone(),
        key_out: args.key_out.clone(),
        port: args.port,
        timeout: Duration::from_secs(args.timeout),
    };
    let listening = match listen(&request) {
        Ok(listening) => listening,
        Err(e) => return fail(&e.to_string(), contract::cli::Exit::Error),
    };
    if let Err(e) = emit(&format!(
        "Open {} in a browser on this machine, check the App's permissions on GitHub's page, and create it.\nWaiting for GitHub to send the browser back (at most {} s)...\n",
        listening.url(),
        args.timeout
    )) {
        return fail(&e, contract::cli::Exit::Error);
    }
    let exchange =
        |code: &str| github::manifests::convert(&client, code).map_err(|e| e.to_string());
    let app = match finish(&request, listening, &exchange) {
        Ok(app) => app,
        Err(e @ AppCreateError::NotOurs { .. }) => {
            return fail(&e.to_string(), contract::cli::Exit::Fail);
        }
        Err(e) => return fail(&e.to_string(), contract::cli::Exit::Error),
    };
    let mut out = format!(
        "Created the App {} (id {}, client id {}), owned by {}; its key is in {} (mode 0600).\nNext:\n",
        neutralize(&app.slug),
        app.id,
        neutralize(&app.client_id),
        neutralize(&app.owner.login),
        neutralize(&args.key_out.display().to_string())
    );
    for (i, step) in next_steps(&request, &app).iter().enumerate() {
        out.push_str(&format!("  {}. {}\n", i + 1, neutralize(step)));
    }
    match emit(&out) {
        Ok(()) => contract::cli::Exit::Pass.code(),
        Err(e) => fail(&e, contract::cli::Exit::Error),
    }
}
