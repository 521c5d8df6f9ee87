//! `agent-team-apply/doctor/v1`: what `gate doctor` read, one entry per setting in the order of
//! the adoption guide. Strings are exact values (GitHub's own included); a display escapes them
//! for its sink.

use serde::{Deserialize, Serialize};

use crate::doctor::{Report, Status};

pub const SCHEMA: &str = "agent-team-apply/doctor/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorDoc {
    pub schema: String,
    pub repository: String,
    pub app: String,
    pub default_branch: Option<String>,
    /// `ok` (exit 0): every required setting is ok; `incomplete` (exit 1) otherwise; `error`
    /// (exit 2): the doctor could not read the settings (usage, token, network), `error` says why.
    pub result: String,
    pub exit_code: u8,
    pub settings: Vec<SettingDoc>,
    /// Why the doctor stopped, when `result` is `error`; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingDoc {
    /// The setting's stable id (`environment-secrets`, ...).
    pub id: String,
    pub required: bool,
    /// `ok`, `missing`, `cannot-read`, or `no-release` (the caller pins the placeholder).
    pub status: String,
    pub title: String,
    pub detail: String,
    /// The REST operations it is read from.
    pub source: String,
    /// What a token needs to read it.
    pub reads_with: String,
    /// The fix; `null` when ok.
    pub fix: Option<String>,
}

pub fn document(report: &Report) -> DoctorDoc {
    let exit_code = report.exit_code();
    DoctorDoc {
        schema: SCHEMA.to_owned(),
        repository: report.repository.clone(),
        app: report.app.clone(),
        default_branch: report.default_branch.clone(),
        result: if exit_code == 0 { "ok" } else { "incomplete" }.to_owned(),
        exit_code,
        settings: report
            .findings
            .iter()
            .map(|f| SettingDoc {
                id: f.setting.id().to_owned(),
                required: f.setting.required(),
                status: match f.status {
                    Status::Ok => "ok",
                    Status::Missing => "missing",
                    Status::CannotRead => "cannot-read",
                    Status::NoRelease => "no-release",
                }
                .to_owned(),
                title: f.setting.title().to_owned(),
                detail: f.detail.clone(),
                source: f.setting.source().to_owned(),
                reads_with: f.setting.reads_with().to_owned(),
                fix: f.fix().map(str::to_owned),
            })
            .collect(),
        error: None,
    }
}

/// The document of a doctor that stopped before it could read the settings (exit 2): what it
/// was asked for, and why it stopped.
pub fn error_document(repository: &str, app: &str, message: &str) -> DoctorDoc {
    DoctorDoc {
        schema: SCHEMA.to_owned(),
        repository: repository.to_owned(),
        app: app.to_owned(),
        default_branch: None,
        result: "error".to_owned(),
        exit_code: contract::cli::Exit::Error.code(),
        settings: Vec::new(),
        error: Some(message.to_owned()),
    }
}
