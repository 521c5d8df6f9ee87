//! Helpers the gate's integration tests share.
#![allow(dead_code)]

#[path = "../../../tests/support/git.rs"]
mod git_support;

/// git with a cleared environment: `PATH` only, no system or global configuration, a fixed
/// identity and date (so commit ids are reproducible), the C locale.
pub use git_support::git as git_command;
