//! The policy's and the scope's globs, matched by globset in the one configuration the project
//! uses: `literal_separator(true)` (`*`, `?` and classes never match `/`; `**` does),
//! `backslash_escape(true)` (`\` escapes the next character), and, for deny and protect patterns,
//! `case_insensitive(true)`.
//!
//! # Semantics (globset 0.4's, held by `tests/glob_differential.rs`)
//!
//! - `?` one byte other than `/`; `*` any run of bytes other than `/`;
//! - `**` as a whole pattern matches everything; `**/` at the start matches nothing or any run of
//!   bytes ending in `/`; `/**` at the end matches `/` and anything after it; `/**/` in the middle
//!   matches `/` or `/`, anything, `/`; a `**` anywhere else is two `*`;
//! - `[...]` a class: `!` or `^` first negates, `]` or `-` first is literal, `-` last is literal,
//!   `a-z` a range, `[:alpha:]` and the other ASCII POSIX names; a class never matches `/`;
//! - `{a,b}` alternatives, nested to at most 100 levels; an empty alternative is dropped (so
//!   `a{,b}` does not match `a`; the policy refuses such a pattern before it gets here);
//! - `\` escapes the next character; a trailing `\` is an error.
//!
//! Matching is on the UTF-8 bytes of the path (globset's byte regex, `(?-u)`): `?`, `*` and classes
//! step over bytes, not characters, and case-insensitive matching folds ASCII letters only (`k`
//! matches `K` but not the Kelvin sign U+212A; `é` does not match `É`).
//!
//! A pattern compiles to one regex (alternatives are not expanded, so its size is linear in the
//! pattern's); matching runs in time linear in the path's length, without backtracking.

use globset::{Candidate, GlobBuilder};

/// Why a pattern does not compile: globset's reason, without the pattern (the caller names it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GlobError(globset::ErrorKind);

impl GlobError {
    /// globset's kind of error.
    pub fn kind(&self) -> &globset::ErrorKind {
        &self.0
    }
}

/// A glob whose syntax was checked; [`GlobSet`] compiles globs for matching.
#[derive(Debug, Clone)]
pub struct Glob(globset::Glob);

impl Glob {
    /// Reads `pattern`; `case_insensitive` folds ASCII letters.
    pub fn new(pattern: &str, case_insensitive: bool) -> Result<Glob, GlobError> {
        GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(case_insensitive)
            .build()
            .map(Glob)
            .map_err(|e| GlobError(e.kind().clone()))
    }

    /// This glob alone, compiled.
    pub fn compile(&self) -> Result<GlobSet, GlobError> {
        GlobSet::new([(0, self)])
    }
}

/// Globs compiled together and matched in one pass (globset's `GlobSet`: literal, prefix, suffix,
/// extension and base-name globs by hash or Aho-Corasick lookups, the rest as one regex), each
/// tagged with the index of what it stands for; several globs may share a tag.
#[derive(Debug, Clone, Default)]
pub struct GlobSet {
    set: globset::GlobSet,
    tags: Vec<usize>,
}

impl GlobSet {
    /// The set of `globs`, each with its tag. Fails only when globset's regex engine refuses the
    /// compiled form (over its size limit).
    pub fn new<'a>(
        globs: impl IntoIterator<Item = (usize, &'a Glob)>,
    ) -> Result<GlobSet, GlobError> {
        let mut builder = globset::GlobSetBuilder::new();
        let mut tags = Vec::new();
        for (tag, glob) in globs {
            builder.add(glob.0.clone());
            tags.push(tag);
        }
        let set = builder.build().map_err(|e| GlobError(e.kind().clone()))?;
        Ok(GlobSet { set, tags })
    }

    /// Whether any glob matches the whole of `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match_candidate(&Candidate::from_bytes(path))
    }

    /// The tags of the globs matching the whole of `path`, in ascending order, each once.
    pub fn matches(&self, path: &str) -> Vec<usize> {
        let mut tags: Vec<usize> = self
            .set
            .matches_candidate(&Candidate::from_bytes(path))
            .into_iter()
            .filter_map(|i| self.tags.get(i).copied())
            .collect();
        tags.sort_unstable();
        tags.dedup();
        tags
    }

    /// The lowest tag of a glob matching the whole of `path`, or None.
    pub fn first(&self, path: &str) -> Option<usize> {
        self.matches(path).first().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(pattern: &str, ci: bool) -> Option<GlobSet> {
        Glob::new(pattern, ci).and_then(|g| g.compile()).ok()
    }

    fn m(pattern: &str, path: &str) -> bool {
        matcher(pattern, false).is_some_and(|g| g.is_match(path))
    }

    #[test]
    fn recursive_forms() {
        assert!(m("**", ""));
        assert!(m("**", "a/b"));
        assert!(m("**/a", "a"));
        assert!(m("**/a", "x/y/a"));
        assert!(!m("**/a", "xa"));
        assert!(m("a/**", "a/b/c"));
        assert!(!m("a/**", "a"));
        assert!(m("a/**/b", "a/b"));
        assert!(m("a/**/b", "a/x/y/b"));
        assert!(!m("a/**/b", "ab"));
        assert!(m("a**", "abc"));
        assert!(!m("a**", "a/b"));
    }

    #[test]
    fn bytes_not_characters() {
        assert!(!m("?", "é"));
        assert!(m("??", "é"));
        assert!(matcher("k", true).is_some_and(|g| g.is_match("K") && !g.is_match("\u{212A}")));
    }

    #[test]
    fn errors_are_globsets() {
        use globset::ErrorKind;
        let kind = |p: &str| Glob::new(p, false).err().map(|e| e.kind().clone());
        assert_eq!(kind("a["), Some(ErrorKind::UnclosedClass));
        assert_eq!(kind("[z-a]"), Some(ErrorKind::InvalidRange('z', 'a')));
        assert_eq!(kind("a}"), Some(ErrorKind::UnopenedAlternates));
        assert_eq!(kind("{a"), Some(ErrorKind::UnclosedAlternates));
        assert_eq!(kind("a\\"), Some(ErrorKind::DanglingEscape));
        assert_eq!(
            kind(&"{".repeat(101)),
            Some(ErrorKind::TooManyNestedAlternates)
        );
        assert_eq!(
            Glob::new("a[", false).err().map(|e| e.to_string()),
            Some("unclosed character class; missing ']'".to_owned())
        );
    }

    #[test]
    fn first_is_the_lowest_tag() {
        let globs: Vec<Glob> = ["b/**", "**/x", "b"]
            .iter()
            .map(|p| Glob::new(p, true))
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        assert_eq!(globs.len(), 3);
        let tagged = [(0, &globs[0]), (1, &globs[1]), (0, &globs[2])];
        let list = GlobSet::new(tagged).ok();
        let first = |p: &str| list.as_ref().and_then(|l| l.first(p));
        assert_eq!(first("B/x"), Some(0));
        assert_eq!(first("a/X"), Some(1));
        assert_eq!(first("b"), Some(0));
        assert_eq!(first("c"), None);
    }
}
