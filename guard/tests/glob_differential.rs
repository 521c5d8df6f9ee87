//! The glob semantics of the product's matcher (`guard::glob`: globset's `GlobSet`, as the policy
//! configures it: `literal_separator(true)`, `backslash_escape(true)`, case-insensitive or not),
//! held to a table of expected answers and to globset's plain one-glob regex matcher
//! (`GlobMatcher`), which answers without the set's literal, prefix, suffix, extension and
//! base-name shortcuts.
//!
//! - `generated_patterns_agree_with_globset`: patterns from a grammar of every glob feature
//!   (literals with Unicode case-folding specials, `/`, `*`, `**` everywhere, `?`, classes with
//!   ranges, negation, `]`, `-`, POSIX names, `{}` groups with empty and nested alternatives,
//!   escapes, unbalanced brackets, a trailing backslash) and paths derived from them: the product
//!   compiles iff globset's builder builds, and both agree on every path, case-sensitively and
//!   not. Fixed seed; `GLOB_DIFFERENTIAL_CASES` (default 4000) sets the number of patterns,
//!   `GLOB_DIFFERENTIAL_SEED` (a number) another seed.
//! - `table`: hand-written cases with their expected answer, checked against both.
//! - `default_policy_patterns_agree`: every default deny/protect pattern on paths around it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;

use globset::GlobBuilder;
use guard::glob::{Glob, GlobError, GlobSet};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// The product's matcher of one glob.
fn product(pattern: &str, ci: bool) -> Result<GlobSet, GlobError> {
    Glob::new(pattern, ci).and_then(|g| g.compile())
}

fn oracle(pattern: &str, ci: bool) -> Option<globset::GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(ci)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// Characters whose case folding differs between ASCII, simple and full Unicode folding.
const SPECIALS: &[&str] = &[
    "k", "K", "\u{212A}", "s", "S", "\u{17F}", "\u{DF}", "ss", "SS", "\u{1E9E}", "\u{130}", "i",
    "I", "\u{131}", "\u{3C3}", "\u{3A3}", "\u{3C2}", "\u{E9}", "\u{C9}", "\u{2126}", "\u{3C9}",
    "a", "A", "z", "Z", "0", "9", ".", "-", "_", "é", "€", "𝔸", "\u{0}",
];

const WORDS: &[&str] = &[
    ".github",
    "CODEOWNERS",
    "src",
    "lib.rs",
    "a.tf",
    "main",
    "x.y",
    "Workflows",
    "action.yml",
];

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(SPECIALS).prop_map(str::to_owned),
        proptest::sample::select(WORDS).prop_map(str::to_owned),
        any::<char>().prop_map(String::from),
        proptest::sample::select(&[",", ":", "!", "^", "]", "[", "}", "{"][..])
            .prop_map(str::to_owned),
    ]
}

fn class_item() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(SPECIALS).prop_map(|s| s
            .chars()
            .next()
            .unwrap_or('a')
            .to_string()),
        proptest::sample::select(
            &[
                "a-z",
                "A-Z",
                "0-9",
                "z-a",
                "-",
                "]",
                "/",
                ".-0",
                "!-~",
                "+-/",
                "/-9",
                "a-",
                "--a",
                "a-b-c",
                "é-ü",
                "a-é",
                "ÿ-Ā",
                "[:alpha:]",
                "[:upper:]",
                "[:punct:]",
                "[:space:]",
                "[:foo:]",
                "[:toolongname:]",
                "[:abcdefgh:]",
                "[:abcdefghi:]",
                "[:",
                "[:ALPHA:]",
                "\\",
                "^",
                "!",
                "k",
                "K",
                "\u{212A}",
                "[",
                "a-[:alpha:]",
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

fn class() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(&["", "", "!", "^"][..]),
        proptest::collection::vec(class_item(), 0..4),
        prop_oneof![9 => Just("]"), 1 => Just("")],
    )
        .prop_map(|(neg, items, close)| format!("[{neg}{}{close}", items.concat()))
}

fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => literal(),
        4 => Just("/".to_owned()),
        3 => Just("*".to_owned()),
        4 => Just("**".to_owned()),
        2 => Just("***".to_owned()),
        2 => Just("**/".to_owned()),
        2 => Just("/**".to_owned()),
        2 => Just("/**/".to_owned()),
        2 => Just("?".to_owned()),
        3 => class(),
        2 => proptest::sample::select(&["\\*", "\\?", "\\[", "\\{", "\\}", "\\,", "\\\\", "\\a", "\\/", "\\-", "\\]"][..])
            .prop_map(str::to_owned),
        1 => Just("\\".to_owned()),
    ]
}

fn pattern() -> BoxedStrategy<String> {
    let leaf = proptest::collection::vec(atom(), 0..6).prop_map(|v| v.concat());
    leaf.prop_recursive(3, 24, 4, |inner| {
        proptest::collection::vec(
            prop_oneof![
                8 => atom(),
                4 => proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|alts| format!("{{{}}}", alts.join(","))),
                1 => inner.clone().prop_map(|s| format!("{{{s}")),
                1 => inner.prop_map(|s| format!("{s}}}")),
            ],
            0..6,
        )
        .prop_map(|v| v.concat())
    })
    .boxed()
}

/// A path the pattern plausibly matches: glob syntax replaced by text it may match, chosen by
/// `dice`, then case variants of some characters.
fn instantiate(pattern: &str, dice: &[u8]) -> String {
    let mut roll = dice.iter().copied().cycle();
    let mut next = move || roll.next().unwrap_or(0);
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let mut depth = 0usize;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => {
                if let Some(&e) = chars.get(i) {
                    out.push(e);
                    i += 1;
                }
            }
            '*' => {
                out.push_str(["", "a", "x.y", "é", "/", "a/b", "K", "//"][usize::from(next() % 8)])
            }
            '?' => out.push_str(["a", "é", "/", "-", "Z"][usize::from(next() % 5)]),
            '[' => {
                let start = i;
                let mut end = i + 1;
                while chars.get(end).is_some_and(|&c| c != ']') {
                    end += 1;
                }
                let inside: Vec<char> = chars
                    .get(start..end.min(chars.len()))
                    .unwrap_or(&[])
                    .to_vec();
                if inside.is_empty() || next() % 4 == 0 {
                    out.push_str(["a", "/", "-", "]"][usize::from(next() % 4)]);
                } else {
                    out.push(inside[usize::from(next()) % inside.len()]);
                }
                i = end + 1;
            }
            '{' => {
                depth += 1;
                if next() % 2 == 1 {
                    // Take the second alternative: skip the first.
                    let closed;
                    (i, closed) = skip_alternative(&chars, i, true);
                    depth -= usize::from(closed);
                }
            }
            '}' => depth = depth.saturating_sub(1),
            ',' if depth > 0 => {
                // The alternative taken ends: skip to the group's end.
                let closed;
                (i, closed) = skip_alternative(&chars, i, false);
                depth -= usize::from(closed);
            }
            c => out.push(c),
        }
    }
    out.chars()
        .map(|c| {
            if next() % 3 != 0 {
                return c.to_string();
            }
            match c {
                'k' => "\u{212A}".to_owned(),
                's' => "\u{17F}".to_owned(),
                'i' => "\u{130}".to_owned(),
                '\u{3C3}' => "\u{3A3}".to_owned(),
                '\u{DF}' => "SS".to_owned(),
                c if c.is_ascii_lowercase() => c.to_ascii_uppercase().to_string(),
                c if c.is_ascii_uppercase() => c.to_ascii_lowercase().to_string(),
                c => c.to_lowercase().collect(),
            }
        })
        .collect()
}

/// From `i` inside a group: the index after the group's closing `}` (true), or with `at_comma`
/// after the next `,` of this group (false), or the end.
fn skip_alternative(chars: &[char], mut i: usize, at_comma: bool) -> (usize, bool) {
    let mut level = 0usize;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => i += 1,
            '{' => level += 1,
            '}' if level == 0 => return (i, true),
            '}' => level -= 1,
            ',' if level == 0 && at_comma => return (i, false),
            _ => {}
        }
    }
    (i, false)
}

fn random_path() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            proptest::sample::select(SPECIALS).prop_map(str::to_owned),
            proptest::sample::select(WORDS).prop_map(str::to_owned),
            any::<char>().prop_map(String::from),
            Just("/".to_owned()),
            Just("//".to_owned()),
        ],
        0..6,
    )
    .prop_map(|v| v.concat())
}

fn case() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        pattern(),
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..16), 6),
        proptest::collection::vec(random_path(), 2),
    )
        .prop_map(|(pattern, dice, random)| {
            let mut paths: Vec<String> = dice.iter().map(|d| instantiate(&pattern, d)).collect();
            paths.extend(random);
            (pattern, paths)
        })
}

#[derive(Default, Debug)]
struct Counts {
    patterns: u64,
    compiled: u64,
    refused: [u64; 7],
    checks: u64,
    matched: [u64; 2],
}

fn error_index(e: &GlobError) -> usize {
    use globset::ErrorKind;
    match e.kind() {
        ErrorKind::UnclosedClass => 0,
        ErrorKind::InvalidRange(..) => 1,
        ErrorKind::UnopenedAlternates => 2,
        ErrorKind::UnclosedAlternates => 3,
        ErrorKind::TooManyNestedAlternates => 4,
        ErrorKind::DanglingEscape => 5,
        _ => 6,
    }
}

fn compare(pattern: &str, paths: &[String], counts: &mut Counts) -> Result<(), TestCaseError> {
    counts.patterns += 1;
    for (ci_index, ci) in [false, true].into_iter().enumerate() {
        let ours = product(pattern, ci);
        let theirs = oracle(pattern, ci);
        match (&ours, &theirs) {
            (Ok(ours), Some(theirs)) => {
                if ci_index == 0 {
                    counts.compiled += 1;
                }
                for path in paths {
                    let got = ours.is_match(path);
                    prop_assert_eq!(
                        got,
                        theirs.is_match(path),
                        "pattern {:?} path {:?} case_insensitive {}",
                        pattern,
                        path,
                        ci
                    );
                    counts.checks += 1;
                    counts.matched[ci_index] += u64::from(got);
                }
            }
            (Err(e), None) => {
                if ci_index == 0 {
                    counts.refused[error_index(e)] += 1;
                }
            }
            _ => prop_assert!(
                false,
                "pattern {:?}: ours {:?}, globset builds: {}",
                pattern,
                ours.as_ref().err(),
                theirs.is_some()
            ),
        }
    }
    Ok(())
}

#[test]
fn generated_patterns_agree_with_globset() {
    let cases: u32 = std::env::var("GLOB_DIFFERENTIAL_CASES")
        .ok()
        .map(|v| v.parse().expect("GLOB_DIFFERENTIAL_CASES is a number"))
        .unwrap_or(4000);
    let seed: u64 = std::env::var("GLOB_DIFFERENTIAL_SEED")
        .ok()
        .map(|v| v.parse().expect("GLOB_DIFFERENTIAL_SEED is a number"))
        .unwrap_or(0x676c_6f62);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let counts = RefCell::new(Counts::default());
    let result = runner.run(&case(), |(pattern, paths)| {
        compare(&pattern, &paths, &mut counts.borrow_mut())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let c = counts.into_inner();
    eprintln!("{c:?}");
    // The generator must not degenerate: most patterns compile, every refusal kind globset has
    // for this configuration occurs, and a fair share of paths match.
    let n = u64::from(cases);
    assert!(c.patterns >= n, "{c:?}");
    assert!(
        c.compiled * 5 >= c.patterns * 2,
        "too few patterns compiled: {c:?}"
    );
    for kind in 0..4 {
        assert!(
            c.refused[kind] * 200 >= n,
            "refusal kind {kind} too rare: {c:?}"
        );
    }
    assert!(c.refused[5] * 400 >= n, "dangling escapes too rare: {c:?}");
    assert_eq!(c.refused[6], 0, "a refusal of another kind: {c:?}");
    assert!(
        c.matched[0] * 10 >= c.checks / 2,
        "too few case-sensitive matches: {c:?}"
    );
    assert!(
        c.matched[1] > c.matched[0],
        "case folding never mattered: {c:?}"
    );
    assert!(c.matched[0] * 3 <= c.checks, "too many matches: {c:?}");
}

#[test]
fn nesting_limit_agrees_with_globset() {
    for depth in [99, 100, 101] {
        let pattern = format!("{}a{}", "{".repeat(depth), "}".repeat(depth));
        let ours = product(&pattern, false);
        assert_eq!(
            ours.is_ok(),
            oracle(&pattern, false).is_some(),
            "depth {depth}"
        );
        assert_eq!(
            ours.is_ok(),
            depth <= 100,
            "depth {depth}: {:?}",
            ours.err()
        );
    }
}

/// (pattern, path, case_insensitive, expected)
const TABLE: &[(&str, &str, bool, bool)] = &[
    // `**` alone, leading, trailing, in the middle, elsewhere.
    ("**", "", false, true),
    ("**", "a/b/c", false, true),
    ("**/a", "a", false, true),
    ("**/a", "/a", false, true),
    ("**/a", "x/y/a", false, true),
    ("**/a", "xa", false, false),
    ("**/a", "x/ya", false, false),
    ("a/**", "a/", false, true),
    ("a/**", "a/b/c", false, true),
    ("a/**", "a", false, false),
    ("a/**", "ab/c", false, false),
    ("a/**/b", "a/b", false, true),
    ("a/**/b", "a//b", false, true),
    ("a/**/b", "a/x/y/b", false, true),
    ("a/**/b", "ab", false, false),
    ("a/**/b", "a/xb", false, false),
    ("a**", "abc", false, true),
    ("a**", "a/b", false, false),
    ("**a", "xa", false, true),
    ("**a", "x/a", false, false),
    ("a/**b", "a/xb", false, true),
    ("a/**b", "a/x/b", false, false),
    ("**/**", "a/b", false, true),
    ("a/**/**", "a/b/c", false, true),
    ("{**/a,b}", "x/a", false, true),
    ("a{**/b}", "ab", false, true),
    ("a{**/b}", "ax/b", false, true),
    ("{a/**,b}", "a/x", false, true),
    // `*`, `?` and classes never cross `/`; they step over bytes.
    ("*", "a/b", false, false),
    ("*", "", false, true),
    ("?", "/", false, false),
    ("?", "é", false, false),
    ("??", "é", false, true),
    ("[/]", "/", false, false),
    ("[!a]", "/", false, false),
    ("[.-0]", "/", false, false),
    ("[.-0]", "0", false, true),
    ("[.-0]", ".", false, true),
    ("[+-/]", ".", false, true),
    ("[+-/]", "/", false, false),
    ("[/-9]", "0", false, true),
    ("[/-9]", "/", false, false),
    ("[é]", "é", false, false),
    ("[é][é]", "é", false, true),
    // Classes: `]` and `-` first, `-` last, negation, POSIX names.
    ("[]]", "]", false, true),
    ("[!]]", "]", false, false),
    ("[-a]", "-", false, true),
    ("[a-]", "-", false, true),
    ("[a-c]", "b", false, true),
    ("[a-c]", "d", false, false),
    ("[^a-c]", "d", false, true),
    ("[[:digit:]]", "7", false, true),
    ("[[:digit:]]", "x", false, false),
    ("[[:foo:]]", "[", false, true),
    ("[[:abcdefgh:]]", "[", false, true),
    ("[[:abcdefgh:]]", "b]", false, false),
    ("[[:abcdefghi:]]", "b]", false, true),
    ("[[:Alpha:]]", "A]", false, true),
    // Alternatives: empty ones dropped, an empty group matches nothing.
    ("src/*.{rs,toml}", "src/a.rs", false, true),
    ("src/*.{rs,toml}", "src/b.toml", false, true),
    ("src/*.{rs,toml}", "src/c.md", false, false),
    ("a{,b}", "a", false, false),
    ("a{,b}", "ab", false, true),
    ("a{}b", "ab", false, true),
    ("{}", "", false, true),
    ("{a,{b,c}}d", "cd", false, true),
    // Escapes.
    ("docs/\\*.md", "docs/*.md", false, true),
    ("docs/\\*.md", "docs/a.md", false, false),
    ("\\{a,b\\}", "{a,b}", false, true),
    // Case folding is ASCII only.
    (".github/**", ".GitHub/Workflows/x.yml", true, true),
    (".github/**", ".GitHub/Workflows/x.yml", false, false),
    ("k", "K", true, true),
    ("k", "\u{212A}", true, false),
    ("s", "\u{17F}", true, false),
    ("\u{E9}", "\u{C9}", true, false),
    ("\u{3C3}", "\u{3A3}", true, false),
    ("[a-z]", "Q", true, true),
    ("[!a]", "A", true, false),
    ("**/codeowners", "docs/CODEOWNERS", true, true),
];

#[test]
fn table() {
    let mut failures = Vec::new();
    for &(pattern, path, ci, expected) in TABLE {
        let ours = product(pattern, ci).unwrap().is_match(path);
        let theirs = oracle(pattern, ci).unwrap().is_match(path);
        if ours != expected || theirs != expected {
            failures.push(format!(
                "{pattern:?} {path:?} ci={ci}: expected {expected}, ours {ours}, globset {theirs}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(TABLE.iter().filter(|c| c.3).count() >= 30);
    assert!(TABLE.iter().filter(|c| !c.3).count() >= 25);
}

#[test]
fn default_policy_patterns_agree() {
    let policy = guard::policy::Policy::embedded_default().unwrap();
    let patterns: Vec<&str> = policy
        .deny
        .iter()
        .chain(&policy.protect)
        .map(|p| p.pattern())
        .collect();
    assert!(patterns.len() >= 50, "{}", patterns.len());
    let mut checks = 0u64;
    let mut matches = 0u64;
    let mut all_paths = Vec::new();
    for pattern in &patterns {
        // Paths around the pattern: itself instantiated, under a directory, case variants.
        let mut paths = Vec::new();
        for dice in [[0u8], [1], [2], [5], [7]] {
            let p = instantiate(pattern, &dice);
            paths.push(format!("sub/dir/{p}"));
            paths.push(format!("{p}.md"));
            paths.push(p.to_uppercase());
            paths.push(p);
        }
        paths.extend(["src/lib.rs", ".github", "CODEOWNERS", "a/b/c/d.tf"].map(str::to_owned));
        all_paths.extend(paths.iter().cloned());
        for ci in [false, true] {
            let ours = product(pattern, ci).unwrap();
            let theirs = oracle(pattern, ci).unwrap();
            for path in &paths {
                let got = ours.is_match(path);
                assert_eq!(got, theirs.is_match(path), "{pattern:?} {path:?} ci={ci}");
                checks += 1;
                matches += u64::from(got);
            }
        }
    }
    assert!(matches * 5 >= checks, "{matches} of {checks}");
    assert!(matches * 10 <= checks * 9, "{matches} of {checks}");

    // The policy's first matching deny entry is the first entry whose own matcher (and, for
    // `X/**`, the matcher of `X`) matches: one pass over the compiled list answers as trying the
    // entries in turn would.
    let mut set = globset::GlobSetBuilder::new();
    let mut ours = Vec::new();
    for p in &policy.deny {
        let glob = GlobBuilder::new(p.pattern())
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(true)
            .build()
            .unwrap();
        set.add(glob);
        let itself = p
            .pattern()
            .strip_suffix("/**")
            .map(|base| oracle(base, true).unwrap());
        ours.push((oracle(p.pattern(), true).unwrap(), itself));
    }
    let set = set.build().unwrap();
    let mut denied = 0u64;
    for path in &all_paths {
        let first = ours.iter().position(|(glob, itself)| {
            glob.is_match(path) || itself.as_ref().is_some_and(|m| m.is_match(path))
        });
        let got = policy.denied(path);
        assert_eq!(got, first.map(|i| policy.deny[i].pattern()), "{path:?}");
        if itself_never_matches(&ours, path) {
            assert_eq!(first, set.matches(path).into_iter().min(), "{path:?}");
        }
        denied += u64::from(first.is_some());
    }
    assert!(
        denied * 5 >= all_paths.len() as u64,
        "{denied} of {}",
        all_paths.len()
    );
}

/// Whether no `X` of a deny pattern `X/**` matches `path` (where the policy and a plain set of its
/// patterns must agree).
fn itself_never_matches(
    ours: &[(globset::GlobMatcher, Option<globset::GlobMatcher>)],
    path: &str,
) -> bool {
    ours.iter()
        .all(|(_, itself)| !itself.as_ref().is_some_and(|m| m.is_match(path)))
}
