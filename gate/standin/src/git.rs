//! A Git object store with git's own object ids: `sha1("<type> <size>\0<content>")`, trees
//! serialised and ordered as git does, so ids agree with a real repository's.

use std::collections::{BTreeMap, HashMap};

use sha1::{Digest, Sha1};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    Blob(Vec<u8>),
    /// (mode as the API writes it, e.g. `100644` or `040000`, name, id)
    Tree(Vec<(String, String, String)>),
    Commit {
        tree: String,
        parents: Vec<String>,
        message: String,
        /// Whether the request named an author or committer (GitHub then does not sign).
        custom_identity: bool,
    },
}

#[derive(Debug, Default)]
pub struct Store {
    pub objects: HashMap<String, Object>,
    /// Full ref name (`refs/heads/x`) to commit id.
    pub refs: BTreeMap<String, String>,
    /// The bytes of every commit the stand-in made itself (git's serialisation), so that a test
    /// can store one in a local repository under the same id ([`crate::export_commit`]).
    pub made_commits: HashMap<String, Vec<u8>>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .filter_map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

fn object_id(kind: &str, content: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("{kind} {}\0", content.len()).as_bytes());
    hasher.update(content);
    hex(&hasher.finalize())
}

/// git's tree order: by name, a tree's name compared as if it ended in `/`.
fn sort_key(mode: &str, name: &str) -> Vec<u8> {
    let mut key = name.as_bytes().to_vec();
    if mode == "040000" || mode == "40000" {
        key.push(b'/');
    }
    key
}

impl Store {
    pub fn put_blob(&mut self, bytes: Vec<u8>) -> String {
        let id = object_id("blob", &bytes);
        self.objects.insert(id.clone(), Object::Blob(bytes));
        id
    }

    pub fn put_tree(&mut self, mut entries: Vec<(String, String, String)>) -> String {
        entries.sort_by_key(|(mode, name, _)| sort_key(mode, name));
        let mut content = Vec::new();
        for (mode, name, id) in &entries {
            let mode = mode.trim_start_matches('0');
            content.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            content.extend_from_slice(&unhex(id));
        }
        let id = object_id("tree", &content);
        self.objects.insert(id.clone(), Object::Tree(entries));
        id
    }

    pub fn put_commit(
        &mut self,
        tree: &str,
        parents: &[String],
        message: &str,
        time: i64,
        custom_identity: bool,
    ) -> String {
        let mut content = format!("tree {tree}\n");
        for parent in parents {
            content.push_str(&format!("parent {parent}\n"));
        }
        let identity = format!("GitHub <noreply@github.com> {time} +0000");
        content.push_str(&format!(
            "author {identity}\ncommitter {identity}\n\n{message}"
        ));
        let id = object_id("commit", content.as_bytes());
        self.made_commits
            .insert(id.clone(), content.clone().into_bytes());
        self.objects.insert(
            id.clone(),
            Object::Commit {
                tree: tree.to_owned(),
                parents: parents.to_vec(),
                message: message.to_owned(),
                custom_identity,
            },
        );
        id
    }

    /// Store an object exactly as git serialises it (`git cat-file <type> <id>`'s bytes), under
    /// the id git gives it: for loading a real repository's history. `None` when `kind` is not
    /// `blob`, `tree` or `commit` or the bytes are not such an object.
    pub fn put_raw(&mut self, kind: &str, content: &[u8]) -> Option<String> {
        let object = match kind {
            "blob" => Object::Blob(content.to_vec()),
            "tree" => Object::Tree(parse_tree(content)?),
            "commit" => parse_commit(content)?,
            _ => return None,
        };
        let id = object_id(kind, content);
        self.objects.insert(id.clone(), object);
        Some(id)
    }

    /// Whether `ancestor` is `commit` or reachable from it through parents.
    pub fn is_ancestor(&self, ancestor: &str, commit: &str) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![commit.to_owned()];
        while let Some(id) = todo.pop() {
            if id == ancestor {
                return true;
            }
            if !seen.insert(id.clone()) {
                continue;
            }
            if let Some(Object::Commit { parents, .. }) = self.objects.get(&id) {
                todo.extend(parents.iter().cloned());
            }
        }
        false
    }

    /// The tree of `commit`.
    pub fn commit_tree(&self, commit: &str) -> Option<&str> {
        match self.objects.get(commit)? {
            Object::Commit { tree, .. } => Some(tree),
            _ => None,
        }
    }

    /// Every leaf under `tree` as path → (mode, id).
    pub fn flatten(&self, tree: &str) -> Option<BTreeMap<String, (String, String)>> {
        let mut out = BTreeMap::new();
        self.flatten_into(tree, "", &mut out)?;
        Some(out)
    }

    fn flatten_into(
        &self,
        tree: &str,
        prefix: &str,
        out: &mut BTreeMap<String, (String, String)>,
    ) -> Option<()> {
        let Object::Tree(entries) = self.objects.get(tree)? else {
            return None;
        };
        for (mode, name, id) in entries.clone() {
            let path = format!("{prefix}{name}");
            if mode == "040000" {
                self.flatten_into(&id, &format!("{path}/"), out)?;
            } else {
                out.insert(path, (mode, id));
            }
        }
        Some(())
    }

    /// Write the nested trees for `leaves` (path → (mode, id)); the root tree's id.
    pub fn build(&mut self, leaves: &BTreeMap<String, (String, String)>) -> String {
        let mut here: Vec<(String, String, String)> = Vec::new();
        let mut below: BTreeMap<String, BTreeMap<String, (String, String)>> = BTreeMap::new();
        for (path, (mode, id)) in leaves {
            match path.split_once('/') {
                Some((dir, rest)) => {
                    below
                        .entry(dir.to_owned())
                        .or_default()
                        .insert(rest.to_owned(), (mode.clone(), id.clone()));
                }
                None => here.push((mode.clone(), path.clone(), id.clone())),
            }
        }
        for (dir, sub) in below {
            let id = self.build(&sub);
            here.push(("040000".to_owned(), dir, id));
        }
        self.put_tree(here)
    }

    /// The blob at `path` in the tree of `commit`.
    pub fn read_path(&self, commit: &str, path: &str) -> Option<&[u8]> {
        let Object::Commit { tree, .. } = self.objects.get(commit)? else {
            return None;
        };
        let leaves = self.flatten(tree)?;
        let (_, id) = leaves.get(path)?;
        match self.objects.get(id)? {
            Object::Blob(bytes) => Some(bytes),
            _ => None,
        }
    }
}

/// `<mode> SP <name> NUL <20-byte id>` entries; modes as the API writes them (`040000`).
fn parse_tree(mut content: &[u8]) -> Option<Vec<(String, String, String)>> {
    let mut entries = Vec::new();
    while !content.is_empty() {
        let space = content.iter().position(|&b| b == b' ')?;
        let nul = content.iter().position(|&b| b == 0)?;
        let mode = std::str::from_utf8(content.get(..space)?).ok()?;
        let name = std::str::from_utf8(content.get(space + 1..nul)?).ok()?;
        let id = content.get(nul + 1..nul + 21)?;
        let mode = if mode == "40000" { "040000" } else { mode };
        entries.push((mode.to_owned(), name.to_owned(), hex(id)));
        content = content.get(nul + 21..)?;
    }
    Some(entries)
}

/// `tree`, `parent` lines, other headers, a blank line, the message.
fn parse_commit(content: &[u8]) -> Option<Object> {
    let text = std::str::from_utf8(content).ok()?;
    let (headers, message) = text.split_once("\n\n").unwrap_or((text, ""));
    let mut tree = None;
    let mut parents = Vec::new();
    for line in headers.lines() {
        if let Some(id) = line.strip_prefix("tree ") {
            tree = Some(id.to_owned());
        } else if let Some(id) = line.strip_prefix("parent ") {
            parents.push(id.to_owned());
        }
    }
    Some(Object::Commit {
        tree: tree?,
        parents,
        message: message.to_owned(),
        // Made elsewhere, by someone: not a commit GitHub signed.
        custom_identity: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known ids: `git hash-object` of empty and of "hello\n", and git's empty tree.
    #[test]
    fn ids_are_gits() {
        let mut store = Store::default();
        assert_eq!(
            store.put_blob(Vec::new()),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        assert_eq!(
            store.put_blob(b"hello\n".to_vec()),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        assert_eq!(
            store.put_tree(Vec::new()),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
    }
}
