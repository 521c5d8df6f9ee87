//! The build's writable layer: the worktree the build sees is an overlay whose lower layer is the
//! checkout (never written) and whose upper layer is a bounded tmpfs that only the guard reads and
//! that is discarded once the check after the build is done.
//!
//! Why: whatever the build writes into the checkout is read by every later step of the job, and
//! `actions/checkout`'s post step runs `git submodule foreach --recursive` there, outside the
//! sandbox, with the job's token (issue 27). With the overlay, the checkout is byte-identical after
//! the build: no nested repository, `.git/config`, hook or `core.fsmonitor` the build planted ever
//! reaches a trusted process, whatever the check finds or misses.
//!
//! Only the trusted outer process, started as root, makes the layer: a tmpfs (`size=`,
//! `nr_inodes=`: the write budget, [`WriteBudget`]) mounted on a fresh root-owned `0700`
//! directory of its own temporary directory, holding `upper/` and `work/` for the build's overlay
//! (mounted by the setup stage at the worktree's path in the view) and `merged/`, where the check
//! after the build mounts the same layers again, read-only (`lowerdir=upper:checkout`), to walk
//! exactly the tree the build left. Every later step of the job runs as the runner user, which
//! cannot search the directory; the guard detaches both mounts and removes the directory before
//! it exits. Its pages are memory, charged to the build's control group (the writer's).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::mount::{MntFlags, MsFlags};

/// Bounds on what the build may write into its worktree: the size and the inode count of the
/// upper layer's tmpfs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteBudget {
    pub bytes: u64,
    pub inodes: u64,
}

impl WriteBudget {
    /// 4 GiB and 500,000 files, directories and links: a large Rust `target/` fits; the
    /// after-build walk (at most 1,000,000 entries) can always read the checkout and all of it.
    pub const DEFAULT: WriteBudget = WriteBudget {
        bytes: 4 << 30,
        inodes: 500_000,
    };
}

impl Default for WriteBudget {
    fn default() -> Self {
        WriteBudget::DEFAULT
    }
}

/// Overlay mount options shared by the build's mount and the check's: no redirects (a renamed
/// directory is copied, and nothing in a layer points elsewhere), no index, no metadata-only
/// copies (every file the build touched is whole in the upper layer).
pub const OVERLAY_OPTIONS: &str = "redirect_dir=nofollow,index=off,metacopy=off";

/// What overlayfs's option parser cannot take in a layer's path (it splits on `,` and `:` and
/// unescapes `\`): such a worktree is refused rather than escaped.
fn plain_for_overlay(path: &Path) -> bool {
    !path
        .as_os_str()
        .as_bytes()
        .iter()
        .any(|b| matches!(b, b',' | b':' | b'\\') || b.is_ascii_control())
}

/// The layer of one run. Dropping it detaches its mounts and removes its directory.
#[derive(Debug)]
pub struct WriteLayer {
    /// The fresh directory the tmpfs is mounted on.
    dir: PathBuf,
    /// The checkout (lower layer), canonical, and its device and inode when the layer was made.
    lower: PathBuf,
    lower_identity: [u64; 2],
    budget: WriteBudget,
    tmpfs_mounted: bool,
    merged_mounted: bool,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LayerError {
    #[error("the build's write layer: {context}: {source}")]
    Io { context: String, source: io::Error },
    #[error("the build's write layer: {0}")]
    Refused(String),
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> LayerError {
    let context = context.into();
    move |source| LayerError::Io { context, source }
}

fn nix_err(context: impl Into<String>) -> impl FnOnce(nix::Error) -> LayerError {
    let context = context.into();
    move |e| LayerError::Io {
        context,
        source: io::Error::from(e),
    }
}

/// How full the upper layer is after the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerUsage {
    pub bytes: u64,
    pub inodes: u64,
    /// Whether either bound was reached (no block or no inode left).
    pub exhausted: bool,
}

impl WriteLayer {
    /// Makes the layer for the checkout `lower` (canonical) in a fresh directory of `parent`
    /// (the guard's own temporary directory). Needs root.
    pub fn create(
        parent: &Path,
        lower: &Path,
        budget: WriteBudget,
    ) -> Result<WriteLayer, LayerError> {
        if !plain_for_overlay(lower) {
            return Err(LayerError::Refused(format!(
                "the worktree path {} holds a ',', ':', '\\' or a control character, which an \
                 overlay's lower layer cannot name",
                crate::escape::neutralize(&lower.to_string_lossy())
            )));
        }
        if budget.bytes == 0 || budget.inodes == 0 {
            return Err(LayerError::Refused("a write budget of 0".into()));
        }
        let meta = std::fs::symlink_metadata(lower).map_err(io_err(lower.display().to_string()))?;
        if !meta.is_dir() {
            return Err(LayerError::Refused(format!(
                "{} is not a directory",
                lower.display()
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix("guard-run-layer-")
            .tempdir_in(parent)
            .map_err(io_err(format!("a directory in {}", parent.display())))?
            .keep();
        let mut layer = WriteLayer {
            dir,
            lower: lower.to_path_buf(),
            lower_identity: [meta.dev(), meta.ino()],
            budget,
            tmpfs_mounted: false,
            merged_mounted: false,
        };
        if !plain_for_overlay(&layer.dir) {
            return Err(LayerError::Refused(format!(
                "the temporary directory {} cannot be named in overlay options",
                layer.dir.display()
            )));
        }
        std::fs::set_permissions(&layer.dir, PermissionsExt::from_mode(0o700))
            .map_err(io_err("chmod 0700"))?;
        let options = format!(
            "mode=0700,size={},nr_inodes={}",
            budget.bytes, budget.inodes
        );
        nix::mount::mount(
            Some("tmpfs"),
            &layer.dir,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(options.as_str()),
        )
        .map_err(nix_err(format!("mount a tmpfs on {}", layer.dir.display())))?;
        layer.tmpfs_mounted = true;
        for (name, mode) in [("upper", 0o755), ("work", 0o700), ("merged", 0o700)] {
            let path = layer.dir.join(name);
            std::fs::create_dir(&path).map_err(io_err(format!("mkdir {name}")))?;
            std::fs::set_permissions(&path, PermissionsExt::from_mode(mode))
                .map_err(io_err(format!("chmod {name}")))?;
        }
        layer.match_root()?;
        Ok(layer)
    }

    /// Gives the upper layer's root the owner, group and mode of the checkout's (the merged root
    /// shows the upper's): called again after the checkout was lent to the build user.
    pub fn match_root(&self) -> Result<(), LayerError> {
        let meta = std::fs::symlink_metadata(&self.lower)
            .map_err(io_err(self.lower.display().to_string()))?;
        let upper = self.upper();
        std::os::unix::fs::lchown(&upper, Some(meta.uid()), Some(meta.gid()))
            .map_err(io_err("chown upper"))?;
        std::fs::set_permissions(&upper, PermissionsExt::from_mode(meta.mode() & 0o7777))
            .map_err(io_err("chmod upper"))?;
        Ok(())
    }

    /// The fresh directory (the tmpfs's mount point); `upper` and `work` are inside it.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn upper(&self) -> PathBuf {
        self.dir.join("upper")
    }

    pub fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    pub fn lower(&self) -> &Path {
        &self.lower
    }

    /// The checkout's device and inode when the layer was made.
    pub fn lower_identity(&self) -> [u64; 2] {
        self.lower_identity
    }

    pub fn budget(&self) -> WriteBudget {
        self.budget
    }

    /// What the build wrote fills the layer this much.
    pub fn usage(&self) -> Result<LayerUsage, LayerError> {
        let stat = nix::sys::statvfs::statvfs(&self.dir).map_err(nix_err("statvfs"))?;
        let block = stat.fragment_size().max(1);
        let total = stat.blocks().saturating_mul(block);
        let free = stat.blocks_free().saturating_mul(block);
        let inodes_total = stat.files();
        let inodes_free = stat.files_free();
        Ok(LayerUsage {
            bytes: total.saturating_sub(free),
            inodes: inodes_total.saturating_sub(inodes_free),
            // A few pages short of the bound counts as reached: a file that did not fit was cut
            // or refused (ENOSPC) however little was left.
            exhausted: free < 16 * block || inodes_free == 0,
        })
    }

    /// Mounts the tree the build left, read-only (the upper layer over the checkout), and
    /// returns where. The build's own overlay went with its mount namespace.
    pub fn merged(&mut self) -> Result<PathBuf, LayerError> {
        let merged = self.dir.join("merged");
        if self.merged_mounted {
            return Ok(merged);
        }
        let options = format!(
            "lowerdir={}:{},{OVERLAY_OPTIONS}",
            self.upper().display(),
            self.lower.display()
        );
        let data = CString::new(options.as_bytes())
            .map_err(|_| LayerError::Refused("overlay options hold a NUL byte".into()))?;
        nix::mount::mount(
            Some("overlay"),
            &merged,
            Some("overlay"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some(data.as_c_str()),
        )
        .map_err(nix_err(format!(
            "mount the build's tree read-only ({options})"
        )))?;
        self.merged_mounted = true;
        Ok(merged)
    }

    /// Detaches both mounts and removes the directory; what the build wrote is gone.
    pub fn discard(mut self) -> Result<(), LayerError> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), LayerError> {
        if self.merged_mounted {
            nix::mount::umount2(&self.dir.join("merged"), MntFlags::MNT_DETACH)
                .map_err(nix_err("detach the merged view"))?;
            self.merged_mounted = false;
        }
        if self.tmpfs_mounted {
            nix::mount::umount2(&self.dir, MntFlags::MNT_DETACH)
                .map_err(nix_err("detach the write layer"))?;
            self.tmpfs_mounted = false;
        }
        match std::fs::remove_dir(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(LayerError::Io {
                context: format!("remove {}", self.dir.display()),
                source: e,
            }),
        }
    }
}

impl Drop for WriteLayer {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn paths_overlay_cannot_name_are_refused() {
        assert!(plain_for_overlay(Path::new("/home/runner/work/r/r/work")));
        for bad in ["/a,b", "/a:b", "/a\\b", "/a\nb"] {
            assert!(!plain_for_overlay(Path::new(bad)), "{bad}");
        }
    }
}
