//! Values across the boundary: Python objects to JSON values and back.
//!
//! Only plain Python objects cross: `dict` (or any mapping) with `str` keys, `list`, `tuple`,
//! `str`, `int`, `float`, `bool` and `None`. Integers stay exact up to the 64-bit range
//! (signed or unsigned); anything else — sets, bytes, arbitrary objects, NaN, infinities,
//! larger integers, a container holding itself, nesting deeper than [`MAX_DEPTH`] — is a
//! `TypeError` or `ValueError` naming the argument and the path inside it
//! (`params['servers'][0]`). Every binding converts through this module.

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyMapping, PySet,
    PyString, PyTuple,
};
use serde_json::{Map, Number, Value};
use strata_core::{is_big_integer, number_from_text};
use strata_core::{EnvMap, Rendered};

/// The deepest nesting accepted from Python: the depth strata's JSON and YAML readers accept.
pub const MAX_DEPTH: usize = 128;

/// One step of the path from an argument to the value being converted.
enum Seg {
    Key(String),
    Index(usize),
}

/// A conversion in progress: the argument's name, the path to the current value and the
/// containers currently open on that path (to catch one that holds itself).
struct Walk<'a> {
    arg: &'a str,
    path: Vec<Seg>,
    open: Vec<*mut pyo3::ffi::PyObject>,
}

impl Walk<'_> {
    /// Where the current value is, as a Python expression: `params['a'][0]`.
    fn at(&self, py: Python<'_>) -> String {
        let mut out = self.arg.to_string();
        for seg in &self.path {
            match seg {
                Seg::Key(k) => push_key(py, &mut out, k),
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn type_error(&self, py: Python<'_>, what: impl std::fmt::Display) -> PyErr {
        PyTypeError::new_err(format!("{}: {what}", self.at(py)))
    }

    fn value_error(&self, py: Python<'_>, what: impl std::fmt::Display) -> PyErr {
        PyValueError::new_err(format!("{}: {what}", self.at(py)))
    }

    /// The JSON value of `obj`.
    fn value(&mut self, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
        let py = obj.py();
        if let Ok(s) = obj.cast::<PyString>() {
            return self.string(s).map(Value::String);
        }
        // A dict or list is read whole before its values are converted: converting a value
        // may run Python code (a custom mapping's `items()`) that changes the container, and
        // then the conversion sees the container as it was, as `json.dumps` does.
        if let Ok(d) = obj.cast::<PyDict>() {
            let entries: Vec<_> = d.iter().collect();
            return self
                .container(obj, |w| w.entries(entries))
                .map(Value::Object);
        }
        if let Ok(l) = obj.cast::<PyList>() {
            let items: Vec<_> = l.iter().collect();
            return self
                .container(obj, |w| w.items(items.into_iter()))
                .map(Value::Array);
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Value::Bool(b.is_true()));
        }
        if obj.cast::<PyInt>().is_ok() {
            return self.int(obj);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return self.float(py, f.value());
        }
        if obj.is_none() {
            return Ok(Value::Null);
        }
        if let Ok(t) = obj.cast::<PyTuple>() {
            return self.container(obj, |w| w.items(t.iter())).map(Value::Array);
        }
        if obj.cast::<PyBytes>().is_ok() || obj.cast::<PyByteArray>().is_ok() {
            return Err(
                self.type_error(py, "bytes are not a JSON value (decode them to str first)")
            );
        }
        if obj.cast::<PySet>().is_ok() || obj.cast::<PyFrozenSet>().is_ok() {
            return Err(self.type_error(py, "a set is not a JSON value (use a list)"));
        }
        if let Ok(m) = obj.cast::<PyMapping>() {
            return self.container(obj, |w| w.mapping(m)).map(Value::Object);
        }
        Err(self.type_error(
            py,
            format!(
                "{} is not a JSON value (use dict, list, tuple, str, int, float, bool or None)",
                type_name(obj)
            ),
        ))
    }

    /// Converts a container, refusing one that is already open on the path or too deep.
    fn container<T>(
        &mut self,
        obj: &Bound<'_, PyAny>,
        convert: impl FnOnce(&mut Self) -> PyResult<T>,
    ) -> PyResult<T> {
        let py = obj.py();
        let ptr = obj.as_ptr();
        if self.open.contains(&ptr) {
            return Err(self.value_error(
                py,
                format!("the {} contains itself (recursion)", type_name(obj)),
            ));
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(self.value_error(py, format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.open.push(ptr);
        let out = convert(self);
        self.open.pop();
        out
    }

    fn string(&self, s: &Bound<'_, PyString>) -> PyResult<String> {
        s.to_cow().map(Cow::into_owned).map_err(|_| {
            self.value_error(
                s.py(),
                "str is not valid Unicode (it holds a lone surrogate)",
            )
        })
    }

    fn int(&self, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        // Past 64 bits: exact, as its digits (strata_core::numbers).
        let digits = obj.str()?.to_cow()?.into_owned();
        number_from_text(&digits)
            .map(Value::Number)
            .ok_or_else(|| self.value_error(obj.py(), format!("`{digits}` is not an integer")))
    }

    fn float(&self, py: Python<'_>, f: f64) -> PyResult<Value> {
        match Number::from_f64(f) {
            Some(n) => Ok(Value::Number(n)),
            None => {
                let name = if f.is_nan() {
                    "NaN"
                } else {
                    "an infinite float"
                };
                Err(self.value_error(py, format!("{name} is not a JSON value")))
            }
        }
    }

    fn items<'py>(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Value>> {
        let mut out = Vec::with_capacity(items.size_hint().0);
        for (i, item) in items.enumerate() {
            self.path.push(Seg::Index(i));
            let v = self.value(&item)?;
            self.path.pop();
            out.push(v);
        }
        Ok(out)
    }

    fn entries<'py>(
        &mut self,
        entries: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<Map<String, Value>> {
        let mut out = Map::with_capacity(entries.len());
        for (k, v) in &entries {
            self.entry(k, v, &mut out)?;
        }
        Ok(out)
    }

    fn mapping(&mut self, m: &Bound<'_, PyMapping>) -> PyResult<Map<String, Value>> {
        let entries = m
            .items()?
            .iter()
            .map(|item| {
                item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()
                    .map_err(|_| {
                        self.type_error(m.py(), "the mapping's items() must be (key, value) pairs")
                    })
            })
            .collect::<PyResult<Vec<_>>>()?;
        self.entries(entries)
    }

    fn entry(
        &mut self,
        k: &Bound<'_, PyAny>,
        v: &Bound<'_, PyAny>,
        out: &mut Map<String, Value>,
    ) -> PyResult<()> {
        let Ok(key) = k.cast::<PyString>() else {
            return Err(self.type_error(k.py(), format!("keys must be str, not {}", type_name(k))));
        };
        let key = self.string(key)?;
        self.path.push(Seg::Key(key));
        let value = self.value(v)?;
        let Some(Seg::Key(key)) = self.path.pop() else {
            unreachable!("the key pushed above")
        };
        out.insert(key, value);
        Ok(())
    }
}

/// Appends the subscript of `key` as Python writes it: `['a']`.
fn push_key(py: Python<'_>, out: &mut String, key: &str) {
    let repr = PyString::new(py, key).repr();
    out.push('[');
    out.push_str(&repr.map_or_else(|_| format!("{key:?}"), |r| r.to_string()));
    out.push(']');
}

/// The name of `obj`'s type, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".to_string(), |n| n.to_string())
}

/// The JSON value of argument `arg`.
pub fn json_arg(obj: &Bound<'_, PyAny>, arg: &str) -> PyResult<Value> {
    Walk {
        arg,
        path: Vec::new(),
        open: Vec::new(),
    }
    .value(obj)
}

/// Argument `arg` as a JSON object; `None` is the empty object.
pub fn map_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<Map<String, Value>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Map::new());
    };
    if obj.cast::<PyDict>().is_err() && obj.cast::<PyMapping>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected a dict, got {}",
            type_name(obj)
        )));
    }
    match json_arg(obj, arg)? {
        Value::Object(map) => Ok(map),
        _ => unreachable!("a mapping converts to an object"),
    }
}

/// Argument `arg` as a mapping of str to str, in order; `None` is the empty list.
pub fn str_map_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (name, value) in map_arg(obj, arg)? {
        match value {
            Value::String(value) => out.push((name, value)),
            other => {
                let mut at = arg.to_string();
                if let Some(obj) = obj {
                    push_key(obj.py(), &mut at, &name);
                }
                return Err(PyTypeError::new_err(format!(
                    "{at}: expected str, got {}",
                    json_type(&other)
                )));
            }
        }
    }
    Ok(out)
}

/// Argument `arg` as environment variables: a mapping of str to str (`os.environ` works);
/// `None` is no variable at all.
pub fn env_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<EnvMap> {
    let mut env = EnvMap::default();
    for (name, value) in str_map_arg(obj, arg)? {
        env.set(name, value, false);
    }
    Ok(env)
}

/// Argument `arg` as a JSON array: a `list` or `tuple` (`what` names its items in the
/// error); `None` is the empty array.
pub fn list_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str, what: &str) -> PyResult<Vec<Value>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    if obj.cast::<PyList>().is_err() && obj.cast::<PyTuple>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected a list of {what}, got {}",
            type_name(obj)
        )));
    }
    match json_arg(obj, arg)? {
        Value::Array(items) => Ok(items),
        _ => unreachable!("a list or tuple converts to an array"),
    }
}

/// Argument `arg` as the list Python's warnings are appended to instead of being issued;
/// `None` is no list.
pub fn sink_arg<'a, 'py>(
    obj: Option<&'a Bound<'py, PyAny>>,
    arg: &str,
) -> PyResult<Option<&'a Bound<'py, PyList>>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => o.cast::<PyList>().map(Some).map_err(|_| {
            PyTypeError::new_err(format!("{arg}: expected a list to append the warnings to"))
        }),
    }
}

/// The Python name of a JSON value's type, for messages.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Argument `arg` as names: any iterable of str but a str itself; `None` is no name.
pub fn names_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<Vec<String>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    if obj.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected a collection of str, got a str (wrap it in a list)"
        )));
    }
    let iter = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{arg}: expected a collection of str, got {}",
            type_name(obj)
        ))
    })?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item?;
        let Ok(s) = item.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!(
                "{arg}[{i}]: expected str, got {}",
                type_name(&item)
            )));
        };
        out.push(s.to_cow()?.into_owned());
    }
    Ok(out)
}

/// The Python object of a JSON value.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => number_to_py(py, n)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A number as a Python `int` (of any size: one past 64 bits from its digits) or `float`.
fn number_to_py<'py>(py: Python<'py>, n: &Number) -> PyResult<Bound<'py, PyAny>> {
    if let Some(i) = n.as_i64() {
        Ok(i.into_pyobject(py)?.into_any())
    } else if let Some(u) = n.as_u64() {
        Ok(u.into_pyobject(py)?.into_any())
    } else if is_big_integer(n) {
        PyModule::import(py, "builtins")?
            .getattr("int")?
            .call1((n.as_str(),))
    } else {
        Ok(PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any())
    }
}

/// The Python object of a rendered document, without building a JSON value first.
pub fn rendered_to_py<'py>(
    py: Python<'py>,
    rendered: &Rendered<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match rendered {
        Rendered::Value(v, _) => to_py(py, v)?,
        Rendered::Str(text) => PyString::new(py, text).into_any(),
        Rendered::Text(t) => PyString::new(py, &t.text).into_any(),
        Rendered::Array(items) => {
            let items = items
                .iter()
                .map(|r| rendered_to_py(py, r))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Rendered::Object(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                dict.set_item(k.as_ref(), rendered_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// Flag argument `arg`: `True` or `False`; absent (or `None`) is `False`.
pub fn flag_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<bool> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(false),
        Some(o) => match o.cast::<PyBool>() {
            Ok(b) => Ok(b.is_true()),
            Err(_) => Err(PyTypeError::new_err(format!(
                "{arg}: expected bool, got {}",
                type_name(o)
            ))),
        },
    }
}

/// String argument `arg`.
pub fn str_arg(obj: &Bound<'_, PyAny>, arg: &str) -> PyResult<String> {
    let Ok(s) = obj.cast::<PyString>() else {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected str, got {}",
            type_name(obj)
        )));
    };
    s.to_cow().map(Cow::into_owned).map_err(|_| {
        PyValueError::new_err(format!(
            "{arg}: str is not valid Unicode (it holds a lone surrogate)"
        ))
    })
}

/// An argument that tells "not given" from "given as `None`": a setting to keep, or one to
/// clear. Declare it with the default `Given::Absent` (`#[pyo3(signature = (*, x = Given::Absent))]`).
pub enum Given<'py> {
    /// The caller did not pass the argument.
    Absent,
    /// The caller passed this object (`None` included).
    Passed(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Given<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Given::Passed(obj.to_owned()))
    }
}

impl<'py> Given<'py> {
    /// A setting that may be cleared: absent is `None` (keep), `None` is `Some(None)`
    /// (clear), a `str` is `Some(Some(text))`.
    pub fn clearable_str(&self, arg: &str) -> PyResult<Option<Option<String>>> {
        match self {
            Given::Absent => Ok(None),
            Given::Passed(o) if o.is_none() => Ok(Some(None)),
            Given::Passed(o) => str_arg(o, arg)
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{arg}: expected str or None, got {}",
                        type_name(o)
                    ))
                })
                .map(|s| Some(Some(s))),
        }
    }

    /// A setting that always has a value: absent is `None` (keep), a `str` is `Some(text)`.
    pub fn str(&self, arg: &str) -> PyResult<Option<String>> {
        match self {
            Given::Absent => Ok(None),
            Given::Passed(o) => str_arg(o, arg).map(Some),
        }
    }

    /// A mapping setting: absent is `None` (keep), `None` is the empty object.
    pub fn map(&self, arg: &str) -> PyResult<Option<Map<String, Value>>> {
        match self {
            Given::Absent => Ok(None),
            Given::Passed(o) => map_arg(Some(o), arg).map(Some),
        }
    }
}

/// Optional string argument `arg`: absent (or `None`) is `None`.
pub fn opt_str_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<Option<String>> {
    obj.filter(|o| !o.is_none())
        .map(|o| str_arg(o, arg))
        .transpose()
}

/// Duration argument `arg` in seconds (an int or a float, positive and finite); absent (or
/// `None`) is `None`.
pub fn seconds_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<Option<Duration>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let number = if obj.cast::<PyBool>().is_ok() {
        None
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        Some(f.value())
    } else if obj.cast::<PyInt>().is_ok() {
        Some(obj.extract::<f64>().unwrap_or(f64::INFINITY))
    } else {
        None
    };
    let Some(seconds) = number else {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected a number of seconds, got {}",
            type_name(obj)
        )));
    };
    match Duration::try_from_secs_f64(seconds) {
        Ok(d) if seconds > 0.0 => Ok(Some(d)),
        _ => Err(PyValueError::new_err(format!(
            "{arg}: expected a positive, finite number of seconds"
        ))),
    }
}

/// Count argument `arg`: a positive `int`; absent (or `None`) is `None`.
pub fn count_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<Option<usize>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if obj.cast::<PyBool>().is_ok() || obj.cast::<PyInt>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{arg}: expected int, got {}",
            type_name(obj)
        )));
    }
    match obj.extract::<usize>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(PyValueError::new_err(format!(
            "{arg}: expected a positive integer"
        ))),
    }
}

/// File-system path argument `arg`: a `str` or an `os.PathLike` (`pathlib.Path`).
pub fn path_arg(obj: &Bound<'_, PyAny>, arg: &str) -> PyResult<PathBuf> {
    obj.extract::<PathBuf>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{arg}: expected str or os.PathLike, got {}",
            type_name(obj)
        ))
    })
}
