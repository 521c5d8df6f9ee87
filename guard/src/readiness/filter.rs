//! GitHub's filter patterns for `branches`, `branches-ignore`, `tags` and `tags-ignore`, as its
//! "Filter pattern cheat sheet" (docs.github.com/en/actions/reference/workflows-and-actions/
//! workflow-syntax#filter-pattern-cheat-sheet) defines them; not globset's syntax:
//!
//! | pattern | matches |
//! |---|---|
//! | `*` | zero or more characters, but not `/` |
//! | `**` | zero or more of any character |
//! | `?` | zero or one of the preceding character |
//! | `+` | one or more of the preceding character |
//! | `[]` | one character listed or in a range (`a-z`, `A-Z`, `0-9`) |
//! | `!` | at the start of a pattern: a ref it matches is excluded again |
//! | `\` | escapes the next character |
//!
//! A list is read in order: a ref is included by the last pattern that matches it (a negated
//! pattern excludes).

#[derive(Debug, Clone, PartialEq)]
enum Atom {
    Char(char),
    Class(Vec<(char, char)>),
    /// `*`
    Segment,
    /// `**`
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Repeat {
    One,
    ZeroOrOne,
    OneOrMore,
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    negated: bool,
    items: Vec<(Atom, Repeat)>,
}

/// The most characters of a pattern or a ref this matcher handles (refs are at most a few hundred
/// bytes; the matching is quadratic).
pub const MAX_LEN: usize = 1024;

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, String> {
        if text.chars().count() > MAX_LEN {
            return Err(format!("a filter pattern longer than {MAX_LEN} characters"));
        }
        let (negated, body) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let mut items: Vec<(Atom, Repeat)> = Vec::new();
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let escaped = chars.next().ok_or("a pattern ends in `\\`")?;
                    items.push((Atom::Char(escaped), Repeat::One));
                }
                '*' => {
                    if chars.peek() == Some(&'*') {
                        chars.next();
                        items.push((Atom::Any, Repeat::One));
                    } else {
                        items.push((Atom::Segment, Repeat::One));
                    }
                }
                '?' | '+' => {
                    let repeat = if c == '?' {
                        Repeat::ZeroOrOne
                    } else {
                        Repeat::OneOrMore
                    };
                    match items.last_mut() {
                        Some((Atom::Char(_) | Atom::Class(_), r @ Repeat::One)) => *r = repeat,
                        _ => return Err(format!("`{c}` does not follow a character")),
                    }
                }
                '[' => {
                    let mut ranges = Vec::new();
                    loop {
                        let first = chars.next().ok_or("`[` without `]`")?;
                        if first == ']' {
                            break;
                        }
                        if chars.peek() == Some(&'-') {
                            chars.next();
                            let last = chars.next().ok_or("`[` without `]`")?;
                            if last == ']' || first > last {
                                return Err("an invalid range in `[]`".into());
                            }
                            ranges.push((first, last));
                        } else {
                            ranges.push((first, first));
                        }
                    }
                    if ranges.is_empty() {
                        return Err("an empty `[]`".into());
                    }
                    items.push((Atom::Class(ranges), Repeat::One));
                }
                other => items.push((Atom::Char(other), Repeat::One)),
            }
        }
        Ok(Pattern { negated, items })
    }

    pub fn negated(&self) -> bool {
        self.negated
    }

    /// Whether the pattern (ignoring its `!`) matches the whole of `text`.
    pub fn matches(&self, text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        if chars.len() > MAX_LEN {
            return false;
        }
        let mut memo = vec![None; (self.items.len() + 1) * (chars.len() + 1)];
        self.match_at(0, 0, &chars, &mut memo)
    }

    fn match_at(&self, item: usize, at: usize, text: &[char], memo: &mut [Option<bool>]) -> bool {
        let key = item * (text.len() + 1) + at;
        if let Some(Some(known)) = memo.get(key) {
            return *known;
        }
        let result = match self.items.get(item) {
            None => at == text.len(),
            Some((atom, repeat)) => match atom {
                Atom::Segment | Atom::Any => {
                    // Zero or more characters (not `/` for `*`).
                    let mut end = at;
                    loop {
                        if self.match_at(item + 1, end, text, memo) {
                            break true;
                        }
                        match text.get(end) {
                            Some('/') if *atom == Atom::Segment => break false,
                            Some(_) => end += 1,
                            None => break false,
                        }
                    }
                }
                Atom::Char(_) | Atom::Class(_) => {
                    let one = |i: usize| text.get(i).is_some_and(|c| atom_matches(atom, *c));
                    match repeat {
                        Repeat::One => one(at) && self.match_at(item + 1, at + 1, text, memo),
                        Repeat::ZeroOrOne => {
                            self.match_at(item + 1, at, text, memo)
                                || (one(at) && self.match_at(item + 1, at + 1, text, memo))
                        }
                        Repeat::OneOrMore => {
                            let mut end = at;
                            let mut found = false;
                            while one(end) {
                                end += 1;
                                if self.match_at(item + 1, end, text, memo) {
                                    found = true;
                                    break;
                                }
                            }
                            found
                        }
                    }
                }
            },
        };
        if let Some(slot) = memo.get_mut(key) {
            *slot = Some(result);
        }
        result
    }
}

fn atom_matches(atom: &Atom, c: char) -> bool {
    match atom {
        Atom::Char(expected) => *expected == c,
        Atom::Class(ranges) => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)),
        Atom::Segment => c != '/',
        Atom::Any => true,
    }
}

/// Whether a list of patterns includes `name`: the last matching pattern decides (a negated one
/// excludes); no match excludes.
pub fn included(patterns: &[Pattern], name: &str) -> bool {
    let mut included = false;
    for pattern in patterns {
        if pattern.matches(name) {
            included = !pattern.negated();
        }
    }
    included
}
