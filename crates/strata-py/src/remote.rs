//! Tool calls that run elsewhere: a plan's or graph's scheduling stays in this process (the
//! run's records and checkpoints with it) while each tool call goes to a Python callable, the
//! *executor*, which runs it on another machine — `strata.ray` sends it to a Ray task — and
//! hands back the process outcome. There, `Project.call_tool` runs the call through the
//! project's runner (the gate, the executor chain, the limits, secret markers restored from
//! that machine's environment and put back on its stdout), so a step's record is made from
//! the same outcome as in a local run.
//!
//! The executor is called as `executor(tool, params, timeout)` — the tool id, the resolved
//! caller parameters (secret markers, never values) and the timeout cap in seconds or `None` —
//! and returns the *envelope* `call_tool` returns: `{"run": {...}}` when the tool ran (see
//! [`run_to_py`]), or `{"error": {...}}` (an error in strata's JSON form) when it could not.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::{Map, Value};
use strata_app::Runner;
use strata_core::{Error, ErrorKind, Layer};
use strata_tools::{CallOptions, RunResult, ToolRunner};

use crate::convert::{json_arg, to_py};

/// A runner whose checks (which tools exist, their schemas) are the project's and whose
/// calls go to the executor.
pub struct RemoteRunner<'a> {
    /// The project's runner, for everything but running.
    pub local: Runner<'a>,
    /// The executor.
    pub executor: Py<PyAny>,
}

impl ToolRunner for RemoteRunner<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.local.has_tool(id)
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.local.unknown_tool(id)
    }

    fn callable(&self, id: &str) -> Result<(), Error> {
        self.local.callable(id)
    }

    fn parameters(&self, id: &str) -> Option<Value> {
        self.local.parameters(id)
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error> {
        Python::attach(|py| {
            let answer = (|| -> PyResult<Result<RunResult, Error>> {
                let params = to_py(py, &Value::Object(params.clone()))?;
                let timeout = options.timeout.map(|t| t.as_secs_f64());
                let envelope = self.executor.call1(py, (id, params, timeout))?;
                from_envelope(envelope.bind(py))
            })();
            answer.unwrap_or_else(|e| {
                Err(Error::new(
                    Layer::REQUEST,
                    ErrorKind::Spawn,
                    format!("the executor could not run tool `{id}`: {e}"),
                ))
            })
        })
    }
}

/// The envelope of a call that ran (`{"run": ...}`) or could not (`{"error": ...}`).
pub fn envelope<'py>(
    py: Python<'py>,
    outcome: &Result<RunResult, Error>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    match outcome {
        Ok(run) => out.set_item("run", run_to_py(py, run)?)?,
        Err(e) => out.set_item("error", to_py(py, &e.to_json())?)?,
    }
    Ok(out)
}

/// A process outcome as a dict: `success`, `exit_code`, `signal`, `stdout` and `stderr`
/// (bytes), `stdout_truncated`, `stderr_truncated`, `timed_out`, `duration` (seconds).
pub fn run_to_py<'py>(py: Python<'py>, run: &RunResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("success", run.success)?;
    d.set_item("exit_code", run.exit_code)?;
    d.set_item("signal", run.signal)?;
    d.set_item("stdout", PyBytes::new(py, &run.stdout))?;
    d.set_item("stderr", PyBytes::new(py, &run.stderr))?;
    d.set_item("stdout_truncated", run.stdout_truncated)?;
    d.set_item("stderr_truncated", run.stderr_truncated)?;
    d.set_item("timed_out", run.timed_out)?;
    d.set_item("duration", run.duration.as_secs_f64())?;
    Ok(d)
}

/// Reads an envelope back; a malformed one is an error of kind `spawn`.
fn from_envelope(envelope: &Bound<'_, PyAny>) -> PyResult<Result<RunResult, Error>> {
    let malformed = |why: &str| {
        pyo3::exceptions::PyValueError::new_err(format!("malformed executor answer: {why}"))
    };
    if let Some(error) = envelope.get_item("error").ok().filter(|e| !e.is_none()) {
        let value = json_arg(&error, "error")?;
        let error = strata_graph::Failure::from_json(&value)
            .map(|f| f.error)
            .ok_or_else(|| malformed("`error` is not a strata error"))?;
        return Ok(Err(error));
    }
    let run = envelope
        .get_item("run")
        .map_err(|_| malformed("neither `run` nor `error`"))?;
    let field = |name: &str| run.get_item(name);
    let bytes = |name: &str| -> PyResult<Vec<u8>> { field(name)?.extract::<Vec<u8>>() };
    Ok(Ok(RunResult {
        success: field("success")?.extract()?,
        exit_code: field("exit_code")?.extract()?,
        signal: field("signal")?.extract()?,
        stdout: bytes("stdout")?,
        stderr: bytes("stderr")?,
        stdout_truncated: field("stdout_truncated")?.extract()?,
        stderr_truncated: field("stderr_truncated")?.extract()?,
        timed_out: field("timed_out")?.extract()?,
        duration: Duration::from_secs_f64(field("duration")?.extract::<f64>()?.max(0.0)),
    }))
}
