//! `strata.Cancel`: a flag that stops a plan run from another thread
//! (`Project.run_plan(cancel=...)`), as Ctrl-C stops `strata plan run`.

use pyo3::prelude::*;
use strata_app::Cancel;

/// A flag that stops the plan runs given it: once set, tools running here are killed and
/// no step starts; the run is recorded as ``cancelled`` and, resumed, runs the steps it
/// stopped again. A step executor reads it to stop the steps it runs elsewhere.
#[pyclass(frozen, module = "strata", name = "Cancel")]
pub struct PyCancel {
    /// The flag.
    pub cancel: Cancel,
}

#[pymethods]
impl PyCancel {
    #[new]
    fn new() -> PyResult<Self> {
        Cancel::new()
            .map(|cancel| PyCancel { cancel })
            .map_err(|e| {
                pyo3::exceptions::PyOSError::new_err(format!("cannot make a cancel flag: {e}"))
            })
    }

    /// Sets the flag (from any thread; setting it again changes nothing).
    fn cancel(&self) {
        self.cancel.cancel();
    }

    /// True once the flag is set.
    #[getter]
    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn __repr__(&self) -> String {
        format!("Cancel(cancelled={})", self.cancel.is_cancelled())
    }
}
