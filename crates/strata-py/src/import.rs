//! `strata.import_ryeos`: a RyeOS project's `.ai/` tree brought over into a new strata project
//! (`strata-import`, docs/import.md), the report returned as a dict.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use strata_import::{import_ryeos as run_import, ImportOptions};

use crate::convert::{path_arg, to_py, type_name};
use crate::errors::OrRaise;
use crate::stack::{on_strata_stack, CAPPED_LIMITS_STACK};

/// Imports the RyeOS project ``src`` (the directory holding ``.ai/``) into the new strata
/// project ``dst`` (absent or empty), resolving items in the project first, then in each of
/// ``spaces`` (directories holding ``.ai/``) in order. Nothing of RyeOS is run.
///
/// Returns the report that ``IMPORT-REPORT.json`` holds: ``summary``, ``files`` (per RyeOS
/// file: ``source``, ``outcome``, ``written``, ``warnings``, ``rewrites``, ``reason``),
/// ``kept``, ``notices``, ``check`` (the new project's ``strata check``) and ``exit_code``
/// (0, or 3 when a file was refused or the check found errors). Raises ``StrataError`` when
/// the import cannot run (a non-empty ``dst``, no ``.ai/`` in ``src``).
#[pyfunction]
#[pyo3(signature = (src, dst, spaces=None), text_signature = "(src, dst, spaces=None)")]
pub fn import_ryeos<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    dst: &Bound<'py, PyAny>,
    spaces: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut opts = ImportOptions {
        source: path_arg(src, "src")?,
        target: path_arg(dst, "dst")?,
        spaces: Vec::new(),
    };
    if let Some(spaces) = spaces.filter(|s| !s.is_none()) {
        if spaces.is_instance_of::<pyo3::types::PyString>() {
            return Err(PyTypeError::new_err(
                "spaces: expected a list of paths, got a str (wrap it in a list)",
            ));
        }
        let iter = spaces.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "spaces: expected a list of paths, got {}",
                type_name(spaces)
            ))
        })?;
        for item in iter {
            opts.spaces.push(path_arg(&item?, "spaces")?);
        }
    }
    let report = on_strata_stack(py, CAPPED_LIMITS_STACK, || run_import(&opts))?.or_raise(py)?;
    to_py(py, &report.to_json())
}
