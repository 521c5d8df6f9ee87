//! The HTTP transport to GitHub's API: one base URL, one token, bounded everything.
//!
//! - **Token** from `GH_TOKEN` or `GITHUB_TOKEN` only ([`Token::from_env`]); it is sent only to
//!   the API URL's host, in the `Authorization` header, and scrubbed from every error message.
//!   Redirects are never followed automatically (a redirect could carry the header elsewhere);
//!   the one redirect this client follows, to a job log, is fetched without the token.
//! - **Base URL** `https://...`, or `http://` for a loopback address only (a stand-in on this
//!   machine); no credentials, query or fragment in it.
//! - **Proxies** from the environment as Go's `ProxyFromEnvironment` reads them (`HTTPS_PROXY` for
//!   https, `HTTP_PROXY` for http, either case, `ALL_PROXY` as a fallback, `NO_PROXY` for hosts to
//!   reach directly); an unparsable proxy is an error, never a silent direct connection.
//! - **Timeouts** on connecting and on each whole exchange.
//! - **Retries**, bounded: connection errors and `5xx` are retried with exponential backoff for
//!   requests that are safe to repeat; a request that must not take effect twice
//!   ([`Replay::Once`]) is retried only when it provably did not reach GitHub (the connection
//!   was never made) or GitHub said it was not processed (a rate limit). Other `4xx` are never
//!   retried.
//! - **Rate limits** (<https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api>,
//!   "About secondary rate limits" and "Handle rate limit errors appropriately"): a `429`, or a
//!   `403` with `retry-after`, `x-ratelimit-remaining: 0` or a message naming a secondary rate
//!   limit, waits `retry-after` seconds if present, else until `x-ratelimit-reset` (UTC epoch
//!   seconds, compared with the response's own `Date`), else one minute, doubled at each further
//!   limit of the same request ("wait for an exponentially increasing amount of time between
//!   retries"); at least one second (never a tight loop), at most
//!   [`RetryPolicy::rate_limit_retries`] waits and [`RetryPolicy::rate_limit_max_wait`] each,
//!   and only a wait that ends before the deadline: otherwise [`Error::RateLimited`] says which
//!   limit and why no wait was made.
//! - **Conditional requests** ([`Call::if_none_match`]): GitHub answers `304 Not Modified` to an
//!   `If-None-Match` of the resource's current `ETag`, and such an answer "does not count against
//!   your primary rate limit"
//!   (<https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate>).
//! - **Bodies** are read up to a size limit; larger is an error.
//! - **TLS** with rustls and the ring provider, verified against the system's root certificates
//!   ([`crate::roots`]), read at the first https connection; none are compiled in.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::date;

/// `X-GitHub-Api-Version` sent with every REST request
/// (<https://docs.github.com/en/rest/about-the-rest-api/api-versions>).
pub const API_VERSION: &str = "2022-11-28";
/// The media type GitHub recommends for REST requests.
pub const ACCEPT_JSON: &str = "application/vnd.github+json";
/// The default API URL when neither `--api-url` nor `GITHUB_API_URL` is given.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// Why the client could not be configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("no token: set GH_TOKEN or GITHUB_TOKEN")]
    NoToken,
    #[error("{variable} holds white space or control characters; it is not a token")]
    MalformedToken { variable: &'static str },
    #[error("API URL {found:?}: {reason}")]
    ApiUrl { found: String, reason: &'static str },
    #[error("proxy {variable}={found:?} is not a usable proxy URL")]
    Proxy { variable: String, found: String },
    #[error("root certificates {path}: {reason}")]
    TrustRoots { path: String, reason: String },
}

/// The API's base URL: scheme, host (and port) and an optional path prefix (GitHub Enterprise
/// Server serves the REST API under `/api/v3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiUrl {
    base: String,
    https: bool,
    host: String,
    /// `GITHUB_GRAPHQL_URL` when the runner names one (same scheme and host as the REST API).
    graphql: Option<String>,
}

impl ApiUrl {
    pub fn parse(value: &str) -> Result<Self, ConfigError> {
        let fail = |reason| ConfigError::ApiUrl {
            found: value.to_owned(),
            reason,
        };
        if value.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(fail("white space, control or non-ASCII characters"));
        }
        let (https, rest) = if let Some(rest) = value.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = value.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(fail("not an https:// URL"));
        };
        if rest.contains(['?', '#', '@', '\\']) {
            return Err(fail("a query, fragment, credentials or backslash"));
        }
        let rest = rest.trim_end_matches('/');
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let host = host_of(authority).ok_or_else(|| fail("no host"))?;
        if !https && !is_loopback(&host) {
            return Err(fail(
                "plain http:// is allowed only for a loopback address (the token would travel in clear)",
            ));
        }
        if path.split('/').any(|s| s == "." || s == "..") {
            return Err(fail("dot segments in the path"));
        }
        Ok(ApiUrl {
            base: format!(
                "{}://{authority}{path}",
                if https { "https" } else { "http" }
            ),
            https,
            host,
            graphql: None,
        })
    }

    /// `--api-url`, else `GITHUB_API_URL`, else `https://api.github.com`. The GraphQL endpoint
    /// is `GITHUB_GRAPHQL_URL` when the runner sets it and no `--api-url` was given (a runner
    /// sets both, for github.com and for GitHub Enterprise Server alike); it must have the REST
    /// API's scheme and host, since the same token goes to both.
    pub fn resolve(
        flag: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let from_env = |name: &str| env(name).filter(|v| !v.is_empty());
        match flag {
            Some(url) => ApiUrl::parse(url),
            None => {
                let mut api = match from_env("GITHUB_API_URL") {
                    Some(url) => ApiUrl::parse(&url)?,
                    None => ApiUrl::parse(DEFAULT_API_URL)?,
                };
                if let Some(graphql) = from_env("GITHUB_GRAPHQL_URL") {
                    let parsed = ApiUrl::parse(&graphql)?;
                    if parsed.https != api.https || parsed.host != api.host {
                        return Err(ConfigError::ApiUrl {
                            found: graphql,
                            reason: "GITHUB_GRAPHQL_URL is not on the REST API's scheme and host (the token goes to both)",
                        });
                    }
                    api.graphql = Some(parsed.base);
                }
                Ok(api)
            }
        }
    }

    pub fn as_str(&self) -> &str {
        &self.base
    }

    /// The GraphQL endpoint that goes with this REST API URL: `<base>/graphql`
    /// (`https://api.github.com/graphql`), or, for GitHub Enterprise Server, whose REST API is
    /// `http(s)://HOSTNAME/api/v3`, `http(s)://HOSTNAME/api/graphql` ("Forming calls with
    /// GraphQL", "The GraphQL endpoint",
    /// <https://docs.github.com/en/graphql/guides/forming-calls-with-graphql#the-graphql-endpoint>
    /// and the same page for Enterprise Server).
    pub fn graphql_url(&self) -> String {
        if let Some(url) = &self.graphql {
            return url.clone();
        }
        match self.base.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{}/graphql", self.base),
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// Where release assets are uploaded ("Upload a release asset": `https://uploads.github.com`
    /// for github.com; an Enterprise Server, whose API is `https://HOST/api/v3`, takes uploads
    /// at `https://HOST/api/uploads`; a stand-in on its own scheme and authority). The scheme
    /// and authority, without a path: a release's `upload_url` must start with it.
    pub fn upload_origin(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        let rest = &self.base[scheme.len() + 3..];
        let authority = rest.split('/').next().unwrap_or(rest);
        if self.https && authority.eq_ignore_ascii_case("api.github.com") {
            "https://uploads.github.com".to_owned()
        } else {
            format!("{scheme}://{authority}")
        }
    }

    pub fn is_https(&self) -> bool {
        self.https
    }
}

/// Whether an absolute `url` is https (else http; any other scheme is refused), and its host.
fn url_origin(url: &str) -> Result<(bool, String), &'static str> {
    let (scheme, rest) = url.split_once("://").ok_or("not an absolute URL")?;
    let https = match scheme {
        "https" => true,
        "http" => false,
        _ => return Err("neither https:// nor http://"),
    };
    let host = host_of(rest.split(['/', '?']).next().unwrap_or("")).ok_or("no host")?;
    Ok((https, host))
}

/// The host of an authority `host[:port]` or `[v6]:port`, lower-cased.
fn host_of(authority: &str) -> Option<String> {
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A GitHub token. It is never printed: `Debug` hides it and [`Token::redact`] removes it from
/// any text that could have picked it up.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// `GH_TOKEN`, else `GITHUB_TOKEN` (the first that is set and not empty).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        for variable in ["GH_TOKEN", "GITHUB_TOKEN"] {
            if let Some(value) = env(variable).filter(|v| !v.is_empty()) {
                if !value.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err(ConfigError::MalformedToken { variable });
                }
                return Ok(Token(value));
            }
        }
        Err(ConfigError::NoToken)
    }

    /// No token: requests go without `authorization` (the few endpoints that take none, such
    /// as the exchange of an App manifest's code).
    pub fn anonymous() -> Self {
        Token(String::new())
    }

    /// Replace every occurrence of the token in `text`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "<redacted>")
        }
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

/// Time for the client: a monotonic clock, sleeping, and the wall clock's Unix seconds.
pub trait Clock: Send + Sync {
    /// Time since an arbitrary fixed start; never goes back.
    fn elapsed(&self) -> Duration;
    fn sleep(&self, duration: Duration);
    fn unix_seconds(&self) -> i64;
}

/// The real clock.
#[derive(Debug)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        SystemClock {
            start: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
    fn unix_seconds(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    }
}

/// A clock whose sleeps return at once and advance its time: for deterministic runs against a
/// stand-in (tests, local simulations). Every sleep is recorded.
#[derive(Debug)]
pub struct VirtualClock {
    unix_start: i64,
    state: Mutex<(Duration, Vec<Duration>)>,
}

impl VirtualClock {
    pub fn new(unix_start: i64) -> Self {
        VirtualClock {
            unix_start,
            state: Mutex::new((Duration::ZERO, Vec::new())),
        }
    }

    /// Every sleep so far, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.state.lock().map(|s| s.1.clone()).unwrap_or_default()
    }
}

impl Clock for VirtualClock {
    fn elapsed(&self) -> Duration {
        self.state.lock().map(|s| s.0).unwrap_or_default()
    }
    fn sleep(&self, duration: Duration) {
        if let Ok(mut state) = self.state.lock() {
            state.0 += duration;
            state.1.push(duration);
        }
    }
    fn unix_seconds(&self) -> i64 {
        let elapsed = i64::try_from(self.elapsed().as_secs()).unwrap_or(i64::MAX);
        self.unix_start.saturating_add(elapsed)
    }
}

/// Proxy variables, as read once from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxySettings {
    https: Option<(String, String)>,
    http: Option<(String, String)>,
    all: Option<(String, String)>,
    no_proxy: Vec<String>,
}

impl ProxySettings {
    /// No proxy at all, whatever the environment says.
    pub fn none() -> Self {
        ProxySettings::default()
    }

    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let first = |names: [&str; 2]| {
            names.iter().find_map(|n| {
                env(n)
                    .filter(|v| !v.is_empty())
                    .map(|v| ((*n).to_owned(), v))
            })
        };
        let no_proxy = first(["NO_PROXY", "no_proxy"])
            .map(|(_, v)| {
                v.split(',')
                    .map(|e| e.trim().to_ascii_lowercase())
                    .filter(|e| !e.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        ProxySettings {
            https: first(["HTTPS_PROXY", "https_proxy"]),
            http: first(["HTTP_PROXY", "http_proxy"]),
            all: first(["ALL_PROXY", "all_proxy"]),
            no_proxy,
        }
    }

    /// The proxy (variable name and URL) for a request to `host` over `https` or http.
    pub fn proxy_for(&self, https: bool, host: &str) -> Option<&(String, String)> {
        if self.bypass(host) {
            return None;
        }
        let specific = if https { &self.https } else { &self.http };
        specific.as_ref().or(self.all.as_ref())
    }

    fn bypass(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.no_proxy.iter().any(|entry| {
            if entry == "*" {
                return true;
            }
            // `host:port` entries name the host; a leading `.` or `*.` means "and subdomains",
            // which a plain name means too.
            let name = match entry.rsplit_once(':') {
                Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
                _ => entry.as_str(),
            };
            let name = name.trim_start_matches("*.").trim_start_matches('.');
            !name.is_empty() && (host == name || host.ends_with(&format!(".{name}")))
        })
    }

    fn ureq_proxy(&self, https: bool, host: &str) -> Result<Option<ureq::Proxy>, ConfigError> {
        match self.proxy_for(https, host) {
            None => Ok(None),
            Some((variable, url)) => {
                ureq::Proxy::new(url)
                    .map(Some)
                    .map_err(|_| ConfigError::Proxy {
                        variable: variable.clone(),
                        found: url.clone(),
                    })
            }
        }
    }
}

/// Bounds on retrying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all for a connection error or a `5xx` (the first included).
    pub attempts: u32,
    /// First backoff; doubled each time, capped at `backoff_cap`.
    pub backoff: Duration,
    pub backoff_cap: Duration,
    /// Rate-limit waits per request.
    pub rate_limit_retries: u32,
    /// The longest single rate-limit wait accepted; longer is an error.
    pub rate_limit_max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 4,
            backoff: Duration::from_secs(1),
            backoff_cap: Duration::from_secs(30),
            rate_limit_retries: 3,
            rate_limit_max_wait: Duration::from_secs(15 * 60),
        }
    }
}

/// Everything a [`Client`] is built from.
pub struct ClientConfig {
    pub api_url: ApiUrl,
    pub token: Token,
    pub proxy: ProxySettings,
    pub retry: RetryPolicy,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    /// Largest response body read into memory.
    pub max_body_bytes: u64,
    pub user_agent: String,
    pub clock: Arc<dyn Clock>,
    /// When set, no wait may end after this point of [`Clock::elapsed`].
    pub deadline: Option<Duration>,
}

impl ClientConfig {
    pub fn new(api_url: ApiUrl, token: Token, clock: Arc<dyn Clock>) -> Self {
        ClientConfig {
            api_url,
            token,
            proxy: ProxySettings::none(),
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(15),
            request_timeout: Duration::from_secs(120),
            max_body_bytes: 32 << 20,
            user_agent: format!("agent-team-apply/{}", env!("CARGO_PKG_VERSION")),
            clock,
            deadline: None,
        }
    }
}

/// Whether a request may be sent again after it may have reached GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// Repeating it has no further effect (reads, content-addressed writes).
    Safe,
    /// It must not take effect twice (a workflow dispatch): resent only when it provably did
    /// not reach GitHub or GitHub said it was not processed.
    Once,
}

/// A request failure. Messages never contain the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{method} {path}: network error: {message} ({})", if *may_have_reached { "the request may have reached GitHub" } else { "the request did not reach GitHub" })]
    Transport {
        method: &'static str,
        path: String,
        message: String,
        may_have_reached: bool,
    },
    #[error("{method} {path}: HTTP {status}{}", message.as_ref().map(|m| format!(": {m}")).unwrap_or_default())]
    Status {
        method: &'static str,
        path: String,
        status: u16,
        /// GitHub's `message`, when the body carried one.
        message: Option<String>,
    },
    /// GitHub's rate limit, and the wait it asks for was not made.
    #[error("{method} {path}: GitHub's {limit} (HTTP {status}); {stop}")]
    RateLimited {
        method: &'static str,
        path: String,
        status: u16,
        limit: RateLimitSignal,
        wait_secs: u64,
        stop: RateLimitStop,
    },
    #[error("{method} {path}: the response body is larger than {limit} bytes")]
    BodyTooLarge {
        method: &'static str,
        path: String,
        limit: u64,
    },
    #[error("{method} {path}: unexpected response: {message}")]
    Decode {
        method: &'static str,
        path: String,
        message: String,
    },
    #[error("{method} {path}: the deadline would pass before the next attempt")]
    Deadline { method: &'static str, path: String },
    /// A GraphQL response with `errors` (or without `data`): the operation did not report
    /// success. GitHub's messages, token removed.
    #[error("POST {path}: GraphQL errors: {}", messages.join("; "))]
    GraphQl { path: String, messages: Vec<String> },
    /// A list longer than [`crate::paginate::MAX_PAGES`] pages: refused, never read in part.
    #[error(
        "GET {path}: the list has more than {pages} pages of 100; refusing to decide on part of it"
    )]
    TooManyPages { path: String, pages: usize },
}

impl Error {
    /// The HTTP status of an unexpected response, if that is what this is.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// How a rate-limited response said how long to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimitSignal {
    /// `retry-after` seconds (or an HTTP date).
    RetryAfter,
    /// `x-ratelimit-remaining: 0` and `x-ratelimit-reset`.
    Reset,
    /// Neither: at least a minute, doubled at each further limit.
    NoHeader,
}

impl std::fmt::Display for RateLimitSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RateLimitSignal::RetryAfter => "rate limit (retry-after)",
            RateLimitSignal::Reset => {
                "rate limit (x-ratelimit-remaining: 0 until x-ratelimit-reset)"
            }
            RateLimitSignal::NoHeader => "secondary rate limit (no retry-after)",
        })
    }
}

/// Why a rate-limit wait was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimitStop {
    /// The request was limited this many times already.
    Retries(u32),
    /// The wait is longer than [`RetryPolicy::rate_limit_max_wait`] (seconds).
    TooLong { wait_secs: u64, max_secs: u64 },
    /// The wait would end after the deadline.
    Deadline { wait_secs: u64, left_secs: u64 },
}

impl std::fmt::Display for RateLimitStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RateLimitStop::Retries(n) => {
                write!(f, "still limited after {n} waits; giving up")
            }
            RateLimitStop::TooLong {
                wait_secs,
                max_secs,
            } => write!(
                f,
                "the wait of {wait_secs} s is longer than the {max_secs} s allowed"
            ),
            RateLimitStop::Deadline {
                wait_secs,
                left_secs,
            } => write!(
                f,
                "the wait of {wait_secs} s would pass the deadline ({left_secs} s left)"
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// A response, body read in full (bounded).
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of a header (names compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `ETag`, for a later conditional request ([`Call::if_none_match`]).
    pub fn etag(&self) -> Option<&str> {
        self.header("etag")
    }

    /// The response's `Date`, as Unix seconds.
    pub fn date(&self) -> Option<i64> {
        self.header("date").and_then(date::parse_http_date)
    }

    /// GitHub's error `message` (<https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api>).
    pub fn github_message(&self) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct ErrorBody {
            message: Option<String>,
            #[serde(default)]
            errors: Vec<serde_json::Value>,
        }
        let body: ErrorBody = serde_json::from_slice(&self.body).ok()?;
        let mut message = body.message?;
        let details: Vec<String> = body
            .errors
            .iter()
            .map(|e| match e {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        if !details.is_empty() {
            message.push_str(&format!(" ({})", details.join("; ")));
        }
        Some(message)
    }
}

/// One request to send.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: Method,
    /// The path under the API URL, starting with `/`, segments already encoded
    /// ([`crate::segment`]).
    pub path: String,
    pub query: Vec<(&'static str, String)>,
    pub body: Option<Vec<u8>>,
    pub accept: &'static str,
    pub replay: Replay,
    /// The REST API (the path is under the API URL) or the GraphQL endpoint
    /// ([`ApiUrl::graphql_url`]; the path is ignored).
    pub endpoint: Endpoint,
    /// `If-None-Match`: the `ETag` of the copy the caller holds; GitHub answers `304` when it
    /// is still current.
    pub if_none_match: Option<String>,
}

/// Where a [`Call`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Rest,
    GraphQl,
}

impl Call {
    pub fn get(path: String) -> Self {
        Call {
            method: Method::Get,
            path,
            query: Vec::new(),
            body: None,
            accept: ACCEPT_JSON,
            replay: Replay::Safe,
            endpoint: Endpoint::Rest,
            if_none_match: None,
        }
    }

    pub fn with_json<B: Serialize>(
        method: Method,
        path: String,
        body: &B,
        replay: Replay,
    ) -> Result<Self, Error> {
        let bytes = serde_json::to_vec(body).map_err(|e| Error::Decode {
            method: method.as_str(),
            path: path.clone(),
            message: format!("cannot serialize the request body: {e}"),
        })?;
        Ok(Call {
            method,
            path,
            query: Vec::new(),
            body: Some(bytes),
            accept: ACCEPT_JSON,
            replay,
            endpoint: Endpoint::Rest,
            if_none_match: None,
        })
    }

    /// `POST` of a GraphQL request (`{"query": ..., "variables": ...}`) to the GraphQL endpoint.
    pub fn graphql<B: Serialize>(body: &B, replay: Replay) -> Result<Self, Error> {
        let mut call = Call::with_json(Method::Post, "/graphql".to_owned(), body, replay)?;
        call.accept = "application/json";
        call.endpoint = Endpoint::GraphQl;
        Ok(call)
    }

    /// A conditional request for a resource whose copy with `etag` the caller holds.
    pub fn if_none_match(mut self, etag: Option<&str>) -> Self {
        self.if_none_match = etag.map(str::to_owned);
        self
    }

    pub fn query(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.query.push((name, value.into()));
        self
    }

    /// The path and query, as shown in messages (`/graphql` for any GraphQL call).
    pub fn target(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            let query: Vec<String> = self
                .query
                .iter()
                .map(|(k, v)| format!("{k}={}", crate::encode_component(v)))
                .collect();
            format!("{}?{}", self.path, query.join("&"))
        }
    }
}

/// The client. Cheap to share by reference; it holds one connection pool.
pub struct Client {
    agent: ureq::Agent,
    config: ClientConfig,
    /// The root certificates, once read (at the first https connection).
    roots: std::sync::OnceLock<Result<crate::roots::Roots, ConfigError>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("api_url", &self.config.api_url)
            .field("token", &self.config.token)
            .finish_non_exhaustive()
    }
}

fn agent(
    config: &ClientConfig,
    https: bool,
    host: &str,
    roots: Option<&crate::roots::Roots>,
) -> Result<ureq::Agent, ConfigError> {
    let proxy = config.proxy.ureq_proxy(https, host)?;
    let mut builder = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .https_only(https)
        .proxy(proxy)
        .timeout_connect(Some(config.connect_timeout))
        .timeout_global(Some(config.request_timeout))
        .user_agent(config.user_agent.as_str());
    if let Some(roots) = roots {
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::Specific(Arc::clone(roots)))
            .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .build();
        builder = builder.tls_config(tls);
    }
    Ok(builder.build().into())
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Self, ConfigError> {
        let roots = std::sync::OnceLock::new();
        let https = config.api_url.is_https();
        let tls_roots = if https {
            let read = crate::roots::system_roots(&|name| std::env::var(name).ok())?;
            let _ = roots.set(Ok(Arc::clone(&read)));
            Some(read)
        } else {
            None
        };
        let agent = agent(&config, https, config.api_url.host(), tls_roots.as_ref())?;
        Ok(Client {
            agent,
            config,
            roots,
        })
    }

    /// The root certificates for an https connection, read once.
    fn roots(&self) -> Result<&crate::roots::Roots, ConfigError> {
        self.roots
            .get_or_init(|| crate::roots::system_roots(&|name| std::env::var(name).ok()))
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn api_url(&self) -> &ApiUrl {
        &self.config.api_url
    }

    /// `text` with the token removed (for messages that quote GitHub's own text).
    pub fn redact(&self, text: &str) -> String {
        self.config.token.redact(text)
    }

    pub fn clock(&self) -> &dyn Clock {
        self.config.clock.as_ref()
    }

    pub fn deadline(&self) -> Option<Duration> {
        self.config.deadline
    }

    /// Sleep for `duration`, unless that would pass the deadline.
    pub fn wait(&self, duration: Duration, method: &'static str, path: &str) -> Result<(), Error> {
        if let Some(deadline) = self.config.deadline
            && self.clock().elapsed() + duration > deadline
        {
            return Err(Error::Deadline {
                method,
                path: path.to_owned(),
            });
        }
        self.clock().sleep(duration);
        Ok(())
    }

    /// Sleep for `duration`, or only until the deadline when that comes first; an error only
    /// when the deadline has already passed. The clock is read once, so a caller that polls
    /// again after it returns makes its last poll on the deadline: [`Client::wait`] would refuse
    /// a wait the caller cut to `deadline - elapsed` a moment earlier, as the clock has moved on
    /// since (a real clock always has).
    pub fn wait_until_deadline(
        &self,
        duration: Duration,
        method: &'static str,
        path: &str,
    ) -> Result<(), Error> {
        let step = match self.config.deadline {
            Some(deadline) => {
                let left = deadline.saturating_sub(self.clock().elapsed());
                if left.is_zero() {
                    return Err(Error::Deadline {
                        method,
                        path: path.to_owned(),
                    });
                }
                duration.min(left)
            }
            None => duration,
        };
        self.clock().sleep(step);
        Ok(())
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let policy = &self.config.retry;
        let factor = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        policy
            .backoff
            .saturating_mul(factor)
            .min(policy.backoff_cap)
    }

    /// Send `call`, retrying as the module documentation says. Any status comes back as a
    /// response; only failures to get one, and exhausted waits, are errors.
    pub fn send(&self, call: &Call) -> Result<Response, Error> {
        let method = call.method.as_str();
        let target = call.target();
        let url = match call.endpoint {
            Endpoint::Rest => format!("{}{}", self.config.api_url.as_str(), target),
            Endpoint::GraphQl => self.config.api_url.graphql_url(),
        };
        let mut attempt = 0u32;
        let mut rate_limited = 0u32;
        loop {
            attempt += 1;
            match self.send_once(call, &url, true) {
                Err(e) => {
                    let reached = reached_server(&e);
                    let retry = retryable(&e) && (call.replay == Replay::Safe || !reached);
                    // A deadline that leaves no room for another attempt ends with the
                    // failure itself, not with the deadline: the network is the cause.
                    if retry
                        && attempt < self.config.retry.attempts
                        && self.wait(self.backoff(attempt), method, &target).is_ok()
                    {
                        continue;
                    }
                    return Err(self.transport_error(call, &target, &e, reached));
                }
                Ok(response) => {
                    if let Some((wait, limit)) =
                        rate_limit_wait(&response, self.clock(), rate_limited)
                    {
                        self.rate_limit_pause(call, &target, &response, wait, limit, rate_limited)?;
                        rate_limited += 1;
                        attempt -= 1;
                        continue;
                    }
                    if response.status >= 500
                        && call.replay == Replay::Safe
                        && attempt < self.config.retry.attempts
                    {
                        let wait = retry_after(&response, self.clock())
                            .unwrap_or_else(|| self.backoff(attempt))
                            .min(self.config.retry.rate_limit_max_wait);
                        self.wait(wait, method, &target)?;
                        continue;
                    }
                    return Ok(response);
                }
            }
        }
    }

    /// Wait out a rate limit, or say why not: too many already, too long, or past the deadline.
    fn rate_limit_pause(
        &self,
        call: &Call,
        target: &str,
        response: &Response,
        wait: Duration,
        limit: RateLimitSignal,
        limited_before: u32,
    ) -> Result<(), Error> {
        let policy = &self.config.retry;
        let wait = wait.max(MIN_RATE_LIMIT_WAIT);
        let wait_secs = wait.as_secs();
        let stop = if limited_before >= policy.rate_limit_retries {
            Some(RateLimitStop::Retries(limited_before))
        } else if wait > policy.rate_limit_max_wait {
            Some(RateLimitStop::TooLong {
                wait_secs,
                max_secs: policy.rate_limit_max_wait.as_secs(),
            })
        } else {
            self.config.deadline.and_then(|deadline| {
                let left = deadline.saturating_sub(self.clock().elapsed());
                (wait > left).then_some(RateLimitStop::Deadline {
                    wait_secs,
                    left_secs: left.as_secs(),
                })
            })
        };
        if let Some(stop) = stop {
            return Err(Error::RateLimited {
                method: call.method.as_str(),
                path: target.to_owned(),
                status: response.status,
                limit,
                wait_secs,
                stop,
            });
        }
        self.clock().sleep(wait);
        Ok(())
    }

    fn transport_error(&self, call: &Call, target: &str, e: &ureq::Error, reached: bool) -> Error {
        match e {
            ureq::Error::BodyExceedsLimit(limit) => Error::BodyTooLarge {
                method: call.method.as_str(),
                path: target.to_owned(),
                limit: *limit,
            },
            _ => Error::Transport {
                method: call.method.as_str(),
                path: target.to_owned(),
                message: self.config.token.redact(&e.to_string()),
                may_have_reached: reached,
            },
        }
    }

    fn send_once(
        &self,
        call: &Call,
        url: &str,
        authenticated: bool,
    ) -> Result<Response, ureq::Error> {
        let mut builder = ureq::http::Request::builder()
            .method(call.method.as_str())
            .uri(url)
            .header("accept", call.accept)
            .header("x-github-api-version", API_VERSION);
        if authenticated && !self.config.token.0.is_empty() {
            builder = builder.header("authorization", self.config.token.bearer());
        }
        if let Some(etag) = &call.if_none_match {
            builder = builder.header("if-none-match", etag.as_str());
        }
        let response = match &call.body {
            Some(body) => {
                let request = builder
                    .header("content-type", "application/json")
                    .body(body.as_slice())?;
                self.agent.run(request)?
            }
            None => self.agent.run(builder.body(())?)?,
        };
        read_response(response, self.config.max_body_bytes)
    }

    /// One request of raw `bytes` to an absolute `url` (a release's upload URL, checked by the
    /// caller), with the token, sent once: an upload is not replayed.
    pub fn send_bytes(
        &self,
        method: Method,
        url: &str,
        content_type: &str,
        bytes: &[u8],
    ) -> Result<Response, Error> {
        let fail = |message: String, reached: bool| Error::Transport {
            method: method.as_str(),
            path: "(upload)".to_owned(),
            message: self.config.token.redact(&message),
            may_have_reached: reached,
        };
        let (https, host) = url_origin(url).map_err(|m| fail(m.to_owned(), false))?;
        let own = host == self.config.api_url.host() && https == self.config.api_url.is_https();
        let other;
        let agent = if own {
            &self.agent
        } else if https {
            other = agent(&self.config, https, &host, Some(self.roots()?))?;
            &other
        } else {
            return Err(fail("plain http:// to another host".to_owned(), false));
        };
        let request = ureq::http::Request::builder()
            .method(method.as_str())
            .uri(url)
            .header("accept", ACCEPT_JSON)
            .header("x-github-api-version", API_VERSION)
            .header("authorization", self.config.token.bearer())
            .header("content-type", content_type)
            .body(bytes)
            .map_err(|e| fail(e.to_string(), false))?;
        let response = agent.run(request).map_err(|e| fail(e.to_string(), true))?;
        read_response(response, self.config.max_body_bytes).map_err(|e| fail(e.to_string(), true))
    }

    /// Send and decode a JSON response with one of the `expected` statuses; any other status is
    /// [`Error::Status`] with GitHub's message.
    pub fn json<T: DeserializeOwned>(&self, call: &Call, expected: &[u16]) -> Result<T, Error> {
        let response = self.send(call)?;
        self.expect(call, &response, expected)?;
        self.decode(call, &response)
    }

    /// Fail unless the response has one of the `expected` statuses.
    pub fn expect(&self, call: &Call, response: &Response, expected: &[u16]) -> Result<(), Error> {
        if expected.contains(&response.status) {
            Ok(())
        } else {
            Err(self.unexpected(call, response))
        }
    }

    /// The error for a response whose status the caller does not handle, with GitHub's message.
    pub fn unexpected(&self, call: &Call, response: &Response) -> Error {
        Error::Status {
            method: call.method.as_str(),
            path: call.target(),
            status: response.status,
            message: response
                .github_message()
                .map(|m| self.config.token.redact(&m)),
        }
    }

    pub fn decode<T: DeserializeOwned>(
        &self,
        call: &Call,
        response: &Response,
    ) -> Result<T, Error> {
        serde_json::from_slice(&response.body).map_err(|e| Error::Decode {
            method: call.method.as_str(),
            path: call.target(),
            message: e.to_string(),
        })
    }

    /// Fetch a URL GitHub redirected to (a signed, short-lived download), **without** the token,
    /// keeping only the last `keep` bytes of at most `max_total`. The URL must be https, or
    /// share the API's own scheme and host (a stand-in). Returns the kept bytes and whether
    /// anything before them was dropped.
    pub fn fetch_redirect_tail(
        &self,
        location: &str,
        keep: usize,
        max_total: u64,
    ) -> Result<(Vec<u8>, bool), Error> {
        let fail = |message: String| Error::Transport {
            method: "GET",
            path: "(redirect target)".to_owned(),
            message,
            may_have_reached: true,
        };
        let (https, host) = url_origin(location).map_err(|m| fail(format!("the redirect: {m}")))?;
        let stand_in =
            !https && !self.config.api_url.is_https() && host == self.config.api_url.host();
        if !https && !stand_in {
            return Err(fail("the redirect is not an https:// URL".to_owned()));
        }
        let roots = if https { Some(self.roots()?) } else { None };
        let agent = agent(&self.config, https, &host, roots)?;
        let request = ureq::http::Request::builder()
            .method("GET")
            .uri(location)
            .body(())
            .map_err(|e| fail(e.to_string()))?;
        let response = agent.run(request).map_err(|e| fail(e.to_string()))?;
        if response.status().as_u16() != 200 {
            return Err(fail(format!("HTTP {}", response.status().as_u16())));
        }
        let mut reader = response.into_body().into_reader();
        let mut kept: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
        let mut total = 0u64;
        let mut dropped = false;
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = std::io::Read::read(&mut reader, &mut buf).map_err(|e| fail(e.to_string()))?;
            if n == 0 {
                break;
            }
            total += n as u64;
            kept.extend(&buf[..n]);
            while kept.len() > keep {
                kept.pop_front();
                dropped = true;
            }
            if total >= max_total {
                dropped = true;
                break;
            }
        }
        Ok((kept.into_iter().collect(), dropped))
    }
}

fn read_response(
    mut response: ureq::http::Response<ureq::Body>,
    limit: u64,
) -> Result<Response, ureq::Error> {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = response
        .body_mut()
        .with_config()
        .limit(limit)
        .read_to_vec()?;
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// Whether the request may have reached the server: anything but a failure to connect at all
/// (a refused or unreachable connection reports as an I/O error of those kinds).
fn reached_server(e: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    match e {
        ureq::Error::ConnectionFailed
        | ureq::Error::HostNotFound
        | ureq::Error::ConnectProxyFailed(_)
        | ureq::Error::Timeout(ureq::Timeout::Resolve | ureq::Timeout::Connect) => false,
        ureq::Error::Io(io) => {
            !(matches!(
                io.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::AddrNotAvailable
                    | ErrorKind::NetworkUnreachable
                    | ErrorKind::HostUnreachable
            ) || is_name_resolution(io))
        }
        _ => true,
    }
}

/// A failed name lookup, which ureq's default resolver reports as the standard library's
/// `getaddrinfo` error: an uncategorized I/O error whose text the standard library fixes
/// ("failed to lookup address information: ..."). No connection was attempted.
fn is_name_resolution(io: &std::io::Error) -> bool {
    io.to_string()
        .starts_with("failed to lookup address information")
}

/// Transport failures worth another attempt (as opposed to configuration errors).
fn retryable(e: &ureq::Error) -> bool {
    matches!(
        e,
        ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::ConnectProxyFailed(_)
            | ureq::Error::Protocol(_)
            | ureq::Error::BodyStalled
    )
}

/// `retry-after`: delay-seconds, or an HTTP date compared with the response's own `Date`.
fn retry_after(response: &Response, clock: &dyn Clock) -> Option<Duration> {
    let value = response.header("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = date::parse_http_date(value)?;
    let now = response.date().unwrap_or_else(|| clock.unix_seconds());
    Some(Duration::from_secs(u64::try_from(at - now).unwrap_or(0)))
}

/// The shortest rate-limit wait: a `retry-after: 0` or a reset already past is not an
/// invitation to a tight loop.
pub const MIN_RATE_LIMIT_WAIT: Duration = Duration::from_secs(1);
/// The wait for a rate limit that names none: "wait for at least one minute before retrying".
pub const RATE_LIMIT_DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// Whether a `403` says it is a secondary rate limit in its message alone ("You have exceeded a
/// secondary rate limit", or the older "abuse detection mechanism").
fn names_secondary_limit(response: &Response) -> bool {
    response.github_message().is_some_and(|m| {
        let m = m.to_ascii_lowercase();
        m.contains("secondary rate limit") || m.contains("abuse detection")
    })
}

/// How long GitHub asks to wait before the next request, if this response is a rate limit, and
/// how it said so; `limited_before` is how many limits this request met already (the wait
/// without a header doubles with each).
fn rate_limit_wait(
    response: &Response,
    clock: &dyn Clock,
    limited_before: u32,
) -> Option<(Duration, RateLimitSignal)> {
    let exhausted = response.header("x-ratelimit-remaining").map(str::trim) == Some("0");
    let limited = response.status == 429
        || (response.status == 403
            && (exhausted
                || response.header("retry-after").is_some()
                || names_secondary_limit(response)));
    if !limited {
        return None;
    }
    if let Some(wait) = retry_after(response, clock) {
        return Some((wait, RateLimitSignal::RetryAfter));
    }
    if exhausted
        && let Some(reset) = response
            .header("x-ratelimit-reset")
            .and_then(|v| v.trim().parse::<i64>().ok())
    {
        let now = response.date().unwrap_or_else(|| clock.unix_seconds());
        // One second more: the reset instant itself may still be limited.
        return Some((
            Duration::from_secs(u64::try_from(reset - now).unwrap_or(0) + 1),
            RateLimitSignal::Reset,
        ));
    }
    let factor = 1u32.checked_shl(limited_before).unwrap_or(u32::MAX);
    Some((
        RATE_LIMIT_DEFAULT_WAIT.saturating_mul(factor),
        RateLimitSignal::NoHeader,
    ))
}
