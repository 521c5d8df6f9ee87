//! `gate app create`: register the publishing App, or the dispatcher's, from its manifest
//! (<https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest>).
//!
//! 1. A page on `127.0.0.1` holds a form that posts the manifest (with a random `state`) to
//!    GitHub's "register a GitHub App" page of the repository's owner; the person confirms there.
//! 2. GitHub redirects the browser to the manifest's `redirect_url`, this page's `/callback`,
//!    with a temporary `code` and the `state`.
//! 3. The code is exchanged (`POST /app-manifests/{code}/conversions`) for the App and its key.
//!
//! What the loopback page believes: only a request whose `Host` is the page's own address (a
//! page of another site that rebinds a name to `127.0.0.1` sends its own name, and is refused
//! before it could read the `state`), and only a callback whose `state` is this run's (compared
//! in constant time). What it then checks of the App GitHub returns: the owner is the
//! repository's owner and the permissions and events are exactly the manifest's, so a code for
//! another App (someone else's manifest) is refused and its key is never written.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use github::manifests::CreatedApp;

use crate::doctor::APP_PERMISSIONS;

/// Which App.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The App `publish` uses: contents, pull requests and checks write (ADOPTING.md, step 2).
    Publish,
    /// The dispatcher's own App: dispatches and reads runs (ADOPTING.md, step 7).
    Dispatcher,
}

/// What the dispatcher's App may do: dispatch and read the caller's runs, their jobs, logs and
/// artifacts (actions), write a large diff's branch and read the draft's head (contents), find
/// the draft (pull requests) and read the App's check run on it (checks).
pub const DISPATCHER_PERMISSIONS: [(&str, &str); 5] = [
    ("actions", "write"),
    ("checks", "read"),
    ("contents", "write"),
    ("metadata", "read"),
    ("pull_requests", "read"),
];

impl Kind {
    pub fn permissions(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Kind::Publish => &APP_PERMISSIONS,
            Kind::Dispatcher => &DISPATCHER_PERMISSIONS,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Publish => "publishing",
            Kind::Dispatcher => "dispatcher",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AppCreateError {
    #[error("{0}")]
    Usage(String),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error(
        "no browser came back with the App's code within {0} s (GitHub's code is good for an hour)"
    )]
    TimedOut(u64),
    #[error("exchanging the code for the App: {0}")]
    Conversion(String),
    #[error(
        "GitHub returned an App that is not the one the manifest asked for ({problem}); its key was not written: delete it ({url}) and run gate app create again"
    )]
    NotOurs { problem: String, url: String },
}

/// What `gate app create` is asked for.
#[derive(Debug, Clone)]
pub struct CreateRequest {
    pub kind: Kind,
    /// `owner/name`: the App is the owner's and named after the repository.
    pub repository: String,
    /// Register the App under the organization that owns the repository (else the personal
    /// account, which must then be the owner).
    pub organization: bool,
    /// github.com, or a GitHub Enterprise Server's web address: where the form posts to.
    pub web_url: String,
    /// Where the private key goes (created, mode 0600; an existing file is never replaced).
    pub key_out: PathBuf,
    /// The loopback port (0: any free one).
    pub port: u16,
    pub timeout: Duration,
}

impl CreateRequest {
    fn owner(&self) -> &str {
        self.repository.split('/').next().unwrap_or("")
    }
}

/// The manifest for `kind`, with `redirect_url` the loopback callback.
pub fn manifest(kind: Kind, repository: &str, redirect_url: &str) -> Value {
    let mut manifest = crate::init::app_manifest(Some(repository));
    let name = repository.rsplit('/').next().unwrap_or(repository);
    let permissions: serde_json::Map<String, Value> = kind
        .permissions()
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    manifest["default_permissions"] = Value::Object(permissions);
    manifest["redirect_url"] = json!(redirect_url);
    if kind == Kind::Dispatcher {
        manifest["name"] = json!(format!("{name}-agent-team-dispatcher"));
        manifest["description"] = json!(
            "Dispatches agent-team-apply runs and reads their outcome (actions write; checks, pull requests read; contents write for large diffs)."
        );
    }
    manifest
}

/// 16 bytes of the kernel's random source, in hex.
fn random_state() -> Result<String, AppCreateError> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| AppCreateError::Io {
            path: "/dev/urandom".into(),
            message: e.to_string(),
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `text` for an HTML attribute value or element text.
fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page: a form that posts the manifest to GitHub. No script: the person presses the button.
fn page(request: &CreateRequest, manifest: &Value, state: &str) -> String {
    let web = request.web_url.trim_end_matches('/');
    let action = if request.organization {
        format!(
            "{web}/organizations/{}/settings/apps/new?state={state}",
            github::encode_component(request.owner())
        )
    } else {
        format!("{web}/settings/apps/new?state={state}")
    };
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Register the {label} App</title></head>\n<body>\n<h1>Register the {label} App of {repo}</h1>\n<p>GitHub shows the App's name, permissions and events before it creates anything.</p>\n<form action=\"{action}\" method=\"post\">\n<input type=\"hidden\" name=\"manifest\" value=\"{manifest}\">\n<button type=\"submit\">Register on GitHub</button>\n</form>\n</body></html>\n",
        label = request.kind.label(),
        repo = html_escape(&request.repository),
        action = html_escape(&action),
        manifest = html_escape(&manifest.to_string()),
    )
}

/// One request to the loopback page, as far as it is read: the method, the target, the `Host`.
struct Incoming {
    method: String,
    target: String,
    host: Option<String>,
}

/// Read a request's head (at most 16 KiB; anything else is not a browser's GET).
fn read_head(stream: &mut TcpStream) -> Option<Incoming> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 || head.len() + n > 16 << 10 {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, target) = (first.next()?.to_owned(), first.next()?.to_owned());
    let host = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.trim().to_owned());
    Some(Incoming {
        method,
        target,
        host,
    })
}

fn respond(stream: &mut TcpStream, status: &str, content_type: &str, body: &str) {
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\nx-frame-options: DENY\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // A browser that went away takes nothing with it; the flow goes on.
    let _ = stream.write_all(reply.as_bytes());
}

/// The `code` of a callback target `/callback?code=...&state=...` whose state is `state`.
fn callback_code(target: &str, state: &str) -> Result<Option<String>, &'static str> {
    let Some(query) = target.strip_prefix("/callback?") else {
        return Ok(None);
    };
    let mut pairs: BTreeMap<&str, &str> = BTreeMap::new();
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if pairs.insert(k, v).is_some() {
            return Err("a parameter given twice");
        }
    }
    let given = pairs.get("state").copied().unwrap_or("");
    if !bool::from(given.as_bytes().ct_eq(state.as_bytes())) {
        return Err("not this run's state");
    }
    let code = pairs.get("code").copied().unwrap_or("");
    if code.is_empty() || code.len() > 100 || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err("no code GitHub would send");
    }
    Ok(Some(code.to_owned()))
}

/// Check the App GitHub made against what was asked for.
fn check_created(request: &CreateRequest, app: &CreatedApp) -> Result<(), AppCreateError> {
    let want: BTreeMap<String, String> = request
        .kind
        .permissions()
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let mut problems = Vec::new();
    if !app.owner.login.eq_ignore_ascii_case(request.owner()) {
        problems.push(format!(
            "it belongs to {:?}, not to the repository's owner {:?}{}",
            app.owner.login,
            request.owner(),
            if request.organization {
                ""
            } else {
                " (for an organization's repository, run with --org)"
            }
        ));
    }
    if app.permissions != want {
        problems.push(format!(
            "its permissions are {:?}, not {:?}",
            app.permissions, want
        ));
    }
    if !app.events.is_empty() {
        problems.push(format!("it subscribes to events {:?}", app.events));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(AppCreateError::NotOurs {
            problem: problems.join("; "),
            url: app.html_url.clone(),
        })
    }
}

/// Write the key: a new file, mode 0600, never over an existing one.
fn write_key(path: &Path, pem: &str) -> Result<(), AppCreateError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| AppCreateError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    file.write_all(pem.as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)
}

/// A listening page, before anyone has come.
pub struct Listening {
    listener: TcpListener,
    port: u16,
    state: String,
    page: String,
}

impl Listening {
    /// The address to open in a browser.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

/// Refuse what cannot work before anything is registered, then listen on the loopback.
pub fn listen(request: &CreateRequest) -> Result<Listening, AppCreateError> {
    let (owner, name) = request.repository.split_once('/').unwrap_or(("", ""));
    if owner.is_empty() || name.is_empty() || name.contains('/') {
        return Err(AppCreateError::Usage(format!(
            "--repository {:?} is not OWNER/NAME",
            request.repository
        )));
    }
    let web = request.web_url.as_str();
    let loopback_http = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"]
        .iter()
        .any(|p| web.starts_with(p));
    if !web.starts_with("https://") && !loopback_http {
        return Err(AppCreateError::Usage(format!(
            "--web-url {web:?} is not https:// (plain http only on a loopback address)"
        )));
    }
    // Nothing is registered yet: a key that could not be written is found out now.
    match std::fs::symlink_metadata(&request.key_out) {
        Ok(_) => {
            return Err(AppCreateError::Usage(format!(
                "{} exists; the App's key is written to a new file only (--key-out)",
                request.key_out.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(AppCreateError::Io {
                path: request.key_out.display().to_string(),
                message: e.to_string(),
            });
        }
    }
    let listener =
        TcpListener::bind(("127.0.0.1", request.port)).map_err(|e| AppCreateError::Io {
            path: format!("127.0.0.1:{}", request.port),
            message: e.to_string(),
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| AppCreateError::Io {
            path: "127.0.0.1".into(),
            message: e.to_string(),
        })?
        .port();
    let state = random_state()?;
    let manifest = manifest(
        request.kind,
        &request.repository,
        &format!("http://127.0.0.1:{port}/callback"),
    );
    let page = page(request, &manifest, &state);
    Ok(Listening {
        listener,
        port,
        state,
        page,
    })
}

/// Serve the page until a callback brings this run's code, exchange it, check the App and write
/// its key. `exchange` is `POST /app-manifests/{code}/conversions`.
pub fn finish(
    request: &CreateRequest,
    listening: Listening,
    exchange: &dyn Fn(&str) -> Result<CreatedApp, String>,
) -> Result<CreatedApp, AppCreateError> {
    let io = |e: std::io::Error| AppCreateError::Io {
        path: format!("127.0.0.1:{}", listening.port),
        message: e.to_string(),
    };
    listening.listener.set_nonblocking(true).map_err(io)?;
    let hosts = [
        format!("127.0.0.1:{}", listening.port),
        format!("localhost:{}", listening.port),
    ];
    let start = Instant::now();
    let code = loop {
        if start.elapsed() > request.timeout {
            return Err(AppCreateError::TimedOut(request.timeout.as_secs()));
        }
        let mut stream = match listening.listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Err(e) => return Err(io(e)),
        };
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        let Some(incoming) = read_head(&mut stream) else {
            continue;
        };
        if !incoming
            .host
            .as_deref()
            .is_some_and(|h| hosts.iter().any(|ours| ours.eq_ignore_ascii_case(h)))
        {
            respond(
                &mut stream,
                "421 Misdirected Request",
                "text/plain",
                "not this page's address\n",
            );
            continue;
        }
        if incoming.method != "GET" {
            respond(
                &mut stream,
                "405 Method Not Allowed",
                "text/plain",
                "GET only\n",
            );
            continue;
        }
        if incoming.target == "/" {
            respond(
                &mut stream,
                "200 OK",
                "text/html; charset=utf-8",
                &listening.page,
            );
            continue;
        }
        match callback_code(&incoming.target, &listening.state) {
            Ok(Some(code)) => {
                respond(
                    &mut stream,
                    "200 OK",
                    "text/plain; charset=utf-8",
                    "GitHub registered the App; go back to the terminal.\n",
                );
                break code;
            }
            Ok(None) => respond(&mut stream, "404 Not Found", "text/plain", "not found\n"),
            Err(why) => respond(
                &mut stream,
                "400 Bad Request",
                "text/plain",
                &format!("refused: {why}\n"),
            ),
        }
    };
    let app = exchange(&code).map_err(AppCreateError::Conversion)?;
    check_created(request, &app)?;
    write_key(&request.key_out, &app.pem)?;
    Ok(app)
}

/// The steps after the App exists, for its kind.
pub fn next_steps(request: &CreateRequest, app: &CreatedApp) -> Vec<String> {
    let web = request.web_url.trim_end_matches('/');
    let install = format!(
        "Install it on {} only: {web}/apps/{}/installations/new (Only select repositories).",
        request.repository, app.slug
    );
    match request.kind {
        Kind::Publish => vec![
            install,
            format!(
                "Write the agent-team/** ruleset: gate init --repository {} --app-id {} (ADOPTING.md, step 5).",
                request.repository, app.id
            ),
            format!(
                "In the environment agent-team-publish: the secret AGENT_TEAM_APP_PRIVATE_KEY (the contents of {}), the variables AGENT_TEAM_APP_CLIENT_ID={} and AGENT_TEAM_APP_ID={}; in agent-team-verify, the variable AGENT_TEAM_APP_ID={} (ADOPTING.md, step 3). Then delete the key file.",
                request.key_out.display(),
                app.client_id,
                app.id,
                app.id
            ),
        ],
        Kind::Dispatcher => vec![
            install,
            format!(
                "Give the dispatcher's machine the key ({}, kept 0600) and the App's id {}; list the App on the bypass list of the agent-team-diffs/** ruleset if large diffs travel on branches (ADOPTING.md, step 7).",
                request.key_out.display(),
                app.id
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callback_is_believed_only_with_this_runs_state_and_a_plain_code() {
        let s = "00112233445566778899aabbccddeeff";
        assert_eq!(
            callback_code(&format!("/callback?code=abc123&state={s}"), s),
            Ok(Some("abc123".to_owned()))
        );
        assert_eq!(callback_code("/favicon.ico", s), Ok(None));
        assert_eq!(
            callback_code("/callback?code=abc123&state=ffff", s),
            Err("not this run's state")
        );
        assert_eq!(
            callback_code("/callback?code=abc123", s),
            Err("not this run's state")
        );
        assert_eq!(
            callback_code(&format!("/callback?code=a%20b&state={s}"), s),
            Err("no code GitHub would send")
        );
        assert_eq!(
            callback_code(&format!("/callback?code=x&state={s}&state={s}"), s),
            Err("a parameter given twice")
        );
    }

    #[test]
    fn the_manifest_is_html_escaped_in_the_page() {
        assert_eq!(
            html_escape(r#"{"a":"<b>&'"}"#),
            "{&quot;a&quot;:&quot;&lt;b&gt;&amp;&#39;&quot;}"
        );
    }
}
