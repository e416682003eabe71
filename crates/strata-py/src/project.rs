//! `strata.Project`: run a project's tools, and whole plans, from Python.

use std::path::PathBuf;

use pyo3::prelude::*;
use serde_json::json;
use strata_core::RenderOptions;
use strata_exec::{ExecOptions, ExecRunner, Project};
use strata_plans::{check_tools, Scheduler, Silent};
use strata_tools::{CallOptions, StepRecord, ToolRunner};

use crate::convert::{
    count_arg, env_arg, flag_arg, map_arg, opt_str_arg, path_arg, seconds_arg, str_arg, to_py,
};
use crate::errors::{to_py_err, OrRaise};
use crate::plans::PyPlan;

/// A strata project: the directory ``path`` holding ``tools/``.
///
/// Raises ``StrataError`` when ``path`` has no ``tools/`` directory.
#[pyclass(frozen, module = "strata", name = "Project")]
pub struct PyProject {
    project: Project,
}

impl PyProject {
    /// The runner of the project's tools, with the environment `env` (`None`: the process
    /// environment) and `strict` rendering.
    fn runner(
        &self,
        env: Option<&Bound<'_, PyAny>>,
        strict: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ExecRunner<'_>> {
        let base_env = match env.filter(|e| !e.is_none()) {
            None => None,
            Some(e) => Some(env_arg(Some(e), "env")?),
        };
        Ok(ExecRunner {
            project: &self.project,
            options: ExecOptions {
                render: RenderOptions::strict_if(flag_arg(strict, "strict")?),
                base_env,
            },
        })
    }
}

#[pymethods]
impl PyProject {
    #[new]
    fn new(path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let project = Project::at(&path_arg(path, "path")?).or_raise(path.py())?;
        Ok(PyProject { project })
    }

    /// The project's root directory (absolute).
    #[getter]
    fn root(&self) -> PathBuf {
        self.project.root.clone()
    }

    /// Every tool id under ``tools/``, sorted.
    fn tool_ids(&self) -> Vec<String> {
        self.project.tool_ids()
    }

    /// Runs tool ``tool`` (an id such as ``"examples/echo"``) with the caller's ``params``
    /// through its executor chain and a real subprocess, and returns its step record:
    /// ``{"id", "status", "result", "error", "run"}`` — ``result`` is the tool's standard
    /// output parsed as JSON (else the text), ``run`` the process outcome. The record's id is
    /// ``step_id``, by default the tool id.
    ///
    /// The parameters are data: whatever they hold reaches the tool byte for byte. ``env``
    /// replaces the process environment the tool's environment is built from; ``strict``
    /// makes a missing environment variable an error; ``timeout`` (seconds) caps the tool's
    /// own timeout. Other Python threads run while the tool does.
    ///
    /// A tool that ran and failed (or timed out) gives a record with status ``"failed"``. A
    /// tool that could not run at all raises ``StrataError``: ``ToolError`` for an unknown
    /// tool or a program that cannot start, ``TemplateSyntaxError`` for a malformed tool file
    /// (with its file, line and column), kind ``"invalid"`` for parameters that fail the
    /// tool's schema or a command that is not on ``PATH``.
    #[pyo3(
        signature = (tool, params=None, *, step_id=None, env=None, strict=None, timeout=None),
        text_signature = "($self, tool, params=None, *, step_id=None, env=None, strict=False, timeout=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn run_tool<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyAny>,
        params: Option<&Bound<'py, PyAny>>,
        step_id: Option<&Bound<'py, PyAny>>,
        env: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tool = str_arg(tool, "tool")?;
        let params = map_arg(params, "params")?;
        let step_id = opt_str_arg(step_id, "step_id")?;
        let runner = self.runner(env, strict)?;
        let call = CallOptions {
            timeout: seconds_arg(timeout, "timeout")?,
        };
        let run = py
            .detach(|| runner.run(&tool, &params, &call))
            .or_raise(py)?;
        let id = step_id.unwrap_or_else(|| tool.clone());
        to_py(py, &StepRecord::from_run(id, &tool, &run).to_json())
    }

    /// Runs a whole plan with the project's tools — as ``strata plan run`` does, without
    /// recording the run — and returns ``{"status", "levels", "steps", "missing_values"}``.
    ///
    /// ``plan`` is a ``strata.Plan`` or a plan document (a list of steps, or ``{"steps":
    /// [...]}``). Each step starts as soon as every step it depends on has completed, at most
    /// ``jobs`` at once (default 4); independent steps keep running after a failure.
    /// ``values`` are the user values for ``{{PLACEHOLDER_name}}``; ``env``, ``strict`` and
    /// ``timeout`` are those of ``run_tool``, for every step. Other Python threads run while
    /// the plan does.
    ///
    /// ``status`` is ``"completed"`` (every step completed), ``"failed"`` (a step failed or
    /// was skipped) or ``"waiting"`` (steps wait for values); ``steps`` holds every step's
    /// record in plan order (``run_tool``'s record; a skipped step's ``error`` names the
    /// dependency; a step waiting for values is ``{"id", "status": "waiting", "result": None,
    /// "error": None, "run": None, "waiting_for": [names]}``); ``missing_values`` lists the
    /// values not given, once, in plan order.
    ///
    /// Raises before anything runs: the errors of ``strata.Plan`` for a plan document,
    /// ``ToolError`` for a step calling an unknown tool (with a did-you-mean), kind
    /// ``invalid`` for constant arguments that cannot match the tool's parameter schema.
    #[pyo3(
        signature = (plan, *, values=None, jobs=None, env=None, strict=None, timeout=None),
        text_signature = "($self, plan, *, values=None, jobs=None, env=None, strict=False, timeout=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn run_plan<'py>(
        &self,
        py: Python<'py>,
        plan: &Bound<'py, PyAny>,
        values: Option<&Bound<'py, PyAny>>,
        jobs: Option<&Bound<'py, PyAny>>,
        env: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let read;
        let plan = match plan.cast::<PyPlan>() {
            Ok(given) => given.get().plan(),
            Err(_) => {
                read = PyPlan::read(plan, "plan")?;
                read.plan()
            }
        };
        let values = map_arg(values, "values")?;
        let jobs = count_arg(jobs, "jobs")?.unwrap_or(self.project.settings.jobs.value);
        let runner = self.runner(env, strict)?;
        let call = CallOptions {
            timeout: seconds_arg(timeout, "timeout")?,
        };
        if let Some(e) = check_tools(plan, &runner).first() {
            return Err(to_py_err(py, e));
        }
        let scheduler = Scheduler {
            runner: &runner,
            // No more workers than steps.
            jobs: jobs.min(plan.steps.len().max(1)),
            values: &values,
            call,
            doc: None,
        };
        let outcome = py.detach(|| scheduler.run(plan, Vec::new(), &mut Silent));
        let report = json!({
            "status": outcome.status().name(),
            "levels": outcome.plan.level_ids(),
            "steps": outcome.step_records(),
            "missing_values": outcome.missing_values,
        });
        to_py(py, &report)
    }

    fn __repr__(&self) -> String {
        format!("<strata.Project {}>", self.project.root.display())
    }
}
