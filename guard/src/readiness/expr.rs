//! GitHub Actions expressions (`${{ ... }}` and `if:` conditions), read and evaluated in three
//! values: what an expression evaluates to when the run is known (the event, the branches, the
//! repository), and [`Val::Unknown`] for everything else (`needs.*`, `vars.*`, the actor, ...).
//!
//! The evaluation follows GitHub's documented semantics ("Evaluate expressions in workflows and
//! actions", docs.github.com/en/actions/reference/workflows-and-actions/expressions): the literals
//! `null`, booleans, numbers and single-quoted strings (`''` escapes a quote); operators `( ) [ ] .
//! ! < <= > >= == != && ||` with that precedence; `&&`/`||` return one of their operands; strings
//! compare case-insensitively; operands of different types are compared as numbers (`null` is 0,
//! booleans 1/0, a string its numeric value, `''` 0, anything else NaN, and NaN equals nothing);
//! `startsWith`, `endsWith` and `contains` ignore case. A property that an object does not have is
//! `null`; the contexts this reader does not model are open objects whose properties are unknown.
//!
//! Anything this reader cannot parse is an error; the caller treats it as "may be true".

use std::collections::BTreeMap;

/// The most tokens one expression may have (a workflow expression is short; this bounds the work
/// on a hostile file).
pub const MAX_TOKENS: usize = 4096;
/// The deepest nesting of parentheses, indexing and `!`.
pub const MAX_DEPTH: usize = 64;

/// A value, or what is known of one.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// An object. Keys are stored lower-case (property names are case-insensitive). When `open`,
    /// a key it lacks is unknown rather than `null`.
    Obj {
        fields: BTreeMap<String, Val>,
        open: bool,
    },
    /// A value the evaluation cannot know; `truthy` is what is known of its truthiness.
    Unknown {
        truthy: Option<bool>,
    },
    /// A string of which only the shape is known: `prefix`, then one or more ASCII digits when
    /// `digits` (any text otherwise), then `suffix`; both stored lower-case. `github.ref` on
    /// `pull_request` is `refs/pull/<number>/merge` with the number not yet known, so
    /// `github.ref == 'refs/heads/main'` is known to be false.
    Shape {
        prefix: String,
        digits: bool,
        suffix: String,
    },
    /// A non-empty string known to be none of these (stored lower-case): the actor of a run the
    /// publication or a person fires is never `dependabot[bot]`.
    Except(Vec<String>),
}

impl Val {
    pub const UNKNOWN: Val = Val::Unknown { truthy: None };

    pub fn str(s: &str) -> Val {
        Val::Str(s.to_owned())
    }

    /// A string known by its shape ([`Val::Shape`]).
    pub fn shape(prefix: &str, digits: bool, suffix: &str) -> Val {
        Val::Shape {
            prefix: prefix.to_lowercase(),
            digits,
            suffix: suffix.to_lowercase(),
        }
    }

    /// An object with these fields; `open` as in [`Val::Obj`].
    pub fn obj<'a>(fields: impl IntoIterator<Item = (&'a str, Val)>, open: bool) -> Val {
        Val::Obj {
            fields: fields
                .into_iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v))
                .collect(),
            open,
        }
    }

    /// `Some(truthy)` when known: `false`, `0`, `-0`, `NaN`, `''` and `null` are falsy.
    pub fn truthy(&self) -> Option<bool> {
        match self {
            Val::Null => Some(false),
            Val::Bool(b) => Some(*b),
            Val::Num(n) => Some(*n != 0.0 && !n.is_nan()),
            Val::Str(s) => Some(!s.is_empty()),
            Val::Obj { .. } => Some(true),
            Val::Unknown { truthy } => *truthy,
            Val::Shape {
                prefix,
                digits,
                suffix,
            } => (*digits || !prefix.is_empty() || !suffix.is_empty()).then_some(true),
            Val::Except(_) => Some(true),
        }
    }

    fn property(&self, name: &str) -> Val {
        match self {
            Val::Obj { fields, open } => match fields.get(&name.to_ascii_lowercase()) {
                Some(v) => v.clone(),
                None if *open => Val::UNKNOWN,
                None => Val::Null,
            },
            Val::Unknown { .. } => Val::UNKNOWN,
            // GitHub: dereferencing something that is not an object gives null.
            _ => Val::Null,
        }
    }

    /// The number GitHub coerces a value to when types differ; `None` when unknown.
    fn number(&self) -> Option<f64> {
        match self {
            Val::Null => Some(0.0),
            Val::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Val::Num(n) => Some(*n),
            Val::Str(s) => Some(parse_number(s.trim()).unwrap_or(f64::NAN)),
            Val::Obj { .. } => Some(f64::NAN),
            Val::Unknown { .. } | Val::Shape { .. } | Val::Except(_) => None,
        }
    }

    /// The string a function argument is converted to; `None` when unknown.
    fn string(&self) -> Option<String> {
        match self {
            Val::Null => Some(String::new()),
            Val::Bool(b) => Some(b.to_string()),
            Val::Num(n) => Some(if n.fract() == 0.0 && n.abs() < 1e15 {
                format!("{n:.0}")
            } else {
                n.to_string()
            }),
            Val::Str(s) => Some(s.clone()),
            Val::Obj { .. } => Some("Object".to_owned()),
            Val::Unknown { .. } | Val::Shape { .. } | Val::Except(_) => None,
        }
    }
}

impl Val {
    /// For a [`Val::Shape`]: whether some string of the shape equals `text` (case-insensitively).
    fn shape_could_be(&self, text: &str) -> Option<bool> {
        let Val::Shape {
            prefix,
            digits,
            suffix,
        } = self
        else {
            return None;
        };
        let text = text.to_lowercase();
        let Some(middle) = text
            .strip_prefix(prefix.as_str())
            .and_then(|rest| rest.strip_suffix(suffix.as_str()))
        else {
            return Some(false);
        };
        if text.len() < prefix.len() + suffix.len() {
            return Some(false);
        }
        Some(!*digits || (!middle.is_empty() && middle.bytes().all(|b| b.is_ascii_digit())))
    }

    /// For a [`Val::Shape`]: `startsWith`, `endsWith` or `contains` of `needle`, when known.
    fn shape_function(&self, function: &str, needle: &str) -> Option<Val> {
        let Val::Shape {
            prefix,
            digits,
            suffix,
        } = self
        else {
            return None;
        };
        let needle = needle.to_lowercase();
        let known = |b: bool| Some(if b { Val::Bool(true) } else { Val::UNKNOWN });
        match function {
            "startswith" => {
                if prefix.starts_with(&needle) {
                    return Some(Val::Bool(true));
                }
                let Some(rest) = needle.strip_prefix(prefix.as_str()) else {
                    return Some(Val::Bool(false));
                };
                if !*digits {
                    return known(false);
                }
                // rest: digits, then the start of the suffix.
                let tail = rest.trim_start_matches(|c: char| c.is_ascii_digit());
                let possible =
                    tail.is_empty() || (tail.len() < rest.len() && suffix.starts_with(tail));
                Some(if possible {
                    Val::UNKNOWN
                } else {
                    Val::Bool(false)
                })
            }
            "endswith" => {
                if suffix.ends_with(&needle) {
                    return Some(Val::Bool(true));
                }
                let Some(rest) = needle.strip_suffix(suffix.as_str()) else {
                    return Some(Val::Bool(false));
                };
                if !*digits {
                    return known(false);
                }
                let head = rest.trim_end_matches(|c: char| c.is_ascii_digit());
                let possible =
                    head.is_empty() || (head.len() < rest.len() && prefix.ends_with(head));
                Some(if possible {
                    Val::UNKNOWN
                } else {
                    Val::Bool(false)
                })
            }
            _ => {
                if prefix.contains(&needle) || suffix.contains(&needle) {
                    return Some(Val::Bool(true));
                }
                if !*digits {
                    return known(false);
                }
                Some(if shape_may_contain(prefix, suffix, &needle) {
                    Val::UNKNOWN
                } else {
                    Val::Bool(false)
                })
            }
        }
    }
}

/// Whether `prefix`, one or more digits, `suffix` can contain `needle`: it is the end of the
/// prefix, then digits, then the start of the suffix (the digits non-empty when it spans both).
fn shape_may_contain(prefix: &str, suffix: &str, needle: &str) -> bool {
    let chars: Vec<(usize, char)> = needle.char_indices().collect();
    let bounds: Vec<usize> = chars
        .iter()
        .map(|(i, _)| *i)
        .chain(std::iter::once(needle.len()))
        .collect();
    for (a, &i) in bounds.iter().enumerate() {
        for &j in bounds.iter().skip(a) {
            let (Some(p), Some(d), Some(s)) = (needle.get(..i), needle.get(i..j), needle.get(j..))
            else {
                continue;
            };
            if prefix.ends_with(p)
                && d.bytes().all(|b| b.is_ascii_digit())
                && suffix.starts_with(s)
                && (!d.is_empty() || p.is_empty() || s.is_empty())
            {
                return true;
            }
        }
    }
    false
}

fn parse_number(text: &str) -> Option<f64> {
    if text.is_empty() {
        return Some(0.0);
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    if text
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return text.parse::<f64>().ok();
    }
    None
}

/// What an expression can be asked about its environment.
pub trait Scope {
    /// The context named `name` (lower-case), or `None` when there is no such context.
    fn context(&self, name: &str) -> Option<Val>;
    /// The value of a status function (`success`, `always`, `failure`, `cancelled`).
    fn status(&self, function: &str) -> Val;
}

/// A parse error, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExprError(pub String);

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Str(String),
    Ident(String),
    Punct(&'static str),
}

const PUNCT: [&str; 14] = [
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "[", "]", ",",
];

fn tokenize(text: &str) -> Result<Vec<Token>, ExprError> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if tokens.len() > MAX_TOKENS {
            return Err(ExprError(format!("more than {MAX_TOKENS} tokens")));
        }
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(ExprError("unterminated string".into())),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        s.push(other);
                        i += 1;
                    }
                }
            }
            tokens.push(Token::Str(s));
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            i += 1;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_')
            {
                i += 1;
            }
            let text: String = chars.get(start..i).unwrap_or_default().iter().collect();
            let n =
                parse_number(&text).ok_or_else(|| ExprError(format!("invalid number `{text}`")))?;
            tokens.push(Token::Num(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            {
                i += 1;
            }
            tokens.push(Token::Ident(
                chars.get(start..i).unwrap_or_default().iter().collect(),
            ));
        } else if c == '.' {
            tokens.push(Token::Punct("."));
            i += 1;
        } else if c == '*' {
            tokens.push(Token::Punct("*"));
            i += 1;
        } else {
            let rest: String = chars
                .get(i..(i + 2).min(chars.len()))
                .unwrap_or_default()
                .iter()
                .collect();
            let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) else {
                return Err(ExprError(format!("unexpected character `{c}`")));
            };
            tokens.push(Token::Punct(p));
            i += p.len();
        }
    }
    Ok(tokens)
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Lit(Val),
    Context(String),
    Property(Box<Expr>, String),
    /// `.*`: every property (always unknown here).
    Wildcard(Box<Expr>),
    Index(Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
    Not(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn eat(&mut self, punct: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Punct(p)) if *p == punct);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, punct: &str) -> Result<(), ExprError> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(ExprError(format!("expected `{punct}`")))
        }
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(ExprError(format!("nested deeper than {MAX_DEPTH}")))
        } else {
            Ok(())
        }
    }

    fn binary(
        &mut self,
        ops: &[&'static str],
        next: fn(&mut Parser) -> Result<Expr, ExprError>,
    ) -> Result<Expr, ExprError> {
        let mut left = next(self)?;
        'outer: loop {
            for op in ops {
                if self.eat(op) {
                    let right = next(self)?;
                    left = Expr::Binary(op, Box::new(left), Box::new(right));
                    continue 'outer;
                }
            }
            return Ok(left);
        }
    }

    fn or(&mut self) -> Result<Expr, ExprError> {
        self.binary(&["||"], Parser::and)
    }

    fn and(&mut self) -> Result<Expr, ExprError> {
        self.binary(&["&&"], Parser::equality)
    }

    fn equality(&mut self) -> Result<Expr, ExprError> {
        self.binary(&["==", "!="], Parser::comparison)
    }

    fn comparison(&mut self) -> Result<Expr, ExprError> {
        self.binary(&["<=", ">=", "<", ">"], Parser::unary)
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        if self.eat("!") {
            self.enter()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, ExprError> {
        let mut expr = self.primary()?;
        loop {
            if self.eat(".") {
                match self.next() {
                    Some(Token::Ident(name)) => expr = Expr::Property(Box::new(expr), name),
                    Some(Token::Punct("*")) => expr = Expr::Wildcard(Box::new(expr)),
                    _ => return Err(ExprError("expected a property name after `.`".into())),
                }
            } else if self.eat("[") {
                self.enter()?;
                let index = self.or()?;
                self.depth -= 1;
                self.expect("]")?;
                expr = Expr::Index(Box::new(expr), Box::new(index));
            } else {
                return Ok(expr);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        match self.next() {
            Some(Token::Num(n)) => Ok(Expr::Lit(Val::Num(n))),
            Some(Token::Str(s)) => Ok(Expr::Lit(Val::Str(s))),
            Some(Token::Ident(name)) => match name.as_str() {
                "true" => Ok(Expr::Lit(Val::Bool(true))),
                "false" => Ok(Expr::Lit(Val::Bool(false))),
                "null" => Ok(Expr::Lit(Val::Null)),
                _ if self.eat("(") => {
                    self.enter()?;
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.or()?);
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    self.depth -= 1;
                    Ok(Expr::Call(name.to_ascii_lowercase(), args))
                }
                _ => Ok(Expr::Context(name.to_ascii_lowercase())),
            },
            Some(Token::Punct("(")) => {
                self.enter()?;
                let inner = self.or()?;
                self.depth -= 1;
                self.expect(")")?;
                Ok(inner)
            }
            Some(other) => Err(ExprError(format!("unexpected {other:?}"))),
            None => Err(ExprError("unexpected end of expression".into())),
        }
    }
}

/// Parse one expression (the text between `${{` and `}}`, or a whole `if:`).
pub fn parse(text: &str) -> Result<Expr, ExprError> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        at: 0,
        depth: 0,
    };
    let expr = parser.or()?;
    if parser.at != parser.tokens.len() {
        return Err(ExprError("unexpected text after the expression".into()));
    }
    Ok(expr)
}

/// The function names GitHub defines.
const FUNCTIONS: [&str; 13] = [
    "contains",
    "startswith",
    "endswith",
    "format",
    "join",
    "tojson",
    "fromjson",
    "hashfiles",
    "success",
    "always",
    "cancelled",
    "failure",
    "case",
];

/// Whether the expression calls one of the four status functions (`success()`, `failure()`,
/// `always()`, `cancelled()`). GitHub adds its implicit `success() &&` to a condition only when
/// it calls none of them: `success() || x` runs when `x` is true although a needed job was
/// skipped.
pub fn calls_status(expr: &Expr) -> bool {
    let mut found = false;
    walk(expr, &mut |e| {
        if let Expr::Call(name, _) = e
            && matches!(
                name.as_str(),
                "success" | "always" | "failure" | "cancelled"
            )
        {
            found = true;
        }
    });
    found
}

/// The secrets an expression reads: `secrets.NAME` and `secrets['NAME']` give the name (upper
/// case), the context as a whole (`toJSON(secrets)`, `secrets[x]`) gives `*`.
/// `secrets.GITHUB_TOKEN`, the run's own token, is not counted.
pub fn secrets_read(expr: &Expr) -> Vec<String> {
    let mut names = Vec::new();
    collect_secrets(expr, &mut names);
    names.retain(|n| n != "GITHUB_TOKEN");
    names
}

fn collect_secrets(expr: &Expr, names: &mut Vec<String>) {
    let is_secrets = |e: &Expr| matches!(e, Expr::Context(c) if c == "secrets");
    match expr {
        Expr::Property(inner, name) if is_secrets(inner) => names.push(name.to_ascii_uppercase()),
        Expr::Index(inner, index) if is_secrets(inner) => match index.as_ref() {
            Expr::Lit(Val::Str(name)) => names.push(name.to_ascii_uppercase()),
            other => {
                names.push("*".to_owned());
                collect_secrets(other, names);
            }
        },
        Expr::Context(c) if c == "secrets" => names.push("*".to_owned()),
        Expr::Lit(_) | Expr::Context(_) => {}
        Expr::Property(inner, _) | Expr::Wildcard(inner) | Expr::Not(inner) => {
            collect_secrets(inner, names);
        }
        Expr::Index(a, b) | Expr::Binary(_, a, b) => {
            collect_secrets(a, names);
            collect_secrets(b, names);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| collect_secrets(a, names)),
    }
}

/// Every context path an expression reads, lower-case and dotted (`steps.pr.outputs.sha`; an
/// index by a literal string reads as a property, any other index ends the path).
pub fn contexts_read(expr: &Expr, visit: &mut dyn FnMut(&str)) {
    fn path(expr: &Expr) -> Option<String> {
        match expr {
            Expr::Context(name) => Some(name.to_ascii_lowercase()),
            Expr::Property(inner, name) => {
                path(inner).map(|p| format!("{p}.{}", name.to_ascii_lowercase()))
            }
            Expr::Index(inner, index) => match index.as_ref() {
                Expr::Lit(Val::Str(name)) => {
                    path(inner).map(|p| format!("{p}.{}", name.to_ascii_lowercase()))
                }
                _ => path(inner),
            },
            Expr::Wildcard(inner) => path(inner),
            _ => None,
        }
    }
    match expr {
        Expr::Lit(_) => {}
        Expr::Context(_) | Expr::Property(..) | Expr::Wildcard(_) => {
            if let Some(p) = path(expr) {
                visit(&p);
            }
        }
        Expr::Index(inner, index) => {
            match path(expr) {
                Some(p) => visit(&p),
                None => contexts_read(inner, visit),
            }
            contexts_read(index, visit);
        }
        Expr::Not(inner) => contexts_read(inner, visit),
        Expr::Binary(_, a, b) => {
            contexts_read(a, visit);
            contexts_read(b, visit);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| contexts_read(a, visit)),
    }
}

fn walk(expr: &Expr, visit: &mut dyn FnMut(&Expr)) {
    visit(expr);
    match expr {
        Expr::Lit(_) | Expr::Context(_) => {}
        Expr::Property(inner, _) | Expr::Wildcard(inner) | Expr::Not(inner) => walk(inner, visit),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => {
            walk(a, visit);
            walk(b, visit);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| walk(a, visit)),
    }
}

/// Evaluate `expr` in `scope`. An unknown context or function is an error.
pub fn eval(expr: &Expr, scope: &dyn Scope) -> Result<Val, ExprError> {
    Ok(match expr {
        Expr::Lit(v) => v.clone(),
        Expr::Context(name) => scope
            .context(name)
            .ok_or_else(|| ExprError(format!("unknown context `{name}`")))?,
        Expr::Property(inner, name) => eval(inner, scope)?.property(name),
        Expr::Wildcard(inner) => {
            eval(inner, scope)?;
            Val::UNKNOWN
        }
        Expr::Index(inner, index) => {
            let object = eval(inner, scope)?;
            match eval(index, scope)? {
                Val::Str(name) => object.property(&name),
                Val::Unknown { .. } => Val::UNKNOWN,
                // Arrays are not modelled: an index into one is unknown; into anything else, null.
                _ if matches!(object, Val::Unknown { .. }) => Val::UNKNOWN,
                _ => Val::Null,
            }
        }
        Expr::Not(inner) => match eval(inner, scope)?.truthy() {
            Some(b) => Val::Bool(!b),
            None => Val::UNKNOWN,
        },
        Expr::Binary(op, left, right) => {
            let l = eval(left, scope)?;
            let r = eval(right, scope)?;
            binary(op, l, r)
        }
        Expr::Call(name, args) => call(name, args, scope)?,
    })
}

fn binary(op: &str, l: Val, r: Val) -> Val {
    match op {
        "&&" => match l.truthy() {
            Some(false) => l,
            Some(true) => r,
            None => Val::Unknown {
                truthy: (r.truthy() == Some(false)).then_some(false),
            },
        },
        "||" => match l.truthy() {
            Some(true) => l,
            Some(false) => r,
            None => Val::Unknown {
                truthy: (r.truthy() == Some(true)).then_some(true),
            },
        },
        "==" | "!="
            if matches!(
                (&l, &r),
                (Val::Shape { .. } | Val::Except(_), Val::Str(_))
                    | (Val::Str(_), Val::Shape { .. } | Val::Except(_))
            ) =>
        {
            let could = match (&l, &r) {
                (Val::Except(not), Val::Str(text)) | (Val::Str(text), Val::Except(not)) => {
                    Some(!not.contains(&text.to_lowercase()))
                }
                (shape @ Val::Shape { .. }, Val::Str(text))
                | (Val::Str(text), shape @ Val::Shape { .. }) => shape.shape_could_be(text),
                _ => None,
            };
            match could {
                Some(false) => Val::Bool(op == "!="),
                _ => Val::UNKNOWN,
            }
        }
        _ => match compare(&l, &r) {
            None => Val::UNKNOWN,
            Some(ordering) => Val::Bool(match op {
                "==" => ordering == Some(std::cmp::Ordering::Equal),
                "!=" => ordering != Some(std::cmp::Ordering::Equal),
                "<" => ordering == Some(std::cmp::Ordering::Less),
                ">" => ordering == Some(std::cmp::Ordering::Greater),
                "<=" => matches!(
                    ordering,
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                ),
                ">=" => matches!(
                    ordering,
                    Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
                ),
                _ => false,
            }),
        },
    }
}

/// `None` when unknown; `Some(None)` when the two are unordered (NaN, two objects).
fn compare(l: &Val, r: &Val) -> Option<Option<std::cmp::Ordering>> {
    match (l, r) {
        (Val::Unknown { .. } | Val::Shape { .. } | Val::Except(_), _)
        | (_, Val::Unknown { .. } | Val::Shape { .. } | Val::Except(_)) => None,
        (Val::Str(a), Val::Str(b)) => Some(Some(a.to_lowercase().cmp(&b.to_lowercase()))),
        (Val::Null, Val::Null) => Some(Some(std::cmp::Ordering::Equal)),
        (Val::Bool(a), Val::Bool(b)) => Some(Some(a.cmp(b))),
        (Val::Obj { .. }, Val::Obj { .. }) => Some(None),
        _ => {
            let (a, b) = (l.number()?, r.number()?);
            Some(a.partial_cmp(&b))
        }
    }
}

fn call(name: &str, args: &[Expr], scope: &dyn Scope) -> Result<Val, ExprError> {
    if !FUNCTIONS.contains(&name) {
        return Err(ExprError(format!("unknown function `{name}`")));
    }
    if matches!(name, "success" | "always" | "failure" | "cancelled") {
        if !args.is_empty() {
            return Err(ExprError(format!("`{name}()` takes no argument")));
        }
        return Ok(scope.status(name));
    }
    let values = args
        .iter()
        .map(|a| eval(a, scope))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(match (name, values.as_slice()) {
        ("startswith" | "endswith" | "contains", [a, b]) => {
            if matches!(a, Val::Obj { .. }) {
                // contains(array, item): arrays are not modelled.
                return Ok(Val::UNKNOWN);
            }
            if let (Val::Shape { .. }, Some(needle)) = (a, b.string())
                && let Some(known) = a.shape_function(name, &needle)
            {
                return Ok(known);
            }
            match (a.string(), b.string()) {
                (Some(a), Some(b)) => {
                    let (a, b) = (a.to_lowercase(), b.to_lowercase());
                    Val::Bool(match name {
                        "startswith" => a.starts_with(&b),
                        "endswith" => a.ends_with(&b),
                        _ => a.contains(&b),
                    })
                }
                _ => Val::UNKNOWN,
            }
        }
        ("startswith" | "endswith" | "contains", _) => {
            return Err(ExprError(format!("`{name}` takes two arguments")));
        }
        _ => Val::UNKNOWN,
    })
}

/// The expressions in a string value: the bodies of its `${{ ... }}` (quotes inside an expression
/// respected). `Err` when one is not closed.
pub fn embedded(text: &str) -> Result<Vec<&str>, ExprError> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        let body = rest.get(start + 3..).unwrap_or_default();
        let mut in_string = false;
        let mut end = None;
        let bytes = body.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes.get(i) {
                Some(b'\'') => in_string = !in_string,
                Some(b'}') if !in_string && bytes.get(i + 1) == Some(&b'}') => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let end = end.ok_or_else(|| ExprError("`${{` without `}}`".into()))?;
        out.push(body.get(..end).unwrap_or_default());
        rest = body.get(end + 2..).unwrap_or_default();
    }
    Ok(out)
}

/// An `if:` condition as GitHub reads it: a YAML boolean or number as itself; a string that is
/// exactly one `${{ ... }}` as that expression; a string with `${{` elsewhere as a template, whose
/// (non-empty) result is always truthy; any other string as an expression.
pub fn condition(text: &str, scope: &dyn Scope) -> Result<Val, ExprError> {
    let trimmed = text.trim();
    let bodies = embedded(trimmed)?;
    match bodies.as_slice() {
        [] => eval(&parse(trimmed)?, scope),
        [body] if trimmed.starts_with("${{") && trimmed.ends_with("}}") => {
            eval(&parse(body)?, scope)
        }
        _ => {
            // A template: the expressions still have to parse.
            for body in bodies {
                parse(body)?;
            }
            Ok(Val::Unknown { truthy: Some(true) })
        }
    }
}
