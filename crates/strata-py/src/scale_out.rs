//! `strata.ScaleOut`: the checks of a run sent to Ray workers (`Project.scale_out`), made on
//! the driver before anything is submitted, by strata's one secret rule.

use pyo3::prelude::*;
use strata_app::ScaleOut;

use crate::convert::{json_arg, names_arg, str_arg};
use crate::errors::OrRaise;
use crate::plans::PyPlan;
use crate::stack::{on_strata_stack, CAPPED_LIMITS_STACK};

/// The checks of a run sent to Ray workers (from ``Project.scale_out``): what the upload
/// must hold and what nothing sent may hold — the secret values of the run's tools (the
/// values of ``.env``, and those in this process's environment of the secrets the project
/// and the tools' executor chains declare). It never shows a value.
#[pyclass(frozen, module = "strata", name = "ScaleOut")]
pub struct PyScaleOut {
    /// The checks.
    pub checks: ScaleOut,
}

#[pymethods]
impl PyScaleOut {
    /// The names of the secrets whose values are searched for, sorted.
    #[getter]
    fn secret_names(&self) -> Vec<String> {
        self.checks
            .secret_names()
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// The tools the run needs (with the tools of their executor chains, and the tools a
    /// graph calls), sorted.
    #[getter]
    fn tools(&self) -> Vec<String> {
        self.checks.needed().into_iter().map(String::from).collect()
    }

    /// Checks the files that would be uploaded (``files``: paths relative to the project,
    /// ``/``-separated). Raises ``StrataError`` of kind ``invalid`` when a tool the run needs
    /// is not among them, of kind ``forbidden`` when one holds a secret value (read whole,
    /// whatever its size), naming the file and the variable, never the value.
    fn check_upload(&self, py: Python<'_>, files: &Bound<'_, PyAny>) -> PyResult<()> {
        let files = names_arg(Some(files), "files")?;
        on_strata_stack(py, CAPPED_LIMITS_STACK, || self.checks.check_upload(&files))?.or_raise(py)
    }

    /// Checks what the run's tasks would be given, ``value`` (``what`` says which: ``"the
    /// user values"``, ``"the plan"``…; a ``strata.Plan`` is checked as its document):
    /// raises ``StrataError`` of kind ``forbidden`` when a string, key or number in it — or
    /// in JSON text in it — holds a secret value.
    fn check_arguments(
        &self,
        py: Python<'_>,
        what: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let what = str_arg(what, "what")?;
        let value = match value.cast::<PyPlan>() {
            Ok(plan) => plan.get().value().clone(),
            Err(_) => json_arg(value, "value")?,
        };
        self.checks.check_arguments(&what, &value).or_raise(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "ScaleOut(tools={:?}, secret_names={:?})",
            self.checks.needed(),
            self.checks.secret_names()
        )
    }
}
