//! A panic ends a binary with exit code 2 (usage, configuration or I/O error), never 101 or an
//! abort, from any thread, with an escaped message: `guard::cli_args::exit_2_on_panic`, which
//! guard, gate and report install first thing. The test runs itself again as the process that
//! panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

const CHILD: &str = "AGENT_TEAM_PANIC_HOOK_CHILD";

#[test]
fn a_panic_ends_the_process_with_exit_2() {
    if let Ok(how) = std::env::var(CHILD) {
        guard::cli_args::exit_2_on_panic("guard");
        if how == "thread" {
            let worker = std::thread::spawn(|| panic!("boom in a thread \u{1b}[2J"));
            let _ = worker.join();
            // Not reached: the hook ends the process from the worker.
            std::process::exit(0);
        }
        panic!("boom \u{1b}[2J");
    }
    for how in ["main", "thread"] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_panic_ends_the_process_with_exit_2",
                "--nocapture",
            ])
            .env(CHILD, how)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{how}: {stderr}");
        assert!(
            stderr.contains("guard: internal error at "),
            "{how}: {stderr}"
        );
        assert!(stderr.contains("boom"), "{how}: {stderr}");
        // The message is escaped for the terminal: no raw escape sequence.
        assert!(
            !stderr.contains('\u{1b}') && stderr.contains("\\u{1b}[2J"),
            "{how}: {stderr}"
        );
    }
}
