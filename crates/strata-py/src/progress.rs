//! `strata.progress_line`: the progress lines of a plan run (`strata_app::progress`), for the
//! front-ends written in Python (`python -m strata.ray plan run`) to print what `strata plan
//! run` prints.

use pyo3::prelude::*;

use crate::convert::json_arg;

/// What ``strata plan run`` prints on standard error for ``event``, an event of a plan run as
/// ``on_event`` is given it (``step_started``, ``step_finished``, ``step_retrying``,
/// ``step_waiting``): its progress line, and under a failed attempt the last lines its tool
/// printed on standard error; None for any other event.
#[pyfunction]
#[pyo3(text_signature = "(event)")]
pub fn progress_line(event: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    Ok(strata_app::progress::event_text(&json_arg(event, "event")?))
}
