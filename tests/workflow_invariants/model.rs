//! The workflow files under test and the [`Workflow`] model: the raw text and its YAML document
//! (duplicate keys rejected), with accessors over jobs, steps and values shared by every family
//! of invariants.

use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::Path;

pub(crate) const APPLY_WORKFLOW: &str = ".github/workflows/agent-team-apply-verify.yml";

pub(crate) const OWN_CALLER: &str = ".github/workflows/agent-team-apply.yml";

pub(crate) const EXAMPLE_CALLERS: [&str; 10] = [
    "examples/rust.yml",
    "examples/go.yml",
    "examples/node.yml",
    "examples/node-pnpm.yml",
    "examples/node-yarn.yml",
    "examples/node-yarn-berry.yml",
    "examples/python.yml",
    "examples/python-uv.yml",
    "examples/python-poetry.yml",
    "examples/python-pdm.yml",
];

pub(crate) const CI_WORKFLOW: &str = ".github/workflows/ci.yml";

pub(crate) const RELEASE_WORKFLOW: &str = ".github/workflows/release.yml";

pub(crate) const RELEASE_PUBLISH_WORKFLOW: &str = ".github/workflows/release-publish.yml";

/// A workflow file: its text and its parsed document.
pub(crate) struct Workflow {
    pub(crate) raw: String,
    pub(crate) doc: Value,
}

impl Workflow {
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        let doc: Value = serde_saphyr::from_str(raw).map_err(|e| format!("invalid YAML: {e}"))?;
        Ok(Self {
            raw: raw.to_owned(),
            doc,
        })
    }

    pub(crate) fn read(relative: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    pub(crate) fn load(relative: &str) -> Self {
        Self::parse(&Self::read(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
    }

    pub(crate) fn jobs(&self) -> Result<&Map<String, Value>, String> {
        self.doc
            .get("jobs")
            .and_then(Value::as_object)
            .ok_or_else(|| "no `jobs` mapping".to_owned())
    }

    pub(crate) fn job(&self, name: &str) -> Result<&Value, String> {
        self.jobs()?
            .get(name)
            .ok_or_else(|| format!("no job `{name}`"))
    }

    pub(crate) fn steps(&self, job: &str) -> Result<&[Value], String> {
        self.job(job)?
            .get("steps")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("job `{job}` has no steps"))
    }

    /// Every step of every job that has steps, with its job's name.
    pub(crate) fn all_steps(&self) -> Result<Vec<(&str, &Value)>, String> {
        let mut all = Vec::new();
        for (name, job) in self.jobs()? {
            if let Some(steps) = job.get("steps").and_then(Value::as_array) {
                for step in steps {
                    all.push((name.as_str(), step));
                }
            }
        }
        Ok(all)
    }

    pub(crate) fn step_named(&self, job: &str, name: &str) -> Result<&Value, String> {
        self.steps(job)?
            .iter()
            .find(|s| str_of(s, "name") == Some(name))
            .ok_or_else(|| format!("job `{job}` has no step `{name}`"))
    }

    /// The `env:` of the workflow.
    pub(crate) fn env(&self, name: &str) -> Option<&str> {
        self.doc
            .pointer(&format!("/env/{name}"))
            .and_then(Value::as_str)
    }
}

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub(crate) fn uses_of(step: &Value) -> Option<&str> {
    str_of(step, "uses")
}

pub(crate) fn run_of(step: &Value) -> Option<&str> {
    str_of(step, "run")
}

pub(crate) fn with_of<'a>(step: &'a Value, key: &str) -> Option<&'a Value> {
    step.get("with").and_then(|w| w.get(key))
}

pub(crate) fn uses_action(step: &Value, action: &str) -> bool {
    uses_of(step).is_some_and(|u| u.starts_with(&format!("{action}@")))
}

/// `true`/`false` whether written as a YAML boolean or a string.
pub(crate) fn as_bool(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        Value::String(s) if s == "false" => Some(false),
        _ => None,
    }
}

/// `if:` text without an optional `${{ }}` wrapper.
pub(crate) fn condition(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    let inner = s
        .strip_prefix("${{")
        .and_then(|s| s.strip_suffix("}}"))
        .unwrap_or(s);
    Some(inner.trim().to_owned())
}

/// A job's `needs` as a set (a single string or a list).
pub(crate) fn needs_of(job: &Value) -> BTreeSet<String> {
    match job.get("needs") {
        Some(Value::String(s)) => BTreeSet::from([s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Every expression in a value: the bodies of `${{ }}` in any string, and whole `if:` conditions
/// (which are expressions even without the wrapper).
pub(crate) fn expressions(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${{") {
                let after = &rest[start + 3..];
                let end = after.find("}}").unwrap_or(after.len());
                out.push(after[..end].to_owned());
                rest = &after[end..];
            }
        }
        Value::Array(items) => items.iter().for_each(|i| expressions(i, out)),
        Value::Object(map) => {
            for (key, value) in map {
                if key == "if"
                    && let Some(c) = condition(Some(value))
                {
                    out.push(c);
                }
                expressions(value, out);
            }
        }
        _ => {}
    }
}

pub(crate) fn mentions_secrets(v: &Value) -> bool {
    let mut found = Vec::new();
    expressions(v, &mut found);
    found.iter().any(|e| e.contains("secrets"))
}

pub(crate) fn index_of(steps: &[Value], pred: impl Fn(&Value) -> bool) -> Option<usize> {
    steps.iter().position(pred)
}

pub(crate) fn run_contains(step: &Value, needle: &str) -> bool {
    run_of(step).is_some_and(|r| r.contains(needle))
}

pub(crate) fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `vN.N.N`
pub(crate) fn is_semver_tag(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Each command word of a script with its subcommand: the program's file name (quotes and any
/// directory stripped) and its first argument that is not an option. `git -C dir -c k=v apply`
/// yields `("git", "apply")`. Coarse, but errs towards finding commands.
pub(crate) fn commands(script: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in script.lines() {
        let words: Vec<String> = line
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '`'))
            .filter(|w| !w.is_empty())
            .map(|w| w.trim_matches(['"', '\'']).to_owned())
            .collect();
        for (i, word) in words.iter().enumerate() {
            let program = word.rsplit('/').next().unwrap_or(word).to_owned();
            let mut rest = words[i + 1..].iter();
            let mut subcommand = String::new();
            while let Some(arg) = rest.next() {
                if arg == "-C" || arg == "-c" || arg == "--git-dir" || arg == "--work-tree" {
                    rest.next();
                } else if !arg.starts_with('-') {
                    subcommand.clone_from(arg);
                    break;
                }
            }
            found.push((program, subcommand));
        }
    }
    found
}

/// A script with its `\`-newline continuations joined and runs of blanks collapsed, so that one
/// shell command reads as one line.
pub(crate) fn joined(script: &str) -> String {
    script
        .replace("\\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The triggers of `on`, whatever its form.
pub(crate) fn triggers(wf: &Workflow) -> Result<Vec<&str>, String> {
    let on = wf.doc.get("on").ok_or("no `on`")?;
    Ok(match on {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::Object(map) => map.keys().map(String::as_str).collect(),
        _ => return Err("`on` is neither a string, a list nor a mapping".into()),
    })
}
