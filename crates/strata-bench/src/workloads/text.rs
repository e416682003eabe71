//! Generated text for the throughput and scaling workloads, and the data it renders against.

use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Limits, Scope};

/// Words the generated text is made of (none holds `$`, `{` or `}`).
const WORDS: &[&str] = &[
    "the",
    "engine",
    "renders",
    "config",
    "values",
    "into",
    "text",
    "for",
    "tools",
    "and",
    "keeps",
    "provenance",
    "of",
    "every",
    "byte",
    "layer",
    "scope",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "path",
    "/usr/local/bin",
    "--flag",
    "42",
    "line\n",
];

/// The placeholders sprinkled into text, one of each layer (full chain).
pub const HOLES: &[&str] = &["${state.name}", "{input:k}", "${HOME}", "{arch}"];

/// A small deterministic generator (xorshift64), so every run measures the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Appends words until `out` is `len` bytes long.
fn fill(out: &mut String, len: usize, rng: &mut Rng) {
    while out.len() < len {
        let word = WORDS[(rng.next() % WORDS.len() as u64) as usize];
        let room = len - out.len();
        if word.len() < room {
            out.push_str(word);
            out.push(' ');
        } else {
            out.extend(std::iter::repeat_n('.', room));
        }
    }
}

/// `len` bytes of text without any placeholder (and without `$` or `{`).
pub fn plain(len: usize) -> String {
    let mut out = String::with_capacity(len);
    fill(&mut out, len, &mut Rng(0x9e37_79b9_7f4a_7c15));
    out
}

/// `len` bytes of text with a placeholder starting every `every` bytes, cycling through
/// [`HOLES`].
pub fn with_holes(len: usize, every: usize) -> String {
    let mut out = String::with_capacity(len);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut k = 0;
    while out.len() < len {
        let hole = HOLES[k % HOLES.len()];
        k += 1;
        if out.len() + hole.len() > len {
            break;
        }
        out.push_str(hole);
        let next = (out.len() - hole.len() + every).min(len);
        fill(&mut out, next, &mut rng);
    }
    fill(&mut out, len, &mut rng);
    out
}

/// Limits large enough for 10 MiB strings with a placeholder every 100 bytes.
pub fn big_limits() -> Limits {
    Limits {
        template_bytes: 64 << 20,
        placeholders_per_string: 1 << 20,
        template_bytes_per_document: 64 << 20,
        placeholders_per_document: 1 << 20,
        output_bytes_per_string: 64 << 20,
        output_bytes_per_config: 256 << 20,
        ..Limits::default()
    }
}

/// The values [`HOLES`] resolve to.
pub struct Data {
    env: EnvMap,
    params: Map<String, Value>,
    context: Value,
    inputs: Map<String, Value>,
}

impl Data {
    /// The data set.
    pub fn new() -> Data {
        let mut env = EnvMap::default();
        env.set("HOME", "/home/ada", false);
        let one = |k: &str, v: &str| {
            let mut m = Map::new();
            m.insert(k.to_string(), Value::from(v));
            m
        };
        Data {
            env,
            params: one("arch", "x86_64"),
            context: json!({"state": {"name": "Ada Lovelace"}}),
            inputs: one("k", "src/main.rs"),
        }
    }

    /// A scope over the data (`{arch}` is a runtime parameter).
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            env: &self.env,
            runtime_params: &self.params,
            context: &self.context,
            inputs: &self.inputs,
            ..Scope::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_has_no_opener() {
        let t = plain(10_000);
        assert_eq!(t.len(), 10_000);
        assert!(!t.contains('$') && !t.contains('{'));
    }

    #[test]
    fn holes_come_every_so_often() {
        let t = with_holes(10_000, 100);
        assert_eq!(t.len(), 10_000);
        let holes: usize = HOLES.iter().map(|h| t.matches(h).count()).sum();
        assert_eq!(holes, 100);
        assert!(t.starts_with(HOLES[0]));
        assert_eq!(&t[100..100 + HOLES[1].len()], HOLES[1]);
    }
}
