//! Properties of the sink escapers, over strings built from every character that means something
//! to some sink plus arbitrary Unicode.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use contract::verdict::{VerdictDoc, ViolationDoc};
use proptest::prelude::*;
use report::escape::{
    code_block, code_span, escape_markdown, escape_sarif_text, escape_workflow_data,
    escape_workflow_property, neutralize, percent_encode_path, table_code_span,
};

const HOSTILE: &[char] = &[
    '|',
    '\n',
    '\r',
    '\t',
    '<',
    '>',
    '`',
    '@',
    '#',
    '[',
    ']',
    '(',
    ')',
    '*',
    '_',
    '~',
    '!',
    '$',
    '\\',
    '&',
    ';',
    ':',
    ',',
    '-',
    '+',
    '=',
    '.',
    '/',
    '%',
    '{',
    '}',
    '"',
    '\'',
    ' ',
    '0',
    '7',
    'a',
    'Z',
    'w',
    '\u{1b}',
    '\u{7f}',
    '\u{85}',
    '\u{202e}',
    '\u{200d}',
    '\u{2028}',
    '\u{feff}',
    '\u{e9}',
    '\u{ff20}',
    '\u{1f600}',
];

fn hostile_string() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![3 => prop::sample::select(HOSTILE), 1 => any::<char>()],
        0..48,
    )
    .prop_map(String::from_iter)
}

/// Inline text read as CommonMark reads it (escapes and code spans; the escaper writes no other
/// markup): the rendered text, and the part of it that lies outside code spans (where GitHub
/// resolves mentions, references and links). `None` for a stray backslash or an unclosed span.
fn read_inline(s: &str) -> Option<(String, String)> {
    let chars: Vec<char> = s.chars().collect();
    let (mut rendered, mut outside) = (String::new(), String::new());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let next = *chars.get(i + 1).filter(|n| n.is_ascii_punctuation())?;
                rendered.push(next);
                outside.push(next);
                i += 2;
            }
            '`' => {
                let run = chars[i..].iter().take_while(|&&c| c == '`').count();
                let start = i + run;
                let mut j = start;
                let end = loop {
                    if j >= chars.len() {
                        return None;
                    }
                    if chars[j] == '`' {
                        let m = chars[j..].iter().take_while(|&&c| c == '`').count();
                        if m == run {
                            break j;
                        }
                        j += m;
                    } else {
                        j += 1;
                    }
                };
                let content: String = chars[start..end].iter().collect();
                let content = if content.len() >= 2
                    && content.starts_with(' ')
                    && content.ends_with(' ')
                    && !content.chars().all(|c| c == ' ')
                {
                    content[1..content.len() - 1].to_owned()
                } else {
                    content
                };
                rendered.push_str(&content);
                i = end + run;
            }
            c => {
                rendered.push(c);
                outside.push(c);
                i += 1;
            }
        }
    }
    Some((rendered, outside))
}

/// A parsed workflow command: name, properties in order, data.
type WorkflowCommand = (String, Vec<(String, String)>, String);

/// The runner's reading of a workflow command line (actions/runner `ActionCommand.TryParseV2`):
/// command up to the first space, properties up to the next `::`, split on `,` and the first
/// `=`, then unescaped; the rest is the data.
fn runner_parse(line: &str) -> Option<WorkflowCommand> {
    let body = line.strip_prefix("::")?;
    let end = body.find("::")?;
    let (info, data) = (&body[..end], &body[end + 2..]);
    let (command, props) = info.split_once(' ').unwrap_or((info, ""));
    let unescape_property = |v: &str| {
        v.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let properties = props
        .split(',')
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), unescape_property(v)))
        .collect();
    let data = data
        .replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%25", "%");
    Some((command.to_string(), properties, data))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn code_blocks_give_back_every_line_and_cannot_be_closed(lines in prop::collection::vec(hostile_string(), 0..6)) {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let out = code_block(&refs);
        let got: Vec<&str> = out.split('\n').collect();
        // Fence, one line per input line, fence, and the final newline.
        prop_assert_eq!(got.len(), lines.len() + 3, "{:?}", out);
        let fence = got[0];
        prop_assert!(fence.len() >= 3 && fence.chars().all(|c| c == '`'), "{:?}", out);
        prop_assert_eq!(got[got.len() - 2], fence);
        prop_assert_eq!(got[got.len() - 1], "");
        for (line, input) in got[1..got.len() - 2].iter().zip(&lines) {
            // Exactly the neutralized line: what a reader copies is the text itself.
            prop_assert_eq!(*line, neutralize(input));
            // No run of backticks as long as the fence: no line can close the block early.
            prop_assert!(!line.contains(fence), "{:?}", out);
            prop_assert!(!line.chars().any(|c| report::escape::is_hidden(c) || c == '\r'));
        }
    }

    #[test]
    fn markdown_prose_copies_exactly_and_resolves_nothing(input in hostile_string()) {
        let out = escape_markdown(&input);
        prop_assert!(!out.contains(['\n', '\r']), "{out:?}");
        // Nothing invisible is inserted: no joiner, no hidden character of the input.
        prop_assert!(!out.chars().any(report::escape::is_hidden), "hidden character in {out:?}");
        // Safe in a table cell: every pipe is escaped.
        prop_assert!(!out.replace("\\|", "").contains('|'), "raw pipe in {out:?}");
        let (rendered, outside) = read_inline(&out).ok_or_else(|| TestCaseError::fail(format!("not inline markdown: {out:?}")))?;
        // The rendered text is exactly the neutralized input: copying gives it back.
        prop_assert_eq!(rendered, neutralize(&input));
        // Outside code spans, no markup character stands unescaped...
        let markup = ['*', '_', '~', '[', ']', '!', '<', '>', '$', '&'];
        let mut k = 0;
        let raw: Vec<char> = out.chars().collect();
        let mut in_span = 0usize;
        while k < raw.len() {
            let c = raw[k];
            if c == '\\' && in_span == 0 {
                k += 2;
                continue;
            }
            if c == '`' {
                let run = raw[k..].iter().take_while(|&&b| b == '`').count();
                in_span = if in_span == 0 { run } else if in_span == run { 0 } else { in_span };
                k += run;
                continue;
            }
            prop_assert!(in_span > 0 || !markup.contains(&c), "raw {c:?} in {out:?}");
            k += 1;
        }
        // ... and nothing GitHub would resolve: no mention, reference or autolink.
        let lower = outside.to_ascii_lowercase();
        prop_assert!(!outside.contains('@'), "{out:?}");
        prop_assert!(!lower.contains("://") && !lower.contains("www."), "{out:?}");
        let chars: Vec<char> = lower.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            let digit_next = chars.get(i + 1).is_some_and(char::is_ascii_digit);
            prop_assert!(!(*c == '#' && digit_next), "{out:?}");
            prop_assert!(!(*c == '-' && digit_next && i >= 2 && chars[i - 2] == 'g' && chars[i - 1] == 'h'), "{out:?}");
        }
    }

    #[test]
    fn code_spans_give_back_the_exact_text(input in hostile_string()) {
        let shown = neutralize(&input);
        for (out, table) in [(code_span(&input), false), (table_code_span(&input), true)] {
            if shown.is_empty() {
                prop_assert_eq!(out, "");
                continue;
            }
            prop_assert!(!out.contains(['\n', '\r']), "{out:?}");
            let ticks = out.chars().take_while(|&c| c == '`').count();
            prop_assert!(ticks >= 1 && out.ends_with(&"`".repeat(ticks)), "{out:?}");
            let inner = &out[ticks..out.len() - ticks];
            // No run of exactly `ticks` backticks inside, or the span would close early.
            prop_assert!(!inner.split(|c| c != '`').any(|run| run.len() == ticks), "{out:?}");
            let inner = if inner.len() >= 2 && inner.starts_with(' ') && inner.ends_with(' ')
                && (shown.starts_with(['`', ' ']) || shown.ends_with(['`', ' ']))
            {
                &inner[1..inner.len() - 1]
            } else {
                inner
            };
            if table {
                prop_assert!(!inner.replace("\\|", "").contains('|'), "raw pipe in {out:?}");
                prop_assert_eq!(inner.replace("\\|", "|"), shown.clone());
            } else {
                prop_assert_eq!(inner, shown.as_str());
            }
        }
    }

    #[test]
    fn workflow_escapes_round_trip_through_the_runner(input in hostile_string()) {
        let property = escape_workflow_property(&input);
        prop_assert!(!property.contains([':', ',', '\r', '\n']), "{property:?}");
        let data = escape_workflow_data(&input);
        prop_assert!(!data.contains(['\r', '\n']), "{data:?}");
        let line = format!("::error file={property},title=t::{data}");
        let (command, properties, parsed_data) = runner_parse(&line).unwrap();
        prop_assert_eq!(command, "error");
        prop_assert_eq!(properties, vec![("file".to_string(), input.clone()), ("title".to_string(), "t".to_string())]);
        prop_assert_eq!(parsed_data, input);
    }

    #[test]
    fn annotation_lines_parse_back_to_the_neutralized_violation(
        path in hostile_string(),
        // Rule ids are typed: only registered ones can be in a document.
        rule in proptest::sample::select(contract::rules::RuleId::ALL),
        message in hostile_string(),
        line in proptest::option::of(1usize..100_000),
    ) {
        let doc = VerdictDoc {
            schema: contract::verdict::VerdictSchema,
            verdict: contract::verdict::VerdictWord::Reject,
            diff_sha256: contract::ids::Sha256Hex::parse(&"0".repeat(64)).unwrap(),
            mode: contract::verdict::CheckMode::ParserOnly,
            scope: vec![],
            files: vec![],
            violations: vec![ViolationDoc {
                rule,
                path: Some(path.clone().into()),
                old_path: None,
                line,
                message: message.clone(),
                policy_entry: None,
                hint: String::new(),
                docs: String::new(),
            }],
            protected: vec![],
            unmatched_scope: vec![],
            exclusions: vec![],
        };
        let out = report::annotations::render(&doc, "changes/agent.diff");
        prop_assert_eq!(out.matches('\n').count(), 1, "{:?}", out);
        prop_assert!(!out.contains('\r'));
        let (command, properties, data) = runner_parse(out.trim_end_matches('\n')).unwrap();
        prop_assert_eq!(command, "error");
        // Located in the diff at its line when the line is known, else at the path.
        let want_properties = match line {
            Some(l) => vec![
                ("file".to_string(), "changes/agent.diff".to_string()),
                ("line".to_string(), l.to_string()),
                ("title".to_string(), format!("guard: {rule}: {}", neutralize(&path))),
            ],
            None => vec![
                ("file".to_string(), neutralize(&path)),
                ("title".to_string(), format!("guard: {rule}")),
            ],
        };
        prop_assert_eq!(properties, want_properties);
        // The evidence follows the first line; further lines of the message stay lines.
        let suffix = line.map(|l| format!(" (diff line {l})")).unwrap_or_default();
        let mut lines = message.split('\n').map(neutralize);
        let mut want = format!("{}{suffix}", lines.next().unwrap_or_default());
        for l in lines {
            want.push('\n');
            want.push_str(&l);
        }
        prop_assert_eq!(data, want);
    }

    #[test]
    fn uri_paths_decode_back_and_stay_relative(path in hostile_string()) {
        let uri = percent_encode_path(&path);
        prop_assert!(uri.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~/%".contains(&b)), "{uri:?}");
        prop_assert!(!uri.starts_with('/'), "{uri:?}");
        prop_assert!(uri.split('/').all(|seg| seg != "." && seg != ".."), "{uri:?}");
        let bytes = uri.as_bytes();
        let mut decoded = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                decoded.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
        prop_assert_eq!(String::from_utf8(decoded).unwrap(), path);
    }

    #[test]
    fn sarif_text_has_no_link_or_placeholder_syntax(input in hostile_string()) {
        let out = escape_sarif_text(&input);
        // Unescape per SARIF §3.11: `\x` → `x` for link characters, `{{`/`}}` → `{`/`}`.
        let mut back = String::new();
        let mut chars = out.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let next = chars.next();
                    prop_assert!(matches!(next, Some('\\' | '[' | ']')), "{out:?}");
                    back.extend(next);
                }
                '[' | ']' => prop_assert!(false, "unescaped bracket in {out:?}"),
                '{' | '}' => {
                    prop_assert_eq!(chars.next(), Some(c), "{:?}", out);
                    back.push(c);
                }
                c => back.push(c),
            }
        }
        prop_assert_eq!(back, input);
    }
}
