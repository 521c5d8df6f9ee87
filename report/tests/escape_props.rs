//! Properties of the sink escapers, over strings built from every character that means something
//! to some sink plus arbitrary Unicode.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use contract::verdict::{VerdictDoc, ViolationDoc};
use proptest::prelude::*;
use report::escape::{
    code_span, escape_html, escape_markdown, escape_sarif_text, escape_workflow_data,
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

/// Decode `&#N;` references; the escaper emits no other `&`.
fn decode_references(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = rest[at..].strip_prefix("&#")?;
        let end = tail.find(';')?;
        let digits = &tail[..end];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        out.push(char::from_u32(digits.parse().ok()?)?);
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Some(out)
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
    fn html_output_has_no_raw_markup(input in hostile_string()) {
        let out = escape_html(&input);
        for forbidden in ['|', '\n', '\r', '<', '>', '`', '@', '[', ']', '(', ')', '*', '_', '~', '!', '$', '\\', ':', '.', '-', '+', '='] {
            prop_assert!(!out.contains(forbidden), "{forbidden:?} in {out:?}");
        }
        prop_assert!(!out.chars().any(report::escape::is_hidden), "hidden character in {out:?}");
        // Every `&` and `#` belongs to a well-formed decimal reference.
        let decoded = decode_references(&out);
        prop_assert!(decoded.is_some(), "malformed reference in {out:?}");
        let stripped: String = out.split('&').skip(1).map(|part| part.split_once(';').map_or(part, |(_, r)| r)).collect();
        prop_assert!(!stripped.contains('#') && !stripped.contains('&'), "{out:?}");
    }

    #[test]
    fn html_round_trips_and_breaks_mentions(input in hostile_string()) {
        let decoded = decode_references(&escape_html(&input)).unwrap();
        // After decoding (what GitHub's mention/reference/emoji filters see), every `@`, `#` and
        // `:` is followed by a zero-width joiner, and so is a `-` before a digit.
        let chars: Vec<char> = decoded.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            let next = chars.get(i + 1).copied();
            if matches!(c, '@' | '#' | ':') {
                prop_assert_eq!(next, Some('\u{200d}'), "{:?}", decoded);
            }
            if *c == '-' {
                prop_assert!(!next.is_some_and(|n| n.is_ascii_digit()), "{:?}", decoded);
            }
        }
        // Removing the joiners gives back exactly the neutralized input: nothing lost or added.
        let without_joiners: String = decoded.chars().filter(|&c| c != '\u{200d}').collect();
        prop_assert_eq!(without_joiners, neutralize(&input));
    }

    #[test]
    fn markdown_prose_escapes_every_markup_character_and_breaks_mentions(input in hostile_string()) {
        let out = escape_markdown(&input);
        prop_assert!(!out.contains(['\n', '\r']), "{out:?}");
        prop_assert!(
            !out.chars().any(|c| report::escape::is_hidden(c) && c != '\u{200d}'),
            "hidden character in {out:?}"
        );
        // Read as CommonMark reads backslashes: every markup character must be escaped, and a
        // backslash only ever escapes punctuation.
        let markup = ['\\', '`', '*', '_', '~', '[', ']', '!', '<', '>', '|', '$', '&'];
        let chars: Vec<char> = out.chars().collect();
        let mut unescaped = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' {
                let next = chars.get(i + 1).copied();
                prop_assert!(next.is_some_and(|n| n.is_ascii_punctuation()), "stray backslash in {out:?}");
                unescaped.extend(next);
                i += 2;
                continue;
            }
            prop_assert!(!markup.contains(&c), "raw {c:?} in {out:?}");
            unescaped.push(c);
            i += 1;
        }
        // Mentions and references are broken on the rendered text.
        let rendered: Vec<char> = unescaped.chars().collect();
        for (i, c) in rendered.iter().enumerate() {
            let next = rendered.get(i + 1).copied();
            if *c == '@' {
                prop_assert_eq!(next, Some('\u{200d}'), "{:?}", unescaped);
            }
            if *c == '#' {
                prop_assert!(!next.is_some_and(|n| n.is_ascii_digit()), "{:?}", unescaped);
            }
        }
        // Without the joiners it is exactly the neutralized input: nothing lost or added.
        let without: String = unescaped.chars().filter(|&c| c != '\u{200d}').collect();
        prop_assert_eq!(without, neutralize(&input).replace('\u{200d}', ""));
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
                docs: String::new(),
            }],
            protected: vec![],
            unmatched_scope: vec![],
            exclusions: vec![],
        };
        let out = report::annotations::render(&doc);
        prop_assert_eq!(out.matches('\n').count(), 1, "{:?}", out);
        prop_assert!(!out.contains('\r'));
        let (command, properties, data) = runner_parse(out.trim_end_matches('\n')).unwrap();
        prop_assert_eq!(command, "error");
        prop_assert_eq!(properties, vec![
            ("file".to_string(), neutralize(&path)),
            ("title".to_string(), format!("guard: {rule}")),
        ]);
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
