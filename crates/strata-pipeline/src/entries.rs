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
    /// Entry indexes (4 bytes each: a map is far smaller than 2^32 entries), each with a
    /// digest of its key's hash: the table grows without reading a key again, and a lookup
    /// reads a key only when the digests match.
    by_key: HashTable<(u32, u32)>,
    state: foldhash::fast::RandomState,
}

impl Entries {
    /// Adds an entry; a key already there is handed back.
    pub(crate) fn insert(&mut self, key: String, node: Node) -> Result<(), String> {
        let digest = self.digest(&key);
        if self.find(&key, digest) {
            return Err(key);
        }
        // A map of 2^32 entries would take hundreds of gigabytes before it got here; the
        // node limit (at most 10^8) and the document's bytes (at most 1 GiB) stop far sooner.
        let index = self.entries.len() as u32;
        self.by_key
            .insert_unique(spread(digest), (index, digest), |&(_, d)| spread(d));
        self.entries.push((key, node));
        Ok(())
    }

    /// True when `key` is there.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.find(key, self.digest(key))
    }

    fn digest(&self, key: &str) -> u32 {
        let hash = self.state.hash_one(key);
        (hash >> 32) as u32 ^ hash as u32
    }

    fn find(&self, key: &str, digest: u32) -> bool {
        self.by_key
            .find(spread(digest), |&(i, d)| {
                d == digest && self.entries[i as usize].0 == key
            })
            .is_some()
    }

    /// The entries in document order.
    pub(crate) fn into_entries(self) -> Chunked<(String, Node)> {
        self.entries
    }
}

/// The table's hash of a key's digest: the digest in both halves, so that the table's
/// buckets (low bits) and tags (high bits) both vary with it.
fn spread(digest: u32) -> u64 {
    (u64::from(digest) << 32) | u64::from(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::Const;

    #[test]
    fn a_key_is_found_and_refused_again_however_many_there_are() {
        let mut entries = Entries::default();
        for i in 0..10_000 {
            let node = Node::Const(Const::of(serde_json::json!(i)));
            assert_eq!(entries.insert(format!("k{i}"), node), Ok(()));
        }
        for i in [0, 4_095, 4_096, 9_999] {
            assert!(entries.contains(&format!("k{i}")));
            let again = entries.insert(format!("k{i}"), Node::Const(Const::Null));
            assert_eq!(again, Err(format!("k{i}")));
        }
        assert!(!entries.contains("k10000"));
        let keys: Vec<String> = entries
            .into_entries()
            .iter()
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(keys.len(), 10_000);
        assert_eq!(keys[4_096], "k4096");
    }
}
