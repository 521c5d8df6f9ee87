//! Repository paths as a trie keyed by folded component ([`crate::path::fold_component`]): one node
//! per name a case- and normalization-insensitive checkout (macOS, Windows) would find, so that
//! `Docs` and `docs/`, or `HEAD` and `head`, land on one node.
//!
//! Inserting or walking a path costs time linear in its length: every component is folded once
//! and looked up in its parent's child table. The rules built on it (ancestors, file/directory
//! and case collisions, planted repositories, link targets, short-name siblings) therefore stay
//! linear in the input, however deep its paths; hashing every prefix of every path instead grows
//! with the square of the depth.

use std::collections::HashMap;

use crate::path::fold_component;

/// Index of a node; [`FoldedPaths::ROOT`] is the repository root.
pub type NodeId = usize;

#[derive(Debug)]
struct Node<T> {
    /// The first spelling seen of this component (empty for the root).
    spelling: Box<[u8]>,
    parent: NodeId,
    children: HashMap<Box<str>, NodeId>,
    data: T,
}

/// The trie; `T` is what the caller records per node.
#[derive(Debug)]
pub struct FoldedPaths<T> {
    nodes: Vec<Node<T>>,
}

impl<T: Default> Default for FoldedPaths<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Default> FoldedPaths<T> {
    /// The root's id.
    pub const ROOT: NodeId = 0;

    /// A trie holding only the root.
    pub fn new() -> Self {
        FoldedPaths {
            nodes: vec![Node {
                spelling: Box::default(),
                parent: Self::ROOT,
                children: HashMap::new(),
                data: T::default(),
            }],
        }
    }

    /// Insert `path` (components separated by `/`; empty components are skipped) and return the
    /// node of every component, outermost first: the ancestors, then the path itself.
    pub fn insert(&mut self, path: &[u8]) -> Vec<NodeId> {
        let mut chain = Vec::new();
        let mut at = Self::ROOT;
        for component in path.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
            at = self.insert_child(at, component);
            chain.push(at);
        }
        chain
    }

    /// The child of `parent` for `component`, created when missing.
    pub fn insert_child(&mut self, parent: NodeId, component: &[u8]) -> NodeId {
        let key = fold_component(component);
        if let Some(&id) = self
            .nodes
            .get(parent)
            .and_then(|n| n.children.get(key.as_str()))
        {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            spelling: component.into(),
            parent,
            children: HashMap::new(),
            data: T::default(),
        });
        if let Some(node) = self.nodes.get_mut(parent) {
            node.children.insert(key.into_boxed_str(), id);
        }
        id
    }
}

impl<T> FoldedPaths<T> {
    /// The nodes along `path` that exist, outermost first; stops at the first missing component.
    pub fn walk(&self, path: &[u8]) -> Vec<NodeId> {
        let mut chain = Vec::new();
        let mut at = 0;
        for component in path.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
            match self.child(at, component) {
                Some(id) => {
                    chain.push(id);
                    at = id;
                }
                None => break,
            }
        }
        chain
    }

    /// The node `path` folds to, when it exists.
    pub fn find(&self, path: &[u8]) -> Option<NodeId> {
        let components = path.split(|&b| b == b'/').filter(|c| !c.is_empty()).count();
        let chain = self.walk(path);
        (chain.len() == components).then(|| chain.last().copied().unwrap_or(0))
    }

    /// The child of `parent` that `component` folds to.
    pub fn child(&self, parent: NodeId, component: &[u8]) -> Option<NodeId> {
        let key = fold_component(component);
        self.nodes
            .get(parent)
            .and_then(|n| n.children.get(key.as_str()))
            .copied()
    }

    /// Whether `parent` has a child folding to `folded` (an already folded name).
    pub fn has_child(&self, parent: NodeId, folded: &str) -> bool {
        self.nodes
            .get(parent)
            .is_some_and(|n| n.children.contains_key(folded))
    }

    /// The children of `id`, in no particular order.
    pub fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes
            .get(id)
            .into_iter()
            .flat_map(|n| n.children.values().copied())
    }

    /// The number of children of `id`.
    pub fn child_count(&self, id: NodeId) -> usize {
        self.nodes.get(id).map_or(0, |n| n.children.len())
    }

    /// The first spelling seen of `id`'s component.
    pub fn spelling(&self, id: NodeId) -> &[u8] {
        self.nodes.get(id).map_or(&[], |n| &n.spelling)
    }

    /// The path of `id`, spelled with the first spelling of each component.
    pub fn path_of(&self, id: NodeId) -> Vec<u8> {
        let mut parts = Vec::new();
        let mut at = id;
        while at != 0 {
            let Some(node) = self.nodes.get(at) else {
                break;
            };
            parts.push(&*node.spelling);
            at = node.parent;
        }
        parts.reverse();
        parts.join(&b'/')
    }

    /// What the caller recorded on `id`.
    pub fn data(&self, id: NodeId) -> Option<&T> {
        self.nodes.get(id).map(|n| &n.data)
    }

    /// Mutable access to what the caller records on `id`.
    pub fn data_mut(&mut self, id: NodeId) -> Option<&mut T> {
        self.nodes.get_mut(id).map(|n| &mut n.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_normalization_and_trailing_dots_fold_to_one_node() {
        let mut t: FoldedPaths<u32> = FoldedPaths::new();
        let a = t.insert(b"src/Docs/x.md");
        let b = t.insert("SRC/docs./X.MD".as_bytes());
        assert_eq!(a, b);
        let c = t.insert("src/cafe\u{301}".as_bytes());
        assert_eq!(t.find("Src/Caf\u{e9}".as_bytes()), c.last().copied());
        assert_eq!(t.path_of(a[2]), b"src/Docs/x.md");
        assert_eq!(t.find(b"src/nope"), None);
        assert_eq!(t.find(b""), Some(0));
        assert_eq!(t.walk(b"src/docs/y"), a[..2]);
        assert!(t.has_child(a[0], "docs"));
        assert_eq!(t.child_count(a[0]), 2);
    }

    #[test]
    fn a_deep_path_has_one_node_per_component() {
        let path = b"a/".repeat(20_000);
        let mut t: FoldedPaths<()> = FoldedPaths::new();
        assert_eq!(t.insert(&path).len(), 20_000);
        assert_eq!(t.walk(&path).len(), 20_000);
    }
}
