//! The verdict as its versioned document ([`contract::verdict`]): the one mapping from the engine's
//! [`Verdict`] to `agent-team-apply/guard-verdict/v1`.

pub use contract::verdict::{
    ChangeKind, CheckMode, ExclusionDoc, ExclusionList, FileDoc, FileMode, SCHEMA, VerdictDoc,
    VerdictError, VerdictSchema, VerdictWord, ViolationDoc,
};

use crate::verdict::{Verdict, Violation};

/// The document of `verdict`. A mode git does not record cannot come from the parser (it accepts
/// git's canonical modes only); should one appear, it is left out rather than invented.
pub fn document(verdict: &Verdict) -> VerdictDoc {
    VerdictDoc {
        schema: VerdictSchema,
        verdict: if verdict.accepted() {
            VerdictWord::Accept
        } else {
            VerdictWord::Reject
        },
        diff_sha256: verdict.diff_sha256.clone(),
        mode: verdict.mode,
        scope: verdict.scope.clone(),
        files: verdict
            .files
            .iter()
            .map(|f| FileDoc {
                status: f.status,
                old_path: f.old_path.clone(),
                new_path: f.new_path.clone(),
                old_mode: f.old_mode.and_then(FileMode::new),
                new_mode: f.new_mode.and_then(FileMode::new),
                line: f.line,
            })
            .collect(),
        violations: verdict.violations.iter().map(violation_doc).collect(),
        protected: verdict.protected.iter().map(violation_doc).collect(),
        unmatched_scope: verdict.unmatched_scope.clone(),
        exclusions: verdict.exclusions.clone(),
    }
}

/// The document of one violation (or protected-path finding).
pub fn violation_doc(v: &Violation) -> ViolationDoc {
    ViolationDoc {
        rule: v.rule,
        path: v.path.clone(),
        old_path: v.old_path.clone(),
        line: v.line,
        message: v.message.clone(),
        policy_entry: v.policy_entry.clone(),
        hint: v.hint.clone().unwrap_or_else(|| v.rule.remedy().to_owned()),
        docs: v.rule.anchor(),
    }
}
