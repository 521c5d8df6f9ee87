//! The one home for talking to GitHub: an HTTP client with bounded retries, rate-limit handling
//! and a token that never reaches an output ([`client`]), and typed requests and responses for
//! the REST endpoints the project uses, each citing GitHub's documentation and the path of its
//! operation in the published OpenAPI description
//! (<https://github.com/github/rest-api-description>, `descriptions/api.github.com/api.github.com.json`).
//!
//! | module | endpoints |
//! |---|---|
//! | [`actions`] | workflows, workflow dispatch, runs, jobs, job logs |
//! | [`git`] | the Git database: blobs, trees, commits, refs |
//! | [`pulls`] | pull requests |
//! | [`apps`] | the authenticated user or App, an App's installation and its installation tokens |
//! | [`checks`] | check runs |
//! | [`paginate`] | following a list's `link` header to its end |
//! | [`graphql`] | the GraphQL API: `createCommitOnBranch` |
//! | [`issues`] | labels on a pull request |
//! | [`releases`] | releases and their assets |
//! | [`repos`] | comparing commits, a file's raw contents, revoking the installation token |
//! | [`settings`] | what `gate doctor` reads: the repository, the App, environments, rules, protection, Actions permissions, contents |
#![forbid(unsafe_code)]

pub mod actions;
pub mod apps;
pub mod checks;
pub mod client;
pub mod date;
pub mod git;
pub mod graphql;
pub mod issues;
pub mod manifests;
pub mod paginate;
pub mod pulls;
pub mod releases;
pub mod repos;
pub mod roots;
pub mod settings;

pub use client::{
    ApiUrl, Call, Client, ClientConfig, Clock, ConfigError, Endpoint, Error, Method, ProxySettings,
    RateLimitSignal, RateLimitStop, Replay, Response, RetryPolicy, SystemClock, Token,
    VirtualClock,
};

/// A repository `owner/name` as GitHub allows them: an owner of 1 to 39 ASCII letters, digits
/// and hyphens, a name of 1 to 100 ASCII letters, digits, `-`, `_` and `.` (not `.` or `..`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Repository {
    owner: String,
    name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("repository {found:?} is not OWNER/NAME")]
pub struct RepositoryError {
    pub found: String,
}

impl Repository {
    pub fn parse(value: &str) -> Result<Self, RepositoryError> {
        let bad = || RepositoryError {
            found: value.to_owned(),
        };
        let (owner, name) = value.split_once('/').ok_or_else(bad)?;
        let owner_ok = !owner.is_empty()
            && owner.len() <= 39
            && owner
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        let name_ok = !name.is_empty()
            && name.len() <= 100
            && name != "."
            && name != ".."
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if owner_ok && name_ok {
            Ok(Repository {
                owner: owner.to_owned(),
                name: name.to_owned(),
            })
        } else {
            Err(bad())
        }
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `owner/name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    /// `/repos/{owner}/{repo}` followed by `rest` (which starts with `/`).
    pub fn path(&self, rest: &str) -> String {
        format!("/repos/{}/{}{rest}", self.owner, self.name)
    }
}

/// Percent-encode one path segment or query value: everything but RFC 3986's unreserved
/// characters; a segment of only dots is encoded too, so it can never be a dot segment.
pub fn encode_component(value: &str) -> String {
    if !value.is_empty() && value.bytes().all(|b| b == b'.') {
        return "%2E".repeat(value.len());
    }
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A path of several segments (a ref name `heads/a/b`), each segment encoded.
pub fn encode_path(value: &str) -> String {
    value
        .split('/')
        .map(encode_component)
        .collect::<Vec<_>>()
        .join("/")
}
