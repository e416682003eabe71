//! Secret markers: a secret value a tool prints on stdout is replaced, in every record,
//! checkpoint and display, by `%{secret:NAME}` naming its variable; a later step (or a
//! resumed run) gets the real value back from the environment when the marker reaches it as
//! a parameter.
//!
//! Markers cannot be forged: a run of `%` that the tool itself printed before `{secret:` is
//! doubled, so an even run is text and only an odd run opens a marker. Text without
//! `{secret:` in it is never changed.

use serde_json::Value;

/// What opens a marker after its `%`.
const OPEN: &str = "{secret:";

/// A secret to mark: the variable's name and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    /// The variable, named by the marker.
    pub name: String,
    /// Its value, never written anywhere.
    pub value: String,
}

/// The marker naming `name`.
pub fn marker(name: &str) -> String {
    format!("%{OPEN}{name}}}")
}

/// `text` with every value of `secrets` replaced by its marker (the secrets in order: an
/// earlier one wins where values overlap, so callers list the restorable ones first), and any
/// forged-looking marker the text already held escaped. `None` when nothing changed.
pub fn mark_text(text: &str, secrets: &[Secret]) -> Option<String> {
    let pieces = split(text, secrets);
    if matches!(pieces[..], [Piece::Text(_)]) && !text.contains(OPEN) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Text(t) => {
                let marker_follows = matches!(pieces.get(i + 1), Some(Piece::Marker(_)));
                escape_into(&mut out, t, marker_follows);
            }
            Piece::Marker(name) => out.push_str(&marker(name)),
        }
    }
    (out != text).then_some(out)
}

/// Stdout with its secrets marked. JSON output is marked in its parsed strings (so a
/// secret the tool escaped, `"\u0041…"`, is found too) and written back compactly when
/// something changed; any other output is marked as text. `None` when nothing changed.
pub fn mark_stdout(stdout: &[u8], secrets: &[Secret]) -> Option<Vec<u8>> {
    // Most output holds no secret, no escape and no marker: nothing is parsed then (the step
    // record parses it anyway). Only a JSON escape (`\u0073…`) can hide a secret's bytes.
    let holds = |needle: &[u8]| memchr::memmem::find(stdout, needle).is_some();
    let present = secrets
        .iter()
        .any(|s| !s.value.is_empty() && holds(s.value.as_bytes()));
    let escaped = !secrets.is_empty() && memchr::memchr(b'\\', stdout).is_some();
    if !present && !escaped && !holds(OPEN.as_bytes()) {
        return None;
    }
    let text = String::from_utf8_lossy(stdout);
    if let Ok(mut value) = serde_json::from_str::<Value>(&text) {
        if mark_value(&mut value, secrets) {
            let mut out = serde_json::to_vec(&value).unwrap_or_default();
            if stdout.ends_with(b"\n") {
                out.push(b'\n');
            }
            return Some(out);
        }
        // Not in a string: a number that is the secret, say; mark the text.
    }
    mark_text(&text, secrets).map(String::into_bytes)
}

/// Marks every string (and key) of `value`; true when something changed.
pub fn mark_value(value: &mut Value, secrets: &[Secret]) -> bool {
    let mut changed = false;
    match value {
        Value::String(s) => {
            if let Some(marked) = mark_text(s, secrets) {
                *s = marked;
                changed = true;
            }
        }
        Value::Array(items) => {
            for item in items {
                changed |= mark_value(item, secrets);
            }
        }
        Value::Object(map) => {
            let keys_change = map.keys().any(|k| mark_text(k, secrets).is_some());
            if keys_change {
                let old = std::mem::take(map);
                for (k, v) in old {
                    map.insert(mark_text(&k, secrets).unwrap_or(k), v);
                }
                changed = true;
            }
            for v in map.values_mut() {
                changed |= mark_value(v, secrets);
            }
        }
        _ => {}
    }
    changed
}

/// The names of every marker in `value`, in order of first appearance.
pub fn markers_in(value: &Value) -> Vec<String> {
    let mut names = Vec::new();
    visit_strings(value, &mut |s| {
        for piece in parse(s) {
            if let Parsed::Marker(name) = piece {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
    });
    names
}

/// `text` with markers replaced by their variables' values (`lookup`) and escaped `%` runs
/// restored; `Err(name)` for the first marker whose variable `lookup` does not know. `None`
/// when `text` holds no marker and nothing escaped.
pub fn restore_text(
    text: &str,
    lookup: &mut impl FnMut(&str) -> Option<String>,
) -> Result<Option<String>, String> {
    if !text.contains(OPEN) {
        return Ok(None);
    }
    let mut out = String::with_capacity(text.len());
    for piece in parse(text) {
        match piece {
            Parsed::Text(t) => out.push_str(t),
            Parsed::Marker(name) => out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?),
        }
    }
    Ok(Some(out))
}

/// Restores every string (and key) of `value` in place; `Err(name)` as
/// [`restore_text`]. Returns the (name, value) pairs restored.
pub fn restore_value(
    value: &mut Value,
    lookup: &mut impl FnMut(&str) -> Option<String>,
) -> Result<Vec<Secret>, String> {
    let mut restored = Vec::new();
    let mut recording = |name: &str| {
        let value = lookup(name)?;
        if !restored.iter().any(|s: &Secret| s.name == name) {
            restored.push(Secret {
                name: name.to_owned(),
                value: value.clone(),
            });
        }
        Some(value)
    };
    restore_in(value, &mut recording)?;
    Ok(restored)
}

fn restore_in(
    value: &mut Value,
    lookup: &mut impl FnMut(&str) -> Option<String>,
) -> Result<(), String> {
    match value {
        Value::String(s) => {
            if let Some(restored) = restore_text(s, lookup)? {
                *s = restored;
            }
        }
        Value::Array(items) => {
            for item in items {
                restore_in(item, lookup)?;
            }
        }
        Value::Object(map) => {
            if map.keys().any(|k| k.contains(OPEN)) {
                let old = std::mem::take(map);
                for (k, v) in old {
                    let k = restore_text(&k, lookup)?.unwrap_or(k);
                    map.insert(k, v);
                }
            }
            for v in map.values_mut() {
                restore_in(v, lookup)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn visit_strings(value: &Value, f: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| visit_strings(v, f)),
        Value::Object(map) => {
            for (k, v) in map {
                f(k);
                visit_strings(v, f);
            }
        }
        _ => {}
    }
}

/// A piece of text to mark: the tool's own text, or a secret found in it.
enum Piece<'a> {
    Text(&'a str),
    Marker(&'a str),
}

/// Splits `text` at every occurrence of a secret value, the secrets taken in order (an
/// earlier one is found first, a later one only in what is left between).
fn split<'a>(text: &'a str, secrets: &'a [Secret]) -> Vec<Piece<'a>> {
    let mut pieces = vec![Piece::Text(text)];
    for secret in secrets.iter().filter(|s| !s.value.is_empty()) {
        let mut next = Vec::with_capacity(pieces.len());
        for piece in pieces {
            let Piece::Text(mut rest) = piece else {
                next.push(piece);
                continue;
            };
            while let Some(at) = rest.find(&secret.value) {
                if at > 0 {
                    next.push(Piece::Text(&rest[..at]));
                }
                next.push(Piece::Marker(&secret.name));
                rest = &rest[at + secret.value.len()..];
            }
            if !rest.is_empty() {
                next.push(Piece::Text(rest));
            }
        }
        pieces = next;
    }
    if pieces.is_empty() {
        pieces.push(Piece::Text(""));
    }
    pieces
}

/// Writes the tool's own `text`, doubling each run of `%` that precedes `{secret:` (and the
/// trailing run when a marker follows), so that no run the tool printed opens a marker.
fn escape_into(out: &mut String, text: &str, marker_follows: bool) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            let next = memchr::memchr(b'%', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            out.push_str(&text[i..next]);
            i = next;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i] == b'%' {
            i += 1;
        }
        let run = &text[start..i];
        out.push_str(run);
        let opens = text[i..].starts_with(OPEN) || (i == bytes.len() && marker_follows);
        if opens {
            out.push_str(run);
        }
    }
}

/// A piece of marked text.
enum Parsed<'a> {
    Text(&'a str),
    Marker(&'a str),
}

/// Parses marked text: an odd run of `%` before `{secret:NAME}` is a marker (after half of
/// the rest of the run); an even run is half as many `%` and the text that follows.
fn parse(text: &str) -> Vec<Parsed<'_>> {
    let mut out = Vec::new();
    let mut literal_from = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find(OPEN).map(|n| search + n) {
        let run = text[..found]
            .bytes()
            .rev()
            .take_while(|b| *b == b'%')
            .count();
        let name_end = text[found + OPEN.len()..]
            .find('}')
            .map(|n| found + OPEN.len() + n);
        let name = name_end.map(|end| &text[found + OPEN.len()..end]);
        let valid = name.is_some_and(is_var_name);
        let run_start = found - run;
        out.push(Parsed::Text(&text[literal_from..run_start]));
        out.push(Parsed::Text(&text[run_start..run_start + run / 2]));
        match (run % 2 == 1, valid, name, name_end) {
            (true, true, Some(name), Some(end)) => {
                out.push(Parsed::Marker(name));
                literal_from = end + 1;
            }
            _ => {
                // Text: keep the half run and `{secret:` as printed.
                out.push(Parsed::Text(&text[run_start + run - run % 2..found]));
                literal_from = found;
            }
        }
        search = found + OPEN.len();
        if literal_from > search {
            search = literal_from;
        }
    }
    out.push(Parsed::Text(&text[literal_from..]));
    out.retain(|p| !matches!(p, Parsed::Text("")));
    out
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secrets() -> Vec<Secret> {
        vec![
            Secret {
                name: "TOKEN".into(),
                value: "s3cr3t".into(),
            },
            Secret {
                name: "AUTH".into(),
                value: "Bearer s3cr3t-long".into(),
            },
        ]
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cr3t".into()),
            "AUTH" => Some("Bearer s3cr3t-long".into()),
            _ => None,
        }
    }

    fn round_trip(text: &str) -> String {
        let marked = mark_text(text, &secrets()).unwrap_or_else(|| text.to_owned());
        restore_text(&marked, &mut env).unwrap().unwrap_or(marked)
    }

    #[test]
    fn a_secret_becomes_its_marker_and_comes_back() {
        assert_eq!(
            mark_text("key=s3cr3t;again s3cr3t", &secrets()).unwrap(),
            "key=%{secret:TOKEN};again %{secret:TOKEN}"
        );
        assert_eq!(
            round_trip("key=s3cr3t;again s3cr3t"),
            "key=s3cr3t;again s3cr3t"
        );
        assert_eq!(mark_text("nothing here", &secrets()), None);
        assert_eq!(mark_text("s3cr3t", &secrets()).unwrap(), "%{secret:TOKEN}");
    }

    #[test]
    fn the_first_listed_secret_wins_where_values_overlap() {
        assert_eq!(
            mark_text("Bearer s3cr3t-long", &secrets()).unwrap(),
            "Bearer %{secret:TOKEN}-long"
        );
    }

    #[test]
    fn markers_a_tool_prints_are_text_not_markers() {
        let forged = "%{secret:TOKEN} and %%{secret:TOKEN} and %%%{secret:X}";
        let marked = mark_text(forged, &[]).unwrap();
        assert_eq!(
            marked,
            "%%{secret:TOKEN} and %%%%{secret:TOKEN} and %%%%%%{secret:X}"
        );
        assert_eq!(markers_in(&json!(marked)), Vec::<String>::new());
        assert_eq!(restore_text(&marked, &mut env).unwrap().unwrap(), forged);
    }

    #[test]
    fn percent_signs_before_a_secret_stay_text() {
        let text = "100%s3cr3t and 50%% {secret: x";
        let marked = mark_text(text, &secrets()).unwrap();
        assert_eq!(marked, "100%%%{secret:TOKEN} and 50%% {secret: x");
        assert_eq!(markers_in(&json!(marked)), ["TOKEN"]);
        assert_eq!(round_trip(text), text);
    }

    #[test]
    fn json_output_is_marked_in_its_parsed_strings() {
        let out = mark_stdout(b"{\"t\": \"\\u0073\\u0033cr3t\", \"n\": 1}\n", &secrets()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"t\":\"%{secret:TOKEN}\",\"n\":1}\n"
        );
        assert_eq!(mark_stdout(b"{\"t\": 1}", &secrets()), None);
    }

    #[test]
    fn an_unknown_variable_is_named() {
        assert_eq!(
            restore_text("x %{secret:GONE} y", &mut env),
            Err("GONE".to_owned())
        );
        let mut v = json!({"a": ["%{secret:TOKEN}"], "%{secret:AUTH}": 1});
        let restored = restore_value(&mut v, &mut env).unwrap();
        assert_eq!(v, json!({"a": ["s3cr3t"], "Bearer s3cr3t-long": 1}));
        assert_eq!(
            restored.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["AUTH", "TOKEN"]
        );
    }
}
