//! The root certificates https connections are verified against: the system bundle (or
//! `SSL_CERT_FILE`), read in full, and an error, never an unverified connection, when it cannot
//! be read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use github::ConfigError;
use github::roots::{MAX_BUNDLE_BYTES, read_bundle, system_roots};

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/tls/two-roots.pem")
        .display()
        .to_string()
}

fn reason(result: Result<github::roots::Roots, ConfigError>) -> String {
    match result {
        Err(ConfigError::TrustRoots { reason, .. }) => reason,
        other => panic!("expected a TrustRoots error, got {other:?}"),
    }
}

#[test]
fn a_bundle_gives_every_certificate_in_it() {
    assert_eq!(read_bundle(&fixture()).unwrap().len(), 2);
    let path = fixture();
    let env = move |name: &str| (name == "SSL_CERT_FILE").then(|| path.clone());
    assert_eq!(system_roots(&env).unwrap().len(), 2);
}

#[test]
fn other_pem_blocks_are_not_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mixed.pem");
    let mut text = std::fs::read_to_string(fixture()).unwrap();
    text.push_str("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHZpbGxhZ2VyaWdodHRoZXJlb2ZmZXJpbmd0aGVt\n-----END PRIVATE KEY-----\n");
    std::fs::write(&path, text).unwrap();
    assert_eq!(read_bundle(path.to_str().unwrap()).unwrap().len(), 2);
}

#[test]
fn an_unusable_bundle_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    };
    assert_eq!(
        reason(read_bundle(&write("empty.pem", b""))),
        "no certificate in it"
    );
    assert_eq!(
        reason(read_bundle(&write("text.pem", b"not a certificate\n"))),
        "no certificate in it"
    );
    let broken = write(
        "broken.pem",
        b"-----BEGIN CERTIFICATE-----\n!!!not base64!!!\n-----END CERTIFICATE-----\n",
    );
    assert!(reason(read_bundle(&broken)).starts_with("not a PEM bundle"));
    let big = tmp.path().join("big.pem");
    std::fs::write(&big, vec![b'#'; (MAX_BUNDLE_BYTES + 1) as usize]).unwrap();
    assert_eq!(
        reason(read_bundle(big.to_str().unwrap())),
        format!("larger than {MAX_BUNDLE_BYTES} bytes")
    );
    let missing = tmp.path().join("missing.pem").display().to_string();
    let env = move |name: &str| (name == "SSL_CERT_FILE").then(|| missing.clone());
    assert!(reason(system_roots(&env)).contains("No such file"));
}

/// The test runs itself again with `SSL_CERT_FILE` naming an empty bundle (set for that process
/// only, so tests running side by side do not see it); there, making an https client fails.
#[test]
fn an_https_client_reads_the_roots_when_it_is_made() {
    if std::env::var_os("ROOTS_TEST_CHILD").is_some() {
        let config = github::ClientConfig::new(
            github::ApiUrl::parse("https://api.github.com").unwrap(),
            github::Token::from_env(&|n| (n == "GH_TOKEN").then(|| "t0k3n".to_owned())).unwrap(),
            std::sync::Arc::new(github::SystemClock::new()),
        );
        match github::Client::new(config) {
            Err(e) => println!("client: {e}"),
            Ok(_) => println!("client: made without roots"),
        }
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "an_https_client_reads_the_roots_when_it_is_made",
            "--nocapture",
        ])
        .env("SSL_CERT_FILE", &empty)
        .env("ROOTS_TEST_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("client: root certificates ") && stdout.contains(": no certificate in it"),
        "{stdout}"
    );
}
