//! The built-in functions of context expressions.

use serde_json::Value;
use strata_core::{a_or_an, type_name, value_to_text};

use crate::expr::Expr;
use crate::typing::Ty;

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `length(x)`: characters of a string, items of a list, entries of an object.
    Length,
    /// `exists(path)`: whether the path resolves (never a warning).
    Exists,
    /// `contains(a, b)`: substring, list element, or object key.
    Contains,
    /// `keys(object)`: the keys, in order.
    Keys,
    /// `lower(string)`.
    Lower,
    /// `upper(string)`.
    Upper,
    /// `json(x)`: compact JSON text.
    Json,
    /// `from_json(string)`: the value the JSON text holds.
    FromJson,
    /// `number(x)`: a number, or a string holding one.
    Number,
    /// `string(x)`: the text form of any value.
    String,
}

const ALL: [(&str, Func); 10] = [
    ("length", Func::Length),
    ("exists", Func::Exists),
    ("contains", Func::Contains),
    ("keys", Func::Keys),
    ("lower", Func::Lower),
    ("upper", Func::Upper),
    ("json", Func::Json),
    ("from_json", Func::FromJson),
    ("number", Func::Number),
    ("string", Func::String),
];

impl Func {
    /// The function of that name.
    pub fn from_name(name: &str) -> Option<Func> {
        ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    /// Every function name.
    pub fn names() -> Vec<&'static str> {
        ALL.iter().map(|(n, _)| *n).collect()
    }

    /// The function's name.
    pub fn name(self) -> &'static str {
        ALL.iter().find(|(_, f)| *f == self).map_or("?", |(n, _)| n)
    }

    /// Checks the number (and, for `exists`, the form) of arguments.
    pub(crate) fn check_arity(self, args: &[Expr]) -> Result<(), String> {
        let want = if self == Func::Contains { 2 } else { 1 };
        if args.len() != want {
            let s = if want == 1 { "" } else { "s" };
            return Err(format!(
                "`{}` takes {want} argument{s}, got {}",
                self.name(),
                args.len()
            ));
        }
        if self == Func::Exists && !matches!(args[0], Expr::Path(_)) {
            return Err("`exists` takes a path".into());
        }
        Ok(())
    }

    /// The result type, given the argument types; an error when a known type is wrong.
    pub(crate) fn check_types(self, args: &[Ty]) -> Result<Ty, String> {
        let need = |i: usize, ok: &[Ty], what: &str| {
            let t = args[i];
            if t == Ty::Unknown || ok.contains(&t) {
                Ok(())
            } else {
                Err(format!(
                    "`{}` needs {what}, got {}",
                    self.name(),
                    a_or_an(t.name())
                ))
            }
        };
        Ok(match self {
            Func::Length => {
                need(
                    0,
                    &[Ty::Str, Ty::List, Ty::Object],
                    "a string, an array or an object",
                )?;
                Ty::Num
            }
            Func::Exists => Ty::Bool,
            Func::Contains => {
                need(
                    0,
                    &[Ty::Str, Ty::List, Ty::Object],
                    "a string, an array or an object",
                )?;
                Ty::Bool
            }
            Func::Keys => {
                need(0, &[Ty::Object], "an object")?;
                Ty::List
            }
            Func::Lower | Func::Upper => {
                need(0, &[Ty::Str], "a string")?;
                Ty::Str
            }
            Func::Json | Func::String => Ty::Str,
            Func::FromJson => {
                need(0, &[Ty::Str], "a string")?;
                Ty::Unknown
            }
            Func::Number => {
                need(0, &[Ty::Num, Ty::Str], "a number or a string")?;
                Ty::Num
            }
        })
    }

    /// Applies the function to evaluated arguments (`exists` is answered by the evaluator).
    /// Arguments are borrowed: `length(state.items)` reads the list where it is.
    pub(crate) fn apply(self, args: &[&Value]) -> Result<Value, String> {
        let wrong = |what: &str, v: &Value| {
            Err(format!(
                "`{}` needs {what}, got {}",
                self.name(),
                a_or_an(type_name(v))
            ))
        };
        let a = args[0];
        match self {
            Func::Exists => Ok(Value::Bool(true)),
            Func::Length => match a {
                Value::String(s) => Ok(Value::from(s.chars().count())),
                Value::Array(items) => Ok(Value::from(items.len())),
                Value::Object(map) => Ok(Value::from(map.len())),
                other => wrong("a string, an array or an object", other),
            },
            Func::Contains => contains(a, args[1]).map(Value::Bool),
            Func::Keys => match a {
                Value::Object(map) => Ok(Value::Array(
                    map.keys().cloned().map(Value::String).collect(),
                )),
                other => wrong("an object", other),
            },
            Func::Lower | Func::Upper => match a {
                Value::String(s) if self == Func::Lower => Ok(Value::String(s.to_lowercase())),
                Value::String(s) => Ok(Value::String(s.to_uppercase())),
                other => wrong("a string", other),
            },
            Func::Json => Ok(Value::String(serde_json::to_string(a).unwrap_or_default())),
            Func::String => Ok(Value::String(value_to_text(a))),
            Func::FromJson => match a {
                Value::String(s) => {
                    serde_json::from_str(s).map_err(|e| format!("`from_json`: not JSON: {e}"))
                }
                other => wrong("a string", other),
            },
            Func::Number => match a {
                Value::Number(_) => Ok(a.clone()),
                Value::String(s) => {
                    parse_number(s.trim()).ok_or_else(|| format!("`number`: `{s}` is not a number"))
                }
                other => wrong("a number or a string", other),
            },
        }
    }
}

fn parse_number(s: &str) -> Option<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::from(i));
    }
    s.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

/// `contains(haystack, needle)` and `needle in haystack`.
pub(crate) fn contains(haystack: &Value, needle: &Value) -> Result<bool, String> {
    match (haystack, needle) {
        (Value::String(s), Value::String(n)) => Ok(s.contains(n.as_str())),
        (Value::String(_), other) => Err(format!(
            "cannot look for {} in a string",
            a_or_an(type_name(other))
        )),
        (Value::Array(items), n) => Ok(items.iter().any(|i| crate::condition::json_eq(i, n))),
        (Value::Object(map), Value::String(k)) => Ok(map.contains_key(k)),
        (Value::Object(_), other) => Err(format!(
            "object keys are strings, not {}",
            a_or_an(type_name(other))
        )),
        (other, _) => Err(format!("cannot look inside {}", a_or_an(type_name(other)))),
    }
}
