//! One module per subcommand: parse arguments, call the library, render, return an exit code.

pub mod app;
pub mod decide;
pub mod dispatch;
pub mod doctor;
pub mod init;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod publish;
pub mod publish_plan;
pub mod release;
pub mod repo_steps;
pub mod sign;
pub mod verify_dispatch;
pub mod verify_environments;

/// The agent's words for the draft pull request, as the signed `pr_title` and `pr_description`
/// dispatch inputs carry them (each may be empty): `gate verify-dispatch` checks them under the
/// signature, `gate publish-plan` renders them.
#[derive(clap::Args)]
pub struct AgentWordsArgs {
    /// The agent's pull-request title (the signed `pr_title` input).
    #[arg(
        long,
        value_name = "TEXT",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub pr_title: String,
    /// The agent's description (the signed `pr_description` input).
    #[arg(
        long,
        value_name = "TEXT",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub pr_description: String,
}
