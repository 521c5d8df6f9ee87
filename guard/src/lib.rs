//! The guard's core: a strict reader of git's canonical diff form, path rules, the policy, and the
//! checks that turn a candidate diff into a [`verdict::Verdict`]; then the build-test stage: the
//! apply ([`apply`]), the tree checks ([`tree`]) and the isolated build ([`sandbox`]). Processes
//! are started only by [`git`] (always the git CLI, with a fixed environment) and [`sandbox`].
#![forbid(unsafe_code)]

pub mod apply;
pub mod check;
pub mod cli_args;
pub mod diff;
pub mod doc_json;
pub mod escape;
pub mod git;
pub mod hash;
pub mod inputs;
pub mod output;
pub mod path;
pub mod policy;
pub mod readiness;
pub mod repo_path;
pub mod rules;
pub mod sandbox;
pub mod tree;
pub mod verdict;
