//! `strata.Project`: run a project's tools from Python.

use std::path::PathBuf;

use pyo3::prelude::*;
use strata_core::RenderOptions;
use strata_exec::{ExecOptions, ExecRunner, Project};
use strata_tools::{CallOptions, StepRecord, ToolRunner};

use crate::convert::{
    env_arg, flag_arg, map_arg, opt_str_arg, path_arg, seconds_arg, str_arg, to_py,
};
use crate::errors::OrRaise;

/// A strata project: the directory ``path`` holding ``tools/``.
///
/// Raises ``StrataError`` when ``path`` has no ``tools/`` directory.
#[pyclass(frozen, module = "strata", name = "Project")]
pub struct PyProject {
    project: Project,
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
        let base_env = match env.filter(|e| !e.is_none()) {
            None => None,
            Some(e) => Some(env_arg(Some(e), "env")?),
        };
        let strict = flag_arg(strict, "strict")?;
        let timeout = seconds_arg(timeout, "timeout")?;
        let runner = ExecRunner {
            project: &self.project,
            options: ExecOptions {
                render: RenderOptions::strict_if(strict),
                base_env,
            },
        };
        let call = CallOptions { timeout };
        let run = py
            .detach(|| runner.run(&tool, &params, &call))
            .or_raise(py)?;
        let id = step_id.unwrap_or_else(|| tool.clone());
        to_py(py, &StepRecord::from_run(id, &tool, &run).to_json())
    }

    fn __repr__(&self) -> String {
        format!("<strata.Project {}>", self.project.root.display())
    }
}
