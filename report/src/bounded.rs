//! Reports bounded for their consumers: truncated with a count of what was left out, never
//! refused for their size.
//!
//! - **The step summary.** GitHub accepts at most 1 MiB of `$GITHUB_STEP_SUMMARY` per step ("each
//!   step is restricted to a maximum size of 1MiB ... If more than 1MiB of content is added for a
//!   step, then the upload for the step will fail and an error annotation will be created",
//!   <https://docs.github.com/en/actions/using-workflows/workflow-commands-for-github-actions#step-isolation-and-limits>;
//!   the runner's message: "$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of
//!   1024k"). A step appends up to [`SECTIONS_PER_STEP`] sections (the build-test job's report step
//!   appends the verdict and the build-test report), so each markdown section is cut to
//!   [`SECTION_MAX_BYTES`] by [`fit_markdown`], and each of its tables to [`TABLE_MAX_ROWS`] rows,
//!   with a line naming how many were left out.
//! - **Annotations.** GitHub shows at most 10 error and 10 warning annotations per step; the
//!   renderers print at most [`ANNOTATIONS_PER_LEVEL`] of each level and one notice with the count
//!   of the others.
//! - **An input document over the input limit** (a run report whose output tail is escaped JSON,
//!   a tree check with hundreds of thousands of findings) is not refused: [`reduce_json`] streams
//!   it and keeps the head and the tail of every long string and every long array within the
//!   limit, recording what it left out ([`LeftOut`]), and the report says so.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserializer, Serialize};
use serde_json::{Map, Value};

/// GitHub's limit on one step's `$GITHUB_STEP_SUMMARY`.
pub const STEP_SUMMARY_MAX_BYTES: usize = 1 << 20;
/// Sections (one `report` markdown rendering each) a step may append to its summary.
pub const SECTIONS_PER_STEP: usize = 4;
/// The most bytes one markdown section takes.
pub const SECTION_MAX_BYTES: usize = STEP_SUMMARY_MAX_BYTES / SECTIONS_PER_STEP;
/// Rows a markdown table shows before the line that counts the others.
pub const TABLE_MAX_ROWS: usize = 200;
/// Annotations of one level (`error`, `warning`) printed per rendering.
pub const ANNOTATIONS_PER_LEVEL: usize = 10;

/// The line after a table cut to [`TABLE_MAX_ROWS`] rows (or that lists fewer than `total`
/// items because its input was reduced): how many were left out and where the rest is.
pub fn rows_left_out_line(shown: usize, total: u64, what: &str, where_all: &str) -> String {
    format!(
        "\n_{} of {total} {what} not shown (this section shows at most {TABLE_MAX_ROWS}); {where_all}._\n",
        total.saturating_sub(shown as u64)
    )
}

/// Cut markdown `text` to at most `max_bytes`, on a line end, closing a fenced code block the
/// cut leaves open, and append a note saying how many bytes were left out. Text within the limit
/// is returned unchanged.
pub fn fit_markdown(text: String, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text;
    }
    let total = text.len();
    let note = |omitted: usize| {
        format!(
            "\n_Truncated: {omitted} of {total} bytes of this section left out (GitHub accepts at most {STEP_SUMMARY_MAX_BYTES} bytes of step summary per step)._\n"
        )
    };
    // Room for the widest note and for a closing fence as long as any line.
    let mut budget = max_bytes.saturating_sub(note(total).len());
    loop {
        let mut cut = budget.min(total);
        while cut > 0 && !text.is_char_boundary(cut) {
            cut -= 1;
        }
        cut = text[..cut].rfind('\n').map_or(0, |n| n + 1);
        let kept = &text[..cut];
        let fence = open_fence(kept);
        let closing = fence.as_ref().map_or(0, |f| f.len() + 1);
        if cut + closing <= budget || budget == 0 {
            let mut out = kept.to_string();
            if let Some(fence) = fence {
                out.push_str(&fence);
                out.push('\n');
            }
            out.push_str(&note(total - cut));
            return out;
        }
        budget = budget.saturating_sub(closing);
    }
}

/// The fence of a fenced code block left open at the end of `text` (a line of three or more
/// backticks or tildes opens one; a line of at least as many of the same closes it).
fn open_fence(text: &str) -> Option<String> {
    let mut open: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start_matches(' ');
        let ch = match trimmed.chars().next() {
            Some(c @ ('`' | '~')) => c,
            _ => continue,
        };
        let run = trimmed.chars().take_while(|&c| c == ch).count();
        if run < 3 {
            continue;
        }
        match &open {
            None => open = Some(ch.to_string().repeat(run)),
            Some(f) if f.starts_with(ch) && run >= f.len() && trimmed[run..].trim().is_empty() => {
                open = None;
            }
            Some(_) => {}
        }
    }
    open
}

/// What [`reduce_json`] left out of one string or array of a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    /// The JSON pointer (RFC 6901) of the string or array in the input document.
    pub pointer: String,
    /// Bytes (of a string's UTF-8 text) or elements (of an array) left out of its middle.
    pub count: u64,
    pub unit: Unit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Bytes,
    Elements,
}

/// How much of each string and array [`reduce_json`] keeps: its head and its tail, each half of
/// the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// Bytes of one string's text.
    pub string_bytes: usize,
    /// Bytes of one array's elements, as compact JSON.
    pub array_bytes: usize,
}

impl Keep {
    /// For a document to fit in `limit` bytes: an eighth of it per string and per array.
    pub fn for_limit(limit: usize) -> Keep {
        Keep {
            string_bytes: limit / 8,
            array_bytes: limit / 8,
        }
    }
}

/// The marker left in a string where its middle was cut.
pub fn string_cut_marker(bytes: u64) -> String {
    format!("\n[... report: {bytes} bytes of this text left out here ...]\n")
}

/// Stream the JSON document `reader` holds and return it as compact JSON with the middle of every
/// long string and array left out (what [`Keep`] says is long), and what was left out where.
/// Memory is what is kept plus the longest single string; the document's own size is not bounded.
pub fn reduce_json<R: Read>(
    reader: R,
    keep: Keep,
) -> Result<(String, Vec<LeftOut>), serde_json::Error> {
    let notes = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let value = Reducer {
        pointer: String::new(),
        notes: &notes,
        keep,
    }
    .deserialize(&mut de)?;
    de.end()?;
    let text = serde_json::to_string(&value)?;
    let mut notes = notes.into_inner();
    notes.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    Ok((text, notes))
}

struct Reducer<'a> {
    pointer: String,
    notes: &'a RefCell<Vec<LeftOut>>,
    keep: Keep,
}

impl Reducer<'_> {
    fn child(&self, token: &str) -> Reducer<'_> {
        Reducer {
            pointer: format!(
                "{}/{}",
                self.pointer,
                token.replace('~', "~0").replace('/', "~1")
            ),
            notes: self.notes,
            keep: self.keep,
        }
    }

    fn note(&self, count: u64, unit: Unit) {
        self.notes.borrow_mut().push(LeftOut {
            pointer: self.pointer.clone(),
            count,
            unit,
        });
    }
}

impl<'de> DeserializeSeed<'de> for Reducer<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Reducer<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        let keep = self.keep.string_bytes;
        if v.len() <= keep {
            return Ok(Value::String(v.to_owned()));
        }
        let mut head = keep / 2;
        while !v.is_char_boundary(head) {
            head -= 1;
        }
        let mut tail = v.len() - keep / 2;
        while !v.is_char_boundary(tail) {
            tail += 1;
        }
        let left_out = (tail - head) as u64;
        self.note(left_out, Unit::Bytes);
        Ok(Value::String(format!(
            "{}{}{}",
            &v[..head],
            string_cut_marker(left_out),
            &v[tail..]
        )))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.visit_str(&v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let half = self.keep.array_bytes / 2;
        let mut head = Vec::new();
        let mut head_bytes = 0usize;
        let mut tail: VecDeque<(Value, usize)> = VecDeque::new();
        let mut tail_bytes = 0usize;
        let mut left_out = 0u64;
        let mut index = 0usize;
        while let Some(value) = seq.next_element_seed(self.child(&index.to_string()))? {
            index += 1;
            let size = serde_json::to_string(&value).map_or(usize::MAX, |s| s.len() + 1);
            if tail.is_empty() && head_bytes.saturating_add(size) <= half {
                head_bytes += size;
                head.push(value);
                continue;
            }
            tail_bytes = tail_bytes.saturating_add(size);
            tail.push_back((value, size));
            while tail_bytes > half {
                match tail.pop_front() {
                    Some((_, s)) => {
                        tail_bytes -= s;
                        left_out += 1;
                    }
                    None => break,
                }
            }
        }
        if left_out > 0 {
            self.note(left_out, Unit::Elements);
        }
        head.extend(tail.into_iter().map(|(v, _)| v));
        Ok(Value::Array(head))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self.child(&key))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fit_closes_an_open_fence_and_counts() {
        let text = format!("# t\n\n```\n{}```\nafter\n", "line\n".repeat(1000));
        let out = fit_markdown(text.clone(), 1000);
        assert!(out.len() <= 1000, "{}", out.len());
        assert!(open_fence(&out).is_none(), "{out}");
        assert!(out.contains("_Truncated: "), "{out}");
        assert_eq!(fit_markdown(text.clone(), text.len()), text);
    }

    #[test]
    fn reduce_keeps_head_and_tail_and_notes_the_rest() {
        let doc = serde_json::json!({
            "s": "a".repeat(100) + &"b".repeat(100),
            "list": (0..100).collect::<Vec<u32>>(),
            "small": "x",
        });
        let bytes = serde_json::to_vec(&doc).unwrap();
        let keep = Keep {
            string_bytes: 20,
            array_bytes: 20,
        };
        let (text, notes) = reduce_json(bytes.as_slice(), keep).unwrap();
        let out: Value = serde_json::from_str(&text).unwrap();
        let s = out["s"].as_str().unwrap();
        assert!(
            s.starts_with("aaaaaaaaaa[") || s.starts_with("aaaaaaaaaa\n"),
            "{s}"
        );
        assert!(s.ends_with("bbbbbbbbbb"), "{s}");
        assert!(s.contains("180 bytes of this text left out"), "{s}");
        let list = out["list"].as_array().unwrap();
        assert_eq!(list.first(), Some(&Value::from(0)));
        assert_eq!(list.last(), Some(&Value::from(99)));
        assert_eq!(out["small"], "x");
        let kept = list.len() as u64;
        assert_eq!(
            notes,
            vec![
                LeftOut {
                    pointer: "/list".into(),
                    count: 100 - kept,
                    unit: Unit::Elements
                },
                LeftOut {
                    pointer: "/s".into(),
                    count: 180,
                    unit: Unit::Bytes
                },
            ]
        );
    }
}
