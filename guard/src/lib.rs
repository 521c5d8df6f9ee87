//! The guard's core: a strict reader of git's canonical diff form, path rules, the policy, and the
//! checks that turn a candidate diff into a [`verdict::Verdict`]. No process I/O here except the
//! explicit git cross-check in [`git`].
#![forbid(unsafe_code)]

pub mod apply;
pub mod check;
pub mod diff;
pub mod escape;
pub mod git;
pub mod hash;
pub mod output;
pub mod path;
pub mod policy;
pub mod rules;
pub mod sandbox;
pub mod tree;
pub mod verdict;
