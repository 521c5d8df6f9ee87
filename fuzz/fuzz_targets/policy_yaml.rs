//! `guard::policy::Policy::from_yaml` over arbitrary UTF-8.
//!
//! Properties: no panic; a policy that loads still denies the default trust-control surface (the
//! default denylist cannot be removed, only extended) and never raises a default limit.
#![no_main]
#![forbid(unsafe_code)]

use std::sync::LazyLock;

use guard::policy::Policy;

static DEFAULT: LazyLock<Policy> =
    LazyLock::new(|| Policy::embedded_default().expect("the embedded default policy loads"));

fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(policy) = Policy::from_yaml(text) else {
        return;
    };
    for path in [
        ".github/workflows/x.yml",
        "CODEOWNERS",
        ".GitHub/Workflows/X.yml",
    ] {
        assert!(policy.denied(path).is_some(), "{path} is no longer denied");
    }
    let default = &*DEFAULT;
    assert!(policy.deny.len() >= default.deny.len());
    for (got, want) in policy.deny.iter().zip(&default.deny) {
        assert_eq!(
            got.pattern(),
            want.pattern(),
            "the default denylist changed"
        );
    }
    let (l, d) = (&policy.limits, &default.limits);
    assert!(l.max_diff_bytes >= 1 && l.max_diff_bytes <= d.max_diff_bytes);
    assert!(l.max_files >= 1 && l.max_files <= d.max_files);
    assert!(l.max_path_bytes >= 1 && l.max_path_bytes <= d.max_path_bytes);
    assert!(l.max_component_bytes >= 1 && l.max_component_bytes <= d.max_component_bytes);
    assert!(l.max_line_bytes >= 1 && l.max_line_bytes <= d.max_line_bytes);
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| run(data));
