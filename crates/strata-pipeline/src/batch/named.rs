//! A request's objects as the one-pass reading keeps them: the caller parameters, context
//! and inputs ([`Named`]: an ordered list of names and values, no map built) and the
//! environment ([`Env`]: strings borrowed from the line, made variables when looked up).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;
use strata_core::{ContextSource, EnvSource, EnvVar};

/// The names of one map in order, found by scanning while few and through an index built on
/// the first lookup beyond.
#[derive(Default)]
pub(super) struct Names<'a> {
    names: Vec<&'a str>,
    index: OnceLock<HashMap<&'a str, usize, foldhash::fast::FixedState>>,
}

impl<'a> Names<'a> {
    /// Maps this small or smaller are searched name by name.
    const SCAN_UP_TO: usize = 8;

    /// Adds a name of the map (the reading refuses the map if a name repeats).
    pub(super) fn push(&mut self, name: &'a str) {
        self.names.push(name);
    }

    /// The names, in order.
    fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + Clone + '_ {
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

/// A JSON object of a request (`params`, `context`, `inputs`): its names and values in
/// order.
#[derive(Default)]
pub(super) struct Named<'a> {
    names: Names<'a>,
    values: Vec<Value>,
}

impl<'a> Named<'a> {
    /// Adds the entry `name: value` (the reading refuses the object if a name repeats).
    pub(super) fn push(&mut self, name: &'a str, value: Value) {
        self.names.push(name);
        self.values.push(value);
    }

    /// The names, in order.
    pub(super) fn names(&self) -> impl ExactSizeIterator<Item = &'a str> + Clone + '_ {
        self.names.iter()
    }
}

impl ContextSource for Named<'_> {
    fn namespace(&self, name: &str) -> Option<&Value> {
        Some(&self.values[self.names.position(name)?])
    }

    fn namespaces(&self) -> Vec<&str> {
        self.names.names.clone()
    }
}

/// A request's `env`: every value a string, as written (unescaped where the line escaped
/// it), marked secret when `secrets` names it.
#[derive(Default)]
pub(super) struct Env<'a> {
    names: Names<'a>,
    values: Vec<(Cow<'a, str>, OnceLock<EnvVar>)>,
    secrets: Vec<String>,
}

impl<'a> Env<'a> {
    /// Adds the variable `name=value` (the reading refuses the object if a name repeats).
    pub(super) fn push(&mut self, name: &'a str, value: Cow<'a, str>) {
        self.names.push(name);
        self.values.push((value, OnceLock::new()));
    }

    /// The names, in order.
    pub(super) fn names(&self) -> impl ExactSizeIterator<Item = &'a str> + Clone + '_ {
        self.names.iter()
    }

    /// Marks the variables named in `secrets` as secret (a name not set is ignored).
    pub(super) fn set_secrets(&mut self, secrets: Vec<String>) {
        self.secrets = secrets;
    }
}

impl EnvSource for Env<'_> {
    fn get(&self, name: &str) -> Option<&EnvVar> {
        let (value, var) = &self.values[self.names.position(name)?];
        Some(var.get_or_init(|| EnvVar {
            value: value.to_string(),
            secret: self.secrets.iter().any(|s| s == name),
        }))
    }
}
