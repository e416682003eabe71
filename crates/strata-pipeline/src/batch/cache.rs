//! The bounded cache of templates compiled for earlier requests.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::rc::Rc;

use serde_json::value::RawValue;
use strata_core::Limits;
use strata_doc::Budget;

use super::chain_of;
use crate::Template;

/// Templates compiled for earlier requests, keyed by their layers and JSON text, with what
/// reading them counted against a request's budget. Bounded: when it holds its share of
/// [`Cache::MAX_ENTRIES`] templates or of [`Cache::MAX_BYTES`] bytes of their text, it is
/// emptied before the next one goes in (each thread serving requests has its own cache, and
/// the threads share these bounds).
///
/// Looked up by a hash of the layers and the text (foldhash: no allocation and no SipHash per
/// request), each entry holding its key to compare.
pub(super) struct Cache {
    templates: HashMap<u64, Vec<Cached>, BuildHasherDefault<Identity>>,
    entries: usize,
    bytes: usize,
    /// How many caches share the bounds.
    shares: usize,
}

struct Cached {
    layers: Option<Vec<String>>,
    text: Box<str>,
    template: Rc<Template>,
    nodes: usize,
    bytes: usize,
}

/// The hasher of keys that are hashes already.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The hash of a template's layers and text.
fn key_hash(layers: Option<&[String]>, text: &str) -> u64 {
    use std::hash::BuildHasher;
    static SEED: std::sync::OnceLock<foldhash::fast::FixedState> = std::sync::OnceLock::new();
    let state = SEED.get_or_init(|| foldhash::fast::FixedState::with_seed(0x5eed));
    let mut h = state.build_hasher();
    layers.hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

impl Cache {
    const MAX_ENTRIES: usize = 1024;
    const MAX_BYTES: usize = 16 << 20;

    /// An empty cache, one of `shares` that share the bounds.
    pub(super) fn one_of(shares: usize) -> Cache {
        Cache {
            templates: HashMap::default(),
            entries: 0,
            bytes: 0,
            shares: shares.max(1),
        }
    }

    /// The template written as `raw`, compiled for `layers`: from the cache (its nodes and
    /// bytes charged to `budget`), or read against `budget` and compiled now. `None` when
    /// reading or compiling it fails (the general reading then reports why).
    pub(super) fn get(
        &mut self,
        raw: &RawValue,
        layers: Option<&[String]>,
        budget: &Budget,
        limits: &Limits,
    ) -> Option<Rc<Template>> {
        let text = raw.get();
        let hash = key_hash(layers, text);
        let hit = self.templates.get(&hash).and_then(|entries| {
            entries
                .iter()
                .find(|c| c.text.as_ref() == text && c.layers.as_deref() == layers)
        });
        if let Some(hit) = hit {
            budget
                .charge::<serde_json::Error>(hit.nodes, hit.bytes)
                .ok()?;
            return Some(Rc::clone(&hit.template));
        }
        let before = budget.counted();
        let value = strata_doc::read_json(text, budget).ok()?;
        let after = budget.counted();
        let chain = chain_of(layers).ok()?;
        let template = Rc::new(Template::compile_owned(value, &chain, limits).ok()?);
        if self.entries >= Self::MAX_ENTRIES / self.shares
            || self.bytes + text.len() > Self::MAX_BYTES / self.shares
        {
            self.templates.clear();
            self.entries = 0;
            self.bytes = 0;
        }
        self.bytes += text.len();
        self.entries += 1;
        let cached = Cached {
            layers: layers.map(<[String]>::to_vec),
            text: text.into(),
            template: Rc::clone(&template),
            nodes: after.0 - before.0,
            bytes: after.1 - before.1,
        };
        self.templates.entry(hash).or_default().push(cached);
        Some(template)
    }
}
