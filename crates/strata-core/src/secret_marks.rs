//! Secret markers: a secret value a tool prints on stdout is replaced, in every record,
//! checkpoint and display, by `%{secret:NAME:TAG}`, naming its variable; a later step of the
//! same run (or the run resumed) gets the real value back when the marker reaches it as a
//! parameter.
//!
//! A marker is minted for one run: `TAG` is the first 8 bytes, in hex, of HMAC-SHA256 of the
//! name under the run's [`MarkKey`], which strata never shows. Only a marker whose tag holds
//! under the key of the run at hand is restored. Everything else — a caller's
//! `%{secret:HOME}`, a marker a tool prints itself, a marker of another run, a marker cut in
//! two and joined again — is text, and reaches the tool byte for byte: nothing is escaped, so
//! no caller text can become a secret however it is split, joined or sliced on its way.

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::hex::{from_hex, to_hex};

/// What opens a marker.
const OPEN: &str = "%{secret:";

/// Hex digits of a marker's tag (8 bytes).
const TAG_HEX: usize = 16;

/// The key a run's markers are minted and checked with: 32 bytes that only strata holds.
/// It is never printed (`Debug` shows no byte of it).
#[derive(Clone, PartialEq, Eq)]
pub struct MarkKey([u8; 32]);

impl std::fmt::Debug for MarkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MarkKey(..)")
    }
}

impl MarkKey {
    /// The key made of `bytes`.
    pub const fn from_bytes(bytes: [u8; 32]) -> MarkKey {
        MarkKey(bytes)
    }

    /// The key's bytes, to hand it to another engine of the same run (a worker).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key as 64 hex digits, for a transport that carries text.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// The key written by [`MarkKey::to_hex`]; `None` for anything else.
    pub fn from_hex(text: &str) -> Option<MarkKey> {
        Some(MarkKey(from_hex(text)?.try_into().ok()?))
    }

    /// The marker of variable `name` for this key's run.
    pub fn marker(&self, name: &str) -> String {
        let mut out = String::with_capacity(OPEN.len() + name.len() + TAG_HEX + 2);
        out.push_str(OPEN);
        out.push_str(name);
        out.push(':');
        out.push_str(&to_hex(&self.mac(name)[..TAG_HEX / 2]));
        out.push('}');
        out
    }

    /// Whether `tag` (hex) is the tag of `name` under this key, compared in constant time.
    fn holds(&self, name: &str, tag: &str) -> bool {
        let Some(given) = from_hex(tag).filter(|t| t.len() == TAG_HEX / 2) else {
            return false;
        };
        let mut mac = self.hasher();
        mac.update(name.as_bytes());
        mac.verify_truncated_left(&given).is_ok()
    }

    fn hasher(&self) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any size");
        mac.update(b"strata secret marker\0");
        mac
    }

    fn mac(&self, name: &str) -> [u8; 32] {
        let mut mac = self.hasher();
        mac.update(name.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

/// A secret to mark: the variable's name and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    /// The variable, named by the marker.
    pub name: String,
    /// Its value, never written anywhere.
    pub value: String,
}

/// `text` with every value of `secrets` replaced by its marker under `key` (the secrets in
/// order: an earlier one wins where values overlap, so callers list the restorable ones
/// first). `None` when no secret is in it.
pub fn mark_text(text: &str, secrets: &[Secret], key: &MarkKey) -> Option<String> {
    let pieces = split(text, secrets);
    if matches!(pieces[..], [Piece::Text(_)]) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Marker(name) => out.push_str(&key.marker(name)),
        }
    }
    Some(out)
}

/// Stdout with its secrets marked under `key`. JSON output is marked in its parsed strings
/// (so a secret the tool escaped, `"\u0041…"`, is found too) and written back compactly when
/// something changed; any other output is marked as text. `None` when nothing changed.
pub fn mark_stdout(stdout: &[u8], secrets: &[Secret], key: &MarkKey) -> Option<Vec<u8>> {
    // Most output holds no secret and no escape: nothing is parsed then (the step record
    // parses it anyway). Only a JSON escape (`\u0073…`) can hide a secret's bytes.
    let present = secrets
        .iter()
        .any(|s| !s.value.is_empty() && memchr::memmem::find(stdout, s.value.as_bytes()).is_some());
    let escaped = !secrets.is_empty() && memchr::memchr(b'\\', stdout).is_some();
    if !present && !escaped {
        return None;
    }
    let text = String::from_utf8_lossy(stdout);
    if let Ok(mut value) = serde_json::from_str::<Value>(&text) {
        if mark_value(&mut value, secrets, key) {
            let mut out = serde_json::to_vec(&value).unwrap_or_default();
            if stdout.ends_with(b"\n") {
                out.push(b'\n');
            }
            return Some(out);
        }
        // Not in a string: a number that is the secret, say; mark the text.
    }
    mark_text(&text, secrets, key).map(String::into_bytes)
}

/// Marks every string (and key) of `value` under `key`; true when something changed.
pub fn mark_value(value: &mut Value, secrets: &[Secret], key: &MarkKey) -> bool {
    let mut changed = false;
    match value {
        Value::String(s) => {
            if let Some(marked) = mark_text(s, secrets, key) {
                *s = marked;
                changed = true;
            }
        }
        Value::Array(items) => {
            for item in items {
                changed |= mark_value(item, secrets, key);
            }
        }
        Value::Object(map) => {
            if map.keys().any(|k| mark_text(k, secrets, key).is_some()) {
                let old = std::mem::take(map);
                for (k, v) in old {
                    map.insert(mark_text(&k, secrets, key).unwrap_or(k), v);
                }
                changed = true;
            }
            for v in map.values_mut() {
                changed |= mark_value(v, secrets, key);
            }
        }
        _ => {}
    }
    changed
}

/// The names of the markers of `value` minted under `key`, in order of first appearance.
pub fn markers_in(value: &Value, key: &MarkKey) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    visit_strings(value, &mut |s| {
        for piece in parse(s) {
            if let Parsed::Marker { name, tag, .. } = piece {
                if key.holds(name, tag) && !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
    });
    names
}

/// Whether `value` holds text shaped as a marker, minted under any key: what a reply shown
/// to people must not hold.
pub fn holds_marker(value: &Value) -> bool {
    let mut found = false;
    visit_strings(value, &mut |s| {
        found = found || parse(s).iter().any(|p| matches!(p, Parsed::Marker { .. }));
    });
    found
}

/// `text` with its markers minted under `key` replaced by their variables' values
/// (`lookup`); every other byte as it was. `Err(name)` for the first such marker whose
/// variable `lookup` does not give. `None` when `text` holds no such marker.
pub fn restore_text(
    text: &str,
    key: &MarkKey,
    lookup: &mut impl FnMut(&str) -> Option<String>,
) -> Result<Option<String>, String> {
    if !text.contains(OPEN) {
        return Ok(None);
    }
    let pieces = parse(text);
    let restores =
        |p: &Parsed<'_>| matches!(p, Parsed::Marker { name, tag, .. } if key.holds(name, tag));
    if !pieces.iter().any(restores) {
        return Ok(None);
    }
    let mut out = String::with_capacity(text.len());
    for piece in &pieces {
        match piece {
            Parsed::Marker { name, tag, .. } if key.holds(name, tag) => {
                out.push_str(&lookup(name).ok_or_else(|| (*name).to_owned())?);
            }
            Parsed::Text(t) | Parsed::Marker { whole: t, .. } => out.push_str(t),
        }
    }
    Ok(Some(out))
}

/// Restores every string (and key) of `value` in place, as [`restore_text`]. Returns the
/// (name, value) pairs restored.
pub fn restore_value(
    value: &mut Value,
    key: &MarkKey,
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
    restore_in(value, key, &mut recording)?;
    Ok(restored)
}

fn restore_in(
    value: &mut Value,
    key: &MarkKey,
    lookup: &mut impl FnMut(&str) -> Option<String>,
) -> Result<(), String> {
    match value {
        Value::String(s) => {
            if let Some(restored) = restore_text(s, key, lookup)? {
                *s = restored;
            }
        }
        Value::Array(items) => {
            for item in items {
                restore_in(item, key, lookup)?;
            }
        }
        Value::Object(map) => {
            if map.keys().any(|k| k.contains(OPEN)) {
                let old = std::mem::take(map);
                for (k, v) in old {
                    let k = restore_text(&k, key, lookup)?.unwrap_or(k);
                    map.insert(k, v);
                }
            }
            for v in map.values_mut() {
                restore_in(v, key, lookup)?;
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

/// A piece of text that may hold markers: text, or a span shaped as a marker (`whole`),
/// its tag not yet checked.
enum Parsed<'a> {
    Text(&'a str),
    Marker {
        name: &'a str,
        tag: &'a str,
        whole: &'a str,
    },
}

/// Parses text for markers: `%{secret:NAME:TAG}` with NAME a variable name and TAG 16
/// lower-case hex digits; everything else is text.
fn parse(text: &str) -> Vec<Parsed<'_>> {
    let mut out = Vec::new();
    let mut literal_from = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find(OPEN).map(|n| search + n) {
        let rest = &text[found + OPEN.len()..];
        match marker_at(rest) {
            Some((name, tag, len)) => {
                if found > literal_from {
                    out.push(Parsed::Text(&text[literal_from..found]));
                }
                let whole = &text[found..found + OPEN.len() + len];
                out.push(Parsed::Marker { name, tag, whole });
                literal_from = found + OPEN.len() + len;
                search = literal_from;
            }
            None => search = found + 1,
        }
    }
    if literal_from < text.len() {
        out.push(Parsed::Text(&text[literal_from..]));
    }
    out
}

/// `NAME:TAG}` at the start of `rest`: the name, the tag and the length read.
fn marker_at(rest: &str) -> Option<(&str, &str, usize)> {
    let name_len = rest
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
    let name = &rest[..name_len];
    if !name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
    {
        return None;
    }
    let after = &rest[name_len..];
    let tag = after.strip_prefix(':')?.get(..TAG_HEX)?;
    if !tag.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        || after.as_bytes().get(1 + TAG_HEX) != Some(&b'}')
    {
        return None;
    }
    Some((name, tag, name_len + 1 + TAG_HEX + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: MarkKey = MarkKey::from_bytes([7; 32]);
    const OTHER: MarkKey = MarkKey::from_bytes([8; 32]);

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
        let marked = mark_text(text, &secrets(), &KEY).unwrap_or_else(|| text.to_owned());
        restore_text(&marked, &KEY, &mut env)
            .unwrap()
            .unwrap_or(marked)
    }

    #[test]
    fn a_marker_names_its_variable_and_carries_a_tag_of_its_key() {
        let m = KEY.marker("TOKEN");
        assert!(m.starts_with("%{secret:TOKEN:") && m.ends_with('}'), "{m}");
        assert_eq!(m.len(), "%{secret:TOKEN:}".len() + 16);
        assert_ne!(m, OTHER.marker("TOKEN"));
        assert_ne!(m[15..], KEY.marker("AUTH")[14..]);
        assert_eq!(format!("{KEY:?}"), "MarkKey(..)");
        assert_eq!(MarkKey::from_hex(&KEY.to_hex()), Some(KEY));
        assert_eq!(MarkKey::from_hex("07"), None);
        assert_eq!(MarkKey::from_hex(&"G".repeat(64)), None);
    }

    #[test]
    fn a_secret_becomes_its_marker_and_comes_back() {
        let t = KEY.marker("TOKEN");
        assert_eq!(
            mark_text("key=s3cr3t;again s3cr3t", &secrets(), &KEY).unwrap(),
            format!("key={t};again {t}")
        );
        assert_eq!(
            round_trip("key=s3cr3t;again s3cr3t"),
            "key=s3cr3t;again s3cr3t"
        );
        assert_eq!(mark_text("nothing here", &secrets(), &KEY), None);
        assert_eq!(mark_text("s3cr3t", &secrets(), &KEY).unwrap(), t);
    }

    #[test]
    fn the_first_listed_secret_wins_where_values_overlap() {
        assert_eq!(
            mark_text("Bearer s3cr3t-long", &secrets(), &KEY).unwrap(),
            format!("Bearer {}-long", KEY.marker("TOKEN"))
        );
    }

    #[test]
    fn markers_not_minted_under_the_key_are_text_byte_for_byte() {
        let t = KEY.marker("TOKEN");
        let forged = format!(
            "%{{secret:HOME}} %%{{secret:TOKEN}} {} %{{secret:TOKEN:0000000000000000}} {} {}",
            OTHER.marker("TOKEN"),
            &t[..t.len() - 1],
            t.to_uppercase()
        );
        assert_eq!(mark_text(&forged, &[], &KEY), None);
        assert!(markers_in(&json!(forged), &KEY).is_empty());
        assert!(holds_marker(&json!(forged)));
        assert_eq!(restore_text(&forged, &KEY, &mut env), Ok(None));
        // Text around a minted marker stays as it was, `%` runs included.
        let mixed = format!("100%{t}%%{{secret:X}}%");
        assert_eq!(
            restore_text(&mixed, &KEY, &mut env).unwrap().unwrap(),
            "100%s3cr3t%%{secret:X}%"
        );
    }

    #[test]
    fn json_output_is_marked_in_its_parsed_strings() {
        let out = mark_stdout(
            b"{\"t\": \"\\u0073\\u0033cr3t\", \"n\": 1}\n",
            &secrets(),
            &KEY,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{{\"t\":\"{}\",\"n\":1}}\n", KEY.marker("TOKEN"))
        );
        assert_eq!(mark_stdout(b"{\"t\": 1}", &secrets(), &KEY), None);
        assert_eq!(mark_stdout(b"%{secret:TOKEN}", &secrets(), &KEY), None);
    }

    #[test]
    fn an_unknown_variable_is_named() {
        let gone = KEY.marker("GONE");
        assert_eq!(
            restore_text(&format!("x {gone} y"), &KEY, &mut env),
            Err("GONE".to_owned())
        );
        let (t, a) = (KEY.marker("TOKEN"), KEY.marker("AUTH"));
        let mut v = json!({"a": [t], a: 1});
        let restored = restore_value(&mut v, &KEY, &mut env).unwrap();
        assert_eq!(v, json!({"a": ["s3cr3t"], "Bearer s3cr3t-long": 1}));
        assert_eq!(
            restored.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["AUTH", "TOKEN"]
        );
    }
}
