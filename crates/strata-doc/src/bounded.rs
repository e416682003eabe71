//! Counting what a document expands to while it is read, and reading JSON so.
//!
//! YAML aliases repeat their anchor's node wherever they appear, so a small file can stand
//! for a huge value (`base: &b "<1 MiB>"` and `[*b, *b, …]`). The value is built here, one
//! node at a time, counting nodes and the bytes of strings and keys; the first node past a
//! limit stops the read, so memory never grows past the limits. The same pass refuses what
//! a JSON value would silently change: numbers that are not finite (`.nan`, `.inf`, `1e400`
//! would become `null`) and duplicate keys (the last would win).

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a read stopped early (the parser's own errors aside).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// More nodes than the limit.
    Nodes,
    /// More bytes of strings and keys than the limit.
    Bytes,
    /// A number that is not finite, as written.
    NotFinite,
    /// A key seen twice in one map.
    DuplicateKey(String),
    /// Collections nested deeper than the reader accepts.
    TooDeep,
    /// YAML aliases repeating the document's events too many times over.
    Repetition,
}

/// The limits of one read and what has been counted so far: nodes, and bytes of strings and
/// keys. One budget may span several reads (the fields of one request read one by one).
pub struct Budget {
    max_nodes: usize,
    max_bytes: usize,
    nodes: Cell<usize>,
    bytes: Cell<usize>,
    stop: Cell<Option<Stop>>,
}

impl Budget {
    /// The budget of one document under `limits`: `yaml_nodes` nodes, `document_bytes` bytes.
    pub fn of(limits: &strata_core::Limits) -> Budget {
        Budget::new(limits.yaml_nodes, limits.document_bytes)
    }

    /// The nodes and bytes counted so far.
    pub fn counted(&self) -> (usize, usize) {
        (self.nodes.get(), self.bytes.get())
    }

    /// Counts `nodes` nodes and `bytes` bytes read elsewhere (a value known from an earlier
    /// read); an error past either limit.
    pub fn charge<E: serde::de::Error>(&self, nodes: usize, bytes: usize) -> Result<(), E> {
        self.charge_counts(nodes, bytes)
            .map_err(|stop| self.fail(stop))
    }

    /// Counts `nodes` nodes and `bytes` bytes; the limit passed, if one is.
    pub(crate) fn charge_counts(&self, nodes: usize, bytes: usize) -> Result<(), Stop> {
        let n = self.nodes.get().saturating_add(nodes);
        self.nodes.set(n);
        if n > self.max_nodes {
            return Err(Stop::Nodes);
        }
        self.count_text(bytes)
    }

    /// Counts one node; [`Stop::Nodes`] past the limit.
    pub(crate) fn count_node(&self) -> Result<(), Stop> {
        self.charge_counts(1, 0)
    }

    /// Counts `len` bytes of strings or keys; [`Stop::Bytes`] past the limit.
    pub(crate) fn count_text(&self, len: usize) -> Result<(), Stop> {
        let n = self.bytes.get().saturating_add(len);
        self.bytes.set(n);
        if n > self.max_bytes {
            return Err(Stop::Bytes);
        }
        Ok(())
    }

    /// A budget of `max_nodes` nodes and `max_bytes` bytes of strings and keys.
    pub(crate) fn new(max_nodes: usize, max_bytes: usize) -> Budget {
        Budget {
            max_nodes,
            max_bytes,
            nodes: Cell::new(0),
            bytes: Cell::new(0),
            stop: Cell::new(None),
        }
    }

    /// Why the read stopped, when it was this budget that stopped it.
    pub(crate) fn stop(&self) -> Option<Stop> {
        self.stop.take()
    }

    fn fail<E: serde::de::Error>(&self, stop: Stop) -> E {
        let message = match &stop {
            Stop::Nodes => "too many nodes".to_string(),
            Stop::Bytes => "too many bytes".to_string(),
            Stop::NotFinite => "a number that is not finite".to_string(),
            Stop::DuplicateKey(k) => format!("duplicate key `{k}`"),
            Stop::TooDeep => "nested too deep".to_string(),
            Stop::Repetition => "aliases repeat too much".to_string(),
        };
        self.stop.set(Some(stop));
        E::custom(message)
    }

    fn node<E: serde::de::Error>(&self) -> Result<(), E> {
        self.count_node().map_err(|stop| self.fail(stop))
    }

    fn text<E: serde::de::Error>(&self, len: usize) -> Result<(), E> {
        self.count_text(len).map_err(|stop| self.fail(stop))
    }
}

/// Reads one value (and everything under it) against the budget: a seed for any serde
/// deserializer, refusing what a JSON value would silently change (see the module).
pub struct Bounded<'b>(pub &'b Budget);

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.0.node()?;
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML or JSON value")
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

    // Integers beyond 64 bits become floats, as JSON numbers of that size do.
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Value, E> {
        self.visit_f64(v as f64)
    }

    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Value, E> {
        self.visit_f64(v as f64)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| self.0.fail(Stop::NotFinite))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.text(v.len())?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.0.text(v.len())?;
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Bounded(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(Key(self.0, &out))? {
            let value = map.next_value_seed(Bounded(self.0))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Reads a map key (any scalar, as text) against the budget and the keys already read, so
/// that a repeated key is reported where it stands.
struct Key<'a>(&'a Budget, &'a Map<String, Value>);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
        self.0.text(v.len())?;
        if self.1.contains_key(v) {
            return Err(self.0.fail(Stop::DuplicateKey(v.to_string())));
        }
        Ok(v.to_string())
    }
}

/// True when a key repeats among `keys` (the keys of one map read without building it):
/// compared pair by pair while few, sorted beyond.
pub fn has_duplicates<'k>(keys: impl ExactSizeIterator<Item = &'k str> + Clone) -> bool {
    if keys.len() <= 16 {
        let mut seen = keys.clone();
        while let Some(k) = seen.next() {
            if seen.clone().any(|other| other == k) {
                return true;
            }
        }
        return false;
    }
    let mut sorted: Vec<&str> = keys.collect();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

/// Reads a whole JSON document against `budget`.
pub fn read_json(text: &str, budget: &Budget) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Bounded(budget).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}
