//! Data documents carry exact values. For every path the path rules accept, writing it into a
//! verdict document and reading the document back gives the same bytes; every byte string
//! survives as a [`RepoPath`]; and the characters the rules refuse by design (bidi controls, C0
//! and C1 controls) stay refused as `unsafe-path`, however they are placed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use guard::output::json_v1::VerdictDoc;
use guard::path::{PathLimits, validate_path};
use guard::repo_path::RepoPath;
use guard::rules::RuleId;
use guard::verdict::{ChangeKind, CheckMode, FileEntry, Verdict, Violation};
use proptest::prelude::*;

/// Components that real projects use, beside plain ASCII: Persian spelled with a ZERO WIDTH
/// NON-JOINER, emoji sequences joined by ZERO WIDTH JOINERs, variation selectors, skin-tone
/// modifiers, combining marks (decomposed accents), right-to-left scripts without bidi controls,
/// CJK, Devanagari with a virama.
const REAL_WORLD: &[&str] = &[
    "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}",
    "\u{6a9}\u{62a}\u{627}\u{628}\u{200c}\u{647}\u{627}",
    "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
    "\u{1f3f3}\u{fe0f}\u{200d}\u{1f308}",
    "\u{263a}\u{fe0f}",
    "\u{1f44d}\u{1f3fd}",
    "e\u{301}te\u{301}",
    "nai\u{308}ve",
    "\u{5e9}\u{5dc}\u{5d5}\u{5dd}",
    "\u{627}\u{644}\u{639}\u{631}\u{628}\u{64a}\u{629}",
    "\u{4e2d}\u{6587}",
    "\u{65e5}\u{672c}\u{8a9e}",
    "\u{d55c}\u{ae00}",
    "\u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}",
    "caf\u{e9}",
    "with space",
    "quote\"d",
    "semi;colon",
    "percent%20",
    "README.md",
    "src",
];

/// Characters the path rules refuse by design, each with the rule that refuses it.
const REFUSED: &[char] = &[
    '\u{1}', '\u{7}', '\u{1b}', '\u{7f}', // C0 and DEL
    '\u{80}', '\u{85}', '\u{9b}', '\u{9f}', // C1
    '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', // embeddings and overrides
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}', // isolates
    '\u{200e}', '\u{200f}', '\u{61c}', // marks
];

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(REAL_WORLD).prop_map(str::to_owned),
        2 => (
            proptest::sample::select(REAL_WORLD),
            proptest::sample::select(REAL_WORLD),
            "[a-z0-9._-]{0,6}",
        )
            .prop_map(|(a, b, c)| format!("{a}{c}{b}")),
        1 => any::<String>().prop_map(|s| s.chars().filter(|c| *c != '/').take(12).collect()),
    ]
}

fn path() -> impl Strategy<Value = String> {
    proptest::collection::vec(component(), 1..5).prop_map(|parts| parts.join("/"))
}

fn verdict_with(path: &[u8]) -> Verdict {
    Verdict {
        diff_sha256: contract::ids::Sha256Hex::of(b""),
        mode: CheckMode::GitCrossChecked,
        files: vec![FileEntry {
            status: ChangeKind::Renamed,
            old_path: Some(RepoPath::from(path)),
            new_path: Some(RepoPath::from(path)),
            old_mode: Some(0o100644),
            new_mode: Some(0o100644),
            line: 1,
        }],
        violations: vec![
            Violation::new(RuleId::OutOfScope, "a message")
                .with_path(path)
                .with_old_path(path),
        ],
        scope: vec!["**".into()],
        unmatched_scope: Vec::new(),
        protected: Vec::new(),
        exclusions: Vec::new(),
    }
}

/// Writes the verdict as the guard does and reads it back as its consumers do.
fn through_the_document(verdict: &Verdict) -> VerdictDoc {
    let json = guard::output::json_v1::document(verdict).to_json().unwrap();
    serde_json::from_str(&json).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn accepted_paths_are_the_identity_through_the_verdict_document(path in path()) {
        let Ok(valid) = validate_path(path.as_bytes(), &PathLimits::default()) else {
            return Ok(());
        };
        let doc = through_the_document(&verdict_with(valid.as_bytes()));
        let file = &doc.files[0];
        let violation = &doc.violations[0];
        for found in [&file.old_path, &file.new_path, &violation.path, &violation.old_path] {
            prop_assert_eq!(found.as_ref().map(RepoPath::as_bytes), Some(path.as_bytes()));
        }
        // The JSON holds the text itself (JSON escapes only), never the display form.
        let json = guard::output::json_v1::document(&verdict_with(valid.as_bytes())).to_json().unwrap();
        let as_string: serde_json::Value = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(as_string["files"][0]["new_path"].as_str(), Some(path.as_str()));
    }

    #[test]
    fn every_byte_string_survives_the_verdict_document(bytes in proptest::collection::vec(any::<u8>(), 1..64)) {
        let doc = through_the_document(&verdict_with(&bytes));
        prop_assert_eq!(doc.files[0].new_path.as_ref().map(RepoPath::as_bytes), Some(bytes.as_slice()));
        prop_assert_eq!(doc.violations[0].path.as_ref().map(RepoPath::as_bytes), Some(bytes.as_slice()));
    }

    #[test]
    fn refused_characters_stay_unsafe_path_wherever_they_stand(
        path in path(),
        refused in proptest::sample::select(REFUSED),
        at in any::<proptest::sample::Index>(),
    ) {
        let chars: Vec<char> = path.chars().collect();
        let cut = at.index(chars.len() + 1);
        let hostile: String = chars[..cut].iter().chain([refused].iter()).chain(chars[cut..].iter()).collect();
        let err = validate_path(hostile.as_bytes(), &PathLimits::default()).unwrap_err();
        prop_assert_eq!(err.rule(), RuleId::UnsafePath, "{:?}: {}", hostile, err);
    }
}

/// The two names that once failed the build-test job: accepted by the path rules, and exact in
/// the document.
#[test]
fn persian_and_emoji_names_are_accepted_and_exact() {
    for name in [
        "docs/\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.md",
        "docs/\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}.md",
    ] {
        assert_eq!(
            validate_path(name.as_bytes(), &PathLimits::default()),
            Ok(name)
        );
        let doc = through_the_document(&verdict_with(name.as_bytes()));
        assert_eq!(doc.files[0].new_path, Some(RepoPath::from(name)));
    }
}
