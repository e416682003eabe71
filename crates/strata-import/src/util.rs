//! Small helpers shared by the converters: finding text in a RyeOS file, YAML values, writing
//! YAML, and id arithmetic (positions themselves are [`crate::position`]'s).

use serde_json::Value;

/// The 1-based position of the first occurrence of `needle` in `text` (`(0, 0)` if absent).
pub(crate) fn find(text: &str, needle: &str) -> (usize, usize) {
    match text.find(needle) {
        Some(at) => crate::position::position(text, at),
        None => (0, 0),
    }
}

/// A string value.
pub(crate) fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

/// A YAML scalar as text (`1.0` → "1.0", `true` → "true"); `None` for maps, lists and null.
pub(crate) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Any YAML value as text for a written field: strings as they are, null as nothing, other
/// values as YAML.
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => String::new(),
        other => strata_doc::to_yaml(other).trim_end().to_owned(),
    }
}

/// A value as compact JSON text, for messages: cut as messages quote a file's text
/// ([`strata_core::shown`]).
pub(crate) fn compact(v: &Value) -> String {
    strata_core::shown(&serde_json::to_string(v).unwrap_or_default())
}

/// How many items of a list a message names; the others are counted.
const NAMED_ITEMS: usize = 10;

/// The items of a list for a message, joined by `, `: the first [`NAMED_ITEMS`], then how
/// many more there are (`a, b, …, 3 more`).
pub(crate) fn named_list(items: impl IntoIterator<Item = String>) -> String {
    joined(items, ", ")
}

/// [`named_list`] with another separator.
pub(crate) fn joined(items: impl IntoIterator<Item = String>, separator: &str) -> String {
    let mut items = items.into_iter();
    let mut named: Vec<String> = items.by_ref().take(NAMED_ITEMS).collect();
    let more = items.count();
    if more > 0 {
        named.push(format!("{more} more"));
    }
    named.join(separator)
}

/// The header comment and YAML text of a written file.
pub(crate) fn yaml_file(source: &str, body: &Value) -> String {
    let text = strata_doc::to_yaml(body);
    format!(
        "# Imported from RyeOS `{source}` by `strata import ryeos` (see IMPORT-REPORT.md).\n{text}"
    )
}

/// The longest name of a written file (the `.yaml` of a tool id's file included), in bytes:
/// what file systems take.
const MAX_NAME: usize = 255;

/// The longest tool id a generated file is written at, in bytes: its path stays far below
/// what the system takes, wherever the new project is.
const MAX_ID: usize = 1024;

/// Whether `path` is one the import may write inside the new project: `/`-separated plain
/// names, none empty (no leading `/`, no `a//b`), `.` or `..`, longer than a file system
/// takes, or holding a control character (a NUL ends a path).
pub(crate) fn plain_path(path: &str) -> bool {
    path.split('/').all(|name| {
        !name.is_empty()
            && name != "."
            && name != ".."
            && name.len() <= MAX_NAME
            && !name.chars().any(char::is_control)
    })
}

/// Whether a generated tool can be written at id `id` (`tools/<id>.yaml`).
pub(crate) fn writable_id(id: &str) -> bool {
    id.len() <= MAX_ID && plain_path(&format!("tools/{id}.yaml"))
}

/// The directory part of a `/`-separated path (empty for a bare name).
pub(crate) fn parent(rel: &str) -> &str {
    rel.rfind('/').map_or("", |p| &rel[..p])
}

/// Replaces every occurrence of each `(from, to)` pair in every string of a value (map keys
/// untouched), recording each pair that matched in `hits`.
pub(crate) fn replace_in(v: &mut Value, pairs: &[(&str, String)], hits: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            for (from, to) in pairs {
                if s.contains(from) {
                    *s = s.replace(from, to);
                    if !hits.iter().any(|h| h == from) {
                        hits.push((*from).to_owned());
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                replace_in(item, pairs, hits);
            }
        }
        Value::Object(map) => {
            // `{literal: …}` is text RyeOS passed byte for byte too: never rewritten.
            if map.len() == 1 && map.contains_key("literal") {
                return;
            }
            for item in map.values_mut() {
                replace_in(item, pairs, hits);
            }
        }
        _ => {}
    }
}

/// Whether any string of a value contains `needle` (`{literal: …}` texts included).
pub(crate) fn mentions(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => s.contains(needle),
        Value::Array(items) => items.iter().any(|i| mentions(i, needle)),
        Value::Object(map) => map.values().any(|i| mentions(i, needle)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_paths_are_plain_names() {
        assert!(plain_path(".ai/tools/a b/c.yaml"));
        for bad in ["", "/abs", "a//b", "a/", "../x", "a/./b", "a\0b", "a\nb"] {
            assert!(!plain_path(bad), "{bad:?}");
        }
        assert!(writable_id(&"x".repeat(250)));
        assert!(!writable_id(&"x".repeat(251)));
        assert!(writable_id(&["x"; 200].join("/")));
        assert!(!writable_id(&["xxxx"; 300].join("/")));
    }

    #[test]
    fn lists_name_ten_items_and_count_the_others() {
        let items = |n: usize| (1..=n).map(|i| i.to_string());
        assert_eq!(named_list(items(3)), "1, 2, 3");
        assert_eq!(named_list(items(10)), "1, 2, 3, 4, 5, 6, 7, 8, 9, 10");
        assert_eq!(
            named_list(items(13)),
            "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 3 more"
        );
    }

    #[test]
    fn find_gives_the_position_of_the_first_occurrence() {
        assert_eq!(find("ab\ncd", "c"), (2, 1));
        assert_eq!(find("ab\ncd", "zz"), (0, 0));
    }
}
