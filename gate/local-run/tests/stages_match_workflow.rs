//! local-run's stage table ([`local_run::stage::STAGES`]) against the workflow it plays,
//! `.github/workflows/agent-team-apply-verify.yml`: for each stage, the step of that name exists
//! in that job and runs the installed binary with that subcommand and exactly that set of flags
//! (names; values differ since paths differ). Mutated workflow texts and a mutated table show
//! that a drift on either side fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;

use local_run::stage::{STAGES, StageSpec, WORKFLOW};
use serde_json::Value;

fn workflow_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(WORKFLOW);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("invalid YAML: {e}"))
}

/// Shell words of one line: whitespace separates, except inside quotes; quotes are removed.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// The flags an array assignment `NAME=( ... )` or `NAME+=( ... )` in `script` holds.
fn array_flags(script: &str, name: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for opener in [format!("{name}=("), format!("{name}+=(")] {
        let mut rest = script;
        while let Some(at) = rest.find(&opener) {
            let body = &rest[at + opener.len()..];
            // `NAME` itself, not the end of a longer name (`scope_args` for `args`).
            let standalone = rest[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
            if !standalone {
                rest = body;
                continue;
            }
            let end = body.find(')').unwrap_or(body.len());
            for word in words(&body[..end].replace('\n', " ")) {
                if let Some(flag) = flag_name(&word) {
                    flags.insert(flag);
                }
            }
            rest = &body[end..];
        }
    }
    flags
}

fn flag_name(word: &str) -> Option<String> {
    (word.starts_with("--") && word.len() > 2)
        .then(|| word.split('=').next().unwrap_or(word).to_owned())
}

/// The flag sets of every invocation of `<program> <subcommand>` in a step's script.
fn invocations(script: &str, program: &str, subcommand: &str) -> Vec<BTreeSet<String>> {
    let joined = script.replace("\\\n", " ");
    let mut found = Vec::new();
    for line in joined.lines() {
        let words = words(line);
        for (i, word) in words.iter().enumerate() {
            let base = word.rsplit('/').next().unwrap_or(word);
            if base != program || words.get(i + 1).map(String::as_str) != Some(subcommand) {
                continue;
            }
            let mut flags = BTreeSet::new();
            for word in &words[i + 2..] {
                if matches!(word.as_str(), "--" | ">" | ">>" | "|" | "||" | "&&" | ";") {
                    break;
                }
                if let Some(array) = word.strip_prefix("${").and_then(|w| w.strip_suffix("[@]}")) {
                    flags.extend(array_flags(script, array));
                } else if let Some(flag) = flag_name(word) {
                    flags.insert(flag);
                }
            }
            found.push(flags);
        }
    }
    found
}

/// Whether the workflow has the stage's step, running it as the table says.
fn check_stage(workflow: &Value, spec: &StageSpec) -> Result<(), String> {
    let where_ = format!("job `{}`, step {:?}", spec.job, spec.step);
    let steps = workflow
        .pointer(&format!("/jobs/{}/steps", spec.job))
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{where_}: no job `{}` with steps", spec.job))?;
    let matching: Vec<&Value> = steps
        .iter()
        .filter(|s| s.get("name").and_then(Value::as_str) == Some(spec.step))
        .collect();
    let [step] = matching.as_slice() else {
        return Err(format!("{where_}: {} steps of that name", matching.len()));
    };
    let script = step
        .get("run")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{where_}: the step has no `run:`"))?;
    let found = invocations(script, spec.program, spec.subcommand);
    let want: BTreeSet<String> = spec.flags.iter().map(|f| (*f).to_owned()).collect();
    if found.is_empty() {
        return Err(format!(
            "{where_}: does not run `{} {}`",
            spec.program, spec.subcommand
        ));
    }
    if found.contains(&want) {
        Ok(())
    } else {
        Err(format!(
            "{where_}: `{} {}` runs with flags {found:?}, the table says {want:?}",
            spec.program, spec.subcommand
        ))
    }
}

fn check_all(workflow: &Value) -> Vec<String> {
    STAGES
        .iter()
        .filter_map(|spec| check_stage(workflow, spec).err())
        .collect()
}

#[test]
fn every_stage_is_the_workflow_step_of_that_name_with_the_same_flags() {
    let workflow = parse(&workflow_text());
    assert_eq!(check_all(&workflow), Vec::<String>::new());
    // Every job of the workflow is played, and each opens with `guard inputs`.
    let jobs: BTreeSet<&str> = STAGES.iter().map(|s| s.job).collect();
    assert_eq!(
        jobs,
        BTreeSet::from(["guard", "build-test", "decide", "publish"])
    );
    let declared: BTreeSet<&str> = workflow["jobs"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        jobs, declared,
        "a job of the workflow that local-run does not play"
    );
    for job in jobs {
        assert!(
            STAGES
                .iter()
                .any(|s| s.job == job && s.program == "guard" && s.subcommand == "inputs"),
            "{job}"
        );
    }
}

#[test]
fn the_reader_sees_flags_behind_continuations_equals_signs_and_arrays() {
    let script = "args=(--run \"$d/a b.json\" --tree-before x\n  --tree-after y)\n\
                  scope_args+=(\"--scope=$glob\")\n\
                  \"$bin/report\" build-test \"${args[@]}\" --verdict v > out\n\
                  /opt/agent-team/bin/gate verify-dispatch \\\n  --repository=\"$R\" --ref=\"$F\" || exit 1\n\
                  sudo env X=1 /opt/agent-team/bin/guard run --repo w -- bash -c \"--not-a-flag\"\n\
                  gate publish-plan \"${scope_args[@]}\" --out p\n";
    let set = |flags: &[&str]| {
        flags
            .iter()
            .map(|f| (*f).to_owned())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        invocations(script, "report", "build-test"),
        vec![set(&[
            "--run",
            "--tree-before",
            "--tree-after",
            "--verdict"
        ])]
    );
    assert_eq!(
        invocations(script, "gate", "verify-dispatch"),
        vec![set(&["--repository", "--ref"])]
    );
    assert_eq!(invocations(script, "guard", "run"), vec![set(&["--repo"])]);
    assert_eq!(
        invocations(script, "gate", "publish-plan"),
        vec![set(&["--scope", "--out"])]
    );
    assert!(invocations(script, "gate", "publish").is_empty());
}

/// Each mutation of the workflow's text makes the named stage fail, and only through the check.
#[test]
fn a_workflow_that_drifts_from_the_table_fails() {
    let text = workflow_text();
    let mutations: &[(&str, &str, &str)] = &[
        // A flag removed.
        (
            " \\\n            --verdict-out \"$RUNNER_TEMP/agent-team/verdict.json\"",
            "",
            "Plan the publication",
        ),
        // A flag added.
        (
            "--require guard,build-test --run-id",
            "--require guard,build-test --strict --run-id",
            "Decide from the upstream job results",
        ),
        // A flag renamed, behind `=`.
        (
            "--mac=\"$DISPATCH_MAC\"",
            "--tag=\"$DISPATCH_MAC\"",
            "Verify the dispatcher's signature",
        ),
        // A flag renamed inside the array the command expands.
        (
            "scope_args+=(\"--scope=$glob\")",
            "scope_args+=(\"--glob=$glob\")",
            "Plan the publication",
        ),
        // A flag removed from guard run's continuation lines.
        (
            " --max-output 8388608",
            "",
            "Build and test the patched tree, then check what it wrote",
        ),
        // The step renamed.
        (
            "- name: Verify the dispatcher's signature",
            "- name: Verify the signature",
            "Verify the dispatcher's signature",
        ),
        // Another subcommand.
        (
            "/opt/agent-team/bin/gate publish --plan",
            "/opt/agent-team/bin/gate upload --plan",
            "Publish, prove the tree",
        ),
        // Another program.
        (
            "\"$bin/guard\" check --diff",
            "\"$bin/report\" check --diff",
            "Validate the diff as data",
        ),
    ];
    for (from, to, step) in mutations {
        // guard and publish verify the signature with the same step: an anchor in it occurs
        // twice, and the first (guard's) is mutated; every other anchor is unique.
        let expected = if *step == "Verify the dispatcher's signature" {
            2
        } else {
            1
        };
        assert_eq!(
            text.matches(from).count(),
            expected,
            "mutation anchor {from:?} is not where it is expected"
        );
        let mutated = text.replacen(from, to, 1);
        let errors = check_all(&parse(&mutated));
        assert!(
            !errors.is_empty() && errors.iter().all(|e| e.contains(step)),
            "mutation {from:?} -> {to:?}: {errors:?}"
        );
    }
}

/// A table entry that drifts from the workflow fails too.
#[test]
fn a_table_that_drifts_from_the_workflow_fails() {
    let workflow = parse(&workflow_text());
    for spec in STAGES {
        let mut extra: Vec<&'static str> = spec.flags.to_vec();
        extra.push("--extra");
        let leaked: &'static [&'static str] = Box::leak(extra.into_boxed_slice());
        let with_extra = StageSpec {
            flags: leaked,
            ..*spec
        };
        assert!(
            check_stage(&workflow, &with_extra).is_err(),
            "{spec:?} + --extra"
        );
        if let Some((_, fewer)) = spec.flags.split_last() {
            let without_last = StageSpec {
                flags: fewer,
                ..*spec
            };
            assert!(
                check_stage(&workflow, &without_last).is_err(),
                "{spec:?} - last flag"
            );
        }
        let other_job = StageSpec {
            job: if spec.job == "guard" {
                "publish"
            } else {
                "guard"
            },
            ..*spec
        };
        if other_job.step != local_run::stage::VALIDATE_INPUTS
            && other_job.step != "Decide again from the upstream job results"
            && other_job.step != "Verify the dispatcher's signature"
        {
            assert!(
                check_stage(&workflow, &other_job).is_err(),
                "{spec:?} in another job"
            );
        }
        let other_subcommand = StageSpec {
            subcommand: "version",
            ..*spec
        };
        assert!(check_stage(&workflow, &other_subcommand).is_err());
    }
}
