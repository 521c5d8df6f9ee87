//! The registry of rules. Every check the guard can fail carries one of these ids; the list is the
//! single source for documentation and for tests that count rules.

use serde::Serialize;

/// A rule: a stable kebab-case id, a one-line description and a docs anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RuleId {
    HashMismatch,
    MalformedDiff,
    AmbiguousDiff,
    EmptyDiff,
    DeniedPath,
    ProtectedPath,
    NoScope,
    OutOfScope,
    UnsafePath,
    GitDir,
    Symlink,
    Gitlink,
    BinaryPatch,
    ModeChange,
    ExecutableFile,
    TypeChange,
    InvalidContent,
    DuplicatePath,
    PathConflict,
    BeneathSymlink,
    LimitExceeded,
    GitRefused,
    GitDisagrees,
    TreeMismatch,
    BuildWrote,
}

/// Static metadata of one rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub id: RuleId,
    pub name: &'static str,
    pub description: &'static str,
}

impl Rule {
    /// The anchor of this rule in README.md's rule reference.
    pub fn anchor(&self) -> String {
        format!("README.md#rule-{}", self.name)
    }
}

/// Every rule, in documentation order.
pub const RULES: &[Rule] = &[
    Rule {
        id: RuleId::HashMismatch,
        name: "hash-mismatch",
        description: "The diff bytes do not hash to the expected SHA-256.",
    },
    Rule {
        id: RuleId::MalformedDiff,
        name: "malformed-diff",
        description: "The diff is not in the canonical form `git diff` emits.",
    },
    Rule {
        id: RuleId::AmbiguousDiff,
        name: "ambiguous-diff",
        description: "Headers of one file patch name different files, or git could read the bytes differently.",
    },
    Rule {
        id: RuleId::EmptyDiff,
        name: "empty-diff",
        description: "The diff patches no file.",
    },
    Rule {
        id: RuleId::DeniedPath,
        name: "denied-path",
        description: "A path on either side of a file patch is in the denied trust-control surface: as spelled, as macOS and Windows resolve it (ignorable code points, trailing dots, streams, 8.3 short names), or as the target of a denied symbolic link of the base.",
    },
    Rule {
        id: RuleId::ProtectedPath,
        name: "protected-path",
        description: "A path on either side of a file patch is in the protected list: listed for a human's review (`protected: review`, the default, which does not reject), rejected (`block`) or ignored (`allow`).",
    },
    Rule {
        id: RuleId::NoScope,
        name: "no-scope",
        description: "No declared scope was given; a scope is required.",
    },
    Rule {
        id: RuleId::OutOfScope,
        name: "out-of-scope",
        description: "A path on either side of a file patch matches no declared scope glob.",
    },
    Rule {
        id: RuleId::UnsafePath,
        name: "unsafe-path",
        description: "A path is empty, absolute, has `.`/`..`/empty components, a backslash, a control character, is not UTF-8 or is too long; or a name the diff creates cannot be checked out on Windows (`portable-paths`).",
    },
    Rule {
        id: RuleId::GitDir,
        name: "git-dir",
        description: "A path component is `.git` in some case or disguise (`.git.`, `git~1`, ignorable Unicode), or a path lies in a directory git would take for a repository (HEAD with objects/ and refs/).",
    },
    Rule {
        id: RuleId::Symlink,
        name: "symlink",
        description: "A symbolic link is added, modified or deleted.",
    },
    Rule {
        id: RuleId::Gitlink,
        name: "gitlink",
        description: "A gitlink (submodule) entry is added, modified or deleted.",
    },
    Rule {
        id: RuleId::BinaryPatch,
        name: "binary-patch",
        description: "A binary patch or a `Binary files ... differ` stub.",
    },
    Rule {
        id: RuleId::ModeChange,
        name: "mode-change",
        description: "A file mode changes.",
    },
    Rule {
        id: RuleId::ExecutableFile,
        name: "executable-file",
        description: "A file is created with the executable mode.",
    },
    Rule {
        id: RuleId::TypeChange,
        name: "type-change",
        description: "A path changes type (file, symlink, gitlink).",
    },
    Rule {
        id: RuleId::InvalidContent,
        name: "invalid-content",
        description: "Patch content is not UTF-8 text or contains a NUL byte.",
    },
    Rule {
        id: RuleId::DuplicatePath,
        name: "duplicate-path",
        description: "The same path is patched more than once.",
    },
    Rule {
        id: RuleId::PathConflict,
        name: "path-conflict",
        description: "A path is both a file and a directory, or two paths differ only in case or Unicode normalization (within the diff or against the base tree).",
    },
    Rule {
        id: RuleId::BeneathSymlink,
        name: "beneath-symlink",
        description: "A path lies beneath a symlink or gitlink in the base tree or in the diff.",
    },
    Rule {
        id: RuleId::LimitExceeded,
        name: "limit-exceeded",
        description: "The diff exceeds a size limit (bytes, files, line length, path components).",
    },
    Rule {
        id: RuleId::GitRefused,
        name: "git-refused",
        description: "git itself refused to apply the diff to the base.",
    },
    Rule {
        id: RuleId::GitDisagrees,
        name: "git-disagrees",
        description: "git's reading of the diff differs from the guard's (files, statuses or modes).",
    },
    Rule {
        id: RuleId::TreeMismatch,
        name: "tree-mismatch",
        description: "The real worktree after apply differs from the verdict's file list.",
    },
    Rule {
        id: RuleId::BuildWrote,
        name: "build-wrote",
        description: "The build wrote into the denied surface, out of scope, or into `.git/`.",
    },
];

impl RuleId {
    /// The rule's metadata.
    pub fn rule(self) -> &'static Rule {
        // RULES holds every variant; the fallback is unreachable but keeps this total.
        RULES.iter().find(|r| r.id == self).unwrap_or(&RULES[0])
    }

    /// The stable kebab-case id.
    pub fn name(self) -> &'static str {
        self.rule().name
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_name_matches_its_serde_id_and_is_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for rule in RULES {
            let json = serde_json::to_string(&rule.id).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", rule.name));
            assert!(seen.insert(rule.name), "duplicate {}", rule.name);
            assert!(
                rule.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-')
            );
            assert_eq!(rule.id.rule().name, rule.name);
        }
        assert_eq!(seen.len(), 25);
    }
}
