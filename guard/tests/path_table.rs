//! Table tests for `guard::path::validate_path`: a `valid` list that must come back unchanged, and
//! `invalid` lists where every case names its exact error. The `.git` disguises follow git's own
//! tests (t0060-path-utils.sh "match .gitmodules", t1014-read-tree-confusing.sh).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use guard::escape::display_bytes;
use guard::path::{
    PathError, PathLimits, ShortName, check_portable, component_count, fold_component,
    validate_path,
};
use guard::rules::RuleId;
use proptest::prelude::*;

fn git_dir(component: &str) -> PathError {
    PathError::GitDir {
        component: component.to_owned(),
    }
}

fn gitmodules(component: &str) -> PathError {
    PathError::DisguisedGitmodules {
        component: component.to_owned(),
    }
}

fn ctrl(ch: char) -> PathError {
    PathError::ControlChar { ch }
}

fn bidi(ch: char) -> PathError {
    PathError::BidiControl { ch }
}

fn valid() -> Vec<Vec<u8>> {
    let mut cases: Vec<Vec<u8>> = [
        "a",
        "README.md",
        "src/main.rs",
        "a/b/c/d.txt",
        "x/y.tar.gz",
        "a-b_c/0.9",
        "with space/file name.txt",
        " leading and trailing space ",
        "-dash",
        "file~",
        "a~b",
        "~",
        "foo:bar",
        ".hidden",
        "...hidden",
        "..gitmodules",
        "café/ñ.txt",
        "日本語.md",
        "emoji/🦀.rs",
        // A zero-width joiner inside an emoji sequence is ordinary text.
        "👨\u{200d}👩\u{200d}👧.txt",
        // Names that merely resemble `.git`.
        ".gitignore",
        ".gitattributes",
        ".github/workflows/ci.yml",
        ".gitx",
        ".gi",
        "git",
        "foo.git",
        "x.git/y",
        "..git",
        " .git",
        ".git x",
        ".git.txt",
        "git~",
        "git~0",
        "git~01",
        "git~1x",
        "git~1.txt",
        "xgit~1",
        "gi~1",
        "gitu~1",
        ".gitu\u{200c}",
        // Plain `.gitmodules` in any case is the policy's business, not a path error.
        ".gitmodules",
        ".GITMODULES",
        "sub/.GitModules",
        ".gitmodule",
        "gitmodules",
        ".gitmodulesa",
        ".gitmodules x",
        ".gitmodules .x",
        "GI7EBA~",
        "GI7EBA~0",
        "GI7EBA~~1",
        "GI7EBA~X",
        "Gx7EBA~1",
        "GI7EBX~1",
        "GI7EB~1",
        "GI7EB~01",
        "GI7EB~1X",
        "gitmod~",
        "gitmod~0",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    // Exactly at the default limits.
    cases.push(vec![b'c'; 255]);
    let mut at_limit = b"d/".repeat(2047);
    at_limit.extend_from_slice(b"dd");
    assert_eq!(at_limit.len(), 4096);
    cases.push(at_limit);
    cases
}

/// Cases rejected under rule `unsafe-path`.
fn invalid_unsafe_path() -> Vec<(Vec<u8>, PathError)> {
    let mut cases: Vec<(Vec<u8>, PathError)> = vec![
        (b"".to_vec(), PathError::Empty),
        // Not UTF-8: stray continuation byte, truncated sequence, lone C1 byte, overlong `/`.
        (
            b"bad\xff".to_vec(),
            PathError::NotUtf8 {
                offset: 3,
                byte: 0xff,
            },
        ),
        (
            b"caf\xc3".to_vec(),
            PathError::NotUtf8 {
                offset: 3,
                byte: 0xc3,
            },
        ),
        (
            b"\x80".to_vec(),
            PathError::NotUtf8 {
                offset: 0,
                byte: 0x80,
            },
        ),
        (
            b"a\xc0\xafb".to_vec(),
            PathError::NotUtf8 {
                offset: 1,
                byte: 0xc0,
            },
        ),
        (
            b"a/\xed\xa0\x80".to_vec(),
            PathError::NotUtf8 {
                offset: 2,
                byte: 0xed,
            },
        ),
        // Control characters: C0, DEL, C1.
        (b"a\x00b".to_vec(), ctrl('\0')),
        (b"tab\there".to_vec(), ctrl('\t')),
        (b"new\nline".to_vec(), ctrl('\n')),
        (b"cr\r".to_vec(), ctrl('\r')),
        (b"esc\x1b[31m".to_vec(), ctrl('\u{1b}')),
        (b"\x1f".to_vec(), ctrl('\u{1f}')),
        (b"del\x7f".to_vec(), ctrl('\u{7f}')),
        ("nel\u{85}".into(), ctrl('\u{85}')),
        ("\u{80}".into(), ctrl('\u{80}')),
        ("x/\u{9f}".into(), ctrl('\u{9f}')),
        // Backslash anywhere.
        (b"a\\b".to_vec(), PathError::Backslash),
        (b"\\".to_vec(), PathError::Backslash),
        (b".git\\hooks\\pre-commit".to_vec(), PathError::Backslash),
        (b"\\\\?\\pictures".to_vec(), PathError::Backslash),
        // Bidi embeddings, overrides and isolates.
        ("invoice\u{202e}fdp.exe".into(), bidi('\u{202e}')),
        ("\u{202a}a".into(), bidi('\u{202a}')),
        ("a/\u{202d}".into(), bidi('\u{202d}')),
        ("\u{2066}x\u{2069}".into(), bidi('\u{2066}')),
        ("x\u{2069}".into(), bidi('\u{2069}')),
        // The marks are bidi controls too (Unicode's Bidi_Control), also where they would
        // otherwise be an HFS+-ignorable disguise of `.git`.
        ("left\u{200e}mark".into(), bidi('\u{200e}')),
        ("\u{200f}right".into(), bidi('\u{200f}')),
        ("arabic\u{61c}letter".into(), bidi('\u{61c}')),
        (".GIT\u{200e}".into(), bidi('\u{200e}')),
        (".gi\u{200f}t".into(), bidi('\u{200f}')),
        // Structure.
        (b"/etc/passwd".to_vec(), PathError::Absolute),
        (b"/".to_vec(), PathError::Absolute),
        (b"//a".to_vec(), PathError::Absolute),
        (b"a/".to_vec(), PathError::TrailingSlash),
        (b"a/b/".to_vec(), PathError::TrailingSlash),
        (b"a//b".to_vec(), PathError::EmptyComponent),
        (b"a///b".to_vec(), PathError::EmptyComponent),
        (b".".to_vec(), PathError::CurrentDir),
        (b"./a".to_vec(), PathError::CurrentDir),
        (b"a/./b".to_vec(), PathError::CurrentDir),
        (b"a/.".to_vec(), PathError::CurrentDir),
        (b"..".to_vec(), PathError::ParentDir),
        (b"../a".to_vec(), PathError::ParentDir),
        (b"a/../../b".to_vec(), PathError::ParentDir),
        (b"a/b/..".to_vec(), PathError::ParentDir),
        // Order of checks: characters before structure, structure before components, components
        // left to right.
        (b"/../x".to_vec(), PathError::Absolute),
        (b"../a\\b".to_vec(), PathError::Backslash),
        (b".git/\x01".to_vec(), ctrl('\u{1}')),
        (".g\u{202e}it".into(), bidi('\u{202e}')),
        (b"../.git".to_vec(), PathError::ParentDir),
        (b"a//../b".to_vec(), PathError::EmptyComponent),
        (
            b"\xff/".to_vec(),
            PathError::NotUtf8 {
                offset: 0,
                byte: 0xff,
            },
        ),
    ];
    // Over the default limits, by one byte.
    let mut too_long = b"d/".repeat(2048);
    too_long.push(b'd');
    cases.push((
        too_long,
        PathError::TooLong {
            len: 4097,
            max: 4096,
        },
    ));
    cases.push((
        [b"a/".as_slice(), &[b'c'; 256], b"/b"].concat(),
        PathError::ComponentTooLong { len: 256, max: 255 },
    ));
    // The length check runs before anything reads the bytes.
    cases.push((
        vec![0xff; 5000],
        PathError::TooLong {
            len: 5000,
            max: 4096,
        },
    ));
    cases
}

/// Cases rejected under rule `git-dir`.
fn invalid_git_dir() -> Vec<(Vec<u8>, PathError)> {
    let cases: Vec<(&str, PathError)> = vec![
        // `.git` in any ASCII case, anywhere in the path.
        (".git", git_dir(".git")),
        (".GIT", git_dir(".GIT")),
        (".Git", git_dir(".Git")),
        (".gIt/config", git_dir(".gIt")),
        ("a/.git/hooks/pre-commit", git_dir(".git")),
        ("a/b/.GIT", git_dir(".GIT")),
        (".git/..", git_dir(".git")),
        // NTFS: trailing dots and spaces are trimmed.
        (".git.", git_dir(".git.")),
        (".git ", git_dir(".git ")),
        (".git. .", git_dir(".git. .")),
        (".git...", git_dir(".git...")),
        (".GIT  /x", git_dir(".GIT  ")),
        // NTFS alternate data streams.
        (
            ".git::$INDEX_ALLOCATION",
            git_dir(".git::$INDEX_ALLOCATION"),
        ),
        (
            ".git::$INDEX_ALLOCATION/hooks/x",
            git_dir(".git::$INDEX_ALLOCATION"),
        ),
        (".git:stream", git_dir(".git:stream")),
        (
            ".git...:alternate-stream",
            git_dir(".git...:alternate-stream"),
        ),
        (".git:", git_dir(".git:")),
        // NTFS 8.3 short name. git rejects `git~1` only; we reject any numeric tail.
        ("git~1", git_dir("git~1")),
        ("GIT~1", git_dir("GIT~1")),
        ("gIt~1/config", git_dir("gIt~1")),
        ("git~1 .", git_dir("git~1 .")),
        (
            "git~1::$INDEX_ALLOCATION",
            git_dir("git~1::$INDEX_ALLOCATION"),
        ),
        ("git~2", git_dir("git~2")),
        ("git~4", git_dir("git~4")),
        ("git~10", git_dir("git~10")),
        // HFS+ ignorable code points, each of git's `next_hfs_char` list (the bidi ones among them
        // are rejected earlier, see the unsafe-path table), anywhere in the name.
        (".g\u{200c}it", git_dir(".g\u{200c}it")),
        ("\u{200c}.Git", git_dir("\u{200c}.Git")),
        (".gI\u{200c}T", git_dir(".gI\u{200c}T")),
        (".GiT\u{200c}", git_dir(".GiT\u{200c}")),
        (".g\u{200d}it", git_dir(".g\u{200d}it")),
        ("\u{206a}.git", git_dir("\u{206a}.git")),
        (".\u{206b}git", git_dir(".\u{206b}git")),
        (".g\u{206c}it", git_dir(".g\u{206c}it")),
        (".gi\u{206d}t", git_dir(".gi\u{206d}t")),
        ("\u{206e}.gIt", git_dir("\u{206e}.gIt")),
        (".git\u{206f}", git_dir(".git\u{206f}")),
        ("\u{feff}.git", git_dir("\u{feff}.git")),
        (
            "sub/.g\u{200c}\u{200d}i\u{feff}t/x",
            git_dir(".g\u{200c}\u{200d}i\u{feff}t"),
        ),
        // HFS and NTFS disguises combined (stricter than git, which checks them separately).
        (".g\u{200c}it.", git_dir(".g\u{200c}it.")),
        ("g\u{200c}it~1", git_dir("g\u{200c}it~1")),
        // `.gitmodules` disguised; the plain name is valid (see `valid`).
        (".gitmodules.", gitmodules(".gitmodules.")),
        (".gitmodules ", gitmodules(".gitmodules ")),
        (".Gitmodules . ", gitmodules(".Gitmodules . ")),
        (".gitmoduleS..", gitmodules(".gitmoduleS..")),
        ("sub/.gitmodules  .", gitmodules(".gitmodules  .")),
        (".gitmodules:$DATA", gitmodules(".gitmodules:$DATA")),
        (".gitmodules::$DATA", gitmodules(".gitmodules::$DATA")),
        (
            ".giTmodUles:$DATA:$DATA",
            gitmodules(".giTmodUles:$DATA:$DATA"),
        ),
        ("gitmod~1", gitmodules("gitmod~1")),
        ("GITMOD~2", gitmodules("GITMOD~2")),
        ("giTmod~3", gitmodules("giTmod~3")),
        ("GITMOD~4", gitmodules("GITMOD~4")),
        ("gitmod~5", gitmodules("gitmod~5")),
        ("gitmod~4. ", gitmodules("gitmod~4. ")),
        ("gitmod~4 . :$DATA", gitmodules("gitmod~4 . :$DATA")),
        ("GI7EBA~1", gitmodules("GI7EBA~1")),
        ("gi7eba~9", gitmodules("gi7eba~9")),
        ("GI7EB~10", gitmodules("GI7EB~10")),
        ("GI7EB~99", gitmodules("GI7EB~99")),
        ("GI7E~100", gitmodules("GI7E~100")),
        ("GI7E~999", gitmodules("GI7E~999")),
        ("gi7eba~1 .", gitmodules("gi7eba~1 .")),
        ("gi7eba~1:x", gitmodules("gi7eba~1:x")),
        // git's fall-back rule allows an empty prefix; we match git.
        ("~1000000", gitmodules("~1000000")),
        ("~9999999", gitmodules("~9999999")),
        (".git\u{200c}modules", gitmodules(".git\u{200c}modules")),
        ("\u{feff}.gitmodules", gitmodules("\u{feff}.gitmodules")),
        ("\u{206e}.gItmodules", gitmodules("\u{206e}.gItmodules")),
    ];
    cases
        .into_iter()
        .map(|(input, err)| (input.as_bytes().to_vec(), err))
        .collect()
}

/// Limits other than the default: counted in bytes, total and per component.
fn invalid_with_small_limits() -> Vec<(&'static str, PathError)> {
    vec![
        ("abc/defgh", PathError::TooLong { len: 9, max: 8 }),
        ("abcd/efg", PathError::ComponentTooLong { len: 4, max: 3 }),
        ("éé", PathError::ComponentTooLong { len: 4, max: 3 }),
        ("a/bcde", PathError::ComponentTooLong { len: 4, max: 3 }),
    ]
}

const SMALL: PathLimits = PathLimits {
    max_path_bytes: 8,
    max_component_bytes: 3,
};

fn check_invalid(cases: &[(Vec<u8>, PathError)], limits: &PathLimits, rule: RuleId) -> Vec<String> {
    let mut failures = Vec::new();
    for (input, expected) in cases {
        let got = validate_path(input, limits);
        if got.as_ref() != Err(expected) {
            failures.push(format!(
                "{}: expected {expected:?}, got {got:?}",
                display_bytes(input)
            ));
            continue;
        }
        if expected.rule() != rule {
            failures.push(format!(
                "{}: rule {} instead of {rule}",
                display_bytes(input),
                expected.rule()
            ));
        }
        let message = expected.to_string();
        if message.is_empty() || message.chars().any(char::is_control) {
            failures.push(format!(
                "{}: message {message:?} is not one clean line",
                display_bytes(input)
            ));
        }
    }
    failures
}

#[test]
fn valid_paths_come_back_unchanged() {
    let limits = PathLimits::default();
    let mut failures = Vec::new();
    for input in valid() {
        let got = validate_path(&input, &limits);
        if got != std::str::from_utf8(&input).map_err(|_| PathError::Empty) {
            failures.push(format!("{}: {got:?}", display_bytes(&input)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} valid cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn valid_paths_under_small_limits() {
    for input in ["ab/c/def", "abc", "a/b/c/d", "é/é"] {
        assert_eq!(validate_path(input.as_bytes(), &SMALL), Ok(input));
    }
}

#[test]
fn invalid_paths_report_their_exact_error_under_unsafe_path() {
    let failures = check_invalid(
        &invalid_unsafe_path(),
        &PathLimits::default(),
        RuleId::UnsafePath,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn invalid_paths_report_their_exact_error_under_git_dir() {
    let failures = check_invalid(&invalid_git_dir(), &PathLimits::default(), RuleId::GitDir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn invalid_paths_under_small_limits() {
    let cases: Vec<(Vec<u8>, PathError)> = invalid_with_small_limits()
        .into_iter()
        .map(|(input, err)| (input.as_bytes().to_vec(), err))
        .collect();
    let failures = check_invalid(&cases, &SMALL, RuleId::UnsafePath);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_variant_is_covered() {
    let variants: BTreeSet<String> = invalid_unsafe_path()
        .iter()
        .chain(invalid_git_dir().iter())
        .map(|(_, err)| {
            format!("{err:?}")
                .split([' ', '{', '('])
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let expected = [
        "Absolute",
        "Backslash",
        "BidiControl",
        "ComponentTooLong",
        "ControlChar",
        "CurrentDir",
        "DisguisedGitmodules",
        "Empty",
        "EmptyComponent",
        "GitDir",
        "NotUtf8",
        "ParentDir",
        "TooLong",
        "TrailingSlash",
    ];
    assert_eq!(variants, expected.iter().map(|s| (*s).to_owned()).collect());
    let portable: BTreeSet<String> = portable_invalid()
        .iter()
        .map(|(_, err)| {
            format!("{err:?}")
                .split([' ', '{'])
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        portable,
        ["ReservedName", "StreamSeparator", "TrailingDotOrSpace"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    );
}

// ---- portable paths (the `portable-paths` policy switch) ----

/// Names Windows checks out unchanged, several one character away from a reserved form.
const PORTABLE: &[&str] = &[
    "src/lib.rs",
    " leading space",
    "a b/c d.txt",
    "console.log",
    "CONFIG",
    "connect.rs",
    "COM",
    "com0",
    "com10",
    "COM1x",
    "lpt0.txt",
    "lpt10",
    "LPT\u{b9}0",
    "nul_handler.rs",
    "null",
    "auxiliary.md",
    "prn2",
    "x.nul",
    "my.con",
    "docs/con-rules.md",
    ".hidden",
    "...x",
    "a.b.c",
    "conout",
    "日本語.md",
];

/// Each name with the exact error `check_portable` reports.
fn portable_invalid() -> Vec<(&'static str, PathError)> {
    let stream = |c: &str| PathError::StreamSeparator {
        component: c.to_owned(),
    };
    let reserved = |c: &str| PathError::ReservedName {
        component: c.to_owned(),
    };
    let trailing = |c: &str| PathError::TrailingDotOrSpace {
        component: c.to_owned(),
    };
    vec![
        ("a:b", stream("a:b")),
        ("docs/a:b.md", stream("a:b.md")),
        (
            ".github::$INDEX_ALLOCATION/x",
            stream(".github::$INDEX_ALLOCATION"),
        ),
        ("file.txt:$DATA", stream("file.txt:$DATA")),
        ("C:", stream("C:")),
        ("CON", reserved("CON")),
        ("con", reserved("con")),
        ("PRN", reserved("PRN")),
        ("aux", reserved("aux")),
        ("NUL", reserved("NUL")),
        ("nul.txt", reserved("nul.txt")),
        ("NUL.tar.gz", reserved("NUL.tar.gz")),
        ("src/Aux.d/mod.rs", reserved("Aux.d")),
        ("COM1", reserved("COM1")),
        ("com9.log", reserved("com9.log")),
        ("LPT1", reserved("LPT1")),
        ("lpt9", reserved("lpt9")),
        ("COM\u{b9}", reserved("COM\u{b9}")),
        ("com\u{b2}.txt", reserved("com\u{b2}.txt")),
        ("LPT\u{b3}", reserved("LPT\u{b3}")),
        ("nul .txt", reserved("nul .txt")),
        ("CONIN$", reserved("CONIN$")),
        ("conout$.log", reserved("conout$.log")),
        ("a.", trailing("a.")),
        ("a ", trailing("a ")),
        ("dir./x", trailing("dir.")),
        ("x. .", trailing("x. .")),
        ("CON.", trailing("CON.")),
    ]
}

#[test]
fn portable_names_pass() {
    for name in PORTABLE {
        assert_eq!(check_portable(name), Ok(()), "{name:?}");
    }
}

#[test]
fn non_portable_names_report_their_exact_error_under_unsafe_path() {
    for (name, expected) in portable_invalid() {
        assert_eq!(check_portable(name).as_ref(), Err(&expected), "{name:?}");
        assert_eq!(expected.rule(), RuleId::UnsafePath, "{name:?}");
        let message = expected.to_string();
        assert!(!message.chars().any(char::is_control), "{message}");
    }
}

// ---- Windows 8.3 short names ----

/// (component, long name, whether Windows could resolve the component to the long name).
const SHORT_NAMES: &[(&str, &str, bool)] = &[
    ("GITHUB~1", ".github", true),
    ("github~1", ".github", true),
    ("GITHU~10", ".github", true),
    ("GITHUB~2", ".GitHub", true),
    ("GI3F2A~1", ".github", true),
    ("GITHUB~1.", ".github", true),
    ("VSCODE~1", ".vscode", true),
    ("GITLAB~1.YML", ".gitlab-ci.yml", true),
    ("GITLAB~1.Y", ".gitlab-ci.yml", true),
    ("PRE-CO~1.YAM", ".pre-commit-config.yaml", true),
    ("AZURE-~1.YML", "azure-pipelines.yml", true),
    ("PRODUC~1.TFV", "production.tfvars", true),
    ("CODEOW~1", "CODEOWNERS", true),
    ("CLOUDF~1", "cloudformation", true),
    ("PULUMI~1.YAM", "Pulumi.prod.yaml", true),
    ("GITLAB~1.JSO", ".gitlab-ci.yml", false),
    ("GITHUX~1", ".github", false),
    ("README~1.md", ".github", false),
    ("GI3G2A~1", ".github", false),
    ("VSCODE~1", ".github", false),
];

#[test]
fn short_names_resolve_only_to_long_names_windows_could_derive_them_from() {
    for (short, long, want) in SHORT_NAMES {
        let parsed = ShortName::parse(short).unwrap_or_else(|| panic!("{short} is a short name"));
        assert_eq!(parsed.may_name(long), *want, "{short} for {long}");
    }
}

#[test]
fn only_the_short_name_form_parses() {
    for name in [
        "GITHUB~1",
        "A~1",
        "~1",
        "ABCDE~99",
        "ABCDEF~1.TXT",
        "x~12.y",
        "GIT~1 .",
    ] {
        assert!(ShortName::parse(name).is_some(), "{name}");
    }
    for name in [
        "GITHUB~0",
        "GITHUB~",
        "GITHUB~1X",
        "ABCDEFGHI~1",
        "ABCDEFG~9",
        "ABC~1.TEXT",
        "file~",
        "~",
        "a~b",
        "caf\u{e9}~1",
        "README.md",
    ] {
        assert!(ShortName::parse(name).is_none(), "{name}");
    }
}

#[test]
fn folding_follows_case_normalization_and_ntfs_trailing_characters() {
    assert_eq!(fold_component(b"HEAD"), "head");
    assert_eq!(fold_component(b"Objects. "), "objects");
    assert_eq!(
        fold_component("Caf\u{e9}".as_bytes()),
        fold_component("cafe\u{301}".as_bytes())
    );
    assert_eq!(fold_component(".g\u{200c}it".as_bytes()), ".git");
    assert_ne!(fold_component(b"a"), fold_component(b"b"));
    assert_eq!(component_count(b"a/b/c"), 3);
    assert_eq!(component_count(b"a"), 1);
}

#[test]
fn every_disguise_of_dot_git_is_valid_one_character_away() {
    // Guards against a detector that matches too much: each of these differs from a rejected
    // disguise by one character.
    for input in [
        ".gitt",
        "git~1a",
        ".git.x",
        ".git x",
        "gitmod~1x",
        "gi7eba~1x",
        "gi7eba~",
        "~100000",
    ] {
        assert_eq!(
            validate_path(input.as_bytes(), &PathLimits::default()),
            Ok(input),
            "{input:?}"
        );
    }
}

fn component() -> impl Strategy<Value = String> {
    "[a-z0-9_-]{1,12}"
}

proptest! {
    #[test]
    fn plain_components_are_valid(parts in prop::collection::vec(component(), 1..10)) {
        let path = parts.join("/");
        prop_assert_eq!(validate_path(path.as_bytes(), &PathLimits::default()), Ok(path.as_str()));
    }

    #[test]
    fn a_parent_dir_component_anywhere_is_rejected(
        parts in prop::collection::vec(component(), 1..10),
        at in any::<prop::sample::Index>(),
    ) {
        let mut parts = parts;
        let at = at.index(parts.len() + 1);
        parts.insert(at, "..".to_owned());
        let path = parts.join("/");
        prop_assert_eq!(validate_path(path.as_bytes(), &PathLimits::default()), Err(PathError::ParentDir));
    }
}
