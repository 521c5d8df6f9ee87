//! A panic ends the process with exit code 2 (a documented code), not Rust's 101.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

const CHILD: &str = "CONTRACT_PANIC_HOOK_CHILD";

#[test]
fn a_panic_exits_2_with_one_escaped_line() {
    if std::env::var_os(CHILD).is_some() {
        contract::cli::install_panic_hook("child");
        panic!("boom \u{1b}[31m");
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "a_panic_exits_2_with_one_escaped_line",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("child: internal error at "), "{stderr}");
    assert!(stderr.contains("boom \\u{1b}[31m"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}
