//! A request line read in one pass, building no map: the template kept as the text it was
//! written as (compiled once, then found in the cache), and the request's objects ordered
//! lists of their values ([`super::named`]) — the environment's strings borrowed from the
//! line, every other value read, counted and refused as the general reading reads it.

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
use super::named::{Env, Named, Object};
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
        let (mut id, mut template, mut layers, mut strict) = (None, None, None, false);
        let (mut env, mut secrets) = (Object::default(), Vec::new());
        let (mut params, mut context, mut inputs) = Default::default();
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
                1 => template = Some(map.next_value()?),
                3 => env = map.next_value_seed(ObjectSeed::new(budget, Text))?,
                5 => params = map.next_value_seed(ObjectSeed::new(budget, Bounded))?,
                6 => context = map.next_value_seed(ObjectSeed::new(budget, Bounded))?,
                7 => inputs = map.next_value_seed(ObjectSeed::new(budget, Bounded))?,
                _ => {
                    let value = map.next_value_seed(Bounded(budget))?;
                    match field {
                        0 => id = Some(value),
                        2 => layers = take(value)?,
                        4 => secrets = take(value)?,
                        _ => strict = take(value)?,
                    }
                }
            }
        }
        Ok(Request {
            id,
            template,
            layers,
            env: Env::new(env, secrets),
            params,
            context,
            inputs,
            strict,
        })
    }
}

/// Reads an object of a request (`env`, `params`, `context`, `inputs`) into an [`Object`],
/// each value with the seed `value` makes of the budget; refused when a key repeats.
struct ObjectSeed<'b, S> {
    budget: &'b Budget,
    value: fn(&'b Budget) -> S,
}

impl<'b, S> ObjectSeed<'b, S> {
    fn new(budget: &'b Budget, value: fn(&'b Budget) -> S) -> Self {
        ObjectSeed { budget, value }
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for ObjectSeed<'_, S> {
    type Value = Object<'de, S::Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.budget.charge(1, 0)?;
        d.deserialize_map(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for ObjectSeed<'_, S> {
    type Value = Object<'de, S::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = Object::default();
        while let Some(key) = map.next_key::<&'de str>()? {
            self.budget.charge(0, key.len())?;
            let value = map.next_value_seed((self.value)(self.budget))?;
            object.push(key, value);
        }
        if has_duplicates(object.names()) {
            return Err(A::Error::custom("duplicate key"));
        }
        Ok(object)
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
