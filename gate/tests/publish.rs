//! `gate publish` against the stand-in for GitHub's API (`github-standin`, every route's shape
//! cited there), on real git repositories: the base commit's objects are loaded into the
//! stand-in under the ids git gives them (checked object by object), the plan is made by
//! `gate::publish::prepare` exactly as `gate publish-plan` makes it, and the tree the stand-in
//! ends up with is compared with the tree `git apply --index` makes of the same diff on a clone
//! (`git write-tree`), independently of the plan.
//!
//! Both methods are exercised: `createCommitOnBranch` (GraphQL) and the Git database (blobs, a
//! tree with modes, a commit, the ref). Each case asserts the exit code, the failure's id, the
//! requests made (and not made), and that the token reached no output. In-process cases run on a
//! virtual clock; the CLI cases run the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use contract::decision::DecisionDoc;
use contract::verdict::VerdictDoc;
use gate::names::Reviewers;
use gate::output::publish_plan_v2::{PublishMethod, PublishPlanDoc};
use gate::publication::PROTECTED_LABEL;
use gate::publication::{FAILURES, PublicationReport, PublicationRequest, publish};
use gate::publish::{Outcome, PublishRequest, PublishTarget, prepare};
use github::{ApiUrl, Client, ClientConfig, Repository, Token, VirtualClock};
use github_standin::{
    Canned, Fault, PullState, Recorded, RefMove, Scenario, StandIn, Tamper, load_commit,
};
use guard::policy::Policy;
use serde_json::Value;

mod common;
use common::git_command;

const BRANCH: &str = "agent-team/t-1";
const REF: &str = "refs/heads/agent-team/t-1";
const GET_REF: &str = "GET /repos/octo/repo/git/ref/heads/agent-team/t-1";
const TASK: &str = "t-1";
const RUN: &str = "4242";
const DETAILS: &str = "https://github.com/octo/repo/actions/runs/4242";
const METHODS: [PublishMethod; 2] = [
    PublishMethod::CreateCommitOnBranch,
    PublishMethod::GitDatabase,
];

// ---------------------------------------------------------------------------------------------
// git

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

fn write(root: &Path, path: &str, contents: &[u8], executable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(&full, contents).unwrap();
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(&full, fs::Permissions::from_mode(mode)).unwrap();
}

/// A repository with one commit on `main`, and the diffs made against it.
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
    for (path, contents, executable) in [
        (
            "src/lib.rs",
            &b"pub fn one() -> u32 {\n    1\n}\n"[..],
            false,
        ),
        ("src/old.rs", b"// old\n", false),
        (
            "src/rename_me.rs",
            b"pub const NAME: &str = \"x\";\n",
            false,
        ),
        ("docs/guide.md", b"# Guide\n", false),
        ("bin/build.sh", b"#!/bin/sh\necho build\n", true),
        ("bin/gradlew", b"#!/bin/sh\necho gradle\n", true),
        (".github/workflows/ci.yml", b"on: push\n", false),
        ("README.md", b"readme\n", false),
    ] {
        write(&dir, path, contents, executable);
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    let base = git(&dir, &["rev-parse", "HEAD"]);
    Repo { tmp, dir, base }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Repo {
    fn clone_base(&self) -> PathBuf {
        let name = format!("clone-{}", unique());
        git(
            self.tmp.path(),
            &["clone", "-q", self.dir.to_str().unwrap(), &name],
        );
        self.tmp.path().join(name)
    }

    /// The canonical diff of an edit of a clone.
    fn diff(&self, edit: impl FnOnce(&Path)) -> Vec<u8> {
        let scratch = self.clone_base();
        edit(&scratch);
        git(&scratch, &["add", "-A"]);
        git_with(&scratch, &["diff", "--cached", "HEAD"], None)
    }

    /// The tree `git apply --index` makes of `diff` on the base: the reference, computed without
    /// the plan.
    fn git_tree(&self, diff: &[u8]) -> String {
        let clone = self.clone_base();
        git_with(&clone, &["apply", "--index", "-"], Some(diff));
        git(&clone, &["write-tree"])
    }

    /// The plan and its verdict, made as `gate publish-plan` makes them.
    fn plan(&self, diff: &[u8], policy: Option<&str>) -> Planned {
        let policy = match policy {
            None => Policy::embedded_default().unwrap(),
            Some(yaml) => {
                let path = self.tmp.path().join(format!("policy-{}.yml", unique()));
                fs::write(&path, yaml).unwrap();
                Policy::load(Some(&path)).unwrap()
            }
        };
        let target =
            PublishTarget::new(Some("octo/repo"), BRANCH, "main", Some(TASK), Some(RUN)).unwrap();
        self.prepare(diff, &policy, &target)
    }

    /// The plan `gate publish-plan` makes of `diff` for `target` under `policy`.
    fn prepare(&self, diff: &[u8], policy: &Policy, target: &PublishTarget) -> Planned {
        let sha = guard::hash::sha256_hex(diff);
        let outcome = prepare(&PublishRequest {
            repo_dir: &self.dir,
            base: &self.base,
            diff,
            expected_sha256: &sha,
            scope: &["**".to_owned()],
            policy,
            target,
            revision: false,
        })
        .unwrap();
        match outcome {
            Outcome::Plan { plan, verdict } => Planned {
                plan: *plan,
                verdict: guard::output::json_v1::document(&verdict),
            },
            Outcome::Rejected(r) => panic!("no plan: {:?} {:?}", r.verdict.violations, r.reasons),
        }
    }

    /// The plan of the signed dispatch `nonce`, published by run `run`.
    fn plan_of_dispatch(&self, diff: &[u8], run: &str, nonce: &str) -> Planned {
        let policy = Policy::embedded_default().unwrap();
        let target = PublishTarget::new(Some("octo/repo"), BRANCH, "main", Some(TASK), Some(run))
            .unwrap()
            .with_dispatch_nonce(nonce)
            .unwrap();
        self.prepare(diff, &policy, &target)
    }

    /// A stand-in holding the base commit (every object under git's own id) on `main`.
    fn standin(&self, scenario: Scenario) -> StandIn {
        let gh = StandIn::start(scenario).unwrap();
        // Every object under git's own id (the load checks each), `main` at the base.
        load_commit(&gh, &self.dir, &self.base, "main").unwrap();
        gh
    }
}

/// A plan with the verdict it was computed from (`gate publish-plan --out` and `--verdict-out`).
#[derive(Debug, Clone)]
struct Planned {
    plan: PublishPlanDoc,
    verdict: VerdictDoc,
}

impl std::ops::Deref for Planned {
    type Target = PublishPlanDoc;
    fn deref(&self) -> &PublishPlanDoc {
        &self.plan
    }
}

impl std::ops::DerefMut for Planned {
    fn deref_mut(&mut self) -> &mut PublishPlanDoc {
        &mut self.plan
    }
}

/// `gate decide`'s decision over both jobs' results, for the plan's diff.
fn decision_for(plan: &PublishPlanDoc, build_test: &str) -> DecisionDoc {
    let needs = serde_json::json!({
        "guard": { "result": "success", "outputs": {} },
        "build-test": { "result": build_test, "outputs": {} },
    })
    .to_string();
    let decision = gate::decide(
        needs.as_bytes(),
        &["guard", "build-test"],
        RUN,
        &plan.diff_sha256,
    );
    gate::output::json_v1::document(&decision)
}

fn client_for(gh: &StandIn, api_url: &str) -> Client {
    let token = gh.token();
    let env = |name: &str| (name == "GH_TOKEN").then(|| token.clone());
    let mut config = ClientConfig::new(
        ApiUrl::parse(api_url).unwrap(),
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

    fn lines(&self) -> Vec<String> {
        self.requests.iter().map(Recorded::line).collect()
    }

    fn count(&self, line: &str) -> usize {
        self.requests.iter().filter(|r| r.line() == line).count()
    }

    fn bodies(&self, line: &str) -> Vec<Value> {
        self.requests
            .iter()
            .filter(|r| r.line() == line)
            .map(Recorded::json)
            .collect()
    }
}

fn publish_at(gh: &StandIn, api_url: &str, plan: &Planned, base: &str) -> Published {
    publish_attempt(gh, api_url, plan, base, 1)
}

fn publish_attempt(
    gh: &StandIn,
    api_url: &str,
    plan: &Planned,
    base: &str,
    run_attempt: u32,
) -> Published {
    publish_configured(
        gh,
        api_url,
        plan,
        base,
        run_attempt,
        PROTECTED_LABEL,
        &Reviewers::default(),
    )
}

fn publish_configured(
    gh: &StandIn,
    api_url: &str,
    plan: &Planned,
    base: &str,
    run_attempt: u32,
    protected_label: &str,
    protected_reviewers: &Reviewers,
) -> Published {
    let client = client_for(gh, api_url);
    let decision = decision_for(plan, "success");
    let repository = Repository::parse("octo/repo").unwrap();
    // The App the workflow names (a scenario may give the token another App's id).
    let app_id = 424_242;
    let request = PublicationRequest {
        repository: &repository,
        branch: BRANCH,
        base,
        base_branch: "main",
        decision: &decision,
        verdict: &plan.verdict,
        check_name: "agent-team-apply / gate",
        details_url: Some(DETAILS),
        protected_label,
        protected_reviewers,
        run_attempt,
        app_id,
        revision: None,
    };
    let mut log = Vec::new();
    let before = gh.requests().len();
    let report = publish(&client, plan, &request, &mut |l: &str| {
        log.push(l.to_owned())
    });
    let requests = gh.requests()[before..].to_vec();
    // The token reaches neither the document nor the progress lines.
    let token = gh.token();
    let json = report.doc.to_json().unwrap();
    assert!(!json.contains(&token));
    assert!(log.iter().all(|l| !l.contains(&token)));
    Published {
        report,
        requests,
        log,
    }
}

fn publish_on(gh: &StandIn, plan: &Planned, base: &str) -> Published {
    publish_at(gh, &gh.url(), plan, base)
}

fn with_method(mut plan: Planned, method: PublishMethod) -> Planned {
    plan.method = method;
    plan
}

fn head(gh: &StandIn) -> Option<String> {
    gh.state().git.refs.get(REF).cloned()
}

/// Every leaf of the commit's tree in the stand-in: path → mode.
fn modes_at(gh: &StandIn, commit: &str) -> BTreeMap<String, String> {
    let state = gh.state();
    let tree = state.git.commit_tree(commit).unwrap().to_owned();
    state
        .git
        .flatten(&tree)
        .unwrap()
        .into_iter()
        .map(|(path, (mode, _))| (path, mode))
        .collect()
}

/// The publication succeeded, and what GitHub holds is git's tree on the base, the branch at the
/// commit, a draft pull request from the branch and a successful check run on the commit.
fn assert_published(gh: &StandIn, p: &Published, git_tree: &str, base: &str) -> String {
    let doc = &p.report.doc;
    assert_eq!(
        p.report.exit_code, 0,
        "{:?}\n{:#?}",
        p.report.doc.failure, p.log
    );
    assert_eq!(doc.outcome, "published");
    assert!(doc.failure.is_none());
    assert!(doc.tree.proven);
    assert_eq!(doc.tree.expected, git_tree);
    assert_eq!(doc.tree.published.as_deref(), Some(git_tree));
    let commit = doc.commit.clone().unwrap();
    assert_eq!(head(gh).as_deref(), Some(commit.as_str()));
    {
        let state = gh.state();
        assert_eq!(state.git.commit_tree(&commit), Some(git_tree), "git's tree");
        match state.git.objects.get(&commit) {
            Some(github_standin::git::Object::Commit { parents, .. }) => {
                assert_eq!(parents, &[base.to_owned()]);
            }
            other => panic!("not a commit: {other:?}"),
        }
        let pulls: Vec<&PullState> = state.pulls.iter().filter(|p| p.head == BRANCH).collect();
        assert_eq!(pulls.len(), 1);
        assert!(pulls[0].draft && pulls[0].base == "main" && pulls[0].state == "open");
        let checks: Vec<_> = state
            .check_runs
            .iter()
            .filter(|c| c.head_sha == commit)
            .collect();
        assert!(!checks.is_empty());
        assert!(
            checks
                .iter()
                .all(|c| c.conclusion.as_deref() == Some("success"))
        );
    }
    let pull = doc.pull_request.as_ref().unwrap();
    assert!(pull.draft);
    assert_eq!(
        doc.check_run.as_ref().unwrap().conclusion.as_deref(),
        Some("success")
    );
    // Signed by GitHub: no custom identity reached the commit.
    assert_eq!(doc.signature.as_ref().map(|s| s.verified), Some(true));
    commit
}

/// No commit request carries an author, a committer or a signature, so that GitHub signs the
/// commit as the App; the GraphQL input has no such field either (the schema has none).
fn assert_no_identity(p: &Published) {
    for body in p.bodies("POST /repos/octo/repo/git/commits") {
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["message", "parents", "tree"], "{body}");
    }
    for body in p.bodies("POST /graphql") {
        let input = body["variables"]["input"].as_object().unwrap();
        for key in input.keys() {
            assert!(
                ["branch", "expectedHeadOid", "message", "fileChanges"].contains(&key.as_str()),
                "{key}"
            );
        }
        for forbidden in ["author", "committer", "signature"] {
            assert!(!body.to_string().contains(&format!("\"{forbidden}\"")));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the two methods

fn regular_change(r: &Repo) -> Vec<u8> {
    r.diff(|w| {
        write(w, "src/lib.rs", b"pub fn one() -> u32 {\n    2\n}\n", false);
        write(w, "src/deep/new.rs", b"// new\n", false);
        fs::remove_file(w.join("src/old.rs")).unwrap();
        fs::rename(w.join("src/rename_me.rs"), w.join("src/renamed.rs")).unwrap();
    })
}

/// The base repository, the regular change, and its plan.
fn regular() -> (Repo, Vec<u8>, Planned) {
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan(&diff, None);
    (r, diff, plan)
}

/// The default scenario with `faults`.
fn faulting(faults: Vec<Fault>) -> Scenario {
    Scenario {
        faults,
        ..Scenario::default()
    }
}

#[test]
fn regular_change_publishes_through_create_commit_on_branch() {
    let (r, diff, plan) = regular();
    assert_eq!(plan.method, PublishMethod::CreateCommitOnBranch);
    let git_tree = r.git_tree(&diff);
    assert_eq!(plan.tree, git_tree);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    let commit = assert_published(&gh, &p, &git_tree, &r.base);
    assert_eq!(p.report.doc.branch_state.as_deref(), Some("created"));
    assert_eq!(
        p.lines(),
        [
            GET_REF,
            "POST /repos/octo/repo/git/refs",
            "POST /graphql",
            &format!("GET /repos/octo/repo/git/commits/{commit}"),
            GET_REF,
            "GET /repos/octo/repo/pulls",
            "POST /repos/octo/repo/pulls",
            "POST /repos/octo/repo/check-runs",
        ]
    );
    // The branch is created at the base, then the mutation is the compare-and-swap on it.
    assert_eq!(
        p.bodies("POST /repos/octo/repo/git/refs"),
        [serde_json::json!({ "ref": REF, "sha": r.base })]
    );
    let graphql = &p.bodies("POST /graphql")[0];
    assert!(
        graphql["query"]
            .as_str()
            .unwrap()
            .contains("createCommitOnBranch(input: $input)")
    );
    assert_eq!(
        graphql["variables"]["input"],
        serde_json::to_value(&plan.input).unwrap()
    );
    let pull = &p.bodies("POST /repos/octo/repo/pulls")[0];
    assert_eq!(pull["draft"], true);
    assert_eq!(pull["head"], BRANCH);
    assert_eq!(pull["title"], plan.pull_request.title.as_str());
    let check = &p.bodies("POST /repos/octo/repo/check-runs")[0];
    assert_eq!(check["head_sha"], commit.as_str());
    assert_eq!(check["conclusion"], "success");
    assert_eq!(check["details_url"], DETAILS);
    assert_no_identity(&p);
}

#[test]
fn the_same_change_publishes_the_same_tree_through_the_git_database() {
    let r = repo();
    let diff = regular_change(&r);
    let plan = with_method(r.plan(&diff, None), PublishMethod::GitDatabase);
    let git_tree = r.git_tree(&diff);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    let commit = assert_published(&gh, &p, &git_tree, &r.base);
    // Two new contents (the edit and the new file; the rename's contents are also new at that
    // path): one blob each, base64.
    let blobs = p.bodies("POST /repos/octo/repo/git/blobs");
    assert_eq!(blobs.len(), 3);
    assert!(blobs.iter().all(|b| b["encoding"] == "base64"));
    let tree = &p.bodies("POST /repos/octo/repo/git/trees")[0];
    assert_eq!(tree["base_tree"], plan.base_tree.as_str());
    let entries: Vec<(String, String, bool)> = tree["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_owned(),
                e["mode"].as_str().unwrap().to_owned(),
                e["sha"].is_null(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("src/deep/new.rs".into(), "100644".into(), false),
            ("src/lib.rs".into(), "100644".into(), false),
            ("src/old.rs".into(), "100644".into(), true),
            ("src/rename_me.rs".into(), "100644".into(), true),
            ("src/renamed.rs".into(), "100644".into(), false),
        ]
    );
    let commit_body = &p.bodies("POST /repos/octo/repo/git/commits")[0];
    assert_eq!(commit_body["tree"], git_tree.as_str());
    assert_eq!(commit_body["parents"], serde_json::json!([r.base]));
    // The ref is created at the new commit: it fails if the ref exists.
    assert_eq!(
        p.bodies("POST /repos/octo/repo/git/refs"),
        [serde_json::json!({ "ref": REF, "sha": commit })]
    );
    assert_eq!(p.count("POST /graphql"), 0);
    assert_no_identity(&p);
}

/// The change real history showed being refused: new contents for an existing executable.
#[test]
fn executable_content_change_keeps_its_mode() {
    let r = repo();
    let diff = r.diff(|w| write(w, "bin/build.sh", b"#!/bin/sh\necho build2\n", true));
    let plan = r.plan(&diff, None);
    assert_eq!(plan.method, PublishMethod::GitDatabase);
    assert!(
        plan.method_reason
            .starts_with("bin/build.sh is written with mode 100755;")
    );
    let git_tree = r.git_tree(&diff);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    let commit = assert_published(&gh, &p, &git_tree, &r.base);
    assert_eq!(modes_at(&gh, &commit)["bin/build.sh"], "100755");
    let tree = &p.bodies("POST /repos/octo/repo/git/trees")[0];
    assert_eq!(tree["tree"][0]["mode"], "100755");
    assert_no_identity(&p);
}

/// Sent through createCommitOnBranch, the same change loses the executable bit: the reason for
/// the method, and what the proof catches. The publisher never sends such a plan.
#[test]
fn create_commit_on_branch_would_lose_the_executable_bit_and_is_never_used_for_it() {
    let r = repo();
    let diff = r.diff(|w| write(w, "bin/build.sh", b"#!/bin/sh\necho build2\n", true));
    let plan = r.plan(&diff, None);
    let gh = r.standin(Scenario::default());
    gh.state().git.refs.insert(REF.into(), r.base.clone());
    let client = client_for(&gh, &gh.url());
    let made = client.create_commit_on_branch(&plan.input).unwrap();
    let repo = Repository::parse("octo/repo").unwrap();
    let read = client.get_commit(&repo, &made.oid).unwrap();
    assert_ne!(read.tree.sha, plan.tree, "the mutation wrote another tree");
    assert_eq!(modes_at(&gh, &made.oid)["bin/build.sh"], "100644");

    // A plan that asks for the mutation anyway is refused before any request.
    let gh = r.standin(Scenario::default());
    let forced = with_method(plan, PublishMethod::CreateCommitOnBranch);
    let p = publish_on(&gh, &forced, &r.base);
    assert_eq!(p.report.exit_code, 2);
    assert_eq!(p.failure(), "plan-mismatch");
    assert!(p.requests.is_empty());
}

#[test]
fn new_executable_publishes_where_the_policy_allows_it() {
    let r = repo();
    let diff = r.diff(|w| write(w, "bin/new-tool", b"#!/bin/sh\necho new\n", true));
    let plan = r.plan(
        &diff,
        Some("version: 1\nallow:\n  executable-files: true\n"),
    );
    assert_eq!(plan.method, PublishMethod::GitDatabase);
    let git_tree = r.git_tree(&diff);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    let commit = assert_published(&gh, &p, &git_tree, &r.base);
    assert_eq!(modes_at(&gh, &commit)["bin/new-tool"], "100755");
}

#[test]
fn a_mix_of_modes_publishes_exactly() {
    let r = repo();
    let diff = r.diff(|w| {
        write(w, "bin/build.sh", b"#!/bin/sh\necho build3\n", true);
        fs::remove_file(w.join("bin/gradlew")).unwrap();
        write(w, "bin/new.sh", b"#!/bin/sh\n", true);
        write(w, "src/lib.rs", b"pub fn one() -> u32 {\n    3\n}\n", false);
        fs::remove_file(w.join("src/old.rs")).unwrap();
        write(w, "docs/new.md", b"new\n", false);
    });
    let plan = r.plan(
        &diff,
        Some("version: 1\nallow:\n  executable-files: true\n"),
    );
    assert_eq!(plan.method, PublishMethod::GitDatabase);
    let git_tree = r.git_tree(&diff);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    let commit = assert_published(&gh, &p, &git_tree, &r.base);
    let modes = modes_at(&gh, &commit);
    assert_eq!(modes["bin/build.sh"], "100755");
    assert_eq!(modes["bin/new.sh"], "100755");
    assert_eq!(modes["src/lib.rs"], "100644");
    assert_eq!(modes["docs/new.md"], "100644");
    assert!(!modes.contains_key("bin/gradlew") && !modes.contains_key("src/old.rs"));
    assert_no_identity(&p);
}

/// Under `symlinks.allow: true` a link in scope is planned with mode 120000 (its blob the target)
/// and published through the Git database, whose tree entries carry the mode: the published tree
/// is git's. Under the default policy the same diff gets no plan.
#[test]
fn a_symbolic_link_publishes_with_its_mode_where_the_policy_allows_it() {
    let r = repo();
    let diff = r.diff(|w| std::os::unix::fs::symlink("lib.rs", w.join("src/current.rs")).unwrap());
    let sha = guard::hash::sha256_hex(&diff);
    let target =
        PublishTarget::new(Some("octo/repo"), BRANCH, "main", Some(TASK), Some(RUN)).unwrap();
    let refused = prepare(&PublishRequest {
        repo_dir: &r.dir,
        base: &r.base,
        diff: &diff,
        expected_sha256: &sha,
        scope: &["**".to_owned()],
        policy: &Policy::embedded_default().unwrap(),
        target: &target,
        revision: false,
    })
    .unwrap();
    assert!(matches!(refused, Outcome::Rejected(_)));
    let plan = r.plan(&diff, Some("version: 1\nsymlinks:\n  allow: true\n"));
    assert_eq!(plan.method, PublishMethod::GitDatabase);
    let git_tree = r.git_tree(&diff);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    let commit = assert_published(&gh, &p, &git_tree, &r.base);
    assert_eq!(modes_at(&gh, &commit)["src/current.rs"], "120000");
    let tree = &p.bodies("POST /repos/octo/repo/git/trees")[0];
    assert_eq!(tree["tree"][0]["mode"], "120000");
    let blob = &p.bodies("POST /repos/octo/repo/git/blobs")[0];
    assert_eq!(
        blob["content"],
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, b"lib.rs").as_str(),
        "{blob}"
    );
}

/// GitHub Enterprise Server: the REST API under `/api/v3`, GraphQL at `/api/graphql`.
#[test]
fn enterprise_server_paths() {
    let (r, diff, plan) = regular();
    let gh = r.standin(Scenario::default());
    let p = publish_at(&gh, &format!("{}/api/v3", gh.url()), &plan, &r.base);
    assert_published(&gh, &p, &r.git_tree(&diff), &r.base);
    assert_eq!(p.count("POST /api/graphql"), 1);
    assert_eq!(p.count("POST /api/v3/repos/octo/repo/git/refs"), 1);
    assert!(p.requests.iter().all(|q| q.path.starts_with("/api/")));
}

/// A protected path (a manifest) is let through for review: the pull request is labelled and the
/// check run's title says so; a label that cannot be added fails the publication.
#[test]
fn protected_files_label_the_pull_request() {
    let r = repo();
    let diff = r.diff(|w| write(w, "Cargo.toml", b"[package]\nname = \"x\"\n", false));
    let plan = r.plan(&diff, None);
    assert_eq!(plan.verdict.protected.len(), 1, "{:?}", plan.verdict);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    assert_published(&gh, &p, &r.git_tree(&diff), &r.base);
    assert_eq!(p.report.doc.protected_files, 1);
    let pull = p.report.doc.pull_request.as_ref().unwrap();
    assert_eq!(pull.labels, [PROTECTED_LABEL]);
    assert_eq!(gh.state().pulls[0].labels, [PROTECTED_LABEL]);
    assert_eq!(
        p.bodies(&format!(
            "POST /repos/octo/repo/issues/{}/labels",
            pull.number
        )),
        [serde_json::json!({ "labels": [PROTECTED_LABEL] })]
    );
    let check = &p.bodies("POST /repos/octo/repo/check-runs")[0];
    assert_eq!(
        check["output"]["title"],
        "Gate passed: 1 protected file(s) need review"
    );

    let gh = r.standin(faulting(vec![Fault::new(
        "POST",
        "/repos/octo/repo/issues/",
        vec![Canned::status(500, "boom"); 4],
    )]));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 2);
    assert_eq!(p.failure(), "github-error");
    assert!(p.message().contains(PROTECTED_LABEL), "{}", p.message());
    assert_eq!(p.count("POST /repos/octo/repo/check-runs"), 0);
}

fn protected_change(r: &Repo) -> Planned {
    let diff = r.diff(|w| write(w, "Cargo.toml", b"[package]\nname = \"x\"\n", false));
    let plan = r.plan(&diff, None);
    assert_eq!(plan.verdict.protected.len(), 1, "{:?}", plan.verdict);
    plan
}

fn reviewers(text: &str) -> Reviewers {
    Reviewers::parse(text, &Repository::parse("octo/repo").unwrap()).unwrap()
}

const REVIEW_REQUEST: &str = "POST /repos/octo/repo/pulls/1/requested_reviewers";

/// With protected files changed, the caller's label is added and review is requested from its
/// users and teams, after the label and before the check run.
#[test]
fn protected_files_request_the_protected_reviewers() {
    let r = repo();
    let plan = protected_change(&r);
    let gh = r.standin(Scenario::default());
    let who = reviewers("octocat, octo/release-team");
    let p = publish_configured(&gh, &gh.url(), &plan, &r.base, 1, "needs-owner", &who);
    assert_eq!(p.report.exit_code, 0, "{}", p.message());
    assert_eq!(gh.state().pulls[0].labels, ["needs-owner"]);
    assert_eq!(
        p.bodies(REVIEW_REQUEST),
        [serde_json::json!({ "reviewers": ["octocat"], "team_reviewers": ["release-team"] })]
    );
    assert_eq!(gh.state().pulls[0].requested_reviewers, ["octocat"]);
    assert_eq!(gh.state().pulls[0].requested_teams, ["release-team"]);
    let lines = p.lines();
    let at = |line: &str| lines.iter().position(|l| l == line).unwrap();
    assert!(at("POST /repos/octo/repo/issues/1/labels") < at(REVIEW_REQUEST));
    assert!(at(REVIEW_REQUEST) < at("POST /repos/octo/repo/check-runs"));
    assert!(
        p.log
            .iter()
            .any(|l| l == "pull request #1: review requested from octocat, octo/release-team"),
        "{:?}",
        p.log
    );
}

/// Without protected files nobody is asked, whatever the caller names; with protected files and
/// no reviewers named, only the label.
#[test]
fn no_review_is_requested_without_protected_files_or_reviewers() {
    let (r, _, plan) = regular();
    let gh = r.standin(Scenario::default());
    let p = publish_configured(
        &gh,
        &gh.url(),
        &plan,
        &r.base,
        1,
        PROTECTED_LABEL,
        &reviewers("octocat"),
    );
    assert_eq!(p.report.exit_code, 0, "{}", p.message());
    assert_eq!(p.count(REVIEW_REQUEST), 0);
    assert!(gh.state().pulls[0].labels.is_empty());

    let plan = protected_change(&r);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 0, "{}", p.message());
    assert_eq!(p.count(REVIEW_REQUEST), 0);
    assert_eq!(gh.state().pulls[0].labels, [PROTECTED_LABEL]);
}

/// A refused review request fails the publication closed before the check run, naming who and
/// why; the draft stays, labelled; a rerun repeats the request and completes.
#[test]
fn a_refused_review_request_fails_closed_and_keeps_the_draft() {
    let r = repo();
    let plan = protected_change(&r);
    let gh = r.standin(faulting(vec![Fault::new(
        "POST",
        "/repos/octo/repo/pulls/1/requested_reviewers",
        vec![Canned::status(
            422,
            "Reviews may only be requested from collaborators. One or more of the users or teams \
             you specified is not a collaborator of the octo/repo repository.",
        )],
    )]));
    let who = reviewers("octocat");
    let p = publish_configured(&gh, &gh.url(), &plan, &r.base, 1, PROTECTED_LABEL, &who);
    assert_eq!(p.report.exit_code, 2);
    assert_eq!(p.failure(), "github-error");
    for needed in [
        "from octocat",
        "Cause: GitHub cannot request",
        "stays open",
        "run the job again",
    ] {
        assert!(p.message().contains(needed), "{needed}: {}", p.message());
    }
    assert_eq!(p.count("POST /repos/octo/repo/check-runs"), 0);
    assert_eq!(gh.state().pulls.len(), 1);
    assert!(gh.state().pulls[0].draft);
    assert_eq!(gh.state().pulls[0].labels, [PROTECTED_LABEL]);
    assert!(gh.state().check_runs.is_empty());

    let p = publish_configured(&gh, &gh.url(), &plan, &r.base, 1, PROTECTED_LABEL, &who);
    assert_eq!(p.report.exit_code, 0, "{}", p.message());
    assert_eq!(p.count(REVIEW_REQUEST), 1);
    assert_eq!(gh.state().pulls.len(), 1);
    assert_eq!(gh.state().pulls[0].requested_reviewers, ["octocat"]);
}

/// Malformed names are refused by the command before any request, each with its rule.
#[test]
fn malformed_names_are_refused_before_any_write() {
    let r = repo();
    let plan = protected_change(&r);
    for (flag, value, rule) in [
        (
            "--protected-reviewers",
            "octocat,-bad",
            "neither a user login",
        ),
        (
            "--protected-reviewers",
            "other-org/team",
            "is not of the repository's owner",
        ),
        (
            "--protected-reviewers",
            "octo/Team Name",
            "neither a user login",
        ),
        (
            "--protected-label",
            "",
            "protected-label \"\" must be 1 to 50",
        ),
        (
            "--protected-label",
            "a,b",
            "without a control character, a comma",
        ),
        ("--check-name", " agent-team-apply / gate", "check-run-name"),
    ] {
        let gh = r.standin(Scenario::default());
        let token = gh.token();
        let (code, _, stderr, out) = gate_publish_with(
            &gh,
            r.tmp.path(),
            &plan,
            &r.base,
            &[("GH_TOKEN", &token)],
            &[&format!("{flag}={value}")],
        );
        assert_eq!(code, Some(2), "{flag} {value}: {stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains(rule),
            "{flag} {value}: {stderr}"
        );
        assert!(gh.requests().is_empty(), "{flag} {value}");
        assert!(!out.exists());
    }
}

// ---------------------------------------------------------------------------------------------
// the proof: a tree GitHub stored or reports that is not git's is never a success

fn extra_file() -> Tamper {
    Tamper::ExtraFile {
        path: "injected.txt".into(),
        contents: b"not in the diff\n".to_vec(),
    }
}

fn assert_no_pull_request_or_check(gh: &StandIn, p: &Published) {
    assert!(p.report.doc.pull_request.is_none() && p.report.doc.check_run.is_none());
    assert_eq!(p.count("POST /repos/octo/repo/pulls"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/check-runs"), 0);
    assert!(gh.state().pulls.is_empty() && gh.state().check_runs.is_empty());
}

#[test]
fn tree_mismatch_through_create_commit_on_branch_fails_and_leaves_the_branch() {
    let (r, _, plan) = regular();
    let gh = r.standin(Scenario {
        tamper: Some(extra_file()),
        ..Scenario::default()
    });
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 1);
    assert_eq!(p.report.doc.outcome, "failed");
    assert_eq!(p.failure(), "tree-mismatch");
    assert!(!p.report.doc.tree.proven);
    let commit = p.report.doc.commit.clone().unwrap();
    // The branch is left at what GitHub made, for inspection.
    assert_eq!(head(&gh).as_deref(), Some(commit.as_str()));
    let published = p.report.doc.tree.published.clone().unwrap();
    assert_ne!(published, plan.tree);
    assert!(p.message().contains(&published) && p.message().contains(&plan.tree));
    assert!(p.message().contains("left at"), "{}", p.message());
    assert_no_pull_request_or_check(&gh, &p);
}

#[test]
fn tree_mismatch_through_the_git_database_stops_before_the_commit() {
    let r = repo();
    let diff = r.diff(|w| write(w, "bin/build.sh", b"#!/bin/sh\necho 4\n", true));
    let plan = r.plan(&diff, None);
    let gh = r.standin(Scenario {
        tamper: Some(extra_file()),
        ..Scenario::default()
    });
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 1);
    assert_eq!(p.failure(), "tree-mismatch");
    assert!(
        p.message().contains("nothing was committed"),
        "{}",
        p.message()
    );
    assert_eq!(p.count("POST /repos/octo/repo/git/commits"), 0);
    assert_eq!(p.count("POST /repos/octo/repo/git/refs"), 0);
    assert_eq!(head(&gh), None);
    assert_no_pull_request_or_check(&gh, &p);
}

/// GitHub reports another tree for the commit it made: both methods fail at the read-back, the
/// branch left where it is.
#[test]
fn tree_mismatch_at_the_read_back_fails_through_both_methods() {
    let r = repo();
    let diff = regular_change(&r);
    for method in METHODS {
        let plan = with_method(r.plan(&diff, None), method);
        let gh = r.standin(Scenario {
            tamper: Some(Tamper::ReadBackTree(
                "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
            )),
            ..Scenario::default()
        });
        let p = publish_on(&gh, &plan, &r.base);
        assert_eq!(p.report.exit_code, 1, "{method:?}");
        assert_eq!(p.failure(), "tree-mismatch", "{method:?}");
        let commit = p.report.doc.commit.clone().unwrap();
        assert_eq!(head(&gh).as_deref(), Some(commit.as_str()), "{method:?}");
        assert_eq!(
            p.report.doc.tree.published.as_deref(),
            Some("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
        );
        assert!(p.message().contains("for inspection"), "{}", p.message());
        assert_no_pull_request_or_check(&gh, &p);
    }
}

// ---------------------------------------------------------------------------------------------
// reruns

#[test]
fn a_branch_at_the_base_is_reused_by_both_methods() {
    let r = repo();
    let diff = regular_change(&r);
    let git_tree = r.git_tree(&diff);
    for method in METHODS {
        let plan = with_method(r.plan(&diff, None), method);
        let gh = r.standin(Scenario::default());
        gh.state().git.refs.insert(REF.into(), r.base.clone());
        let p = publish_on(&gh, &plan, &r.base);
        let commit = assert_published(&gh, &p, &git_tree, &r.base);
        assert_eq!(p.report.doc.branch_state.as_deref(), Some("reused-at-base"));
        assert_eq!(p.count("POST /repos/octo/repo/git/refs"), 0, "{method:?}");
        if method == PublishMethod::GitDatabase {
            // Moved without force: only a fast-forward from the base.
            assert_eq!(
                p.bodies("PATCH /repos/octo/repo/git/refs/heads/agent-team/t-1"),
                [serde_json::json!({ "sha": commit, "force": false })]
            );
        } else {
            assert_eq!(p.count("POST /graphql"), 1);
        }
    }
}

/// A commit on `parent` with one extra file: someone else's work on the branch.
fn foreign_commit(gh: &StandIn, parent: &str) -> String {
    let mut state = gh.state();
    let tree = state.git.commit_tree(parent).unwrap().to_owned();
    let mut leaves = state.git.flatten(&tree).unwrap();
    let blob = state.git.put_blob(b"someone else\n".to_vec());
    leaves.insert("foreign.txt".into(), ("100644".into(), blob));
    let tree = state.git.build(&leaves);
    state
        .git
        .put_commit(&tree, &[parent.to_owned()], "foreign\n", 1, true)
}

#[test]
fn a_branch_elsewhere_is_a_typed_error_and_nothing_is_written() {
    let r = repo();
    let diff = regular_change(&r);
    for method in METHODS {
        let plan = with_method(r.plan(&diff, None), method);
        let gh = r.standin(Scenario::default());
        let foreign = foreign_commit(&gh, &r.base);
        gh.state().git.refs.insert(REF.into(), foreign.clone());
        let p = publish_on(&gh, &plan, &r.base);
        assert_eq!(p.report.exit_code, 1);
        assert_eq!(p.failure(), "branch-elsewhere");
        assert!(p.message().contains(&foreign) && p.message().contains("Fix:"));
        assert!(
            p.requests.iter().all(|q| q.method == "GET"),
            "{:?}",
            p.lines()
        );
        assert_eq!(head(&gh), Some(foreign));
    }
}

/// A first attempt fails at the draft pull request (the repository has none); once drafts are
/// available, the rerun recognises the proven publication on the branch, commits nothing again,
/// and opens the pull request.
#[test]
fn draft_pull_requests_unsupported_then_a_rerun_reuses_the_publication() {
    let r = repo();
    let diff = r.diff(|w| write(w, "bin/gradlew", b"#!/bin/sh\necho gradle 2\n", true));
    let plan = r.plan(&diff, None);
    let git_tree = r.git_tree(&diff);
    let gh = r.standin(Scenario {
        draft_pull_requests: false,
        ..Scenario::default()
    });
    let first = publish_on(&gh, &plan, &r.base);
    assert_eq!(first.report.exit_code, 1);
    assert_eq!(first.failure(), "draft-unsupported");
    assert!(first.report.doc.tree.proven, "the commit itself was proven");
    for needed in [
        "Draft pull requests are not supported in this repository.",
        "Cause:",
        "Fix:",
        "never opens a pull request that is ready for review",
    ] {
        assert!(
            first.message().contains(needed),
            "{needed}: {}",
            first.message()
        );
    }
    assert_eq!(first.count("POST /repos/octo/repo/check-runs"), 0);
    let commit = first.report.doc.commit.clone().unwrap();

    gh.state().scenario.draft_pull_requests = true;
    let rerun = publish_on(&gh, &plan, &r.base);
    let again = assert_published(&gh, &rerun, &git_tree, &r.base);
    assert_eq!(again, commit, "the same commit, not a second one");
    assert_eq!(
        rerun.report.doc.branch_state.as_deref(),
        Some("already-published")
    );
    for write in [
        "POST /repos/octo/repo/git/blobs",
        "POST /repos/octo/repo/git/trees",
        "POST /repos/octo/repo/git/commits",
        "POST /repos/octo/repo/git/refs",
    ] {
        assert_eq!(rerun.count(write), 0, "{write}");
    }
}

#[test]
fn an_open_pull_request_from_the_branch_is_reused_not_duplicated() {
    let (r, diff, plan) = regular();
    let gh = r.standin(Scenario::default());
    gh.state().git.refs.insert(REF.into(), r.base.clone());
    gh.state().pulls.push(PullState {
        number: 7,
        title: "earlier attempt".into(),
        body: String::new(),
        head: BRANCH.into(),
        head_sha: r.base.clone(),
        base: "main".into(),
        draft: true,
        state: "open".into(),
        labels: Vec::new(),
        requested_reviewers: Vec::new(),
        requested_teams: Vec::new(),
        merged: false,
        user: "agent-team-apply[bot]".into(),
    });
    let p = publish_on(&gh, &plan, &r.base);
    assert_published(&gh, &p, &r.git_tree(&diff), &r.base);
    let pull = p.report.doc.pull_request.as_ref().unwrap();
    assert_eq!((pull.number, pull.reused), (7, true));
    assert_eq!(p.count("POST /repos/octo/repo/pulls"), 0);

    // One into another base branch is a conflict, not reused.
    let gh = r.standin(Scenario::default());
    gh.state().pulls.push(PullState {
        number: 8,
        title: "elsewhere".into(),
        body: String::new(),
        head: BRANCH.into(),
        head_sha: r.base.clone(),
        base: "release".into(),
        draft: true,
        state: "open".into(),
        labels: Vec::new(),
        requested_reviewers: Vec::new(),
        requested_teams: Vec::new(),
        merged: false,
        user: "agent-team-apply[bot]".into(),
    });
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 1);
    assert_eq!(p.failure(), "pull-request-conflict");
    assert_eq!(p.count("POST /repos/octo/repo/pulls"), 0);
}

// ---------------------------------------------------------------------------------------------
// unconfirmed writes: the branch is read again, and only its state decides

#[test]
fn unconfirmed_mutation_with_the_head_moved_to_this_publication_is_confirmed() {
    let (r, diff, plan) = regular();
    let gh = r.standin(faulting(vec![
        Fault::new("POST", "/graphql", vec![Canned::drop_connection()]).after_handling(),
    ]));
    let p = publish_on(&gh, &plan, &r.base);
    assert_published(&gh, &p, &r.git_tree(&diff), &r.base);
    assert_eq!(p.count("POST /graphql"), 1, "never sent twice");
    assert!(
        p.log
            .iter()
            .any(|l| l.contains("which is this publication: confirmed"))
    );
}

#[test]
fn unconfirmed_mutation_with_the_head_moved_elsewhere_is_a_stale_head() {
    let (r, _, plan) = regular();
    for canned in [None, Some(Canned::drop_connection())] {
        let gh = r.standin(Scenario::default());
        let foreign = foreign_commit(&gh, &r.base);
        {
            let mut state = gh.state();
            state.scenario.ref_moves.push(RefMove {
                method: "POST".into(),
                path_prefix: "/graphql".into(),
                name: REF.into(),
                to: foreign.clone(),
            });
            if let Some(canned) = canned.clone() {
                state
                    .scenario
                    .faults
                    .push(Fault::new("POST", "/graphql", vec![canned]));
            }
        }
        let p = publish_on(&gh, &plan, &r.base);
        assert_eq!(p.report.exit_code, 1, "{canned:?}");
        assert_eq!(p.failure(), "stale-head");
        assert!(p.message().contains(&foreign));
        assert_eq!(head(&gh), Some(foreign));
        assert_no_pull_request_or_check(&gh, &p);
        assert_eq!(p.count("POST /graphql"), 1);
    }
}

#[test]
fn unconfirmed_mutation_with_the_head_unchanged_is_uncertain() {
    let (r, _, plan) = regular();
    let gh = r.standin(faulting(vec![Fault::new(
        "POST",
        "/graphql",
        vec![Canned::status(502, "Bad Gateway")],
    )]));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 2);
    assert_eq!(p.report.doc.outcome, "error");
    assert_eq!(p.failure(), "publication-uncertain");
    assert!(p.message().contains("unchanged"), "{}", p.message());
    assert_eq!(p.count("POST /graphql"), 1, "never resent");
    assert_eq!(head(&gh).as_deref(), Some(r.base.as_str()));
    assert_no_pull_request_or_check(&gh, &p);
}

#[test]
fn unconfirmed_mutation_with_the_head_unreadable_is_uncertain() {
    let (r, _, plan) = regular();
    let gh = r.standin(faulting(vec![
        Fault::new("POST", "/graphql", vec![Canned::drop_connection()]).after_handling(),
        // The first read (before anything is written) goes through; every later one fails.
        Fault::new(
            "GET",
            "/repos/octo/repo/git/ref/",
            vec![Canned::status(500, "boom"); 8],
        )
        .passing_first(1),
    ]));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 2);
    assert_eq!(p.failure(), "publication-uncertain");
    assert!(p.message().contains("cannot be read"), "{}", p.message());
    assert_no_pull_request_or_check(&gh, &p);
}

#[test]
fn unconfirmed_ref_creation_is_judged_by_the_branch() {
    let r = repo();
    let diff = r.diff(|w| write(w, "bin/build.sh", b"#!/bin/sh\necho 5\n", true));
    let plan = r.plan(&diff, None);
    // The ref was created, the answer lost: confirmed by reading it.
    let gh = r.standin(faulting(vec![
        Fault::new(
            "POST",
            "/repos/octo/repo/git/refs",
            vec![Canned::drop_connection()],
        )
        .after_handling(),
    ]));
    let p = publish_on(&gh, &plan, &r.base);
    assert_published(&gh, &p, &r.git_tree(&diff), &r.base);
    assert_eq!(p.count("POST /repos/octo/repo/git/refs"), 1, "never resent");
    // Not created, the answer lost: uncertain.
    let gh = r.standin(faulting(vec![Fault::new(
        "POST",
        "/repos/octo/repo/git/refs",
        vec![Canned::drop_connection()],
    )]));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 2);
    assert_eq!(p.failure(), "publication-uncertain");
    assert!(
        p.message().contains("still does not exist"),
        "{}",
        p.message()
    );
}

// ---------------------------------------------------------------------------------------------
// refusals name the cause and the fix

/// A base whose workflow files differ from the default branch's, and an App without the
/// `workflows` permission: GitHub refuses the ref.
#[test]
fn a_refused_ref_creation_names_the_workflows_permission() {
    let r = repo();
    let diff = regular_change(&r);
    for method in METHODS {
        let plan = with_method(r.plan(&diff, None), method);
        let gh = r.standin(Scenario {
            app_without_workflows_permission: true,
            ..Scenario::default()
        });
        // The default branch moved on and changed a workflow since the base.
        {
            let mut state = gh.state();
            let tree = state.git.commit_tree(&r.base).unwrap().to_owned();
            let mut leaves = state.git.flatten(&tree).unwrap();
            let blob = state.git.put_blob(b"on: pull_request\n".to_vec());
            leaves.insert(".github/workflows/ci.yml".into(), ("100644".into(), blob));
            let tree = state.git.build(&leaves);
            let newer = state
                .git
                .put_commit(&tree, std::slice::from_ref(&r.base), "ci\n", 2, true);
            state.git.refs.insert("refs/heads/main".into(), newer);
        }
        let p = publish_on(&gh, &plan, &r.base);
        assert_eq!(p.report.exit_code, 1, "{method:?}");
        assert_eq!(p.failure(), "ref-refused");
        for needed in [
            "`workflows` permission",
            ".github/workflows/ci.yml",
            "Cause:",
            "Fix: dispatch the task again on a base_sha at the default branch's current head",
        ] {
            assert!(p.message().contains(needed), "{needed}: {}", p.message());
        }
        assert_eq!(head(&gh), None);
        assert_no_pull_request_or_check(&gh, &p);
    }
}

#[test]
fn a_generic_ref_refusal_still_names_a_cause_and_a_fix() {
    let (r, _, plan) = regular();
    let gh = r.standin(faulting(vec![Fault::new(
        "POST",
        "/repos/octo/repo/git/refs",
        vec![Canned::status(422, "Reference update failed")],
    )]));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 1);
    assert_eq!(p.failure(), "ref-refused");
    assert!(p.message().contains("Reference update failed"));
    assert!(p.message().contains("Cause:") && p.message().contains("Fix:"));
    assert_eq!(p.count("POST /graphql"), 0);
}

// ---------------------------------------------------------------------------------------------
// the plan must be this publication's

#[test]
fn a_plan_for_something_else_sends_nothing() {
    let (r, _, plan) = regular();
    let gh = r.standin(Scenario::default());
    let client = client_for(&gh, &gh.url());
    let repository = Repository::parse("octo/repo").unwrap();
    let other_repo = Repository::parse("octo/other").unwrap();
    let pass = decision_for(&plan, "success");
    let fail = decision_for(&plan, "failure");
    let mut other_diff = plan.clone();
    other_diff.diff_sha256 = "0".repeat(64);
    let other_diff_pass = decision_for(&other_diff, "success");
    let rejected = VerdictDoc {
        verdict: contract::verdict::VerdictWord::Reject,
        ..plan.verdict.clone()
    };
    let other_files = VerdictDoc {
        files: plan.verdict.files[1..].to_vec(),
        ..plan.verdict.clone()
    };
    let base = r.base.clone();
    let other_base = "1".repeat(40);
    let verdict = &plan.verdict;
    type Case<'a> = (
        &'a str,
        &'a Repository,
        &'a str,
        &'a str,
        &'a str,
        &'a DecisionDoc,
        &'a VerdictDoc,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "repository",
            &other_repo,
            BRANCH,
            &base,
            "main",
            &pass,
            verdict,
        ),
        (
            "branch",
            &repository,
            "agent-team/t-2",
            &base,
            "main",
            &pass,
            verdict,
        ),
        (
            "base",
            &repository,
            BRANCH,
            &other_base,
            "main",
            &pass,
            verdict,
        ),
        (
            "abbreviated base",
            &repository,
            BRANCH,
            &base[..12],
            "main",
            &pass,
            verdict,
        ),
        (
            "base branch",
            &repository,
            BRANCH,
            &base,
            "release",
            &pass,
            verdict,
        ),
        (
            "failed decision",
            &repository,
            BRANCH,
            &base,
            "main",
            &fail,
            verdict,
        ),
        (
            "another diff",
            &repository,
            BRANCH,
            &base,
            "main",
            &other_diff_pass,
            verdict,
        ),
        (
            "rejecting verdict",
            &repository,
            BRANCH,
            &base,
            "main",
            &pass,
            &rejected,
        ),
        (
            "another verdict",
            &repository,
            BRANCH,
            &base,
            "main",
            &pass,
            &other_files,
        ),
    ];
    for (what, repo, branch, base, base_branch, decision, verdict) in cases {
        let request = PublicationRequest {
            repository: repo,
            branch,
            base,
            base_branch,
            decision,
            verdict,
            check_name: "agent-team-apply / gate",
            details_url: None,
            protected_label: PROTECTED_LABEL,
            protected_reviewers: &Reviewers::default(),
            run_attempt: 1,
            app_id: 424_242,
            revision: None,
        };
        let report = publish(&client, &plan, &request, &mut |_: &str| {});
        assert_eq!(report.exit_code, 2, "{what}");
        assert_eq!(
            report.doc.failure.as_ref().map(|f| f.code.as_str()),
            Some("plan-mismatch"),
            "{what}"
        );
    }
    // And plans that contradict themselves.
    let mut schema = plan.clone();
    schema.schema = "agent-team-apply/publish-plan/v1".into();
    let mut missing = plan.clone();
    missing.input.file_changes.additions.pop();
    let mut blobless = plan.clone();
    blobless.entries[0].blob = None;
    let mut twice = plan.clone();
    twice.entries.push(plan.entries[0].clone());
    for (what, bad) in [
        ("schema", schema),
        ("missing contents", missing),
        ("entry without blob", blobless),
        ("entry twice", twice),
    ] {
        let p = publish_on(&gh, &bad, &r.base);
        assert_eq!(p.failure(), "plan-mismatch", "{what}");
    }
    assert!(gh.requests().is_empty(), "nothing was sent");
}

#[test]
fn every_failure_is_registered_once_with_its_exit_code() {
    let mut names = std::collections::BTreeSet::new();
    for code in FAILURES {
        let info = code.info();
        assert_eq!(info.code, *code);
        assert!(names.insert(info.name), "{} twice", info.name);
        assert!(
            info.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-'),
            "{}",
            info.name
        );
        assert!(matches!(info.exit.code(), 1 | 2), "{}", info.name);
        assert!(info.description.ends_with('.'), "{}", info.name);
    }
    assert_eq!(names.len(), 14);
}

// ---------------------------------------------------------------------------------------------
// the binary

fn gate_publish(
    gh: &StandIn,
    dir: &Path,
    plan: &Planned,
    base: &str,
    env: &[(&str, &str)],
) -> (Option<i32>, String, String, PathBuf) {
    gate_publish_with(gh, dir, plan, base, env, &[])
}

fn gate_publish_with(
    gh: &StandIn,
    dir: &Path,
    plan: &Planned,
    base: &str,
    env: &[(&str, &str)],
    extra: &[&str],
) -> (Option<i32>, String, String, PathBuf) {
    let plan_path = dir.join(format!("plan-{}.json", unique()));
    fs::write(&plan_path, plan.to_json().unwrap()).unwrap();
    let decision = dir.join(format!("decision-{}.json", unique()));
    fs::write(&decision, decision_for(plan, "success").to_json().unwrap()).unwrap();
    let verdict = dir.join(format!("verdict-{}.json", unique()));
    fs::write(&verdict, plan.verdict.to_json().unwrap()).unwrap();
    let out = dir.join(format!("result-{}.json", unique()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    cmd.env_clear();
    for (k, v) in env {
        cmd.env(k, v);
    }
    // The App's id, as the workflow passes it, unless the case sets AGENT_TEAM_APP_ID itself.
    let app_id: &[&str] = if env.iter().any(|(k, _)| *k == "AGENT_TEAM_APP_ID") {
        &[]
    } else {
        &["--app-id", "424242"]
    };
    let output = cmd
        .arg("publish")
        .args(["--plan", plan_path.to_str().unwrap()])
        .args([
            "--repository",
            "octo/repo",
            "--branch",
            BRANCH,
            "--base",
            base,
        ])
        .args(["--base-branch", "main"])
        .args(["--decision", decision.to_str().unwrap()])
        .args(["--verdict", verdict.to_str().unwrap()])
        .args(["--details-url", DETAILS, "--api-url", &gh.url()])
        .args(["--out", out.to_str().unwrap()])
        .args(extra)
        .args(app_id)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        out,
    )
}

#[test]
fn the_command_publishes_with_gh_token_and_writes_the_result() {
    let r = repo();
    let diff = r.diff(|w| write(w, "bin/build.sh", b"#!/bin/sh\necho cli\n", true));
    let plan = r.plan(&diff, None);
    let gh = r.standin(Scenario::default());
    let token = gh.token();
    let (code, stdout, stderr, out) =
        gate_publish(&gh, r.tmp.path(), &plan, &r.base, &[("GH_TOKEN", &token)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty());
    let text = fs::read_to_string(&out).unwrap();
    assert!(!text.contains(&token) && !stderr.contains(&token));
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema"], "agent-team-apply/publish-result/v1");
    assert_eq!(doc["outcome"], "published");
    assert_eq!(doc["method"], "git-database");
    assert_eq!(doc["tree"]["proven"], true);
    assert_eq!(doc["tree"]["expected"], r.git_tree(&diff).as_str());
    assert_eq!(doc["pull_request"]["draft"], true);
    assert!(doc["check_run"]["id"].is_u64());
    assert_eq!(head(&gh).as_deref(), doc["commit"].as_str());
}

#[test]
fn the_command_needs_the_apps_id() {
    let (r, _, plan) = regular();
    let gh = r.standin(Scenario::default());
    let token = gh.token();
    let (code, _, stderr, out) = gate_publish(
        &gh,
        r.tmp.path(),
        &plan,
        &r.base,
        &[("GH_TOKEN", &token), ("AGENT_TEAM_APP_ID", "")],
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no publishing App id"), "{stderr}");
    assert!(!out.exists());
    assert!(gh.requests().is_empty());
    // From the environment, as the workflow passes it.
    let (code, _, stderr, _) = gate_publish(
        &gh,
        r.tmp.path(),
        &plan,
        &r.base,
        &[("GH_TOKEN", &token), ("AGENT_TEAM_APP_ID", "424242")],
    );
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_command_reads_gh_token_only() {
    let (r, _, plan) = regular();
    let gh = r.standin(Scenario::default());
    let token = gh.token();
    let (code, _, stderr, out) = gate_publish(
        &gh,
        r.tmp.path(),
        &plan,
        &r.base,
        &[("GITHUB_TOKEN", &token)],
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("set GH_TOKEN"), "{stderr}");
    assert!(!out.exists());
    assert!(gh.requests().is_empty());
}

#[test]
fn the_command_exits_1_on_a_failed_publication_and_still_writes_the_result() {
    let (r, _, plan) = regular();
    let gh = r.standin(Scenario {
        tamper: Some(extra_file()),
        ..Scenario::default()
    });
    let token = gh.token();
    let (code, _, stderr, out) =
        gate_publish(&gh, r.tmp.path(), &plan, &r.base, &[("GH_TOKEN", &token)]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[tree-mismatch]"), "{stderr}");
    let doc: Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["outcome"], "failed");
    assert_eq!(doc["failure"]["code"], "tree-mismatch");
    assert_eq!(doc["tree"]["proven"], false);
}

// ---------------------------------------------------------------------------------------------
// replays: one signed dispatch publishes once

const NONCE: &str = "00112233445566778899aabbccddeeff";

fn close_pull_requests(gh: &StandIn) {
    for pull in &mut gh.state().pulls {
        pull.state = "closed".into();
    }
}

#[test]
fn the_nonce_is_recorded_on_the_commit_and_the_check_run() {
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan_of_dispatch(&diff, RUN, NONCE);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    let commit = assert_published(&gh, &p, &r.git_tree(&diff), &r.base);
    let state = gh.state();
    let github_standin::git::Object::Commit { message, .. } = &state.git.objects[&commit] else {
        panic!("no commit {commit}");
    };
    assert!(
        message.contains(&format!("\nDispatch-Nonce: {NONCE}\n")),
        "{message}"
    );
    let check = state.check_runs.last().unwrap();
    assert!(
        check.output_text.starts_with(&format!(
            "Proven-Tree: {}\nDispatch-Nonce: {NONCE}\n",
            plan.tree
        )),
        "{}",
        check.output_text
    );
}

/// The replay records on the base: the App's check runs named after a nonce.
fn records(gh: &StandIn, base: &str) -> Vec<github_standin::CheckRunState> {
    gh.state()
        .check_runs
        .iter()
        .filter(|c| c.name.starts_with("agent-team-apply dispatch ") && c.head_sha == base)
        .cloned()
        .collect()
}

#[test]
fn the_dispatch_is_recorded_on_the_base_before_the_branch() {
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan_of_dispatch(&diff, RUN, NONCE);
    let gh = r.standin(Scenario::default());
    let p = publish_on(&gh, &plan, &r.base);
    assert_published(&gh, &p, &r.git_tree(&diff), &r.base);
    let [record] = records(&gh, &r.base).try_into().unwrap();
    assert_eq!(record.name, format!("agent-team-apply dispatch {NONCE}"));
    assert_eq!(record.external_id.as_deref(), Some(NONCE));
    assert_eq!(record.app_id, 424_242);
    assert_eq!(record.conclusion.as_deref(), Some("neutral"));
    assert_eq!(
        record.output_summary,
        format!("Run-Id: {RUN}\nBranch: {BRANCH}\nPull-Request: #1\n")
    );
    // Looked up exactly (name, App, every check run of the name), then written, before any
    // request touches the branch.
    let lines = p.lines();
    let lookup = p
        .requests
        .iter()
        .position(|q| q.path == format!("/repos/octo/repo/commits/{}/check-runs", r.base))
        .unwrap();
    let q = &p.requests[lookup];
    assert_eq!(q.query("check_name"), Some(record.name.as_str()));
    assert_eq!(q.query("app_id"), Some("424242"));
    assert_eq!(q.query("filter"), Some("all"));
    let write = lines
        .iter()
        .position(|l| l == "POST /repos/octo/repo/check-runs")
        .unwrap();
    let branch = lines.iter().position(|l| l == GET_REF).unwrap();
    assert!(lookup < write && write < branch, "{lines:?}");
}

#[test]
fn a_closed_pull_request_of_this_dispatch_is_never_published_again() {
    // The draft was closed (rejected by a reviewer); the publish job is re-run: before, the
    // branch read as `already-published` and a new draft opened.
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan_of_dispatch(&diff, RUN, NONCE);
    let gh = r.standin(Scenario::default());
    assert_eq!(publish_on(&gh, &plan, &r.base).report.exit_code, 0);
    close_pull_requests(&gh);
    let p = publish_attempt(&gh, &gh.url(), &plan, &r.base, 2);
    assert_eq!(p.report.exit_code, 1, "{:?}", p.log);
    assert_eq!(p.failure(), "replay-refused");
    assert!(
        p.message().starts_with(&format!(
            "pull request #1 of this dispatch (Dispatch-Nonce {NONCE}, replay record check run "
        )) && p
            .message()
            .contains(" is closed: a closed publication is never opened again"),
        "{}",
        p.message()
    );
    assert_eq!(p.count("POST /repos/octo/repo/pulls"), 0);
    assert_eq!(gh.state().pulls.len(), 1);
    // The pull request is read by its number, never found in a list.
    assert_eq!(p.count("GET /repos/octo/repo/pulls/1"), 1);
    assert_eq!(p.count("GET /repos/octo/repo/pulls"), 0);
}

#[test]
fn a_replay_after_the_branch_was_deleted_is_refused() {
    // Closed and its branch deleted; the same signed inputs dispatched again start a new run.
    let r = repo();
    let diff = regular_change(&r);
    let gh = r.standin(Scenario::default());
    let first = r.plan_of_dispatch(&diff, RUN, NONCE);
    assert_eq!(publish_on(&gh, &first, &r.base).report.exit_code, 0);
    close_pull_requests(&gh);
    gh.state().git.refs.remove(REF);
    let replay = r.plan_of_dispatch(&diff, "4343", NONCE);
    let p = publish_on(&gh, &replay, &r.base);
    assert_eq!(p.report.exit_code, 1, "{:?}", p.log);
    assert_eq!(p.failure(), "replay-refused");
    assert!(
        p.message()
            .contains(&format!("was already published by run {RUN}")),
        "{}",
        p.message()
    );
    assert_eq!(head(&gh), None, "the branch is not created again");
    assert_eq!(gh.state().pulls.len(), 1);
    assert!(
        !p.requests.iter().any(|q| q.method != "GET"),
        "nothing was written: {:?}",
        p.lines()
    );
}

fn assert_replay_refused(p: &Published, gh: &StandIn, pulls: usize) {
    assert_eq!(p.report.exit_code, 1, "{:?}", p.log);
    assert_eq!(p.failure(), "replay-refused");
    assert!(
        p.message().starts_with(&format!(
            "this dispatch (Dispatch-Nonce {NONCE}) was already published by run {RUN}: replay record check run "
        )),
        "{}",
        p.message()
    );
    assert!(
        !p.requests.iter().any(|q| q.method != "GET"),
        "nothing was written: {:?}",
        p.lines()
    );
    assert_eq!(gh.state().pulls.len(), pulls);
}

#[test]
fn a_nonce_published_by_another_run_is_refused() {
    let r = repo();
    let diff = regular_change(&r);
    let gh = r.standin(Scenario::default());
    let first = r.plan_of_dispatch(&diff, RUN, NONCE);
    assert_eq!(publish_on(&gh, &first, &r.base).report.exit_code, 0);
    let replay = r.plan_of_dispatch(&diff, "4343", NONCE);
    assert_replay_refused(&publish_on(&gh, &replay, &r.base), &gh, 1);
    // Without the pull request and the branch, the record alone tells.
    gh.state().pulls.clear();
    gh.state().git.refs.remove(REF);
    assert_replay_refused(&publish_on(&gh, &replay, &r.base), &gh, 0);
}

/// Issue 28: the replay check read one page of pull requests; with 101 newer pull requests
/// from the branch the dispatch's own fell off it and the dispatch published again.
#[test]
fn a_replay_after_101_newer_pull_requests_is_refused() {
    let r = repo();
    let diff = regular_change(&r);
    let gh = r.standin(Scenario::default());
    let first = r.plan_of_dispatch(&diff, RUN, NONCE);
    assert_eq!(publish_on(&gh, &first, &r.base).report.exit_code, 0);
    close_pull_requests(&gh);
    gh.state().git.refs.remove(REF);
    {
        let mut state = gh.state();
        for number in 2..=102 {
            state.pulls.push(PullState {
                number,
                title: "noise".into(),
                body: String::new(),
                head: BRANCH.into(),
                head_sha: r.base.clone(),
                base: "main".into(),
                draft: false,
                state: "closed".into(),
                labels: Vec::new(),
                requested_reviewers: Vec::new(),
                requested_teams: Vec::new(),
                merged: false,
                user: "agent-team-apply[bot]".into(),
            });
        }
    }
    let replay = r.plan_of_dispatch(&diff, "4343", NONCE);
    assert_replay_refused(&publish_on(&gh, &replay, &r.base), &gh, 102);
    assert_eq!(head(&gh), None);
}

/// Issue 28: the record was the heads of the branch's pull requests and the branch head;
/// moving the head back to the base, or renaming the branch, erased it and a second pull
/// request opened.
#[test]
fn a_replay_after_moving_the_head_or_renaming_the_branch_is_refused() {
    let r = repo();
    let diff = regular_change(&r);
    let replay = r.plan_of_dispatch(&diff, "4343", NONCE);
    // The head moved back to the base (the pull request follows its branch).
    let gh = r.standin(Scenario::default());
    let first = r.plan_of_dispatch(&diff, RUN, NONCE);
    assert_eq!(publish_on(&gh, &first, &r.base).report.exit_code, 0);
    gh.state().git.refs.insert(REF.into(), r.base.clone());
    gh.state().pulls[0].head_sha = r.base.clone();
    assert_replay_refused(&publish_on(&gh, &replay, &r.base), &gh, 1);
    assert_eq!(head(&gh).as_deref(), Some(r.base.as_str()));
    // The branch renamed (its pull request with it).
    let gh = r.standin(Scenario::default());
    assert_eq!(publish_on(&gh, &first, &r.base).report.exit_code, 0);
    let published = gh.state().git.refs.remove(REF).unwrap();
    gh.state()
        .git
        .refs
        .insert("refs/heads/renamed".into(), published);
    gh.state().pulls[0].head = "renamed".into();
    assert_replay_refused(&publish_on(&gh, &replay, &r.base), &gh, 1);
    assert_eq!(head(&gh), None);
}

/// A crash after the record and before the branch: the record stands, so another run of the
/// dispatch is refused, and this run's re-run finishes the publication.
#[test]
fn a_crash_between_the_record_and_the_branch_leaves_the_dispatch_recorded() {
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan_of_dispatch(&diff, RUN, NONCE);
    let gh = r.standin(Scenario::default());
    gh.state().scenario.faults.push(Fault::new(
        "GET",
        "/repos/octo/repo/git/ref/",
        vec![Canned::drop_connection(); 8],
    ));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 2, "{:?}", p.log);
    assert_eq!(p.failure(), "github-error");
    assert_eq!(head(&gh), None);
    assert_eq!(records(&gh, &r.base).len(), 1);
    gh.state().scenario.faults.clear();

    let replay = r.plan_of_dispatch(&diff, "4343", NONCE);
    assert_replay_refused(&publish_on(&gh, &replay, &r.base), &gh, 0);
    assert_eq!(head(&gh), None);

    let p = publish_attempt(&gh, &gh.url(), &plan, &r.base, 2);
    assert_eq!(p.report.exit_code, 0, "{:?} {}", p.log, p.message());
    assert_eq!(
        p.count("POST /repos/octo/repo/check-runs"),
        1,
        "only the gate's"
    );
    assert_eq!(records(&gh, &r.base).len(), 1);
    assert_eq!(gh.state().pulls.len(), 1);
}

#[test]
fn another_apps_check_run_of_the_records_name_is_no_record() {
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan_of_dispatch(&diff, RUN, NONCE);
    let forged = |app_id: u64, external_id: Option<&str>| github_standin::CheckRunState {
        id: 9,
        name: format!("agent-team-apply dispatch {NONCE}"),
        head_sha: r.base.clone(),
        conclusion: Some("neutral".into()),
        app_id,
        app_slug: "x".into(),
        output_text: String::new(),
        external_id: external_id.map(str::to_owned),
        output_summary: "Run-Id: 1\n".into(),
    };
    // Posted by the workflow token's App (anyone with checks: write): neither blocks nor counts.
    let gh = r.standin(Scenario::default());
    gh.state()
        .check_runs
        .push(forged(github_standin::OTHER_APP_ID, Some(NONCE)));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 0, "{:?}", p.log);
    // A run of the App with the record's name but not the nonce as external_id: not a record
    // the gate wrote; refused.
    let gh = r.standin(Scenario::default());
    gh.state().check_runs.push(forged(424_242, Some("other")));
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.failure(), "replay-refused");
    assert!(
        p.message().contains("is not a record this gate wrote"),
        "{}",
        p.message()
    );
    assert_eq!(head(&gh), None);
}

#[test]
fn a_token_of_another_app_writes_no_branch() {
    // The App id given is not the token's App: the record comes back as another App's and
    // nothing further is written.
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan_of_dispatch(&diff, RUN, NONCE);
    let gh = r.standin(Scenario {
        app_id: 7,
        ..Scenario::default()
    });
    let p = publish_on(&gh, &plan, &r.base);
    assert_eq!(p.report.exit_code, 2, "{:?}", p.log);
    assert_eq!(p.failure(), "github-error");
    assert!(
        p.message()
            .contains("came back as check run 101 of App Some(7), not of App 424242"),
        "{}",
        p.message()
    );
    assert_eq!(head(&gh), None);
}

#[test]
fn a_rerun_attempt_only_finishes_its_own_publication() {
    let r = repo();
    let diff = regular_change(&r);
    let plan = r.plan_of_dispatch(&diff, RUN, NONCE);
    // Attempt 2 with nothing published: it would start a publication.
    let gh = r.standin(Scenario::default());
    let p = publish_attempt(&gh, &gh.url(), &plan, &r.base, 2);
    assert_eq!(p.report.exit_code, 1);
    assert_eq!(p.failure(), "replay-refused");
    assert!(
        p.message()
            .starts_with("run attempt 2 may only finish the publication its run started"),
        "{}",
        p.message()
    );
    assert_eq!(head(&gh), None);
    // Attempt 1 committed but the pull request was not opened: attempt 2 finishes it.
    let gh = r.standin(Scenario::default());
    gh.state().scenario.faults.push(Fault::new(
        "POST",
        "/repos/octo/repo/pulls",
        vec![Canned::status(
            403,
            "Resource not accessible by integration",
        )],
    ));
    assert_ne!(publish_on(&gh, &plan, &r.base).report.exit_code, 0);
    assert!(gh.state().pulls.is_empty());
    let p = publish_attempt(&gh, &gh.url(), &plan, &r.base, 2);
    assert_eq!(p.report.exit_code, 0, "{:?} {}", p.log, p.message());
    assert_eq!(
        p.report.doc.branch_state.as_deref(),
        Some("already-published")
    );
    assert_eq!(gh.state().pulls.len(), 1);
}
