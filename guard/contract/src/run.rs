//! The report of `guard run` (`--report FILE`): `agent-team-apply/guard-run/v1`. It is NOT
//! authoritative: build-test uploads it, and nothing privileged may trust it.
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
//!                                "hidden": [], "writable": ["/home/runner/work/r/r/work"],
//!                                "probe": {"view": {"entries": [{"path": "/usr", "source": "host", "...": "..."}]},
//!                                          "...": "the enter stage's full proof"}}},
//!  "env": {"passed": ["HOME", "PATH"], "dropped": ["GITHUB_TOKEN"]},
//!  "output_tail": "...", "output_truncated_bytes": 0,
//!  "after_build": {"result": "fail", "entries": 42,
//!                  "findings": [{"rule": "build-wrote", "path": ".github/workflows/x.yml", "...": "..."}]}}
//! ```
//!
//! `network` is `namespace` (then `proof` and `containment` are present) or `opted-out` (then
//! `reason` is the `--no-isolation-because` text and `unavailable` says why the network
//! namespace failed; `containment` is present too, since every other layer is still proven, and
//! `proof` shows the host's interfaces; a report of an older guard has neither). `after_build` is present when `guard run` checked the tree itself. The output tail is
//! the command's raw bytes as lossy UTF-8, unescaped: renderers escape it for their sink.
//! `containment.probe` is the sandbox's own record of every layer, kept as it was announced: it
//! informs a reader and is not interpreted here.

use serde::{Deserialize, Serialize};

use crate::tree::{FindingDoc, TreeResult};

crate::schema_marker!(
    /// `agent-team-apply/guard-run/v1`.
    RunReportSchema,
    "agent-team-apply/guard-run/v1"
);

pub const SCHEMA: &str = RunReportSchema::ID;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunReportDoc {
    pub schema: RunReportSchema,
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

impl RunReportDoc {
    /// Exit code 0 within the time limit.
    pub fn passed(&self) -> bool {
        self.exit.code == Some(0) && self.exit.signal.is_none() && !self.timed_out
    }

    pub fn parse(json: &str) -> Result<RunReportDoc, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// Pretty JSON with a trailing newline ([`crate::doc_json`]).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AfterBuildDoc {
    pub result: TreeResult,
    pub entries: u64,
    pub findings: Vec<FindingDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitDoc {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// Which layer isolated the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// `guard run`'s own namespaces, proven before the command started.
    Namespace,
    /// `--no-isolation-because`: the network namespace could not be built and an outer layer is
    /// relied on for egress; every other layer is in force.
    OptedOut,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationDoc {
    pub network: Network,
    pub reason: Option<String>,
    pub unavailable: Option<String>,
    pub proof: Option<ProofDoc>,
    pub git_dir_read_only: bool,
    #[serde(default)]
    pub containment: Option<ContainmentDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainmentDoc {
    pub layers: Vec<String>,
    pub hidden: Vec<String>,
    pub writable: Vec<String>,
    /// The sandbox's full record of its layers, as announced (informative).
    pub probe: serde_json::Value,
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
