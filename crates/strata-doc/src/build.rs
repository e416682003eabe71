//! What a document is read into: [`Build`] receives a document's nodes as the reader meets
//! them — a scalar's value, a finished list, a finished map — and makes its own tree of them.
//! [`Document::parse`](crate::Document::parse) builds JSON values ([`Values`]); a template
//! compiler builds its nodes straight from the text (`Document::parse_into`), YAML or JSON,
//! so that a document never exists twice in memory and a limit the compiler counts stops
//! the read at the string that breaks it. [`replay`] feeds a value held already (not read
//! from a text) to the same builder.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::map::Entry;
use serde_json::{Map, Value};
use strata_core::{Error, FieldPath, PathSeg};

/// A tree made from a document's nodes, bottom up.
pub trait Build {
    /// What a node becomes (cloned where a YAML alias repeats its anchor).
    type Node: Clone;
    /// A map being filled, entry by entry.
    type Map: Default;
    /// What the builder has counted so far, if it counts anything (an alias counts its
    /// anchor's share again).
    type Tally: Copy;

    /// What has been counted so far.
    fn tally(&self) -> Self::Tally;

    /// The node of a scalar: a string, number, boolean or null. An error is about this
    /// scalar; the reader adds its field path and position.
    fn scalar(&mut self, value: Value) -> Result<Self::Node, Error>;

    /// True when the builder points into the text ([`Build::verbatim`]): the reader then
    /// finds where each string scalar stands.
    const VERBATIM: bool = false;

    /// The text about to be read, which the document keeps: a builder may keep it too, to
    /// point into it ([`Build::verbatim`]). Called once, before the first node.
    fn source(&mut self, _text: &Arc<String>) {}

    /// The node of a string scalar that stands as it is in the text, from byte `at` (no
    /// quote, escape or folded line in between): a builder holding the text may point
    /// there instead of keeping `value`. By default, [`Build::scalar`] of it.
    fn verbatim(&mut self, value: String, _at: usize) -> Result<Self::Node, Error> {
        self.scalar(Value::String(value))
    }

    /// Adds an entry to `map`; when `key` is already there, nothing is added and the key is
    /// handed back.
    fn insert(&mut self, map: &mut Self::Map, key: String, node: Self::Node) -> Result<(), String>;

    /// True when `map` holds `key` (a JSON reader refuses a repeated key where it stands,
    /// before reading its value).
    fn contains(&self, map: &Self::Map, key: &str) -> bool;

    /// The node of a finished list.
    fn list(&mut self, items: Vec<Self::Node>) -> Self::Node;

    /// The node of a finished map.
    fn map(&mut self, map: Self::Map) -> Self::Node;

    /// The node of a YAML alias: its anchor's node again, which was counted from `before`
    /// to `after` (a builder that counts what its nodes hold counts that again here).
    fn repeat(
        &mut self,
        node: &Self::Node,
        before: Self::Tally,
        after: Self::Tally,
    ) -> Result<Self::Node, Error>;
}

/// Builds JSON values: the document as it is written.
pub struct Values;

impl Build for Values {
    type Node = Value;
    type Map = Map<String, Value>;
    type Tally = ();

    fn tally(&self) {}

    fn scalar(&mut self, value: Value) -> Result<Value, Error> {
        Ok(value)
    }

    fn insert(&mut self, map: &mut Self::Map, key: String, node: Value) -> Result<(), String> {
        match map.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(node);
                Ok(())
            }
            Entry::Occupied(seen) => Err(seen.key().clone()),
        }
    }

    fn contains(&self, map: &Self::Map, key: &str) -> bool {
        map.contains_key(key)
    }

    fn list(&mut self, items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    fn map(&mut self, map: Self::Map) -> Value {
        Value::Object(map)
    }

    fn repeat(&mut self, node: &Value, _: (), _: ()) -> Result<Value, Error> {
        Ok(node.clone())
    }
}

/// Feeds `value` (a document read earlier, borrowed or owned) to `build`, node by node; an
/// error carries the field path of the scalar it is about. An owned value gives its strings
/// away; a borrowed one has its scalars copied.
pub fn replay<B: Build>(build: &mut B, value: Cow<'_, Value>) -> Result<B::Node, Error> {
    walk(build, value).map_err(|(error, mut reversed)| {
        reversed.reverse();
        error.at_path(&FieldPath(reversed))
    })
}

/// An error, and the field path of its scalar, innermost segment first (each level adds
/// its own as the error passes up: no path is built unless there is an error).
type Failed = (Error, Vec<PathSeg>);

/// One node of [`replay`].
fn walk<B: Build>(build: &mut B, value: Cow<'_, Value>) -> Result<B::Node, Failed> {
    match value {
        Cow::Borrowed(Value::Array(items)) => {
            let nodes = walk_items(build, items.iter().map(Cow::Borrowed))?;
            Ok(build.list(nodes))
        }
        Cow::Owned(Value::Array(items)) => {
            let nodes = walk_items(build, items.into_iter().map(Cow::Owned))?;
            Ok(build.list(nodes))
        }
        Cow::Borrowed(Value::Object(map)) => walk_entries(
            build,
            map.iter()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Cow::Borrowed(v))),
        ),
        Cow::Owned(Value::Object(map)) => walk_entries(
            build,
            map.into_iter().map(|(k, v)| (Cow::Owned(k), Cow::Owned(v))),
        ),
        scalar => build
            .scalar(scalar.into_owned())
            .map_err(|e| (e, Vec::new())),
    }
}

fn walk_items<'v, B: Build>(
    build: &mut B,
    items: impl Iterator<Item = Cow<'v, Value>>,
) -> Result<Vec<B::Node>, Failed> {
    let mut nodes = Vec::with_capacity(items.size_hint().0);
    for (i, item) in items.enumerate() {
        let node = walk(build, item).map_err(|(e, mut path)| {
            path.push(PathSeg::Index(i));
            (e, path)
        })?;
        nodes.push(node);
    }
    Ok(nodes)
}

fn walk_entries<'v, B: Build>(
    build: &mut B,
    entries: impl Iterator<Item = (Cow<'v, str>, Cow<'v, Value>)>,
) -> Result<B::Node, Failed> {
    let mut map = B::Map::default();
    for (key, value) in entries {
        let node = match walk(build, value) {
            Ok(node) => node,
            Err((e, mut path)) => {
                path.push(PathSeg::Key(key.into_owned()));
                return Err((e, path));
            }
        };
        // A JSON value's keys are unique already.
        let _ = build.insert(&mut map, key.into_owned(), node);
    }
    Ok(build.map(map))
}
