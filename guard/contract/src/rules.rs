//! The registry of rules. Every check the guard can fail carries one of these ids; the list is the
//! single source for documentation and for tests that count rules.
//!
//! Complete by construction: the enum, its names, descriptions and [`RuleId::ALL`] are generated
//! from one table, and every lookup is an exhaustive `match` (a variant without metadata does not
//! compile). To add a rule, add one line to the table; the tests then ask for its README anchor
//! and a fixture that fires it.

crate::registry! {
    /// A rule's stable id; serialised as its kebab-case name.
    pub enum RuleId {
        HashMismatch => "hash-mismatch": "The diff bytes do not hash to the expected SHA-256.",
        MalformedDiff => "malformed-diff": "The diff is not in the canonical form `git diff` emits.",
        AmbiguousDiff => "ambiguous-diff": "Headers of one file patch name different files, or git could read the bytes differently.",
        EmptyDiff => "empty-diff": "The diff patches no file.",
        DeniedPath => "denied-path": "A path on either side of a file patch is in the denied trust-control surface: as spelled, as macOS and Windows resolve it (ignorable code points, trailing dots, streams, 8.3 short names, the letters they take for ASCII ones: ſ, ı, K), or as the target of a denied symbolic link of the base.",
        ProtectedPath => "protected-path": "A path on either side of a file patch is in the protected list: listed for a human's review (`protected: review`, the default, which does not reject), rejected (`block`) or ignored (`allow`).",
        NoScope => "no-scope": "No declared scope was given; a scope is required.",
        OutOfScope => "out-of-scope": "A path on either side of a file patch matches no declared scope glob.",
        UnsafePath => "unsafe-path": "A path is empty, absolute, has `.`/`..`/empty components, a backslash, a control or bidi control character, is not UTF-8 or is too long; or a name the diff creates cannot be checked out on Windows (`portable-paths`).",
        GitDir => "git-dir": "A path component is `.git` in some case or disguise (`.git.`, `git~1`, ignorable Unicode), or a path lies in a directory git would take for a repository (HEAD with objects/ and refs/).",
        Symlink => "symlink": "A symbolic link is added, modified or deleted (`symlinks.allow: false`, the default); or, with `symlinks.allow: true`, a link's target is absolute, empty, holds a NUL or newline, is too long, climbs above the root, is the root, enters a gitlink, loops, or is not written whole (a target in `.git`, the denied surface or out of scope fires that path's rule).",
        Gitlink => "gitlink": "A gitlink (submodule) entry is added, modified or deleted.",
        BinaryPatch => "binary-patch": "A binary patch or a `Binary files ... differ` stub.",
        ModeChange => "mode-change": "A file mode changes.",
        ExecutableFile => "executable-file": "A file is created with the executable mode.",
        TypeChange => "type-change": "A path changes type (file, symlink, gitlink).",
        InvalidContent => "invalid-content": "Patch content holds a NUL byte, or is not UTF-8 text (`text.encodings: utf-8`, the default); with `text.encodings: legacy`, a line that is not UTF-8 holds a C0 control other than TAB, CR and FF, or DEL.",
        DuplicatePath => "duplicate-path": "The same path is patched more than once.",
        PathConflict => "path-conflict": "A path is both a file and a directory, or two paths differ only in case or Unicode normalization (within the diff or against the base tree).",
        BeneathSymlink => "beneath-symlink": "A path lies beneath a symlink or gitlink in the base tree or in the diff.",
        LimitExceeded => "limit-exceeded": "The diff exceeds a size limit (bytes, files, line length, path components).",
        GitRefused => "git-refused": "git itself refused to apply the diff to the base.",
        GitDisagrees => "git-disagrees": "git's reading of the diff differs from the guard's (files, statuses or modes).",
        TreeMismatch => "tree-mismatch": "The real worktree after apply differs from the verdict's file list.",
        BuildWrote => "build-wrote": "The build wrote into the denied surface, out of scope, or into `.git/`.",
    }
}

impl RuleId {
    /// What an agent can change so the rule no longer fires, in general (a finding carries a
    /// hint of its own where the guard knows more: the scope entry that would admit its path).
    pub fn remedy(self) -> &'static str {
        match self {
            RuleId::HashMismatch => {
                "Send the diff's bytes unchanged: the expected SHA-256 is computed by the dispatcher over the exact bytes."
            }
            RuleId::MalformedDiff => {
                "Produce the diff with `git diff` against the base and send its bytes unchanged (no re-wrapping, no text around it)."
            }
            RuleId::AmbiguousDiff => {
                "Regenerate the diff with `git diff`: each file patch's headers must name the same file, with no header a reader could take two ways."
            }
            RuleId::EmptyDiff => "Send a diff that changes at least one file.",
            RuleId::DeniedPath => {
                "Leave the path out of the diff: no scope admits the denied trust-control surface; a person changes it in a pull request of their own."
            }
            RuleId::ProtectedPath => {
                "Leave the path out of the diff, or ask a person to change it: the policy blocks changes to protected paths."
            }
            RuleId::NoScope => {
                "Dispatch the task with a scope: the globs of the paths it may change (for example `src/**`)."
            }
            RuleId::OutOfScope => {
                "Change only paths the task's scope admits, or dispatch it with a scope that admits the path."
            }
            RuleId::UnsafePath => {
                "Use a plain relative path: UTF-8, no `.`/`..`/empty components, no backslash or control character, a name Windows can check out."
            }
            RuleId::GitDir => {
                "Leave git's own files alone: no path component may be `.git` or a disguise of it, nor lie in a directory shaped like a repository."
            }
            RuleId::Symlink => {
                "Change the file a symbolic link points to instead, or leave the link out of the diff: links are accepted only under `symlinks.allow: true`, and then only with a relative target that stays inside the scope."
            }
            RuleId::Gitlink => {
                "Leave submodules out of the diff: a gitlink is changed by a person."
            }
            RuleId::BinaryPatch => {
                "Send text only: leave binary files out of the diff (a person adds them)."
            }
            RuleId::ModeChange => {
                "Keep each file's mode: leave out the `old mode`/`new mode` change."
            }
            RuleId::ExecutableFile => {
                "Create the file as not executable (mode 100644); a person sets the executable bit."
            }
            RuleId::TypeChange => {
                "Keep each path's type (file, symbolic link, submodule): change the file's content instead."
            }
            RuleId::InvalidContent => {
                "Send UTF-8 text without NUL bytes (or, under `text.encodings: legacy`, text without NUL and control bytes); leave other files out of the diff."
            }
            RuleId::DuplicatePath => "Patch each path once: merge its hunks into one file patch.",
            RuleId::PathConflict => {
                "Choose names that differ from every other path of the diff and the base in more than case or Unicode normalization, and never make a file and a directory of one name."
            }
            RuleId::BeneathSymlink => {
                "Change the path the link or submodule resolves to instead of a path beneath it, or leave it out."
            }
            RuleId::LimitExceeded => {
                "Split the change into smaller tasks, or shorten the lines or paths named in the message."
            }
            RuleId::GitRefused => {
                "Rebuild the diff against the named base with `git diff`: git could not apply it there (the message says where)."
            }
            RuleId::GitDisagrees => {
                "Regenerate the diff with `git diff` against the base: git read it differently from the guard."
            }
            RuleId::TreeMismatch => {
                "Regenerate the diff with `git diff` against the base: applying it gave another tree than its file list."
            }
            RuleId::BuildWrote => {
                "Make the build write only inside the scope (or its own temporary directories): it wrote where the message says."
            }
        }
    }

    /// The anchor of this rule in README.md's rule reference.
    pub fn anchor(self) -> String {
        format!("README.md#rule-{}", self.name())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn every_rule_name_is_its_serde_id_unique_and_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for &rule in RuleId::ALL {
            let json = serde_json::to_string(&rule).unwrap();
            assert_eq!(json, format!("\"{}\"", rule.name()));
            assert_eq!(serde_json::from_str::<RuleId>(&json).unwrap(), rule);
            assert_eq!(RuleId::from_name(rule.name()), Some(rule));
            assert!(seen.insert(rule.name()), "duplicate {}", rule.name());
            assert!(
                rule.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-')
            );
            assert!(rule.description().ends_with('.'), "{rule}");
            assert!(rule.remedy().ends_with('.'), "{rule}");
            assert_ne!(rule.remedy(), rule.description(), "{rule}");
        }
        assert!(serde_json::from_str::<RuleId>("\"no-such-rule\"").is_err());
    }
}
