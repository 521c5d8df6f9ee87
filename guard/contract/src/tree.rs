//! The documents of `guard verify-tree` and `guard run`'s own tree check:
//!
//! - the **result** (`agent-team-apply/verify-tree/v1`): which check ran, pass or fail, and every
//!   finding;
//! - the **snapshot** (`agent-team-apply/tree-snapshot/v1`): every entry of the worktree, `.git`
//!   included, that the check after the build compares the tree with.
//!
//! ```json
//! {"schema": "agent-team-apply/verify-tree/v1",
//!  "check": "after-apply", "result": "fail",
//!  "base_commit": "<40 hex>", "diff_sha256": "<64 hex>", "verdict_sha256": "<64 hex>",
//!  "scope": ["src/**"], "entries": 42,
//!  "baseline_sha256": "<64 hex of the snapshot written (after-apply) or read (after-build)>",
//!  "snapshot_sha256": "<64 hex of the snapshot written with --out, or null>",
//!  "findings": [{"rule": "tree-mismatch", "path": "src/extra.rs", "change": "unexpected",
//!                "message": "...", "policy_entry": null, "docs": "README.md#rule-tree-mismatch"}]}
//! ```
//!
//! `change` is one of `unexpected` (in the worktree, not in the verdict), `missing` (in the
//! verdict, not in the worktree), `differs` (in both, with another status, mode or type) after
//! apply, and `created`, `deleted`, `modified` after the build. Paths are exact ([`RepoPath`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ids::{CommitId, Sha256Hex};
use crate::repo_path::RepoPath;
use crate::rules::RuleId;

crate::schema_marker!(
    /// `agent-team-apply/verify-tree/v1`.
    VerifyTreeSchema,
    "agent-team-apply/verify-tree/v1"
);

crate::schema_marker!(
    /// `agent-team-apply/tree-snapshot/v1`.
    SnapshotSchema,
    "agent-team-apply/tree-snapshot/v1"
);

pub const SCHEMA: &str = VerifyTreeSchema::ID;
pub const SNAPSHOT_SCHEMA: &str = SnapshotSchema::ID;

/// Which of the two checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    AfterApply,
    AfterBuild,
}

impl Check {
    pub fn name(self) -> &'static str {
        match self {
            Check::AfterApply => "after-apply",
            Check::AfterBuild => "after-build",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Pass or fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeResult {
    Pass,
    Fail,
}

impl fmt::Display for TreeResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TreeResult::Pass => "pass",
            TreeResult::Fail => "fail",
        })
    }
}

/// How a path differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// After apply: in the worktree, not in the verdict.
    Unexpected,
    /// After apply: in the verdict, not in the worktree.
    Missing,
    /// After apply: in both, with another status, mode or type.
    Differs,
    /// After the build: absent from the baseline.
    Created,
    /// After the build: absent now.
    Deleted,
    /// After the build: another content, permission bits, type or link target.
    Modified,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::Unexpected => "unexpected",
            Change::Missing => "missing",
            Change::Differs => "differs",
            Change::Created => "created",
            Change::Deleted => "deleted",
            Change::Modified => "modified",
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a path is on the file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "directory",
            Kind::Symlink => "symbolic link",
            Kind::Other => "special file",
        }
    }
}

/// Device and inode of a directory: which directory it is, whatever its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirId {
    pub dev: u64,
    pub ino: u64,
}

/// Which directories the worktree and its `.git` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub root: DirId,
    pub git: DirId,
}

/// Permission bits (`st_mode & 0o7777`), written as four octal digits (`"0644"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Permissions(u32);

impl Permissions {
    /// The bits, when they fit in four octal digits.
    pub fn new(bits: u32) -> Option<Permissions> {
        (bits <= 0o7777).then_some(Permissions(bits))
    }

    /// The permission bits of an `st_mode` (`& 0o7777`).
    pub fn of_mode(st_mode: u32) -> Permissions {
        Permissions(st_mode & 0o7777)
    }

    pub fn bits(self) -> u32 {
        self.0
    }
}

impl Serialize for Permissions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{:04o}", self.0))
    }
}

impl<'de> Deserialize<'de> for Permissions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Permissions, D::Error> {
        let text = String::deserialize(deserializer)?;
        let octal = text.len() == 4 && text.bytes().all(|b| (b'0'..=b'7').contains(&b));
        octal
            .then(|| u32::from_str_radix(&text, 8).ok())
            .flatten()
            .and_then(Permissions::new)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "permission bits {:?} are not four octal digits",
                    crate::escape::neutralize(&text)
                ))
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyTreeDoc {
    pub schema: VerifyTreeSchema,
    pub check: Check,
    pub result: TreeResult,
    pub base_commit: CommitId,
    pub diff_sha256: Sha256Hex,
    pub verdict_sha256: Sha256Hex,
    pub scope: Vec<String>,
    /// Entries walked, `.git` included.
    pub entries: u64,
    pub baseline_sha256: Option<Sha256Hex>,
    pub snapshot_sha256: Option<Sha256Hex>,
    pub findings: Vec<FindingDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    /// `tree-mismatch` or `build-wrote`.
    pub rule: RuleId,
    pub path: RepoPath,
    pub change: Change,
    pub message: String,
    pub policy_entry: Option<String>,
    pub docs: String,
}

/// Why a tree document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TreeDocError {
    #[error("not a valid document: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the result is \"pass\" but lists {count} finding(s)")]
    PassWithFindings { count: usize },
    #[error("snapshot entries are not sorted and unique at {path}")]
    Order { path: String },
    #[error("snapshot entry {path}: {reason}")]
    Entry { path: String, reason: String },
}

impl VerifyTreeDoc {
    /// Parse a result document: a pass lists no finding.
    pub fn parse(json: &str) -> Result<VerifyTreeDoc, TreeDocError> {
        let doc: VerifyTreeDoc = serde_json::from_str(json)?;
        if doc.passed() && !doc.findings.is_empty() {
            return Err(TreeDocError::PassWithFindings {
                count: doc.findings.len(),
            });
        }
        Ok(doc)
    }

    pub fn passed(&self) -> bool {
        self.result == TreeResult::Pass
    }

    /// Pretty JSON with a trailing newline ([`crate::doc_json`]).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}

/// The streaming reader of [`SnapshotDoc::parse_each`]: the derived strictness of
/// [`SnapshotDoc`] by hand, with the entries handed on one at a time.
mod stream {
    use std::fmt;

    use serde::Deserialize;
    use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

    use super::{EntryDoc, SnapshotDoc, TreeDocError};

    const FIELDS: &[&str] = &[
        "schema",
        "root",
        "identity",
        "taken",
        "verified",
        "base_commit",
        "diff_sha256",
        "verdict_sha256",
        "scope",
        "entries",
    ];

    #[derive(Deserialize)]
    #[serde(field_identifier, rename_all = "snake_case")]
    enum Field {
        Schema,
        Root,
        Identity,
        Taken,
        Verified,
        BaseCommit,
        DiffSha256,
        VerdictSha256,
        Scope,
        Entries,
    }

    pub(super) struct DocSeed<'a> {
        pub entry: &'a mut dyn FnMut(&EntryDoc) -> Result<(), String>,
        pub stop: &'a mut Option<TreeDocError>,
    }

    impl<'de> DeserializeSeed<'de> for DocSeed<'_> {
        type Value = SnapshotDoc;

        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<SnapshotDoc, D::Error> {
            d.deserialize_struct("SnapshotDoc", FIELDS, self)
        }
    }

    impl<'de> Visitor<'de> for DocSeed<'_> {
        type Value = SnapshotDoc;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a tree snapshot document")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SnapshotDoc, A::Error> {
            fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
                slot: &mut Option<T>,
                name: &'static str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                if slot.is_some() {
                    return Err(de::Error::duplicate_field(name));
                }
                *slot = Some(map.next_value()?);
                Ok(())
            }
            let (mut schema, mut root, mut identity, mut taken, mut verified) =
                (None, None, None, None, None);
            let (mut base_commit, mut diff_sha256, mut verdict_sha256, mut scope) =
                (None, None, None, None);
            let mut entries = false;
            let DocSeed { entry, stop } = self;
            while let Some(key) = map.next_key::<Field>()? {
                match key {
                    Field::Schema => once(&mut schema, "schema", &mut map)?,
                    Field::Root => once(&mut root, "root", &mut map)?,
                    Field::Identity => once(&mut identity, "identity", &mut map)?,
                    Field::Taken => once(&mut taken, "taken", &mut map)?,
                    Field::Verified => once(&mut verified, "verified", &mut map)?,
                    Field::BaseCommit => once(&mut base_commit, "base_commit", &mut map)?,
                    Field::DiffSha256 => once(&mut diff_sha256, "diff_sha256", &mut map)?,
                    Field::VerdictSha256 => once(&mut verdict_sha256, "verdict_sha256", &mut map)?,
                    Field::Scope => once(&mut scope, "scope", &mut map)?,
                    Field::Entries => {
                        if entries {
                            return Err(de::Error::duplicate_field("entries"));
                        }
                        entries = true;
                        map.next_value_seed(EntriesSeed {
                            entry: &mut *entry,
                            stop: &mut *stop,
                        })?;
                    }
                }
            }
            if !entries {
                return Err(de::Error::missing_field("entries"));
            }
            Ok(SnapshotDoc {
                schema: schema.ok_or_else(|| de::Error::missing_field("schema"))?,
                root: root.ok_or_else(|| de::Error::missing_field("root"))?,
                identity: identity.ok_or_else(|| de::Error::missing_field("identity"))?,
                taken: taken.ok_or_else(|| de::Error::missing_field("taken"))?,
                verified: verified.ok_or_else(|| de::Error::missing_field("verified"))?,
                base_commit: base_commit.ok_or_else(|| de::Error::missing_field("base_commit"))?,
                diff_sha256: diff_sha256.ok_or_else(|| de::Error::missing_field("diff_sha256"))?,
                verdict_sha256: verdict_sha256
                    .ok_or_else(|| de::Error::missing_field("verdict_sha256"))?,
                scope: scope.ok_or_else(|| de::Error::missing_field("scope"))?,
                entries: Vec::new(),
            })
        }
    }

    struct EntriesSeed<'a> {
        entry: &'a mut dyn FnMut(&EntryDoc) -> Result<(), String>,
        stop: &'a mut Option<TreeDocError>,
    }

    impl<'de> DeserializeSeed<'de> for EntriesSeed<'_> {
        type Value = ();

        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for EntriesSeed<'_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of snapshot entries")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut last: Option<EntryDoc> = None;
            while let Some(next) = seq.next_element::<EntryDoc>()? {
                if last.as_ref().is_some_and(|last| last.path >= next.path) {
                    *self.stop = Some(TreeDocError::Order {
                        path: next.path.display(),
                    });
                    return Err(de::Error::custom(
                        "snapshot entries are not sorted and unique",
                    ));
                }
                if let Err(reason) = (self.entry)(&next) {
                    *self.stop = Some(TreeDocError::Entry {
                        path: next.path.display(),
                        reason,
                    });
                    return Err(de::Error::custom("snapshot entry refused"));
                }
                last = Some(next);
            }
            Ok(())
        }
    }
}

/// A snapshot of the worktree and what it was taken for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotDoc {
    pub schema: SnapshotSchema,
    /// The canonical worktree directory, exact.
    pub root: RepoPath,
    /// Device and inode of the worktree directory and of its `.git`: a worktree swapped for a
    /// copy is not the one the snapshot was taken of.
    pub identity: Identity,
    pub taken: Check,
    /// Whether the check that took it passed; the check after the build only accepts a verified
    /// after-apply snapshot.
    pub verified: bool,
    pub base_commit: CommitId,
    pub diff_sha256: Sha256Hex,
    /// SHA-256 of the verdict file's bytes: the check after the build reads the scope from the
    /// same verdict.
    pub verdict_sha256: Sha256Hex,
    pub scope: Vec<String>,
    /// Sorted by path, no duplicates.
    pub entries: Vec<EntryDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryDoc {
    pub path: RepoPath,
    pub kind: Kind,
    pub mode: Permissions,
    pub size: u64,
    /// SHA-256 of a file's content, when it was hashed.
    pub sha256: Option<Sha256Hex>,
    /// A symbolic link's target, exact.
    pub target: Option<RepoPath>,
}

impl SnapshotDoc {
    /// Parse a snapshot document: entries sorted by path and unique.
    pub fn parse(json: &str) -> Result<SnapshotDoc, TreeDocError> {
        let doc: SnapshotDoc = serde_json::from_str(json)?;
        for pair in doc.entries.windows(2) {
            if pair[0].path >= pair[1].path {
                return Err(TreeDocError::Order {
                    path: pair[1].path.display(),
                });
            }
        }
        Ok(doc)
    }

    /// Pretty JSON with a trailing newline ([`crate::doc_json`]).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }

    /// [`SnapshotDoc::parse`] as a stream: the document is read from `reader` and each entry,
    /// once checked (sorted by path and unique, every field known and given once), is handed to
    /// `entry` and dropped; what is returned is the document without its entries. As strict as
    /// `parse`: unknown or repeated fields, a missing field, entries out of order and anything
    /// after the document are refused. An error `entry` returns stops the read.
    pub fn parse_each<R: std::io::Read>(
        reader: R,
        entry: &mut dyn FnMut(&EntryDoc) -> Result<(), String>,
    ) -> Result<SnapshotDoc, TreeDocError> {
        use serde::de::DeserializeSeed;
        let mut stop = None;
        let mut de = serde_json::Deserializer::from_reader(reader);
        let seed = stream::DocSeed {
            entry,
            stop: &mut stop,
        };
        let parsed = seed
            .deserialize(&mut de)
            .and_then(|doc| de.end().map(|()| doc));
        match (parsed, stop) {
            (_, Some(stop)) => Err(stop),
            (Ok(doc), None) => Ok(doc),
            (Err(e), None) => Err(TreeDocError::Json(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn doc() -> serde_json::Value {
        serde_json::json!({
            "schema": SNAPSHOT_SCHEMA,
            "root": "/w",
            "identity": {"root": {"dev": 1, "ino": 2}, "git": {"dev": 1, "ino": 3}},
            "taken": "after-apply",
            "verified": true,
            "base_commit": "0".repeat(40),
            "diff_sha256": "1".repeat(64),
            "verdict_sha256": "2".repeat(64),
            "scope": ["src/**"],
            "entries": [
                {"path": "a", "kind": "dir", "mode": "0755", "size": 4096,
                 "sha256": null, "target": null},
                {"path": "a.b", "kind": "file", "mode": "0644", "size": 1,
                 "sha256": "3".repeat(64), "target": null},
                {"path": "a/l", "kind": "symlink", "mode": "0777", "size": 4,
                 "sha256": null, "target": {"bytes_hex": "ff"}}
            ]
        })
    }

    fn each(text: &str) -> Result<(SnapshotDoc, Vec<EntryDoc>), TreeDocError> {
        let mut entries = Vec::new();
        let head = SnapshotDoc::parse_each(text.as_bytes(), &mut |e| {
            entries.push(e.clone());
            Ok(())
        })?;
        Ok((head, entries))
    }

    #[test]
    fn the_stream_reads_what_parse_reads() {
        let text = doc().to_string();
        let whole = SnapshotDoc::parse(&text).unwrap();
        let (head, entries) = each(&text).unwrap();
        assert_eq!(entries, whole.entries);
        assert!(head.entries.is_empty());
        assert_eq!(
            SnapshotDoc {
                entries: whole.entries.clone(),
                ..head
            },
            whole
        );
        let pretty = whole.to_json().unwrap();
        assert_eq!(each(&pretty).unwrap().1, whole.entries);
    }

    #[test]
    fn the_stream_is_as_strict_as_parse() {
        let value = doc();
        let good = value.to_string();
        assert!(each(&good).is_ok());
        let mut bad: Vec<String> = Vec::new();
        let mut unknown = value.clone();
        unknown["extra"] = serde_json::json!(1);
        bad.push(unknown.to_string());
        let mut unknown_in_entry = value.clone();
        unknown_in_entry["entries"][1]["extra"] = serde_json::json!(1);
        bad.push(unknown_in_entry.to_string());
        let mut missing = value.clone();
        missing.as_object_mut().unwrap().remove("scope");
        bad.push(missing.to_string());
        let mut no_entries = value.clone();
        no_entries.as_object_mut().unwrap().remove("entries");
        bad.push(no_entries.to_string());
        bad.push(good.replacen("\"scope\":", "\"scope\":[],\"scope\":", 1));
        bad.push(good.replacen("\"entries\":", "\"entries\":[],\"entries\":", 1));
        bad.push(format!("{good} {{}}"));
        bad.push(good[..good.len() - 1].to_string());
        for text in &bad {
            assert!(SnapshotDoc::parse(text).is_err(), "{text}");
            assert!(
                matches!(each(text), Err(TreeDocError::Json(_))),
                "{text}: {:?}",
                each(text).map(|_| ())
            );
        }
        for order in [[1, 0, 2], [0, 0, 2]] {
            let mut swapped = value.clone();
            let entries = value["entries"].as_array().unwrap();
            swapped["entries"] =
                serde_json::Value::Array(order.iter().map(|i| entries[*i].clone()).collect());
            let text = swapped.to_string();
            assert!(matches!(
                SnapshotDoc::parse(&text),
                Err(TreeDocError::Order { .. })
            ));
            assert!(
                matches!(each(&text), Err(TreeDocError::Order { ref path }) if path == "a" || path == "a.b"),
                "{:?}",
                each(&text).map(|_| ())
            );
        }
        let refused = SnapshotDoc::parse_each(good.as_bytes(), &mut |e| {
            if e.path == "a.b" {
                Err("no".into())
            } else {
                Ok(())
            }
        });
        assert!(
            matches!(refused, Err(TreeDocError::Entry { ref path, ref reason }) if path == "a.b" && reason == "no")
        );
    }
}
