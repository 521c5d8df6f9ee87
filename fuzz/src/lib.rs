//! Oracles shared by the fuzz targets, written independently of the code under test: a canonical
//! renderer of hunk-less file patches (for the parse → render → parse round trip), the
//! status/name invariant of a parsed [`FilePatch`], and a reading of `toJSON(needs)` that says
//! whether the gate should pass.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;

use guard::diff::{FilePatch, MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_SYMLINK};
use guard::verdict::ChangeKind;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The names a file patch of `status` must carry, or why it does not.
pub fn status_names_problem(p: &FilePatch) -> Option<&'static str> {
    match (p.status, &p.old_path, &p.new_path) {
        (ChangeKind::Added, None, Some(_)) | (ChangeKind::Deleted, Some(_), None) => None,
        (ChangeKind::Added, ..) => Some("added file must have only a new name"),
        (ChangeKind::Deleted, ..) => Some("deleted file must have only an old name"),
        (ChangeKind::Modified, Some(old), Some(new)) if old == new => None,
        (ChangeKind::Modified, ..) => Some("modified file must have equal old and new names"),
        (ChangeKind::Renamed | ChangeKind::Copied, Some(old), Some(new)) if old != new => None,
        (ChangeKind::Renamed | ChangeKind::Copied, ..) => {
            Some("rename/copy must have two different names")
        }
    }
}

/// Whether git's `quote_c_style` (with the default `core.quotePath=true`) quotes `name`.
fn needs_quoting(name: &[u8]) -> bool {
    name.iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f)
}

/// `prefix` + `name`, C-quoted as a whole when `name` needs it, as git writes a name.
pub fn quote_name(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + name.len() + 2);
    if !needs_quoting(name) {
        out.extend_from_slice(prefix);
        out.extend_from_slice(name);
        return out;
    }
    out.push(b'"');
    for &b in prefix.iter().chain(name) {
        match b {
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b if !(0x20..0x7f).contains(&b) => {
                out.extend_from_slice(format!("\\{b:03o}").as_bytes());
            }
            b => out.push(b),
        }
    }
    out.push(b'"');
    out
}

fn mode_text(mode: u32) -> &'static str {
    match mode {
        MODE_FILE => "100644",
        MODE_EXEC => "100755",
        MODE_SYMLINK => "120000",
        MODE_GITLINK => "160000",
        // The parser only produces the four canonical modes; anything else cannot round-trip.
        _ => "invalid-mode",
    }
}

/// Whether [`render_headers`] can render `p`: no hunks and no binary payload.
pub fn is_header_only(p: &FilePatch) -> bool {
    p.hunks.is_empty() && p.binary.is_none()
}

/// Render header-only file patches in the form `git diff` writes them: the `diff --git` line,
/// the extended headers in git's order, and no `---`/`+++` lines (git writes those only before
/// hunks). Returns `None` if some patch is not header-only.
pub fn render_headers(patches: &[&FilePatch]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for p in patches {
        if !is_header_only(p) {
            return None;
        }
        let old = p.old_path.as_deref().or(p.new_path.as_deref())?;
        let new = p.new_path.as_deref().or(p.old_path.as_deref())?;
        out.extend_from_slice(b"diff --git ");
        out.extend_from_slice(&quote_name(b"a/", old));
        out.push(b' ');
        out.extend_from_slice(&quote_name(b"b/", new));
        out.push(b'\n');
        let line = |out: &mut Vec<u8>, head: &str, rest: &[u8]| {
            out.extend_from_slice(head.as_bytes());
            out.extend_from_slice(rest);
            out.push(b'\n');
        };
        match p.status {
            ChangeKind::Added => {
                line(
                    &mut out,
                    "new file mode ",
                    mode_text(p.new_mode?).as_bytes(),
                );
                line(&mut out, "index ", b"0000000..e69de29");
            }
            ChangeKind::Deleted => {
                line(
                    &mut out,
                    "deleted file mode ",
                    mode_text(p.old_mode?).as_bytes(),
                );
                line(&mut out, "index ", b"e69de29..0000000");
            }
            ChangeKind::Modified | ChangeKind::Renamed | ChangeKind::Copied => {
                let mode_change = p.old_mode != p.new_mode;
                if mode_change {
                    line(&mut out, "old mode ", mode_text(p.old_mode?).as_bytes());
                    line(&mut out, "new mode ", mode_text(p.new_mode?).as_bytes());
                }
                let (from, to) = match p.status {
                    ChangeKind::Renamed => ("rename from ", "rename to "),
                    ChangeKind::Copied => ("copy from ", "copy to "),
                    _ => ("", ""),
                };
                if !from.is_empty() {
                    line(&mut out, "similarity index ", b"100%");
                    line(&mut out, from, &quote_name(b"", old));
                    line(&mut out, to, &quote_name(b"", new));
                }
                // A mode known without a change was read from the `index` line.
                if let (false, Some(mode)) = (mode_change, p.new_mode) {
                    let mut v = b"1234567..89abcde ".to_vec();
                    v.extend_from_slice(mode_text(mode).as_bytes());
                    line(&mut out, "index ", &v);
                }
            }
        }
    }
    Some(out)
}

/// What the round trip compares: everything a header-only patch says, but not its line number.
pub type FileKey = (
    ChangeKind,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<u32>,
    Option<u32>,
);

pub fn file_key(p: &FilePatch) -> FileKey {
    (
        p.status,
        p.old_path.clone(),
        p.new_path.clone(),
        p.old_mode,
        p.new_mode,
    )
}

/// A JSON value read with serde_json, keeping the last entry of each key, or an error when some
/// object at any depth repeats a key (after unescaping). An independent re-implementation of
/// what the gate must refuse: `serde_json::Value` alone would silently keep the last duplicate.
#[derive(Debug, Clone, PartialEq)]
pub enum Plain {
    Other,
    String(String),
    Object(BTreeMap<String, Plain>),
}

struct PlainSeed;

impl<'de> DeserializeSeed<'de> for PlainSeed {
    type Value = Plain;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Plain, D::Error> {
        d.deserialize_any(PlainVisitor)
    }
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Plain;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Plain, E> {
        Ok(Plain::Other)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Plain, E> {
        Ok(Plain::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Plain, E> {
        Ok(Plain::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Plain, E> {
        Ok(Plain::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Plain, E> {
        Ok(Plain::Other)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Plain, E> {
        Ok(Plain::String(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Plain, A::Error> {
        while seq.next_element_seed(PlainSeed)?.is_some() {}
        Ok(Plain::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Plain, A::Error> {
        let mut entries = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(PlainSeed)?;
            if entries.insert(key, value).is_some() {
                return Err(de::Error::custom("duplicate key"));
            }
        }
        Ok(Plain::Object(entries))
    }
}

/// Whether `needs` is a JSON object with exactly the keys `required`, each an object whose
/// `result` is the string `success`, with no duplicate key anywhere.
pub fn needs_should_pass(needs: &[u8], required: &[&str]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(needs);
    let Ok(value) = PlainSeed.deserialize(&mut de) else {
        return false;
    };
    if de.end().is_err() {
        return false;
    }
    let Plain::Object(jobs) = value else {
        return false;
    };
    jobs.len() == required.len()
        && required.iter().all(|name| match jobs.get(*name) {
            Some(Plain::Object(job)) => {
                matches!(job.get("result"), Some(Plain::String(r)) if r == "success")
            }
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_matches_git() {
        assert_eq!(quote_name(b"a/", b"x y"), b"a/x y");
        assert_eq!(quote_name(b"a/", b"t\tb"), b"\"a/t\\tb\"");
        assert_eq!(quote_name(b"b/", "é".as_bytes()), b"\"b/\\303\\251\"");
        assert_eq!(quote_name(b"", b"q\"\\"), b"\"q\\\"\\\\\"");
    }

    #[test]
    fn renders_header_only_patches_that_parse_back() {
        let src = b"diff --git a/m b/m\nold mode 100644\nnew mode 100755\n\
diff --git a/o b/n x\nsimilarity index 100%\nrename from o\nrename to n x\nindex 1234567..89abcde 100644\n\
diff --git \"a/t\\tx\" \"b/t\\tx\"\nnew file mode 100644\nindex 0000000..e69de29\n\
diff --git a/d b/d\ndeleted file mode 100755\nindex e69de29..0000000\n\
diff --git a/c \"b/\\303\\251\"\nsimilarity index 100%\ncopy from c\ncopy to \"\\303\\251\"\n";
        let parsed = guard::diff::parse(src, 1 << 20).expect("seed parses");
        let patches: Vec<&FilePatch> = parsed.patches.iter().collect();
        let rendered = render_headers(&patches).expect("header-only");
        let reparsed = guard::diff::parse(&rendered, 1 << 20).expect("rendering parses");
        let a: Vec<FileKey> = parsed.patches.iter().map(file_key).collect();
        let b: Vec<FileKey> = reparsed.patches.iter().map(file_key).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|k| k.0 != ChangeKind::Modified || k.3 != k.4));
    }

    #[test]
    fn needs_oracle() {
        let req = ["guard", "build-test"];
        let ok =
            br#"{"guard":{"result":"success","outputs":{}},"build-test":{"result":"success"}}"#;
        assert!(needs_should_pass(ok, &req));
        assert!(!needs_should_pass(
            br#"{"guard":{"result":"success"},"build-test":{"result":"failure","result":"success"}}"#,
            &req
        ));
        assert!(!needs_should_pass(
            br#"{"guard":{"result":"success"},"build-test":{"result":"success"},"guard":{"result":"success"}}"#,
            &req
        ));
        assert!(!needs_should_pass(
            br#"{"guard":{"result":"success"},"build-test":{"result":"success","o":{"k":1,"k":2}}}"#,
            &req
        ));
        assert!(!needs_should_pass(
            br#"{"guard":{"result":"success"}}"#,
            &req
        ));
        assert!(!needs_should_pass(b"{} {}", &req));
    }
}
