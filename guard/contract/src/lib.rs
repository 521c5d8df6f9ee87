//! The contract between the guard, the gate and the report: the versioned documents they exchange
//! (with enum fields and id types parsed once), the registries of rule and reason ids, the escaping
//! every display sink starts from, the one writer of data documents, and the command-line kit the
//! binaries share. It holds no engine: `report` depends on it without linking the guard.
#![forbid(unsafe_code)]

pub mod cli;
pub mod decision;
pub mod doc_json;
pub mod escape;
pub mod github_output;
#[macro_use]
pub mod registry;
pub mod ids;
pub mod readiness;
pub mod repo_path;
pub mod rules;
pub mod run;
pub mod tree;
pub mod verdict;
