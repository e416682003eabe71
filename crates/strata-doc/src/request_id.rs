//! The `id` of a request line that could not be read as a request, so that its error reply
//! still carries it: every batch server (`render --batch`, `run --batch`, `plan resolve
//! --batch`) echoes the id of a request whenever its line's id can be read.

use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use strata_core::Limits;

use crate::{Bounded, Budget};

/// The value of the top-level `id` of a request `line`, read within `limits`, whatever
/// else is wrong with the line: a key repeated, a number out of range, an unknown field,
/// bytes that are not UTF-8 (read with the bad bytes replaced). `None` when the line is not
/// one JSON object, has no `id`, has it twice (which one would be meant?), or the id itself
/// cannot be read.
pub fn request_id(line: &[u8], limits: &Limits) -> Option<Value> {
    let text = String::from_utf8_lossy(line);
    let budget = Budget::of(limits);
    let mut de = serde_json::Deserializer::from_str(&text);
    let id = IdOf(&budget).deserialize(&mut de).ok()?;
    de.end().ok()?;
    id
}

/// Reads an object, keeping its `id` and passing over everything else unread.
struct IdOf<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for IdOf<'_> {
    type Value = Option<Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IdOf<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Value>, A::Error> {
        let (mut id, mut twice) = (None, false);
        while let Some(key) = map.next_key::<String>()? {
            if key == "id" {
                twice |= id.replace(map.next_value_seed(Bounded(self.0))?).is_some();
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(id.filter(|_| !twice))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn id(line: &[u8]) -> Option<Value> {
        request_id(line, &Limits::default())
    }

    #[test]
    fn the_id_is_read_whatever_else_is_wrong() {
        assert_eq!(
            id(br#"{"id": 7, "template": 1, "template": 2}"#),
            Some(json!(7))
        );
        assert_eq!(id(br#"{"x": 1e400, "id": "a"}"#), Some(json!("a")));
        assert_eq!(
            id(br#"{"id": [1, {"k": null}], "bogus": {"a": 1, "a": 2}}"#),
            Some(json!([1, {"k": null}]))
        );
        assert_eq!(id(b"{\"id\": 3, \"t\": \"\xff\"}"), Some(json!(3)));
        assert_eq!(id(br#"{"i\u0064": 4}"#), Some(json!(4)));
    }

    #[test]
    fn no_id_when_it_cannot_be_read() {
        for line in [
            &br#"{"id": 1, "id": 2}"#[..],
            br#"{"id": 1e400}"#,
            br#"{"id": 1, "template": "#,
            br#"{"id": 1} {"id": 2}"#,
            br#"[{"id": 1}]"#,
            br#"{"template": "x"}"#,
            b"not json",
            b"",
        ] {
            assert_eq!(id(line), None, "{}", String::from_utf8_lossy(line));
        }
        let limits = Limits {
            yaml_nodes: 3,
            ..Limits::default()
        };
        assert_eq!(request_id(br#"{"id": [1, 2, 3]}"#, &limits), None);
        assert_eq!(
            request_id(br#"{"id": [1, 2], "x": [1, 2, 3, 4]}"#, &limits),
            Some(json!([1, 2]))
        );
    }
}
