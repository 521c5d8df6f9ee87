//! The dispatcher's signature: a known-answer vector (the one REFERENCE.md documents), every
//! signed field tampered with, wrong and rotated keys, a missing MAC, the retired v1; and
//! `gate verify-dispatch` as the guard and publish jobs run it (expired, another workflow), and
//! `gate sign`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use gate::dispatch_mac::{
    DispatchKey, FullRef, KeySlot, MacError, RepositoryName, SignedFields, VerifyingKeys,
    WorkflowPath, check_expiry, sign, signing_key, verify, verifying_keys,
};
use guard::inputs::{BaseSha, DiffSha256, DispatchMac, Nonce, Scope, TaskId};

const BASE: &str = "0123456789abcdef0123456789abcdef01234567";
const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const KEY: &str = "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk";
const OTHER_KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const NONCE: &str = "00112233445566778899aabbccddeeff";
const EXPIRES: u64 = 1_772_370_000;
/// A time before the expiry, within its lifetime.
const NOW: &str = "1772366400";
const WORKFLOW_REF: &str = "octo/repo/.github/workflows/agent-team-apply.yml@refs/heads/main";

fn key(text: &str) -> DispatchKey {
    DispatchKey::new(text.as_bytes(), "test").unwrap()
}

fn fields() -> SignedFields {
    SignedFields {
        repository: RepositoryName::parse("octo/repo").unwrap(),
        git_ref: FullRef::parse("refs/heads/main").unwrap(),
        workflow: WorkflowPath::parse("agent-team-apply.yml").unwrap(),
        task_id: TaskId::parse("T-1").unwrap(),
        base: BaseSha::parse(BASE).unwrap(),
        diff_sha256: DiffSha256::parse(SHA).unwrap(),
        nonce: Nonce::parse(NONCE).unwrap(),
        expires_at: EXPIRES,
        scope: Scope::parse("src/**,docs/*.md").unwrap(),
        pr_title: "Fix the parser".into(),
        pr_description: "Why:\nit broke".into(),
        revision: None,
    }
}

fn mismatch() -> MacError {
    MacError::Mismatch {
        workflow: ".github/workflows/agent-team-apply.yml".into(),
    }
}

fn only(current: &str) -> VerifyingKeys {
    VerifyingKeys {
        current: key(current),
        previous: None,
    }
}

/// Computed independently with Python's `hmac` over the length-prefixed encoding (the script
/// builds each field as `struct.pack(">I", len(b)) + b`, the scope as a count then its globs);
/// REFERENCE.md, "Signed dispatches", shows the same vector.
pub const VECTOR_ENCODING: &str = "000000206167656e742d7465616d2d6170706c792f64697370617463682d6d61632f7632000000096f63746f2f7265706f0000000f726566732f68656164732f6d61696e000000262e6769746875622f776f726b666c6f77732f6167656e742d7465616d2d6170706c792e796d6c00000003542d31000000283031323334353637383961626364656630313233343536373839616263646566303132333435363700000040653362306334343239386663316331343961666266346338393936666239323432376165343165343634396239333463613439353939316237383532623835350000002030303131323233333434353536363737383839396161626263636464656566660000000a3137373233373030303000000002000000067372632f2a2a00000009646f63732f2a2e6d640000000e46697820746865207061727365720000000d5768793a0a69742062726f6b65";
pub const VECTOR_MAC: &str = "v2:00112233445566778899aabbccddeeff:1772370000:3fbbaaef428d231d0d726055e412b3c76bc0d6ea3a4a24a5f2053d7488024b8a";

#[test]
fn known_answer() {
    let encoded: String = fields()
        .encode()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(encoded, VECTOR_ENCODING);
    assert_eq!(sign(&fields(), &key(KEY)).to_input(), VECTOR_MAC);
}

/// The vector in REFERENCE.md is this one, byte for byte.
#[test]
fn the_documented_vector_is_the_tested_one() {
    let adopting =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../REFERENCE.md")).unwrap();
    let joined: String = adopting.split_whitespace().collect();
    assert!(
        joined.contains(VECTOR_ENCODING),
        "REFERENCE.md lacks the encoding"
    );
    assert!(adopting.contains(VECTOR_MAC), "REFERENCE.md lacks the MAC");
    assert!(
        adopting.contains(&format!("`{KEY}`")),
        "REFERENCE.md lacks the key"
    );
}

#[test]
fn verifies_with_the_key_that_signed() {
    let mac = sign(&fields(), &key(KEY));
    assert_eq!(
        verify(&fields(), Some(&mac), &only(KEY)),
        Ok(KeySlot::Current)
    );
}

/// Every signed field, changed in each way an attacker who can dispatch could change it.
#[test]
fn each_tampered_field_is_rejected() {
    let mac = sign(&fields(), &key(KEY));
    let scope = |s: &str| Scope::parse(s).unwrap();
    let tampered: Vec<(&str, SignedFields)> = vec![
        (
            "repository",
            SignedFields {
                repository: RepositoryName::parse("octo/repo2").unwrap(),
                ..fields()
            },
        ),
        (
            "ref",
            SignedFields {
                git_ref: FullRef::parse("refs/heads/feature").unwrap(),
                ..fields()
            },
        ),
        (
            "ref kind",
            SignedFields {
                git_ref: FullRef::parse("refs/tags/main").unwrap(),
                ..fields()
            },
        ),
        (
            "a revision added",
            SignedFields {
                revision: Some(1),
                ..fields()
            },
        ),
        (
            "task id",
            SignedFields {
                task_id: TaskId::parse("T-2").unwrap(),
                ..fields()
            },
        ),
        (
            "base",
            SignedFields {
                base: BaseSha::parse(&BASE.replace('0', "f")).unwrap(),
                ..fields()
            },
        ),
        (
            "diff hash",
            SignedFields {
                diff_sha256: DiffSha256::of(b"another diff"),
                ..fields()
            },
        ),
        (
            "workflow",
            SignedFields {
                workflow: WorkflowPath::parse("other.yml").unwrap(),
                ..fields()
            },
        ),
        (
            "pr title",
            SignedFields {
                pr_title: "Fix the parser (and the gate)".into(),
                ..fields()
            },
        ),
        (
            "pr description",
            SignedFields {
                pr_description: String::new(),
                ..fields()
            },
        ),
        (
            "scope widened",
            SignedFields {
                scope: scope("src/**,docs/*.md,**"),
                ..fields()
            },
        ),
        (
            "scope narrowed",
            SignedFields {
                scope: scope("src/**"),
                ..fields()
            },
        ),
        (
            "scope reordered",
            SignedFields {
                scope: scope("docs/*.md,src/**"),
                ..fields()
            },
        ),
        (
            "scope glob changed",
            SignedFields {
                scope: scope("src/**,docs/**"),
                ..fields()
            },
        ),
    ];
    for (what, changed) in tampered {
        assert_ne!(changed.encode(), fields().encode(), "{what}");
        let Err(MacError::Mismatch { .. }) = verify(&changed, Some(&mac), &only(KEY)) else {
            panic!("{what} verified");
        };
    }
    // A tag changed in one bit.
    let mut tag = *mac.tag();
    tag[31] ^= 1;
    let flipped = DispatchMac::new(mac.nonce().clone(), mac.expires_at(), tag);
    assert_eq!(
        verify(&fields(), Some(&flipped), &only(KEY)),
        Err(mismatch())
    );
    // The nonce or the expiry in the input changed (the fields built from it follow).
    for (nonce, expires) in [
        ("ffeeddccbbaa99887766554433221100", EXPIRES),
        (NONCE, EXPIRES + 3600),
    ] {
        let changed_mac = DispatchMac::new(Nonce::parse(nonce).unwrap(), expires, *mac.tag());
        let changed = SignedFields {
            nonce: Nonce::parse(nonce).unwrap(),
            expires_at: expires,
            ..fields()
        };
        assert_eq!(
            verify(&changed, Some(&changed_mac), &only(KEY)),
            Err(mismatch())
        );
        // And fields that disagree with the input are refused before any key is tried.
        assert_eq!(
            verify(&fields(), Some(&changed_mac), &only(KEY)),
            Err(mismatch())
        );
    }
}

#[test]
fn expiry_bounds() {
    assert_eq!(check_expiry(EXPIRES, EXPIRES - 1), Ok(()));
    assert_eq!(
        check_expiry(EXPIRES, EXPIRES),
        Err(MacError::Expired {
            expires_at: EXPIRES,
            now: EXPIRES
        })
    );
    assert_eq!(
        check_expiry(EXPIRES, EXPIRES - 24 * 3600 - 1),
        Err(MacError::TooLong {
            expires_at: EXPIRES,
            now: EXPIRES - 24 * 3600 - 1
        })
    );
}

#[test]
fn workflow_refs() {
    let repo = RepositoryName::parse("Octo/Repo").unwrap();
    for (value, expected) in [
        (WORKFLOW_REF, Some(".github/workflows/agent-team-apply.yml")),
        (
            "OCTO/repo/.github/workflows/agent-team-apply.yml@refs/tags/v1",
            Some(".github/workflows/agent-team-apply.yml"),
        ),
        (
            "octo/repo/.github/workflows/a.yaml@x",
            Some(".github/workflows/a.yaml"),
        ),
        ("octo/repo/.github/workflows/agent-team-apply.yml", None),
        (
            "octo/other/.github/workflows/agent-team-apply.yml@refs/heads/main",
            None,
        ),
        (
            "octo/repo/workflows/agent-team-apply.yml@refs/heads/main",
            None,
        ),
        (
            "octo/repo/.github/workflows/sub/x.yml@refs/heads/main",
            None,
        ),
        ("octo/repo/.github/workflows/.x.yml@refs/heads/main", None),
        ("", None),
    ] {
        assert_eq!(
            WorkflowPath::from_workflow_ref(value, &repo)
                .ok()
                .map(|w| w.as_str().to_owned())
                .as_deref(),
            expected,
            "{value}"
        );
    }
}

/// Field boundaries cannot be moved: the same bytes split differently encode differently.
#[test]
fn encoding_is_unambiguous() {
    let joined = SignedFields {
        scope: Scope::parse("ab").unwrap(),
        ..fields()
    };
    let split = SignedFields {
        scope: Scope::parse("a,b").unwrap(),
        ..fields()
    };
    assert_ne!(joined.encode(), split.encode());
    let one = SignedFields {
        task_id: TaskId::parse("T-10").unwrap(),
        scope: Scope::parse("x").unwrap(),
        ..fields()
    };
    let other = SignedFields {
        task_id: TaskId::parse("T-1").unwrap(),
        scope: Scope::parse("0x").unwrap(),
        ..fields()
    };
    assert_ne!(one.encode(), other.encode());
}

/// What GitHub treats as the same repository or ref signs alike (no false rejection).
#[test]
fn equivalent_spellings_verify() {
    let mac = sign(&fields(), &key(KEY));
    let spelled = SignedFields {
        repository: RepositoryName::parse("Octo/Repo").unwrap(),
        git_ref: FullRef::parse("main").unwrap(),
        ..fields()
    };
    assert_eq!(
        verify(&spelled, Some(&mac), &only(KEY)),
        Ok(KeySlot::Current)
    );
    let newline_scope = SignedFields {
        scope: Scope::parse(" src/**\n docs/*.md\n").unwrap(),
        ..fields()
    };
    assert_eq!(
        verify(&newline_scope, Some(&mac), &only(KEY)),
        Ok(KeySlot::Current)
    );
}

#[test]
fn wrong_key_is_rejected() {
    let mac = sign(&fields(), &key(OTHER_KEY));
    assert_eq!(verify(&fields(), Some(&mac), &only(KEY)), Err(mismatch()));
}

#[test]
fn missing_mac_is_rejected() {
    assert_eq!(verify(&fields(), None, &only(KEY)), Err(MacError::Missing));
}

#[test]
fn rotation_accepts_both_keys_until_the_previous_is_removed() {
    let old = sign(&fields(), &key(KEY));
    let new = sign(&fields(), &key(OTHER_KEY));
    let rotating = VerifyingKeys {
        current: key(OTHER_KEY),
        previous: Some(key(KEY)),
    };
    assert_eq!(
        verify(&fields(), Some(&new), &rotating),
        Ok(KeySlot::Current)
    );
    assert_eq!(
        verify(&fields(), Some(&old), &rotating),
        Ok(KeySlot::Previous)
    );
    assert_eq!(
        verify(&fields(), Some(&old), &only(OTHER_KEY)),
        Err(mismatch())
    );
    let third = sign(&fields(), &key(&"z".repeat(32)));
    assert_eq!(verify(&fields(), Some(&third), &rotating), Err(mismatch()));
}

#[test]
fn keys_are_read_strictly() {
    let env = |pairs: Vec<(&'static str, &'static str)>| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.as_bytes().to_vec())
        }
    };
    assert_eq!(signing_key(&env(vec![])).unwrap_err(), MacError::NoKey);
    assert_eq!(
        signing_key(&env(vec![("AGENT_TEAM_DISPATCH_KEY", "")])).unwrap_err(),
        MacError::NoKey
    );
    assert_eq!(
        signing_key(&env(vec![("AGENT_TEAM_DISPATCH_KEY", "short-key")])).unwrap_err(),
        MacError::WeakKey {
            source_name: "AGENT_TEAM_DISPATCH_KEY".into()
        }
    );
    assert_eq!(
        signing_key(&env(vec![
            ("AGENT_TEAM_DISPATCH_KEY", KEY),
            ("AGENT_TEAM_DISPATCH_KEY_FILE", "/k")
        ]))
        .unwrap_err(),
        MacError::TwoKeySources
    );
    // A trailing newline (a secret pasted from a file) is not part of the key.
    let padded = signing_key(&env(vec![(
        "AGENT_TEAM_DISPATCH_KEY",
        "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n",
    )]))
    .unwrap();
    assert_eq!(sign(&fields(), &padded), sign(&fields(), &key(KEY)));
    // From a file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key");
    std::fs::write(&path, format!("{KEY}\n")).unwrap();
    let path_text: &'static str = Box::leak(path.display().to_string().into_boxed_str());
    let from_file = signing_key(&env(vec![("AGENT_TEAM_DISPATCH_KEY_FILE", path_text)])).unwrap();
    assert_eq!(sign(&fields(), &from_file), sign(&fields(), &key(KEY)));
    // A weak previous key is an error too, not silently ignored.
    assert_eq!(
        verifying_keys(&env(vec![
            ("AGENT_TEAM_DISPATCH_KEY", KEY),
            ("AGENT_TEAM_DISPATCH_KEY_PREVIOUS", "x")
        ]))
        .unwrap_err(),
        MacError::WeakKey {
            source_name: "AGENT_TEAM_DISPATCH_KEY_PREVIOUS".into()
        }
    );
    // The key never reaches a debug rendering.
    assert_eq!(format!("{:?}", key(KEY)), "DispatchKey(<redacted>)");
}

// ---------------------------------------------------------------------------------------------
// `gate verify-dispatch`, as the publishing job runs it.

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn verify_dispatch(keys: &[(&str, &str)], mac: &str, overrides: &[(&str, &str)]) -> Run {
    let mut args = vec![
        ("--repository", "Octo/Repo"),
        ("--ref", "refs/heads/main"),
        ("--task-id", "T-1"),
        ("--base", BASE),
        ("--diff-sha256", SHA),
        ("--declared-scope", "src/**\ndocs/*.md"),
        ("--mac", mac),
        ("--workflow-ref", WORKFLOW_REF),
        ("--pr-title", "Fix the parser"),
        ("--pr-description", "Why:\nit broke"),
        ("--now", NOW),
    ];
    for (flag, value) in overrides {
        for arg in args.iter_mut() {
            if arg.0 == *flag {
                arg.1 = value;
            }
        }
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    cmd.arg("verify-dispatch").env_clear();
    for (flag, value) in args {
        cmd.arg(format!("{flag}={value}"));
    }
    for (name, value) in keys {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    let run = Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    for (_, value) in keys {
        assert!(
            !run.stdout.contains(value) && !run.stderr.contains(value),
            "a key reached the output"
        );
    }
    run
}

fn good_mac() -> String {
    sign(&fields(), &key(KEY)).to_input()
}

#[test]
fn cli_verifies_a_signed_dispatch() {
    let run = verify_dispatch(&[("AGENT_TEAM_DISPATCH_KEY", KEY)], &good_mac(), &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "dispatch signature verified with the current key\n"
    );
}

#[test]
fn cli_rejects_each_tampered_input() {
    let mac = good_mac();
    for (flag, value) in [
        ("--repository", "octo/other"),
        ("--ref", "refs/heads/dev"),
        ("--task-id", "T-2"),
        ("--base", "1123456789abcdef0123456789abcdef01234567"),
        (
            "--diff-sha256",
            "f3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        ("--declared-scope", "src/**,docs/*.md,.github/**"),
        (
            "--workflow-ref",
            "octo/repo/.github/workflows/weaker.yml@refs/heads/main",
        ),
        ("--pr-title", "Merge me"),
        ("--pr-description", ""),
    ] {
        let run = verify_dispatch(&[("AGENT_TEAM_DISPATCH_KEY", KEY)], &mac, &[(flag, value)]);
        assert_eq!(run.code, 1, "{flag}: {}", run.stdout);
        // Another repository is refused before the tag: this run's workflow ref is not of it.
        let expected = if flag == "--repository" {
            "dispatch signature rejected: GITHUB_WORKFLOW_REF"
        } else {
            "dispatch signature rejected: dispatch_mac does not match"
        };
        assert!(run.stdout.starts_with(expected), "{flag}: {}", run.stdout);
    }
}

#[test]
fn cli_rejects_a_missing_or_malformed_mac() {
    let run = verify_dispatch(&[("AGENT_TEAM_DISPATCH_KEY", KEY)], "", &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("carries no dispatch_mac"),
        "{}",
        run.stdout
    );
    let run = verify_dispatch(&[("AGENT_TEAM_DISPATCH_KEY", KEY)], "v2:00", &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("dispatch_mac must be 'v2:'"),
        "{}",
        run.stdout
    );
    // A version-1 signature (no nonce, expiry or workflow) is refused, however valid it was.
    let v1 = "v1:47c8e39be614743432dd57411aca6c1dc87a420b71b2dca14110949dc907751d";
    let run = verify_dispatch(&[("AGENT_TEAM_DISPATCH_KEY", KEY)], v1, &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.starts_with(
            "dispatch signature rejected: dispatch_mac is version 1, which binds no nonce, expiry or workflow and is no longer accepted"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn cli_rejects_an_expired_dispatch() {
    let expires = EXPIRES.to_string();
    let run = verify_dispatch(
        &[("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &good_mac(),
        &[("--now", &expires)],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.stdout,
        format!(
            "dispatch signature rejected: the dispatch expired at {EXPIRES} (Unix seconds); it is now {EXPIRES}: dispatch anew\n"
        )
    );
    // An expiry further than a day ahead is refused too.
    let early = (EXPIRES - 24 * 3600 - 1).to_string();
    let run = verify_dispatch(
        &[("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &good_mac(),
        &[("--now", &early)],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("lies more than 86400 s after now"),
        "{}",
        run.stdout
    );
}

#[test]
fn cli_rejects_a_dispatch_signed_for_another_workflow() {
    // Signed for agent-team-apply.yml, run by another caller on the same ref.
    let run = verify_dispatch(
        &[("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &good_mac(),
        &[(
            "--workflow-ref",
            "octo/repo/.github/workflows/old-pin.yml@refs/heads/main",
        )],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout
            .starts_with("dispatch signature rejected: dispatch_mac does not match")
            && run
                .stdout
                .contains("this run's is .github/workflows/old-pin.yml"),
        "{}",
        run.stdout
    );
    // A workflow ref of another repository is not this run's.
    let run = verify_dispatch(
        &[("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &good_mac(),
        &[(
            "--workflow-ref",
            "evil/fork/.github/workflows/agent-team-apply.yml@refs/heads/main",
        )],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("GITHUB_WORKFLOW_REF"), "{}", run.stdout);
}

#[test]
fn cli_rejects_invalid_signed_inputs() {
    let run = verify_dispatch(
        &[("AGENT_TEAM_DISPATCH_KEY", KEY)],
        &good_mac(),
        &[("--task-id", "../x")],
    );
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("task_id must match"), "{}", run.stdout);
}

#[test]
fn cli_without_a_key_is_a_configuration_error() {
    let run = verify_dispatch(&[], &good_mac(), &[]);
    assert_eq!(run.code, 2);
    assert!(run.stdout.contains("no dispatch key"), "{}", run.stdout);
    let run = verify_dispatch(
        &[("AGENT_TEAM_DISPATCH_KEY", "too-short")],
        &good_mac(),
        &[],
    );
    assert_eq!(run.code, 2);
}

#[test]
fn cli_follows_a_rotation() {
    let keys = [
        ("AGENT_TEAM_DISPATCH_KEY", OTHER_KEY),
        ("AGENT_TEAM_DISPATCH_KEY_PREVIOUS", KEY),
    ];
    let run = verify_dispatch(&keys, &good_mac(), &[]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "dispatch signature verified with the previous key\n"
    );
    let run = verify_dispatch(&[("AGENT_TEAM_DISPATCH_KEY", OTHER_KEY)], &good_mac(), &[]);
    assert_eq!(
        run.code, 1,
        "the old key stops working once PREVIOUS is removed"
    );
}

#[test]
fn cli_json_document() {
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .args([
            "verify-dispatch",
            "--repository=octo/repo",
            "--ref=main",
            "--task-id=T-1",
            &format!("--base={BASE}"),
            &format!("--diff-sha256={SHA}"),
            "--declared-scope=src/**,docs/*.md",
            &format!("--mac={}", good_mac()),
            &format!("--workflow-ref={WORKFLOW_REF}"),
            "--pr-title=Fix the parser",
            "--pr-description=Why:\nit broke",
            &format!("--now={NOW}"),
            "--format=json",
        ])
        .env_clear()
        .env("AGENT_TEAM_DISPATCH_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "agent-team-apply/dispatch-verification/v1");
    assert_eq!(doc["result"], "verified");
    assert_eq!(doc["key"], "current");
    assert_eq!(doc["reason"], serde_json::Value::Null);
    assert_eq!(doc["nonce"], NONCE);
    assert_eq!(doc["expires_at"], EXPIRES);
    assert_eq!(doc["workflow"], ".github/workflows/agent-team-apply.yml");
}

#[test]
fn cli_sign_prints_the_signed_inputs() {
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .args([
            "sign",
            "--repository=octo/repo",
            "--ref=main",
            "--workflow=agent-team-apply.yml",
            "--task-id=T-1",
            &format!("--base={BASE}"),
            &format!("--diff-sha256={SHA}"),
            "--scope=src/**",
            "--scope=docs/*.md",
            "--pr-title=Fix the parser",
            "--pr-description=Why:\nit broke",
            &format!("--nonce={NONCE}"),
            &format!("--expires-at={EXPIRES}"),
        ])
        .env_clear()
        .env("AGENT_TEAM_DISPATCH_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc,
        serde_json::json!({
            "task_id": "T-1",
            "base_sha": BASE,
            "expected_diff_sha256": SHA,
            "declared_scope": "src/**,docs/*.md",
            "dispatch_mac": VECTOR_MAC,
            "pr_title": "Fix the parser",
            "pr_description": "Why:\nit broke",
        })
    );
    // What it printed verifies in the workflow.
    let run = verify_dispatch(&[("AGENT_TEAM_DISPATCH_KEY", KEY)], VECTOR_MAC, &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

/// A revision binds its pull request number (with the base, its head): another number, or the
/// same dispatch read as a first round, does not verify; a first round encodes as before.
#[test]
fn a_revision_binds_its_pull_request() {
    let revision = SignedFields {
        revision: Some(7),
        ..fields()
    };
    let mac = sign(&revision, &key(KEY));
    assert_eq!(
        verify(&revision, Some(&mac), &only(KEY)),
        Ok(KeySlot::Current)
    );
    for (what, other) in [
        (
            "another pull request",
            SignedFields {
                revision: Some(8),
                ..revision.clone()
            },
        ),
        ("a first round", fields()),
        (
            "another head",
            SignedFields {
                base: BaseSha::parse(&BASE.replace('0', "f")).unwrap(),
                ..revision.clone()
            },
        ),
    ] {
        assert_eq!(
            verify(&other, Some(&mac), &only(KEY)),
            Err(mismatch()),
            "{what}"
        );
    }
    // The first-round encoding is a strict prefix: field 12 is the marker and the number.
    let first = fields().encode();
    let encoded = revision.encode();
    assert!(encoded.starts_with(&first));
    assert_eq!(
        &encoded[first.len()..],
        b"\x00\x00\x00\x08revision\x00\x00\x00\x017"
    );
    assert_eq!(gate::dispatch_mac::parse_revision(""), Ok(None));
    assert_eq!(gate::dispatch_mac::parse_revision("12"), Ok(Some(12)));
    for bad in ["0", "012", "-1", "1a", " 1", "12345678901"] {
        assert!(gate::dispatch_mac::parse_revision(bad).is_err(), "{bad}");
    }
}
