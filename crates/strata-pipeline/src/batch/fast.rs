//! A request line read in one pass, building no map: the template kept as the text it was
//! written as (compiled once, then found in the cache), the environment's strings borrowed
//! from the line, and `params`, `context` and `inputs` ordered lists of their values
//! ([`super::named`]) — each value read, counted and refused as the general reading reads
//! it.

use std::borrow::Cow;
use std::fmt;
use std::rc::Rc;

use serde::de::{DeserializeSeed, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use strata_core::{Limits, RenderOptions, Scope};
use strata_doc::{has_duplicates, Bounded, Budget};

use super::cache::Cache;
use super::named::{Env, Named};
use crate::Template;

/// The fields of a request, in the order the general reading names them.
const FIELDS: [&str; 9] = [
    "id", "template", "layers", "env", "secrets", "params", "context", "inputs", "strict",
];

/// A request read in one pass (see the module).
pub(super) struct Request<'a> {
    /// Echoed in the reply.
    pub id: Option<Value>,
    template: Option<&'a RawValue>,
    layers: Option<Vec<String>>,
    env: Env<'a>,
    params: Named<'a>,
    context: Named<'a>,
    inputs: Named<'a>,
    strict: bool,
}

impl Request<'_> {
    /// What a render of this request looks its values up in, and how.
    pub fn scope(&self) -> (Scope<'_>, RenderOptions) {
        let scope = Scope {
            env: &self.env,
            caller_params: &self.params,
            context: &self.context,
            inputs: &self.inputs,
            ..Scope::default()
        };
        (scope, RenderOptions::strict_if(self.strict))
    }
}

/// Reads `line` in one pass against the limits, its template from (or into) `cache`: the
/// request and its compiled template, or `None` when this reading does not accept the line
/// — anything the general reading would refuse, and a few things it accepts (a key written
/// with escapes, a template that does not compile), which it then answers.
pub(super) fn read<'a>(
    line: &'a str,
    limits: &Limits,
    cache: &mut Cache,
) -> Option<(Request<'a>, Rc<Template>)> {
    let budget = Budget::of(limits);
    let mut de = serde_json::Deserializer::from_str(line);
    let request = RequestSeed(&budget).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let template = cache.get(
        request.template?,
        request.layers.as_deref(),
        &budget,
        limits,
    )?;
    Some((request, template))
}

/// Reads a request object (see [`read`]).
struct RequestSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for RequestSeed<'_> {
    type Value = Request<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Request<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RequestSeed<'_> {
    type Value = Request<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Request<'de>, A::Error> {
        fn take<'de, T: Deserialize<'de>, E: serde::de::Error>(v: Value) -> Result<T, E> {
            T::deserialize(v).map_err(E::custom)
        }
        let budget = self.0;
        budget.charge(1, 0)?;
        let mut request = Request {
            id: None,
            template: None,
            layers: None,
            env: Env::default(),
            params: Named::default(),
            context: Named::default(),
            inputs: Named::default(),
            strict: false,
        };
        let mut secrets = Vec::new();
        let mut seen = [false; FIELDS.len()];
        while let Some(key) = map.next_key::<&'de str>()? {
            budget.charge(0, key.len())?;
            let Some(field) = FIELDS.iter().position(|f| *f == key) else {
                return Err(A::Error::unknown_field(key, &FIELDS));
            };
            if std::mem::replace(&mut seen[field], true) {
                return Err(A::Error::duplicate_field(FIELDS[field]));
            }
            match field {
                1 => request.template = Some(map.next_value()?),
                3 => request.env = map.next_value_seed(EnvSeed(budget))?,
                5 => request.params = map.next_value_seed(NamedSeed(budget))?,
                6 => request.context = map.next_value_seed(NamedSeed(budget))?,
                7 => request.inputs = map.next_value_seed(NamedSeed(budget))?,
                _ => {
                    let value = map.next_value_seed(Bounded(budget))?;
                    match field {
                        0 => request.id = Some(value),
                        2 => request.layers = take(value)?,
                        4 => secrets = take(value)?,
                        _ => request.strict = take(value)?,
                    }
                }
            }
        }
        request.env.set_secrets(secrets);
        Ok(request)
    }
}

/// Reads one of `params`, `context`, `inputs`: an object, each value read as the general
/// reading reads it, the object itself an ordered list.
struct NamedSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for NamedSeed<'_> {
    type Value = Named<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Named<'de>, D::Error> {
        self.0.charge(1, 0)?;
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NamedSeed<'_> {
    type Value = Named<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Named<'de>, A::Error> {
        let budget = self.0;
        let mut named = Named::default();
        while let Some(key) = map.next_key::<&'de str>()? {
            budget.charge(0, key.len())?;
            let value = map.next_value_seed(Bounded(budget))?;
            named.push(key, value);
        }
        if has_duplicates(named.names()) {
            return Err(A::Error::custom("duplicate key"));
        }
        Ok(named)
    }
}

/// Reads `env`: an object whose values are all strings.
struct EnvSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for EnvSeed<'_> {
    type Value = Env<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Env<'de>, D::Error> {
        self.0.charge(1, 0)?;
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EnvSeed<'_> {
    type Value = Env<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of strings")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Env<'de>, A::Error> {
        let budget = self.0;
        let mut env = Env::default();
        while let Some(key) = map.next_key::<&'de str>()? {
            budget.charge(0, key.len())?;
            let value = map.next_value_seed(Text(budget))?;
            env.push(key, value);
        }
        if has_duplicates(env.names()) {
            return Err(A::Error::custom("duplicate key"));
        }
        Ok(env)
    }
}

/// Reads a string, counted against the budget: borrowed from the line unless it was written
/// with escapes.
struct Text<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for Text<'_> {
    type Value = Cow<'de, str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        self.0.charge(1, 0)?;
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Text<'_> {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        self.0.charge(0, v.len())?;
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
        self.0.charge(0, v.len())?;
        Ok(Cow::Owned(v.to_string()))
    }
}
