//! The README is part of the interface: its rule reference must list every registered rule (the
//! docs anchors in verdicts point there), and CI must run exactly the commands it opens with.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

#[test]
fn every_rule_has_its_anchor_and_description_in_the_readme() {
    let readme = read("README.md");
    for &rule in guard::rules::RuleId::ALL {
        let anchor = format!("<a id=\"rule-{}\"></a>`{}`", rule.name(), rule.name());
        let row = readme
            .lines()
            .find(|l| l.contains(&anchor))
            .unwrap_or_else(|| panic!("README lacks {anchor}"));
        assert!(
            row.contains(rule.description()),
            "README row for {} does not carry its description",
            rule.name()
        );
        assert_eq!(rule.anchor(), format!("README.md#rule-{}", rule.name()));
    }
    let rows = readme
        .lines()
        .filter(|l| l.starts_with("| <a id=\"rule-"))
        .count();
    assert_eq!(
        rows,
        guard::rules::RuleId::ALL.len(),
        "README lists a rule the registry does not have"
    );
}

#[test]
fn readme_opens_with_the_two_commands_ci_runs() {
    let readme = read("README.md");
    let ci = read(".ci/run");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let commands: Vec<&str> = block
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        commands.len(),
        2,
        "the README opens with exactly two commands: {commands:?}"
    );
    assert!(
        commands[1].starts_with("cargo test"),
        "the second command runs the tests"
    );
    for command in commands {
        assert!(
            ci.lines().any(|l| l.trim() == command),
            ".ci/run must run `{command}` exactly"
        );
    }
    assert!(
        readme.find("```sh").unwrap() < 200,
        "the commands come first"
    );
}
