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
}

/// Environment variables in insertion order.
///
/// Hashed with foldhash (seeded per process): variable names are short, and SipHash would
/// cost more than the rest of a lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvMap(pub IndexMap<String, EnvVar, foldhash::fast::RandomState>);

impl EnvMap {
    /// Sets a variable (replacing an earlier value).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>, secret: bool) {
        self.0.insert(
            name.into(),
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
pub fn map_get<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    if map.len() < SCAN_BELOW {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

static EMPTY_ENV: LazyLock<EnvMap> = LazyLock::new(EnvMap::default);
static EMPTY_MAP: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
static EMPTY_OBJECT: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));

/// Everything the layers substitute from: all of it is data.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// Layer E's variables.
    pub env: &'a dyn EnvSource,
    /// Layer P's runtime parameters (`tool_path`, `params_json`, …); they win over config keys.
    pub runtime_params: &'a Map<String, Value>,
    /// Layer P's caller parameters; config keys and runtime parameters win over them.
    pub caller_params: &'a Map<String, Value>,
    /// Layer C's root: an object whose keys are namespaces (`state`, `inputs`, …).
    pub context: &'a Value,
    /// Layer I's directive inputs.
    pub inputs: &'a Map<String, Value>,
}

impl Default for Scope<'_> {
    fn default() -> Self {
        Scope {
            env: &*EMPTY_ENV,
            runtime_params: &EMPTY_MAP,
            caller_params: &EMPTY_MAP,
            context: &EMPTY_OBJECT,
            inputs: &EMPTY_MAP,
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
