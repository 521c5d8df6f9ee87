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
    /// An array. `filtered` for the result of `.*` (an "object filter"): a property of it is the
    /// property of each element that has one.
    Arr {
        items: Vec<Val>,
        filtered: bool,
    },
    /// A boolean whose value is not known (a payload's `draft`): `draft == 'false'` compares a
    /// boolean with a string as numbers, `0` or `1` with `NaN`, and is known to be false.
    AnyBool,
    /// A number whose value is not known (a pull request's `number`).
    AnyNum,
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
            Val::Arr { .. } => Some(true),
            Val::AnyBool | Val::AnyNum => None,
        }
    }

    /// Whether the value is known exactly (a literal, or an object or array of known values).
    pub fn is_known(&self) -> bool {
        match self {
            Val::Null | Val::Bool(_) | Val::Num(_) | Val::Str(_) => true,
            Val::Obj { fields, open } => !open && fields.values().all(Val::is_known),
            Val::Arr { items, .. } => items.iter().all(Val::is_known),
            _ => false,
        }
    }

    /// A JSON value as an expression value (`fromJSON`, a matrix written in the workflow).
    pub fn from_json(value: &serde_json::Value) -> Val {
        match value {
            serde_json::Value::Null => Val::Null,
            serde_json::Value::Bool(b) => Val::Bool(*b),
            serde_json::Value::Number(n) => n.as_f64().map_or(Val::UNKNOWN, Val::Num),
            serde_json::Value::String(s) => Val::Str(s.clone()),
            serde_json::Value::Array(items) => Val::Arr {
                items: items.iter().map(Val::from_json).collect(),
                filtered: false,
            },
            serde_json::Value::Object(map) => Val::Obj {
                fields: map
                    .iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), Val::from_json(v)))
                    .collect(),
                open: false,
            },
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
            Val::Arr {
                items,
                filtered: true,
            } => {
                let mut out = Vec::new();
                for item in items {
                    match item.property(name) {
                        Val::Null => {}
                        Val::Unknown { .. } => return Val::UNKNOWN,
                        v => out.push(v),
                    }
                }
                Val::Arr {
                    items: out,
                    filtered: true,
                }
            }
            // GitHub: dereferencing something that is not an object gives null.
            _ => Val::Null,
        }
    }

    /// `.*`: the values of an object or the elements of an array, as a filtered array; of
    /// anything else an empty one.
    fn wildcard(&self) -> Val {
        let items = match self {
            Val::Obj { open: true, .. } | Val::Unknown { .. } => return Val::UNKNOWN,
            Val::Obj { fields, .. } => fields.values().cloned().collect(),
            Val::Arr {
                items,
                filtered: false,
            } => items.clone(),
            Val::Arr {
                items,
                filtered: true,
            } => {
                let mut out = Vec::new();
                for item in items {
                    match item.wildcard() {
                        Val::Arr { items, .. } => out.extend(items),
                        _ => return Val::UNKNOWN,
                    }
                }
                out
            }
            _ => Vec::new(),
        };
        Val::Arr {
            items,
            filtered: true,
        }
    }

    /// The number GitHub coerces a value to when types differ; `None` when unknown.
    fn number(&self) -> Option<f64> {
        match self {
            Val::Null => Some(0.0),
            Val::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Val::Num(n) => Some(*n),
            Val::Str(s) => Some(parse_number(s.trim()).unwrap_or(f64::NAN)),
            Val::Obj { .. } | Val::Arr { .. } => Some(f64::NAN),
            Val::Unknown { .. }
            | Val::Shape { .. }
            | Val::Except(_)
            | Val::AnyBool
            | Val::AnyNum => None,
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
            Val::Arr { .. } => Some("Array".to_owned()),
            Val::Unknown { .. }
            | Val::Shape { .. }
            | Val::Except(_)
            | Val::AnyBool
            | Val::AnyNum => None,
        }
    }

    /// The concrete values a typed unknown can take (`AnyBool`: both), or `None`.
    fn cases(&self) -> Option<Vec<Val>> {
        match self {
            Val::AnyBool => Some(vec![Val::Bool(false), Val::Bool(true)]),
            _ => None,
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
    /// Every value a context path (dotted, lower-case: `matrix.os`) can take in the job, when
    /// the scope enumerates them: a matrix's values, `null` where a combination lacks the key.
    fn choices(&self, _path: &str) -> Option<Vec<Val>> {
        None
    }
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
        Expr::Wildcard(inner) => eval(inner, scope)?.wildcard(),
        Expr::Index(inner, index) => {
            let object = eval(inner, scope)?;
            index_of(&object, &eval(index, scope)?)
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

/// `object[index]`: a property by name, an array element by position (a filtered array maps a
/// name over its elements); `null` for anything else.
fn index_of(object: &Val, index: &Val) -> Val {
    match (object, index) {
        (
            _,
            Val::Unknown { .. } | Val::Shape { .. } | Val::Except(_) | Val::AnyBool | Val::AnyNum,
        )
        | (Val::Unknown { .. }, _) => Val::UNKNOWN,
        (Val::Arr { items, .. }, Val::Num(n)) => {
            if n.fract() == 0.0 && *n >= 0.0 {
                items.get(*n as usize).cloned().unwrap_or(Val::Null)
            } else {
                Val::Null
            }
        }
        (Val::Arr { filtered: true, .. } | Val::Obj { .. }, Val::Str(name)) => {
            object.property(name)
        }
        _ => Val::Null,
    }
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

/// `None` when unknown; `Some(None)` when the two are unordered (NaN, two objects or arrays,
/// which GitHub compares by identity).
fn compare(l: &Val, r: &Val) -> Option<Option<std::cmp::Ordering>> {
    let agreed = |results: Vec<Option<Option<std::cmp::Ordering>>>| {
        let first = results.first().copied().flatten()?;
        results.iter().all(|r| *r == Some(first)).then_some(first)
    };
    if let Some(cases) = l.cases() {
        return agreed(cases.iter().map(|c| compare(c, r)).collect());
    }
    if let Some(cases) = r.cases() {
        return agreed(cases.iter().map(|c| compare(l, c)).collect());
    }
    match (l, r) {
        // A number against a value whose number is NaN is unordered whatever the number is.
        (Val::AnyNum, other) | (other, Val::AnyNum) => match other.number() {
            Some(n) if n.is_nan() => Some(None),
            _ => None,
        },
        (Val::Unknown { .. } | Val::Shape { .. } | Val::Except(_), _)
        | (_, Val::Unknown { .. } | Val::Shape { .. } | Val::Except(_)) => None,
        (Val::Str(a), Val::Str(b)) => Some(Some(a.to_lowercase().cmp(&b.to_lowercase()))),
        (Val::Null, Val::Null) => Some(Some(std::cmp::Ordering::Equal)),
        (Val::Bool(a), Val::Bool(b)) => Some(Some(a.cmp(b))),
        (Val::Obj { .. } | Val::Arr { .. }, Val::Obj { .. } | Val::Arr { .. }) => Some(None),
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
    check_arity(name, args.len())?;
    if name == "case" {
        return case(args, scope);
    }
    let values = args
        .iter()
        .map(|a| eval(a, scope))
        .collect::<Result<Vec<_>, _>>()?;
    apply(name, &values)
}

/// The argument counts GitHub's expression docs give each function ("Functions").
fn check_arity(name: &str, count: usize) -> Result<(), ExprError> {
    let ok = match name {
        "contains" | "startswith" | "endswith" => count == 2,
        "format" => count >= 1,
        "join" => count == 1 || count == 2,
        "tojson" | "fromjson" => count == 1,
        "hashfiles" => count >= 1,
        // case(pred1, val1, ..., default): pairs and a default.
        "case" => count >= 3 && count % 2 == 1,
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ExprError(format!(
            "`{name}` does not take {count} argument(s)"
        )))
    }
}

/// `case(pred1, val1, pred2, val2, ..., default)`: the value of the first predicate that is
/// true, else the default; a predicate not known makes the result unknown unless every value it
/// could select is the same.
fn case(args: &[Expr], scope: &dyn Scope) -> Result<Val, ExprError> {
    let mut candidates: Vec<Val> = Vec::new();
    let mut pairs = args.chunks_exact(2);
    for pair in pairs.by_ref() {
        let (Some(predicate), Some(value)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        match eval(predicate, scope)?.truthy() {
            Some(true) => {
                candidates.push(eval(value, scope)?);
                return Ok(merge(candidates));
            }
            Some(false) => {}
            None => candidates.push(eval(value, scope)?),
        }
    }
    // The default is the one argument the pairs leave.
    if let Some(default) = pairs.remainder().first() {
        candidates.push(eval(default, scope)?);
    }
    Ok(merge(candidates))
}

/// One of `candidates`: itself when they are all the same known value; else unknown, with the
/// truthiness they share.
fn merge(candidates: Vec<Val>) -> Val {
    let Some(first) = candidates.first() else {
        return Val::UNKNOWN;
    };
    if candidates.iter().all(|c| c == first) {
        return first.clone();
    }
    let truthy = first.truthy();
    Val::Unknown {
        truthy: truthy.filter(|t| candidates.iter().all(|c| c.truthy() == Some(*t))),
    }
}

/// A function over evaluated arguments ("Functions" in GitHub's expression docs).
fn apply(name: &str, values: &[Val]) -> Result<Val, ExprError> {
    Ok(match (name, values) {
        ("contains", [Val::Arr { items, .. }, item]) => {
            // contains(array, item): an element equal to the item (`==`'s coercions).
            let mut unknown = false;
            for element in items {
                match binary("==", element.clone(), item.clone()).truthy() {
                    Some(true) => return Ok(Val::Bool(true)),
                    Some(false) => {}
                    None => unknown = true,
                }
            }
            if unknown {
                Val::UNKNOWN
            } else {
                Val::Bool(false)
            }
        }
        ("startswith" | "endswith" | "contains", [a, b]) => {
            if matches!(a, Val::Obj { open: true, .. } | Val::Unknown { .. }) {
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
        ("format", [template, rest @ ..]) => {
            let (Some(template), Some(args)) = (
                template.string(),
                rest.iter()
                    .map(Val::string)
                    .collect::<Option<Vec<String>>>(),
            ) else {
                return Ok(Val::UNKNOWN);
            };
            Val::Str(format_text(&template, &args)?)
        }
        ("join", [array, rest @ ..]) => {
            let separator = match rest.first() {
                None => Some(",".to_owned()),
                Some(s) => s.string(),
            };
            let Some(separator) = separator else {
                return Ok(Val::UNKNOWN);
            };
            match array {
                Val::Arr { items, .. } => {
                    match items.iter().map(Val::string).collect::<Option<Vec<_>>>() {
                        Some(parts) => Val::Str(parts.join(&separator)),
                        None => Val::UNKNOWN,
                    }
                }
                other => other.string().map_or(Val::UNKNOWN, Val::Str),
            }
        }
        ("tojson", [value]) => match to_json(value) {
            Some(json) => Val::Str(
                serde_json::to_string_pretty(&json)
                    .map_err(|e| ExprError(format!("toJSON: {e}")))?,
            ),
            None => Val::Unknown { truthy: Some(true) },
        },
        ("fromjson", [Val::Str(text)]) => Val::from_json(
            &serde_json::from_str::<serde_json::Value>(text)
                .map_err(|e| ExprError(format!("fromJSON of an invalid JSON text: {e}")))?,
        ),
        ("fromjson", _) => Val::UNKNOWN,
        // The files' hash at run time, or '' when none matches.
        ("hashfiles", _) => Val::UNKNOWN,
        _ => Val::UNKNOWN,
    })
}

/// `format`'s template: `{N}` replaced by argument N, `{{` and `}}` escape braces; an index out
/// of range or a lone brace is an error (the run fails).
fn format_text(template: &str, args: &[String]) -> Result<String, ExprError> {
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut digits = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(d) if d.is_ascii_digit() => digits.push(d),
                        _ => return Err(ExprError("format: an invalid `{N}`".into())),
                    }
                }
                let index: usize = digits
                    .parse()
                    .map_err(|_| ExprError("format: an invalid `{N}`".into()))?;
                let arg = args
                    .get(index)
                    .ok_or_else(|| ExprError(format!("format: no argument {index}")))?;
                out.push_str(arg);
            }
            '}' => return Err(ExprError("format: a lone `}`".into())),
            other => out.push(other),
        }
    }
    Ok(out)
}

fn to_json(value: &Val) -> Option<serde_json::Value> {
    Some(match value {
        Val::Null => serde_json::Value::Null,
        Val::Bool(b) => serde_json::Value::Bool(*b),
        Val::Num(n) => serde_json::Number::from_f64(*n).map_or(serde_json::Value::Null, Into::into),
        Val::Str(s) => serde_json::Value::String(s.clone()),
        Val::Arr { items, .. } => {
            serde_json::Value::Array(items.iter().map(to_json).collect::<Option<_>>()?)
        }
        Val::Obj {
            fields,
            open: false,
        } => serde_json::Value::Object(
            fields
                .iter()
                .map(|(k, v)| Some((k.clone(), to_json(v)?)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// The values an expression can take over the choices its scope enumerates
/// ([`Scope::choices`]: a matrix's values), at most [`MAX_CHOICES`]; `None` when one of them is
/// not known.
pub fn possible(expr: &Expr, scope: &dyn Scope) -> Result<Option<Vec<Val>>, ExprError> {
    let single = |v: Val| Ok(v.is_known().then(|| vec![v]));
    match expr {
        Expr::Lit(v) => single(v.clone()),
        Expr::Context(_) | Expr::Property(..) | Expr::Index(..) => {
            if let Some(path) = literal_path(expr)
                && let Some(choices) = scope.choices(&path)
            {
                return Ok(Some(choices));
            }
            single(eval(expr, scope)?)
        }
        Expr::Binary(op @ ("&&" | "||"), left, right) => {
            let lefts = match possible(left, scope)? {
                Some(lefts) => lefts,
                // `a && b` with `a` not known is `b`, or `a` when falsy: a falsy value, which an
                // enclosing `||` replaces and which otherwise reads as `null` (an empty string).
                None if *op == "&&" => {
                    let Some(mut rights) = possible(right, scope)? else {
                        return Ok(None);
                    };
                    rights.push(Val::Null);
                    return Ok(bounded(rights));
                }
                None => return Ok(None),
            };
            let mut out = Vec::new();
            let mut rights: Option<Option<Vec<Val>>> = None;
            for l in lefts {
                let take_left = match l.truthy() {
                    Some(t) => t == (*op == "||"),
                    None => return Ok(None),
                };
                if take_left {
                    out.push(l);
                } else {
                    if rights.is_none() {
                        rights = Some(possible(right, scope)?);
                    }
                    match rights.as_ref() {
                        Some(Some(values)) => out.extend(values.iter().cloned()),
                        _ => return Ok(None),
                    }
                }
            }
            Ok(bounded(out))
        }
        Expr::Call(name, args) if name == "case" => {
            check_arity(name, args.len())?;
            let mut out = Vec::new();
            let mut pairs = args.chunks_exact(2);
            for pair in pairs.by_ref() {
                let (Some(predicate), Some(value)) = (pair.first(), pair.get(1)) else {
                    continue;
                };
                let Some(predicates) = possible(predicate, scope)? else {
                    return Ok(None);
                };
                let truths: Vec<Option<bool>> = predicates.iter().map(Val::truthy).collect();
                if truths.iter().any(|t| t != &Some(false)) {
                    let Some(values) = possible(value, scope)? else {
                        return Ok(None);
                    };
                    out.extend(values);
                }
                if truths.iter().all(|t| t == &Some(true)) {
                    return Ok(bounded(out));
                }
            }
            if let Some(default) = pairs.remainder().first() {
                let Some(values) = possible(default, scope)? else {
                    return Ok(None);
                };
                out.extend(values);
            }
            Ok(bounded(out))
        }
        Expr::Call(name, args)
            if !matches!(
                name.as_str(),
                "success" | "always" | "failure" | "cancelled"
            ) =>
        {
            if !FUNCTIONS.contains(&name.as_str()) {
                return Err(ExprError(format!("unknown function `{name}`")));
            }
            check_arity(name, args.len())?;
            let mut combos: Vec<Vec<Val>> = vec![Vec::new()];
            for arg in args {
                let Some(values) = possible(arg, scope)? else {
                    return Ok(None);
                };
                combos = product(combos, &values)?;
            }
            let mut out = Vec::new();
            for combo in combos {
                let v = apply(name, &combo)?;
                if !v.is_known() {
                    return Ok(None);
                }
                out.push(v);
            }
            Ok(bounded(out))
        }
        Expr::Binary(op, left, right) => {
            let (Some(lefts), Some(rights)) = (possible(left, scope)?, possible(right, scope)?)
            else {
                return Ok(None);
            };
            let mut out = Vec::new();
            for l in &lefts {
                for r in &rights {
                    let v = binary(op, l.clone(), r.clone());
                    if !v.is_known() {
                        return Ok(None);
                    }
                    out.push(v);
                }
            }
            Ok(bounded(out))
        }
        Expr::Not(inner) => {
            let Some(values) = possible(inner, scope)? else {
                return Ok(None);
            };
            Ok(values
                .iter()
                .map(|v| v.truthy().map(|t| Val::Bool(!t)))
                .collect())
        }
        _ => single(eval(expr, scope)?),
    }
}

/// The most values [`possible`] enumerates.
pub const MAX_CHOICES: usize = 256;

fn bounded(mut values: Vec<Val>) -> Option<Vec<Val>> {
    let mut unique: Vec<Val> = Vec::new();
    for v in values.drain(..) {
        if !unique.contains(&v) {
            unique.push(v);
        }
    }
    (unique.len() <= MAX_CHOICES).then_some(unique)
}

fn product(combos: Vec<Vec<Val>>, values: &[Val]) -> Result<Vec<Vec<Val>>, ExprError> {
    if combos.len().saturating_mul(values.len()) > MAX_CHOICES {
        return Err(ExprError(format!("more than {MAX_CHOICES} combinations")));
    }
    Ok(combos
        .into_iter()
        .flat_map(|c| {
            values.iter().map(move |v| {
                let mut next = c.clone();
                next.push(v.clone());
                next
            })
        })
        .collect())
}

/// The dotted lower-case path of a context read by properties and literal names only
/// (`matrix.os`, `matrix['os']`).
fn literal_path(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Context(name) => Some(name.clone()),
        Expr::Property(inner, name) => {
            literal_path(inner).map(|p| format!("{p}.{}", name.to_ascii_lowercase()))
        }
        Expr::Index(inner, index) => match index.as_ref() {
            Expr::Lit(Val::Str(name)) => {
                literal_path(inner).map(|p| format!("{p}.{}", name.to_ascii_lowercase()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The strings a value with `${{ }}` can become over the scope's choices (`${{ matrix.os
/// }}-latest`); `None` when one is not known. A value without `${{` is itself.
pub fn possible_strings(text: &str, scope: &dyn Scope) -> Result<Option<Vec<String>>, ExprError> {
    let mut outs: Vec<String> = vec![String::new()];
    let mut rest = text;
    for body in embedded(text)? {
        let Some(start) = rest.find("${{") else {
            break;
        };
        let literal = rest.get(..start).unwrap_or_default();
        let Some(values) = possible(&parse(body)?, scope)? else {
            return Ok(None);
        };
        let Some(strings) = values.iter().map(Val::string).collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        if outs.len().saturating_mul(strings.len()) > MAX_CHOICES {
            return Ok(None);
        }
        outs = outs
            .iter()
            .flat_map(|o| strings.iter().map(move |s| format!("{o}{literal}{s}")))
            .collect();
        let after = start + 3 + body.len() + 2;
        rest = rest.get(after..).unwrap_or_default();
    }
    Ok(Some(
        outs.into_iter().map(|o| format!("{o}{rest}")).collect(),
    ))
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
