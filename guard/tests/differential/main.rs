//! Differential test of the guard against real `git apply`.
//!
//! A generated base repository, a generated change to it turned into a canonical diff by real
//! `git diff`, then zero or more mutations aimed at `git apply`'s leniencies. Every diff is judged
//! three ways: the guard without a base (parser only), the guard with the base (`RepoBase`), and an
//! oracle written here that applies the diff to a throwaway index of the base with plain git
//! (`GIT_INDEX_FILE` + `read-tree` + `apply --cached` + `diff-index --raw -z --no-renames`).
//!
//! Properties, per case:
//!
//! * **P1, parser only.** When the guard accepts without a base, git applies the diff and git's
//!   real effect is exactly the guard's file list (rename = `D` old + `A` new, copy = `A` new; modes
//!   the diff leaves implicit are the base's). Without a base the guard cannot know what the base
//!   holds, so two outcomes are allowed that depend only on the base, never on how the bytes are
//!   read: git refusing for a base reason (a hunk that does not match, a missing or already present
//!   path, a path beneath a base symlink), and a diff whose own claims (an `index` mode, a path)
//!   contradict the base. Both are counted (the summary line names them), and P2 must catch them.
//! * **P2, with the base.** When git refuses, the guard rejects; when the guard accepts, git
//!   applied and its effect is exactly the guard's file list. Also: the guard never accepts with a
//!   base what it rejects without one.
//!
//! Budget: `DIFFERENTIAL_CASES` (else `PROPTEST_CASES`, else 400) cases from a fixed seed
//! (`DIFFERENTIAL_SEED` overrides it). A long run:
//! `DIFFERENTIAL_CASES=100000 cargo test --release -p guard --test differential -- --nocapture`.
//! `DIFFERENTIAL_KEEP_GOING=1` records every disagreement instead of stopping (and shrinking) at
//! the first, and prints them grouped by kind. The last failing case is written to
//! `$CARGO_TARGET_TMPDIR/differential-failure/` (`patch.diff`, `base/`, `README`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use guard::check::{CheckRequest, RepoBase, check};
use guard::escape::display_bytes;
use guard::policy::Policy;
use guard::verdict::Verdict;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

mod generate;
#[path = "../../../tests/support/git.rs"]
mod git_support;
mod mutate;
mod oracle;

use generate::*;
use mutate::*;
use oracle::*;

/// Base repositories per run; a case picks one (shrinking goes towards the first).
const BASES: usize = 6;
const DEFAULT_SEED: u64 = 0x6469_6666_7465_7374; // "difftest"
const DEFAULT_CASES: u32 = 400;

// ---------------------------------------------------------------------------------------------
// The property

#[derive(Debug, Clone)]
struct Case {
    base: usize,
    ops: Vec<Op>,
    opts: DiffOpts,
    mutations: Vec<Mutation>,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        0..BASES,
        proptest::collection::vec(op_strategy(), 1..=3),
        diff_opts_strategy(),
        prop_oneof![
            3 => Just(Vec::new()),
            7 => proptest::collection::vec(mutation_strategy(), 1..=2),
        ],
    )
        .prop_map(|(base, ops, opts, mutations)| Case {
            base,
            ops,
            opts,
            mutations,
        })
}

#[derive(Debug, Default)]
struct Stats {
    cases: u64,
    unmutated: u64,
    parser_accepted: u64,
    parser_accepted_mutated: u64,
    parser_rejected: u64,
    repo_accepted: u64,
    git_applied: u64,
    git_refused: u64,
    /// Parser-only acceptances whose file list git's effect matched exactly.
    agreed: u64,
    /// Parser-only acceptances git refused for a base reason.
    base_refused: u64,
    /// Parser-only acceptances whose claims (a mode, a path) contradict the base.
    base_contradicted: u64,
    disagreements: u64,
    /// Unmutated `git diff` output the guard's parser refuses (strictness, not a safety problem).
    canonical_parse_rejects: u64,
    rejected_by: BTreeMap<String, u64>,
    canonical_examples: Vec<String>,
}

struct Ctx {
    seed: u64,
    policy: Policy,
    bases: RefCell<HashMap<usize, BaseRepo>>,
    stats: RefCell<Stats>,
    /// Set after the first failure: shrinking runs are not counted.
    shrinking: RefCell<bool>,
    keep_going: bool,
    /// Kept-going disagreements: (kind, report).
    failures: RefCell<Vec<(String, String)>>,
}

fn seed_bytes(seed: u64, salt: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (k, chunk) in out.chunks_mut(8).enumerate() {
        let v = (seed ^ salt.rotate_left(17))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add((k as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    out
}

impl Ctx {
    fn with_base<R>(&self, n: usize, f: impl FnOnce(&BaseRepo) -> R) -> R {
        let mut bases = self.bases.borrow_mut();
        let repo = bases.entry(n).or_insert_with(|| {
            let rng =
                TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(self.seed, n as u64 + 1));
            let mut runner = TestRunner::new_with_rng(Config::default(), rng);
            let spec = base_spec_strategy()
                .new_tree(&mut runner)
                .unwrap()
                .current();
            BaseRepo::build(base_tree(&spec))
        });
        f(repo)
    }

    fn verdict(&self, diff: &[u8], repo: Option<RepoBase<'_>>) -> Verdict {
        let sha = guard::hash::sha256_hex(diff);
        let scope = vec!["**".to_string()];
        check(&CheckRequest {
            diff,
            expected_sha256: &sha,
            scope: &scope,
            policy: &self.policy,
            repo,
        })
        .expect("the check reaches a verdict")
    }
}

/// Bytes as a shell `printf '...'` argument.
fn printf_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("printf '");
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            b'%' => out.push_str("%%"),
            b'\'' => out.push_str("'\\''"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('\'');
    out
}

fn describe_verdict(v: &Verdict) -> String {
    let files: Vec<String> = v
        .files
        .iter()
        .map(|f| {
            format!(
                "{} {:?}->{:?} {:?} {:?}",
                f.status.letter(),
                f.old_mode.map(|m| format!("{m:o}")),
                f.new_mode.map(|m| format!("{m:o}")),
                f.old_path,
                f.new_path
            )
        })
        .collect();
    let violations: Vec<String> = v
        .violations
        .iter()
        .map(|x| format!("{:?}: {}", x.rule, x.message))
        .collect();
    format!(
        "accepted={} files=[{}] violations=[{}]",
        v.accepted(),
        files.join("; "),
        violations.join("; ")
    )
}

/// Write the failing case where a regression fixture can be made from it.
fn dump_failure(base: &BaseRepo, diff: &[u8], report: &str) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("differential-failure");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("base")).unwrap();
    write_tree(&base.tree, &dir.join("base"));
    std::fs::write(dir.join("patch.diff"), diff).unwrap();
    std::fs::write(dir.join("README"), report).unwrap();
}

fn run_case(ctx: &Ctx, case: &Case) -> Result<(), TestCaseError> {
    ctx.with_base(case.base, |base| {
        let target = apply_ops(&base.tree, &case.ops);
        let canonical = canonical_diff(base, &target, &case.opts);
        let mut doc = Doc::parse(&canonical);
        for m in &case.mutations {
            mutate(&mut doc, m, &base.tree);
        }
        let diff = if case.mutations.is_empty() {
            canonical.clone()
        } else {
            doc.bytes()
        };
        let parser = ctx.verdict(&diff, None);
        let with_repo = ctx.verdict(
            &diff,
            Some(RepoBase {
                dir: base.path(),
                base: &base.commit,
            }),
        );
        let git = oracle(base, &diff);
        let base_modes: HashMap<String, u32> = base
            .tree
            .iter()
            .map(|(p, e)| (display_bytes(p), e.mode))
            .collect();

        let mut problems: Vec<String> = Vec::new();
        // A short label per problem, for grouping the disagreements of a long run.
        let mut kinds: Vec<String> = Vec::new();
        // (agreed, refused for a base reason, claims contradict the base)
        let mut p1 = (false, false, false);
        // P1: parser only.
        if parser.accepted() {
            match &git {
                Oracle::Applied(effect) => {
                    let expected = expected_effect(&parser, &base_modes);
                    if expected.as_ref() == Some(effect) {
                        p1.0 = true;
                    } else {
                        if contradicts_base(&parser, &base_modes) {
                            p1.2 = true;
                        } else {
                            problems.push(format!(
                                "P1: the parser-only guard accepted, git applied with effect {}, \
                                 but the guard's file list means {}",
                                show_changes(Some(effect)),
                                show_changes(expected.as_ref())
                            ));
                            kinds.push(format!("P1 effect differs: {}", diff_kind(effect, expected.as_ref())));
                        }
                    }
                }
                Oracle::Refused(msg) => {
                    if base_dependent_refusal(msg) {
                        p1.1 = true;
                    } else {
                        problems.push(format!(
                            "P1: the parser-only guard accepted, git refused for a reason that does \
                             not depend on the base: {}",
                            msg.trim()
                        ));
                        kinds.push(format!("P1 git refused: {}", refusal_kind(msg)));
                    }
                }
            }
        }
        // P2: with the base.
        if with_repo.accepted() {
            match &git {
                Oracle::Refused(msg) => {
                    problems.push(format!(
                        "P2: the guard with --repo accepted, git refused: {}",
                        msg.trim()
                    ));
                    kinds.push(format!("P2 git refused: {}", refusal_kind(msg)));
                }
                Oracle::Applied(effect) => {
                    let expected = expected_effect(&with_repo, &base_modes);
                    if expected.as_ref() != Some(effect) {
                        problems.push(format!(
                            "P2: the guard with --repo accepted, git's effect {} is not the \
                             guard's file list {}",
                            show_changes(Some(effect)),
                            show_changes(expected.as_ref())
                        ));
                        kinds.push(format!("P2 effect differs: {}", diff_kind(effect, expected.as_ref())));
                    }
                }
            }
            if !parser.accepted() {
                problems.push("P2: accepted with --repo but rejected without a base".into());
                kinds.push("P2 accepted only with --repo".into());
            }
        }

        if !*ctx.shrinking.borrow() {
            let mut s = ctx.stats.borrow_mut();
            s.cases += 1;
            if case.mutations.is_empty() {
                s.unmutated += 1;
            }
            if parser.accepted() {
                s.parser_accepted += 1;
                if !case.mutations.is_empty() {
                    s.parser_accepted_mutated += 1;
                }
            } else {
                s.parser_rejected += 1;
                let mut rules: Vec<String> =
                    parser.violations.iter().map(|v| format!("{:?}", v.rule)).collect();
                rules.dedup();
                for r in rules {
                    *s.rejected_by.entry(r).or_default() += 1;
                }
                let parse_reject = parser.violations.iter().any(|v| {
                    matches!(
                        v.rule,
                        guard::rules::RuleId::MalformedDiff | guard::rules::RuleId::AmbiguousDiff
                    )
                });
                if case.mutations.is_empty() && parse_reject {
                    s.canonical_parse_rejects += 1;
                    if s.canonical_examples.len() < 3 {
                        s.canonical_examples.push(format!(
                            "{}\n  {}",
                            describe_verdict(&parser),
                            printf_bytes(&diff)
                        ));
                    }
                }
            }
            if with_repo.accepted() {
                s.repo_accepted += 1;
            }
            match &git {
                Oracle::Applied(_) => s.git_applied += 1,
                Oracle::Refused(_) => s.git_refused += 1,
            }
            s.agreed += u64::from(p1.0);
            s.base_refused += u64::from(p1.1);
            s.base_contradicted += u64::from(p1.2);
            if !problems.is_empty() {
                s.disagreements += 1;
            }
        }

        if problems.is_empty() {
            return Ok(());
        }
        let report = format!(
            "{}\n\nparser only: {}\nwith --repo: {}\ngit: {}\nbase tree: {:?}\ndiff:\n{}\n",
            problems.join("\n"),
            describe_verdict(&parser),
            describe_verdict(&with_repo),
            match &git {
                Oracle::Applied(effect) => format!("applied {}", show_changes(Some(effect))),
                Oracle::Refused(msg) => format!("refused: {}", msg.trim()),
            },
            base.tree
                .iter()
                .map(|(p, e)| format!("{:o} {}", e.mode, display_bytes(p)))
                .collect::<Vec<_>>(),
            printf_bytes(&diff)
        );
        dump_failure(base, &diff, &report);
        if ctx.keep_going {
            ctx.failures.borrow_mut().push((kinds.join(" / "), report));
            return Ok(());
        }
        *ctx.shrinking.borrow_mut() = true;
        Err(TestCaseError::fail(report))
    })
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

#[test]
fn guard_and_git_apply_agree() {
    let cases = env_number("DIFFERENTIAL_CASES")
        .or_else(|| env_number("PROPTEST_CASES"))
        .map_or(DEFAULT_CASES, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let seed = env_number("DIFFERENTIAL_SEED").unwrap_or(DEFAULT_SEED);
    let ctx = Ctx {
        seed,
        policy: Policy::embedded_default().unwrap(),
        bases: RefCell::new(HashMap::new()),
        stats: RefCell::new(Stats::default()),
        shrinking: RefCell::new(false),
        keep_going: std::env::var_os("DIFFERENTIAL_KEEP_GOING").is_some(),
        failures: RefCell::new(Vec::new()),
    };
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2048,
        max_shrink_time: 300_000,
        rng_algorithm: RngAlgorithm::ChaCha,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed, 0));
    let mut runner = TestRunner::new_with_rng(config, rng);
    let started = std::time::Instant::now();
    let result = runner.run(&case_strategy(), |case| run_case(&ctx, &case));

    let s = ctx.stats.borrow();
    eprintln!(
        "differential: seed {seed:#x}, {} cases ({} unmutated) in {:.1?}: parser-only accepted {} \
         ({} of them mutated; git's effect = file list {}, git refused for a base reason {}, \
         diff contradicts the base {}), rejected {}; with --repo accepted {}; git applied {}, \
         refused {}; disagreements {}",
        s.cases,
        s.unmutated,
        started.elapsed(),
        s.parser_accepted,
        s.parser_accepted_mutated,
        s.agreed,
        s.base_refused,
        s.base_contradicted,
        s.parser_rejected,
        s.repo_accepted,
        s.git_applied,
        s.git_refused,
        s.disagreements,
    );
    eprintln!(
        "differential: parser-only rejections by rule: {:?}",
        s.rejected_by
    );
    eprintln!(
        "differential: unmutated `git diff` output rejected as malformed/ambiguous: {}",
        s.canonical_parse_rejects
    );
    for e in &s.canonical_examples {
        eprintln!("  example: {e}");
    }
    let failures = ctx.failures.borrow();
    // Kept-going disagreements, grouped by kind; one example each.
    let mut kinds: BTreeMap<&String, (usize, &String)> = BTreeMap::new();
    for (kind, report) in failures.iter() {
        kinds.entry(kind).or_insert((0, report)).0 += 1;
    }
    for (key, (n, example)) in &kinds {
        eprintln!("differential: {n} x {key}\n--- first example:\n{example}");
    }
    match result {
        Ok(()) => assert!(
            failures.is_empty(),
            "{} disagreements between the guard and git (grouped above)",
            failures.len()
        ),
        Err(TestError::Fail(reason, case)) => {
            panic!("the guard and git disagree (minimal case {case:?}):\n{reason}")
        }
        Err(e) => panic!("{e}"),
    }
}
