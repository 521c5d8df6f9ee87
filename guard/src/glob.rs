//! The glob matcher of the policy: globset 0.4's glob language, for the one configuration the
//! policy uses (`literal_separator(true)`, `backslash_escape(true)`, optionally
//! `case_insensitive(true)`), without a regex engine.
//!
//! # Semantics (those of globset 0.4.22, which `tests/glob_differential.rs` checks against)
//!
//! A pattern is read into the same tokens globset reads it into, by a port of globset's parser:
//!
//! - `?` one byte other than `/`; `*` any run of bytes other than `/`;
//! - `**` as a whole pattern matches everything; `**/` at the start matches nothing, `/`, or any
//!   run of bytes ending in `/`; `/**` at the end matches `/` and anything after it; `/**/` in the
//!   middle matches `/` or `/`, anything, `/`; a `**` anywhere else is two `*`;
//! - `[...]` a class of bytes: `!` or `^` first negates, `]` or `-` first is literal, `-` last is
//!   literal, `a-z` a range, `[:alpha:]` and the other ASCII POSIX names; a class never matches
//!   `/`;
//! - `{a,b}` alternatives, nested to at most 100 levels; an empty alternative is dropped (so
//!   `a{,b}` does not match `a`), and a group with no non-empty alternative matches the empty
//!   string (`a{}b` matches `ab`);
//! - `\` escapes the next character; a trailing `\` is an error.
//!
//! Matching is on the UTF-8 bytes of the path, as globset's byte regex (`(?-u)`) matches: `?`,
//! `*` and classes step over bytes, not characters (`?` does not match `é`, two bytes; a class
//! holding `é` is the class of its two bytes), and case-insensitive matching folds ASCII letters
//! only (`k` matches `K` but not the Kelvin sign U+212A; `é` does not match `É`).
//!
//! # Cost
//!
//! A pattern compiles to a Thompson automaton whose size is linear in the pattern (no alternative
//! is expanded), refused above [`MAX_GLOB_BYTES`]; a path is matched by simulating the automaton
//! with a set of states, in time proportional to the path's length times the automaton's size,
//! whatever the pattern (no backtracking). An automaton of at most 64 states keeps its set in a
//! bit mask with precomputed closures; a `**/` pattern whose rest never matches `/` runs on the
//! path's last component only.

/// Longest pattern compiled, in bytes. The policy's own limit is far lower.
pub const MAX_GLOB_BYTES: usize = 64 * 1024;

/// Deepest nesting of `{}` groups, as in globset.
const MAX_ALTERNATES_DEPTH: usize = 100;

/// Why a pattern does not compile. The messages are globset's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GlobError {
    #[error("unclosed character class; missing ']'")]
    UnclosedClass,
    #[error("invalid range; '{0}' > '{1}'")]
    InvalidRange(char, char),
    #[error("unopened alternate group; missing '{{' (maybe escape '}}' with '[}}]'?)")]
    UnopenedAlternates,
    #[error("unclosed alternate group; missing '}}' (maybe escape '{{' with '[{{]'?)")]
    UnclosedAlternates,
    #[error("alternate groups nested too deeply")]
    TooManyNestedAlternates,
    #[error("dangling '\\'")]
    DanglingEscape,
    #[error("longer than {MAX_GLOB_BYTES} bytes")]
    TooLong,
}

/// A state's consuming step in the bit-mask simulation: the bytes it takes and the closure of
/// its target; None for a state that consumes nothing.
type MaskStep = Option<(ByteSet, u64)>;

/// A compiled glob.
#[derive(Debug, Clone)]
pub struct Glob {
    states: Vec<State>,
    start: usize,
    /// For an automaton of at most 64 states: per state, its consuming step as (bytes, the
    /// closure of its target as a bit mask); and the closure of `start`.
    small: Option<(Vec<MaskStep>, u64)>,
    /// The pattern is `**/` followed by tokens that never match `/`: the automaton is of those
    /// tokens alone and matches the path's last component (everything after its last `/`), which
    /// is exactly when `(?:/?|.*/)` followed by them matches the whole path.
    basename_only: bool,
}

impl Glob {
    /// Compiles `pattern`; `case_insensitive` folds ASCII letters.
    pub fn new(pattern: &str, case_insensitive: bool) -> Result<Glob, GlobError> {
        if pattern.len() > MAX_GLOB_BYTES {
            return Err(GlobError::TooLong);
        }
        let tokens = Parser::new(pattern).parse()?;
        let compiler = || Compiler {
            states: vec![State::Match],
            case_insensitive,
        };
        if let [Token::RecursivePrefix, rest @ ..] = tokens.as_slice()
            && !rest.is_empty()
        {
            let mut tail = compiler();
            let start = tail.tokens(rest, 0);
            let slash_free = tail.states.iter().all(|s| match s {
                State::Byte { set, .. } => !set.contains(b'/'),
                _ => true,
            });
            if slash_free {
                return Ok(Glob::finish(tail.states, start, true));
            }
        }
        let mut whole = compiler();
        let start = if tokens.len() == 1 && tokens.first() == Some(&Token::RecursivePrefix) {
            // globset's special case: `**` alone matches everything.
            whole.star(ByteSet::ALL, 0)
        } else {
            whole.tokens(&tokens, 0)
        };
        Ok(Glob::finish(whole.states, start, false))
    }

    fn finish(states: Vec<State>, start: usize, basename_only: bool) -> Glob {
        let mut glob = Glob {
            states,
            start,
            small: None,
            basename_only,
        };
        if glob.states.len() <= 64 {
            let mask = |glob: &Glob, from: usize| {
                let mut set = StateSet::new(glob.states.len());
                glob.close(&mut set, &mut Vec::new(), from);
                set.dense.iter().fold(0u64, |m, &s| m | 1u64 << s)
            };
            let steps = glob
                .states
                .iter()
                .map(|s| match s {
                    State::Byte { set, next } => Some((*set, mask(&glob, *next))),
                    _ => None,
                })
                .collect();
            glob.small = Some((steps, mask(&glob, start)));
        }
        glob
    }

    /// The number of automaton states (linear in the pattern's length).
    pub fn automaton_size(&self) -> usize {
        self.states.len()
    }

    /// Whether the whole of `path` matches.
    pub fn is_match(&self, path: &str) -> bool {
        self.is_match_bytes(path.as_bytes())
    }

    /// Whether the whole of `path` matches.
    pub fn is_match_bytes(&self, path: &[u8]) -> bool {
        let path = self.subject(path);
        match &self.small {
            Some((steps, start)) => Glob::simulate_mask(steps, *start, path),
            None => self.simulate(path),
        }
    }

    /// [`Glob::is_match`] by the general state-set simulation even when the automaton is small,
    /// so tests can hold both simulations to the same answers.
    #[doc(hidden)]
    pub fn is_match_by_state_set(&self, path: &str) -> bool {
        self.simulate(self.subject(path.as_bytes()))
    }

    /// What the automaton runs on: the whole path, or its last component.
    fn subject<'p>(&self, path: &'p [u8]) -> &'p [u8] {
        match (self.basename_only, memchr::memrchr(b'/', path)) {
            (true, Some(slash)) => path.get(slash + 1..).unwrap_or_default(),
            _ => path,
        }
    }

    /// The simulation for automata of at most 64 states: the set of states is a bit mask.
    fn simulate_mask(steps: &[MaskStep], start: u64, path: &[u8]) -> bool {
        let mut current = start;
        for &byte in path {
            let mut next = 0u64;
            let mut rest = current;
            while rest != 0 {
                let s = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if let Some(Some((set, to))) = steps.get(s)
                    && set.contains(byte)
                {
                    next |= to;
                }
            }
            if next == 0 {
                return false;
            }
            current = next;
        }
        current & 1 == 1
    }

    fn simulate(&self, path: &[u8]) -> bool {
        let n = self.states.len();
        let mut current = StateSet::new(n);
        let mut next = StateSet::new(n);
        let mut stack = Vec::new();
        self.close(&mut current, &mut stack, self.start);
        for &byte in path {
            if current.is_empty() {
                return false;
            }
            next.clear();
            for &s in &current.dense {
                if let Some(State::Byte { set, next: to }) = self.states.get(s)
                    && set.contains(byte)
                {
                    self.close(&mut next, &mut stack, *to);
                }
            }
            std::mem::swap(&mut current, &mut next);
        }
        current.contains(0)
    }

    /// Adds `from` and every state reachable from it without consuming a byte.
    fn close(&self, set: &mut StateSet, stack: &mut Vec<usize>, from: usize) {
        stack.push(from);
        while let Some(s) = stack.pop() {
            if !set.insert(s) {
                continue;
            }
            if let Some(State::Split(a, b)) = self.states.get(s) {
                stack.push(*b);
                stack.push(*a);
            }
        }
    }
}

/// A set of automaton states: insertion order kept, membership in constant time.
struct StateSet {
    dense: Vec<usize>,
    member: Vec<bool>,
}

impl StateSet {
    fn new(n: usize) -> StateSet {
        StateSet {
            dense: Vec::with_capacity(n),
            member: vec![false; n],
        }
    }

    fn is_empty(&self) -> bool {
        self.dense.is_empty()
    }

    fn contains(&self, s: usize) -> bool {
        self.member.get(s).copied().unwrap_or(false)
    }

    /// Whether `s` was not yet in the set.
    fn insert(&mut self, s: usize) -> bool {
        match self.member.get_mut(s) {
            Some(seen) if !*seen => {
                *seen = true;
                self.dense.push(s);
                true
            }
            _ => false,
        }
    }

    fn clear(&mut self) {
        for &s in &self.dense {
            if let Some(seen) = self.member.get_mut(s) {
                *seen = false;
            }
        }
        self.dense.clear();
    }
}

/// A set of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ByteSet([u64; 4]);

impl ByteSet {
    const EMPTY: ByteSet = ByteSet([0; 4]);
    const ALL: ByteSet = ByteSet([u64::MAX; 4]);

    fn contains(&self, b: u8) -> bool {
        let word = self.0.get(usize::from(b >> 6)).copied().unwrap_or(0);
        word >> (b & 63) & 1 == 1
    }

    fn add(&mut self, b: u8) {
        if let Some(word) = self.0.get_mut(usize::from(b >> 6)) {
            *word |= 1 << (b & 63);
        }
    }

    fn add_range(&mut self, lo: u8, hi: u8) {
        for b in lo..=hi {
            self.add(b);
        }
    }

    fn single(b: u8) -> ByteSet {
        let mut set = ByteSet::EMPTY;
        set.add(b);
        set
    }

    fn not_slash() -> ByteSet {
        let mut set = ByteSet::ALL;
        if let Some(word) = set.0.get_mut(0) {
            *word &= !(1 << b'/');
        }
        set
    }

    /// Adds the other case of every ASCII letter in the set (regex's `(?i)` without Unicode).
    fn fold_ascii(mut self) -> ByteSet {
        for b in b'a'..=b'z' {
            let upper = b.to_ascii_uppercase();
            if self.contains(b) || self.contains(upper) {
                self.add(b);
                self.add(upper);
            }
        }
        self
    }

    fn complement(self) -> ByteSet {
        ByteSet(self.0.map(|w| !w))
    }
}

/// One state of the automaton; state 0 is the accepting one.
#[derive(Debug, Clone)]
enum State {
    /// Consume one byte of `set`, then go to `next`.
    Byte {
        set: ByteSet,
        next: usize,
    },
    /// Go to both, consuming nothing.
    Split(usize, usize),
    Match,
}

/// Builds the automaton back to front: each method takes the state to continue with and returns
/// the entry state of what it compiled.
struct Compiler {
    states: Vec<State>,
    case_insensitive: bool,
}

impl Compiler {
    fn push(&mut self, state: State) -> usize {
        self.states.push(state);
        self.states.len() - 1
    }

    fn byte(&mut self, set: ByteSet, next: usize) -> usize {
        self.push(State::Byte { set, next })
    }

    /// Any number of bytes of `set`, then `next`.
    fn star(&mut self, set: ByteSet, next: usize) -> usize {
        let split = self.push(State::Split(next, next));
        let body = self.byte(set, split);
        if let Some(State::Split(first, _)) = self.states.get_mut(split) {
            *first = body;
        }
        split
    }

    fn tokens(&mut self, tokens: &[Token], mut next: usize) -> usize {
        for token in tokens.iter().rev() {
            next = self.token(token, next);
        }
        next
    }

    fn token(&mut self, token: &Token, next: usize) -> usize {
        match token {
            Token::Literal(c) => {
                let mut buf = [0; 4];
                let mut next = next;
                for &b in c.encode_utf8(&mut buf).as_bytes().iter().rev() {
                    let set = self.fold(ByteSet::single(b));
                    next = self.byte(set, next);
                }
                next
            }
            Token::Any => self.byte(ByteSet::not_slash(), next),
            Token::ZeroOrMore => self.star(ByteSet::not_slash(), next),
            // `(?:/?|.*/)`: nothing, or anything ending in `/` (which includes `/` alone).
            Token::RecursivePrefix => {
                let slash = self.byte(ByteSet::single(b'/'), next);
                let any = self.star(ByteSet::ALL, slash);
                self.push(State::Split(next, any))
            }
            // `/.*`
            Token::RecursiveSuffix => {
                let any = self.star(ByteSet::ALL, next);
                self.byte(ByteSet::single(b'/'), any)
            }
            // `(?:/|/.*/)`: `/`, anything, `/` (which includes `//`), or `/` alone.
            Token::RecursiveZeroOrMore => {
                let last = self.byte(ByteSet::single(b'/'), next);
                let any = self.star(ByteSet::ALL, last);
                let first_of_two = self.byte(ByteSet::single(b'/'), any);
                let alone = self.byte(ByteSet::single(b'/'), next);
                self.push(State::Split(alone, first_of_two))
            }
            Token::Class { negated, ranges } => {
                let set = self.class(*negated, ranges);
                self.byte(set, next)
            }
            Token::Alternates(alternatives) => {
                let mut entry: Option<usize> = None;
                for alternative in alternatives.iter().rev() {
                    if emits_nothing(alternative) {
                        continue;
                    }
                    let this = self.tokens(alternative, next);
                    entry = Some(match entry {
                        None => this,
                        Some(rest) => self.push(State::Split(this, rest)),
                    });
                }
                entry.unwrap_or(next)
            }
        }
    }

    fn fold(&self, set: ByteSet) -> ByteSet {
        if self.case_insensitive {
            set.fold_ascii()
        } else {
            set
        }
    }

    /// The byte class globset writes for a class token: each range's characters are written as
    /// their UTF-8 bytes, so `x-y` becomes the leading bytes of `x`, the byte range from the last
    /// byte of `x` to the first byte of `y`, and the trailing bytes of `y`.
    fn class(&self, negated: bool, ranges: &[(char, char)]) -> ByteSet {
        let mut set = ByteSet::EMPTY;
        for &(lo, hi) in ranges {
            if negated || lo > '/' || hi < '/' {
                add_char_range(&mut set, lo, hi);
            } else {
                // A non-negated range holding `/` loses it, as in globset.
                if lo < '/' {
                    add_char_range(&mut set, lo, '.');
                }
                if hi > '/' {
                    add_char_range(&mut set, '0', hi);
                }
            }
        }
        if negated {
            set.add(b'/');
            self.fold(set).complement()
        } else {
            self.fold(set)
        }
    }
}

fn add_char_range(set: &mut ByteSet, lo: char, hi: char) {
    let (mut lo_buf, mut hi_buf) = ([0; 4], [0; 4]);
    let lo = lo.encode_utf8(&mut lo_buf).as_bytes();
    let hi = hi.encode_utf8(&mut hi_buf).as_bytes();
    if lo == hi {
        for &b in lo {
            set.add(b);
        }
        return;
    }
    let (Some((&lo_last, lo_lead)), Some((&hi_first, hi_trail))) =
        (lo.split_last(), hi.split_first())
    else {
        return;
    };
    for &b in lo_lead.iter().chain(hi_trail) {
        set.add(b);
    }
    // lo <= hi as characters makes lo_last <= hi_first (a continuation byte is below any lead
    // byte), so this range is never empty; globset's regex would be refused otherwise.
    set.add_range(lo_last, hi_first);
}

/// Whether globset writes nothing for these tokens: only groups all of whose alternatives write
/// nothing (an empty alternative is dropped, and a group left with none writes nothing).
fn emits_nothing(tokens: &[Token]) -> bool {
    tokens.iter().all(|t| match t {
        Token::Alternates(alternatives) => alternatives.iter().all(|a| emits_nothing(a)),
        _ => false,
    })
}

/// globset's tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    Any,
    ZeroOrMore,
    RecursivePrefix,
    RecursiveSuffix,
    RecursiveZeroOrMore,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Alternates(Vec<Vec<Token>>),
}

/// A port of globset 0.4.22's `Parser` with `backslash_escape(true)` and
/// `allow_unclosed_class(false)`, `/` the only separator.
struct Parser<'a> {
    alternates_stack: Vec<usize>,
    branches: Vec<Vec<Token>>,
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    prev: Option<char>,
    cur: Option<char>,
}

impl<'a> Parser<'a> {
    fn new(glob: &'a str) -> Parser<'a> {
        Parser {
            alternates_stack: Vec::new(),
            branches: vec![Vec::new()],
            chars: glob.chars().peekable(),
            prev: None,
            cur: None,
        }
    }

    fn parse(mut self) -> Result<Vec<Token>, GlobError> {
        while let Some(c) = self.bump() {
            match c {
                '?' => self.push_token(Token::Any)?,
                '*' => self.parse_star()?,
                '[' => self.parse_class()?,
                '{' => self.push_alternate()?,
                '}' => self.pop_alternate()?,
                ',' => self.parse_comma()?,
                '\\' => match self.bump() {
                    None => return Err(GlobError::DanglingEscape),
                    Some(c) => self.push_token(Token::Literal(c))?,
                },
                c => self.push_token(Token::Literal(c))?,
            }
        }
        match self.branches.len() {
            1 => Ok(self.branches.pop().unwrap_or_default()),
            // 0 cannot happen: every pop of a group leaves the branch it was opened from.
            _ => Err(GlobError::UnclosedAlternates),
        }
    }

    fn bump(&mut self) -> Option<char> {
        self.prev = self.cur;
        self.cur = self.chars.next();
        self.cur
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn push_alternate(&mut self) -> Result<(), GlobError> {
        if self.alternates_stack.len() >= MAX_ALTERNATES_DEPTH {
            return Err(GlobError::TooManyNestedAlternates);
        }
        self.alternates_stack.push(self.branches.len());
        self.branches.push(Vec::new());
        Ok(())
    }

    fn pop_alternate(&mut self) -> Result<(), GlobError> {
        let Some(start) = self.alternates_stack.pop() else {
            return Err(GlobError::UnopenedAlternates);
        };
        let start = start.min(self.branches.len());
        let alternatives = self.branches.drain(start..).collect();
        self.push_token(Token::Alternates(alternatives))
    }

    fn push_token(&mut self, token: Token) -> Result<(), GlobError> {
        match self.branches.last_mut() {
            Some(branch) => {
                branch.push(token);
                Ok(())
            }
            None => Err(GlobError::UnopenedAlternates),
        }
    }

    fn pop_token(&mut self) -> Result<Option<Token>, GlobError> {
        match self.branches.last_mut() {
            Some(branch) => Ok(branch.pop()),
            None => Err(GlobError::UnopenedAlternates),
        }
    }

    fn have_tokens(&self) -> Result<bool, GlobError> {
        match self.branches.last() {
            Some(branch) => Ok(!branch.is_empty()),
            None => Err(GlobError::UnopenedAlternates),
        }
    }

    fn parse_comma(&mut self) -> Result<(), GlobError> {
        if self.alternates_stack.is_empty() {
            self.push_token(Token::Literal(','))
        } else {
            self.branches.push(Vec::new());
            Ok(())
        }
    }

    fn parse_star(&mut self) -> Result<(), GlobError> {
        let prev = self.prev;
        if self.peek() != Some('*') {
            return self.push_token(Token::ZeroOrMore);
        }
        self.bump();
        if !self.have_tokens()? {
            if self.peek().is_some_and(|c| c != '/') {
                self.push_token(Token::ZeroOrMore)?;
                self.push_token(Token::ZeroOrMore)?;
            } else {
                self.push_token(Token::RecursivePrefix)?;
                self.bump();
            }
            return Ok(());
        }
        if prev != Some('/')
            && (self.branches.len() <= 1 || (prev != Some(',') && prev != Some('{')))
        {
            self.push_token(Token::ZeroOrMore)?;
            return self.push_token(Token::ZeroOrMore);
        }
        let is_suffix = match self.peek() {
            None => {
                self.bump();
                true
            }
            Some(',' | '}') if self.branches.len() >= 2 => true,
            Some('/') => {
                self.bump();
                false
            }
            _ => {
                self.push_token(Token::ZeroOrMore)?;
                return self.push_token(Token::ZeroOrMore);
            }
        };
        match self.pop_token()? {
            Some(Token::RecursivePrefix) => self.push_token(Token::RecursivePrefix),
            Some(Token::RecursiveSuffix) => self.push_token(Token::RecursiveSuffix),
            _ if is_suffix => self.push_token(Token::RecursiveSuffix),
            _ => self.push_token(Token::RecursiveZeroOrMore),
        }
    }

    fn parse_class(&mut self) -> Result<(), GlobError> {
        fn add_to_last_range(ranges: &mut [(char, char)], add: char) -> Result<(), GlobError> {
            match ranges.last_mut() {
                Some(r) => {
                    r.1 = add;
                    if r.1 < r.0 {
                        Err(GlobError::InvalidRange(r.0, r.1))
                    } else {
                        Ok(())
                    }
                }
                // globset's invariant: a range is only open after a first character.
                None => Err(GlobError::UnclosedClass),
            }
        }
        let mut ranges = Vec::new();
        let negated = match self.chars.peek() {
            Some('!' | '^') => {
                self.bump();
                true
            }
            _ => false,
        };
        let mut first = true;
        let mut in_range = false;
        loop {
            let Some(c) = self.bump() else {
                return Err(GlobError::UnclosedClass);
            };
            match c {
                ']' => {
                    if first {
                        ranges.push((']', ']'));
                    } else {
                        break;
                    }
                }
                '-' => {
                    if first {
                        ranges.push(('-', '-'));
                    } else if in_range {
                        add_to_last_range(&mut ranges, '-')?;
                        in_range = false;
                    } else {
                        in_range = true;
                    }
                }
                '[' if !in_range && self.peek() == Some(':') => {
                    match self.try_parse_posix_class() {
                        Some(class) => ranges.extend_from_slice(class),
                        None => ranges.push(('[', '[')),
                    }
                    in_range = false;
                }
                c => {
                    if in_range {
                        add_to_last_range(&mut ranges, c)?;
                    } else {
                        ranges.push((c, c));
                    }
                    in_range = false;
                }
            }
            first = false;
        }
        if in_range {
            ranges.push(('-', '-'));
        }
        self.push_token(Token::Class { negated, ranges })
    }

    /// After `[` with `:` next: `[:name:]`. An unknown lowercase name of at most 8 letters is
    /// consumed and yields None (as in globset); anything else restores the position.
    fn try_parse_posix_class(&mut self) -> Option<&'static [(char, char)]> {
        let saved = (self.chars.clone(), self.prev, self.cur);
        if self.bump() != Some(':') {
            (self.chars, self.prev, self.cur) = saved;
            return None;
        }
        let mut name = String::new();
        loop {
            match self.bump() {
                Some(':') if self.peek() == Some(']') => {
                    self.bump();
                    return posix_class_ranges(&name);
                }
                Some(c) if c.is_ascii_lowercase() && name.len() < 8 => name.push(c),
                _ => {
                    (self.chars, self.prev, self.cur) = saved;
                    return None;
                }
            }
        }
    }
}

/// globset's ASCII POSIX classes.
fn posix_class_ranges(name: &str) -> Option<&'static [(char, char)]> {
    Some(match name {
        "alnum" => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
        "alpha" => &[('A', 'Z'), ('a', 'z')],
        "blank" => &[('\t', '\t'), (' ', ' ')],
        "cntrl" => &[('\x00', '\x1f'), ('\x7f', '\x7f')],
        "digit" => &[('0', '9')],
        "graph" => &[('!', '~')],
        "lower" => &[('a', 'z')],
        "print" => &[(' ', '~')],
        "punct" => &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "space" => &[('\t', '\r'), (' ', ' ')],
        "upper" => &[('A', 'Z')],
        "xdigit" => &[('0', '9'), ('A', 'F'), ('a', 'f')],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        Glob::new(pattern, false).map(|g| g.is_match(path)) == Ok(true)
    }

    #[test]
    fn recursive_forms() {
        assert!(m("**", ""));
        assert!(m("**", "a/b"));
        assert!(m("**/a", "a"));
        assert!(m("**/a", "/a"));
        assert!(m("**/a", "x/y/a"));
        assert!(!m("**/a", "xa"));
        assert!(m("a/**", "a/"));
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
        assert!(!m("[é]", "é"));
        assert!(Glob::new("k", true).is_ok_and(|g| g.is_match("K") && !g.is_match("\u{212A}")));
    }

    #[test]
    fn errors() {
        assert_eq!(Glob::new("a[", false).err(), Some(GlobError::UnclosedClass));
        assert_eq!(
            Glob::new("[z-a]", false).err(),
            Some(GlobError::InvalidRange('z', 'a'))
        );
        assert_eq!(
            Glob::new("a}", false).err(),
            Some(GlobError::UnopenedAlternates)
        );
        assert_eq!(
            Glob::new("{a", false).err(),
            Some(GlobError::UnclosedAlternates)
        );
        assert_eq!(
            Glob::new("a\\", false).err(),
            Some(GlobError::DanglingEscape)
        );
        let deep = "{".repeat(101);
        assert_eq!(
            Glob::new(&deep, false).err(),
            Some(GlobError::TooManyNestedAlternates)
        );
        let long = "a".repeat(MAX_GLOB_BYTES + 1);
        assert_eq!(Glob::new(&long, false).err(), Some(GlobError::TooLong));
    }
}
