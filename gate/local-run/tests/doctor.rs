//! `local-run --doctor` through the real binary: the simulated GitHub configured as ADOPTING.md's
//! steps leave a repository, the real `gate doctor` run against it; `--doctor-break` leaves one
//! setting unconfigured and the doctor names it and its fix.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Stdio};

#[path = "support/stage_binaries.rs"]
mod support;
use support::stage_binaries;

/// The simulated GitHub's token (github-standin's default): it must reach no output.
const TOKEN: &str = "ghs_standinTOKENstandinTOKEN0123456789";

fn rehearse(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_local-run"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .arg("--binaries")
        .arg(stage_binaries())
        .args(args)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "the token reached the output"
    );
    (out.status.code().unwrap(), stdout, stderr)
}

/// The doctor's status for `id` (its line is `  <status, 12 columns>id[ (advice)]: detail`).
fn status_of<'a>(stdout: &'a str, id: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| {
            let status = l.strip_prefix("  ")?.get(..12)?;
            let named = l.get(14..)?.split([':', ' ']).next()?;
            (named == id).then_some(status.trim())
        })
        .unwrap_or_else(|| panic!("no line for {id} in\n{stdout}"))
}

#[test]
fn the_rehearsal_passes_with_every_setting_ok() {
    let (code, stdout, stderr) = rehearse(&["--doctor"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "running: GH_TOKEN=<the stand-in's token> gate doctor --repository local/greeting"
        ),
        "{stdout}"
    );
    for setting in gate::doctor::Setting::ALL {
        assert_eq!(status_of(&stdout, setting.id()), "ok", "{stdout}");
    }
    assert!(stdout.contains("DOCTOR: ok"), "{stdout}");
}

#[test]
fn breaking_a_required_setting_fails_the_doctor_naming_it_and_its_fix() {
    for (id, detail, fix) in [
        (
            "workflow-token",
            "default_workflow_permissions: write",
            "Workflow permissions: Read repository contents",
        ),
        (
            "environment-secrets",
            "no secret AGENT_TEAM_APP_PRIVATE_KEY",
            "agent-team-publish → Environment secrets",
        ),
    ] {
        let (code, stdout, stderr) = rehearse(&["--doctor", &format!("--doctor-break={id}")]);
        assert_eq!(code, 1, "{id}: {stdout}{stderr}");
        assert!(
            stdout.contains(&format!("except {id} (left unconfigured)")),
            "{stdout}"
        );
        assert_eq!(status_of(&stdout, id), "missing", "{stdout}");
        let line = stdout
            .lines()
            .position(|l| l.contains(&format!(" {id}: ")))
            .unwrap();
        let lines: Vec<&str> = stdout.lines().collect();
        assert!(lines[line].contains(detail), "{stdout}");
        assert!(
            lines[line + 1].trim_start().starts_with("fix: "),
            "{stdout}"
        );
        assert!(lines[line + 1].contains(fix), "{stdout}");
        // Only the broken setting is off.
        for setting in gate::doctor::Setting::ALL {
            if setting.id() != id {
                assert_eq!(status_of(&stdout, setting.id()), "ok", "{id}: {stdout}");
            }
        }
    }
}

/// Every setting `--doctor-break` accepts is reported not ok when broken; the exit code follows
/// whether it is required.
#[test]
fn every_breakable_setting_is_reported_when_broken() {
    let ids = local_run::doctor::breakable_ids();
    assert_eq!(ids.len(), gate::doctor::Setting::ALL.len() - 2);
    for setting in local_run::doctor::breakable() {
        let id = setting.id();
        let (code, stdout, stderr) = rehearse(&["--doctor", &format!("--doctor-break={id}")]);
        assert_ne!(status_of(&stdout, id), "ok", "{id}: {stdout}");
        let want = if setting.required() { 1 } else { 0 };
        assert_eq!(code, want, "{id}: {stdout}{stderr}");
    }
}

#[test]
fn an_unknown_setting_is_a_usage_error_listing_the_valid_ones() {
    let (code, stdout, stderr) = rehearse(&["--doctor", "--doctor-break=no-such-setting"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("no-such-setting"), "{stderr}");
    for id in local_run::doctor::breakable_ids() {
        assert!(stderr.contains(id), "{id} not listed: {stderr}");
    }
    // Without --doctor it is a usage error too.
    let (code, _, stderr) = rehearse(&["--doctor-break=workflow-token"]);
    assert_eq!(code, 2, "{stderr}");
}
