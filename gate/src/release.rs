//! A release an adopter can pin: the **pin commit** and its tag.
//!
//! The release workflow builds the assets from one commit (the *built* commit, on the default
//! branch). This module then writes, through GitHub's Git database API, one commit whose parent
//! is the built commit and whose only changes are the files `.ci/pin-release.sh` rewrote (the
//! reusable workflow's release URL, asset names and SHA-256s, and the version the example
//! callers name); it tags that commit `vX.Y.Z`, and publishes the release on that tag with the
//! assets and `SHA256SUMS`. The tag, the release notes and a tag-following updater
//! (Dependabot) therefore all name the commit whose reusable workflow pins these very assets.
//!
//! Everything is checked before the first write ([`PinRelease::check`]): the version's shape,
//! that `SHA256SUMS` lists exactly the two assets and that their bytes hash to it, that the
//! files are only those the pin may change, and that the reusable workflow among them pins
//! exactly these hashes and this release. Then, through the API: the tag and the release must
//! not exist yet, the built commit must be on the default branch, and the created commit is read
//! back from its reply (parent and tree) before the tag is made. The commit carries no author,
//! committer or signature, so GitHub signs it as the token's App.

use contract::ids::CommitId;
use github::git::TreeEntry;
use github::{Client, Repository};
use guard::escape::neutralize;

/// The reusable workflow whose pins the release writes.
pub const REUSABLE_WORKFLOW: &str = ".github/workflows/agent-team-apply-verify.yml";
/// The asset targets, in `SHA256SUMS` order, with the workflow's env names for each.
pub const TARGETS: [(&str, &str); 2] = [
    ("x86_64-unknown-linux-musl", "X64"),
    ("aarch64-unknown-linux-musl", "ARM64"),
];
pub const SUMS_NAME: &str = "SHA256SUMS";

/// What one release publishes.
#[derive(Debug, Clone)]
pub struct PinRelease {
    pub repository: Repository,
    /// `vX.Y.Z`.
    pub version: String,
    /// The commit the assets were built from: the pin commit's parent.
    pub built: CommitId,
    pub default_branch: String,
    /// The release's download URL the reusable workflow must name
    /// (`SERVER/OWNER/REPO/releases/download/vX.Y.Z`).
    pub release_url: String,
    /// The pin commit's changes: repository-relative path and new bytes.
    pub files: Vec<(String, Vec<u8>)>,
    /// `SHA256SUMS` as built.
    pub sums: Vec<u8>,
    /// The assets by name.
    pub assets: Vec<(String, Vec<u8>)>,
}

/// What was published.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Released {
    pub tag: String,
    pub pin_commit: String,
    pub built_commit: String,
    pub release_id: u64,
    pub html_url: String,
    /// The line an adopter's caller uses.
    pub uses: String,
}

/// `vX.Y.Z`, numbers without leading zeros.
pub fn version_problem(version: &str) -> Option<&'static str> {
    let Some(rest) = version.strip_prefix('v') else {
        return Some("must start with v");
    };
    let parts: Vec<&str> = rest.split('.').collect();
    let number = |p: &&str| {
        !p.is_empty()
            && p.len() <= 9
            && p.bytes().all(|b| b.is_ascii_digit())
            && (p.len() == 1 || !p.starts_with('0'))
    };
    if parts.len() != 3 || !parts.iter().all(number) {
        return Some("must be vX.Y.Z (numbers without leading zeros)");
    }
    None
}

/// The asset name of `target` in release `version`.
pub fn asset_name(version: &str, target: &str) -> String {
    format!("agent-team-apply-{version}-{target}.tar.gz")
}

/// A path the pin commit may change: the reusable workflow, or an example caller.
fn pinnable(path: &str) -> bool {
    if path == REUSABLE_WORKFLOW {
        return true;
    }
    path.strip_prefix("examples/").is_some_and(|name| {
        name.strip_suffix(".yml").is_some_and(|stem| {
            !stem.is_empty()
                && stem
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        })
    })
}

/// The value of `  NAME: value` at the top level of the workflow's `env:` (two spaces).
pub fn env_line<'a>(workflow: &'a str, name: &str) -> Option<&'a str> {
    let prefix = format!("  {name}: ");
    let mut found = workflow.lines().filter_map(|l| l.strip_prefix(&prefix));
    let value = found.next()?;
    found.next().is_none().then_some(value)
}

impl PinRelease {
    /// Every check that needs no API: see the module documentation.
    pub fn check(&self) -> Result<(), String> {
        if let Some(problem) = version_problem(&self.version) {
            return Err(format!("--version {:?} {problem}", self.version));
        }
        let sums =
            std::str::from_utf8(&self.sums).map_err(|_| format!("{SUMS_NAME} is not UTF-8"))?;
        let mut listed = Vec::new();
        for line in sums.lines() {
            let (hash, name) = line.split_once("  ").ok_or_else(|| {
                format!(
                    "{SUMS_NAME}: line {:?} is not `SHA256  NAME`",
                    neutralize(line)
                )
            })?;
            if contract::ids::Sha256Hex::parse(hash).is_err() {
                return Err(format!(
                    "{SUMS_NAME}: {:?} is not a SHA-256",
                    neutralize(hash)
                ));
            }
            listed.push((name.to_owned(), hash.to_owned()));
        }
        let expected: Vec<String> = TARGETS
            .iter()
            .map(|(t, _)| asset_name(&self.version, t))
            .collect();
        let mut names: Vec<&String> = listed.iter().map(|(n, _)| n).collect();
        names.sort();
        let mut want: Vec<&String> = expected.iter().collect();
        want.sort();
        if names != want {
            return Err(format!(
                "{SUMS_NAME} must list exactly {} (it lists {})",
                expected.join(" and "),
                listed
                    .iter()
                    .map(|(n, _)| neutralize(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let mut asset_names: Vec<&String> = self.assets.iter().map(|(n, _)| n).collect();
        asset_names.sort();
        if asset_names != want {
            return Err(format!(
                "the assets must be exactly {}",
                expected.join(" and ")
            ));
        }
        for (name, bytes) in &self.assets {
            let hash = guard::hash::sha256_hex(bytes);
            if !listed.iter().any(|(n, h)| n == name && *h == hash) {
                return Err(format!(
                    "{name} does not hash to its line in {SUMS_NAME} (it hashes to {hash})"
                ));
            }
        }
        let mut paths = std::collections::BTreeSet::new();
        for (path, _) in &self.files {
            if !pinnable(path) {
                return Err(format!(
                    "{:?} is not a file the pin commit may change (only {REUSABLE_WORKFLOW} and examples/*.yml)",
                    neutralize(path)
                ));
            }
            if !paths.insert(path.as_str()) {
                return Err(format!("{:?} is given twice", neutralize(path)));
            }
        }
        let workflow = self
            .files
            .iter()
            .find(|(p, _)| p == REUSABLE_WORKFLOW)
            .ok_or_else(|| format!("the pin commit must change {REUSABLE_WORKFLOW}"))?;
        let workflow = std::str::from_utf8(&workflow.1)
            .map_err(|_| format!("{REUSABLE_WORKFLOW} is not UTF-8"))?;
        let want_line = |name: &str, value: &str| -> Result<(), String> {
            match env_line(workflow, name) {
                Some(found) if found == value => Ok(()),
                Some(found) => Err(format!(
                    "{REUSABLE_WORKFLOW} pins {name}: {} where this release needs {value}",
                    neutralize(found)
                )),
                None => Err(format!(
                    "{REUSABLE_WORKFLOW} has no single top-level env line {name}"
                )),
            }
        };
        want_line("AGENT_TEAM_RELEASE_URL", &self.release_url)?;
        for (target, key) in TARGETS {
            let name = asset_name(&self.version, target);
            let hash = listed
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, h)| h.as_str())
                .unwrap_or_default();
            want_line(&format!("AGENT_TEAM_ASSET_{key}"), &name)?;
            want_line(&format!("AGENT_TEAM_SHA256_{key}"), &format!("\"{hash}\""))?;
        }
        if !self.release_url.ends_with(&format!(
            "/{}/releases/download/{}",
            self.repository.full_name(),
            self.version
        )) {
            return Err(format!(
                "the release URL {} is not this repository's release {}",
                neutralize(&self.release_url),
                self.version
            ));
        }
        Ok(())
    }

    fn notes(&self, pin: &str) -> String {
        let sums = String::from_utf8_lossy(&self.sums);
        format!(
            "Static binaries of guard, gate and report for x86_64 and aarch64 Linux (musl).\n\n\
             Tag `{v}` names the pin commit `{pin}`. Its parent, `{built}`, is the commit these \
             assets were built from; the pin commit writes their SHA-256 into \
             `{REUSABLE_WORKFLOW}` (and the version into the example callers) and changes \
             nothing else.\n\n\
             Adopt it in a caller workflow:\n\n\
             ```yaml\n    uses: {repo}/{REUSABLE_WORKFLOW}@{pin} # {v}\n```\n\n\
             Verify the assets: `sha256sum --check SHA256SUMS` and \
             `gh attestation verify <asset> --repo {repo}`.\n\n\
             ```\n{sums}```\n",
            v = self.version,
            built = self.built.as_str(),
            repo = self.repository.full_name(),
        )
    }

    /// Publish: pin commit, tag, release. Stops at the first failure, naming what exists.
    pub fn publish(&self, client: &Client) -> Result<Released, String> {
        self.check()?;
        let repo = &self.repository;
        let api =
            |what: &str, e: github::Error| format!("{what}: {}", client.redact(&e.to_string()));
        let tag_ref = format!("tags/{}", self.version);
        if let Some(existing) = client
            .get_ref(repo, &tag_ref)
            .map_err(|e| api("read the tag", e))?
        {
            return Err(format!(
                "tag {} exists already (at {}): a version is released once; delete the tag and its release to redo it",
                self.version,
                neutralize(&existing.object.sha)
            ));
        }
        if client
            .release_by_tag(repo, &self.version)
            .map_err(|e| api("read the release", e))?
            .is_some()
        {
            return Err(format!("a release of {} exists already", self.version));
        }
        let comparison = client
            .compare(repo, self.built.as_str(), &self.default_branch)
            .map_err(|e| api("compare the built commit with the default branch", e))?;
        if !matches!(comparison.status.as_str(), "ahead" | "identical") {
            return Err(format!(
                "the built commit {} is not on the default branch {} (compare status: {})",
                self.built.as_str(),
                neutralize(&self.default_branch),
                neutralize(&comparison.status)
            ));
        }
        let built = client
            .get_commit(repo, self.built.as_str())
            .map_err(|e| api("read the built commit", e))?;
        let mut entries = Vec::new();
        for (path, bytes) in &self.files {
            let blob = client
                .create_blob(repo, bytes)
                .map_err(|e| api("create a blob", e))?;
            entries.push(TreeEntry {
                path: path.clone(),
                mode: "100644".to_owned(),
                kind: "blob".to_owned(),
                sha: Some(blob.sha),
            });
        }
        let tree = client
            .create_tree(repo, Some(&built.tree.sha), &entries)
            .map_err(|e| api("create the pin commit's tree", e))?;
        let message = format!(
            "Release {}: pin its assets' SHA-256 in the reusable workflow\n\nBuilt from {}.\n",
            self.version,
            self.built.as_str()
        );
        let parents = vec![self.built.as_str().to_owned()];
        let pin = client
            .create_commit(repo, &message, &tree.sha, &parents)
            .map_err(|e| api("create the pin commit", e))?;
        let read_parents: Vec<&str> = pin.parents.iter().map(|p| p.sha.as_str()).collect();
        if read_parents != [self.built.as_str()] || pin.tree.sha != tree.sha {
            return Err(format!(
                "the created commit {} does not have the built commit as its only parent and the pin tree {}",
                neutralize(&pin.sha),
                tree.sha
            ));
        }
        let pin_sha = CommitId::parse(&pin.sha).map_err(|e| format!("the pin commit's id: {e}"))?;
        client
            .create_ref(repo, &format!("refs/{tag_ref}"), pin_sha.as_str())
            .map_err(|e| api("create the tag", e))?;
        let release = client
            .create_draft_release(repo, &self.version, &self.notes(pin_sha.as_str()))
            .map_err(|e| api("create the draft release", e))?;
        let mut uploads: Vec<(&str, &[u8])> = self
            .assets
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        uploads.push((SUMS_NAME, &self.sums));
        for (name, bytes) in uploads {
            let asset = client
                .upload_release_asset(&release, name, bytes)
                .map_err(|e| api(&format!("upload {name}"), e))?;
            if asset.name != name || asset.size != bytes.len() as u64 {
                return Err(format!(
                    "the upload of {name} came back as {} of {} bytes",
                    neutralize(&asset.name),
                    asset.size
                ));
            }
        }
        let published = client
            .publish_release(repo, release.id)
            .map_err(|e| api("publish the release", e))?;
        if published.draft || published.tag_name != self.version {
            return Err(format!(
                "release {} is still a draft or not on {}",
                release.id, self.version
            ));
        }
        Ok(Released {
            tag: self.version.clone(),
            pin_commit: pin_sha.as_str().to_owned(),
            built_commit: self.built.as_str().to_owned(),
            release_id: published.id,
            html_url: published.html_url,
            uses: format!(
                "{}/{REUSABLE_WORKFLOW}@{} # {}",
                self.repository.full_name(),
                pin_sha.as_str(),
                self.version
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for good in ["v0.1.0", "v1.20.3", "v10.0.0"] {
            assert_eq!(version_problem(good), None, "{good}");
        }
        for bad in [
            "0.1.0",
            "v0.1",
            "v0.1.0.1",
            "v01.0.0",
            "v0.1.0-rc1",
            "v",
            "v..",
            "v1.2.x",
        ] {
            assert!(version_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn only_the_pinned_files() {
        assert!(pinnable(REUSABLE_WORKFLOW));
        assert!(pinnable("examples/rust.yml"));
        for bad in [
            ".github/workflows/release.yml",
            "examples/../.github/workflows/x.yml",
            "examples/a/b.yml",
            "examples/.yml",
            "README.md",
            "guard/src/main.rs",
        ] {
            assert!(!pinnable(bad), "{bad}");
        }
    }
}
