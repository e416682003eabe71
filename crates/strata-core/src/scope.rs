use std::sync::LazyLock;

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// One environment variable as layer E sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    /// Its value.
    pub value: String,
    /// True when the value must be redacted wherever it is shown.
    pub secret: bool,
}

/// Where layer E looks variables up.
pub trait EnvSource: Sync {
    /// The variable, when it is set.
    fn get(&self, name: &str) -> Option<&EnvVar>;

    /// True when the variable is set but its value is not UTF-8: layer E treats it as unset,
    /// and says why.
    fn not_utf8(&self, name: &str) -> bool {
        let _ = name;
        false
    }
}

/// Environment variables in insertion order, and the names of those whose values are not
/// UTF-8 (kept apart: layer E cannot substitute them, but reports them as what they are).
///
/// Hashed with foldhash (seeded per process): variable names are short, and SipHash would
/// cost more than the rest of a lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvMap(
    pub IndexMap<String, EnvVar, foldhash::fast::RandomState>,
    Vec<String>,
);

impl EnvMap {
    /// The process environment. A name that is not UTF-8 is left out; a value that is not
    /// UTF-8 is remembered as such (see [`EnvSource::not_utf8`]).
    pub fn from_process() -> EnvMap {
        let mut env = EnvMap::default();
        for (k, v) in std::env::vars_os() {
            let Ok(k) = k.into_string() else {
                continue;
            };
            match v.into_string() {
                Ok(v) => env.set(k, v, false),
                Err(_) => env.1.push(k),
            }
        }
        env
    }

    /// Sets a variable (replacing an earlier value).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>, secret: bool) {
        let name = name.into();
        self.1.retain(|n| *n != name);
        self.0.insert(
            name,
            EnvVar {
                value: value.into(),
                secret,
            },
        );
    }

    /// Marks an already-set variable as secret; does nothing when it is unset.
    pub fn mark_secret(&mut self, name: &str) {
        if let Some(var) = self.0.get_mut(name) {
            var.secret = true;
        }
    }
}

impl EnvSource for EnvMap {
    fn get(&self, name: &str) -> Option<&EnvVar> {
        self.0.get(name)
    }

    fn not_utf8(&self, name: &str) -> bool {
        self.1.iter().any(|n| n == name)
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for EnvMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = EnvMap::default();
        for (k, v) in iter {
            map.set(k, v, false);
        }
        map
    }
}

/// Maps this small or smaller are searched key by key: comparing a few short keys costs less
/// than hashing the one looked for (serde_json's maps hash with SipHash).
const SCAN_BELOW: usize = 9;

/// `map[key]`, scanning the keys of a small map instead of hashing.
#[inline]
pub fn map_get<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    if map.len() < SCAN_BELOW {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

static EMPTY_ENV: LazyLock<EnvMap> = LazyLock::new(EnvMap::default);
static EMPTY_MAP: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

/// Named values looked up one name at a time: where layer C (and conditions, and every
/// other path-walking front-end) finds the namespaces a path starts with (`state`, `inputs`,
/// `steps`, a step id, …), and where layers P and I find caller parameters and directive
/// inputs.
///
/// A source is looked up one name at a time and never copied, so a run can show a context
/// made of several parts (the directive's, the steps so far, an event's fields) without
/// building a new document for every render, and a batch request's objects serve as the
/// ordered lists they were read into, without building maps.
pub trait ContextSource: Sync {
    /// The value of namespace `name`, when there is one.
    fn namespace(&self, name: &str) -> Option<&Value>;

    /// Every namespace name, in order (for did-you-mean and checks).
    fn namespaces(&self) -> Vec<&str>;

    /// The whole source as one JSON object, in the order of [`ContextSource::namespaces`].
    fn to_object(&self) -> Map<String, Value> {
        self.namespaces()
            .into_iter()
            .filter_map(|name| Some((name.to_string(), self.namespace(name)?.clone())))
            .collect()
    }
}

impl ContextSource for Map<String, Value> {
    fn namespace(&self, name: &str) -> Option<&Value> {
        map_get(self, name)
    }

    fn namespaces(&self) -> Vec<&str> {
        self.keys().map(String::as_str).collect()
    }
}

/// A JSON document as a context: a map's keys are the namespaces; anything else has none.
impl ContextSource for Value {
    fn namespace(&self, name: &str) -> Option<&Value> {
        self.as_object().and_then(|m| map_get(m, name))
    }

    fn namespaces(&self) -> Vec<&str> {
        self.as_object()
            .map(ContextSource::namespaces)
            .unwrap_or_default()
    }
}

/// One namespace given by name: `Entry("steps", &steps)`.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a>(pub &'a str, pub &'a Value);

impl ContextSource for Entry<'_> {
    fn namespace(&self, name: &str) -> Option<&Value> {
        (name == self.0).then_some(self.1)
    }

    fn namespaces(&self) -> Vec<&str> {
        vec![self.0]
    }
}

/// Several sources seen as one: the first that has a namespace gives it.
#[derive(Clone, Copy)]
pub struct Layers<'a>(pub &'a [&'a dyn ContextSource]);

impl ContextSource for Layers<'_> {
    fn namespace(&self, name: &str) -> Option<&Value> {
        self.0.iter().find_map(|s| s.namespace(name))
    }

    fn namespaces(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for name in self.0.iter().flat_map(|s| s.namespaces()) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }
}

/// Everything the layers substitute from: all of it is data.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// Layer E's variables.
    pub env: &'a dyn EnvSource,
    /// Layer P's runtime parameters (`tool_path`, `params_json`, …); they win over config keys.
    pub runtime_params: &'a Map<String, Value>,
    /// Layer P's caller parameters, by name; config keys and runtime parameters win over
    /// them.
    pub caller_params: &'a dyn ContextSource,
    /// Layer C's namespaces (`state`, `inputs`, …).
    pub context: &'a dyn ContextSource,
    /// Layer I's directive inputs, by name.
    pub inputs: &'a dyn ContextSource,
}

impl Default for Scope<'_> {
    fn default() -> Self {
        Scope {
            env: &*EMPTY_ENV,
            runtime_params: &EMPTY_MAP,
            caller_params: &*EMPTY_MAP,
            context: &*EMPTY_MAP,
            inputs: &*EMPTY_MAP,
        }
    }
}

/// What a render does with a placeholder whose value is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Undefined {
    /// Render it as its layer documents (empty, or kept), silently.
    Lenient,
    /// The same, and report a warning naming what is missing (never its value).
    #[default]
    Warn,
    /// Fail with an [`crate::ErrorKind::Undefined`] error.
    Strict,
}

impl Undefined {
    /// `Strict` when `strict`, else `Warn`.
    pub fn strict_if(strict: bool) -> Undefined {
        if strict {
            Undefined::Strict
        } else {
            Undefined::Warn
        }
    }
}

/// How to render: one value instead of flags in every signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RenderOptions {
    /// What a missing value does.
    pub undefined: Undefined,
}

impl RenderOptions {
    /// Missing values are errors.
    pub const STRICT: RenderOptions = RenderOptions {
        undefined: Undefined::Strict,
    };

    /// Missing values are errors when `strict`, warnings otherwise.
    pub fn strict_if(strict: bool) -> RenderOptions {
        RenderOptions {
            undefined: Undefined::strict_if(strict),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map_of(n: usize) -> Map<String, Value> {
        (0..n).map(|i| (format!("key{i}"), json!(i))).collect()
    }

    #[test]
    fn map_get_finds_what_get_finds_in_small_and_large_maps() {
        for n in [0, 1, SCAN_BELOW - 1, SCAN_BELOW, 40] {
            let map = map_of(n);
            for i in 0..n + 2 {
                let key = format!("key{i}");
                assert_eq!(map_get(&map, &key), map.get(&key), "{key} in a map of {n}");
            }
            assert_eq!(map_get(&map, "key"), None);
        }
    }
}
