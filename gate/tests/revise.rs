//! A revision of an open draft: `gate publish` with a revision adds one App-signed commit on the
//! task's branch, on the signed head, with a compare-and-swap on that head; updates the body
//! (round N); posts the check run on the new head. A revision of a closed, merged, non-draft,
//! foreign or another task's pull request, or one whose head moved, is refused and writes
//! nothing but the dispatch's replay record.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use contract::decision::DecisionDoc;
use contract::verdict::VerdictDoc;
use gate::names::Reviewers;
use gate::output::publish_plan_v2::{PublishMethod, PublishPlanDoc};
use gate::publication::{PROTECTED_LABEL, PublicationReport, PublicationRequest, publish};
use gate::publish::{Outcome, PublishRequest, PublishTarget, prepare};
use github::{ApiUrl, Client, ClientConfig, Repository, Token, VirtualClock};
use github_standin::{PullState, Recorded, RefMove, Scenario, StandIn, export_commit, load_commit};
use guard::policy::Policy;

mod common;
use common::git_command;

const BRANCH: &str = "agent-team/t-1";
const REF: &str = "refs/heads/agent-team/t-1";
const TASK: &str = "t-1";
const CHECK: &str = "agent-team-apply / gate";
const NONCE_1: &str = "11111111111111111111111111111111";
const NONCE_2: &str = "22222222222222222222222222222222";
const NONCE_3: &str = "33333333333333333333333333333333";

fn git_with(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
    let mut cmd = git_command(dir);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn().unwrap();
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn git(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(git_with(dir, args, None))
        .unwrap()
        .trim()
        .to_owned()
}

struct Repo {
    tmp: tempfile::TempDir,
    dir: PathBuf,
    base: String,
}

fn repo() -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("base");
    fs::create_dir(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(dir.join("src/lib.rs"), "pub fn one() -> u32 {\n    1\n}\n").unwrap();
    fs::write(dir.join("README.md"), "readme\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    let base = git(&dir, &["rev-parse", "HEAD"]);
    Repo { tmp, dir, base }
}

#[derive(Clone)]
struct Planned {
    plan: PublishPlanDoc,
    verdict: VerdictDoc,
}

impl Repo {
    /// The diff of writing `files` on `commit` (which `dir` holds).
    fn diff_on(&self, commit: &str, files: &[(&str, &str)]) -> Vec<u8> {
        let name = format!("scratch-{}", commit.get(..12).unwrap());
        let scratch = self.tmp.path().join(&name);
        if !scratch.exists() {
            git(
                &self.dir,
                &["update-ref", &format!("refs/keep/{name}"), commit],
            );
            git(
                self.tmp.path(),
                &[
                    "clone",
                    "-q",
                    "--no-checkout",
                    self.dir.to_str().unwrap(),
                    &name,
                ],
            );
        }
        git(
            &scratch,
            &["fetch", "-q", "origin", &format!("refs/keep/{name}")],
        );
        git(&scratch, &["checkout", "-q", "--detach", commit]);
        for (path, contents) in files {
            let full = scratch.join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, contents).unwrap();
        }
        git(&scratch, &["add", "-A"]);
        let diff = git_with(&scratch, &["diff", "--cached", "HEAD"], None);
        git(&scratch, &["reset", "-q", "--hard"]);
        diff
    }

    /// Write the tree of `diff` applied to `commit` into `dir`'s object store (as a fetch of the
    /// published head would bring it), with a throwaway index.
    fn store_tree(&self, commit: &str, diff: &[u8]) -> String {
        let index = self
            .tmp
            .path()
            .join(format!("index-{}", commit.get(..12).unwrap()));
        let run = |args: &[&str], stdin: Option<&[u8]>| {
            let mut cmd = git_command(&self.dir);
            cmd.env("GIT_INDEX_FILE", &index)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            if let Some(mut pipe) = child.stdin.take() {
                pipe.write_all(stdin.unwrap_or_default()).unwrap();
            }
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        run(&["read-tree", commit], None);
        run(&["apply", "--cached", "-"], Some(diff));
        run(&["write-tree"], None)
    }

    /// The published `commit` (of `diff` on its parent `parent`) in `dir`, under its id.
    fn fetch(&self, gh: &StandIn, parent: &str, diff: &[u8], commit: &str) {
        self.store_tree(parent, diff);
        export_commit(gh, &self.dir, commit).unwrap();
    }

    /// The plan `gate publish-plan` makes of `diff` on `base` for dispatch `nonce`, run `run`.
    fn plan(
        &self,
        base: &str,
        diff: &[u8],
        run: &str,
        nonce: &str,
        method: PublishMethod,
    ) -> Planned {
        let policy = Policy::embedded_default().unwrap();
        let target = PublishTarget::new(Some("octo/repo"), BRANCH, "main", Some(TASK), Some(run))
            .unwrap()
            .with_dispatch_nonce(nonce)
            .unwrap();
        let sha = guard::hash::sha256_hex(diff);
        let outcome = prepare(&PublishRequest {
            repo_dir: &self.dir,
            base,
            diff,
            expected_sha256: &sha,
            scope: &["**".to_owned()],
            policy: &policy,
            target: &target,
            revision: base != self.base,
        })
        .unwrap();
        match outcome {
            Outcome::Plan { mut plan, verdict } => {
                plan.method = method;
                Planned {
                    plan: *plan,
                    verdict: guard::output::json_v1::document(&verdict),
                }
            }
            Outcome::Rejected(r) => panic!("no plan: {:?} {:?}", r.verdict.violations, r.reasons),
        }
    }
}

fn decision_for(plan: &PublishPlanDoc, run: &str) -> DecisionDoc {
    let needs = serde_json::json!({
        "guard": { "result": "success", "outputs": {} },
        "build-test": { "result": "success", "outputs": {} },
    })
    .to_string();
    let decision = gate::decide(
        needs.as_bytes(),
        &["guard", "build-test"],
        run,
        &plan.diff_sha256,
    );
    gate::output::json_v1::document(&decision)
}

fn client_for(gh: &StandIn) -> Client {
    let token = gh.token();
    let env = |name: &str| (name == "GH_TOKEN").then(|| token.clone());
    let mut config = ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&env).unwrap(),
        Arc::new(VirtualClock::new(1_772_366_400)),
    );
    config.deadline = Some(Duration::from_secs(3600));
    Client::new(config).unwrap()
}

struct Published {
    report: PublicationReport,
    requests: Vec<Recorded>,
    log: Vec<String>,
}

impl Published {
    fn failure(&self) -> &str {
        self.report
            .doc
            .failure
            .as_ref()
            .map_or("(none)", |f| f.code.as_str())
    }

    fn message(&self) -> &str {
        self.report
            .doc
            .failure
            .as_ref()
            .map_or("", |f| f.message.as_str())
    }

    fn count(&self, line_start: &str) -> usize {
        self.requests
            .iter()
            .filter(|r| r.line().starts_with(line_start))
            .count()
    }

    fn commit(&self) -> String {
        assert_eq!(
            self.report.exit_code, 0,
            "{:?}\n{:#?}",
            self.report.doc.failure, self.log
        );
        self.report.doc.commit.clone().unwrap()
    }
}

fn publish_with(
    gh: &StandIn,
    planned: &Planned,
    base: &str,
    run: &str,
    attempt: u32,
    revision: Option<u64>,
) -> Published {
    let client = client_for(gh);
    let decision = decision_for(&planned.plan, run);
    let repository = Repository::parse("octo/repo").unwrap();
    let reviewers = Reviewers::default();
    let request = PublicationRequest {
        repository: &repository,
        branch: BRANCH,
        base,
        base_branch: "main",
        decision: &decision,
        verdict: &planned.verdict,
        check_name: CHECK,
        details_url: None,
        protected_label: PROTECTED_LABEL,
        protected_reviewers: &reviewers,
        run_attempt: attempt,
        app_id: 424_242,
        revision,
    };
    let before = gh.requests().len();
    let mut log = Vec::new();
    let report = publish(&client, &planned.plan, &request, &mut |l: &str| {
        log.push(l.to_owned())
    });
    let requests = gh.requests()[before..].to_vec();
    Published {
        report,
        requests,
        log,
    }
}

fn head(gh: &StandIn) -> Option<String> {
    gh.state().git.refs.get(REF).cloned()
}

fn parents(gh: &StandIn, commit: &str) -> Vec<String> {
    match gh.state().git.objects.get(commit) {
        Some(github_standin::git::Object::Commit { parents, .. }) => parents.clone(),
        other => panic!("not a commit: {other:?}"),
    }
}

fn checks_on(gh: &StandIn, commit: &str) -> Vec<String> {
    gh.state()
        .check_runs
        .iter()
        .filter(|c| c.head_sha == commit && c.name == CHECK)
        .map(|c| c.conclusion.clone().unwrap_or_default())
        .collect()
}

/// Round 1 published as a first round, its head exported to the local repository, and the
/// plan of round 2 (a change of `src/lib.rs` on that head).
struct Setup {
    r: Repo,
    gh: StandIn,
    head1: String,
    round2: Planned,
    diff2: Vec<u8>,
}

fn setup(method: PublishMethod) -> Setup {
    let r = repo();
    let gh = StandIn::start(Scenario::default()).unwrap();
    load_commit(&gh, &r.dir, &r.base, "main").unwrap();
    let diff1 = r.diff_on(&r.base, &[("src/new.rs", "// round 1\n")]);
    let round1 = r.plan(&r.base, &diff1, "101", NONCE_1, method);
    let p1 = publish_with(&gh, &round1, &r.base, "101", 1, None);
    let head1 = p1.commit();
    r.fetch(&gh, &r.base, &diff1, &head1);
    let diff2 = r.diff_on(
        &head1,
        &[("src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n")],
    );
    let round2 = r.plan(&head1, &diff2, "102", NONCE_2, method);
    Setup {
        r,
        gh,
        head1,
        round2,
        diff2,
    }
}

const METHODS: [PublishMethod; 2] = [
    PublishMethod::CreateCommitOnBranch,
    PublishMethod::GitDatabase,
];

#[test]
fn a_revision_adds_a_second_commit_on_the_same_draft() {
    for method in METHODS {
        let Setup {
            r,
            gh,
            head1,
            round2,
            diff2,
        } = setup(method);
        assert_eq!(gh.state().pulls.len(), 1);
        let p2 = publish_with(&gh, &round2, &head1, "102", 1, Some(1));
        let head2 = p2.commit();
        // One more commit on the branch: its only parent the previous head, git's tree.
        assert_eq!(head(&gh).as_deref(), Some(head2.as_str()), "{method:?}");
        assert_eq!(parents(&gh, &head2), vec![head1.clone()]);
        assert_eq!(parents(&gh, &head1), vec![r.base.clone()]);
        assert_eq!(
            gh.state().git.commit_tree(&head2),
            Some(round2.plan.tree.as_str())
        );
        assert!(p2.report.doc.tree.proven);
        assert_eq!(
            p2.report.doc.signature.as_ref().map(|s| s.verified),
            Some(true)
        );
        // One pull request, the same; its body says round 2.
        {
            let state = gh.state();
            assert_eq!(state.pulls.len(), 1);
            let pull = &state.pulls[0];
            assert!(pull.draft && pull.state == "open" && pull.head == BRANCH);
            assert!(
                pull.body.starts_with(&format!(
                    "<!-- agent-team-apply round 2 dispatch {NONCE_2} -->"
                )),
                "{}",
                pull.body
            );
            assert!(pull.body.contains("**Round 2** of this draft"));
            assert!(pull.body.contains(&head1));
        }
        let doc_pull = p2.report.doc.pull_request.as_ref().unwrap();
        assert_eq!((doc_pull.number, doc_pull.reused), (1, true));
        assert_eq!(p2.count("POST /repos/octo/repo/pulls"), 0);
        assert_eq!(p2.count("PATCH /repos/octo/repo/pulls/1"), 1);
        // A check run on each head.
        assert_eq!(checks_on(&gh, &head1), ["success"]);
        assert_eq!(checks_on(&gh, &head2), ["success"]);
        // The ref move, when the Git database writes it, is never forced.
        for req in p2
            .requests
            .iter()
            .filter(|q| q.line().starts_with("PATCH /repos/octo/repo/git/refs"))
        {
            assert_eq!(req.json()["force"], serde_json::json!(false));
        }

        // A re-run attempt of round 2 finishes it: no commit again, the round kept.
        let rerun = publish_with(&gh, &round2, &head1, "102", 2, Some(1));
        assert_eq!(rerun.commit(), head2);
        assert_eq!(rerun.count("POST /graphql"), 0);
        assert_eq!(rerun.count("POST /repos/octo/repo/git/commits"), 0);
        assert!(gh.state().pulls[0].body.contains("**Round 2**"));

        // Round 3 on round 2's head.
        r.fetch(&gh, &head1, &diff2, &head2);
        let diff3 = r.diff_on(&head2, &[("README.md", "readme, round 3\n")]);
        let round3 = r.plan(&head2, &diff3, "103", NONCE_3, method);
        let p3 = publish_with(&gh, &round3, &head2, "103", 1, Some(1));
        let head3 = p3.commit();
        assert_eq!(parents(&gh, &head3), vec![head2.clone()]);
        assert_eq!(gh.state().pulls.len(), 1);
        assert!(gh.state().pulls[0].body.contains("**Round 3**"));
        assert_eq!(checks_on(&gh, &head3), ["success"]);
    }
}

/// Nothing but the replay record was written: the branch is where `expected` says, no commit
/// was made, the body is unchanged, the only check run posted is the record.
fn assert_nothing_written(gh: &StandIn, p: &Published, expected_head: &str, body_before: &str) {
    assert_eq!(p.report.exit_code, 1, "{:?}", p.report.doc.failure);
    assert_eq!(head(gh).as_deref(), Some(expected_head));
    assert_eq!(p.count("POST /graphql"), 0, "{:#?}", p.log);
    assert_eq!(p.count("POST /repos/octo/repo/git/commits"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/git/blobs"), 0);
    assert_eq!(p.count("PATCH /repos/octo/repo/git/refs"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/git/refs"), 0);
    assert_eq!(p.count("PATCH /repos/octo/repo/pulls"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/pulls"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/check-runs"), 1);
    assert!(p.report.doc.commit.is_none());
    assert!(p.report.doc.check_run.is_none());
    let state = gh.state();
    assert_eq!(state.pulls[0].body, body_before);
    let record = state
        .check_runs
        .iter()
        .find(|c| c.name == format!("agent-team-apply dispatch {NONCE_2}"))
        .expect("the replay record is written first");
    assert_eq!(record.head_sha, p.report.doc.base_commit);
}

#[test]
fn a_revision_of_a_pull_request_that_is_not_the_tasks_open_draft_is_refused() {
    type Edit = fn(&mut PullState);
    let cases: &[(&str, Edit, &str)] = &[
        (
            "closed",
            |p| p.state = "closed".into(),
            "is closed: a closed pull request is never revised",
        ),
        (
            "merged",
            |p| {
                p.state = "closed".into();
                p.merged = true;
            },
            "was merged",
        ),
        (
            "not the App's",
            |p| p.user = "mallory".into(),
            "was opened by mallory, not by the publishing App (agent-team-apply[bot])",
        ),
        (
            "another App's",
            |p| p.user = "other-app[bot]".into(),
            "was opened by other-app[bot], not by the publishing App",
        ),
        (
            "ready for review",
            |p| p.draft = false,
            "is no longer a draft",
        ),
        (
            "into another base",
            |p| p.base = "release".into(),
            "is into \"release\", not \"main\"",
        ),
    ];
    for (what, edit, reason) in cases {
        let s = setup(PublishMethod::CreateCommitOnBranch);
        edit(&mut s.gh.state().pulls[0]);
        let body = s.gh.state().pulls[0].body.clone();
        let p = publish_with(&s.gh, &s.round2, &s.head1, "102", 1, Some(1));
        assert_eq!(p.failure(), "revision-refused", "{what}: {}", p.message());
        assert!(p.message().contains(reason), "{what}: {}", p.message());
        assert_nothing_written(&s.gh, &p, &s.head1, &body);
    }

    // Another task's pull request: #2 from another branch.
    let s = setup(PublishMethod::CreateCommitOnBranch);
    s.gh.state()
        .git
        .refs
        .insert("refs/heads/agent-team/other".into(), s.head1.clone());
    s.gh.state().pulls.push(PullState {
        number: 2,
        title: "another task".into(),
        body: String::new(),
        head: "agent-team/other".into(),
        head_sha: s.head1.clone(),
        base: "main".into(),
        draft: true,
        state: "open".into(),
        labels: Vec::new(),
        requested_reviewers: Vec::new(),
        requested_teams: Vec::new(),
        merged: false,
        user: "agent-team-apply[bot]".into(),
    });
    let body = s.gh.state().pulls[0].body.clone();
    let p = publish_with(&s.gh, &s.round2, &s.head1, "102", 1, Some(2));
    assert_eq!(p.failure(), "revision-refused", "{}", p.message());
    assert!(
        p.message()
            .contains("another task's pull request is never revised")
    );
    assert_nothing_written(&s.gh, &p, &s.head1, &body);
    assert_eq!(s.gh.state().pulls[1].body, "");

    // A pull request that does not exist.
    let s = setup(PublishMethod::CreateCommitOnBranch);
    let body = s.gh.state().pulls[0].body.clone();
    let p = publish_with(&s.gh, &s.round2, &s.head1, "102", 1, Some(9));
    assert_eq!(p.failure(), "revision-refused");
    assert!(p.message().contains("pull request #9 does not exist"));
    assert_nothing_written(&s.gh, &p, &s.head1, &body);
}

/// A commit on `parent` that is not a publication (someone else's push).
fn foreign_commit(gh: &StandIn, parent: &str) -> String {
    let mut state = gh.state();
    let tree = state.git.commit_tree(parent).unwrap().to_owned();
    state
        .git
        .put_commit(&tree, &[parent.to_owned()], "pushed by someone\n", 1, true)
}

#[test]
fn a_revision_whose_head_moved_writes_nothing() {
    // Moved before the publication starts.
    for method in METHODS {
        let s = setup(method);
        let moved = foreign_commit(&s.gh, &s.head1);
        s.gh.state().git.refs.insert(REF.into(), moved.clone());
        let body = s.gh.state().pulls[0].body.clone();
        let p = publish_with(&s.gh, &s.round2, &s.head1, "102", 1, Some(1));
        assert_eq!(p.failure(), "head-moved", "{method:?}: {}", p.message());
        assert!(
            p.message().contains("is at another commit"),
            "{}",
            p.message()
        );
        assert!(
            p.message()
                .contains("no commit was made and the branch was not moved")
        );
        assert_nothing_written(&s.gh, &p, &moved, &body);
    }

    // Deleted.
    let s = setup(PublishMethod::CreateCommitOnBranch);
    s.gh.state().git.refs.remove(REF);
    let p = publish_with(&s.gh, &s.round2, &s.head1, "102", 1, Some(1));
    assert_eq!(p.failure(), "head-moved");
    assert!(p.message().contains("was deleted"));
    assert!(head(&s.gh).is_none());
    assert_eq!(p.count("POST /graphql"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/git/refs"), 0);

    // Moved while publishing: after the pull request was read, before the write (the
    // compare-and-swap of createCommitOnBranch, the head read again before the ref move).
    for (method, trigger) in [
        (PublishMethod::CreateCommitOnBranch, "/graphql"),
        (PublishMethod::GitDatabase, "/repos/octo/repo/git/commits"),
        (
            PublishMethod::GitDatabase,
            "/repos/octo/repo/git/refs/heads",
        ),
    ] {
        let s = setup(method);
        let moved = foreign_commit(&s.gh, &s.head1);
        let http = if trigger.contains("refs") {
            "PATCH"
        } else {
            "POST"
        };
        s.gh.state().scenario.ref_moves.push(RefMove {
            method: http.into(),
            path_prefix: trigger.into(),
            name: REF.into(),
            to: moved.clone(),
        });
        let body = s.gh.state().pulls[0].body.clone();
        let p = publish_with(&s.gh, &s.round2, &s.head1, "102", 1, Some(1));
        assert_eq!(p.report.exit_code, 1, "{trigger}");
        assert_eq!(p.failure(), "head-moved", "{trigger}: {}", p.message());
        // The other writer's commit stays; nothing of this revision is on the branch.
        assert_eq!(head(&s.gh).as_deref(), Some(moved.as_str()), "{trigger}");
        assert_eq!(p.count("PATCH /repos/octo/repo/pulls"), 0);
        assert!(p.report.doc.check_run.is_none());
        assert_eq!(s.gh.state().pulls[0].body, body);
        if trigger.ends_with("commits") {
            // Read again right before the ref move: the move is not even sent.
            assert_eq!(p.count("PATCH /repos/octo/repo/git/refs"), 0);
        }
    }
}

#[test]
fn a_revision_without_a_signed_dispatch_nonce_is_refused() {
    let s = setup(PublishMethod::CreateCommitOnBranch);
    let mut unsigned = s.round2.clone();
    let body: String = unsigned
        .plan
        .input
        .message
        .body
        .lines()
        .filter(|l| !l.starts_with("Dispatch-Nonce: "))
        .map(|l| format!("{l}\n"))
        .collect();
    unsigned.plan.input.message.body = body;
    let p = publish_with(&s.gh, &unsigned, &s.head1, "102", 1, Some(1));
    assert_eq!(p.failure(), "revision-refused", "{}", p.message());
    assert!(p.message().contains("must come from a signed dispatch"));
    assert_eq!(head(&s.gh).as_deref(), Some(s.head1.as_str()));
    assert_eq!(p.count("POST /graphql"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/check-runs"), 0);
}

#[test]
fn rounds_count_from_the_body_marker() {
    use gate::publication::{next_round, revision_body};
    assert_eq!(next_round("first round's body", NONCE_2), 2);
    assert_eq!(next_round("", NONCE_2), 2);
    let two = revision_body(2, NONCE_2, "abc", "body");
    assert_eq!(next_round(&two, NONCE_2), 2, "a re-run keeps its round");
    assert_eq!(next_round(&two, NONCE_3), 3);
    // Only the first line is the marker.
    assert_eq!(next_round(&format!("x\n{two}"), NONCE_3), 2);
}

/// The summary of the gate's check run on `commit`.
fn check_summary(gh: &StandIn, commit: &str) -> String {
    gh.state()
        .check_runs
        .iter()
        .find(|c| c.head_sha == commit && c.name == CHECK)
        .map(|c| c.output_summary.clone())
        .unwrap_or_default()
}

/// The pull request shows every round: round 1 changed a protected file (`Cargo.toml`), round 2
/// only `src/lib.rs`. Round 2's own verdict names no protected path, yet its check run, its
/// result's count and the label still say one, counted over the whole branch from its merge
/// base with the base branch; the plan records that merge base (round 1's base).
#[test]
fn a_revision_counts_the_protected_files_of_the_whole_branch() {
    let r = repo();
    let gh = StandIn::start(Scenario::default()).unwrap();
    load_commit(&gh, &r.dir, &r.base, "main").unwrap();
    let manifest = "[package]\nname = \"t\"\n";
    let diff1 = r.diff_on(
        &r.base,
        &[("Cargo.toml", manifest), ("src/new.rs", "// round 1\n")],
    );
    let round1 = r.plan(
        &r.base,
        &diff1,
        "101",
        NONCE_1,
        PublishMethod::CreateCommitOnBranch,
    );
    assert_eq!(round1.verdict.protected.len(), 1, "{:?}", round1.verdict);
    assert!(
        round1.plan.branch.is_none(),
        "a first round counts no branch"
    );
    let p1 = publish_with(&gh, &round1, &r.base, "101", 1, None);
    let head1 = p1.commit();
    assert_eq!(p1.report.doc.protected_files, 1);
    r.fetch(&gh, &r.base, &diff1, &head1);

    let diff2 = r.diff_on(
        &head1,
        &[("src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n")],
    );
    let round2 = r.plan(
        &head1,
        &diff2,
        "102",
        NONCE_2,
        PublishMethod::CreateCommitOnBranch,
    );
    assert!(
        round2.verdict.protected.is_empty(),
        "round 2's own diff touches no protected path: {:?}",
        round2.verdict.protected
    );
    let branch = round2
        .plan
        .branch
        .as_ref()
        .expect("a revision's plan counts its branch");
    assert_eq!(branch.merge_base, r.base, "counted from round 1's base");
    let paths: Vec<String> = branch
        .protected
        .iter()
        .map(|f| f.path.as_ref().unwrap().display())
        .collect();
    assert_eq!(paths, ["Cargo.toml"]);
    assert_eq!(
        branch.protected[0].policy_entry.as_deref(),
        Some("protect: **/Cargo.toml")
    );

    let p2 = publish_with(&gh, &round2, &head1, "102", 1, Some(1));
    let head2 = p2.commit();
    assert_eq!(p2.report.doc.protected_files, 1, "{:#?}", p2.log);
    let summary = check_summary(&gh, &head2);
    assert!(
        summary.contains("Protected files need review (1)") && summary.contains("Cargo.toml"),
        "{summary}"
    );
    assert_eq!(
        p2.count("POST /repos/octo/repo/issues/1/labels"),
        1,
        "round 2 labels the pull request again"
    );
    assert!(
        gh.state().pulls[0]
            .labels
            .iter()
            .any(|l| l == PROTECTED_LABEL)
    );

    // A round that touches the protected file again: counted once, as its own finding (with the
    // line of this round's diff), not again as the branch's.
    r.fetch(&gh, &head1, &diff2, &head2);
    let diff3 = r.diff_on(&head2, &[("Cargo.toml", "")]);
    let round3 = r.plan(
        &head2,
        &diff3,
        "103",
        NONCE_3,
        PublishMethod::CreateCommitOnBranch,
    );
    assert_eq!(round3.verdict.protected.len(), 1);
    let p3 = publish_with(&gh, &round3, &head2, "103", 1, Some(1));
    p3.commit();
    assert_eq!(p3.report.doc.protected_files, 1);
    assert!(check_summary(&gh, &p3.commit()).contains("Protected files need review (1)"));
}

/// A revision's plan must count the whole branch, and a first round's must not: either the
/// other way is `plan-mismatch`, before any request.
#[test]
fn a_revision_needs_a_plan_that_counts_its_branch() {
    let s = setup(PublishMethod::CreateCommitOnBranch);
    let mut uncounted = s.round2.clone();
    uncounted.plan.branch = None;
    let p = publish_with(&s.gh, &uncounted, &s.head1, "102", 1, Some(1));
    assert_eq!(p.failure(), "plan-mismatch", "{}", p.message());
    assert!(
        p.message().contains("gate publish-plan --revise 1"),
        "{}",
        p.message()
    );
    assert!(p.requests.is_empty(), "{:?}", p.requests);
    assert_eq!(head(&s.gh).as_deref(), Some(s.head1.as_str()));

    // The same plan, counted, published as a first round.
    let p = publish_with(&s.gh, &s.round2, &s.head1, "102", 1, None);
    assert_eq!(p.failure(), "plan-mismatch", "{}", p.message());
    assert!(p.requests.is_empty());
}
