//! A placeholder-free value of a compiled document, kept as small as its kind allows.

use std::borrow::Cow;

use serde_json::Value;

use crate::{Origin, Rendered};

/// A value of a compiled document with no placeholder inside.
///
/// A JSON value takes 72 bytes whatever it holds (a map's room); a compiled document is
/// mostly constants, so each keeps only what its kind needs (24 bytes): `null` or a boolean
/// inline, a string as its text, a number (which holds its text), a list or a map boxed. It
/// renders without copying anything but `null` or a boolean ([`Const::rendered`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A string.
    Str(String),
    /// A string standing as it is in the text the document was read from, `len` bytes from
    /// byte `at`: a template read from a file keeps that text, and its constant strings
    /// point into it instead of holding copies.
    Source {
        /// Its first byte in the text.
        at: u32,
        /// Its length in bytes.
        len: u32,
    },
    /// A number, a list or a map of constants: borrowed when rendered (a number holds its
    /// text, so it is not copied at each render either).
    Tree(Box<Value>),
}

impl Const {
    /// The constant holding `value`.
    pub fn of(value: Value) -> Const {
        match value {
            Value::Null => Const::Null,
            Value::Bool(b) => Const::Bool(b),
            Value::String(s) => Const::Str(s),
            tree => Const::Tree(Box::new(tree)),
        }
    }

    /// The constant string `len` bytes long from byte `at` of a document's text, if both
    /// fit the 4 GiB a [`Const::Source`] can point at.
    pub fn source(at: usize, len: usize) -> Option<Const> {
        Some(Const::Source {
            at: u32::try_from(at).ok()?,
            len: u32::try_from(len).ok()?,
        })
    }

    /// The value it holds; `source` is the text a [`Const::Source`] points into.
    pub fn into_value(self, source: &str) -> Value {
        match self {
            Const::Null => Value::Null,
            Const::Bool(b) => Value::Bool(b),
            Const::Str(s) => Value::String(s),
            Const::Source { .. } => Value::String(self.text(source).to_string()),
            Const::Tree(tree) => *tree,
        }
    }

    /// The constant as a render's result: a string or a tree borrowed, a scalar copied
    /// (without allocating); `source` is the text a [`Const::Source`] points into.
    pub fn rendered<'t>(&'t self, source: &'t str) -> Rendered<'t> {
        let scalar = |v: Value| Rendered::Value(Cow::Owned(v), Origin::Authored);
        match self {
            Const::Null => scalar(Value::Null),
            Const::Bool(b) => scalar(Value::Bool(*b)),
            Const::Str(s) => Rendered::Str(s),
            Const::Source { .. } => Rendered::Str(self.text(source)),
            Const::Tree(tree) => Rendered::Value(Cow::Borrowed(tree), Origin::Authored),
        }
    }

    /// The text of a [`Const::Source`] in `source` (empty for any other constant, and for a
    /// source it does not fit: a template is only ever rendered with its own text).
    fn text<'t>(&self, source: &'t str) -> &'t str {
        let Const::Source { at, len } = *self else {
            return "";
        };
        let (at, len) = (at as usize, len as usize);
        let text = source.get(at..at + len);
        debug_assert!(text.is_some(), "a constant of another text");
        text.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_value_comes_back_and_renders_as_itself() {
        for value in [
            json!(null),
            json!(true),
            json!(-3),
            json!(2.5),
            json!(u64::MAX),
            serde_json::from_str("18446744073709551617").unwrap(),
            json!("text"),
            json!([1, "a", {"b": null}]),
            json!({"k": [true]}),
        ] {
            let constant = Const::of(value.clone());
            assert_eq!(constant.rendered("").into_json(), value);
            assert_eq!(constant.into_value(""), value);
        }
        assert!(matches!(
            Const::of(json!("s")).rendered(""),
            Rendered::Str("s")
        ));
        let text = "k: the value\n";
        let pointed = Const::source(3, 9).unwrap();
        assert!(matches!(pointed.rendered(text), Rendered::Str("the value")));
        assert_eq!(pointed.into_value(text), json!("the value"));
        assert_eq!(Const::source(1 << 32, 1), None);
        assert_eq!(size_of::<Const>(), 24);
        assert_eq!(size_of::<crate::Node>(), 32);
    }
}
