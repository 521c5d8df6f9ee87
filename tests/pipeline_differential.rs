//! Pipeline differential: the whole path agrees with git, not only `guard check`.
//!
//! Every diff the guard accepts goes through every stage as the workflow runs it, each stage a
//! separate process reading the documents the previous one wrote:
//!
//! 1. `guard check --repo` on the base (the `guard` job);
//! 2. `guard apply` on a fresh clone of the base, `guard verify-tree` (after apply, writing the
//!    baseline), a no-op build, `guard verify-tree --after-build` (the `build-test` job);
//! 3. `gate publish-plan` on another, independent clone, then `gate publish` of that plan against
//!    a stand-in for GitHub's API holding the base commit (the publishing job).
//!
//! The oracle is plain `git apply` on a third clone. Properties, for every accepted diff:
//!
//! * every stage succeeds: the guard's acceptance is a publication;
//! * the tree `guard apply` wrote is exactly the tree `git apply` wrote: same paths, bytes,
//!   executable bits and symlink targets;
//! * the plan's additions and deletions are exactly git's changes: path for path (exact bytes,
//!   from the JSON document) and byte for byte; its entries are git's changes with their modes
//!   (`git diff --cached --raw` after `git add -A -f`), and its tree id is `git write-tree` of the
//!   oracle's index;
//! * `gate publish` (createCommitOnBranch or the Git database, as the plan says) exits 0 with the
//!   tree proven, and the branch on the stand-in points at a commit on the base whose tree id is
//!   the oracle's.
//!
//! Sources: the differential generator (`guard/tests/differential/`, honest `git diff` output
//! and mutations of it, with the Unicode names real projects use), every fixture case that
//! accepts on a base tree, the accepted cases of git's own apply tests (`tests/corpus/git-apply`), and
//! real history: `git diff <parent> <commit>` of the newest commits of this repository (or of
//! `PIPELINE_REPO`).
//!
//! Budget: `PIPELINE_CASES` accepted generated diffs (default 25), `PIPELINE_HISTORY` commits
//! (default 12). The figures printed count the publications by method. A long run:
//! `PIPELINE_CASES=2000 PIPELINE_HISTORY=400 PIPELINE_REPO=<a repository> cargo test --release
//! --test pipeline_differential -- --nocapture`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../guard/tests/differential/generate.rs"]
mod generate;
#[path = "../guard/tests/differential/mutate.rs"]
mod mutate;

use common::git_support;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use guard::check::{CheckRequest, RepoBase, check};
use guard::policy::Policy;
use guard::repo_path::RepoPath;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use common::{StageBinaries, git, git_ok};
use generate::{BaseRepo, DiffOpts, Op, apply_ops, base_spec_strategy, base_tree, canonical_diff};
use github_standin::{Scenario, StandIn, load_commit};
use mutate::{Doc, Mutation, mutate};

const DEFAULT_CASES: u64 = 25;
const DEFAULT_HISTORY: u64 = 12;
/// Candidates replayed at once (the stages are separate processes).
const WORKERS: usize = 2;
const DEFAULT_SEED: u64 = 0x7069_7065_6c69_6e65; // "pipeline"
const BASES: usize = 4;
const BRANCH: &str = "agent-team/pipeline";
const REPOSITORY: &str = "octo/repo";

/// One diff to replay, with the repository and commit it applies to.
struct Candidate {
    label: String,
    diff: Vec<u8>,
    /// A repository holding `base` (cloned for every stage, never written).
    repo: PathBuf,
    base: String,
    scope: Vec<String>,
    policy: Option<PathBuf>,
}

/// What one file is, as far as a tree comparison is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    File { executable: bool, bytes: Vec<u8> },
    Link(Vec<u8>),
}

#[derive(Default)]
struct Tally {
    candidates: BTreeMap<&'static str, u64>,
    accepted: BTreeMap<&'static str, u64>,
    /// Published, proven and equal to git's tree, by source and method.
    published: BTreeMap<String, u64>,
    /// Of which a file keeps a mode other than 100644 (the publications the earlier plan refused).
    published_with_modes: u64,
    disagreements: Vec<String>,
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("spawn")
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

fn shown(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A clone of `repo` at `commit`, clean, with a `main` branch there.
fn clone_at(repo: &Path, commit: &str, into: &Path) {
    let out = run(git(Path::new("/"))
        .args(["clone", "-q", "--no-checkout"])
        .arg(repo)
        .arg(into));
    assert!(out.status.success(), "clone: {}", shown(&out));
    git_ok(into, &["checkout", "-q", "-B", "main", commit]);
}

/// Every file below `root` but `.git`, by exact path.
fn tree_of(root: &Path) -> BTreeMap<Vec<u8>, Item> {
    let mut out = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(root.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            if rel.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let rel_path = rel.join(&name);
            let kind = entry.file_type().unwrap();
            let key = rel_path.as_os_str().as_bytes().to_vec();
            if kind.is_symlink() {
                let target = std::fs::read_link(entry.path()).unwrap();
                out.insert(key, Item::Link(target.as_os_str().as_bytes().to_vec()));
            } else if kind.is_dir() {
                stack.push(rel_path);
            } else {
                let mode = entry.metadata().unwrap().permissions().mode();
                out.insert(
                    key,
                    Item::File {
                        executable: mode & 0o111 != 0,
                        bytes: std::fs::read(entry.path()).unwrap(),
                    },
                );
            }
        }
    }
    out
}

/// git's changes of `dir`'s work tree against `base`: (status, old mode, new mode, path), by
/// `git add`. The index is left holding the work tree (for `git write-tree`).
fn git_changes(dir: &Path, base: &str) -> Vec<(char, u32, u32, Vec<u8>)> {
    git_ok(dir, &["add", "-A", "-f"]);
    let out = run(git(dir).args(["diff", "--cached", "--raw", "-z", "--no-renames", base]));
    assert!(out.status.success(), "diff --raw: {}", shown(&out));
    let mut changes = Vec::new();
    let mut fields = out.stdout.split(|&b| b == 0);
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            continue;
        }
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let path = fields.next().unwrap().to_vec();
        let old_mode = u32::from_str_radix(parts[0], 8).unwrap();
        let new_mode = u32::from_str_radix(parts[1], 8).unwrap();
        let status = parts[4].chars().next().unwrap();
        changes.push((status, old_mode, new_mode, path));
    }
    changes
}

fn scope_args(scope: &[String]) -> Vec<OsString> {
    scope
        .iter()
        .flat_map(|g| [OsString::from("--scope"), OsString::from(g)])
        .collect()
}

fn policy_args(policy: &Option<PathBuf>) -> Vec<OsString> {
    policy
        .iter()
        .flat_map(|p| [OsString::from("--policy"), p.clone().into_os_string()])
        .collect()
}

/// Replays one candidate. `Ok(false)`: the guard rejected it (not a pipeline case).
fn replay(
    bins: &StageBinaries,
    source: &str,
    c: &Candidate,
    tally: &mut Tally,
) -> Result<bool, String> {
    let tmp = tempfile::Builder::new()
        .prefix("pipeline-")
        .tempdir()
        .unwrap();
    let t = tmp.path();
    let sha = guard::hash::sha256_hex(&c.diff);
    let diff = t.join("diff.patch");
    std::fs::write(&diff, &c.diff).unwrap();
    let common_args = |cmd: &mut Command| {
        cmd.arg("--diff")
            .arg(&diff)
            .args(["--expected-sha256", &sha])
            .args(scope_args(&c.scope))
            .args(policy_args(&c.policy));
    };

    // The guard job: it reads the base through a throwaway index and writes nothing.
    let mut check = Command::new(&bins.guard);
    check.arg("check");
    common_args(&mut check);
    let out = run(check
        .arg("--repo")
        .arg(&c.repo)
        .args(["--base", &c.base, "--format", "json"]));
    match code(&out) {
        Some(0) => {}
        Some(1) => return Ok(false),
        _ => return Err(format!("guard check failed: {}", shown(&out))),
    }

    // The build-test job.
    let work = t.join("work");
    clone_at(&c.repo, &c.base, &work);
    let verdict = t.join("verdict.json");
    let mut apply = Command::new(&bins.guard);
    apply.arg("apply");
    common_args(&mut apply);
    let out = run(apply
        .arg("--repo")
        .arg(&work)
        .args(["--base", &c.base, "--verdict-out"])
        .arg(&verdict));
    if code(&out) != Some(0) {
        return Err(format!("guard apply: {}", shown(&out)));
    }
    let baseline = t.join("baseline.json");
    let out = run(Command::new(&bins.guard)
        .args(["verify-tree", "--format", "json", "--verdict"])
        .arg(&verdict)
        .arg("--repo")
        .arg(&work)
        .args(["--base", &c.base, "--out"])
        .arg(&baseline)
        .args(policy_args(&c.policy)));
    if code(&out) != Some(0) {
        return Err(format!("guard verify-tree: {}", shown(&out)));
    }
    let baseline_sha = guard::hash::sha256_hex(&std::fs::read(&baseline).unwrap());
    let out = run(Command::new(&bins.guard)
        .args([
            "verify-tree",
            "--after-build",
            "--format",
            "json",
            "--baseline",
        ])
        .arg(&baseline)
        .args(["--baseline-sha256", &baseline_sha, "--verdict"])
        .arg(&verdict)
        .arg("--repo")
        .arg(&work)
        .args(["--base", &c.base])
        .args(policy_args(&c.policy)));
    if code(&out) != Some(0) {
        return Err(format!("guard verify-tree --after-build: {}", shown(&out)));
    }

    // The oracle: plain git on its own clone.
    let oracle = t.join("oracle");
    clone_at(&c.repo, &c.base, &oracle);
    let out = run(git(&oracle).arg("apply").arg(&diff));
    if !out.status.success() {
        return Err(format!(
            "the guard accepted, git apply refused: {}",
            shown(&out)
        ));
    }
    let applied = tree_of(&work);
    let expected = tree_of(&oracle);
    if applied != expected {
        let differ: Vec<String> = applied
            .keys()
            .chain(expected.keys())
            .filter(|k| applied.get(*k) != expected.get(*k))
            .map(|k| RepoPath::from(k.as_slice()).display())
            .collect();
        return Err(format!(
            "guard apply wrote another tree than git apply: {differ:?}"
        ));
    }
    let changes = git_changes(&oracle, &c.base);
    let oracle_tree = git_ok(&oracle, &["write-tree"]).trim().to_owned();

    // The publishing job, on a clone of its own.
    let trusted = t.join("trusted");
    clone_at(&c.repo, &c.base, &trusted);
    let plan_path = t.join("plan.json");
    let mut plan = Command::new(&bins.gate);
    plan.arg("publish-plan");
    common_args(&mut plan);
    let out = run(plan
        .arg("--repo")
        .arg(&trusted)
        .args([
            "--base",
            &c.base,
            "--branch",
            BRANCH,
            "--base-branch",
            "main",
            "--repository",
            REPOSITORY,
        ])
        .arg("--out")
        .arg(&plan_path)
        .arg("--verdict-out")
        .arg(t.join("plan-verdict.json")));
    match code(&out) {
        Some(0) => {}
        Some(1) => return Err(format!("gate publish-plan refused: {}", shown(&out))),
        _ => return Err(format!("gate publish-plan failed: {}", shown(&out))),
    }
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&plan_path).unwrap()).unwrap();
    let changes_in_plan = &plan["input"]["fileChanges"];
    let mut planned: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
    for addition in changes_in_plan["additions"].as_array().unwrap() {
        let path: RepoPath = serde_json::from_value(addition["path"].clone()).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(addition["contents"].as_str().unwrap())
            .unwrap();
        planned.insert(path.into_bytes(), Some(bytes));
    }
    for deletion in changes_in_plan["deletions"].as_array().unwrap() {
        let path: RepoPath = serde_json::from_value(deletion["path"].clone()).unwrap();
        planned.insert(path.into_bytes(), None);
    }
    let mut by_git: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
    for (status, _, _, path) in &changes {
        let contents = match status {
            'D' => None,
            _ => Some(std::fs::read(oracle.join(std::ffi::OsStr::from_bytes(path))).unwrap()),
        };
        by_git.insert(path.clone(), contents);
    }
    if planned != by_git {
        let show = |m: &BTreeMap<Vec<u8>, Option<Vec<u8>>>| -> Vec<String> {
            m.iter()
                .map(|(p, c)| {
                    let what = c
                        .as_ref()
                        .map_or("delete".to_owned(), |b| format!("{} bytes", b.len()));
                    format!("{} ({what})", RepoPath::from(p.as_slice()).display())
                })
                .collect()
        };
        return Err(format!(
            "the plan {:?} is not git's change {:?}",
            show(&planned),
            show(&by_git)
        ));
    }
    // The entries are git's changes, modes included, and the tree is git's.
    let mode = |v: &serde_json::Value| -> u32 {
        v.as_str().map_or(0, |m| u32::from_str_radix(m, 8).unwrap())
    };
    let entries: Vec<(u32, u32, Vec<u8>)> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let path: RepoPath = serde_json::from_value(e["path"].clone()).unwrap();
            (
                mode(&e["old_mode"]),
                mode(&e["new_mode"]),
                path.into_bytes(),
            )
        })
        .collect();
    let git_entries: Vec<(u32, u32, Vec<u8>)> = changes
        .iter()
        .map(|(_, old, new, path)| (*old, *new, path.clone()))
        .collect();
    if entries != git_entries {
        return Err(format!(
            "the plan's entries {entries:?} are not git's changes {git_entries:?}"
        ));
    }
    if plan["tree"] != oracle_tree.as_str() {
        return Err(format!(
            "the plan's tree {} is not git's {oracle_tree}",
            plan["tree"]
        ));
    }
    let method = plan["method"].as_str().unwrap().to_owned();
    publish_and_prove(bins, c, t, &plan_path, &oracle_tree)?;
    if entries
        .iter()
        .any(|(_, new, _)| *new != 0 && *new != 0o100644)
    {
        tally.published_with_modes += 1;
    }
    *tally
        .published
        .entry(format!("{source} {method}"))
        .or_default() += 1;
    Ok(true)
}

/// `gate publish` of the plan against a stand-in holding the base commit: exit 0, the tree
/// proven, and the branch at a commit on the base whose tree is the oracle's.
fn publish_and_prove(
    bins: &StageBinaries,
    c: &Candidate,
    t: &Path,
    plan_path: &Path,
    oracle_tree: &str,
) -> Result<(), String> {
    let gh = StandIn::start(Scenario::default()).unwrap();
    load_commit(&gh, &c.repo, &c.base, "main").unwrap();
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plan_path).unwrap()).unwrap();
    // `gate decide` over two successful jobs, as the workflow runs it, for this diff.
    let decision = t.join("decision.json");
    let needs = r#"{"guard":{"result":"success","outputs":{}},"build-test":{"result":"success","outputs":{}}}"#;
    let out = run(Command::new(&bins.gate)
        .args(["decide", "--needs", needs, "--require", "guard,build-test"])
        .args(["--run-id", "1", "--diff-sha256"])
        .arg(plan["diff_sha256"].as_str().unwrap_or_default())
        .args(["--format", "json"]));
    if code(&out) != Some(0) {
        return Err(format!("gate decide: {}", shown(&out)));
    }
    std::fs::write(&decision, &out.stdout).unwrap();
    let result = t.join("publish-result.json");
    let app_id = gh.state().scenario.app_id.to_string();
    let out = run(Command::new(&bins.gate)
        .env_clear()
        .env("GH_TOKEN", gh.token())
        .arg("publish")
        .arg("--app-id")
        .arg(&app_id)
        .arg("--plan")
        .arg(plan_path)
        .args(["--repository", REPOSITORY, "--branch", BRANCH])
        .args(["--base", &c.base, "--base-branch", "main", "--api-url"])
        .arg(gh.url())
        .arg("--decision")
        .arg(&decision)
        .arg("--verdict")
        .arg(t.join("plan-verdict.json"))
        .arg("--out")
        .arg(&result));
    if code(&out) != Some(0) {
        return Err(format!("gate publish: {}", shown(&out)));
    }
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
    let state = gh.state();
    let head = state.git.refs.get(&format!("refs/heads/{BRANCH}")).cloned();
    let on_base = match head.as_deref().and_then(|h| state.git.objects.get(h)) {
        Some(github_standin::git::Object::Commit { tree, parents, .. }) => {
            tree == oracle_tree && parents.as_slice() == std::slice::from_ref(&c.base)
        }
        _ => false,
    };
    if doc["tree"]["proven"] != true || !on_base || doc["commit"].as_str() != head.as_deref() {
        return Err(format!(
            "gate publish exited 0 but the stand-in holds {head:?}, not git's tree {oracle_tree} \
             on the base: {doc}"
        ));
    }
    Ok(())
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

fn rng(seed: u64, salt: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    for (k, chunk) in bytes.chunks_mut(8).enumerate() {
        let v = (seed ^ salt.rotate_left(17))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add((k as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Generated diffs the guard (as a library, to choose quickly) accepts on their base.
fn generated(want: u64, seed: u64, bases: &[BaseRepo], mut each: impl FnMut(Candidate)) -> u64 {
    let policy = Policy::embedded_default().unwrap();
    let scope = vec!["**".to_string()];
    let mut runner = rng(seed, 0);
    let strategy = (
        0..bases.len(),
        proptest::collection::vec(generate::op_strategy(), 1..=3),
        generate::diff_opts_strategy(),
        prop_oneof![
            7 => Just(Vec::new()),
            3 => proptest::collection::vec(mutate::mutation_strategy(), 1..=2),
        ],
    );
    let (mut tried, mut found) = (0u64, 0u64);
    while found < want && tried < want.saturating_mul(20) {
        tried += 1;
        let (b, ops, opts, mutations): (usize, Vec<Op>, DiffOpts, Vec<Mutation>) =
            strategy.new_tree(&mut runner).unwrap().current();
        let base = &bases[b];
        let target = apply_ops(&base.tree, &ops);
        let canonical = canonical_diff(base, &target, &opts);
        let diff = if mutations.is_empty() {
            canonical
        } else {
            let mut doc = Doc::parse(&canonical);
            for m in &mutations {
                mutate(&mut doc, m, &base.tree);
            }
            doc.bytes()
        };
        let sha = guard::hash::sha256_hex(&diff);
        let verdict = check(&CheckRequest {
            diff: &diff,
            expected_sha256: &sha,
            scope: &scope,
            policy: &policy,
            repo: Some(RepoBase {
                dir: base.path(),
                base: &base.commit,
            }),
        })
        .unwrap();
        if !verdict.accepted() {
            continue;
        }
        found += 1;
        each(Candidate {
            label: format!(
                "generated #{tried} (base {b}, {} mutation(s))",
                mutations.len()
            ),
            diff,
            repo: base.path().to_path_buf(),
            base: base.commit.clone(),
            scope: scope.clone(),
            policy: None,
        });
    }
    found
}

/// A repository holding a fixture case's base tree (`base/`, `base.links`, `base.gitlinks`).
fn fixture_base(case: &Path, into: &Path) -> String {
    std::fs::create_dir_all(into).unwrap();
    git_ok(into, &["init", "-q", "-b", "main"]);
    if case.join("base").is_dir() {
        common::copy_tree(&case.join("base"), into);
    }
    if let Ok(links) = std::fs::read_to_string(case.join("base.links")) {
        for line in links.lines() {
            let (path, target) = line.split_once(" -> ").unwrap();
            let link = into.join(path);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, link).unwrap();
        }
    }
    if let Ok(gitlinks) = std::fs::read_to_string(case.join("base.gitlinks")) {
        for line in gitlinks.lines() {
            let (path, sha) = line.split_once(' ').unwrap();
            std::fs::create_dir_all(into.join(path)).unwrap();
            git_ok(
                into,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{sha},{path}"),
                ],
            );
        }
    }
    git_ok(into, &["add", "-A"]);
    git_ok(into, &["commit", "-q", "--allow-empty", "-m", "base"]);
    git_ok(into, &["rev-parse", "HEAD"]).trim().to_owned()
}

/// The newest `count` non-merge, non-root commits of `repo` as (parent, commit).
fn history(repo: &Path, count: u64) -> Vec<(String, String)> {
    let out = run(git(repo).args([
        "rev-list",
        "--no-merges",
        "--parents",
        &format!("--max-count={}", count.saturating_mul(2)),
        "HEAD",
    ]));
    assert!(
        out.status.success(),
        "{} is not a git repository with history: {}",
        repo.display(),
        shown(&out)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let ids: Vec<&str> = l.split(' ').collect();
            (ids.len() == 2).then(|| (ids[1].to_owned(), ids[0].to_owned()))
        })
        .take(usize::try_from(count).unwrap_or(usize::MAX))
        .collect()
}

#[test]
fn every_accepted_diff_passes_the_whole_path_and_publishes_exactly_what_git_applies() {
    let bins = common::stage_binaries();
    let seed = env_number("PIPELINE_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_number("PIPELINE_CASES").unwrap_or(DEFAULT_CASES);
    let history_count = env_number("PIPELINE_HISTORY").unwrap_or(DEFAULT_HISTORY);
    let mut candidates: Vec<(&'static str, Candidate)> = Vec::new();

    // Generated.
    let bases: Vec<BaseRepo> = (0..BASES)
        .map(|n| {
            let mut runner = rng(seed, n as u64 + 1);
            let spec = base_spec_strategy()
                .new_tree(&mut runner)
                .unwrap()
                .current();
            BaseRepo::build(base_tree(&spec))
        })
        .collect();
    generated(cases, seed, &bases, |c| candidates.push(("generated", c)));

    // Fixture cases that accept on a base tree.
    let fixtures = common::fixtures_dir().join("cases");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let scratch = tempfile::tempdir().unwrap();
    for dir in dirs {
        let expect = std::fs::read_to_string(dir.join("expect")).unwrap_or_default();
        let has_base = ["base", "base.links", "base.gitlinks"]
            .iter()
            .any(|f| dir.join(f).exists());
        if expect.trim() != "accept" || !has_base {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let repo = scratch.path().join(&name);
        let base = fixture_base(&dir, &repo);
        let scope = match std::fs::read_to_string(dir.join("scope")) {
            Ok(text) => text.lines().map(str::to_owned).collect(),
            Err(_) => vec!["**".to_owned()],
        };
        let policy = Some(dir.join("policy.yml")).filter(|p| p.exists());
        let candidate = Candidate {
            label: name,
            diff: std::fs::read(dir.join("patch.diff")).unwrap(),
            repo,
            base,
            scope,
            policy,
        };
        candidates.push(("fixtures", candidate));
    }

    // git's own apply tests: the corpus's bases are plain trees (base/) here.
    let corpus = common::git_apply_corpus();
    let mut corpus_dirs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap_or_else(|e| panic!("the corpus must be at {}: {e}", corpus.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("patch.diff").exists() && !p.join("base.txt").exists())
        .collect();
    corpus_dirs.sort();
    for dir in corpus_dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let repo = scratch.path().join(format!("corpus-{name}"));
        let base = fixture_base(&dir, &repo);
        let candidate = Candidate {
            label: name,
            diff: std::fs::read(dir.join("patch.diff")).unwrap(),
            repo,
            base,
            scope: vec!["**".to_owned()],
            policy: None,
        };
        candidates.push(("corpus", candidate));
    }

    // Real history.
    let repo = std::env::var_os("PIPELINE_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let commits = history(&repo, history_count);
    let mut diffs: HashMap<String, Vec<u8>> = HashMap::new();
    for (parent, commit) in &commits {
        let out = run(git(&repo).args(["-c", "core.quotePath=true", "diff", parent, commit]));
        assert!(out.status.success(), "git diff: {}", shown(&out));
        diffs.insert(commit.clone(), out.stdout);
    }
    for (parent, commit) in &commits {
        let candidate = Candidate {
            label: commit[..12].to_owned(),
            diff: diffs.remove(commit).unwrap_or_default(),
            repo: repo.clone(),
            base: parent.clone(),
            scope: vec!["**".to_owned()],
            policy: None,
        };
        candidates.push(("history", candidate));
    }

    let mut tally = Tally::default();
    let chunk = candidates.len().div_ceil(WORKERS).max(1);
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let workers: Vec<_> = candidates
            .chunks(chunk)
            .map(|part| {
                let bins = &bins;
                s.spawn(move || {
                    let mut tally = Tally::default();
                    for (source, c) in part {
                        *tally.candidates.entry(source).or_default() += 1;
                        match replay(bins, source, c, &mut tally) {
                            Ok(true) => *tally.accepted.entry(source).or_default() += 1,
                            Ok(false) => {}
                            Err(problem) => tally
                                .disagreements
                                .push(format!("{source} {}: {problem}", c.label)),
                        }
                    }
                    tally
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for part in tallies {
        for (k, v) in part.candidates {
            *tally.candidates.entry(k).or_default() += v;
        }
        for (k, v) in part.accepted {
            *tally.accepted.entry(k).or_default() += v;
        }
        for (k, v) in part.published {
            *tally.published.entry(k).or_default() += v;
        }
        tally.published_with_modes += part.published_with_modes;
        tally.disagreements.extend(part.disagreements);
    }

    let total: u64 = tally.candidates.values().sum();
    let accepted: u64 = tally.accepted.values().sum();
    let published: u64 = tally.published.values().sum();
    eprintln!(
        "pipeline differential: seed {seed:#x}, {total} candidates {:?}; guard accepted {accepted} \
         {:?}; published exactly as git applied (plan = git's entries, modes and tree; gate \
         publish proven on the stand-in) {published} {:?}, of which with a mode other than \
         100644 {}; disagreements {}",
        tally.candidates,
        tally.accepted,
        tally.published,
        tally.published_with_modes,
        tally.disagreements.len()
    );
    assert!(
        tally.disagreements.is_empty(),
        "{} disagreement(s):\n{}",
        tally.disagreements.len(),
        tally.disagreements.join("\n\n")
    );
    assert_eq!(published, accepted, "every accepted diff is published");
    // Every source contributed diffs that went through the whole path.
    for source in ["generated", "fixtures", "corpus"] {
        assert!(
            tally.accepted.get(source).copied().unwrap_or(0) > 0,
            "no accepted diff from {source}"
        );
    }
    if commits.is_empty() {
        panic!(
            "{} has no non-merge commit with a parent to replay (a shallow clone?)",
            repo.display()
        );
    }
}
