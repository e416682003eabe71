//! strata's errors and warnings as Python objects.
//!
//! An [`Error`] becomes a `strata.StrataError` (or the subclass of its family) built from
//! [`Error::to_json`] — the one JSON form every machine interface uses — with the error as
//! people read it for its text. A [`Warning`] becomes a `strata.StrataWarning` the same way.
//! Neither form ever holds a substituted value, so secrets stay out of both. The classes are
//! written in Python (`strata/_errors.py`).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;
use strata_app::Failure;
use strata_core::{Error, Warning};

use crate::convert::to_py;

const ERRORS_MODULE: &str = "strata._errors";

static ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static WARNING: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static WARN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python exception of `err`.
pub fn to_py_err(py: Python<'_>, err: &Error) -> PyErr {
    let build = || -> PyResult<Bound<'_, PyAny>> {
        let fields = to_py(py, &err.to_json())?;
        ERROR
            .import(py, ERRORS_MODULE, "_error")?
            .call1((err.to_string(), fields))
    };
    match build() {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// The Python exception of a failed operation: the exception of its headline error's family;
/// a refusal by the check (`strata.CheckError`) also carries the check's `diagnostics`, and a
/// document with several errors every one of them (`errors`).
pub fn failure_to_py(py: Python<'_>, failure: &Failure) -> PyErr {
    let build = || -> PyResult<Bound<'_, PyAny>> {
        let err = failure.error();
        let mut fields = err.to_json();
        match failure {
            Failure::Refused(r) => {
                fields["diagnostics"] = r.diagnostics.iter().map(|d| d.to_json()).collect();
            }
            Failure::Document { errors, .. } if errors.len() > 1 => {
                fields["errors"] = errors.iter().map(Error::to_json).collect();
            }
            _ => {}
        }
        ERROR
            .import(py, ERRORS_MODULE, "_error")?
            .call1((err.to_string(), to_py(py, &fields)?))
    };
    match build() {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Turns a strata [`Error`] into the Python exception of its family.
pub trait OrRaise<T> {
    /// The value, or the error as a Python exception.
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py_err(py, &e))
    }
}

impl<T> OrRaise<T> for Result<T, Failure> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|f| failure_to_py(py, &f))
    }
}

/// Reports `warnings` as `strata.StrataWarning`s: appended to `sink` when the caller gave a
/// list, else issued through Python's `warnings` module (attributed to the caller's line).
pub fn report_warnings(
    py: Python<'_>,
    warnings: &[Warning],
    sink: Option<&Bound<'_, PyList>>,
) -> PyResult<()> {
    for w in warnings {
        let warning = WARNING
            .import(py, ERRORS_MODULE, "_warning")?
            .call1((w.to_string(), to_py(py, &w.to_json())?))?;
        match sink {
            Some(list) => list.append(warning)?,
            None => {
                WARN.import(py, "warnings", "warn")?.call1((warning,))?;
            }
        }
    }
    Ok(())
}
