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
    /// A path resolved on the way has more components than the bound.
    #[error("a path it resolves through has more than {depth} components")]
    TooDeep { depth: usize },
    /// The check's budget of lookups is spent.
    #[error("the diff's links need more lookups to resolve than the check allows")]
    OverBudget,
}

/// A link resolved inside the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The repository path the link resolves to (empty: the repository root).
    pub path: Vec<u8>,
    /// Every target followed, the link's own first: each of its components was a name looked up.
    pub targets: Vec<Vec<u8>>,
}

/// The bounds of a resolution.
#[derive(Debug)]
pub struct Budget {
    /// Lookups left; each prefix looked up spends one ([`Unresolved::OverBudget`] once spent),
    /// so a diff of many long chains cannot make the check slow.
    pub lookups: usize,
    /// The most components a path resolved so far may have ([`Unresolved::TooDeep`]), so that
    /// each lookup stays cheap.
    pub depth: usize,
}

/// The path resolved so far, as spelled and as looked up: each component's key (written by the
/// caller's `key_of`) joined with `/`, built one component at a time so that a lookup costs the
/// key's length, not a new reading of the whole path.
struct Prefix<K> {
    raw: Vec<u8>,
    key: Vec<u8>,
    /// Where each component starts in `raw` and in `key` (at its `/`).
    starts: Vec<(usize, usize)>,
    key_of: K,
}

impl<K: Fn(&[u8], &mut Vec<u8>)> Prefix<K> {
    fn push(&mut self, name: &[u8]) {
        self.starts.push((self.raw.len(), self.key.len()));
        if !self.raw.is_empty() {
            self.raw.push(b'/');
            self.key.push(b'/');
        }
        self.raw.extend_from_slice(name);
        (self.key_of)(name, &mut self.key);
    }

    fn pop(&mut self) -> Option<()> {
        let (raw, key) = self.starts.pop()?;
        self.raw.truncate(raw);
        self.key.truncate(key);
        Some(())
    }
}

/// Resolve the link at `link` (a repository path) with target `target`, within `budget`: every
/// prefix is looked up with `entry` by its key, the keys of its components (`key_of` appends one
/// component's key to the buffer: the component itself for exact names, its folded form for
/// names as a case-insensitive checkout finds them) joined with `/`.
pub fn resolve<'t>(
    link: &[u8],
    target: &'t [u8],
    budget: &mut Budget,
    key_of: impl Fn(&[u8], &mut Vec<u8>),
    entry: impl Fn(&[u8]) -> TreeEntry<'t>,
) -> Result<Resolved, Unresolved> {
    if target.starts_with(b"/") {
        return Err(Unresolved::Absolute {
            target: target.to_vec(),
        });
    }
    let mut here = Prefix {
        raw: Vec::new(),
        key: Vec::new(),
        starts: Vec::new(),
        key_of,
    };
    let mut parents = link
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty())
        .collect::<Vec<_>>();
    parents.pop();
    for name in parents {
        here.push(name);
    }
    let mut targets = vec![target.to_vec()];
    let mut pending: std::collections::VecDeque<&[u8]> = target.split(|&b| b == b'/').collect();
    while let Some(component) = pending.pop_front() {
        match component {
            b"" | b"." => {}
            b".." => {
                here.pop().ok_or(Unresolved::AboveRoot)?;
            }
            name => {
                here.push(name);
                if here.starts.len() > budget.depth {
                    return Err(Unresolved::TooDeep {
                        depth: budget.depth,
                    });
                }
                budget.lookups = budget
                    .lookups
                    .checked_sub(1)
                    .ok_or(Unresolved::OverBudget)?;
                match entry(&here.key) {
                    TreeEntry::Other => {}
                    TreeEntry::Gitlink => return Err(Unresolved::Gitlink { path: here.raw }),
                    TreeEntry::UnknownLink => {
                        return Err(Unresolved::UnknownTarget { path: here.raw });
                    }
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
                        here.pop();
                        for c in next.split(|&b| b == b'/').rev() {
                            pending.push_front(c);
                        }
                    }
                }
            }
        }
    }
    Ok(Resolved {
        path: here.raw,
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

    fn exact(name: &[u8], key: &mut Vec<u8>) {
        key.extend_from_slice(name);
    }

    fn run(links: &HashMap<Vec<u8>, Vec<u8>>, link: &str) -> Result<String, Unresolved> {
        let target = links.get(link.as_bytes()).unwrap();
        let mut budget = Budget {
            lookups: 1000,
            depth: 8,
        };
        resolve(
            link.as_bytes(),
            target,
            &mut budget,
            exact,
            |p| match links.get(p) {
                Some(t) => TreeEntry::Link(t),
                None if p == b"sub" => TreeEntry::Gitlink,
                None => TreeEntry::Other,
            },
        )
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
        // `..` in the link's own directory path is already taken back.
        assert_eq!(run(&tree(&[("a/b/c", "../../d")]), "a/b/c").unwrap(), "d");
    }

    #[test]
    fn every_lookup_spends_the_budget() {
        let links = tree(&[("src/l", "a/b/c")]);
        let lookup = |_: &[u8]| TreeEntry::Other;
        let mut budget = Budget {
            lookups: 3,
            depth: 4,
        };
        assert!(
            resolve(
                b"src/l",
                &links[b"src/l".as_slice()],
                &mut budget,
                exact,
                lookup
            )
            .is_ok()
        );
        assert_eq!(budget.lookups, 0);
        assert_eq!(
            resolve(b"src/l", b"a", &mut budget, exact, lookup),
            Err(Unresolved::OverBudget)
        );
        let mut budget = Budget {
            lookups: 100,
            depth: 4,
        };
        assert_eq!(
            resolve(b"src/l", b"a/b/c/d", &mut budget, exact, lookup),
            Err(Unresolved::TooDeep { depth: 4 })
        );
    }
}
