//! A request's objects as the one-pass reading keeps them ([`Object`]: names and values in
//! order, no map built): the caller parameters, context and inputs as JSON values
//! ([`Named`]), and the environment as strings borrowed from the line, made variables when
//! looked up ([`Env`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;
use strata_core::{ContextSource, EnvSource, EnvVar};

/// One JSON object of a request: its names and values in order, a name found by scanning
/// while few and through an index built on the first lookup beyond.
pub(super) struct Object<'a, V> {
    names: Vec<&'a str>,
    values: Vec<V>,
    index: OnceLock<HashMap<&'a str, usize, foldhash::fast::FixedState>>,
}

impl<V> Default for Object<'_, V> {
    fn default() -> Self {
        Object {
            names: Vec::new(),
            values: Vec::new(),
            index: OnceLock::new(),
        }
    }
}

impl<'a, V> Object<'a, V> {
    /// Objects this small or smaller are searched name by name.
    const SCAN_UP_TO: usize = 8;

    /// Adds the entry `name: value` (the reading refuses the object if a name repeats).
    pub(super) fn push(&mut self, name: &'a str, value: V) {
        self.names.push(name);
        self.values.push(value);
    }

    /// The names, in order.
    pub(super) fn names(&self) -> impl ExactSizeIterator<Item = &'a str> + Clone + '_ {
        self.names.iter().copied()
    }

    /// The position of `name`.
    fn position(&self, name: &str) -> Option<usize> {
        if self.names.len() <= Self::SCAN_UP_TO {
            return self.names.iter().position(|n| *n == name);
        }
        let index = self.index.get_or_init(|| {
            let mut index = HashMap::with_capacity_and_hasher(self.names.len(), Default::default());
            for (i, name) in self.names.iter().enumerate() {
                index.insert(*name, i);
            }
            index
        });
        index.get(name).copied()
    }
}

/// `params`, `context` or `inputs`: JSON values by name.
pub(super) type Named<'a> = Object<'a, Value>;

impl ContextSource for Named<'_> {
    fn namespace(&self, name: &str) -> Option<&Value> {
        Some(&self.values[self.position(name)?])
    }

    fn namespaces(&self) -> Vec<&str> {
        self.names.clone()
    }
}

/// A request's `env`: every value a string, as written (unescaped where the line escaped
/// it), marked secret when `secrets` names it.
pub(super) struct Env<'a> {
    strings: Object<'a, Cow<'a, str>>,
    /// Per variable, once looked up.
    vars: Vec<OnceLock<EnvVar>>,
    secrets: Vec<String>,
}

impl<'a> Env<'a> {
    /// The variables of `strings`, those named in `secrets` secret (a name not set is
    /// ignored).
    pub(super) fn new(strings: Object<'a, Cow<'a, str>>, secrets: Vec<String>) -> Env<'a> {
        let vars = strings.values.iter().map(|_| OnceLock::new()).collect();
        Env {
            strings,
            vars,
            secrets,
        }
    }
}

impl EnvSource for Env<'_> {
    fn get(&self, name: &str) -> Option<&EnvVar> {
        let i = self.strings.position(name)?;
        Some(self.vars[i].get_or_init(|| EnvVar {
            value: self.strings.values[i].to_string(),
            secret: self.secrets.iter().any(|s| s == name),
        }))
    }
}
