//! The agent's words are inert in the PR body for any input: over lines built from markdown's
//! block and inline constructs (1-3 space and deeper indentation, ATX and setext headings, rules,
//! lists, tables, HTML, autolinks, bare SHAs, mentions, references), a GFM parser (comrak, with
//! GitHub's extensions on) finds inside the agent's block quote only paragraphs of text, code
//! spans and line breaks: no heading, list, rule, table, link, image or HTML, and no word GitHub
//! would turn into a mention, a reference or a commit link. Issue 28, "the PR body".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use comrak::nodes::{AstNode, NodeValue};
use comrak::{Arena, Options, parse_document};
use proptest::prelude::*;
use report::pr_body::{AgentWords, PrContext, render};

const BASE: &str = "0123456789abcdef0123456789abcdef01234567";

/// Fragments that start a block or become markup, a link or a notification somewhere.
const CONSTRUCTS: &[&str] = &[
    "# heading",
    "## heading",
    "###### h",
    "#",
    "===",
    "=",
    "---",
    "-",
    "***",
    "___",
    "* * *",
    "- item",
    "* item",
    "+ item",
    "1. item",
    "1) item",
    "2.",
    "- [ ] task",
    "> quote",
    ">",
    "```",
    "~~~",
    "```rust",
    "| a | b |",
    "|---|---|",
    "a | b",
    "--- | ---",
    ":-:|:-",
    "<div>",
    "</div>",
    "<script>alert(1)</script>",
    "<!-- c -->",
    "<img src=x>",
    "<https://evil.example>",
    "<a@b.example>",
    "https://evil.example/x",
    "http://e.example",
    "www.evil.example",
    "WWW.evil.example",
    "user@example.com",
    "@octocat",
    "@org/team",
    "#123",
    "GH-12",
    "owner/repo#9",
    "a4c2d7e",
    "A4C2D7E",
    "0123456789abcdef0123456789abcdef01234567",
    "deadbeefcafe.",
    "owner/repo@a4c2d7e",
    "[x](https://e.example)",
    "![i](https://e.example/i.png)",
    "[ref]: https://e.example",
    "[ref]",
    "[^1]",
    "[^1]: note",
    "[!NOTE]",
    "$x^2$",
    "$$",
    "&amp;",
    "&#35;",
    "\\",
    "\\#",
    "*emph*",
    "_emph_",
    "**strong**",
    "~~strike~~",
    "`code`",
    "<br>",
    "text",
    "plain words",
    "",
];

const INDENTS: &[&str] = &["", " ", "  ", "   ", "    ", "     ", "\t", " \t", "\u{a0}"];

fn line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(INDENTS),
        prop::collection::vec(
            prop_oneof![
                4 => prop::sample::select(CONSTRUCTS).prop_map(str::to_owned),
                1 => "[ -~]{0,12}",
            ],
            1..4,
        ),
        prop::sample::select(&["", " ", "  ", "\\"][..]),
    )
        .prop_map(|(indent, parts, tail)| format!("{indent}{}{tail}", parts.join(" ")))
}

fn description() -> impl Strategy<Value = String> {
    prop::collection::vec(line(), 1..8).prop_map(|lines| lines.join("\n"))
}

fn options() -> Options<'static> {
    let mut o = Options::default();
    o.extension.strikethrough = true;
    o.extension.table = true;
    o.extension.autolink = true;
    o.extension.tasklist = true;
    o.extension.footnotes = true;
    o.extension.alerts = true;
    o.extension.math_dollars = true;
    o.extension.math_code = true;
    o
}

fn body(title: &str, description: &str) -> String {
    let verdict = common::accept_verdict();
    render(
        &verdict,
        &PrContext {
            task_id: Some("task-1"),
            run_id: Some("42"),
            diff_sha256: common::SHA,
            base_commit: BASE,
            modes: None,
            agent: AgentWords { title, description },
        },
    )
}

/// Something in a text node GitHub resolves on the rendered page: a mention, an issue or pull
/// request reference, a link, a bare commit SHA.
fn resolvable(text: &str) -> Option<&str> {
    text.split(char::is_whitespace).find(|word| {
        let lower = word.to_ascii_lowercase();
        word.contains('@')
            || lower.contains("://")
            || lower.contains("www.")
            || word
                .char_indices()
                .any(|(i, c)| c == '#' && word[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
            || lower.contains("gh-")
            || word
                .split(|c: char| !c.is_alphanumeric())
                .any(|run| run.len() >= 7 && run.chars().all(|c| c.is_ascii_hexdigit()))
    })
}

/// Every node under `node` is a paragraph, text, a code span or a line break, and no text node
/// holds anything GitHub resolves; the first offending node otherwise.
fn inert<'a>(node: &'a AstNode<'a>) -> Result<(), String> {
    for n in node.descendants().skip(1) {
        match &n.data().value {
            NodeValue::Paragraph
            | NodeValue::SoftBreak
            | NodeValue::LineBreak
            | NodeValue::Code(_) => {}
            NodeValue::Text(text) => {
                if let Some(word) = resolvable(text) {
                    return Err(format!("GitHub would resolve {word:?} in text {text:?}"));
                }
            }
            other => return Err(format!("{other:?}")),
        }
    }
    Ok(())
}

fn check(title: &str, description: &str) -> Result<(), String> {
    let md = body(title, description);
    let arena = Arena::new();
    let root = parse_document(&arena, &md, &options());
    let quotes: Vec<_> = root
        .descendants()
        .filter(|n| {
            matches!(
                n.data().value,
                NodeValue::BlockQuote | NodeValue::Alert(_) | NodeValue::MultilineBlockQuote(_)
            )
        })
        .collect();
    if description.lines().next().is_some() {
        let [quote] = quotes.as_slice() else {
            return Err(format!("{} block quotes, not one:\n{md}", quotes.len()));
        };
        if !matches!(quote.data().value, NodeValue::BlockQuote) {
            return Err(format!("the quote is an alert:\n{md}"));
        }
        inert(quote).map_err(|e| format!("{e} inside the quote of\n{md}"))?;
        // The quote ends where the agent's words end: the rest of the body is the same as for
        // a plain description.
        let plain = body(title, "plain words");
        let agent_heading = "The agent's words (not verified)\n\n";
        let tail = |md: &str| {
            md.find(agent_heading).and_then(|at| {
                md[at..]
                    .find("\n\n###")
                    .map(|end| md[at + end..].to_owned())
            })
        };
        if tail(&md) != tail(&plain) {
            return Err(format!("the body after the quote changed:\n{md}"));
        }
    }
    // The title is one strong paragraph of text.
    if !title.is_empty() {
        let strong: Vec<_> = root
            .descendants()
            .filter(|n| matches!(n.data().value, NodeValue::Strong))
            .collect();
        let Some(first) = strong.first() else {
            return Err(format!("no strong title:\n{md}"));
        };
        for n in first.descendants().skip(1) {
            match &n.data().value {
                NodeValue::Code(_) => {}
                NodeValue::Text(text) => {
                    if let Some(word) = resolvable(text) {
                        return Err(format!("title: GitHub would resolve {word:?}"));
                    }
                }
                other => return Err(format!("title: {other:?}\n{md}")),
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn agent_words_render_as_text_only(description in description(), title in line()) {
        let title = title.trim().to_owned();
        if let Err(e) = check(&title, &description) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// The constructs issue 28 found rendering as blocks inside the quote, each on its own.
#[test]
fn indented_constructs_stay_text() {
    for indent in INDENTS {
        for construct in CONSTRUCTS {
            let description = format!("first line\n{indent}{construct}\n{indent}{construct}");
            check("", &description).unwrap();
            check("", &format!("{indent}{construct}")).unwrap();
        }
    }
}
