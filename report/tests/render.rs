//! `report render` through the real binary, on a verdict whose paths and messages attack every
//! sink. Markdown and annotations are compared in full; SARIF is checked structurally.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{code, hostile_verdict, report, stderr, stdout};
use serde_json::Value;

fn render(format: &str, verdict_json: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["render", "--verdict", "-", "--format", format];
    args.extend_from_slice(extra);
    report(&args, verdict_json)
}

const HOSTILE_MARKDOWN: &str = r#"## Guard verdict: reject

- **Verdict:** reject
- **Diff SHA-256:** `0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef`
- **Mode:** parser-only
- **Scope:** `src/**`, `docs/*|x`
- **Policy exclusions:** deny ``**/*.tf`<img src=x>|`` (default entries the repository's policy removed)

### Files (2)

| Status | Path | Mode | Diff line |
|---|---|---|---|
| M | `.github/workflows/x.yml\u{a}::stop-commands::tok` | `100644` | 1 |
| R | `old,name:1` → `@org/team #123 [x](https://evil.example) *b* _i_ ~s~` | `100644` → `100755` | 9 |

### Violations (6)

| Rule | Path | Diff line | Message | Policy entry |
|---|---|---|---|---|
| `denied-path` | `.github/workflows/x.yml\u{a}::stop-commands::tok` | 1 | path is in the denied surface | `.github/**` |
| `out-of-scope` | ``a%0Ab,c:d::e\|f`g`<script>alert(1)</script>`` | 5 | matches no scope glob |  |
| `mode-change` | `old,name:1` → `@org/team #123 [x](https://evil.example) *b* _i_ ~s~` | 9 | mode 100644 -\> 100755 |  |
| `unsafe-path` | `red\u{1b}[31m/rtl\u{202e}txt.rs` | 12 | control character in path |  |
| `limit-exceeded` |  |  | multi<br>line\\u{d}<br>message 100% ::warning::x {0} \[y\](1) |  |
| `hash-mismatch` |  |  | expected sha256 does not match |  |
"#;

/// `md` without its code spans: a run of N backticks opens one, the next run of exactly N closes
/// it (CommonMark's rule).
fn outside_code_spans(md: &str) -> String {
    let chars: Vec<char> = md.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|&&c| c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut closed = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    closed = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => i = end,
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

#[test]
fn markdown_of_hostile_verdict() {
    let out = render("markdown", &hostile_verdict().to_json().unwrap(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let md = stdout(&out);
    assert_eq!(md, HOSTILE_MARKDOWN);
    // The forged `docs` field never becomes a link target.
    assert!(!md.contains("javascript"));
    // Every table row keeps exactly its column count: no injected pipe survived (`\|` is a pipe
    // inside a cell).
    for line in md.lines().filter(|l| l.starts_with("| ")) {
        let cells = line.replace("\\|", "").matches('|').count();
        assert!(cells == 5 || cells == 6, "{line}");
    }
    // Outside code spans (where GitHub resolves nothing) no mention, link or tag survives.
    let outside = outside_code_spans(&md);
    for raw in ["@org", "](https", "<script", "#123"] {
        assert!(!outside.contains(raw), "{raw} outside a code span:\n{md}");
    }
}

#[test]
fn markdown_links_rules_under_a_docs_base() {
    let base = "https://github.com/o/r/blob/0123456789abcdef0123456789abcdef01234567/";
    let out = render(
        "markdown",
        &hostile_verdict().to_json().unwrap(),
        &["--docs-base-url", base],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!(
        "| [`denied-path`]({base}README.md#rule-denied-path) |"
    )));
    // Without a base no rule id links anywhere: a relative link is broken in a step summary.
    let plain = stdout(&render(
        "markdown",
        &hostile_verdict().to_json().unwrap(),
        &[],
    ));
    assert!(!plain.contains("README.md#"), "{plain}");
}

#[test]
fn markdown_of_accepting_verdict() {
    let out = render(
        "markdown",
        &common::accept_verdict().to_json().unwrap(),
        &[],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "## Guard verdict: accept\n\n- **Verdict:** accept\n- **Diff SHA-256:** `0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef`\n\
         - **Mode:** git-cross-checked\n- **Scope:** `src/**`\n\n### Files (1)\n\n| Status | Path | Mode | Diff line |\n|---|---|---|---|\n\
         | A | `src/new_file.rs` | `100644` | 1 |\n\n### Violations (0)\n\nNo violations.\n"
    );
}

const HOSTILE_ANNOTATIONS: &str = "\
::error file=candidate.diff,line=1,title=guard%3A denied-path%3A .github/workflows/x.yml\\u{a}%3A%3Astop-commands%3A%3Atok::path is in the denied surface (diff line 1) (policy: .github/**)
::error file=candidate.diff,line=5,title=guard%3A out-of-scope%3A a%250Ab%2Cc%3Ad%3A%3Ae|f`g`<script>alert(1)</script>::matches no scope glob (diff line 5)
::error file=candidate.diff,line=9,title=guard%3A mode-change%3A @org/team #123 [x](https%3A//evil.example) *b* _i_ ~s~::mode 100644 -> 100755 (old path: old,name:1) (diff line 9)
::error file=candidate.diff,line=12,title=guard%3A unsafe-path%3A red\\u{1b}[31m/rtl\\u{202e}txt.rs::control character in path (diff line 12)
::error title=guard%3A limit-exceeded::multi%0Aline\\u{d}%0Amessage 100%25 ::warning::x {0} [y](1)
::error title=guard%3A hash-mismatch::expected sha256 does not match
";

#[test]
fn annotations_of_hostile_verdict() {
    let out = render("annotations", &hostile_verdict().to_json().unwrap(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text, HOSTILE_ANNOTATIONS);
    // One command per violation, each on its own line, each written by us.
    assert_eq!(text.lines().count(), 6);
    assert!(text.lines().all(|l| l.starts_with("::error ")));
    assert!(!text.contains('\r') && !text.contains('\u{1b}') && !text.contains('\u{202e}'));
}

#[test]
fn annotations_of_accepting_verdict_are_empty() {
    let out = render(
        "annotations",
        &common::accept_verdict().to_json().unwrap(),
        &[],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn sarif_of_hostile_verdict() {
    let base = "https://github.com/o/r/blob/main/";
    let out = render(
        "sarif",
        &hostile_verdict().to_json().unwrap(),
        &["--docs-base-url", base],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let log: Value = serde_json::from_str(&stdout(&out)).unwrap();

    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["$schema"], report::sarif::SARIF_SCHEMA);
    let run = &log["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "agent-team-apply guard");
    assert_eq!(driver["informationUri"], format!("{base}README.md"));

    // The rule list is the registry, in order, with absolute help URIs.
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), contract::rules::RuleId::ALL.len());
    for (rule, registered) in rules.iter().zip(contract::rules::RuleId::ALL) {
        assert_eq!(rule["id"], registered.name());
        assert_eq!(rule["shortDescription"]["text"], registered.description());
        assert_eq!(
            rule["helpUri"],
            format!("{base}README.md#rule-{}", registered.name())
        );
    }

    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    let uri = |i: usize| {
        results[i]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
    };
    assert_eq!(
        uri(0),
        ".github/workflows/x.yml%0A%3A%3Astop-commands%3A%3Atok"
    );
    assert_eq!(
        uri(1),
        "a%250Ab%2Cc%3Ad%3A%3Ae%7Cf%60g%60%3Cscript%3Ealert%281%29%3C/script%3E"
    );
    assert_eq!(
        uri(2),
        "%40org/team%20%23123%20%5Bx%5D%28https%3A//evil.example%29%20%2Ab%2A%20_i_%20~s~"
    );
    assert_eq!(uri(3), "red%1B%5B31m/rtl%E2%80%AEtxt.rs");
    for result in &results[..4] {
        let location = &result["locations"][0]["physicalLocation"];
        assert_eq!(location["region"]["startLine"], 1, "whole-file location");
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        assert_eq!(result["level"], "error");
    }
    assert_eq!(results[0]["properties"]["diffLine"], 1);
    assert_eq!(results[0]["properties"]["policyEntry"], ".github/**");
    assert_eq!(
        results[0]["message"]["text"],
        "path is in the denied surface (diff line 1) (policy: .github/**)"
    );
    assert_eq!(
        results[2]["message"]["text"],
        "mode 100644 -> 100755 (old path: old,name:1) (diff line 9)"
    );

    // Every rule is registered (an unknown one cannot be read); the hostile message cannot form
    // an embedded link or a placeholder, and carries no raw control character.
    assert_eq!(results[4]["ruleId"], "limit-exceeded");
    assert_eq!(
        results[4]["ruleIndex"],
        contract::rules::RuleId::ALL
            .iter()
            .position(|r| r.name() == "limit-exceeded")
            .unwrap()
    );
    assert_eq!(
        results[4]["message"]["text"],
        "multi\nline\\\\u{{d}}\nmessage 100% ::warning::x {{0}} \\[y\\](1)"
    );
    // Path-less violations are located in the diff file, at their diff line when they have one:
    // code scanning refuses a result without a location.
    assert_eq!(
        results[5]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "candidate.diff"
    );
    assert_eq!(
        results[5]["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
    assert_eq!(run["properties"]["verdict"], "reject");
}

#[test]
fn sarif_without_docs_base_has_no_relative_uris() {
    let out = render("sarif", &hostile_verdict().to_json().unwrap(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let log: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let driver = &log["runs"][0]["tool"]["driver"];
    assert!(driver.get("informationUri").is_none());
    assert!(
        driver["rules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r.get("helpUri").is_none())
    );
}

#[test]
fn reads_a_verdict_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verdict.json");
    std::fs::write(&path, common::accept_verdict().to_json().unwrap()).unwrap();
    let out = report(
        &[
            "render",
            "--verdict",
            path.to_str().unwrap(),
            "--format",
            "annotations",
        ],
        "",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn refuses_documents_it_does_not_understand() {
    let good = serde_json::to_value(hostile_verdict()).unwrap();
    let with = |key: &str, value: Value| {
        let mut doc = good.clone();
        doc[key] = value;
        doc.to_string()
    };
    let accept_with_violations = with("verdict", "accept".into());
    let mut unknown_field = good.clone();
    unknown_field["extra"] = true.into();
    for (input, expected) in [
        (
            with("schema", "agent-team-apply/guard-verdict/v2".into()),
            "unknown schema",
        ),
        (with("verdict", "maybe".into()), "unknown variant `maybe`"),
        (with("mode", "vibes".into()), "unknown variant `vibes`"),
        (
            with("diff_sha256", "abc".into()),
            "a SHA-256 must be 64 lower-case hex digits",
        ),
        (accept_with_violations, "lists 6 violation(s)"),
        (unknown_field.to_string(), "unknown field `extra`"),
        (
            "not json".to_string(),
            "the verdict is not a valid agent-team-apply/guard-verdict/v1 document",
        ),
    ] {
        for format in ["markdown", "annotations", "sarif"] {
            let out = render(format, &input, &[]);
            assert_eq!(code(&out), 2, "{expected}");
            assert_eq!(stdout(&out), "", "{expected}");
            assert!(
                stderr(&out).contains(expected),
                "{expected}: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let verdict = hostile_verdict().to_json().unwrap();
    for args in [
        vec!["render", "--verdict", "-"],
        vec!["render", "--verdict", "-", "--format", "html"],
        vec![
            "render",
            "--verdict",
            "-",
            "--format",
            "markdown",
            "--docs-base-url",
            "javascript:x/",
        ],
        vec![
            "render",
            "--verdict",
            "/nonexistent/verdict.json",
            "--format",
            "markdown",
        ],
        vec!["frobnicate"],
        vec![],
    ] {
        let out = report(&args, &verdict);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
    }
    assert_eq!(code(&report(&["--help"], "")), 0);
    assert_eq!(code(&report(&["render", "--help"], "")), 0);
    assert_eq!(code(&report(&["--version"], "")), 0);
}

#[test]
fn error_messages_are_terminal_safe() {
    let mut doc = serde_json::to_value(hostile_verdict()).unwrap();
    doc["schema"] = "x\u{1b}]0;pwned\u{7}".into();
    let out = render("markdown", &doc.to_string(), &[]);
    assert_eq!(code(&out), 2);
    assert!(!stderr(&out).contains('\u{1b}'), "{}", stderr(&out));
}

#[test]
fn protected_paths_come_first_in_every_sink() {
    let doc = common::protected_verdict().to_json().unwrap();
    // Markdown: before the file list, as code spans, hostile text inert.
    let md = stdout(&render("markdown", &doc, &[]));
    let protected_at = md
        .find("### \u{26a0}\u{fe0f} Protected files need review (2)")
        .unwrap();
    assert!(protected_at < md.find("### Files").unwrap(), "{md}");
    assert!(
        md.contains("- **Protected files:** 2 (a human must review them)"),
        "{md}"
    );
    assert!(md.contains("| `Cargo.toml` | 1 |"), "{md}");
    assert!(md.contains("`protect: **/Cargo.toml`"), "{md}");
    let outside = outside_code_spans(&md);
    for raw in ["<b>", "@org/team", "](https", "javascript"] {
        assert!(!outside.contains(raw), "{raw} in {md}");
    }
    // Annotations: warnings, after the (here: no) errors.
    let annotations = stdout(&render("annotations", &doc, &[]));
    assert_eq!(annotations.lines().count(), 2, "{annotations}");
    assert!(
        annotations.starts_with(
            "::warning file=candidate.diff,line=1,title=guard%3A protected-path%3A Cargo.toml::new path is protected"
        ),
        "{annotations}"
    );
    // SARIF: notes of rule protected-path, whose default level is note.
    let sarif: Value = serde_json::from_str(&stdout(&render("sarif", &doc, &[]))).unwrap();
    let run = &sarif["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(
        results
            .iter()
            .all(|r| r["level"] == "note" && r["ruleId"] == "protected-path")
    );
    let rule = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "protected-path")
        .unwrap();
    assert_eq!(rule["defaultConfiguration"]["level"], "note");
}

/// In a called workflow GITHUB_REPOSITORY and GITHUB_SHA are the adopter's: the rule links go to
/// this project's README at the pinned release (AGENT_TEAM_RELEASE_URL), or nowhere.
#[test]
fn rule_links_point_at_this_project_at_the_pinned_release_not_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verdict.json");
    std::fs::write(&path, hostile_verdict().to_json().unwrap()).unwrap();
    let sarif = |release: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_report"));
        cmd.args(["render", "--format", "sarif", "--verdict"])
            .arg(&path)
            .env_remove("AGENT_TEAM_RELEASE_URL")
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REPOSITORY", "adopter/app")
            .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567");
        if let Some(url) = release {
            cmd.env("AGENT_TEAM_RELEASE_URL", url);
        }
        let out = cmd.output().unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let log: Value = serde_json::from_str(&stdout(&out)).unwrap();
        log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.get("helpUri").and_then(Value::as_str).map(str::to_owned))
            .collect::<Vec<_>>()
    };
    let pinned = sarif(Some(
        "https://github.com/agent-team/agent-team-apply/releases/download/v0.3.1",
    ));
    assert!(!pinned.is_empty());
    for uri in &pinned {
        let uri = uri.as_deref().unwrap();
        assert!(
            uri.starts_with(
                "https://github.com/agent-team/agent-team-apply/blob/v0.3.1/README.md#rule-"
            ),
            "{uri}"
        );
    }
    assert!(sarif(None).iter().all(Option::is_none));
}

/// An annotation whose diff line is known is located in the diff at that line (`--diff-name`); one
/// without is located at its path.
#[test]
fn annotations_carry_the_diff_line_in_the_diff_they_name() {
    let mut doc = hostile_verdict();
    doc.violations.truncate(1);
    let with_line = stdout(&render(
        "annotations",
        &doc.to_json().unwrap(),
        &["--diff-name", "agent-team-diffs/T-1.patch"],
    ));
    assert!(
        with_line.starts_with("::error file=agent-team-diffs/T-1.patch,line=1,title="),
        "{with_line}"
    );
    doc.violations[0].line = None;
    let without = stdout(&render("annotations", &doc.to_json().unwrap(), &[]));
    assert!(
        without.starts_with("::error file=.github/workflows/x.yml"),
        "{without}"
    );
    assert!(!without.contains("line="), "{without}");
}
