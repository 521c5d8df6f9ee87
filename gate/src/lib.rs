//! The gate's core: a pure pass/fail decision over the authenticated conclusions of the jobs it
//! depends on (`toJSON(needs)`), keyed to a run id and a diff hash, the writers of its results,
//! and the publication plan computed from trusted inputs. No process I/O here except
//! `contract::github_output::StepOutputs::append_to` and [`publish::prepare`], which runs the
//! guard's git cross-check (read-only on the base checkout, a throwaway index for the applied
//! diff), and [`dispatch`], the trusted dispatcher (with [`app_auth`], its own App's token), and [`publication`], which performs and proves a
//! publication plan, and [`doctor`], which reads the repository's settings, all talking to
//! GitHub through the `github` client; and [`init`], which writes an adopting repository's
//! starting files.
#![forbid(unsafe_code)]

pub mod app_auth;
pub mod app_create;
pub mod decide;
pub mod dispatch;
pub mod dispatch_mac;
pub mod doctor;
pub mod init;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod names;
pub mod output;
pub mod publication;
pub mod publish;
pub mod release;
pub mod replay;
pub mod strict_json;

pub use decide::{Decision, JobObservation, JobResult, JobState, Reason, ReasonCode, decide};
