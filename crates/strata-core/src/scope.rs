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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvMap(pub IndexMap<String, EnvVar>);

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
