//! The entries of a map being compiled.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use strata_core::{Chunked, Node};

/// A map being compiled: its entries in document order, and their indexes in a table by
/// the key's hash, to find a repeated key. The entries become the compiled map as they are
/// ([`Chunked`]: a large map is never copied while it grows, nor once it is read).
#[derive(Default)]
pub(crate) struct Entries {
    entries: Chunked<(String, Node)>,
    /// Entry indexes, in 4 bytes each: a map is far smaller than 2^32 entries.
    by_key: HashTable<u32>,
    state: foldhash::fast::RandomState,
}

impl Entries {
    /// Adds an entry; a key already there is handed back.
    pub(crate) fn insert(&mut self, key: String, node: Node) -> Result<(), String> {
        let Entries {
            entries,
            by_key,
            state,
        } = self;
        let hash = state.hash_one(key.as_str());
        if by_key
            .find(hash, |&i| entries[i as usize].0 == key)
            .is_some()
        {
            return Err(key);
        }
        // A map of 2^32 entries would take hundreds of gigabytes before it got here; the
        // node limit (at most 10^8) and the document's bytes (at most 1 GiB) stop far sooner.
        by_key.insert_unique(hash, entries.len() as u32, |&i| {
            state.hash_one(entries[i as usize].0.as_str())
        });
        entries.push((key, node));
        Ok(())
    }

    /// True when `key` is there.
    pub(crate) fn contains(&self, key: &str) -> bool {
        let hash = self.state.hash_one(key);
        self.by_key
            .find(hash, |&i| self.entries[i as usize].0 == key)
            .is_some()
    }

    /// The entries in document order.
    pub(crate) fn into_entries(self) -> Chunked<(String, Node)> {
        self.entries
    }
}
