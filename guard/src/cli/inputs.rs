//! `guard inputs`: validate the workflow's dispatch inputs, read from the environment variables
//! the workflow passes them through ([`guard::inputs::INPUT_VARIABLES`]). In a workflow run
//! (`GITHUB_EVENT_NAME` set), the run must have been started by `workflow_dispatch`: the inputs
//! are read from that event.
//!
//! Exit 0 when every input is valid, 1 when any is not (one `::error::` workflow command per
//! problem, escaped for that sink), 2 when the result cannot be written.

use clap::Args;

use contract::cli::emit;
use guard::escape::workflow_data;
use guard::inputs::{DiffSource, InputError, RawInputs, validate};

#[derive(Args)]
pub struct InputsArgs {}

/// One variable's value: unset is `""` (as GitHub passes an unset optional input); a value that
/// is not UTF-8 is an invalid input.
fn variable(name: &'static str, errors: &mut Vec<InputError>) -> String {
    match std::env::var_os(name) {
        None => String::new(),
        Some(value) => value.into_string().unwrap_or_else(|_| {
            errors.push(InputError::NotUtf8 { name });
            String::new()
        }),
    }
}

pub fn run(_args: InputsArgs) -> u8 {
    let mut errors = Vec::new();
    if let Some(event) = std::env::var_os("GITHUB_EVENT_NAME") {
        let event = event.to_string_lossy().into_owned();
        if event != guard::inputs::DISPATCH_EVENT {
            errors.push(InputError::Event { found: event });
        }
    }
    let [
        task_id,
        base_sha,
        expected,
        scope,
        diff_b64,
        diff_ref,
        mac,
        pr_title,
        pr_description,
    ] = guard::inputs::INPUT_VARIABLES.map(|name| variable(name, &mut errors));
    let raw = RawInputs {
        task_id: &task_id,
        base_sha: &base_sha,
        expected_diff_sha256: &expected,
        declared_scope: &scope,
        diff_b64: &diff_b64,
        diff_ref: &diff_ref,
        dispatch_mac: &mac,
        pr_title: &pr_title,
        pr_description: &pr_description,
    };
    let result = validate(&raw);
    let (text, code) = match result {
        Ok(inputs) if errors.is_empty() => {
            let source = match &inputs.diff {
                DiffSource::Base64(_) => "diff_b64".to_owned(),
                DiffSource::Ref(r) => format!("diff_ref {}", r.as_str()),
            };
            (
                format!(
                    "inputs valid: task_id {}, base {}, {} scope glob(s), diff from {source}\n",
                    inputs.task_id,
                    inputs.base_sha.as_str(),
                    inputs.scope.globs().len(),
                ),
                contract::cli::Exit::Pass.code(),
            )
        }
        other => {
            errors.extend(other.err().unwrap_or_default());
            let lines: String = errors
                .iter()
                .map(|e| format!("::error::{}\n", workflow_data(&e.to_string())))
                .collect();
            (lines, contract::cli::Exit::Fail.code())
        }
    };
    match emit(&text) {
        Ok(()) => code,
        Err(message) => {
            eprintln!("guard inputs: {message}");
            contract::cli::Exit::Error.code()
        }
    }
}
