//! `strata.Plan`: plans from Python (`strata-plans`, SPEC §5) — the plan document read and
//! checked once, its levels, dependencies and user values, and partial resolution (§5.7), the
//! call an orchestrator makes between tool calls.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyMapping, PyString, PyTuple};
use serde_json::Value;
use strata_core::{Error, FieldPath, Limits};
use strata_doc::Document;
use strata_plans::{assess, parse_document, progress, resolution, Plan};

use crate::convert::{
    json_arg, map_arg, names_arg, opt_str_arg, path_arg, str_arg, to_py, type_name,
};
use crate::errors::{to_py_err, OrRaise};
use crate::stack::{on_strata_stack, DEFAULT_LIMITS_STACK};

/// The name of a plan's text in errors when no file is given.
const TEXT_NAME: &str = "<string>";

/// The most step ids a plan's `repr` shows.
const REPR_STEPS: usize = 10;

/// A plan an LLM planner emitted, read and checked once: steps calling tools with
/// arguments that refer to earlier steps' results.
///
/// ``plan`` is the plan document: a list of steps, or a dict ``{"steps": [...]}``; a step
/// is ``{"id"?, "tool", "arguments" | "parameters", "depends_on"?, "intent"?}``
/// (``Plan.from_text`` and ``Plan.from_file`` read its JSON or YAML text). Every
/// reference (``$stepN.path``, ``{$stepN.path}``, ``{{id.result.path}}``,
/// ``{{PLACEHOLDER_name}}``) is parsed and every dependency found before anything runs.
/// Raises the first error in plan order: ``PlanError`` for a reference to an unknown step
/// (with a did-you-mean), an unknown record field, a duplicate id or a malformed step,
/// ``CycleError`` for a cycle, ``TemplateSyntaxError`` for a malformed reference; ``TypeError``
/// or ``ValueError`` for a value that is not plain JSON-like data.
#[pyclass(frozen, module = "strata", name = "Plan")]
pub struct PyPlan {
    plan: Plan,
    /// Its name in messages: the file it was read from, or `<string>`.
    name: String,
    /// The document it was read from, when it was read from text: errors found while it
    /// runs point into it.
    doc: Option<Document>,
    /// The plan document's value, as a recorded run keeps it for a resume.
    value: Value,
}

impl PyPlan {
    /// Reads the plan document of argument `arg`.
    pub fn read(obj: &Bound<'_, PyAny>, arg: &str) -> PyResult<PyPlan> {
        let shaped = obj.cast::<PyList>().is_ok()
            || obj.cast::<PyTuple>().is_ok()
            || obj.cast::<PyDict>().is_ok()
            || obj.cast::<PyMapping>().is_ok();
        if !shaped {
            let hint = if obj.cast::<PyString>().is_ok() {
                " (for a plan's JSON or YAML text, use Plan.from_text)"
            } else {
                ""
            };
            return Err(PyTypeError::new_err(format!(
                "{arg}: expected a list of steps or a dict {{'steps': [...]}}, got {}{hint}",
                type_name(obj)
            )));
        }
        let document = json_arg(obj, arg)?;
        let py = obj.py();
        let read = on_strata_stack(py, DEFAULT_LIMITS_STACK, || {
            Plan::from_value(&document, &FieldPath::root())
        })?;
        let mut plan = checked(py, TEXT_NAME, read)?;
        plan.value = document;
        Ok(plan)
    }

    /// Reads the plan document in `bytes`, the text of the file `name`.
    fn parse(py: Python<'_>, name: &str, bytes: Vec<u8>) -> PyResult<PyPlan> {
        let (doc, read) = on_strata_stack(py, DEFAULT_LIMITS_STACK, || {
            parse_document(name, bytes, &Limits::default()).map(|doc| {
                let read = Plan::load(&doc);
                (doc, read)
            })
        })?
        .or_raise(py)?;
        let mut plan = checked(py, name, read)?;
        plan.value = doc.value.clone();
        plan.doc = Some(doc);
        Ok(plan)
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Its name in messages: the file it was read from, or `<string>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The document it was read from, when it was read from text.
    pub fn doc(&self) -> Option<&Document> {
        self.doc.as_ref()
    }

    /// The plan document's value.
    pub fn value(&self) -> &Value {
        &self.value
    }
}

/// The plan, or its first error in plan order as a Python exception.
fn checked(py: Python<'_>, name: &str, read: Result<Plan, Vec<Error>>) -> PyResult<PyPlan> {
    match read {
        Ok(plan) => Ok(PyPlan {
            plan,
            name: name.to_string(),
            doc: None,
            value: Value::Null,
        }),
        Err(errors) => Err(match errors.first() {
            Some(e) => to_py_err(py, e),
            None => PyValueError::new_err("not a plan"),
        }),
    }
}

#[pymethods]
impl PyPlan {
    #[new]
    fn new(plan: &Bound<'_, PyAny>) -> PyResult<Self> {
        PyPlan::read(plan, "plan")
    }

    /// The plan in ``text``, a plan document as an LLM writes it: JSON when ``file`` ends
    /// in ``.json`` or the text starts with ``[`` or ``{``, YAML otherwise. ``file`` names
    /// the text in errors, which carry its line and column (``"<string>"`` by default).
    /// Raises ``TemplateSyntaxError`` (kind ``syntax``) for text that does not parse, and
    /// what ``Plan(...)`` raises for a plan that cannot be read.
    #[staticmethod]
    #[pyo3(signature = (text, *, file=None))]
    fn from_text(text: &Bound<'_, PyAny>, file: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let source = str_arg(text, "text")?;
        let name = opt_str_arg(file, "file")?;
        PyPlan::parse(
            text.py(),
            name.as_deref().unwrap_or(TEXT_NAME),
            source.into_bytes(),
        )
    }

    /// The plan in file ``path`` (``str`` or ``os.PathLike``), JSON or YAML as for
    /// ``from_text``; errors name the file with a line and column. Raises ``StrataError``
    /// (kind ``io``) when it cannot be read.
    #[staticmethod]
    fn from_file(path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = path.py();
        let path = path_arg(path, "path")?;
        let name = path.display().to_string();
        let bytes = std::fs::read(&path)
            .map_err(|e| Error::io("read", &path, e))
            .or_raise(py)?;
        PyPlan::parse(py, &name, bytes)
    }

    /// The steps' levels, as lists of ids: level 0 holds the steps with no dependencies,
    /// level k the steps whose dependencies are all in levels below k; within a level, plan
    /// order. For display: a run starts each step as soon as its own dependencies completed.
    #[getter]
    fn levels(&self) -> Vec<Vec<String>> {
        self.plan.level_ids()
    }

    /// Each step's id, in plan order, mapped to the ids of the steps it depends on: those
    /// its arguments refer to, in the order they first appear, then its ``depends_on``.
    #[getter]
    fn dependencies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (step, deps) in self.plan.steps.iter().zip(&self.plan.deps) {
            let ids: Vec<&str> = deps
                .iter()
                .map(|&d| self.plan.steps[d].id.as_str())
                .collect();
            out.set_item(&step.id, ids)?;
        }
        Ok(out)
    }

    /// The user values the plan needs (``{{PLACEHOLDER_name}}``), by name, in plan order,
    /// each once.
    #[getter]
    fn placeholders(&self) -> Vec<&str> {
        self.plan.value_names()
    }

    /// The steps in plan order, each ``{"id", "tool", "depends_on", "level", "intent"}``
    /// (``strata plan show --json``); a step written without an id is ``step<position>``.
    #[getter]
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &Value::Array(self.plan.step_outlines()))
    }

    /// Partial resolution, the call between tool calls (``strata plan resolve``): what each
    /// step can do now, given the ``results`` known so far (``{step id: result}`` — what
    /// ``{{id.result…}}`` and ``$stepN`` walk), the ids of the steps that ``failed`` and the
    /// user ``values`` (``{name: value}`` for ``{{PLACEHOLDER_name}}``).
    ///
    /// Returns ``{"levels", "steps", "missing_values"}``: ``steps`` in plan order, each
    /// ``{"id", "depends_on", "state"}`` — ``completed`` or ``failed`` as given; ``skipped``
    /// when a dependency failed or was skipped (``error``: kind ``run_state`` naming it);
    /// ``waiting`` when its arguments use values not given (``waiting_for``: their names);
    /// ``blocked`` when a dependency has not completed (``waiting_for``: those steps);
    /// ``ready`` with its resolved ``arguments``; or ``failed`` with ``error`` kind
    /// ``path_not_found`` when a reference walks a path a result does not have.
    /// ``missing_values`` lists every value a waiting step lacks, once, in plan order.
    ///
    /// Resolved values are data: whatever a result holds (``{{b.result.token}}``,
    /// ``$step2``, ``${HOME}``, quotes, newlines) arrives in the arguments unchanged, never
    /// serialised and parsed again. Raises ``PlanError`` (kind ``unknown_step``) for a result
    /// or failed id that is not a step of the plan, ``StrataError`` (kind ``request``) for a
    /// step both in ``results`` and in ``failed``.
    #[pyo3(
        signature = (results=None, *, failed=None, values=None),
        text_signature = "($self, results=None, *, failed=(), values=None)"
    )]
    fn resolve<'py>(
        &self,
        py: Python<'py>,
        results: Option<&Bound<'py, PyAny>>,
        failed: Option<&Bound<'py, PyAny>>,
        values: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let results = map_arg(results, "results")?;
        let failed: Vec<Value> = names_arg(failed, "failed")?
            .into_iter()
            .map(Value::String)
            .collect();
        let values = map_arg(values, "values")?;
        let plan = &self.plan;
        let resolved = on_strata_stack(py, DEFAULT_LIMITS_STACK, || {
            let (records, values) = progress(
                plan,
                Some(Value::Object(results)),
                Some(Value::Array(failed)),
                Some(Value::Object(values)),
            )?;
            let assessment = assess(plan, &records, &values);
            Ok::<_, Error>(Value::Object(resolution(plan, assessment)))
        })?
        .or_raise(py)?;
        to_py(py, &resolved)
    }

    /// The number of steps.
    fn __len__(&self) -> usize {
        self.plan.steps.len()
    }

    fn __repr__(&self) -> String {
        let mut ids: Vec<String> = self
            .plan
            .ids()
            .take(REPR_STEPS)
            .map(|id| format!("'{id}'"))
            .collect();
        if self.plan.steps.len() > REPR_STEPS {
            ids.push("...".into());
        }
        format!("<strata.Plan steps=[{}]>", ids.join(", "))
    }
}
