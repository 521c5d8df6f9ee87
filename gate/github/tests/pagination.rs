//! Lists against the stand-in, which pages as GitHub does: default 30 a page, at most 100, a
//! `link` header with `next` and `last`, pull requests newest first. The client follows every
//! `next` to the end, at most `MAX_PAGES` pages, and only to the API's own URL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use github::paginate::MAX_PAGES;
use github::{ApiUrl, Call, Client, ClientConfig, Error, Repository, Token, VirtualClock};
use github_standin::{Canned, CheckRunState, Fault, PullState, Scenario, StandIn};

fn client_for(gh: &StandIn) -> Client {
    let token = gh.token();
    let config = ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&|name| (name == "GH_TOKEN").then(|| token.clone())).unwrap(),
        Arc::new(VirtualClock::new(0)),
    );
    Client::new(config).unwrap()
}

fn repo() -> Repository {
    Repository::parse("octo/repo").unwrap()
}

/// `count` closed pull requests from `branch`, numbered from 1 in creation order.
fn with_pulls(gh: &StandIn, branch: &str, count: u64) {
    let mut state = gh.state();
    for number in 1..=count {
        state.pulls.push(PullState {
            number,
            title: format!("t{number}"),
            body: String::new(),
            head: branch.to_owned(),
            head_sha: format!("{number:040x}"),
            base: "main".into(),
            draft: true,
            state: "closed".into(),
            labels: Vec::new(),
            requested_reviewers: Vec::new(),
            requested_teams: Vec::new(),
            merged: false,
            user: "agent-team-apply[bot]".into(),
        });
    }
}

fn pull_lists(gh: &StandIn) -> Vec<github_standin::Recorded> {
    gh.requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path.ends_with("/pulls"))
        .collect()
}

#[test]
fn the_stand_in_pages_as_github_does() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    with_pulls(&gh, "agent-team/T-1", 101);
    let client = client_for(&gh);
    let list = |query: &[(&'static str, &str)]| {
        let mut call = Call::get(repo().path("/pulls"))
            .query("head", "octo:agent-team/T-1")
            .query("state", "all");
        for (name, value) in query {
            call = call.query(name, *value);
        }
        let response = client.send(&call).unwrap();
        assert_eq!(response.status, 200);
        let numbers: Vec<u64> = serde_json::from_slice::<Vec<serde_json::Value>>(&response.body)
            .unwrap()
            .iter()
            .map(|p| p["number"].as_u64().unwrap())
            .collect();
        (numbers, response.header("link").map(str::to_owned))
    };
    let base = gh.url();

    // Default: 30 a page, newest first, next and last named.
    let (numbers, link) = list(&[]);
    assert_eq!(numbers, (72..=101).rev().collect::<Vec<_>>());
    let link = link.expect("a link header on a list of several pages");
    assert!(
        link.contains(&format!(
            "<{base}/repos/octo/repo/pulls?head=octo%3Aagent-team%2FT-1&state=all&page=2>; rel=\"next\""
        )),
        "{link}"
    );
    assert!(link.contains("&page=4>; rel=\"last\""), "{link}");
    assert!(!link.contains("rel=\"prev\""), "{link}");

    // At most 100 a page, however many are asked for; the last page has no next.
    let (numbers, link) = list(&[("per_page", "500")]);
    assert_eq!(numbers.len(), 100);
    assert_eq!(numbers.first(), Some(&101));
    let (numbers, link2) = list(&[("per_page", "100"), ("page", "2")]);
    assert_eq!(numbers, vec![1]);
    let link2 = link2.unwrap();
    assert!(!link2.contains("rel=\"next\""), "{link2}");
    assert!(link2.contains("rel=\"prev\"") && link2.contains("rel=\"first\""));
    assert!(link.unwrap().contains("per_page=500&page=2>; rel=\"next\""));

    // Oldest first only when asked; one page, no link header.
    let (numbers, link) = list(&[("direction", "asc"), ("per_page", "5")]);
    assert_eq!(numbers, vec![1, 2, 3, 4, 5]);
    assert!(link.is_some());
    with_pulls(&gh, "agent-team/T-2", 3);
    let response = client
        .send(&Call::get(repo().path("/pulls")).query("head", "octo:agent-team/T-2"))
        .unwrap();
    assert_eq!(response.header("link"), None);
}

/// The regression of issue 28: with 101 newer pull requests from the branch, the oldest fell
/// off the one page that was read.
#[test]
fn a_list_of_many_pages_is_read_to_its_end() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    with_pulls(&gh, "agent-team/T-1", 250);
    let client = client_for(&gh);
    let pulls = client
        .list_all_pulls_from(&repo(), "agent-team/T-1")
        .unwrap();
    assert_eq!(pulls.len(), 250);
    assert_eq!(pulls.last().map(|p| p.number), Some(1));
    let requests = pull_lists(&gh);
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].query("per_page"), Some("100"));
    assert_eq!(requests[2].query("page"), Some("3"));
    assert_eq!(requests[2].query("per_page"), Some("100"));
}

#[test]
fn check_runs_are_read_to_their_end() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    {
        let mut state = gh.state();
        for id in 1..=205 {
            state.check_runs.push(CheckRunState {
                id,
                name: "n".into(),
                head_sha: "a".repeat(40),
                conclusion: Some("success".into()),
                app_id: 7,
                app_slug: "x".into(),
                output_text: String::new(),
                external_id: None,
                output_summary: String::new(),
            });
        }
    }
    let runs = client_for(&gh)
        .list_check_runs(&repo(), &"a".repeat(40), "n", Some(7))
        .unwrap();
    assert_eq!(runs.total_count, 205);
    assert_eq!(runs.check_runs.len(), 205);
    assert_eq!(runs.check_runs.last().map(|c| c.id), Some(205));
}

#[test]
fn a_list_longer_than_the_bound_is_refused() {
    let gh = StandIn::start(Scenario::default()).unwrap();
    let per_page = 100;
    with_pulls(&gh, "agent-team/T-1", (MAX_PAGES * per_page + 1) as u64);
    let err = client_for(&gh)
        .list_all_pulls_from(&repo(), "agent-team/T-1")
        .unwrap_err();
    assert!(
        matches!(err, Error::TooManyPages { pages, .. } if pages == MAX_PAGES),
        "{err:?}"
    );
    assert!(err.to_string().contains("more than 10 pages"), "{err}");
    assert_eq!(pull_lists(&gh).len(), MAX_PAGES);

    // Exactly at the bound is a whole list.
    let gh = StandIn::start(Scenario::default()).unwrap();
    with_pulls(&gh, "agent-team/T-1", (MAX_PAGES * per_page) as u64);
    let pulls = client_for(&gh)
        .list_all_pulls_from(&repo(), "agent-team/T-1")
        .unwrap();
    assert_eq!(pulls.len(), MAX_PAGES * per_page);
}

#[test]
fn a_next_page_elsewhere_or_twice_is_refused() {
    let page = |link: String| Canned {
        status: 200,
        headers: vec![("link".into(), link)],
        body: "[]".into(),
    };
    for (link, expected) in [
        (
            "<https://evil.example/repos/octo/repo/pulls?page=2>; rel=\"next\"".to_owned(),
            "is not under the API URL",
        ),
        ("<PLACEHOLDER/repos/octo/repo/pulls?head=octo%3Ab&state=all&per_page=100>; rel=\"next\"".to_owned(), "already read"),
        ("<PLACEHOLDER/x?page=2>; rel=\"next\" junk".to_owned(), "malformed"),
    ] {
        let gh = StandIn::start(Scenario::default()).unwrap();
        let link = link.replace("PLACEHOLDER", &gh.url());
        gh.state()
            .scenario
            .faults
            .push(Fault::new("GET", "/repos/octo/repo/pulls", vec![page(link)]));
        let err = client_for(&gh).list_all_pulls_from(&repo(), "b").unwrap_err();
        assert!(err.to_string().contains(expected), "{expected}: {err}");
        // Nothing was sent anywhere else.
        assert_eq!(pull_lists(&gh).len(), 1);
    }
}
