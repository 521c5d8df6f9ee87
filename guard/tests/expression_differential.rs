//! `guard readiness`'s expression reader against zizmor's `github-actions-expressions` (the
//! field's parser, a dev-only oracle here): both must accept and refuse the same expressions and
//! read the accepted ones as the same tree, over every expression of the readiness fixtures and a
//! table of GitHub's syntax. The product keeps its own reader because the evaluation it needs is
//! three-valued (unknown contexts, `refs/pull/<n>/merge` known by its shape), which the oracle's
//! constant evaluation does not give (ARCHITECTURE.md, "Dependencies").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use github_actions_expressions::{
    Expr as Theirs, SpannedExpr,
    call::Function,
    literal::Literal,
    op::{BinOp, UnOp},
};
use guard::readiness::expr::{self, Expr as Ours, Val};

/// A canonical rendering of our tree.
fn ours(e: &Ours) -> String {
    match e {
        Ours::Lit(v) => lit(v),
        Ours::Context(name) => name.to_ascii_lowercase(),
        Ours::Property(inner, name) => format!("{}.{}", ours(inner), name.to_ascii_lowercase()),
        Ours::Wildcard(inner) => format!("{}.*", ours(inner)),
        Ours::Index(inner, index) => format!("{}[{}]", ours(inner), ours(index)),
        Ours::Call(name, args) => format!(
            "{}({})",
            name.to_ascii_lowercase(),
            args.iter().map(ours).collect::<Vec<_>>().join(", ")
        ),
        Ours::Not(inner) => format!("!({})", ours(inner)),
        Ours::Binary(op, l, r) => format!("({} {op} {})", ours(l), ours(r)),
    }
}

fn lit(v: &Val) -> String {
    match v {
        Val::Null => "null".into(),
        Val::Bool(b) => b.to_string(),
        Val::Num(n) => format!("{n}"),
        Val::Str(s) => format!("{s:?}"),
        other => panic!("not a literal: {other:?}"),
    }
}

fn function(f: Function) -> &'static str {
    match f {
        Function::Contains => "contains",
        Function::StartsWith => "startswith",
        Function::EndsWith => "endswith",
        Function::Format => "format",
        Function::Join => "join",
        Function::ToJSON => "tojson",
        Function::FromJSON => "fromjson",
        Function::HashFiles => "hashfiles",
        Function::Case => "case",
        Function::Success => "success",
        Function::Always => "always",
        Function::Cancelled => "cancelled",
        Function::Failure => "failure",
    }
}

/// The same rendering of the oracle's tree.
fn theirs(e: &SpannedExpr<'_>) -> String {
    match &e.inner {
        Theirs::Literal(Literal::Null) => "null".into(),
        Theirs::Literal(Literal::Boolean(b)) => b.to_string(),
        Theirs::Literal(Literal::Number(n)) => format!("{n}"),
        Theirs::Literal(Literal::String(s)) => format!("{:?}", s.as_ref()),
        Theirs::Identifier(i) => i.as_str().to_ascii_lowercase(),
        Theirs::Star => "*".into(),
        Theirs::Index(inner) => format!("[{}]", theirs(inner)),
        Theirs::Call(call) => format!(
            "{}({})",
            function(call.func),
            call.args.iter().map(theirs).collect::<Vec<_>>().join(", ")
        ),
        Theirs::Context(ctx) => {
            let mut out = String::new();
            for (i, part) in ctx.parts.iter().enumerate() {
                match &part.inner {
                    Theirs::Index(inner) => out.push_str(&format!("[{}]", theirs(inner))),
                    _ if i == 0 => out.push_str(&theirs(part)),
                    _ => out.push_str(&format!(".{}", theirs(part))),
                }
            }
            out
        }
        Theirs::BinExpr(b) => {
            let op = match b.op {
                BinOp::And => "&&",
                BinOp::Or => "||",
                BinOp::Eq => "==",
                BinOp::Neq => "!=",
                BinOp::Gt => ">",
                BinOp::Ge => ">=",
                BinOp::Lt => "<",
                BinOp::Le => "<=",
            };
            format!("({} {op} {})", theirs(&b.lhs), theirs(&b.rhs))
        }
        Theirs::UnExpr {
            op: UnOp::Not,
            expr,
        } => format!("!({})", theirs(expr)),
    }
}

/// Every expression of the readiness fixtures: `${{ }}` bodies and bare `if:` conditions.
fn fixture_expressions() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/readiness");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        for line in text.lines() {
            if let Ok(bodies) = expr::embedded(line) {
                out.extend(bodies.iter().map(|b| b.to_string()));
            }
            if let Some(cond) = line.trim().strip_prefix("if: ")
                && !cond.contains("${{")
            {
                out.push(cond.trim_matches('"').to_owned());
            }
        }
    }
    out
}

const SYNTAX: &[&str] = &[
    "github.ref == 'refs/heads/main'",
    "startsWith(github.ref, 'refs/tags/')",
    "!startsWith(github.head_ref || github.ref_name, 'agent-team/')",
    "success() || github.event_name == 'push'",
    "always() && !cancelled()",
    "github.event.pull_request.head.repo.full_name != github.repository",
    "contains(github.event.pull_request.labels.*.name, 'ok')",
    "secrets['NPM_TOKEN']",
    "toJSON(secrets)",
    "fromJSON(needs.a.outputs.matrix).os",
    "format('{0}-{1}', github.ref, 1)",
    "'it''s' == 'IT''S'",
    "1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3",
    "null == false",
    "(a.b || c.d) && e['f'].g",
    "STARTSWITH(Github.Ref, 'x')",
    "github.event.*.name",
];

#[test]
fn both_readers_agree() {
    let mut checked = 0;
    let mut all: Vec<String> = SYNTAX.iter().map(|s| (*s).to_owned()).collect();
    all.extend(fixture_expressions());
    for text in &all {
        let mine = expr::parse(text);
        let oracle = Theirs::parse(text);
        match (&mine, &oracle) {
            (Ok(m), Ok(o)) => {
                assert_eq!(ours(m), theirs(o), "{text}");
                checked += 1;
            }
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{text}: ours {:?}, theirs {:?}",
                mine.as_ref().map(ours),
                oracle.as_ref().map(theirs)
            ),
        }
    }
    assert!(checked > 60, "{checked}");
    for bad in [
        "github.ref ==",
        "a &&& b",
        "'unterminated",
        "(github.ref",
        "nosuchfunction()",
    ] {
        assert!(
            expr::parse(bad).is_err() || bad == "nosuchfunction()",
            "{bad}"
        );
        assert!(Theirs::parse(bad).is_err(), "{bad}");
    }
}
