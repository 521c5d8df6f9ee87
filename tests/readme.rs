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

/// The anchors GitHub gives a markdown file: each heading's slug (lower case, punctuation but `-`
/// and `_` dropped, spaces as `-`, a repeated slug numbered `-1`, `-2`, ...) outside code fences,
/// and every `<a id="...">`.
fn anchors(text: &str) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let mut out = std::collections::BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        for id in line.split("<a id=\"").skip(1) {
            if let Some((id, _)) = id.split_once('"') {
                out.insert(id.to_owned());
            }
        }
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else {
            continue;
        };
        if fenced || !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

#[test]
fn every_link_into_the_docs_names_a_heading_that_exists() {
    const DOCS: [&str; 7] = [
        "README.md",
        "ADOPTING.md",
        "REFERENCE.md",
        "ARCHITECTURE.md",
        "SECURITY.md",
        "EVIDENCE.md",
        "RELEASING.md",
    ];
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in DOCS {
        let text = read(doc);
        for link in text.split("](").skip(1) {
            let Some((target, _)) = link.split_once(')') else {
                continue;
            };
            let Some((file, anchor)) = target.split_once('#') else {
                continue;
            };
            if file.contains("://") || file.contains(' ') {
                continue;
            }
            let file = if file.is_empty() { doc } else { file };
            if !DOCS.contains(&file) {
                continue;
            }
            checked += 1;
            if !anchors(&read(file)).contains(anchor) {
                broken.push(format!("{doc}: {file}#{anchor}"));
            }
        }
    }
    assert!(checked > 20, "only {checked} links were checked");
    assert!(broken.is_empty(), "links to no heading: {broken:#?}");
}

#[test]
fn the_anchor_rule_is_githubs() {
    let got = anchors(
        "# `gate init` and `gate doctor`: set up, then check\n```\n# not one\n```\n### 1. Pin a release\n## Twice\n## Twice\n| <a id=\"rule-x\"></a> |\n",
    );
    let want: std::collections::BTreeSet<String> = [
        "gate-init-and-gate-doctor-set-up-then-check",
        "1-pin-a-release",
        "twice",
        "twice-1",
        "rule-x",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(got, want);
}
