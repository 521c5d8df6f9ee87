//! The tree documents ([`contract::tree`]) and the one mapping between them and the engine's
//! walk and findings.

pub use contract::tree::{
    Change, Check, DirId, EntryDoc, FindingDoc, Identity, Kind, Permissions, SCHEMA,
    SNAPSHOT_SCHEMA, SnapshotDoc, SnapshotSchema, TreeDocError, TreeResult, VerifyTreeDoc,
    VerifyTreeSchema,
};

use super::Finding;
use super::walk::{Entry, Snapshot};

/// The document of one finding.
pub fn finding_doc(f: &Finding) -> FindingDoc {
    FindingDoc {
        rule: f.rule,
        path: f.path.clone(),
        change: f.change,
        message: f.message.clone(),
        policy_entry: f.policy_entry.clone(),
        docs: f.rule.anchor(),
    }
}

/// A walk as snapshot entries, sorted by path (the walk's own order).
pub fn entries_from(snapshot: &Snapshot) -> Vec<EntryDoc> {
    snapshot
        .iter()
        .map(|(path, e)| EntryDoc {
            path: path.clone(),
            kind: e.kind,
            mode: Permissions::of_mode(e.mode),
            size: e.size,
            sha256: e.sha256.clone(),
            target: e.target.clone(),
        })
        .collect()
}

/// The entries of a parsed snapshot document (sorted and unique, see [`SnapshotDoc::parse`]) as
/// a walk.
pub fn snapshot_of(doc: &SnapshotDoc) -> Snapshot {
    doc.entries
        .iter()
        .map(|e| {
            (
                e.path.clone(),
                Entry {
                    kind: e.kind,
                    mode: e.mode.bits(),
                    size: e.size,
                    sha256: e.sha256.clone(),
                    target: e.target.clone(),
                },
            )
        })
        .collect()
}
