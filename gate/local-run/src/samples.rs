//! The bundled samples: the base tree of a small Rust crate and three candidate diffs, embedded so
//! that local-run works from any directory.

/// The declared scope of every sample.
pub const SCOPE: &[&str] = &["src/**", "docs/**", "build.rs"];
/// The caller's `build-command`, which build-test runs under `guard run` as
/// `bash -euo pipefail -c <command>`: the sample crate has no dependencies, and nothing can be
/// fetched inside the sandbox anyway.
pub const BUILD_COMMAND: &str = "cargo test --offline --locked";
/// The repository's default branch, where the pull request is opened.
pub const BASE_BRANCH: &str = "main";
/// The simulated repository (`owner/name`).
pub const REPOSITORY: &str = "local/greeting";
/// Its owner and name, as the simulated GitHub serves them.
pub const OWNER: &str = "local";
pub const NAME: &str = "greeting";
/// The caller workflow the dispatcher dispatches.
pub const WORKFLOW_FILE: &str = "agent-team-apply.yml";
/// The policy the workflow's "Read the policy" step writes when the repository has none (the
/// embedded default).
pub const DEFAULT_POLICY: &str = "version: 1\n";

/// The base tree: `fixtures/sample/base/`, embedded so that the command works from any directory.
/// A test compares this list with the directory.
pub const BASE_FILES: &[(&str, &[u8])] = &[
    (
        ".gitignore",
        include_bytes!("../../../fixtures/sample/base/.gitignore"),
    ),
    (
        "Cargo.lock",
        include_bytes!("../../../fixtures/sample/base/Cargo.lock"),
    ),
    (
        "Cargo.toml",
        include_bytes!("../../../fixtures/sample/base/Cargo.toml"),
    ),
    (
        "README.md",
        include_bytes!("../../../fixtures/sample/base/README.md"),
    ),
    (
        "src/lib.rs",
        include_bytes!("../../../fixtures/sample/base/src/lib.rs"),
    ),
];

/// A bundled candidate diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    /// `fixtures/sample/accept.diff`: changes `src/lib.rs` and adds `docs/usage notes.md`.
    Accept,
    /// `fixtures/sample/hook-attack.diff`: adds a `build.rs` (in scope, so `guard check` accepts
    /// it) that writes `.github/workflows/release.yml` when the build runs.
    HookAttack,
    /// `fixtures/sample/unicode-names.diff`: adds `docs/می‌خواهم.md` (Persian, spelled with a ZERO
    /// WIDTH NON-JOINER) and `docs/👨‍👩‍👧.md` (an emoji sequence joined by ZERO WIDTH JOINERs),
    /// which every document must carry exactly.
    UnicodeNames,
}

impl Sample {
    pub const ALL: &'static [Sample] = &[Sample::Accept, Sample::HookAttack, Sample::UnicodeNames];

    pub fn name(self) -> &'static str {
        match self {
            Sample::Accept => "accept",
            Sample::HookAttack => "hook-attack",
            Sample::UnicodeNames => "unicode-names",
        }
    }

    pub fn from_name(name: &str) -> Option<Sample> {
        Sample::ALL.iter().copied().find(|s| s.name() == name)
    }

    pub fn fixture(self) -> &'static str {
        match self {
            Sample::Accept => "fixtures/sample/accept.diff",
            Sample::HookAttack => "fixtures/sample/hook-attack.diff",
            Sample::UnicodeNames => "fixtures/sample/unicode-names.diff",
        }
    }

    pub fn diff(self) -> &'static [u8] {
        match self {
            Sample::Accept => include_bytes!("../../../fixtures/sample/accept.diff"),
            Sample::HookAttack => include_bytes!("../../../fixtures/sample/hook-attack.diff"),
            Sample::UnicodeNames => include_bytes!("../../../fixtures/sample/unicode-names.diff"),
        }
    }

    /// The dispatcher's task id; the branch is `agent-team/<task id>`.
    pub fn task_id(self) -> String {
        format!("local-{}", self.name())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use std::path::Path;

    fn fixtures() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
    }

    #[test]
    fn embedded_base_is_the_fixture_directory() {
        let dir = fixtures().join("sample/base");
        let mut on_disk = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path
                        .strip_prefix(&dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    on_disk.push((rel, std::fs::read(&path).unwrap()));
                }
            }
        }
        on_disk.sort();
        let embedded: Vec<(String, Vec<u8>)> = BASE_FILES
            .iter()
            .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
            .collect();
        assert_eq!(embedded, on_disk);
    }

    #[test]
    fn samples_are_the_fixture_files() {
        for sample in Sample::ALL {
            let path = fixtures().join("..").join(sample.fixture());
            assert_eq!(std::fs::read(path).unwrap(), sample.diff());
            assert_eq!(Sample::from_name(sample.name()), Some(*sample));
        }
    }
}
