//! The client on its own: token and proxy configuration, retries that must not repeat a
//! dispatch, bounded bodies, redirects, and the Git database, pulls and check runs against the
//! stand-in (whose object ids are checked against real git).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use github::git::TreeEntry;
use github::pulls::NewPullRequest;
use github::{
    ApiUrl, Call, Client, ClientConfig, ConfigError, Error, Method, ProxySettings, Replay,
    Repository, Token, VirtualClock,
};
use github_standin::{Scenario, StandIn};

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

fn client_for(url: &str, token: &str, clock: &Arc<VirtualClock>) -> Client {
    let config = ClientConfig::new(
        ApiUrl::parse(url).unwrap(),
        Token::from_env(&env_of(&[("GH_TOKEN", token)])).unwrap(),
        clock.clone(),
    );
    Client::new(config).unwrap()
}

#[test]
fn token_comes_from_gh_token_then_github_token_and_is_never_shown() {
    let t = Token::from_env(&env_of(&[("GH_TOKEN", "ghs_a"), ("GITHUB_TOKEN", "ghs_b")])).unwrap();
    assert_eq!(t.redact("x ghs_a y"), "x <redacted> y");
    let t = Token::from_env(&env_of(&[("GH_TOKEN", ""), ("GITHUB_TOKEN", "ghs_b")])).unwrap();
    assert_eq!(t.redact("ghs_b"), "<redacted>");
    assert_eq!(format!("{t:?}"), "Token(<redacted>)");
    assert_eq!(
        Token::from_env(&env_of(&[])).unwrap_err(),
        ConfigError::NoToken
    );
    assert_eq!(
        Token::from_env(&env_of(&[("GITHUB_TOKEN", "ghs_b\n")])).unwrap_err(),
        ConfigError::MalformedToken {
            variable: "GITHUB_TOKEN"
        }
    );
}

#[test]
fn api_url_defaults() {
    let none = env_of(&[]);
    assert_eq!(
        ApiUrl::resolve(None, &none).unwrap().as_str(),
        "https://api.github.com"
    );
    let ghes = env_of(&[("GITHUB_API_URL", "https://ghe.example/api/v3")]);
    assert_eq!(
        ApiUrl::resolve(None, &ghes).unwrap().as_str(),
        "https://ghe.example/api/v3"
    );
    assert_eq!(
        ApiUrl::resolve(Some("https://other.example/"), &ghes)
            .unwrap()
            .as_str(),
        "https://other.example"
    );
}

#[test]
fn proxies_follow_the_environment() {
    let p = ProxySettings::from_env(&env_of(&[
        ("https_proxy", "http://secure:3128"),
        ("HTTP_PROXY", "http://plain:3128"),
        ("ALL_PROXY", "http://all:3128"),
        (
            "NO_PROXY",
            "internal.example, .corp.example,*.svc.example,direct:8443",
        ),
    ]));
    let url = |https, host| p.proxy_for(https, host).map(|(_, u)| u.as_str());
    assert_eq!(url(true, "api.github.com"), Some("http://secure:3128"));
    assert_eq!(url(false, "127.0.0.1"), Some("http://plain:3128"));
    for direct in [
        "internal.example",
        "a.internal.example",
        "x.corp.example",
        "corp.example",
        "a.svc.example",
        "direct",
    ] {
        assert_eq!(url(true, direct), None, "{direct}");
    }
    assert_eq!(url(true, "notinternal.example"), Some("http://secure:3128"));
    let all = ProxySettings::from_env(&env_of(&[("ALL_PROXY", "http://all:3128")]));
    assert_eq!(
        all.proxy_for(true, "x").map(|(_, u)| u.as_str()),
        Some("http://all:3128")
    );
    let star = ProxySettings::from_env(&env_of(&[
        ("ALL_PROXY", "http://all:3128"),
        ("no_proxy", "*"),
    ]));
    assert_eq!(star.proxy_for(true, "x"), None);
    // A proxy that cannot be used is an error, never a silent direct connection.
    let bad = ProxySettings::from_env(&env_of(&[("HTTPS_PROXY", "::not a url::")]));
    let mut config = ClientConfig::new(
        ApiUrl::parse("https://api.github.com").unwrap(),
        Token::from_env(&env_of(&[("GH_TOKEN", "t")])).unwrap(),
        Arc::new(VirtualClock::new(0)),
    );
    config.proxy = bad;
    assert!(matches!(
        Client::new(config).unwrap_err(),
        ConfigError::Proxy { .. }
    ));
}

/// A port nothing listens on: bind, read the port, close.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_connection_that_never_opened_is_retried_even_for_a_dispatch() {
    let clock = Arc::new(VirtualClock::new(0));
    let client = client_for(
        &format!("http://127.0.0.1:{}", closed_port()),
        "ghs_0123456789abcdefghij",
        &clock,
    );
    let repo = Repository::parse("octo/repo").unwrap();
    let err = client
        .dispatch_workflow(&repo, "w.yml", "refs/heads/main", &BTreeMap::new(), true)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                may_have_reached: false,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("Connection refused"), "{err}");
    assert_eq!(
        clock.sleeps(),
        [
            Duration::from_secs(1),
            Duration::from_secs(2),
            Duration::from_secs(4)
        ]
    );
}

/// A name that cannot resolve (`.invalid` is reserved never to, RFC 6761 section 6.4): the
/// request never left the machine, so it is named a network error that did not reach GitHub,
/// and a dispatch may be sent again.
#[test]
fn a_name_that_does_not_resolve_is_a_network_error_that_did_not_reach_github() {
    let clock = Arc::new(VirtualClock::new(0));
    let client = client_for(
        "https://agent-team-apply.invalid",
        "ghs_0123456789abcdefghij",
        &clock,
    );
    let repo = Repository::parse("octo/repo").unwrap();
    let err = client
        .dispatch_workflow(&repo, "w.yml", "refs/heads/main", &BTreeMap::new(), true)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                may_have_reached: false,
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("network error"), "{text}");
    assert!(
        text.ends_with("(the request did not reach GitHub)"),
        "{text}"
    );
    assert_eq!(
        clock.sleeps().len(),
        3,
        "retried as a connection that never opened"
    );
}

#[test]
fn bodies_are_bounded() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let mut config = ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&env_of(&[("GH_TOKEN", &gh.token())])).unwrap(),
        Arc::new(VirtualClock::new(0)),
    );
    config.max_body_bytes = 64;
    let client = Client::new(config).unwrap();
    let repo = Repository::parse("octo/repo").unwrap();
    let err = client
        .get_workflow(&repo, "agent-team-apply.yml")
        .unwrap_err();
    assert!(
        matches!(err, Error::BodyTooLarge { limit: 64, .. }),
        "{err:?}"
    );
}

#[test]
fn redirects_are_never_followed_with_the_token_and_only_to_https() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client_for(&gh.url(), &gh.token(), &clock);
    let err = client
        .fetch_redirect_tail("http://logs.example/x", 10, 100)
        .unwrap_err();
    assert!(err.to_string().contains("not an https:// URL"), "{err}");
    assert!(gh.requests().is_empty());
    // A 3xx from the API itself comes back as a response, not followed.
    let call = Call::get("/repos/octo/repo/actions/jobs/1/logs".to_owned());
    let response = client.send(&call).unwrap();
    assert_eq!(response.status, 404);
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = github_standin::git_command(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Trees built through the API on the stand-in have the ids git computes for the same files
/// and modes: a later publication can compare the published tree with git's.
#[test]
fn git_database_ids_match_real_git() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client_for(&gh.url(), &gh.token(), &clock);
    let repo = Repository::parse("octo/repo").unwrap();
    let files: [(&str, &[u8], &str); 4] = [
        ("README.md", b"hello\n", "100644"),
        ("bin/run", b"#!/bin/sh\necho run\n", "100755"),
        ("src/a b.rs", b"fn a() {}\n", "100644"),
        ("src/deep/x-y.txt", b"\x00\xffbinary", "100644"),
    ];
    let mut entries = Vec::new();
    for (path, bytes, mode) in files {
        let blob = client.create_blob(&repo, bytes).unwrap();
        entries.push(TreeEntry {
            path: path.to_owned(),
            mode: mode.to_owned(),
            kind: "blob".to_owned(),
            sha: Some(blob.sha),
        });
    }
    let tree = client.create_tree(&repo, None, &entries).unwrap();

    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    for (path, bytes, mode) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, bytes).unwrap();
        git(dir.path(), &["add", path]);
        if mode == "100755" {
            git(dir.path(), &["update-index", "--chmod=+x", path]);
        }
    }
    assert_eq!(tree.sha, git(dir.path(), &["write-tree"]));

    // On a base tree: change one file, delete one.
    let blob = client.create_blob(&repo, b"changed\n").unwrap();
    let edits = [
        TreeEntry {
            path: "README.md".into(),
            mode: "100644".into(),
            kind: "blob".into(),
            sha: Some(blob.sha),
        },
        TreeEntry {
            path: "src/a b.rs".into(),
            mode: "100644".into(),
            kind: "blob".into(),
            sha: None,
        },
    ];
    let edited = client.create_tree(&repo, Some(&tree.sha), &edits).unwrap();
    std::fs::write(dir.path().join("README.md"), b"changed\n").unwrap();
    git(dir.path(), &["add", "README.md"]);
    git(dir.path(), &["rm", "-q", "--cached", "src/a b.rs"]);
    assert_eq!(edited.sha, git(dir.path(), &["write-tree"]));

    let commit = client
        .create_commit(&repo, "base\n", &tree.sha, &[])
        .unwrap();
    assert_eq!(commit.tree.sha, tree.sha);
    assert!(commit.parents.is_empty());
    let child = client
        .create_commit(
            &repo,
            "child\n",
            &edited.sha,
            std::slice::from_ref(&commit.sha),
        )
        .unwrap();
    assert_eq!(client.get_commit(&repo, &child.sha).unwrap(), child);

    // Refs: create, refuse a duplicate, fast-forward, refuse a non-fast-forward unless forced.
    client
        .create_ref(&repo, "refs/heads/topic", &commit.sha)
        .unwrap();
    let dup = client
        .create_ref(&repo, "refs/heads/topic", &commit.sha)
        .unwrap_err();
    assert_eq!(dup.status(), Some(422), "{dup}");
    assert!(
        dup.to_string().contains("Reference already exists"),
        "{dup}"
    );
    client
        .update_ref(&repo, "heads/topic", &child.sha, false)
        .unwrap();
    let back = client
        .update_ref(&repo, "heads/topic", &commit.sha, false)
        .unwrap_err();
    assert!(back.to_string().contains("not a fast forward"), "{back}");
    client
        .update_ref(&repo, "heads/topic", &commit.sha, true)
        .unwrap();
    assert_eq!(
        client
            .get_ref(&repo, "heads/topic")
            .unwrap()
            .unwrap()
            .object
            .sha,
        commit.sha
    );
    assert_eq!(client.get_ref(&repo, "heads/none").unwrap(), None);

    // Nothing here named an author or committer.
    for r in gh
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/git/commits"))
    {
        let body = r.json();
        assert!(body.get("author").is_none() && body.get("committer").is_none());
    }
}

#[test]
fn pulls_and_check_runs() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client_for(&gh.url(), &gh.token(), &clock);
    let repo = Repository::parse("octo/repo").unwrap();
    let tree = client.create_tree(&repo, None, &[]).unwrap();
    let commit = client.create_commit(&repo, "m\n", &tree.sha, &[]).unwrap();
    client
        .create_ref(&repo, "refs/heads/agent-team/T-9", &commit.sha)
        .unwrap();
    let pull = client
        .create_pull(
            &repo,
            &NewPullRequest {
                title: "t".into(),
                body: "b".into(),
                head: "agent-team/T-9".into(),
                base: "main".into(),
                draft: true,
            },
        )
        .unwrap();
    assert_eq!(pull.draft, Some(true));
    assert_eq!(pull.head.sha, commit.sha);
    let listed = client
        .list_open_pulls_from(&repo, "agent-team/T-9")
        .unwrap();
    assert_eq!(listed, vec![pull]);
    assert!(
        client
            .list_open_pulls_from(&repo, "agent-team/T-8")
            .unwrap()
            .is_empty()
    );

    let body = serde_json::json!({
        "name": "agent-team-apply / gate",
        "head_sha": commit.sha,
        "status": "completed",
        "conclusion": "success",
    });
    let created = client.create_check_run(&repo, &body).unwrap();
    let runs = client
        .list_check_runs(&repo, &commit.sha, "agent-team-apply / gate", None)
        .unwrap();
    assert_eq!(runs.check_runs, vec![created]);
    let posts: Vec<String> = gh
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.path.clone())
        .collect();
    assert!(posts.contains(&"/repos/octo/repo/pulls".to_owned()));
    assert!(posts.contains(&"/repos/octo/repo/check-runs".to_owned()));
}

#[test]
fn any_status_comes_back_as_a_response_and_typed_calls_name_it() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client_for(&gh.url(), &gh.token(), &clock);
    let call = Call::with_json(
        Method::Post,
        "/repos/octo/repo/git/refs".to_owned(),
        &serde_json::json!({ "ref": "refs/heads/x", "sha": "0".repeat(40) }),
        Replay::Once,
    )
    .unwrap();
    let response = client.send(&call).unwrap();
    assert_eq!(response.status, 422);
    assert_eq!(
        response.github_message().as_deref(),
        Some("Object does not exist")
    );
    assert!(response.date().is_some());
}

#[test]
fn graphql_goes_to_the_graphql_endpoint_of_the_api_url() {
    for (api, graphql) in [
        ("https://api.github.com", "https://api.github.com/graphql"),
        ("https://api.github.com/", "https://api.github.com/graphql"),
        (
            "https://ghe.example.com/api/v3",
            "https://ghe.example.com/api/graphql",
        ),
        (
            "https://ghe.example.com/api/v3/",
            "https://ghe.example.com/api/graphql",
        ),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/graphql"),
    ] {
        assert_eq!(ApiUrl::parse(api).unwrap().graphql_url(), graphql, "{api}");
    }
}

/// A runner names both endpoints (`GITHUB_API_URL`, `GITHUB_GRAPHQL_URL`); GraphQL goes where it
/// says, unless `--api-url` was given, and never to another host than the REST API's.
#[test]
fn graphql_goes_to_github_graphql_url_when_the_runner_sets_it() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let ghes = env(&[
        ("GITHUB_API_URL", "https://ghe.example.com/api/v3"),
        (
            "GITHUB_GRAPHQL_URL",
            "https://ghe.example.com/custom/graphql",
        ),
    ]);
    assert_eq!(
        ApiUrl::resolve(None, &ghes).unwrap().graphql_url(),
        "https://ghe.example.com/custom/graphql"
    );
    let flag = ApiUrl::resolve(Some("http://127.0.0.1:9/api/v3"), &ghes).unwrap();
    assert_eq!(flag.graphql_url(), "http://127.0.0.1:9/api/graphql");
    let elsewhere = env(&[
        ("GITHUB_API_URL", "https://ghe.example.com/api/v3"),
        ("GITHUB_GRAPHQL_URL", "https://evil.example.net/api/graphql"),
    ]);
    let err = ApiUrl::resolve(None, &elsewhere).unwrap_err().to_string();
    assert!(
        err.contains("GITHUB_GRAPHQL_URL is not on the REST API's scheme and host"),
        "{err}"
    );
    let unset = env(&[("GITHUB_API_URL", "https://api.github.com")]);
    assert_eq!(
        ApiUrl::resolve(None, &unset).unwrap().graphql_url(),
        "https://api.github.com/graphql"
    );
}

/// `createCommitOnBranch` is sent once with `{query, variables: {input}}`; an answer with
/// `errors` (even with `data`), without a commit, or with a malformed id is an error, never a
/// commit; a 5xx is not retried.
#[test]
fn create_commit_on_branch_succeeds_only_on_a_clean_answer() {
    use github_standin::{Canned, Fault};
    let input = serde_json::json!({
        "branch": { "repositoryNameWithOwner": "octo/repo", "branchName": "b" },
        "expectedHeadOid": "0".repeat(40),
        "message": { "headline": "h" },
        "fileChanges": { "additions": [], "deletions": [] },
    });
    let answers = [
        (
            r#"{"data":{"createCommitOnBranch":null},"errors":[{"type":"STALE_DATA","message":"Expected branch to point to x"}]}"#,
            "STALE_DATA: Expected branch to point to x",
        ),
        (
            r#"{"data":{"createCommitOnBranch":{"commit":{"oid":"1111111111111111111111111111111111111111"}}},"errors":[{"message":"partial"}]}"#,
            "partial",
        ),
        (
            r#"{"data":{"createCommitOnBranch":{"commit":null}}}"#,
            "no commit in the response",
        ),
        (
            r#"{"data":{"createCommitOnBranch":{"commit":{"oid":"HEAD"}}}}"#,
            "is not 40 hex digits",
        ),
    ];
    for (body, expected) in answers {
        let gh = StandIn::start(Scenario {
            faults: vec![Fault::new(
                "POST",
                "/graphql",
                vec![Canned {
                    status: 200,
                    headers: Vec::new(),
                    body: body.to_owned(),
                }],
            )],
            ..Scenario::default()
        })
        .unwrap();
        let clock = Arc::new(VirtualClock::new(0));
        let client = client_for(&gh.url(), &gh.token(), &clock);
        let err = client.create_commit_on_branch(&input).unwrap_err();
        assert!(matches!(err, Error::GraphQl { .. }), "{err}");
        assert!(err.to_string().contains(expected), "{err}");
        let requests = gh.requests();
        assert_eq!(requests.len(), 1);
        let sent = requests[0].json();
        assert_eq!(sent["variables"]["input"], input);
        assert!(
            sent["query"]
                .as_str()
                .unwrap()
                .starts_with("mutation($input: CreateCommitOnBranchInput!)")
        );
    }
    let gh = StandIn::start(Scenario {
        faults: vec![Fault::new(
            "POST",
            "/graphql",
            vec![Canned::status(502, "Bad Gateway"); 3],
        )],
        ..Scenario::default()
    })
    .unwrap();
    let clock = Arc::new(VirtualClock::new(0));
    let client = client_for(&gh.url(), &gh.token(), &clock);
    assert_eq!(
        client.create_commit_on_branch(&input).unwrap_err().status(),
        Some(502)
    );
    assert_eq!(gh.requests().len(), 1, "a mutation is never resent");
}
