//! Step outputs in the format of GitHub's `GITHUB_OUTPUT` environment file.
//!
//! The documented syntax (docs.github.com, "Workflow commands for GitHub Actions" → "Setting an
//! output parameter" and "Multiline strings"; source `content/actions/reference/workflows-and-actions/
//! workflow-commands.md` in `github/docs`) is one entry per line, `{name}={value}`, or for a
//! multi-line value
//!
//! ```text
//! {name}<<{delimiter}
//! {value}
//! {delimiter}
//! ```
//!
//! with the warning that the delimiter must not occur on a line of its own within the value. The
//! runner (`actions/runner`, `src/Runner.Worker/FileCommandManager.cs`) reads a line as `name=value`
//! when its first `=` comes before its first `<<`, otherwise as a heredoc header split at the first
//! `<<`; the value is everything up to the line break before the first line equal to the
//! delimiter. Lines end at LF (CRLF on Windows).
//!
//! So that no value can forge or end an entry:
//! - names are restricted to GitHub's identifier shape (ASCII letter or `_`, then ASCII letters,
//!   digits, `_`, `-`), which excludes `=`, `<`, CR and LF;
//! - a single-line value contains neither CR nor LF;
//! - a multi-line value's delimiter is `ghadelimiter_` + the hex SHA-256 of the value and a
//!   counter, and is checked not to occur *anywhere* in the value (stronger than "not as a line").
//!   Deterministic, so the same outputs render the same bytes; an attacker would have to embed a
//!   value's own hash in that value to collide.
//!
//! Every entry is rendered first and appended to the file in one write.
//!
//! [`parse`] reads such a file back the way the runner does (for a driver that plays a workflow's
//! steps, and for the round-trip tests): whatever [`StepOutputs`] writes reads back exactly.

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Prefix of generated heredoc delimiters (the one `@actions/core` uses).
pub const DELIMITER_PREFIX: &str = "ghadelimiter_";
/// Longest accepted output name.
pub const MAX_NAME_LEN: usize = 100;
const DELIMITER_ATTEMPTS: u32 = 16;

/// Why outputs could not be recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    #[error("invalid output name {name:?}: {problem}")]
    InvalidName { name: String, problem: &'static str },
    #[error("output {name:?} is set twice")]
    DuplicateName { name: String },
    #[error("the value of output {name:?} contains a line break; set it as a multi-line value")]
    LineBreakInValue { name: String },
    #[error("no delimiter absent from the value of output {name:?} was found")]
    NoDelimiter { name: String },
    #[error("cannot append to {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A set of step outputs, rendered in the `GITHUB_OUTPUT` file format.
#[derive(Debug, Clone, Default)]
pub struct StepOutputs {
    names: BTreeSet<String>,
    rendered: String,
}

impl StepOutputs {
    pub fn new() -> Self {
        Self::default()
    }

    /// `name=value`. The value must be a single line (no CR, no LF).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), OutputError> {
        if value.contains(['\n', '\r']) {
            return Err(OutputError::LineBreakInValue {
                name: name.to_owned(),
            });
        }
        self.claim(name)?;
        self.rendered.push_str(name);
        self.rendered.push('=');
        self.rendered.push_str(value);
        self.rendered.push('\n');
        Ok(())
    }

    /// `name<<DELIM`, the value, `DELIM`. Any value, including an empty one or one ending in a
    /// line break, reads back exactly (the runner drops the one LF written before the delimiter).
    pub fn set_multiline(&mut self, name: &str, value: &str) -> Result<(), OutputError> {
        let delimiter = delimiter_for(value).ok_or_else(|| OutputError::NoDelimiter {
            name: name.to_owned(),
        })?;
        self.claim(name)?;
        self.rendered.push_str(name);
        self.rendered.push_str("<<");
        self.rendered.push_str(&delimiter);
        self.rendered.push('\n');
        self.rendered.push_str(value);
        self.rendered.push('\n');
        self.rendered.push_str(&delimiter);
        self.rendered.push('\n');
        Ok(())
    }

    /// The entries, in the order they were set.
    pub fn render(&self) -> &str {
        &self.rendered
    }

    /// Append every entry to `path` (created if absent) in a single write.
    pub fn append_to(&self, path: &Path) -> Result<(), OutputError> {
        let io = |source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        file.write_all(self.rendered.as_bytes()).map_err(io)?;
        file.flush().map_err(io)
    }

    fn claim(&mut self, name: &str) -> Result<(), OutputError> {
        validate_name(name)?;
        if !self.names.insert(name.to_owned()) {
            return Err(OutputError::DuplicateName {
                name: name.to_owned(),
            });
        }
        Ok(())
    }
}

/// Check an output name: ASCII letter or `_` first, then ASCII letters, digits, `_` or `-`.
pub fn validate_name(name: &str) -> Result<(), OutputError> {
    let problem = if name.is_empty() {
        Some("empty")
    } else if name.len() > MAX_NAME_LEN {
        Some("too long")
    } else if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        Some("must start with an ASCII letter or `_`")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Some("only ASCII letters, digits, `_` and `-` are allowed")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(OutputError::InvalidName {
            name: name.to_owned(),
            problem,
        }),
        None => Ok(()),
    }
}

/// A heredoc delimiter that does not occur anywhere in `value`.
pub fn delimiter_for(value: &str) -> Option<String> {
    first_absent(value, |counter| {
        let mut seed = Vec::with_capacity(value.len() + 4);
        seed.extend_from_slice(&counter.to_be_bytes());
        seed.extend_from_slice(value.as_bytes());
        format!("{DELIMITER_PREFIX}{}", sha256_hex(&seed))
    })
}

/// The first candidate, over counters `0..DELIMITER_ATTEMPTS`, that does not occur in `value`.
fn first_absent(value: &str, candidate: impl Fn(u32) -> String) -> Option<String> {
    (0..DELIMITER_ATTEMPTS)
        .map(candidate)
        .find(|delimiter| !delimiter.is_empty() && !value.contains(delimiter.as_str()))
}

/// Why a `GITHUB_OUTPUT` file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    #[error("line {line}: neither `name=value` nor `name<<DELIMITER`")]
    Unreadable { line: usize },
    #[error("line {line}: an output with an empty name")]
    EmptyName { line: usize },
    #[error("line {line}: output {name:?} has an empty delimiter")]
    EmptyDelimiter { line: usize, name: String },
    #[error("output {name:?}: no line equal to its delimiter closes it")]
    Unterminated { name: String },
}

/// The entries of a `GITHUB_OUTPUT` file, in order, read as the runner reads them
/// (`actions/runner`, `src/Runner.Worker/FileCommandManager.cs`): a line is `name=value` when its
/// first `=` comes before its first `<<`, otherwise a heredoc header split at the first `<<`, whose
/// value is every line up to the first line equal to the delimiter. Empty lines between entries
/// are skipped; lines end at LF (a CR before it is dropped, as on Windows).
pub fn parse(text: &str) -> Result<Vec<(String, String)>, ParseError> {
    let mut entries = Vec::new();
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate();
    // A final LF ends the last line; it does not start an empty one.
    let count = text.split('\n').count() - usize::from(text.ends_with('\n'));
    while let Some((index, line)) = lines.next() {
        if index >= count {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let equals = line.find('=');
        let heredoc = line.find("<<");
        match (equals, heredoc) {
            (Some(0), _) | (_, Some(0)) => return Err(ParseError::EmptyName { line: index + 1 }),
            (Some(e), h) if h.is_none_or(|h| e < h) => {
                entries.push((line[..e].to_owned(), line[e + 1..].to_owned()));
            }
            (_, Some(h)) => {
                let name = line[..h].to_owned();
                let delimiter = &line[h + 2..];
                if delimiter.is_empty() {
                    return Err(ParseError::EmptyDelimiter {
                        line: index + 1,
                        name,
                    });
                }
                let mut value: Vec<&str> = Vec::new();
                loop {
                    match lines.next() {
                        Some((i, l)) if i < count && l == delimiter => break,
                        Some((i, l)) if i < count => value.push(l),
                        _ => return Err(ParseError::Unterminated { name }),
                    }
                }
                entries.push((name, value.join("\n")));
            }
            _ => return Err(ParseError::Unreadable { line: index + 1 }),
        }
    }
    Ok(entries)
}

/// The last value of output `name` in `entries` (a later entry overrides an earlier one).
pub fn last<'a>(entries: &'a [(String, String)], name: &str) -> Option<&'a str> {
    entries
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn single_line_and_multi_line_entries() {
        let mut out = StepOutputs::new();
        out.set("gate", "pass").unwrap();
        out.set_multiline("reasons", "a\nb").unwrap();
        let d = delimiter_for("a\nb").unwrap();
        assert_eq!(
            out.render(),
            format!("gate=pass\nreasons<<{d}\na\nb\n{d}\n")
        );
    }

    #[test]
    fn names_are_checked() {
        let mut out = StepOutputs::new();
        for bad in [
            "", "a=b", "a<<b", "a\nb", "a\rb", "1x", "-x", "a b", "é", "a<b",
        ] {
            assert!(
                matches!(out.set(bad, "v"), Err(OutputError::InvalidName { .. })),
                "{bad:?}"
            );
            assert!(
                matches!(
                    out.set_multiline(bad, "v"),
                    Err(OutputError::InvalidName { .. })
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            out.set(&"a".repeat(MAX_NAME_LEN + 1), "v"),
            Err(OutputError::InvalidName { .. })
        ));
        assert!(out.set("_ok-Name_1", "v").is_ok());
        assert!(matches!(
            out.set_multiline("_ok-Name_1", "v"),
            Err(OutputError::DuplicateName { .. })
        ));
        assert_eq!(out.render(), "_ok-Name_1=v\n");
    }

    #[test]
    fn single_line_values_have_no_line_breaks() {
        let mut out = StepOutputs::new();
        assert!(matches!(
            out.set("gate", "pass\ngate=fail"),
            Err(OutputError::LineBreakInValue { .. })
        ));
        assert!(matches!(
            out.set("gate", "pass\r"),
            Err(OutputError::LineBreakInValue { .. })
        ));
        assert_eq!(out.render(), "");
        // The name was not claimed by the refused value.
        assert!(out.set("gate", "x<<y=z").is_ok());
    }

    #[test]
    fn delimiter_never_occurs_in_the_value() {
        let d = delimiter_for("v").unwrap();
        assert!(d.starts_with(DELIMITER_PREFIX));
        assert_eq!(d.len(), DELIMITER_PREFIX.len() + 64);
        assert!(
            d[DELIMITER_PREFIX.len()..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit())
        );
        // With a guessable candidate sequence, candidates found in the value are skipped...
        let weak = |c: u32| format!("EOF{c}");
        assert_eq!(first_absent("a\nEOF0\nb", weak).as_deref(), Some("EOF1"));
        // ...also when they occur inside a line rather than as one...
        assert_eq!(first_absent("xEOF0EOF1y", weak).as_deref(), Some("EOF2"));
        // ...and when every candidate occurs, there is no delimiter rather than a wrong one.
        let all: String = (0..DELIMITER_ATTEMPTS).map(weak).collect();
        assert_eq!(first_absent(&all, weak), None);
    }

    #[test]
    fn empty_and_trailing_newline_values_are_rendered_with_one_separator() {
        let mut out = StepOutputs::new();
        out.set_multiline("a", "").unwrap();
        out.set_multiline("b", "x\n").unwrap();
        let (da, db) = (delimiter_for("").unwrap(), delimiter_for("x\n").unwrap());
        assert_eq!(
            out.render(),
            format!("a<<{da}\n\n{da}\nb<<{db}\nx\n\n{db}\n")
        );
    }

    #[test]
    fn append_to_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, "before=1\n").unwrap();
        let mut out = StepOutputs::new();
        out.set("gate", "fail").unwrap();
        out.append_to(&path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "before=1\ngate=fail\n"
        );
        let missing = dir.path().join("no/such/dir/out");
        assert!(matches!(
            out.append_to(&missing),
            Err(OutputError::Io { .. })
        ));
    }

    #[test]
    fn what_is_written_reads_back_exactly() {
        let values = [
            "",
            "\n",
            "one line",
            "a\nb\n",
            "\n\nleading and trailing\n\n",
            "EOF\nghadelimiter_\nname<<x\ngate=pass",
            "crlf\r\nkept? no: a CR before LF is a line end",
        ];
        for value in values {
            let mut out = StepOutputs::new();
            out.set("gate", "pass").unwrap();
            out.set_multiline("reasons", value).unwrap();
            out.set("after", "x=y<<z").unwrap();
            let entries = parse(out.render()).unwrap();
            let want = value.replace("\r\n", "\n");
            assert_eq!(entries.len(), 3, "{value:?}");
            assert_eq!(last(&entries, "gate"), Some("pass"));
            assert_eq!(last(&entries, "reasons"), Some(want.as_str()), "{value:?}");
            assert_eq!(last(&entries, "after"), Some("x=y<<z"));
        }
    }

    #[test]
    fn a_value_holding_its_own_delimiter_still_reads_back() {
        // The first delimiter the writer would pick, planted in the value on a line of its own
        // with a forged entry after it: the writer moves to the next candidate.
        let planted = delimiter_for("").unwrap();
        let value = format!("{planted}\ngate=pass\n{planted}");
        let mut out = StepOutputs::new();
        out.set_multiline("reasons", &value).unwrap();
        out.set("gate", "fail").unwrap();
        let entries = parse(out.render()).unwrap();
        assert_eq!(
            entries,
            vec![
                ("reasons".to_owned(), value.clone()),
                ("gate".to_owned(), "fail".to_owned())
            ]
        );
        // A naive writer with a fixed delimiter is what the reader would misread.
        let naive = format!("reasons<<{planted}\n{value}\n{planted}\ngate=fail\n");
        assert_ne!(parse(&naive).ok(), Some(entries));
    }

    #[test]
    fn the_reader_refuses_what_the_runner_refuses() {
        assert_eq!(
            parse("gate=pass\nno separator\n"),
            Err(ParseError::Unreadable { line: 2 })
        );
        assert_eq!(
            parse("r<<EOF\nnever closed\n"),
            Err(ParseError::Unterminated { name: "r".into() })
        );
        assert_eq!(parse("=v\n"), Err(ParseError::EmptyName { line: 1 }));
        assert_eq!(
            parse("r<<\nx\n"),
            Err(ParseError::EmptyDelimiter {
                line: 1,
                name: "r".into()
            })
        );
        // The first `=` before the first `<<` makes a single-line entry.
        assert_eq!(
            parse("a=b<<c\nd<<e=f\nx\ne=f\n").unwrap(),
            vec![("a".into(), "b<<c".into()), ("d".into(), "x".into())]
        );
    }
}
