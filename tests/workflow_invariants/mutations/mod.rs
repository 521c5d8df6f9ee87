//! Text mutations of the workflow files: each breaks a file in one way, and the check asserts that
//! exactly the invariants it names (and no other) notice, and that every invariant of a table is
//! exercised by some mutation.

pub(crate) mod apply;
pub(crate) mod callers;
pub(crate) mod ci;
pub(crate) mod release;

use std::collections::BTreeSet;

use crate::invariants::{Invariant, failing};
use crate::model::Workflow;

/// Byte range of a job's block: from its `  name:` line to the next key at indentation 0 or 2.
pub(crate) fn job_span(text: &str, job: &str) -> (usize, usize) {
    let header = format!("\n  {job}:\n");
    let start = text
        .find(&header)
        .unwrap_or_else(|| panic!("no job `{job}`"))
        + 1;
    let mut offset = start + header.len() - 1;
    for line in text[offset..].split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = line.trim();
        if !content.is_empty() && !content.starts_with('#') && indent <= 2 {
            return (start, offset);
        }
        offset += line.len();
    }
    (start, text.len())
}

/// Replace the only occurrence of `from` in the whole text.
pub(crate) fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` is not unique");
    text.replacen(from, to, 1)
}

/// Replace the first occurrence of `from` inside one job's block.
pub(crate) fn replace_in_job(text: &str, job: &str, from: &str, to: &str) -> String {
    let (start, end) = job_span(text, job);
    let block = &text[start..end];
    assert!(block.contains(from), "`{from}` not in job `{job}`");
    format!(
        "{}{}{}",
        &text[..start],
        block.replacen(from, to, 1),
        &text[end..]
    )
}

/// Swap the first two steps of a job (with the comments written above each).
pub(crate) fn swap_first_two_steps(text: &str, job: &str) -> String {
    let (start, end) = job_span(text, job);
    let block = &text[start..end];
    let steps_at = block.find("    steps:\n").expect("job has steps") + "    steps:\n".len();
    let lines: Vec<&str> = block[steps_at..].split_inclusive('\n').collect();
    let mut starts = Vec::new();
    let mut previous_was_comment = false;
    for (i, line) in lines.iter().enumerate() {
        let is_step_level = line.starts_with("      ") && !line.starts_with("       ");
        let is_comment = is_step_level && line.trim_start().starts_with('#');
        let is_item = is_step_level && line.trim_start().starts_with("- ");
        if (is_comment || is_item) && !previous_was_comment {
            starts.push(i);
        }
        previous_was_comment = is_comment;
    }
    assert!(starts.len() >= 2, "job `{job}` has fewer than two steps");
    let first = lines[starts[0]..starts[1]].concat();
    let second_end = starts.get(2).copied().unwrap_or(lines.len());
    let second = lines[starts[1]..second_end].concat();
    let rest = lines[second_end..].concat();
    let head = lines[..starts[0]].concat();
    format!(
        "{}{}{head}{second}{first}{rest}{}",
        &text[..start],
        &block[..steps_at],
        &text[end..]
    )
}

pub(crate) struct Mutation {
    pub(crate) description: &'static str,
    /// The invariants this mutation must break, and no others.
    pub(crate) breaks: &'static [&'static str],
    pub(crate) apply: fn(&str) -> String,
}

/// Replace the one line that starts with `prefix` (after its indentation is kept) by `line`.
pub(crate) fn replace_line(text: &str, prefix: &str, line: &str) -> String {
    let matching: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(
        matching.len(),
        1,
        "`{prefix}` does not start exactly one line"
    );
    text.replacen(matching[0], line, 1)
}

pub(crate) const CHECKOUT_PIN: &str = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1";

/// Apply each mutation to `file` and check that exactly its invariants (of `lists`) break, and
/// that every invariant of the lists is broken by some mutation.
pub(crate) fn check_mutations(
    file: &str,
    lists: &[&[(&'static str, Invariant)]],
    must_cover: &[(&'static str, Invariant)],
    mutations: &[Mutation],
) {
    let original = Workflow::load(file);
    let all: Vec<(&'static str, Invariant)> =
        lists.iter().flat_map(|l| l.iter().copied()).collect();
    let mut covered = BTreeSet::new();
    for mutation in mutations {
        let mutated_text = (mutation.apply)(&original.raw);
        assert_ne!(
            mutated_text, original.raw,
            "{file}: {}: no change",
            mutation.description
        );
        let mutated = Workflow::parse(&mutated_text)
            .unwrap_or_else(|e| panic!("{file}: {}: {e}\n{mutated_text}", mutation.description));
        let failed: BTreeSet<&str> = failing(&mutated, &all)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let expected: BTreeSet<&str> = mutation.breaks.iter().copied().collect();
        assert_eq!(
            failed, expected,
            "{file}: mutation `{}` broke {failed:?}, expected exactly {expected:?}",
            mutation.description
        );
        covered.extend(expected);
    }
    let uncovered: Vec<&str> = must_cover
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !covered.contains(id))
        .collect();
    assert!(
        uncovered.is_empty(),
        "{file}: invariants no mutation exercises: {uncovered:?}"
    );
    eprintln!(
        "{file}: {} mutations, each broke exactly its invariants",
        mutations.len()
    );
}
