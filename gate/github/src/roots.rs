//! The certificates an https connection to GitHub is verified against: the system's store, read
//! when the first https connection is made, never a list compiled into the binary (which would
//! keep a root the system has since distrusted until the next release, and adds its size to a
//! static binary).
//!
//! `SSL_CERT_FILE`, when set, names the one PEM bundle to read (as OpenSSL and Go read it);
//! otherwise the first of [`BUNDLES`] that exists. A bundle that is missing, unreadable, larger
//! than [`MAX_BUNDLE_BYTES`], not PEM, or without a single certificate is an error: there is no
//! fallback to an unverified connection.

use std::io::Read;
use std::sync::Arc;

use ureq::tls::{Certificate, PemItem};

use crate::client::ConfigError;

/// Where the common Linux distributions keep the bundle: Debian and Ubuntu (GitHub's runners),
/// Fedora and RHEL, Alpine, openSUSE.
pub const BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/etc/ssl/ca-bundle.pem",
];

/// A bundle is a few hundred kilobytes; anything larger is not one.
pub const MAX_BUNDLE_BYTES: u64 = 8 << 20;

/// The root certificates, shared by every connection of a client.
pub type Roots = Arc<Vec<Certificate<'static>>>;

/// Read the system's roots (`SSL_CERT_FILE` through `env`, else [`BUNDLES`]).
pub fn system_roots(env: &dyn Fn(&str) -> Option<String>) -> Result<Roots, ConfigError> {
    if let Some(path) = env("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        return read_bundle(&path);
    }
    match BUNDLES.iter().find(|p| std::path::Path::new(p).exists()) {
        Some(path) => read_bundle(path),
        None => Err(ConfigError::TrustRoots {
            path: BUNDLES.join(", "),
            reason: "no certificate bundle found (install ca-certificates, or set SSL_CERT_FILE)"
                .to_owned(),
        }),
    }
}

/// The certificates of one PEM bundle.
pub fn read_bundle(path: &str) -> Result<Roots, ConfigError> {
    let fail = |reason: String| ConfigError::TrustRoots {
        path: path.to_owned(),
        reason,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_BUNDLE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_BUNDLE_BYTES {
        return Err(fail(format!("larger than {MAX_BUNDLE_BYTES} bytes")));
    }
    let mut certificates = Vec::new();
    for item in ureq::tls::parse_pem(&bytes) {
        // A bundle may carry other blocks (a CRL, a key by mistake): they are not roots.
        if let PemItem::Certificate(c) = item.map_err(|e| fail(format!("not a PEM bundle: {e}")))? {
            certificates.push(c);
        }
    }
    if certificates.is_empty() {
        return Err(fail("no certificate in it".to_owned()));
    }
    Ok(Arc::new(certificates))
}
