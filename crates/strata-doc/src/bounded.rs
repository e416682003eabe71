//! Counting what a document expands to while it is read (the readers: `yaml_read`,
//! `json_read`).
//!
//! YAML aliases repeat their anchor's node wherever they appear, so a small file can stand
//! for a huge value (`base: &b "<1 MiB>"` and `[*b, *b, …]`). The readers build a value one
//! node at a time, counting nodes and the bytes of strings and keys in a [`Budget`]; the
//! first node past a limit stops the read, so memory never grows past the limits. The same
//! pass refuses what a JSON value would silently change: numbers that are not finite
//! (`.nan`, `.inf`, `1e400` would become `null`) and duplicate keys (the last would win).

use std::cell::Cell;

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

    /// The error that stops a read at `stop`, kept to be told by [`Budget::stop`].
    pub(crate) fn fail<E: serde::de::Error>(&self, stop: Stop) -> E {
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

    /// Counts one node read by serde.
    pub(crate) fn node<E: serde::de::Error>(&self) -> Result<(), E> {
        self.count_node().map_err(|stop| self.fail(stop))
    }

    /// Counts `len` bytes of a string or key read by serde.
    pub(crate) fn text<E: serde::de::Error>(&self, len: usize) -> Result<(), E> {
        self.count_text(len).map_err(|stop| self.fail(stop))
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
