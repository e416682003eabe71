//! `strata.CannedResponse`: canned responses filled from standard fields, tool results and
//! a Python callable as the generator (`strata-responses`, SPEC §7).

use std::sync::Mutex;

use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use serde_json::Value;
use strata_core::Error;
use strata_responses::{
    check_std, generator_failed, Generate, JinjaLimits, Place, Reply, Response, Sources, ToolResult,
};

use crate::convert::{
    json_arg, list_arg, map_arg, opt_str_arg, path_arg, str_arg, to_py, type_name,
};
use crate::errors::{to_py_err, OrRaise};
use crate::stack::{on_strata_stack, DEFAULT_LIMITS_STACK};

/// The hint of a generator callable's failures.
const CALLABLE_HINT: &str = "the generator is called as generator(template, field, context) and returns the field's value as plain data (str, int, float, bool, None, list, dict)";

/// A canned response: an authored Jinja template whose fields are filled from three sources
/// in order — the standard fields ``std.*``, the ``canned_response_fields`` of tool results,
/// and a generator for ``generative.*`` fields — then rendered.
///
/// ``template`` is the template's text; ``file`` names the file it came from, so that errors
/// carry a line and column (``CannedResponse.from_file`` sets it). Raises
/// ``TemplateSyntaxError`` for a malformed template or a field named with a Jinja keyword.
#[pyclass(frozen, module = "strata", name = "CannedResponse")]
pub struct PyCannedResponse {
    response: Response,
}

/// A Python callable filling `generative.*` fields. The first exception it raises (or the
/// conversion error of a value that is not plain data) is kept, to become the cause of the
/// `ResponseError` raised in its place. The response renders on strata's work thread
/// (`crate::stack`), which takes the GIL back for each call.
struct Callable {
    callable: Py<PyAny>,
    name: String,
    raised: Mutex<Option<PyErr>>,
}

impl Callable {
    /// The generator of argument `generator`: a callable.
    fn of(obj: &Bound<'_, PyAny>) -> PyResult<Callable> {
        if !obj.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "generator: expected a callable, got {}",
                type_name(obj)
            )));
        }
        let name = ["__qualname__", "__name__"]
            .iter()
            .find_map(|attr| obj.getattr(*attr).ok().and_then(|n| str_arg(&n, attr).ok()))
            .unwrap_or_else(|| type_name(obj));
        Ok(Callable {
            callable: obj.clone().unbind(),
            name,
            raised: Mutex::new(None),
        })
    }

    /// Keeps `err` and returns the generator error about `field` saying `why`.
    fn fail(&self, err: PyErr, field: &str, why: String) -> Error {
        self.raised
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get_or_insert(err);
        generator_failed(field, why, CALLABLE_HINT)
    }

    /// The Python exception of `err`: the callable's own exception when it was not an
    /// `Exception` (a `KeyboardInterrupt` goes through as it is), else the `ResponseError`
    /// of `err` caused by what the callable raised.
    fn exception(&self, py: Python<'_>, err: &Error) -> PyErr {
        let exc = to_py_err(py, err);
        let raised = self
            .raised
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        match raised {
            None => exc,
            Some(cause) if !cause.is_instance_of::<PyException>(py) => cause,
            Some(cause) => {
                exc.set_cause(py, Some(cause));
                exc
            }
        }
    }
}

impl Generate for Callable {
    fn name(&self) -> &str {
        &self.name
    }

    fn place(&self) -> Place<'_> {
        Place::Nowhere
    }

    /// Calls the callable with `(template, field, context)`; its value must be plain data.
    fn generate(&self, template: &str, field: &str, context: &Value) -> Result<Value, Error> {
        Python::attach(|py| self.call(py, template, field, context))
    }
}

impl Callable {
    /// `generate`, with the GIL.
    fn call(
        &self,
        py: Python<'_>,
        template: &str,
        field: &str,
        context: &Value,
    ) -> Result<Value, Error> {
        let context = to_py(py, context)
            .map_err(|e| self.fail(e, field, "the context could not be built".into()))?;
        let value = self
            .callable
            .bind(py)
            .call1((template, field, context))
            .map_err(|e| {
                let why = format!("it raised {}", exception_name(py, &e));
                self.fail(e, field, why)
            })?;
        json_arg(&value, "value").map_err(|e| {
            let why = format!(
                "it returned a value that is not plain data: {}",
                e.value(py)
            );
            self.fail(e, field, why)
        })
    }
}

/// The name of an exception's class.
fn exception_name(py: Python<'_>, err: &PyErr) -> String {
    err.get_type(py)
        .name()
        .map_or_else(|_| "an exception".to_string(), |n| n.to_string())
}

impl PyCannedResponse {
    /// Fills the fields from `std`, `tools` and `generator` (the generator only for the
    /// `generative.*` fields the render needs), and renders.
    fn reply(
        &self,
        py: Python<'_>,
        std: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Reply> {
        let std = Value::Object(map_arg(std, "std")?);
        check_std(&std, Place::Nowhere).or_raise(py)?;
        let results = list_arg(tools, "tools", "tool results")?;
        let mut tools = Vec::new();
        for (i, result) in results.iter().enumerate() {
            let found =
                ToolResult::of(format!("tools[{i}]"), result, Place::Nowhere).or_raise(py)?;
            tools.extend(found);
        }
        let generator = generator
            .filter(|g| !g.is_none())
            .map(Callable::of)
            .transpose()?;
        let respond = || {
            let sources = Sources {
                std: &std,
                std_place: Place::Nowhere,
                tools: &tools,
                generator: generator.as_ref().map(|g| g as &dyn Generate),
                secrets: &[],
            };
            self.response.respond(&sources)
        };
        on_strata_stack(py, DEFAULT_LIMITS_STACK, respond)?.map_err(|e| match &generator {
            Some(g) => g.exception(py, &e),
            None => to_py_err(py, &e),
        })
    }
}

#[pymethods]
impl PyCannedResponse {
    #[new]
    #[pyo3(signature = (template, *, file=None))]
    fn new(template: &Bound<'_, PyAny>, file: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let source = str_arg(template, "template")?;
        let file = opt_str_arg(file, "file")?;
        let response = Response::compile(source, file.as_deref(), JinjaLimits::default())
            .or_raise(template.py())?;
        Ok(PyCannedResponse { response })
    }

    /// The canned response in file ``path`` (``str`` or ``os.PathLike``); errors name the
    /// file with a line and column. Raises ``StrataError`` (kind ``io``) when it cannot be
    /// read.
    #[staticmethod]
    fn from_file(path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = path.py();
        let path = path_arg(path, "path")?;
        let name = path.display().to_string();
        let source = std::fs::read_to_string(&path)
            .map_err(|e| Error::io("read", &path, e))
            .or_raise(py)?;
        let response =
            Response::compile(source, Some(&name), JinjaLimits::default()).or_raise(py)?;
        Ok(PyCannedResponse { response })
    }

    /// The fields the template may read, by full dotted name (``"account.balance"``), in the
    /// order they first appear; found statically, through conditions and loops. A render needs
    /// only those it actually reads (see ``render``).
    #[getter]
    fn fields(&self) -> Vec<String> {
        self.response.fields().to_vec()
    }

    /// The template as written.
    #[getter]
    fn source(&self) -> &str {
        self.response.source()
    }

    /// The file the template came from, or ``None``.
    #[getter]
    fn file(&self) -> Option<&str> {
        self.response.file()
    }

    /// Fills the fields the render needs and renders the response; returns the text.
    ///
    /// ``std`` holds the standard fields: ``{"customer": {"name": ...}, "agent": {"name":
    /// ...}, "variables": {...}, "missing_params": [...]}``, read by ``std.*`` fields.
    /// ``tools`` is the list of tool results (what each tool returned), in the order the
    /// tools ran: each result's ``canned_response_fields`` provides fields, looked up by the
    /// whole dotted name as a flat key first, then as a nested path; the latest result wins.
    /// ``generator`` is a callable ``generator(template, field, context)`` returning the value
    /// of a ``generative.*`` field (``context``: ``{"std": ..., "fields": {name: value}}``
    /// with every field filled so far); it is called last, only for the ``generative.*`` fields
    /// the render needs and no other source has (one at a time, in the order the render reads
    /// them, each at most once), and only when no other needed field is missing. Field values
    /// are data: printed, never rendered again.
    ///
    /// The render needs the fields it actually reads: a field read only in a branch not
    /// taken, or only tested with ``is defined`` / ``is undefined`` / ``default(...)``, is
    /// optional (seed 004's overdraft warning renders for an account whose tool sends no
    /// amount); a ``generative.*`` field a condition reads is needed.
    ///
    /// Raises ``ResponseError``: kind ``missing_fields`` naming every needed field no source
    /// provides (nothing is rendered), kind ``generator`` naming the field when the callable
    /// raises (its exception is the ``__cause__``) or returns something that is not plain
    /// data.
    #[pyo3(signature = (*, std=None, tools=None, generator=None))]
    fn render(
        &self,
        py: Python<'_>,
        std: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        Ok(self.reply(py, std, tools, generator)?.text)
    }

    /// As ``render``, and says where each field came from: ``{"reply": text, "fields":
    /// [{"field", "source", "from"?, "value"}]}`` in template order — ``source`` is
    /// ``"std"``, ``"tool"`` (``from``: ``"tools[i]"``) or ``"generative"`` (``from``: the
    /// callable's name).
    #[pyo3(signature = (*, std=None, tools=None, generator=None))]
    fn respond<'py>(
        &self,
        py: Python<'py>,
        std: Option<&Bound<'py, PyAny>>,
        tools: Option<&Bound<'py, PyAny>>,
        generator: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let reply = self.reply(py, std, tools, generator)?;
        to_py(py, &reply.to_json())
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = self
            .response
            .fields()
            .iter()
            .map(|f| format!("'{f}'"))
            .collect();
        format!("<strata.CannedResponse fields=[{}]>", fields.join(", "))
    }
}
