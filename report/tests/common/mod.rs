//! Shared by the integration tests: the hostile verdict and running the real binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use contract::repo_path::RepoPath;
use contract::verdict::ChangeKind;
use contract::verdict::{FileDoc, VerdictDoc, ViolationDoc};

pub const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// Paths and messages an attacker controls, aimed at every sink: a newline followed by a
/// workflow command, a literal `%0A`, property delimiters, table pipes, code spans, HTML,
/// mentions, issue refs, links, emphasis, an ANSI escape and a bidi override.
pub const PATH_NEWLINE: &str = ".github/workflows/x.yml\n::stop-commands::tok";
pub const PATH_DELIMS: &str = "a%0Ab,c:d::e|f`g`<script>alert(1)</script>";
pub const PATH_MARKUP: &str = "@org/team #123 [x](https://evil.example) *b* _i_ ~s~";
pub const PATH_TERMINAL: &str = "red\u{1b}[31m/rtl\u{202e}txt.rs";
pub const OLD_PATH: &str = "old,name:1";

pub fn hostile_verdict() -> VerdictDoc {
    let violation =
        |rule: &str, path: Option<&str>, line: Option<usize>, message: &str| ViolationDoc {
            rule: contract::rules::RuleId::from_name(rule).expect("a registered rule"),
            path: path.map(RepoPath::from),
            old_path: None,
            line,
            message: message.to_string(),
            policy_entry: None,
            hint: String::new(),
            docs: format!("README.md#rule-{rule}"),
        };
    VerdictDoc {
        schema: contract::verdict::VerdictSchema,
        verdict: contract::verdict::VerdictWord::Reject,
        diff_sha256: contract::ids::Sha256Hex::parse(SHA).unwrap(),
        mode: contract::verdict::CheckMode::ParserOnly,
        scope: vec!["src/**".to_string(), "docs/*|x".to_string()],
        files: vec![
            FileDoc {
                status: ChangeKind::Modified,
                old_path: Some(PATH_NEWLINE.into()),
                new_path: Some(PATH_NEWLINE.into()),
                old_mode: Some(contract::verdict::FileMode::REGULAR),
                new_mode: Some(contract::verdict::FileMode::REGULAR),
                line: 1,
            },
            FileDoc {
                status: ChangeKind::Renamed,
                old_path: Some(OLD_PATH.into()),
                new_path: Some(PATH_MARKUP.into()),
                old_mode: Some(contract::verdict::FileMode::REGULAR),
                new_mode: Some(contract::verdict::FileMode::EXECUTABLE),
                line: 9,
            },
        ],
        violations: vec![
            ViolationDoc {
                policy_entry: Some(".github/**".to_string()),
                ..violation(
                    "denied-path",
                    Some(PATH_NEWLINE),
                    Some(1),
                    "path is in the denied surface",
                )
            },
            violation(
                "out-of-scope",
                Some(PATH_DELIMS),
                Some(5),
                "matches no scope glob",
            ),
            ViolationDoc {
                old_path: Some(OLD_PATH.into()),
                ..violation(
                    "mode-change",
                    Some(PATH_MARKUP),
                    Some(9),
                    "mode 100644 -> 100755",
                )
            },
            violation(
                "unsafe-path",
                Some(PATH_TERMINAL),
                Some(12),
                "control character in path",
            ),
            ViolationDoc {
                hint: String::new(),
                docs: "javascript:alert(1)".to_string(),
                ..violation(
                    "limit-exceeded",
                    None,
                    None,
                    "multi\nline\r\nmessage 100% ::warning::x {0} [y](1)",
                )
            },
            violation(
                "hash-mismatch",
                None,
                None,
                "expected sha256 does not match",
            ),
        ],
        protected: vec![],
        unmatched_scope: vec![],
        exclusions: vec![contract::verdict::ExclusionDoc {
            list: contract::verdict::ExclusionList::Deny,
            pattern: "**/*.tf`<img src=x>|".to_string(),
        }],
    }
}

/// An accepting verdict whose protected findings carry the same hostile text as
/// [`hostile_verdict`]'s paths.
pub fn protected_verdict() -> VerdictDoc {
    let mut doc = accept_verdict();
    doc.protected = vec![
        ViolationDoc {
            rule: contract::rules::RuleId::from_name("protected-path").unwrap(),
            path: Some("Cargo.toml".into()),
            old_path: None,
            line: Some(1),
            message: "new path is protected: a human must review this change before it is merged"
                .to_string(),
            policy_entry: Some("protect: **/Cargo.toml".to_string()),
            hint: String::new(),
            docs: "README.md#rule-protected-path".to_string(),
        },
        ViolationDoc {
            rule: contract::rules::RuleId::from_name("protected-path").unwrap(),
            path: Some(PATH_MARKUP.into()),
            old_path: None,
            line: Some(7),
            message: "new path is protected: a human must review <b>this</b> @org".to_string(),
            policy_entry: Some("protect: **/AGENTS.md".to_string()),
            hint: String::new(),
            docs: "javascript:alert(1)".to_string(),
        },
    ];
    doc
}

pub fn accept_verdict() -> VerdictDoc {
    VerdictDoc {
        schema: contract::verdict::VerdictSchema,
        verdict: contract::verdict::VerdictWord::Accept,
        diff_sha256: contract::ids::Sha256Hex::parse(SHA).unwrap(),
        mode: contract::verdict::CheckMode::GitCrossChecked,
        scope: vec!["src/**".to_string()],
        files: vec![FileDoc {
            status: ChangeKind::Added,
            old_path: None,
            new_path: Some("src/new_file.rs".into()),
            old_mode: None,
            new_mode: Some(contract::verdict::FileMode::REGULAR),
            line: 1,
        }],
        violations: vec![],
        protected: vec![],
        unmatched_scope: vec![],
        exclusions: vec![],
    }
}

/// The workspace's `fixtures/` directory.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
        .join(rel)
}

/// Run the real `report` binary with no ambient GitHub/CI environment, feeding `stdin`.
pub fn report(args: &[&str], stdin: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_report"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars_os() {
        let key_str = key.to_string_lossy();
        if key_str.starts_with("GITHUB_") || key_str.starts_with("RUNNER_") || key_str == "CI" {
            cmd.env_remove(&key);
        }
    }
    let mut child = cmd.spawn().expect("spawn report");
    {
        let mut pipe = child.stdin.take().expect("stdin");
        // The binary may exit before reading (usage errors); a broken pipe is fine then.
        let _ = pipe.write_all(stdin.as_bytes());
    }
    child.wait_with_output().expect("wait report")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}
