//! The guard's core: a strict reader of git's canonical diff form, path rules, the policy, and the
//! checks that turn a candidate diff into a [`verdict::Verdict`]; then the build-test stage: the
//! apply ([`apply`]), the tree checks ([`tree`]) and the isolated build ([`sandbox`]). Processes
//! are started only by [`git`] (always the git CLI, with a fixed environment) and [`sandbox`].
#![forbid(unsafe_code)]

// The contract's foundations, where the engine has always found them.
pub use contract::{doc_json, escape, repo_path, rules};

pub mod apply;
pub mod check;
pub mod diff;
pub mod folded;
pub mod git;
pub mod glob;
pub mod hash;
pub mod inputs;
pub mod links;
pub mod output;
pub mod path;
pub mod policy;
pub mod readiness;
pub mod sandbox;
pub mod tree;
pub mod verdict;
