//! `gate::decide::decide` over arbitrary `needs` bytes with a fixed, valid job set, run id and hash.
//!
//! Properties: no panic; the gate passes exactly when an independent reading (serde_json, with
//! duplicate keys at any depth refused — serde_json alone keeps the last one) finds an object with
//! exactly the required jobs, each an object whose `result` is the string `success`; the decision
//! renders in both output formats.
#![no_main]
#![forbid(unsafe_code)]

const REQUIRED: [&str; 2] = ["guard", "build-test"];
const RUN_ID: &str = "123";
const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn run(data: &[u8]) {
    let decision = gate::decide::decide(data, &REQUIRED, RUN_ID, SHA);
    let expected = fuzz_support::needs_should_pass(data, &REQUIRED);
    assert_eq!(
        decision.pass(),
        expected,
        "gate and oracle disagree on {:?}: {:?}",
        String::from_utf8_lossy(data),
        decision.reasons
    );
    assert_eq!(decision.pass(), decision.reasons.is_empty());
    let _ = gate::output::text::render(&decision);
    let doc = gate::output::json_v1::document(&decision);
    assert_eq!(doc.passed(), expected);
    let json = match doc.to_json() {
        Ok(json) => json,
        Err(e) => panic!("the decision does not encode: {e}"),
    };
    match gate::output::json_v1::DecisionDoc::parse(&json) {
        Ok(back) => assert_eq!(back, doc),
        Err(e) => panic!("the decision document does not read back: {e}\n{json}"),
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| run(data));
