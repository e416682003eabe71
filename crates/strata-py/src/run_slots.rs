//! `strata.RunSlots`: the working directory each run has to itself on a node that runs a
//! project's tasks from Ray's unpacked copy of it (`strata_app::RunSlots`).

use std::path::Path;

use pyo3::prelude::*;
use strata_app::RunSlots;

use crate::convert::str_arg;
use crate::errors::OrRaise;

/// The run slots of the package (Ray's unpacked copy of a project) at ``package``: each run
/// a copy of its own beside it, kept as a spare for the package's next run only while it
/// holds exactly what the package holds.
#[pyclass(frozen, module = "strata", name = "RunSlots")]
pub struct PyRunSlots {
    slots: RunSlots,
}

#[pymethods]
impl PyRunSlots {
    #[new]
    fn new(py: Python<'_>, package: &Bound<'_, PyAny>) -> PyResult<Self> {
        let package = str_arg(package, "package")?;
        let slots = RunSlots::of(Path::new(&package)).or_raise(py)?;
        Ok(PyRunSlots { slots })
    }

    /// The slot of run ``run`` (its path): the one its first task here made or claimed.
    /// Raises ``StrataError`` of kind ``invalid`` for a run id that is not one, ``io`` when
    /// the slot cannot be made.
    fn enter(&self, py: Python<'_>, run: &Bound<'_, PyAny>) -> PyResult<String> {
        let run = str_arg(run, "run")?;
        let slot = py.detach(|| self.slots.enter(&run)).or_raise(py)?;
        Ok(slot.to_string_lossy().into_owned())
    }

    /// Ends run ``run``'s slot: ``(slot, kept)`` — kept as a spare (what was opened there
    /// stays valid) or removed — or None when the run has no slot here.
    fn leave(&self, py: Python<'_>, run: &Bound<'_, PyAny>) -> PyResult<Option<(String, bool)>> {
        let run = str_arg(run, "run")?;
        let left = py.detach(|| self.slots.leave(&run));
        Ok(left.map(|l| (l.slot.to_string_lossy().into_owned(), l.kept)))
    }
}
