//! JSON read straight into a [`Build`]er, one node at a time, against a [`Budget`]: the
//! one JSON reader of documents ([`Document::parse`](crate::Document::parse) builds values
//! with it, a template compiler its own nodes) and of requests' values ([`Bounded`]).
//!
//! What the budget counts and refuses is counted and refused here as the value is read:
//! nodes, bytes of strings and keys, numbers that are not finite (a JSON value would make
//! them `null`) and keys repeated in one map (the last would win), each at the point of the
//! text where it stands. A string the text holds unescaped is a slice of the text, so a
//! builder that points into the text ([`Build::VERBATIM`]) is told where it starts.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use strata_core::{Error, FieldPath, PathSeg};

use crate::bounded::{Budget, Stop};
use crate::build::{Build, Values};

/// Reads JSON `text` into what `build` makes of it, against `budget`. The outer error is
/// the reader's (the text is not a document, or a limit of `budget`); the inner one the
/// builder's, with the field path of its scalar.
pub(crate) fn read_json_into<B: Build>(
    text: &str,
    budget: &Budget,
    build: &mut B,
) -> Result<Result<B::Node, Error>, serde_json::Error> {
    let refused = Refused::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let reader = Reader {
        budget,
        build,
        text: B::VERBATIM.then_some(text),
        refused: &refused,
    };
    match reader
        .deserialize(&mut de)
        .and_then(|node| de.end().map(|()| node))
    {
        Ok(node) => Ok(Ok(node)),
        Err(e) => match refused.0.into_inner() {
            Some((error, mut reversed)) => {
                reversed.reverse();
                Ok(Err(error.at_path(&FieldPath(reversed))))
            }
            None => Err(e),
        },
    }
}

/// Reads a whole JSON document against `budget`.
pub fn read_json(text: &str, budget: &Budget) -> Result<Value, serde_json::Error> {
    read_json_into(text, budget, &mut Values)?.map_err(serde::de::Error::custom)
}

/// Reads a JSON value with no limit but serde_json's nesting, as every document is read:
/// a repeated key refused, numbers in the readers' one form
/// ([`strata_core::number_from_text`]: integers exact, floats shortest, a float that is not
/// finite refused as "number out of range").
pub fn json_value(text: &str) -> Result<Value, serde_json::Error> {
    read_json(text, &Budget::new(usize::MAX, usize::MAX))
}

/// Reads one value (and everything under it) against the budget: a seed for any serde
/// deserializer (the fields of a request, read one by one under one budget).
pub struct Bounded<'b>(pub &'b Budget);

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let refused = Refused::default();
        let reader = Reader {
            budget: self.0,
            build: &mut Values,
            text: None,
            refused: &refused,
        };
        reader.deserialize(d)
    }
}

/// The builder's error, and the field path of its scalar, innermost segment first (each
/// collection adds its own as the error passes up: no path is built unless there is one).
#[derive(Default)]
struct Refused(RefCell<Option<(Error, Vec<PathSeg>)>>);

impl Refused {
    /// Keeps the builder's `error` and stops the read.
    fn keep<E: serde::de::Error>(&self, error: Error) -> E {
        let message = error.message().to_string();
        *self.0.borrow_mut() = Some((error, Vec::new()));
        E::custom(message)
    }

    /// Adds `seg` to the path of the builder's error, if it was the builder that stopped
    /// the read.
    fn within(&self, seg: PathSeg) {
        if let Some((_, path)) = self.0.borrow_mut().as_mut() {
            path.push(seg);
        }
    }
}

/// One value being read into `build`.
struct Reader<'r, B> {
    budget: &'r Budget,
    build: &'r mut B,
    /// The text being read, when the builder points into it.
    text: Option<&'r str>,
    refused: &'r Refused,
}

impl<B: Build> Reader<'_, B> {
    /// A reader of the next value, into the same builder.
    fn next(&mut self) -> Reader<'_, B> {
        Reader {
            budget: self.budget,
            build: &mut *self.build,
            text: self.text,
            refused: self.refused,
        }
    }

    fn scalar<E: serde::de::Error>(self, value: Value) -> Result<B::Node, E> {
        self.build
            .scalar(value)
            .map_err(|error| self.refused.keep(error))
    }

    /// A number the deserializer hands over as its text (a float, or an integer past 64
    /// bits), in the one form of the readers ([`strata_core::number_from_text`]); an integer
    /// past 64 bits counts its digits against the budget's bytes, as a string would. Refused,
    /// as serde_json refuses it, when it is not finite.
    fn number<E: serde::de::Error>(self, text: &str) -> Result<B::Node, E> {
        let Some(n) = strata_core::number_from_text(text) else {
            return Err(E::custom("number out of range"));
        };
        if strata_core::is_big_integer(&n) {
            self.budget.text(text.len())?;
        }
        self.scalar(Value::Number(n))
    }

    /// A string the deserializer lends: pointed at in the text when it is a slice of it.
    fn string<E: serde::de::Error>(self, v: &str) -> Result<B::Node, E> {
        self.budget.text(v.len())?;
        match self.text.and_then(|text| offset_in(text, v)) {
            Some(at) => self
                .build
                .verbatim(v.to_owned(), at)
                .map_err(|error| self.refused.keep(error)),
            None => self.scalar(Value::String(v.to_owned())),
        }
    }
}

/// Where `part` starts in `text`, when it is a slice of it.
fn offset_in(text: &str, part: &str) -> Option<usize> {
    let at = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (at + part.len() <= text.len()).then_some(at)
}

impl<'de, B: Build> DeserializeSeed<'de> for Reader<'_, B> {
    type Value = B::Node;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<B::Node, D::Error> {
        self.budget.node()?;
        d.deserialize_any(self)
    }
}

impl<'de, B: Build> Visitor<'de> for Reader<'_, B> {
    type Value = B::Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML or JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<B::Node, E> {
        self.scalar(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<B::Node, E> {
        self.scalar(Value::from(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<B::Node, E> {
        self.scalar(Value::from(v))
    }

    // Integers past 64 bits stay exact: a number holds its digits.
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<B::Node, E> {
        self.number(&v.to_string())
    }

    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<B::Node, E> {
        self.number(&v.to_string())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<B::Node, E> {
        match Number::from_f64(v) {
            Some(n) => self.scalar(Value::Number(n)),
            None => Err(self.budget.fail(Stop::NotFinite)),
        }
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<B::Node, E> {
        self.string(v)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<B::Node, E> {
        self.string(v)
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<B::Node, E> {
        self.budget.text(v.len())?;
        self.scalar(Value::String(v))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<B::Node, E> {
        self.scalar(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<B::Node, E> {
        self.scalar(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<B::Node, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<B::Node, A::Error> {
        let mut items = Vec::new();
        loop {
            match seq.next_element_seed(self.next()) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(self.build.list(items)),
                Err(e) => {
                    self.refused.within(PathSeg::Index(items.len()));
                    return Err(e);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut access: A) -> Result<B::Node, A::Error> {
        let mut map = B::Map::default();
        let mut first = true;
        while let Some(key) = access.next_key_seed(Key(self.budget, &*self.build, &map, first))? {
            let Some(key) = key else {
                let text: String = access.next_value()?;
                return self.number(&text);
            };
            first = false;
            let node = match access.next_value_seed(self.next()) {
                Ok(node) => node,
                Err(e) => {
                    self.refused.within(PathSeg::Key(key));
                    return Err(e);
                }
            };
            // A repeated key was refused where it stands, before its value.
            let _ = self.build.insert(&mut map, key, node);
        }
        Ok(self.build.map(map))
    }
}

/// Reads a map key (any scalar, as text) against the budget and the keys already read, so
/// that a repeated key is reported where it stands; `None` when the map is a number handed
/// over as its text ([`strata_core::NUMBER_TOKEN`] as its first key).
struct Key<'a, B: Build>(&'a Budget, &'a B, &'a B::Map, bool);

impl<'de, B: Build> DeserializeSeed<'de> for Key<'_, B> {
    type Value = Option<String>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, B: Build> Visitor<'de> for Key<'_, B> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Option<String>, E> {
        if self.3 && v == strata_core::NUMBER_TOKEN {
            return Ok(None);
        }
        self.0.text(v.len())?;
        if self.1.contains(self.2, v) {
            return Err(self.0.fail(Stop::DuplicateKey(v.to_string())));
        }
        Ok(Some(v.to_string()))
    }
}
