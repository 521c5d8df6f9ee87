//! The versioned machine form of a [`RunOutcome`] (`--report FILE`), kept apart from the internal
//! types. It is NON-authoritative: build-test uploads it, and nothing privileged may trust it.
//!
//! ```json
//! {"schema": "agent-team-apply/guard-run/v1",
//!  "command": ["cargo", "test"],
//!  "exit": {"code": 0, "signal": null},
//!  "timed_out": false, "duration_ms": 1234,
//!  "isolation": {"network": "namespace", "reason": null, "unavailable": null,
//!                "proof": {"interfaces": ["lo"],
//!                          "routes": [{"family": "ipv6", "interface": "lo", "destination": "::1/128"}],
//!                          "netns_differs": true, "userns_differs": true, "loopback_up": true},
//!                "git_dir_read_only": true,
//!                "containment": {"layers": ["environment-scrubbed", "...", "landlock-abi-7-fully-enforced"],
//!                                "hidden": ["/home/runner", "/run", "..."], "writable": ["/home/runner/work/r/r/work"],
//!                                "probe": {"...": "the enter stage's full proof, see proof::ContainmentProbe"}}},
//!  "env": {"passed": ["HOME", "PATH"], "dropped": ["GITHUB_TOKEN"]},
//!  "output_tail": "...", "output_truncated_bytes": 0,
//!  "after_build": {"result": "fail", "entries": 42,
//!                  "findings": [{"rule": "build-wrote", "path": ".github/workflows/x.yml", "...": "..."}]}}
//! ```
//!
//! `network` is `namespace` (then `proof` and `containment` are present) or `opted-out` (then
//! `reason` is the `--no-isolation-because` text and `unavailable` says why the namespaces
//! failed). `after_build` is present when `guard run` checked the tree itself (`--verdict`,
//! `--baseline`); its findings are those of `guard verify-tree --after-build`. The output tail is
//! the command's raw bytes as lossy UTF-8, unescaped: renderers escape it for their sink.

use serde::{Deserialize, Serialize};

use super::probe::Route;
use super::proof::ContainmentProbe;
use super::{Isolation, RunOutcome};
use crate::tree::json_v1::FindingDoc;

pub const SCHEMA: &str = "agent-team-apply/guard-run/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunReportDoc {
    pub schema: String,
    pub command: Vec<String>,
    pub exit: ExitDoc,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub isolation: IsolationDoc,
    pub env: EnvDoc,
    pub output_tail: String,
    pub output_truncated_bytes: u64,
    #[serde(default)]
    pub after_build: Option<AfterBuildDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AfterBuildDoc {
    /// `pass` or `fail`.
    pub result: String,
    pub entries: u64,
    pub findings: Vec<FindingDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainmentDoc {
    pub layers: Vec<String>,
    pub hidden: Vec<String>,
    pub writable: Vec<String>,
    pub probe: ContainmentProbe,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitDoc {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationDoc {
    /// `namespace` or `opted-out`.
    pub network: String,
    pub reason: Option<String>,
    pub unavailable: Option<String>,
    pub proof: Option<ProofDoc>,
    pub git_dir_read_only: bool,
    #[serde(default)]
    pub containment: Option<ContainmentDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofDoc {
    pub interfaces: Vec<String>,
    pub routes: Vec<RouteDoc>,
    pub netns_differs: bool,
    pub userns_differs: bool,
    pub loopback_up: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteDoc {
    pub family: String,
    pub interface: String,
    pub destination: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvDoc {
    pub passed: Vec<String>,
    pub dropped: Vec<String>,
}

impl RunReportDoc {
    pub fn from_outcome(outcome: &RunOutcome) -> RunReportDoc {
        let isolation = match &outcome.isolation {
            Isolation::Namespace {
                probe,
                netns_differs,
                userns_differs,
                git_dir_read_only,
                layers,
                hidden,
                writable,
            } => IsolationDoc {
                network: "namespace".into(),
                reason: None,
                unavailable: None,
                proof: Some(ProofDoc {
                    interfaces: probe.network.interfaces.clone(),
                    routes: probe.network.routes.iter().map(RouteDoc::from).collect(),
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
                    probe: (**probe).clone(),
                }),
            },
            Isolation::OptedOut {
                reason,
                unavailable,
            } => IsolationDoc {
                network: "opted-out".into(),
                reason: Some(reason.clone()),
                unavailable: Some(unavailable.clone()),
                proof: None,
                git_dir_read_only: false,
                containment: None,
            },
        };
        RunReportDoc {
            schema: SCHEMA.into(),
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
                    "pass"
                } else {
                    "fail"
                }
                .into(),
                entries: t.entries,
                findings: t.findings.iter().map(FindingDoc::from_finding).collect(),
            }),
        }
    }
}

impl From<&Route> for RouteDoc {
    fn from(route: &Route) -> RouteDoc {
        RouteDoc {
            family: route.family.clone(),
            interface: route.interface.clone(),
            destination: route.destination.clone(),
        }
    }
}
