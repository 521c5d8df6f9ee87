//! The mount table as `/proc/self/mountinfo` shows it, and the per-mount flags a bind remount must
//! keep: in a user namespace, flags inherited from a more privileged mount namespace (`nosuid`,
//! `nodev`, `noexec`, the atime flags) are locked, and a remount that omits one fails with `EPERM`.

use std::io;
use std::path::{Path, PathBuf};

use nix::mount::MsFlags;

/// One line of `mountinfo` (proc(5)): the fields the sandbox needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub id: u64,
    pub parent: u64,
    /// Relative to the reading process's root.
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,nosuid,relatime`), not the super block's.
    pub options: Vec<String>,
    pub fs_type: String,
}

impl MountEntry {
    pub fn read_only(&self) -> bool {
        self.options.iter().any(|o| o == "ro")
    }

    /// The per-mount flags to pass again on a bind remount (everything but `ro`/`rw`).
    pub fn kept_flags(&self) -> MsFlags {
        let mut flags = MsFlags::empty();
        for option in &self.options {
            flags |= match option.as_str() {
                "nosuid" => MsFlags::MS_NOSUID,
                "nodev" => MsFlags::MS_NODEV,
                "noexec" => MsFlags::MS_NOEXEC,
                "noatime" => MsFlags::MS_NOATIME,
                "nodiratime" => MsFlags::MS_NODIRATIME,
                "relatime" => MsFlags::MS_RELATIME,
                "strictatime" => MsFlags::MS_STRICTATIME,
                _ => MsFlags::empty(),
            };
        }
        flags
    }
}

/// Parses `mountinfo` text: `id parent major:minor root mount_point options [optional...] - type
/// source super_options`, with `\NNN` octal escapes in paths.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let separator = fields.iter().position(|f| *f == "-")?;
            Some(MountEntry {
                id: fields.first()?.parse().ok()?,
                parent: fields.get(1)?.parse().ok()?,
                mount_point: PathBuf::from(unescape(fields.get(4)?)),
                options: fields.get(5)?.split(',').map(str::to_string).collect(),
                fs_type: fields.get(separator + 1)?.to_string(),
            })
        })
        .collect()
}

/// `mountinfo` of the calling process, read through the proc file system at `proc`.
pub fn read_mountinfo(proc: &Path) -> io::Result<Vec<MountEntry>> {
    Ok(parse_mountinfo(&std::fs::read_to_string(
        proc.join("self/mountinfo"),
    )?))
}

/// Undoes the kernel's `\NNN` octal escapes (space, tab, newline, backslash).
fn unescape(field: &str) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    std::ffi::OsString::from_vec(out)
}

/// Whether `path` is `prefix` or lies beneath it (component-wise).
pub fn within(path: &Path, prefix: &Path) -> bool {
    path.starts_with(prefix)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
28 27 0:25 / /mnt/with\\040space ro,nosuid,nodev,relatime shared:1 - tmpfs tmpfs ro,size=4k
";

    #[test]
    fn parses_mountinfo() {
        let entries = parse_mountinfo(MOUNTINFO);
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].mount_point, Path::new("/proc"));
        assert_eq!(entries[0].fs_type, "proc");
        assert!(!entries[0].read_only());
        assert_eq!(entries[2].mount_point, Path::new("/mnt/with space"));
        assert_eq!((entries[2].id, entries[2].parent), (28, 27));
        assert!(entries[2].read_only());
        assert_eq!(entries[2].fs_type, "tmpfs");
        assert_eq!(
            entries[2].kept_flags(),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_RELATIME
        );
        assert!(within(Path::new("/a/b"), Path::new("/a")));
        assert!(!within(Path::new("/ab"), Path::new("/a")));
    }
}
