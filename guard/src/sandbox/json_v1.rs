//! The report of `guard run` as its document ([`contract::run`]): the one mapping from the
//! engine's [`RunOutcome`].

pub use contract::run::{
    AfterBuildDoc, ContainmentDoc, EnvDoc, ExitDoc, IsolationDoc, Network, ProofDoc, RouteDoc,
    RunReportDoc, RunReportSchema, SCHEMA,
};
use contract::tree::TreeResult;

use super::probe::Route;
use super::{Isolation, RunOutcome};

/// The document of `outcome`. The containment proof is kept as it was announced; a failure to
/// encode it is an error, never a document without it.
pub fn document(outcome: &RunOutcome) -> Result<RunReportDoc, serde_json::Error> {
    {
        let isolation = match &outcome.isolation {
            Isolation::Namespace {
                probe,
                netns_differs,
                userns_differs,
                git_dir_read_only,
                layers,
                hidden,
                writable,
                network_opt_out,
            } => IsolationDoc {
                network: match network_opt_out {
                    None => Network::Namespace,
                    Some(_) => Network::OptedOut,
                },
                reason: network_opt_out.as_ref().map(|o| o.reason.clone()),
                unavailable: network_opt_out.as_ref().map(|o| o.unavailable.clone()),
                proof: Some(ProofDoc {
                    interfaces: probe.network.interfaces.clone(),
                    routes: probe.network.routes.iter().map(route_doc).collect(),
                    netns_differs: *netns_differs,
                    userns_differs: *userns_differs,
                    loopback_up: probe.network.loopback_up,
                }),
                git_dir_read_only: *git_dir_read_only,
                containment: Some(ContainmentDoc {
                    layers: layers.clone(),
                    hidden: hidden
                        .iter()
                        .map(|p| p.to_string_lossy().into_owned())
                        .collect(),
                    writable: writable
                        .iter()
                        .map(|p| p.to_string_lossy().into_owned())
                        .collect(),
                    probe: serde_json::to_value(&**probe)?,
                }),
            },
        };
        Ok(RunReportDoc {
            schema: RunReportSchema,
            command: outcome
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            exit: ExitDoc {
                code: outcome.exit.code,
                signal: outcome.exit.signal,
            },
            timed_out: outcome.timed_out,
            duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
            isolation,
            env: EnvDoc {
                passed: outcome.env.passed.clone(),
                dropped: outcome.env.dropped.clone(),
            },
            output_tail: String::from_utf8_lossy(&outcome.output_tail).into_owned(),
            output_truncated_bytes: outcome.output_truncated_bytes,
            after_build: outcome.tree.as_ref().map(|t| AfterBuildDoc {
                result: if t.findings.is_empty() {
                    TreeResult::Pass
                } else {
                    TreeResult::Fail
                },
                entries: t.entries,
                findings: t
                    .findings
                    .iter()
                    .map(crate::tree::json_v1::finding_doc)
                    .collect(),
            }),
        })
    }
}

fn route_doc(route: &Route) -> RouteDoc {
    {
        RouteDoc {
            family: route.family.clone(),
            interface: route.interface.clone(),
            destination: route.destination.clone(),
        }
    }
}
