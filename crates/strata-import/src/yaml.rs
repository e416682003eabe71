//! The importer's YAML reader: RyeOS files are read with strata's own reader
//! ([`strata_doc::Document::parse`]), and what it refuses becomes a reason for the report.
//! Files are written with [`strata_doc::to_yaml`].

use std::fmt::Write;

use serde_json::Value;
use strata_core::{Error, Limits};
use strata_doc::{Document, Format};

use crate::model::FileImport;

/// Reads a YAML text as the importer reads RyeOS files, with strata's reader: plain scalars
/// resolve as YAML 1.2's core schema does, every key is text as written (`1: x` has the key
/// `"1"`, `true: y` the key `"true"`) and a merge key `<<` is an ordinary key.
///
/// Refused with a reason that says what, where and the reader's hint (for example
/// "duplicate key \`a\` at line 3 column 1 (each key may appear once in a map)"): text that
/// is not YAML, keys repeated in one map, custom tags (`!foo`), a second document, numbers
/// that are not finite and documents past strata's default limits.
pub(crate) fn read_yaml(text: &str) -> Result<Value, String> {
    read_from(text, 1)
}

/// [`read_yaml`] for a text whose first line is line `first_line` of its file (front
/// matter), so the reason names the file's line.
pub(crate) fn read_from(text: &str, first_line: usize) -> Result<Value, String> {
    Document::parse(
        "",
        text.as_bytes().to_vec(),
        Format::Yaml,
        &Limits::default(),
    )
    .map(|doc| doc.value)
    .map_err(|e| reason(&e, first_line))
}

/// Refuses a RyeOS file that [`read_yaml`] refused for `why` (`IMP-yaml`).
pub(crate) fn refuse_unreadable(out: FileImport, why: &str) -> FileImport {
    out.refuse("IMP-yaml", format!("the file cannot be read: {why}"))
}

/// The reason of a refused read: the reader's message, its position in the file and its
/// hint.
fn reason(error: &Error, first_line: usize) -> String {
    let mut reason = error.message().to_string();
    if let Some(at) = error.location() {
        let line = at.line + first_line.saturating_sub(1);
        let _ = write!(reason, " at line {line} column {}", at.column);
    }
    if let Some(hint) = error.hint() {
        let _ = write!(reason, " ({hint})");
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_text_as_written_and_merge_keys_are_plain_keys() {
        assert_eq!(
            read_yaml("1: x\ntrue: y\n0x1f: z\n<<: {a: 1}\nv: 0123\n").unwrap(),
            json!({"1": "x", "true": "y", "0x1f": "z", "<<": {"a": 1}, "v": "0123"})
        );
        assert_eq!(read_yaml("").unwrap(), Value::Null);
    }

    #[test]
    fn refusals_say_what_and_where() {
        assert_eq!(
            read_yaml("a: 1\nb: 2\na: 3\n").unwrap_err(),
            "duplicate key `a` at line 3 column 1 (each key may appear once in a map)"
        );
        assert_eq!(
            read_yaml("a: !include x.yaml\n").unwrap_err(),
            "YAML syntax error: unsupported tag `!include` at line 1 column 13"
        );
        assert_eq!(
            read_from("name: x\nname: y\n", 5).unwrap_err(),
            "duplicate key `name` at line 6 column 1 (each key may appear once in a map)"
        );
        assert_eq!(
            read_yaml("a: 1\n---\nb: 2\n").unwrap_err(),
            "YAML syntax error: deserializing from YAML containing more than one document is not supported at line 2 column 1"
        );
    }
}
