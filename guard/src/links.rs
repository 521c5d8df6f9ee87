//! Where a symbolic link of a repository tree points, resolved as git and the file system that
//! checks the tree out resolve it: the link's directory joined with its target, `.` and empty
//! components dropped, `..` taking back the last component of what is resolved so far (so a `..`
//! after a link is taken in the directory the link resolved to, as the kernel takes it), and every
//! prefix that is itself a link of the tree replaced by that link's target. Nothing is read from a
//! file system: the tree is whatever [`resolve`]'s `entry` callback says it is.

/// The most links followed in one resolution, as Linux does (`ELOOP` past 40): a loop reaches it.
pub const MAX_HOPS: usize = 40;

/// What a path is in the tree a link is resolved in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeEntry<'t> {
    /// A symbolic link with this target.
    Link(&'t [u8]),
    /// A symbolic link whose target is not known (a diff that does not write it whole).
    UnknownLink,
    /// A gitlink (submodule): what lies beneath is another repository.
    Gitlink,
    /// A file, a directory, or nothing.
    Other,
}

/// Why a link does not resolve to a path inside the repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unresolved {
    /// The target, or the target of a link it passes through (`via`), is absolute.
    #[error("the target `{}` is absolute", crate::escape::display_bytes(.target))]
    Absolute { target: Vec<u8> },
    /// A `..` climbs above the repository root.
    #[error("a `..` climbs above the repository root")]
    AboveRoot,
    /// The resolution enters a gitlink.
    #[error("it passes through the gitlink `{}`", crate::escape::display_bytes(.path))]
    Gitlink { path: Vec<u8> },
    /// More than [`MAX_HOPS`] links: a loop, or a chain too long to follow.
    #[error("it passes through more than {MAX_HOPS} links (a loop, or a chain too long to follow)")]
    TooManyHops,
    /// It passes through a link whose target is not known.
    #[error(
        "it passes through the symbolic link `{}`, whose target the diff does not write whole",
        crate::escape::display_bytes(.path)
    )]
    UnknownTarget { path: Vec<u8> },
}

/// A link resolved inside the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The repository path the link resolves to (empty: the repository root).
    pub path: Vec<u8>,
    /// Every target followed, the link's own first: each of its components was a name looked up.
    pub targets: Vec<Vec<u8>>,
}

/// Resolve the link at `link` (a repository path) with target `target`, looking each prefix up
/// with `entry`.
pub fn resolve<'t>(
    link: &[u8],
    target: &'t [u8],
    entry: impl Fn(&[u8]) -> TreeEntry<'t>,
) -> Result<Resolved, Unresolved> {
    let mut resolved: Vec<Vec<u8>> = link.split(|&b| b == b'/').map(<[u8]>::to_vec).collect();
    resolved.pop();
    let mut targets = vec![target.to_vec()];
    let mut pending: std::collections::VecDeque<&[u8]> = std::collections::VecDeque::new();
    if target.starts_with(b"/") {
        return Err(Unresolved::Absolute {
            target: target.to_vec(),
        });
    }
    pending.extend(target.split(|&b| b == b'/'));
    while let Some(component) = pending.pop_front() {
        match component {
            b"" | b"." => {}
            b".." => {
                resolved.pop().ok_or(Unresolved::AboveRoot)?;
            }
            name => {
                resolved.push(name.to_vec());
                let here = resolved.join(&b'/');
                match entry(&here) {
                    TreeEntry::Other => {}
                    TreeEntry::Gitlink => return Err(Unresolved::Gitlink { path: here }),
                    TreeEntry::UnknownLink => return Err(Unresolved::UnknownTarget { path: here }),
                    TreeEntry::Link(next) => {
                        if targets.len() > MAX_HOPS {
                            return Err(Unresolved::TooManyHops);
                        }
                        if next.starts_with(b"/") {
                            return Err(Unresolved::Absolute {
                                target: next.to_vec(),
                            });
                        }
                        targets.push(next.to_vec());
                        resolved.pop();
                        for c in next.split(|&b| b == b'/').rev() {
                            pending.push_front(c);
                        }
                    }
                }
            }
        }
    }
    Ok(Resolved {
        path: resolved.join(&b'/'),
        targets,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::collections::HashMap;

    fn tree(links: &[(&str, &str)]) -> HashMap<Vec<u8>, Vec<u8>> {
        links
            .iter()
            .map(|(l, t)| (l.as_bytes().to_vec(), t.as_bytes().to_vec()))
            .collect()
    }

    fn run(links: &HashMap<Vec<u8>, Vec<u8>>, link: &str) -> Result<String, Unresolved> {
        let target = links.get(link.as_bytes()).unwrap();
        resolve(link.as_bytes(), target, |p| match links.get(p) {
            Some(t) => TreeEntry::Link(t),
            None if p == b"sub" => TreeEntry::Gitlink,
            None => TreeEntry::Other,
        })
        .map(|r| String::from_utf8(r.path).unwrap())
    }

    #[test]
    fn targets_resolve_in_the_links_directory_and_through_other_links() {
        let links = tree(&[
            ("src/a", "b.txt"),
            ("src/up", "../lib/x"),
            ("src/chain", "up/../y"),
            ("src/dir/deep", "../../src/a"),
            ("src/out", "../../etc/passwd"),
            ("src/abs", "/etc/passwd"),
            ("src/loop1", "loop2"),
            ("src/loop2", "loop1"),
            ("src/sub", "../sub/x"),
            ("root", "."),
        ]);
        assert_eq!(run(&links, "src/a").unwrap(), "src/b.txt");
        assert_eq!(run(&links, "src/up").unwrap(), "lib/x");
        // `..` after a link is taken where the link resolved to (lib/), not lexically (src/).
        assert_eq!(run(&links, "src/chain").unwrap(), "lib/y");
        assert_eq!(run(&links, "src/dir/deep").unwrap(), "src/b.txt");
        assert_eq!(run(&links, "src/out"), Err(Unresolved::AboveRoot));
        assert!(matches!(
            run(&links, "src/abs"),
            Err(Unresolved::Absolute { .. })
        ));
        assert_eq!(run(&links, "src/loop1"), Err(Unresolved::TooManyHops));
        assert!(matches!(
            run(&links, "src/sub"),
            Err(Unresolved::Gitlink { .. })
        ));
        assert_eq!(run(&links, "root").unwrap(), "");
    }
}
