//! The dispatch inputs: table tests (each invalid case asserts its exact error), parity with the
//! bash validation the workflow's jobs ran before `guard inputs`, and the subcommand itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

#[path = "../../tests/support/git.rs"]
mod git_support;

use guard::inputs::{
    DiffRef, DiffSource, DispatchMac, InputError, RawInputs, Scope, TaskId, validate,
};

const BASE: &str = "0123456789abcdef0123456789abcdef01234567";
const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn good() -> RawInputs<'static> {
    RawInputs {
        task_id: "T-123",
        base_sha: BASE,
        expected_diff_sha256: SHA,
        declared_scope: "src/**,tests/*.rs",
        diff_b64: "ZGlmZgo=",
        diff_ref: "",
        dispatch_mac: "",
        pr_title: "",
        pr_description: "",
    }
}

#[test]
fn task_ids() {
    for valid in [
        "a",
        "T-123",
        "0",
        "a.b_c-d",
        &"x".repeat(64),
        "a.locks",
        "a.b.c",
    ] {
        assert_eq!(TaskId::parse(valid).unwrap().as_str(), valid);
    }
    let syntax = |s: &str| InputError::TaskIdSyntax { found: s.into() };
    let refname = |s: &str| InputError::TaskIdRefName { found: s.into() };
    for (input, expected) in [
        ("", syntax("")),
        (".a", syntax(".a")),
        ("-a", syntax("-a")),
        ("_a", syntax("_a")),
        ("a b", syntax("a b")),
        ("a/b", syntax("a/b")),
        ("a\n", syntax("a\n")),
        ("é", syntax("é")),
        ("a:b", syntax("a:b")),
        (&"x".repeat(65), syntax(&"x".repeat(65))),
        ("a..b", refname("a..b")),
        ("a.", refname("a.")),
        ("a.lock", refname("a.lock")),
    ] {
        assert_eq!(TaskId::parse(input), Err(expected), "{input:?}");
    }
}

#[test]
fn hashes() {
    let raw = RawInputs {
        base_sha: "0123456789ABCDEF0123456789abcdef01234567",
        expected_diff_sha256: &SHA[..63],
        ..good()
    };
    assert_eq!(
        validate(&raw).unwrap_err(),
        vec![
            InputError::BaseSha {
                found: raw.base_sha.into()
            },
            InputError::DiffSha256 {
                found: raw.expected_diff_sha256.into()
            },
        ]
    );
}

#[test]
fn scopes() {
    for (input, globs) in [
        ("src/**", vec!["src/**"]),
        ("src/**,tests/*.rs", vec!["src/**", "tests/*.rs"]),
        ("src/**\ntests/*.rs\n", vec!["src/**", "tests/*.rs"]),
        (
            " src/** ,\r\n\t tests/*.rs\x0b\x0c",
            vec!["src/**", "tests/*.rs"],
        ),
        (",,src/**,,\n\n", vec!["src/**"]),
        ("{a,b}", vec!["{a,b}"]),
        (
            "src/*.{rs,toml},docs/**",
            vec!["src/*.{rs,toml}", "docs/**"],
        ),
        ("a\\,b,c", vec!["a\\,b", "c"]),
        ("{a,{b,c}},d", vec!["{a,{b,c}}", "d"]),
        ("}a,b", vec!["}a", "b"]),
    ] {
        assert_eq!(Scope::parse(input).unwrap().globs(), globs, "{input:?}");
    }
    let entry = |index, s: &str| InputError::ScopeEntry {
        index,
        found: s.into(),
    };
    let count = |count| InputError::ScopeCount { count };
    for (input, expected) in [
        ("", vec![count(0)]),
        (" , \n ", vec![count(0)]),
        ("a b", vec![entry(1, "a b")]),
        ("ok,a\tb", vec![entry(2, "a\tb")]),
        ("ok,é", vec![entry(2, "é")]),
        ("a\u{7f}", vec![entry(1, "a\u{7f}")]),
        (&"a".repeat(513), vec![entry(1, &"a".repeat(513))]),
        (&vec!["x"; 101].join(","), vec![count(101)]),
    ] {
        assert_eq!(Scope::parse(input).unwrap_err(), expected, "{input:?}");
    }
    assert_eq!(
        Scope::parse(&vec!["x"; 100].join(","))
            .unwrap()
            .globs()
            .len(),
        100
    );
    assert_eq!(Scope::parse(&"a".repeat(512)).unwrap().globs().len(), 1);
}

#[test]
fn scope_from_separate_globs_round_trips() {
    let globs = vec!["src/**".to_owned(), "docs/*.md".to_owned()];
    let scope = Scope::from_globs(&globs).unwrap();
    assert_eq!(Scope::parse(&scope.to_input()).unwrap(), scope);
    for bad in ["a,b", "a\nb", " a", "", "a b"] {
        let err = Scope::from_globs(&["ok".to_owned(), bad.to_owned()]).unwrap_err();
        assert_eq!(
            err,
            vec![InputError::ScopeEntry {
                index: 2,
                found: bad.into()
            }],
            "{bad:?}"
        );
    }
}

#[test]
fn diff_refs() {
    for valid in [
        "agent-team-diffs/T-1",
        "agent-team-diffs/a/b.c_d",
        &format!("agent-team-diffs/{}", "x".repeat(200)),
    ] {
        assert_eq!(DiffRef::parse(valid).unwrap().as_str(), valid);
    }
    let syntax = |s: &str| InputError::DiffRefSyntax { found: s.into() };
    let name = |s: &str| InputError::DiffRefName { found: s.into() };
    for (input, expected) in [
        ("agent-team-diffs/", syntax("agent-team-diffs/")),
        ("main", syntax("main")),
        (
            "refs/heads/agent-team-diffs/x",
            syntax("refs/heads/agent-team-diffs/x"),
        ),
        ("agent-team-diffs/a b", syntax("agent-team-diffs/a b")),
        ("agent-team-diffs/a~1", syntax("agent-team-diffs/a~1")),
        ("agent-team-diffs/a:b", syntax("agent-team-diffs/a:b")),
        (
            &format!("agent-team-diffs/{}", "x".repeat(201)),
            syntax(&format!("agent-team-diffs/{}", "x".repeat(201))),
        ),
        ("agent-team-diffs/a..b", name("agent-team-diffs/a..b")),
        ("agent-team-diffs/a//b", name("agent-team-diffs/a//b")),
        ("agent-team-diffs/a/", name("agent-team-diffs/a/")),
        ("agent-team-diffs/a.lock", name("agent-team-diffs/a.lock")),
        ("agent-team-diffs/a.", name("agent-team-diffs/a.")),
        // Stricter than the bash it replaces, as git itself is: per component.
        ("agent-team-diffs/.hidden", name("agent-team-diffs/.hidden")),
        (
            "agent-team-diffs/a.lock/b",
            name("agent-team-diffs/a.lock/b"),
        ),
    ] {
        assert_eq!(DiffRef::parse(input), Err(expected), "{input:?}");
    }
}

#[test]
fn diff_sources() {
    let inputs = validate(&good()).unwrap();
    assert_eq!(inputs.diff, DiffSource::Base64("ZGlmZgo=".into()));
    let by_ref = RawInputs {
        diff_b64: "",
        diff_ref: "agent-team-diffs/T-123",
        ..good()
    };
    assert!(matches!(
        validate(&by_ref).unwrap().diff,
        DiffSource::Ref(_)
    ));
    let wrapped = RawInputs {
        diff_b64: "ZGlm\nZgo=\r\n",
        ..good()
    };
    assert!(validate(&wrapped).is_ok());

    let both = RawInputs {
        diff_ref: "agent-team-diffs/T-123",
        ..good()
    };
    assert_eq!(
        validate(&both).unwrap_err(),
        vec![InputError::DiffSource { count: 2 }]
    );
    let none = RawInputs {
        diff_b64: "",
        ..good()
    };
    assert_eq!(
        validate(&none).unwrap_err(),
        vec![InputError::DiffSource { count: 0 }]
    );
    let not_b64 = RawInputs {
        diff_b64: "ZGlm-Zgo_",
        ..good()
    };
    assert_eq!(
        validate(&not_b64).unwrap_err(),
        vec![InputError::DiffB64 {
            found: "ZGlm-Zgo_".into()
        }]
    );
}

#[test]
fn dispatch_macs() {
    let nonce = "0123456789abcdef0123456789abcdef";
    let value = format!("v2:{nonce}:1772370000:{SHA}");
    let mac = DispatchMac::parse(&value).unwrap();
    assert_eq!(mac.to_input(), value);
    assert_eq!(mac.nonce().as_str(), nonce);
    assert_eq!(mac.expires_at(), 1_772_370_000);
    let inputs = validate(&RawInputs {
        dispatch_mac: &value,
        ..good()
    })
    .unwrap();
    assert_eq!(inputs.dispatch_mac, Some(mac));
    assert_eq!(validate(&good()).unwrap().dispatch_mac, None);
    for bad in [
        SHA.to_owned(),
        format!("v2:{SHA}"),
        format!("V2:{nonce}:1:{SHA}"),
        format!("v2:{nonce}:1:{}", SHA.to_ascii_uppercase()),
        format!("v2:{nonce}:1:{}", &SHA[..63]),
        format!("v2:{nonce}:1:{SHA}0"),
        format!("v2:{nonce}:01:{SHA}"),
        format!("v2:{nonce}:-1:{SHA}"),
        format!("v2:{nonce}::{SHA}"),
        format!("v2:{}:1:{SHA}", &nonce[..31]),
        format!("v2:{nonce}:1:{SHA}:x"),
        format!("v2: {nonce}:1:{SHA}"),
    ] {
        assert_eq!(
            DispatchMac::parse(&bad),
            Err(InputError::DispatchMac { found: bad.clone() }),
            "{bad:?}"
        );
    }
    // The retired version is refused with its own message, whatever follows the prefix.
    let v1 = format!("v1:{SHA}");
    assert_eq!(DispatchMac::parse(&v1), Err(InputError::DispatchMacV1));
    assert!(
        InputError::DispatchMacV1
            .to_string()
            .contains("version 1, which binds no nonce, expiry or workflow")
    );
}

#[test]
fn agent_words_are_bounded() {
    let long_title = "t".repeat(257);
    let long_description = "d".repeat(4001);
    for (title, description, ok) in [
        ("Fix the parser", "Why:\n\tit broke", true),
        (long_title.as_str(), "", false),
        ("a\nb", "", false),
        ("", long_description.as_str(), false),
        ("", "bell\u{7}", false),
        ("", "", true),
    ] {
        let raw = RawInputs {
            pr_title: title,
            pr_description: description,
            ..good()
        };
        assert_eq!(validate(&raw).is_ok(), ok, "{title:?} {description:?}");
    }
}

#[test]
fn every_error_is_reported_in_input_order() {
    let raw = RawInputs {
        task_id: "bad id",
        base_sha: "HEAD",
        expected_diff_sha256: "",
        declared_scope: "",
        diff_b64: "",
        diff_ref: "",
        dispatch_mac: "x",
        pr_title: "",
        pr_description: "",
    };
    let errors: Vec<String> = validate(&raw)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        [
            "task_id must match [A-Za-z0-9][A-Za-z0-9._-]{0,63} (got \"bad id\")",
            "base_sha must be a full 40-hex commit id (got \"HEAD\")",
            "expected_diff_sha256 must be 64 lowercase hex digits (got \"\")",
            "set exactly one of diff_b64 and diff_ref (0 set)",
            "declared_scope must name 1 to 100 globs (0 named)",
            "dispatch_mac must be 'v2:', a 32-hex nonce, ':', the expiry (Unix seconds), ':' and a 64-hex tag (got \"x\")",
        ]
    );
}

#[test]
fn messages_escape_and_bound_the_value() {
    let hostile = format!("a\n::add-mask::x\u{1b}[31m{}", "y".repeat(200));
    let message = TaskId::parse(&hostile).unwrap_err().to_string();
    assert!(
        !message.contains('\n') && !message.contains('\u{1b}'),
        "{message}"
    );
    assert!(
        message.contains("\\u{a}::add-mask::x\\u{1b}[31m"),
        "{message}"
    );
    assert!(message.ends_with("...\")"), "{message}");
    assert!(message.len() < 250, "{}", message.len());
}

// ---------------------------------------------------------------------------------------------
// Parity with the bash validation the workflow's jobs ran (kept here verbatim as the reference
// these rules replace).

const BASH_VALIDATION: &str = r#"
export LC_ALL=C
fail() { printf '::error::%s\n' "$1"; exit 1; }
[[ "$TASK_ID" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]] || fail "task_id must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}"
[[ "$TASK_ID" != *..* && "$TASK_ID" != *. && "$TASK_ID" != *.lock ]] || fail "task_id must not contain '..' nor end in '.' or '.lock'"
[[ "$BASE_SHA" =~ ^[0-9a-f]{40}$ ]] || fail "base_sha must be a full 40-hex commit id"
[[ "$EXPECTED_DIFF_SHA256" =~ ^[0-9a-f]{64}$ ]] || fail "expected_diff_sha256 must be 64 lowercase hex digits"
sources=0
if [[ -n "$DIFF_B64" ]]; then
  sources=$((sources + 1))
  [[ "$DIFF_B64" =~ ^[A-Za-z0-9+/=[:space:]]+$ ]] || fail "diff_b64 is not base64"
fi
if [[ -n "$DIFF_REF" ]]; then
  sources=$((sources + 1))
  [[ "$DIFF_REF" =~ ^agent-team-diffs/[A-Za-z0-9._/-]{1,200}$ ]] || fail "diff_ref must be a branch agent-team-diffs/[A-Za-z0-9._/-]+"
  [[ "$DIFF_REF" != *..* && "$DIFF_REF" != *//* && "$DIFF_REF" != */ && "$DIFF_REF" != *.lock ]] || fail "diff_ref is not a valid branch name"
fi
(( sources == 1 )) || fail "set exactly one of diff_b64 and diff_ref"
globs=0
while IFS= read -r glob; do
  glob="${glob#"${glob%%[![:space:]]*}"}"
  glob="${glob%"${glob##*[![:space:]]}"}"
  if [[ -z "$glob" ]]; then continue; fi
  [[ "$glob" =~ ^[[:graph:]]{1,512}$ ]] || fail "declared_scope entries must be printable ASCII without spaces"
  globs=$((globs + 1))
done < <(printf '%s\n' "$DECLARED_SCOPE" | tr ',' '\n')
(( globs >= 1 && globs <= 100 )) || fail "declared_scope must name 1 to 100 globs"
"#;

fn bash_accepts(raw: &RawInputs<'_>) -> bool {
    let status = Command::new("bash")
        .arg("-c")
        .arg(BASH_VALIDATION)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TASK_ID", raw.task_id)
        .env("BASE_SHA", raw.base_sha)
        .env("EXPECTED_DIFF_SHA256", raw.expected_diff_sha256)
        .env("DECLARED_SCOPE", raw.declared_scope)
        .env("DIFF_B64", raw.diff_b64)
        .env("DIFF_REF", raw.diff_ref)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("bash runs (it is the reference of this test)");
    status.success()
}

#[test]
fn agrees_with_the_bash_it_replaces() {
    let long_scope = vec!["x"; 101].join(",");
    let max_scope = vec!["x"; 100].join("\n");
    let long_ref = format!("agent-team-diffs/{}", "x".repeat(201));
    let variants: Vec<RawInputs<'_>> = vec![
        good(),
        RawInputs {
            task_id: "a..b",
            ..good()
        },
        RawInputs {
            task_id: "a.lock",
            ..good()
        },
        RawInputs {
            task_id: "-x",
            ..good()
        },
        RawInputs {
            task_id: "x y",
            ..good()
        },
        RawInputs {
            task_id: "é",
            ..good()
        },
        RawInputs {
            base_sha: &SHA[..40],
            ..good()
        },
        RawInputs {
            base_sha: "0123456789ABCDEF0123456789abcdef01234567",
            ..good()
        },
        RawInputs {
            expected_diff_sha256: BASE,
            ..good()
        },
        RawInputs {
            declared_scope: "",
            ..good()
        },
        RawInputs {
            declared_scope: " \t, \n",
            ..good()
        },
        RawInputs {
            declared_scope: "a b",
            ..good()
        },
        RawInputs {
            declared_scope: " src/** \r\n tests/** \x0b",
            ..good()
        },
        RawInputs {
            declared_scope: "é/**",
            ..good()
        },
        RawInputs {
            declared_scope: &long_scope,
            ..good()
        },
        RawInputs {
            declared_scope: &max_scope,
            ..good()
        },
        RawInputs {
            diff_b64: "",
            ..good()
        },
        RawInputs {
            diff_b64: "abc-",
            ..good()
        },
        RawInputs {
            diff_b64: "YWJj\nZGVm\n",
            ..good()
        },
        RawInputs {
            diff_ref: "agent-team-diffs/T-123",
            ..good()
        },
        RawInputs {
            diff_b64: "",
            diff_ref: "agent-team-diffs/T-123",
            ..good()
        },
        RawInputs {
            diff_b64: "",
            diff_ref: "agent-team-diffs/a..b",
            ..good()
        },
        RawInputs {
            diff_b64: "",
            diff_ref: "agent-team-diffs/a//b",
            ..good()
        },
        RawInputs {
            diff_b64: "",
            diff_ref: "agent-team-diffs/a.lock",
            ..good()
        },
        RawInputs {
            diff_b64: "",
            diff_ref: "main",
            ..good()
        },
        RawInputs {
            diff_b64: "",
            diff_ref: &long_ref,
            ..good()
        },
    ];
    for raw in &variants {
        assert_eq!(
            validate(raw).is_ok(),
            bash_accepts(raw),
            "rust and bash disagree on {raw:?}"
        );
    }
    // Where the Rust rules are deliberately stricter (git itself refuses these branch names).
    for diff_ref in [
        "agent-team-diffs/.x",
        "agent-team-diffs/a.lock/b",
        "agent-team-diffs/a.",
    ] {
        let raw = RawInputs {
            diff_b64: "",
            diff_ref,
            ..good()
        };
        assert!(validate(&raw).is_err(), "{diff_ref}");
        assert!(
            !git_accepts_branch(diff_ref),
            "git accepts {diff_ref}, so refusing it would be a false rejection"
        );
    }
}

fn git_accepts_branch(name: &str) -> bool {
    git_support::git(&std::env::temp_dir())
        .args(["check-ref-format", "--branch", name])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("git runs")
        .success()
}

// ---------------------------------------------------------------------------------------------
// The subcommand.

fn guard_inputs(vars: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
    cmd.arg("inputs").env_clear();
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn subcommand_accepts_valid_inputs() {
    let (code, out) = guard_inputs(&[
        ("TASK_ID", "T-1"),
        ("BASE_SHA", BASE),
        ("EXPECTED_DIFF_SHA256", SHA),
        ("DECLARED_SCOPE", "src/**\ndocs/**"),
        ("DIFF_REF", "agent-team-diffs/T-1"),
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        format!(
            "inputs valid: task_id T-1, base {BASE}, 2 scope glob(s), diff from diff_ref agent-team-diffs/T-1\n"
        )
    );
}

#[test]
fn subcommand_reports_each_problem_as_an_escaped_annotation() {
    let (code, out) = guard_inputs(&[
        ("TASK_ID", "x\n::add-mask::%0A"),
        ("BASE_SHA", BASE),
        ("EXPECTED_DIFF_SHA256", SHA),
        ("DECLARED_SCOPE", "src/**"),
        ("DIFF_B64", "ZGlmZgo="),
        ("DISPATCH_MAC", "v2:zz"),
    ]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "::error::task_id must match [A-Za-z0-9][A-Za-z0-9._-]{0,63} (got \"x\\u{a}::add-mask::%250A\")",
            "::error::dispatch_mac must be 'v2:', a 32-hex nonce, ':', the expiry (Unix seconds), ':' and a 64-hex tag (got \"v2:zz\")",
        ]
    );
}

#[test]
fn subcommand_rejects_an_empty_environment() {
    let (code, out) = guard_inputs(&[]);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(out.lines().all(|l| l.starts_with("::error::")), "{out}");
}

#[cfg(unix)]
#[test]
fn subcommand_rejects_a_value_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_guard"))
        .arg("inputs")
        .env_clear()
        .env("TASK_ID", std::ffi::OsStr::from_bytes(b"T-\xff"))
        .env("BASE_SHA", BASE)
        .env("EXPECTED_DIFF_SHA256", SHA)
        .env("DECLARED_SCOPE", "src/**")
        .env("DIFF_B64", "ZGlmZgo=")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("::error::TASK_ID is not valid UTF-8"),
        "{stdout}"
    );
}

#[test]
fn subcommand_requires_a_dispatch_event_in_a_workflow_run() {
    let valid = [
        ("TASK_ID", "T-1"),
        ("BASE_SHA", BASE),
        ("EXPECTED_DIFF_SHA256", SHA),
        ("DECLARED_SCOPE", "src/**"),
        ("DIFF_B64", "ZGlmZgo="),
    ];
    let with_event = |event: &'static str| {
        let mut vars = valid.to_vec();
        vars.push(("GITHUB_EVENT_NAME", event));
        guard_inputs(&vars)
    };
    assert_eq!(with_event("workflow_dispatch").0, 0);
    for event in [
        "push",
        "pull_request",
        "pull_request_target",
        "workflow_call",
        "",
    ] {
        let (code, out) = with_event(event);
        assert_eq!(code, 1, "{event}");
        assert_eq!(
            out,
            format!(
                "::error::the apply/verify workflow runs on workflow_dispatch only; this run's event is \"{event}\"\n"
            )
        );
    }
}

/// The reusable workflow splits `declared_scope` for `gate publish-plan --scope` with an awk
/// program (`SPLIT_SCOPE`); guard and gate split it with `guard::inputs::split_scope`. Both must
/// give the same entries.
#[test]
fn the_workflows_awk_splits_the_scope_as_guard_does() {
    let workflow = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../.github/workflows/agent-team-apply-verify.yml"),
    )
    .unwrap();
    let line = workflow
        .lines()
        .find(|l| l.trim_start().starts_with("SPLIT_SCOPE: '"))
        .expect("SPLIT_SCOPE in the workflow");
    // A YAML single-quoted scalar: `''` stands for one quote.
    let program = line
        .trim_start()
        .trim_start_matches("SPLIT_SCOPE: '")
        .strip_suffix('\'')
        .unwrap()
        .replace("''", "'");
    for input in [
        "src/**",
        "src/**,docs/**",
        "src/*.{rs,toml},docs/**",
        "a\\,b,c",
        "{a,{b,c}},d",
        "}a,b",
        "a,,b\nc,{d\ne}",
        " x , y ",
        "",
    ] {
        let mut child = Command::new("awk")
            .arg(&program)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("awk runs (it is the workflow's splitter)");
        std::io::Write::write_all(
            child.stdin.as_mut().unwrap(),
            format!("{input}\n").as_bytes(),
        )
        .unwrap();
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        let awk: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let rust: Vec<String> = guard::inputs::split_scope(input)
            .map(str::to_owned)
            .collect();
        assert_eq!(awk, rust, "{input:?}");
    }
}
