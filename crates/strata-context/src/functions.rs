//! The built-in functions of context expressions.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use regex::{Regex, RegexBuilder};
use serde_json::Value;
use strata_core::{a_or_an, did_you_mean, type_name, value_to_text};

use crate::condition::json_cmp;
use crate::eval::arith;
use crate::expr::{BinOp, Expr};
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
    /// `type(x)`: the JSON Schema type name of the value (`integer` for a whole number).
    Type,
    /// `matches(string, pattern)`: whether the regular expression matches somewhere in the
    /// string (bounded: see [`MAX_PATTERN_BYTES`] and [`REGEX_SIZE_LIMIT`]).
    Matches,
    /// `sum(array)`: the total of an array of numbers (`0` when empty).
    Sum,
    /// `min(array)`: the least of an array of numbers or of strings.
    Min,
    /// `max(array)`: the greatest of an array of numbers or of strings.
    Max,
    /// `join(array, separator)`: the text of strings, numbers and booleans, separated.
    Join,
}

const ALL: [(&str, Func); 16] = [
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
    ("type", Func::Type),
    ("matches", Func::Matches),
    ("sum", Func::Sum),
    ("min", Func::Min),
    ("max", Func::Max),
    ("join", Func::Join),
];

/// What another template language's function or filter is called in layer C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// A function of layer C.
    Func(Func),
    /// The fallback operator `??` (Jinja's `default`).
    Fallback,
}

/// Names RyeOS, Jinja or Python users write for what layer C spells otherwise.
const OTHER_SPELLINGS: [(&str, Spelling); 16] = [
    ("len", Spelling::Func(Func::Length)),
    ("count", Spelling::Func(Func::Length)),
    ("size", Spelling::Func(Func::Length)),
    ("str", Spelling::Func(Func::String)),
    ("int", Spelling::Func(Func::Number)),
    ("float", Spelling::Func(Func::Number)),
    ("tojson", Spelling::Func(Func::Json)),
    ("to_json", Spelling::Func(Func::Json)),
    ("fromjson", Spelling::Func(Func::FromJson)),
    ("parse_json", Spelling::Func(Func::FromJson)),
    ("typeof", Spelling::Func(Func::Type)),
    ("match", Spelling::Func(Func::Matches)),
    ("regex", Spelling::Func(Func::Matches)),
    ("has", Spelling::Func(Func::Contains)),
    ("default", Spelling::Fallback),
    ("d", Spelling::Fallback),
];

/// The layer-C spelling of a function or filter name: the function itself, a known other
/// spelling (`len` → `length`, `default` → `??`), or the closest function name by the one
/// did-you-mean of strata.
pub(crate) fn strata_spelling(name: &str) -> Option<Spelling> {
    if let Some(f) = Func::from_name(name) {
        return Some(Spelling::Func(f));
    }
    if let Some((_, s)) = OTHER_SPELLINGS.iter().find(|(n, _)| *n == name) {
        return Some(*s);
    }
    let names = Func::names();
    did_you_mean(name, names.iter().copied())
        .and_then(Func::from_name)
        .map(Spelling::Func)
}

/// The longest pattern `matches` accepts, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;

/// The most memory one compiled `matches` pattern may take (the `regex` crate's
/// `size_limit` and `dfa_size_limit`), in bytes.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The hint of a pattern error.
pub(crate) const REGEX_HINT: &str =
    "`matches` takes a regular expression of the Rust `regex` crate (no look-around, no backreferences)";

/// The longest text `join` builds, in bytes (the default `output_bytes_per_string`).
pub const MAX_JOIN_BYTES: usize = 16 << 20;

/// How many compiled patterns each thread keeps.
const REGEX_CACHE: usize = 64;

thread_local! {
    static PATTERNS: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

/// Compiles a `matches` pattern within the bounds; the error is the message of a layer-C
/// error (`` `matches`: invalid regular expression `(`: unclosed group ``).
pub(crate) fn compile_regex(pattern: &str) -> Result<Regex, String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "`matches`: the pattern is {} bytes; at most {MAX_PATTERN_BYTES} are allowed",
            pattern.len()
        ));
    }
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => format!(
                "`matches`: the regular expression `{pattern}` is too big once compiled (the limit is {limit} bytes)"
            ),
            regex::Error::Syntax(text) => {
                let why = text.rsplit("error: ").next().unwrap_or(&text).trim();
                format!("`matches`: invalid regular expression `{pattern}`: {why}")
            }
            other => format!("`matches`: invalid regular expression `{pattern}`: {other}"),
        })
}

/// Whether `pattern` matches somewhere in `text`, through a small per-thread cache of
/// compiled patterns.
fn regex_match(pattern: &str, text: &str) -> Result<bool, String> {
    PATTERNS.with(|cache| {
        if let Some(re) = cache.borrow().get(pattern) {
            return Ok(re.is_match(text));
        }
        let re = compile_regex(pattern)?;
        let found = re.is_match(text);
        let mut cache = cache.borrow_mut();
        if cache.len() >= REGEX_CACHE {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re);
        Ok(found)
    })
}

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
        let want = match self {
            Func::Contains | Func::Matches | Func::Join => 2,
            _ => 1,
        };
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
            Func::Type => Ty::Str,
            Func::Matches => {
                need(0, &[Ty::Str], "a string")?;
                need(1, &[Ty::Str], "a string as its pattern")?;
                Ty::Bool
            }
            Func::Sum => {
                need(0, &[Ty::List], "an array")?;
                Ty::Num
            }
            Func::Min | Func::Max => {
                need(0, &[Ty::List], "an array")?;
                Ty::Unknown
            }
            Func::Join => {
                need(0, &[Ty::List], "an array")?;
                need(1, &[Ty::Str], "a string as its separator")?;
                Ty::Str
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
                Value::String(s) if leading_zero(s.trim()) => Err(format!(
                    "`number`: `{s}` is not a number (leading zeros are not allowed)"
                )),
                Value::String(s) => {
                    parse_number(s.trim()).ok_or_else(|| format!("`number`: `{s}` is not a number"))
                }
                other => wrong("a number or a string", other),
            },
            Func::Type => Ok(Value::String(type_name(a).to_string())),
            Func::Matches => match (a, args[1]) {
                (Value::String(s), Value::String(p)) => regex_match(p, s).map(Value::Bool),
                (Value::String(_), other) => wrong("a string as its pattern", other),
                (other, _) => wrong("a string", other),
            },
            Func::Sum => sum(self.items(a)?),
            Func::Min | Func::Max => self.least_or_greatest(self.items(a)?),
            Func::Join => match args[1] {
                Value::String(sep) => join(self.items(a)?, sep),
                other => wrong("a string as its separator", other),
            },
        }
    }

    /// The items of the array argument of an aggregate.
    fn items(self, v: &Value) -> Result<&[Value], String> {
        match v {
            Value::Array(items) => Ok(items),
            other => Err(format!(
                "`{}` needs an array, got {}",
                self.name(),
                a_or_an(type_name(other))
            )),
        }
    }

    /// `min` and `max`: numbers by value or strings by code point, never both; the first of
    /// equal items; an error on an empty array.
    fn least_or_greatest(self, items: &[Value]) -> Result<Value, String> {
        let name = self.name();
        let mut best: Option<&Value> = None;
        for (i, v) in items.iter().enumerate() {
            if !matches!(v, Value::Number(_) | Value::String(_)) {
                return Err(format!(
                    "`{name}` needs an array of numbers or of strings, got {} at [{i}]",
                    a_or_an(type_name(v))
                ));
            }
            let Some(b) = best else {
                best = Some(v);
                continue;
            };
            let order = json_cmp(v, b).map_err(|m| format!("`{name}`: {m} at [{i}]"))?;
            if (self == Func::Min && order.is_lt()) || (self == Func::Max && order.is_gt()) {
                best = Some(v);
            }
        }
        best.cloned()
            .ok_or_else(|| format!("`{name}` of an empty array has no value"))
    }
}

/// `sum`: `0 + a + b + …` with the arithmetic of `+` (integers checked, a float makes the
/// total a float).
fn sum(items: &[Value]) -> Result<Value, String> {
    let mut total = Value::from(0);
    for (i, v) in items.iter().enumerate() {
        if !v.is_number() {
            return Err(format!(
                "`sum` needs an array of numbers, got {} at [{i}]",
                a_or_an(type_name(v))
            ));
        }
        total = arith(BinOp::Add, &total, v).map_err(|m| {
            if m == "integer overflow" {
                "`sum`: integer overflow".to_string()
            } else {
                "`sum`: the total is not a finite number".to_string()
            }
        })?;
    }
    Ok(total)
}

/// `join`: strings as they are, numbers and booleans in their text form; no nulls, arrays or
/// objects; at most [`MAX_JOIN_BYTES`].
fn join(items: &[Value], sep: &str) -> Result<Value, String> {
    let mut parts = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        parts.push(match v {
            Value::String(s) => Cow::Borrowed(s.as_str()),
            Value::Number(_) | Value::Bool(_) => Cow::Owned(value_to_text(v)),
            other => {
                return Err(format!(
                    "`join` needs an array of strings, numbers or booleans, got {} at [{i}]",
                    a_or_an(type_name(other))
                ))
            }
        });
    }
    let len = parts
        .iter()
        .map(|p| p.len())
        .fold(0usize, usize::saturating_add);
    let len = len.saturating_add(sep.len().saturating_mul(parts.len().saturating_sub(1)));
    if len > MAX_JOIN_BYTES {
        return Err(format!(
            "`join`: the text would be {len} bytes; at most {MAX_JOIN_BYTES} are allowed"
        ));
    }
    Ok(Value::String(parts.join(sep)))
}

/// `01`, `-007`, `00.5`: an integer part of more than one digit that starts with `0`.
fn leading_zero(s: &str) -> bool {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s).as_bytes();
    digits.len() > 1 && digits[0] == b'0' && digits[1].is_ascii_digit()
}

fn parse_number(s: &str) -> Option<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::from(i));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Some(Value::from(u));
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
