//! How knowledge merges into a feed: the three strategies of SPEC §6.

use serde_json::{Map, Value};
use strata_core::value_to_text;

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
    fn names_round_trip() {
        for name in Merge::NAMES {
            assert_eq!(Merge::parse(name).map(Merge::name), Some(name));
        }
        assert_eq!(Merge::default(), Merge::FeedOnly);
        assert_eq!(Merge::parse("concat"), None);
    }
}
