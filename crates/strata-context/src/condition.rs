//! Structured conditions over a context: `{path, op, value}`, `any`, `all` and `not`.
//!
//! Parsed (and checked: unknown operators, malformed shapes, bad regexes) when a file loads,
//! evaluated later against event or state data. Comparisons are typed: ordering two values of
//! different types is an error, never a silent `false`.

use std::cmp::Ordering;

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use serde_json::Number;
use strata_core::walk::resolve_in;
use strata_core::{a_or_an, type_name, ContextSource, Error, ErrorKind, Layer};

use crate::eval::type_error;
use crate::functions::REGEX_SIZE_LIMIT;

use crate::expr::{parse_expr, Expr, Path};

/// The comparison operators of a structured condition.
pub const OPERATORS: [&str; 10] = [
    "eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "regex", "exists",
];

/// A comparison operator.
#[derive(Debug, Clone)]
pub enum Op {
    /// Equal (numbers compare by value: `1 == 1.0`).
    Eq,
    /// Not equal.
    Ne,
    /// Greater than (numbers or strings).
    Gt,
    /// Greater than or equal.
    Gte,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
    /// The value at the path is an element of the given list.
    In,
    /// The string at the path contains the given text, the list contains the element, or the
    /// object has the key.
    Contains,
    /// The string at the path matches the regular expression.
    Regex(Regex),
    /// The path resolves (`value: false`: it does not).
    Exists,
}

/// A parsed condition.
#[derive(Debug, Clone)]
pub enum Condition {
    /// `{path, op, value}`.
    Compare {
        /// The path, as written.
        source: String,
        /// The parsed path.
        path: Path,
        /// The operator.
        op: Op,
        /// The operand.
        value: Value,
    },
    /// True when any member is.
    Any(Vec<Condition>),
    /// True when every member is.
    All(Vec<Condition>),
    /// True when the member is false.
    Not(Box<Condition>),
}

fn keys(map: &Map<String, Value>) -> String {
    map.keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Condition {
    /// Parses a condition from its YAML/JSON form; the error (kind `invalid`) says what is
    /// wrong.
    pub fn parse(value: &Value) -> Result<Condition, Error> {
        Condition::parse_form(value).map_err(|m| Error::new(Layer::CONTEXT, ErrorKind::Invalid, m))
    }

    fn parse_form(value: &Value) -> Result<Condition, String> {
        let Value::Object(map) = value else {
            return Err(
                "a condition is a map: {path, op, value}, {any: [...]}, {all: [...]} or {not: ...}"
                    .into(),
            );
        };
        for combinator in ["any", "all", "not"] {
            if let Some(inner) = map.get(combinator) {
                if map.len() != 1 {
                    return Err(format!(
                        "`{combinator}` must be the only key of its condition, found {}",
                        keys(map)
                    ));
                }
                if combinator == "not" {
                    return Ok(Condition::Not(Box::new(Condition::parse_form(inner)?)));
                }
                let Value::Array(items) = inner else {
                    return Err(format!("`{combinator}` takes an array of conditions"));
                };
                let parsed = items
                    .iter()
                    .map(Condition::parse_form)
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(if combinator == "any" {
                    Condition::Any(parsed)
                } else {
                    Condition::All(parsed)
                });
            }
        }
        if let Some(extra) = map
            .keys()
            .find(|k| !["path", "op", "value"].contains(&k.as_str()))
        {
            return Err(format!(
                "unknown condition key `{extra}`; a comparison has `path`, `op` and `value`"
            ));
        }
        let Some(Value::String(source)) = map.get("path") else {
            return Err("a comparison needs `path` (a string such as `result.exit_code`)".into());
        };
        let path = match parse_expr(source, 0) {
            Ok(Expr::Path(p)) => p,
            Ok(_) => return Err(format!("`{source}` is not a path")),
            Err(e) => return Err(format!("bad path `{source}`: {}", e.message())),
        };
        let op_name = match map.get("op") {
            Some(Value::String(op)) => op.as_str(),
            None => return Err("a comparison needs `op`".into()),
            Some(_) => return Err("`op` must be a string".into()),
        };
        let value = map.get("value").cloned();
        let op = match op_name {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "gt" => Op::Gt,
            "gte" => Op::Gte,
            "lt" => Op::Lt,
            "lte" => Op::Lte,
            "in" => Op::In,
            "contains" => Op::Contains,
            "exists" => Op::Exists,
            "regex" => match &value {
                // Bounded as `matches` is: the compiled pattern stays within
                // `REGEX_SIZE_LIMIT`.
                Some(Value::String(re)) => Op::Regex(
                    RegexBuilder::new(re)
                        .size_limit(REGEX_SIZE_LIMIT)
                        .dfa_size_limit(REGEX_SIZE_LIMIT)
                        .build()
                        .map_err(|e| format!("bad regex `{re}`: {e}"))?,
                ),
                _ => return Err("`regex` takes a string `value`".into()),
            },
            other => {
                return Err(format!(
                    "unknown operator `{other}`; the operators are {}",
                    OPERATORS.join(", ")
                ))
            }
        };
        let value = match (&op, value) {
            (Op::Exists, None) => Value::Bool(true),
            (Op::Exists, Some(Value::Bool(b))) => Value::Bool(b),
            (Op::Exists, Some(_)) => {
                return Err("`exists` takes `value: true` or `value: false`".into())
            }
            (Op::In, Some(v @ Value::Array(_))) => v,
            (Op::In, _) => return Err("`in` takes an array `value`".into()),
            (_, None) => return Err(format!("`{op_name}` needs a `value`")),
            (_, Some(v)) => v,
        };
        Ok(Condition::Compare {
            source: source.clone(),
            path,
            op,
            value,
        })
    }

    /// Evaluates the condition against `root`; type mismatches are errors.
    pub fn eval(&self, root: &dyn ContextSource) -> Result<bool, Error> {
        match self {
            Condition::Any(items) => {
                for c in items {
                    if c.eval(root)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Condition::All(items) => {
                for c in items {
                    if !c.eval(root)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Condition::Not(inner) => Ok(!inner.eval(root)?),
            Condition::Compare {
                source,
                path,
                op,
                value,
            } => {
                let found = resolve_in(path, root).ok();
                compare(source, found, op, value).map_err(type_error)
            }
        }
    }
}

/// An integer of any JSON range.
fn int_of(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Orders an integer and a float exactly (never rounding the integer through `f64`).
fn int_float_cmp(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Every JSON integer is below 2^65 in magnitude; floats beyond 2^100 settle it at once.
    const FAR: f64 = 1e30;
    if f >= FAR {
        return Some(Ordering::Less);
    }
    if f <= -FAR {
        return Some(Ordering::Greater);
    }
    let floor = f.floor();
    Some(match i.cmp(&(floor as i128)) {
        Ordering::Equal if f > floor => Ordering::Less,
        other => other,
    })
}

/// Orders two JSON numbers by value, exactly: `9007199254740993` is greater than
/// `9007199254740992.0`, and `1 == 1.0`.
pub(crate) fn num_cmp(x: &Number, y: &Number) -> Option<Ordering> {
    match (int_of(x), int_of(y)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        (Some(a), None) => int_float_cmp(a, y.as_f64()?),
        (None, Some(b)) => int_float_cmp(b, x.as_f64()?).map(Ordering::reverse),
        (None, None) => x.as_f64()?.partial_cmp(&y.as_f64()?),
    }
}

/// JSON equality, with numbers compared by value.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Orders two numbers or two strings; anything else is a type error.
pub(crate) fn json_cmp(a: &Value, b: &Value) -> Result<Ordering, String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            num_cmp(x, y).ok_or_else(|| "numbers cannot be ordered".to_string())
        }
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        _ => Err(format!(
            "cannot order {} and {}",
            a_or_an(type_name(a)),
            a_or_an(type_name(b))
        )),
    }
}

fn compare(source: &str, found: Option<&Value>, op: &Op, value: &Value) -> Result<bool, String> {
    let Some(found) = found else {
        return Ok(match op {
            Op::Exists => value == &Value::Bool(false),
            Op::Ne => true,
            _ => false,
        });
    };
    let ordered = |want: &[Ordering]| {
        json_cmp(found, value)
            .map(|o| want.contains(&o))
            .map_err(|e| format!("`{source}`: {e}"))
    };
    match op {
        Op::Exists => Ok(value == &Value::Bool(true)),
        Op::Eq => Ok(json_eq(found, value)),
        Op::Ne => Ok(!json_eq(found, value)),
        Op::Gt => ordered(&[Ordering::Greater]),
        Op::Gte => ordered(&[Ordering::Greater, Ordering::Equal]),
        Op::Lt => ordered(&[Ordering::Less]),
        Op::Lte => ordered(&[Ordering::Less, Ordering::Equal]),
        Op::In => Ok(value
            .as_array()
            .is_some_and(|items| items.iter().any(|v| json_eq(v, found)))),
        Op::Contains => match (found, value) {
            (Value::String(s), Value::String(needle)) => Ok(s.contains(needle.as_str())),
            (Value::Array(items), v) => Ok(items.iter().any(|i| json_eq(i, v))),
            (Value::Object(map), Value::String(k)) => Ok(map.contains_key(k)),
            _ => Err(format!(
                "`{source}`: `contains` needs a string, an array or an object, found {}",
                a_or_an(type_name(found))
            )),
        },
        Op::Regex(re) => match found {
            Value::String(s) => Ok(re.is_match(s)),
            other => Err(format!(
                "`{source}`: `regex` needs a string, found {}",
                a_or_an(type_name(other))
            )),
        },
    }
}
