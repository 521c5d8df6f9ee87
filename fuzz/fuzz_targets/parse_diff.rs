//! `guard::diff::parse` and the parser-only `guard::check::check` over arbitrary bytes.
//!
//! Properties: no panic; every parsed file patch carries the names its status requires; `check`
//! (scope `**`, default policy, the input's own hash) reaches a verdict, and when it accepts, every
//! path on both sides is a valid path outside the denied surface; the verdict renders in every
//! output format without panicking.
#![no_main]
#![forbid(unsafe_code)]

use std::sync::LazyLock;

use guard::check::{CheckRequest, check};
use guard::path::{PathLimits, validate_path};
use guard::policy::Policy;

static POLICY: LazyLock<Policy> =
    LazyLock::new(|| Policy::embedded_default().expect("the embedded default policy loads"));
static SCOPE: LazyLock<Vec<String>> = LazyLock::new(|| vec!["**".to_owned()]);

fn run(data: &[u8]) {
    let parsed = guard::diff::parse(data, 1 << 20);
    if let Ok(diff) = &parsed {
        for p in &diff.patches {
            if let Some(problem) = fuzz_support::status_names_problem(p) {
                panic!("{problem}: {p:?}");
            }
        }
    }

    let policy = &*POLICY;
    let hash = guard::hash::sha256_hex(data);
    let req = CheckRequest {
        diff: data,
        expected_sha256: &hash,
        scope: &SCOPE,
        policy,
        repo: None,
    };
    let verdict = match check(&req) {
        Ok(v) => v,
        Err(e) => panic!("parser-only check with valid arguments failed: {e}"),
    };
    let _ = guard::output::text::render(&verdict);
    let doc = guard::output::json_v1::document(&verdict);
    let json = match doc.to_json() {
        Ok(json) => json,
        Err(e) => panic!("the verdict does not encode: {e}"),
    };
    match guard::output::json_v1::VerdictDoc::parse(&json) {
        Ok(back) => assert_eq!(back, doc),
        Err(e) => panic!("the verdict document does not read back: {e}\n{json}"),
    }
    if !verdict.accepted() {
        return;
    }
    let diff = match parsed {
        Ok(diff) => diff,
        Err(e) => panic!("check accepted a diff the parser rejects: {e}"),
    };
    assert_eq!(verdict.files.len(), diff.patches.len());
    let limits = PathLimits {
        max_path_bytes: policy.limits.max_path_bytes,
        max_component_bytes: policy.limits.max_component_bytes,
    };
    for p in &diff.patches {
        for raw in p.old_path.iter().chain(p.new_path.iter()) {
            let path = match validate_path(raw, &limits) {
                Ok(path) => path,
                Err(e) => panic!("accepted an invalid path {raw:?}: {e}"),
            };
            if let Some(pattern) = policy.denied(path) {
                panic!("accepted the denied path {path:?} (deny: {pattern})");
            }
        }
        assert!(
            p.binary.is_none() && p.content_issue.is_none(),
            "accepted {p:?}"
        );
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| run(data));
