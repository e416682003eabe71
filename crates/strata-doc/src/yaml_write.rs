//! Writing a JSON value as block-style YAML that reads back to the same value.
//!
//! Maps and lists are written in block style (a list under a key at the key's indentation,
//! as most YAML writers do), empty ones as `{}` and `[]`. Text stays plain when it reads back
//! as that text (see [`crate::yaml_read`]) and holds nothing YAML gives a meaning to; text of
//! several lines becomes a literal block (`|`, with the chomping and indentation indicators
//! that keep every line break and leading space); anything else is quoted — single quotes
//! when that suffices, double quotes with escapes for control and non-printable characters.
//! Text that YAML 1.1 readers take for booleans (`yes`, `on`, …) is quoted too, for the
//! readers of exported manifests.

use std::fmt::Write;

use serde_json::Value;

use crate::yaml_read::is_plain_text;

/// `value` as a YAML document (ending with a line break).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => write_seq(&mut out, a, 0),
        scalar => {
            write_scalar(&mut out, scalar, 0);
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A non-empty map at indentation `n`, each entry starting on its own line (the first at
/// the current position).
fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, n: usize) {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            indent(out, n);
        }
        write_entry(out, key, value, n);
    }
}

/// One entry of a map at indentation `n`, from the current position.
fn write_entry(out: &mut String, key: &str, value: &Value, n: usize) {
    write_text(out, key, n, false);
    out.push(':');
    match value {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            indent(out, n + 2);
            write_map(out, m, n + 2);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            indent(out, n);
            write_seq(out, a, n);
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar, n + 2);
            out.push('\n');
        }
    }
}

/// One entry of a document's top-level map as YAML (ending with a line break): a
/// non-empty map's document is its entries' texts one after the other, so a large document
/// can be written an entry at a time.
pub fn to_yaml_entry(key: &str, value: &Value) -> String {
    let mut out = String::new();
    write_entry(&mut out, key, value, 0);
    out
}

/// A non-empty list at indentation `n`, the first item at the current position.
fn write_seq(out: &mut String, items: &[Value], n: usize) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            indent(out, n);
        }
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => write_map(out, m, n + 2),
            Value::Array(a) if !a.is_empty() => write_seq(out, a, n + 2),
            scalar => {
                write_scalar(out, scalar, n + 2);
                out.push('\n');
            }
        }
    }
}

/// A scalar (or an empty collection) whose block lines, if any, indent by `n`.
fn write_scalar(out: &mut String, value: &Value, n: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(x) => {
            let _ = write!(out, "{x}");
        }
        Value::String(s) => write_text(out, s, n, true),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// Text, plain when it may be, else as a literal block (when `block` allows one: not for
/// keys) or quoted.
fn write_text(out: &mut String, text: &str, n: usize, block: bool) {
    if may_be_plain(text) {
        out.push_str(text);
    } else if block && may_be_literal(text) {
        write_literal(out, text, n);
    } else if text.chars().all(|c| printable(c) && c != '\n' && c != '\t') {
        out.push('\'');
        out.push_str(&text.replace('\'', "''"));
        out.push('\'');
    } else {
        write_double_quoted(out, text);
    }
}

/// YAML 1.1's booleans, which YAML 1.2 reads as text.
const OLD_BOOLEANS: [&str; 18] = [
    "y", "Y", "n", "N", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF", "=", "<<",
];

/// True when `text` may stand unquoted: it reads back as itself, cannot pass for a number or
/// a date with a YAML 1.1 reader, and starts, ends and continues with nothing YAML reads as
/// structure.
fn may_be_plain(text: &str) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let second = chars.next();
    let starts_ok = match first {
        // A list item, unless followed by text (`--flag`, `-x`).
        '-' => second.is_some_and(|c| !matches!(c, ' ' | '.') && !c.is_ascii_digit()),
        '+' | '.' => !second.is_some_and(|c| c == '.' || c.is_ascii_digit()),
        c if c.is_ascii_digit() => !numeric_to_older_readers(text),
        '?' | ':' | ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\''
        | '"' | '%' | '@' | '`' | ' ' => false,
        _ => true,
    };
    starts_ok
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
        && text.chars().all(|c| printable(c) && c != '\t' && c != '\n')
        && !OLD_BOOLEANS.contains(&text)
        && is_plain_text(text)
}

/// True when `text`, starting with a digit, may be a number or a date to a YAML 1.1 reader:
/// digits with `_`, `:`, at most one `.`, an exponent (`0123`, `1_000`, `1:20`, `1.5e3`), or
/// a date (`2001-12-14…`). `1.2.0` or `3rd` is text to every reader.
fn numeric_to_older_readers(text: &str) -> bool {
    let b = text.as_bytes();
    let date = b.len() >= 6 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-';
    let number = text
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'_' | b':' | b'.' | b'e' | b'E' | b'+' | b'-'))
        && text.matches('.').count() <= 1;
    date || number
}

/// True when `text` can be a literal block: several lines, not all blank, all printable, no
/// carriage return, no line ending in a space or tab (which a reader may take for layout).
fn may_be_literal(text: &str) -> bool {
    text.contains('\n')
        && !text.trim().is_empty()
        && text.chars().all(|c| c == '\n' || c == '\t' || printable(c))
        && !text.contains(" \n")
        && !text.contains("\t\n")
        && !text.ends_with([' ', '\t'])
}

/// `|`, its indicators and `text`'s lines, each indented by `n` (at least 2), which is
/// always 2 more than the collection holding the text: the indentation indicator, when the
/// first line starts with a space or is empty, is 2.
fn write_literal(out: &mut String, text: &str, n: usize) {
    let n = n.max(2);
    out.push('|');
    if text.starts_with([' ', '\n']) {
        out.push('2');
    }
    let body = text.trim_end_matches('\n');
    let breaks = text.len() - body.len();
    out.push_str(match breaks {
        0 => "-",
        1 => "",
        _ => "+",
    });
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(out, n);
            out.push_str(line);
        }
    }
    for _ in 1..breaks {
        out.push('\n');
    }
}

/// `text` in double quotes, escaping what YAML requires.
fn write_double_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xff => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
}

/// YAML's printable characters, tab and line breaks aside, less those some readers take for
/// line breaks (U+0085, U+2028, U+2029) or a byte-order mark.
fn printable(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(value: &Value) -> Value {
        let text = to_yaml(value);
        let budget = crate::Budget::new(1 << 20, 1 << 26);
        crate::yaml_read::read_yaml(&text, &budget, 128, &mut crate::build::Values)
            .unwrap_or_else(|e| panic!("{e:?} reading {text}"))
    }

    #[test]
    fn writes_block_style_that_reads_back() {
        let value = json!({
            "name": "x",
            "args": ["a", 1, true, null, {"k": "v", "l": [1, 2]}, [3, [4]]],
            "empty": {}, "none": [],
            "nested": {"deep": {"deeper": "yes"}},
        });
        assert_eq!(
            to_yaml(&value),
            "name: x\nargs:\n- a\n- 1\n- true\n- null\n- k: v\n  l:\n  - 1\n  - 2\n- - 3\n  - - 4\n\
             empty: {}\nnone: []\nnested:\n  deep:\n    deeper: 'yes'\n"
        );
        assert_eq!(round_trip(&value), value);
    }

    #[test]
    fn text_that_would_read_as_something_else_is_quoted() {
        for text in [
            "", "true", "null", "~", "12", "0x1f", "1e3", ".inf", "- a", "a: b", "a #b", "#c",
            "{x}", "[1]", "*a", "&a", "!t", "|", ">", "'", "\"", "%x", "@x", "`x", " lead",
            "trail ", "key:", "on", "0123", "-1", "+1", "é ü", "a'b",
        ] {
            let value = json!({ text: text });
            assert_eq!(round_trip(&value), value, "{text:?} as {}", to_yaml(&value));
        }
        assert_eq!(to_yaml(&json!("0123")), "'0123'\n");
        assert_eq!(
            to_yaml(&json!([
                "1.2.3",
                "3rd",
                "1_000",
                "1:20",
                "2001-12-14",
                "2001-12-14T21:59:43Z"
            ])),
            "- 1.2.3\n- 3rd\n- '1_000'\n- '1:20'\n- '2001-12-14'\n- '2001-12-14T21:59:43Z'\n"
        );
        assert_eq!(
            to_yaml(&json!(["--flag", "-x", "-", "-1", "-.5", ":a", "?b"])),
            "- --flag\n- -x\n- '-'\n- '-1'\n- '-.5'\n- ':a'\n- '?b'\n"
        );
        assert_eq!(to_yaml(&json!("a'b: c")), "'a''b: c'\n");
        assert_eq!(to_yaml(&json!("{x}")), "'{x}'\n");
        assert_eq!(to_yaml(&json!("${HOME}/x")), "${HOME}/x\n");
    }

    #[test]
    fn lines_become_literal_blocks_that_keep_every_break_and_space() {
        for text in [
            "a\nb",
            "a\nb\n",
            "a\nb\n\n",
            "\n\na\n",
            "  lead\nb",
            "\n  x",
            "\n",
            "\n\n",
            "a\n\n  b\n",
            "tab\there\nx",
        ] {
            let value = json!({ "k": text, "l": [text] });
            assert_eq!(round_trip(&value), value, "{text:?} as {}", to_yaml(&value));
        }
        assert_eq!(to_yaml(&json!({"k": "a\nb\n"})), "k: |\n  a\n  b\n");
        assert_eq!(to_yaml(&json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
        assert_eq!(
            to_yaml(&json!({"k": "  a\nb\n\n"})),
            "k: |2+\n    a\n  b\n\n"
        );
    }

    #[test]
    fn what_a_block_cannot_hold_is_double_quoted() {
        for text in [
            "a \nb",
            "a\r\nb",
            "bell\u{7}",
            "del\u{7f}",
            "nel\u{85}",
            "\u{2028}",
            "\u{feff}x",
            "t\t",
            "a\n ",
        ] {
            let value = json!([text]);
            let yaml = to_yaml(&value);
            assert!(yaml.starts_with("- \""), "{text:?} as {yaml}");
            assert_eq!(round_trip(&value), value, "{text:?} as {yaml}");
        }
    }

    #[test]
    fn scalars_at_the_top_stand_alone() {
        assert_eq!(to_yaml(&json!(null)), "null\n");
        assert_eq!(to_yaml(&json!(1.5)), "1.5\n");
        assert_eq!(to_yaml(&json!({})), "{}\n");
        assert_eq!(to_yaml(&json!([])), "[]\n");
    }
}
