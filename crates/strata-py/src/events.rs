//! A plan run's progress handed to a Python callable (`Project.run_plan(on_event=...)`): each
//! event as `strata plan run --json` streams it (`step_started`, `step_finished`,
//! `step_waiting`), so that a front-end such as `python -m strata.ray` prints the same lines.

use pyo3::prelude::*;
use strata_plans::{Event, Observer};

use crate::convert::to_py;

/// Calls `callback(event)` for each event of a plan run, on the scheduler's thread; what the
/// callback raises is reported as unraisable (the run goes on).
pub struct PyEvents {
    /// The callback.
    pub callback: Py<PyAny>,
}

impl Observer for PyEvents {
    fn on(&mut self, event: Event<'_>) {
        let Some(value) = event.to_json() else {
            return;
        };
        Python::attach(|py| {
            let called = to_py(py, &value).and_then(|v| self.callback.call1(py, (v,)));
            if let Err(e) = called {
                e.write_unraisable(py, None);
            }
        });
    }
}
