//! The invariants, one module per kind of workflow file, each with its table of stable ids. An
//! invariant is a function over a [`Workflow`] returning `Result<(), String>`.

pub(crate) mod apply;
pub(crate) mod callers;
pub(crate) mod ci;
pub(crate) mod release;
pub(crate) mod shared;

use crate::model::Workflow;

pub(crate) type Invariant = fn(&Workflow) -> Result<(), String>;

pub(crate) fn failing(
    wf: &Workflow,
    invariants: &[(&'static str, Invariant)],
) -> Vec<(&'static str, String)> {
    invariants
        .iter()
        .filter_map(|(id, check)| check(wf).err().map(|e| (*id, e)))
        .collect()
}
