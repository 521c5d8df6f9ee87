//! `gate release`: the release workflow's last step ([`gate::release`]). Reads the assets and
//! `SHA256SUMS` from `--dist`, the files `.ci/pin-release.sh` rewrote from `--work-tree`, and
//! publishes the pin commit, its tag and the release (token from `GH_TOKEN`: an App's, with
//! contents and workflows write, since the pin commit changes a workflow file).

use std::path::{Path, PathBuf};

use clap::Args;
use contract::cli::{Exit, write_atomic};
use contract::ids::CommitId;
use gate::publish::branch_name_problem;
use gate::release::{PinRelease, SUMS_NAME, TARGETS, asset_name};
use guard::escape::neutralize;

#[derive(Args)]
pub struct ReleaseArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The version, vX.Y.Z (the tag to create).
    #[arg(long, value_name = "vX.Y.Z")]
    version: String,
    /// The commit the assets were built from (the pin commit's parent).
    #[arg(long, value_name = "SHA")]
    built: String,
    /// The repository's default branch, which must contain the built commit.
    #[arg(long, value_name = "NAME")]
    default_branch: String,
    /// The server the release is downloaded from (`https://github.com`, an Enterprise Server).
    #[arg(long, value_name = "URL")]
    server_url: String,
    /// The directory holding the two assets and SHA256SUMS.
    #[arg(long, value_name = "DIR")]
    dist: PathBuf,
    /// The checkout of the built commit that `.ci/pin-release.sh` rewrote.
    #[arg(long, value_name = "DIR")]
    work_tree: PathBuf,
    /// A file of the work tree the pin commit carries (repeat; relative to --work-tree).
    #[arg(long = "file", value_name = "PATH", required = true)]
    files: Vec<String>,
    /// Where to write the result as JSON (tag, pin commit, release, the `uses:` line).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

const MAX_ASSET_BYTES: u64 = 64 << 20;

/// A regular file (not a symbolic link) of at most [`MAX_ASSET_BYTES`].
fn read_regular(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let source = path
        .to_str()
        .ok_or_else(|| format!("{} is not a UTF-8 path", path.display()))?;
    contract::cli::read_bounded(source, MAX_ASSET_BYTES, "file")
}

pub fn run(args: ReleaseArgs) -> u8 {
    match run_inner(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("gate release: error: {}", neutralize(&message));
            Exit::Error.code()
        }
    }
}

fn run_inner(args: &ReleaseArgs) -> Result<u8, String> {
    let repository = super::repo_steps::repository(&args.repository)?;
    let built = CommitId::parse(&args.built).map_err(|e| format!("--built: {e}"))?;
    if let Some(problem) = branch_name_problem(&args.default_branch) {
        return Err(format!(
            "--default-branch {:?}: {problem}",
            args.default_branch
        ));
    }
    let server = args.server_url.trim_end_matches('/');
    if !server.starts_with("https://") || server[8..].contains(['/', '?', '#', '@']) {
        return Err(format!("--server-url {server:?} is not https://HOST"));
    }
    if let Some(problem) = gate::release::version_problem(&args.version) {
        return Err(format!("--version {:?} {problem}", args.version));
    }
    let mut assets = Vec::new();
    for (target, _) in TARGETS {
        let name = asset_name(&args.version, target);
        assets.push((name.clone(), read_regular(&args.dist.join(&name))?));
    }
    let sums = read_regular(&args.dist.join(SUMS_NAME))?;
    let mut files = Vec::new();
    for path in &args.files {
        if path.starts_with('/')
            || path
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return Err(format!(
                "--file {:?} is not a relative path",
                neutralize(path)
            ));
        }
        files.push((path.clone(), read_regular(&args.work_tree.join(path))?));
    }
    let release = PinRelease {
        release_url: format!(
            "{server}/{}/releases/download/{}",
            repository.full_name(),
            args.version
        ),
        repository,
        version: args.version.clone(),
        built,
        default_branch: args.default_branch.clone(),
        files,
        sums,
        assets,
    };
    release.check()?;
    let client = super::repo_steps::client()?;
    let released = release.publish(&client)?;
    let json = serde_json::to_string_pretty(&released).map_err(|e| e.to_string())?;
    if let Some(out) = &args.out {
        write_atomic(out, format!("{json}\n").as_bytes())?;
    }
    println!(
        "released {}: tag {} names the pin commit {} (parent {}); release {}\nuses: {}",
        released.tag,
        released.tag,
        released.pin_commit,
        released.built_commit,
        neutralize(&released.html_url),
        released.uses
    );
    Ok(Exit::Pass.code())
}
