//! One module per subcommand: parse arguments, call the library, render, return an exit code.

pub mod decide;
pub mod dispatch;
pub mod doctor;
pub mod init;
pub mod publish;
pub mod publish_plan;
pub mod repo_steps;
pub mod sign;
pub mod verify_dispatch;
pub mod verify_environments;
