//! How knowledge merges into a feed: the three strategies of SPEC §6.

use std::borrow::Cow;

use serde_json::{Map, Value};
use strata_core::{value_to_text, Error, ErrorKind};

use crate::LAYER;

/// The variable a feed key names: `user_input` for `user_input` and for the braces form seed
/// 002 writes in prose, `{{ user_input }}` (spaces inside the braces optional). `None` when
/// the key is in braces but what they hold is not a plain variable name.
pub fn feed_name(key: &str) -> Option<&str> {
    let Some(inner) = key
        .trim()
        .strip_prefix("{{")
        .and_then(|k| k.strip_suffix("}}"))
    else {
        return Some(key);
    };
    let inner = inner.trim();
    let mut chars = inner.chars();
    let plain = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_');
    plain.then_some(inner)
}

/// `map` with every braces-form key (`{{ user_input }}`) renamed to the variable it names;
/// borrowed when no key needs it. An error when braces hold something other than a name, or
/// when a variable is given both ways. `what` names the map in messages (`feed`).
pub(crate) fn unbraced<'m>(
    map: &'m Map<String, Value>,
    what: &str,
) -> Result<Cow<'m, Map<String, Value>>, Error> {
    if map.keys().all(|k| feed_name(k) == Some(k.as_str())) {
        return Ok(Cow::Borrowed(map));
    }
    let mut out = Map::new();
    for (k, v) in map {
        let Some(name) = feed_name(k) else {
            return Err(Error::new(
                LAYER,
                ErrorKind::Invalid,
                format!("{what} key `{k}` is not a variable name"),
            )
            .with_hint(
                "name the variable alone (`user_input`) or in braces (`{{ user_input }}`)",
            ));
        };
        if name != k && map.contains_key(name) || out.contains_key(name) {
            return Err(Error::new(
                LAYER,
                ErrorKind::Invalid,
                format!(
                    "{what} gives variable `{name}` twice (as `{name}` and as `{{{{ {name} }}}}`)"
                ),
            )
            .with_hint("keep one of them"));
        }
        out.insert(name.to_string(), v.clone());
    }
    Ok(Cow::Owned(out))
}

/// What happens when knowledge holds a variable the feed already has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Merge {
    /// Knowledge replaces the feed's value.
    #[default]
    FeedOnly,
    /// The feed's value stays; knowledge only adds variables the feed lacks.
    AttributeOnly,
    /// Both are kept: strings (and other scalars, as text) joined with a blank line, lists
    /// appended, maps merged key by key with the same rule; null gives way to the other.
    Merge,
}

impl Merge {
    /// The strategies' names, as written on the command line and in graphs.
    pub const NAMES: [&'static str; 3] = ["feed_only", "attribute_only", "merge"];

    /// The strategy called `name`.
    pub fn parse(name: &str) -> Option<Merge> {
        match name {
            "feed_only" => Some(Merge::FeedOnly),
            "attribute_only" => Some(Merge::AttributeOnly),
            "merge" => Some(Merge::Merge),
            _ => None,
        }
    }

    /// The strategy's name.
    pub fn name(self) -> &'static str {
        match self {
            Merge::FeedOnly => "feed_only",
            Merge::AttributeOnly => "attribute_only",
            Merge::Merge => "merge",
        }
    }

    /// The value of a variable the feed holds as `existing` and knowledge as `incoming`.
    pub fn combine(self, existing: &Value, incoming: &Value) -> Value {
        match self {
            Merge::FeedOnly => incoming.clone(),
            Merge::AttributeOnly => existing.clone(),
            Merge::Merge => merged(existing, incoming),
        }
    }

    /// `feed` with `knowledge` merged in (variables only in knowledge are added).
    pub fn apply(
        self,
        feed: &Map<String, Value>,
        knowledge: &Map<String, Value>,
    ) -> Map<String, Value> {
        let mut out = feed.clone();
        for (k, v) in knowledge {
            let value = match out.get(k) {
                Some(existing) => self.combine(existing, v),
                None => v.clone(),
            };
            out.insert(k.clone(), value);
        }
        out
    }
}

fn merged(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Null, other) | (other, Value::Null) => other.clone(),
        (Value::Array(x), Value::Array(y)) => Value::Array(x.iter().chain(y).cloned().collect()),
        (Value::Object(x), Value::Object(y)) => Value::Object(Merge::Merge.apply(x, y)),
        _ => Value::String(format!("{}\n\n{}", value_to_text(a), value_to_text(b))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn apply(m: Merge, feed: Value, knowledge: Value) -> Value {
        Value::Object(m.apply(feed.as_object().unwrap(), knowledge.as_object().unwrap()))
    }

    #[test]
    fn feed_only_lets_knowledge_replace() {
        assert_eq!(
            apply(
                Merge::FeedOnly,
                json!({"a": "feed", "b": 1}),
                json!({"a": "know", "c": 2})
            ),
            json!({"a": "know", "b": 1, "c": 2})
        );
    }

    #[test]
    fn attribute_only_keeps_existing_values() {
        assert_eq!(
            apply(
                Merge::AttributeOnly,
                json!({"a": "feed"}),
                json!({"a": "know", "c": 2})
            ),
            json!({"a": "feed", "c": 2})
        );
    }

    #[test]
    fn merge_joins_strings_appends_lists_and_merges_maps() {
        assert_eq!(
            apply(
                Merge::Merge,
                json!({"s": "one", "l": [1], "m": {"x": "a", "y": [1]}, "n": 3, "z": null}),
                json!({"s": "two", "l": [2, 3], "m": {"x": "b", "w": true, "y": [2]}, "n": "x", "z": "v"})
            ),
            json!({"s": "one\n\ntwo", "l": [1, 2, 3], "m": {"x": "a\n\nb", "y": [1, 2], "w": true},
                   "n": "3\n\nx", "z": "v"})
        );
    }

    #[test]
    fn braces_keys_name_their_variable() {
        assert_eq!(feed_name("{{ user_input }}"), Some("user_input"));
        assert_eq!(feed_name("{{x}}"), Some("x"));
        assert_eq!(feed_name("x"), Some("x"));
        assert_eq!(feed_name("{{ a.b }}"), None);
        let m = json!({"{{ a }}": 1, "b": 2});
        let out = unbraced(m.as_object().unwrap(), "feed").unwrap();
        assert_eq!(Value::Object(out.into_owned()), json!({"a": 1, "b": 2}));
        let twice = json!({"{{ a }}": 1, "a": 2});
        let e = unbraced(twice.as_object().unwrap(), "feed").unwrap_err();
        assert_eq!(
            e.message(),
            "feed gives variable `a` twice (as `a` and as `{{ a }}`)"
        );
    }

    #[test]
    fn names_round_trip() {
        for name in Merge::NAMES {
            assert_eq!(Merge::parse(name).map(Merge::name), Some(name));
        }
        assert_eq!(Merge::default(), Merge::FeedOnly);
        assert_eq!(Merge::parse("concat"), None);
    }
}
