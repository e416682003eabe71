//! Tool calls that run elsewhere: a plan's or graph's scheduling stays in this process (the
//! run's records and checkpoints with it) while each tool call goes to a Python callable, the
//! *executor*, which runs it on another machine — `strata.ray` sends it to a Ray task — and
//! hands back the process outcome. There, `Project.call_tool` runs the call through the
//! project's runner (the gate, the executor chain, the limits, secret markers restored from
//! that machine's environment and put back on its stdout), so a step's record is made from
//! the same outcome as in a local run.
//!
//! The executor is called as `executor(tool, params, timeout, marks)` — the tool id, the
//! resolved caller parameters (secret markers, never values), the timeout cap in seconds or
//! `None`, and the run's marker key, which `call_tool(..., marks=marks)` there needs to restore
//! the run's markers and mark what the tool prints — and returns the *envelope* `call_tool`
//! returns: `{"run": {...}}` when the tool ran (see [`run_to_py`]), or `{"error": {...}}` (an
//! error in strata's JSON form) when it could not.
//!
//! Coarser units can run elsewhere too. A *step executor* ([`RemoteSteps`]) runs a plan's
//! whole step — `Project.plan_step` there: the gate, the arguments resolved from the records
//! of the steps it depends on, the tool — and a *part executor* ([`remote_parts`]) one part
//! of a graph's walk (`Project.walk_part` there); the scheduling or the walk, and the run's
//! records and checkpoints, stay here. Both answer `{"error": {...}}` when the unit could
//! not run at all.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::{Map, Value};
use strata_app::{RemoteTools, StepPlan};
use strata_core::secret_marks::MarkKey;
use strata_core::{Error, ErrorKind, Layer};
use strata_plans::{Step, StepPool};
use strata_tools::{CallOptions, RunResult, Scale, StepRecord};

use crate::convert::{json_arg, to_py};

/// Tool calls sent to the executor (the project's runner keeps the checks).
pub struct RemoteCalls {
    /// The executor.
    pub executor: Py<PyAny>,
}

impl RemoteTools for RemoteCalls {
    fn call(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
        marks: &MarkKey,
    ) -> Result<RunResult, Error> {
        Python::attach(|py| {
            let answer = (|| -> PyResult<Result<RunResult, Error>> {
                let params = to_py(py, &Value::Object(params.clone()))?;
                let timeout = options.timeout.map(|t| t.as_secs_f64());
                let envelope = self
                    .executor
                    .call1(py, (id, params, timeout, marks.to_hex()))?;
                from_envelope(envelope.bind(py))
            })();
            answer.unwrap_or_else(|e| {
                Err(Error::new(
                    Layer::REQUEST,
                    ErrorKind::Spawn,
                    format!("the executor could not run tool `{id}`: {e}"),
                )
                .with_source(e))
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
    if let Some(error) = envelope.get_item("error").ok().filter(|e| !e.is_none()) {
        return Ok(Err(strata_error(&error)?));
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

/// A pool whose steps go whole to the step executor, called as `executor(request, done)`
/// with `request` the arguments of `Project.plan_step` — `{"plan", "name", "step",
/// "records", "values", "timeout", "marks"}` — its `"attempt"` (1 for the step's first run;
/// the scheduler starts a step whose tool failed again as its `retries` allow) and, each only
/// when declared (the step's over its tool's), `"resources": {"num_cpus"?, "num_gpus"?,
/// "memory"? (bytes), "custom"?}` and `"retries": {"limit", "delay_ms"?}`. The executor
/// returns at once and calls `done(answer)` — from any thread, now or when the step ended —
/// with `{"record": {...}}`, or `{"error": {...}}` when the step could not run there. The
/// scheduler's thread waits for those answers, not a thread per step.
///
/// An executor whose `ahead` attribute is true is also given steps whose dependencies are
/// still running elsewhere, so that a chain of steps does not wait for this process between
/// its steps: each request then holds its own `"ticket"` and, in `"after"`, the tickets of
/// the requests whose records it waits for (their records are not in `"records"`); it runs
/// the step when they came, or answers `{"unrun": true}` when one did not complete.
///
/// An executor with an `answers_awaited` method is told, when it changes, whether the
/// scheduler waits on its answers to go on (`answers_awaited(True)`: a step is still to
/// start, or may run again) or only for the run to end (`False`): it may then gather answers
/// rather than hand each over as it comes.
pub struct RemoteSteps {
    /// The step executor.
    executor: Py<PyAny>,
    /// The `resources` and `retries` of the tools the plan's steps call, by tool id.
    tools: HashMap<String, Scale>,
    /// What every request holds: the plan (its text, or its data), its name, the user
    /// values, the timeout cap and the run's marker key.
    common: Py<PyDict>,
    /// Where `done` sends each step's ticket and record.
    ended: Answers,
    /// Where the scheduler reads them.
    answers: Mutex<mpsc::Receiver<(usize, Option<StepRecord>)>>,
    /// The executor runs steps ahead of those they depend on (its `ahead` attribute).
    ahead: bool,
    /// The executor's `answers_awaited` method, when it has one.
    awaited: Option<Py<PyAny>>,
    /// What it was last told: 0 nothing yet, 1 not awaited, 2 awaited.
    told: AtomicU8,
}

impl RemoteSteps {
    /// Steps of `plan` with the user `values`, the call options `call` and the run's marker
    /// key `marks`, run by `executor`; `tools` holds the declarations of the tools its steps
    /// call.
    pub fn new(
        py: Python<'_>,
        executor: Py<PyAny>,
        tools: HashMap<String, Scale>,
        plan: StepPlan<'_>,
        values: &Map<String, Value>,
        call: &CallOptions,
        marks: &MarkKey,
    ) -> PyResult<RemoteSteps> {
        let common = PyDict::new(py);
        let name = match plan {
            StepPlan::Document(doc) => {
                common.set_item("plan", doc.text.as_str())?;
                doc.name.as_str()
            }
            StepPlan::Data { name, value } => {
                common.set_item("plan", to_py(py, value)?)?;
                name
            }
            StepPlan::Admitted(_) => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "an admitted plan is a worker's: it is not sent to one",
                ))
            }
        };
        common.set_item("name", name)?;
        common.set_item("values", to_py(py, &Value::Object(values.clone()))?)?;
        common.set_item("timeout", call.timeout.map(|t| t.as_secs_f64()))?;
        common.set_item("marks", marks.to_hex())?;
        let (ended, answers) = mpsc::channel();
        let ahead = executor
            .bind(py)
            .getattr("ahead")
            .and_then(|a| a.is_truthy())
            .unwrap_or(false);
        let awaited = executor
            .bind(py)
            .getattr("answers_awaited")
            .ok()
            .filter(|method| method.is_callable())
            .map(Bound::unbind);
        Ok(RemoteSteps {
            executor,
            tools,
            common: common.unbind(),
            ended,
            answers: Mutex::new(answers),
            ahead,
            awaited,
            told: AtomicU8::new(0),
        })
    }

    /// The request of `step`'s attempt `attempt` (ticket `ticket`), given the records it
    /// depends on and the tickets of those it waits for (`after`).
    fn request<'py>(
        &self,
        py: Python<'py>,
        (ticket, step): (usize, &Step),
        records: &[StepRecord],
        after: &[usize],
        attempt: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let request = self.common.bind(py).copy()?;
        request.set_item("step", step.id.as_str())?;
        let records: Vec<Value> = records.iter().map(StepRecord::to_json).collect();
        request.set_item("records", to_py(py, &Value::Array(records))?)?;
        request.set_item("attempt", attempt)?;
        if self.ahead {
            request.set_item("ticket", ticket)?;
            request.set_item("after", after.to_vec())?;
        }
        for (key, value) in &declared(step, &self.tools) {
            request.set_item(key, to_py(py, value)?)?;
        }
        Ok(request)
    }
}

impl StepPool for RemoteSteps {
    fn start(
        &self,
        ticket: usize,
        step: &Step,
        records: &[StepRecord],
        after: &[usize],
        attempt: u32,
    ) {
        let done = StepDone {
            ticket,
            step: step.id.clone(),
            to: Mutex::new(Some(self.ended.clone())),
        };
        Python::attach(|py| {
            let done = match Py::new(py, done) {
                Ok(done) => done,
                Err(e) => {
                    let _ = self.ended.send((ticket, Some(could_not_run(&step.id, e))));
                    return;
                }
            };
            let called = self
                .request(py, (ticket, step), records, after, attempt)
                .and_then(|request| {
                    self.executor
                        .call1(py, (request, done.clone_ref(py)))
                        .map(drop)
                });
            if let Err(e) = called {
                // The executor raised: the step failed, unless it answered first.
                done.get().send(Some(could_not_run(&step.id, e)));
            }
        });
    }

    fn finished(&self, timeout: Option<Duration>) -> Vec<(usize, Option<StepRecord>)> {
        let Ok(answers) = self.answers.lock() else {
            return Vec::new();
        };
        let first = match timeout {
            Some(t) => answers.recv_timeout(t).ok(),
            None => answers.recv().ok(),
        };
        first.into_iter().chain(answers.try_iter()).collect()
    }

    fn ahead(&self) -> bool {
        self.ahead
    }

    fn awaited(&self, awaited: bool) {
        let Some(method) = &self.awaited else {
            return;
        };
        let now = if awaited { 2 } else { 1 };
        if self.told.swap(now, Ordering::Relaxed) == now {
            return;
        }
        Python::attach(|py| {
            // A method that raises only keeps answers coming as they do.
            if let Err(e) = method.call1(py, (awaited,)) {
                e.write_unraisable(py, Some(method.bind(py)));
            }
        });
    }
}

/// What a step executor calls with a step's answer (`done(answer)`): `{"record": {...}}`,
/// `{"error": {...}}` when the step could not run, or `{"unrun": true}` for a step started
/// ahead whose dependency did not complete. Only the first call counts; it returns whether
/// it did.
#[pyclass(frozen, module = "strata", name = "StepDone")]
pub struct StepDone {
    ticket: usize,
    step: String,
    to: Mutex<Option<Answers>>,
}

/// Where a step's answer goes: its ticket and record (`None`: started ahead, not run).
type Answers = mpsc::Sender<(usize, Option<StepRecord>)>;

impl StepDone {
    /// Hands `record` to the scheduler, unless an answer was handed already.
    fn send(&self, record: Option<StepRecord>) -> bool {
        let to = self.to.lock().ok().and_then(|mut to| to.take());
        to.is_some_and(|to| to.send((self.ticket, record)).is_ok())
    }
}

#[pymethods]
impl StepDone {
    fn __call__(&self, answer: &Bound<'_, PyAny>) -> bool {
        let unrun = answer
            .get_item("unrun")
            .and_then(|u| u.is_truthy())
            .unwrap_or(false);
        let record = match step_answer(answer, &self.step) {
            _ if unrun => None,
            Ok(Ok(record)) => Some(record),
            Ok(Err(e)) => Some(StepRecord::failed(&self.step, &e)),
            Err(e) => Some(could_not_run(&self.step, e)),
        };
        self.send(record)
    }

    fn __repr__(&self) -> String {
        format!("StepDone(step={:?})", self.step)
    }
}

/// The record in a step executor's answer, or the error it carries.
fn step_answer(answer: &Bound<'_, PyAny>, step: &str) -> PyResult<Result<StepRecord, Error>> {
    if let Some(error) = answer.get_item("error").ok().filter(|e| !e.is_none()) {
        return Ok(Err(strata_error(&error)?));
    }
    let record = json_arg(&answer.get_item("record")?, "record")?;
    StepRecord::from_json(&record)
        .filter(|r| r.id == step)
        .map(Ok)
        .ok_or_else(|| malformed(&format!("`record` is not the record of step `{step}`")))
}

/// The record of a step the executor could not run (it raised, or answered malformed).
fn could_not_run(step: &str, e: PyErr) -> StepRecord {
    StepRecord::failed(
        step,
        &Error::new(
            Layer::REQUEST,
            ErrorKind::Spawn,
            format!("the executor could not run step `{step}`: {e}"),
        )
        .with_source(e),
    )
}

/// The `resources` and `retries` keys of `step`'s request, each only when declared: the
/// step's declarations over those of its tool (in `tools`, by id), key by key.
fn declared(step: &Step, tools: &HashMap<String, Scale>) -> Map<String, Value> {
    let scale = match tools.get(&step.tool) {
        Some(tool) => step.scale.over(tool),
        None => step.scale.clone(),
    };
    let mut out = Map::new();
    scale.add_to_request(&mut out);
    out
}

/// The transport of a walk's parts to the part executor, called as `executor(request)` with a
/// part request (what `Project.walk_part` takes) and answering `{"answer": {...}}` (what
/// `Project.walk_part` returned there), or `{"error": {...}}` when the part could not run.
pub fn remote_parts(executor: Py<PyAny>) -> impl Fn(&Value) -> Result<Value, Error> + Sync {
    move |request: &Value| {
        Python::attach(|py| {
            let answer = (|| -> PyResult<Result<Value, Error>> {
                let answer = executor.call1(py, (to_py(py, request)?,))?;
                let answer = answer.bind(py);
                if let Some(error) = answer.get_item("error").ok().filter(|e| !e.is_none()) {
                    return Ok(Err(strata_error(&error)?));
                }
                Ok(Ok(json_arg(&answer.get_item("answer")?, "answer")?))
            })();
            answer.unwrap_or_else(|e| {
                Err(Error::new(
                    Layer::REQUEST,
                    ErrorKind::Spawn,
                    format!("the executor could not run a part of the walk: {e}"),
                )
                .with_source(e))
            })
        })
    }
}

/// An error in strata's JSON form, from an executor's answer.
fn strata_error(error: &Bound<'_, PyAny>) -> PyResult<Error> {
    let value = json_arg(error, "error")?;
    strata_graph::Failure::from_json(&value)
        .map(|f| f.error)
        .ok_or_else(|| malformed("`error` is not a strata error"))
}

/// The error for an executor's answer that is not one.
fn malformed(why: &str) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("malformed executor answer: {why}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use strata_core::FieldPath;
    use strata_plans::Plan;

    use super::*;

    #[test]
    fn a_step_request_holds_resources_and_retries_only_when_declared() {
        let plan = Plan::from_value(
            &json!([
                {"id": "a", "tool": "gpu", "arguments": {}, "resources": {"gpus": 2}, "retries": {"limit": 4}},
                {"id": "b", "tool": "gpu", "arguments": {}},
                {"id": "c", "tool": "plain", "arguments": {}},
            ]),
            &FieldPath::root(),
        )
        .unwrap();
        let tool = Scale::read(
            Some(&json!({"cpus": 1, "gpus": 1, "memory": "2Gi", "custom": {"accel": 0.5}})),
            Some(&json!({"limit": 1, "delay": "250ms"})),
            Layer::REQUEST,
        )
        .unwrap();
        let tools = HashMap::from([
            ("gpu".to_string(), tool),
            ("plain".into(), Scale::default()),
        ]);
        let keys = |i: usize| Value::Object(declared(&plan.steps[i], &tools));
        assert_eq!(
            keys(0),
            json!({
                "resources": {"num_cpus": 1.0, "num_gpus": 2.0, "memory": 2147483648u64, "custom": {"accel": 0.5}},
                "retries": {"limit": 4, "delay_ms": 250}
            })
        );
        assert_eq!(
            keys(1),
            json!({
                "resources": {"num_cpus": 1.0, "num_gpus": 1.0, "memory": 2147483648u64, "custom": {"accel": 0.5}},
                "retries": {"limit": 1, "delay_ms": 250}
            })
        );
        assert_eq!(keys(2), json!({}));
    }
}
