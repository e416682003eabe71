//! The tool pipeline behind directives, graphs and their hooks.

use std::time::Duration;

use serde_json::{Map, Value};
use strata_core::Error;
use strata_directive::ToolRunner;
use strata_exec::{spawn, CallerParams, Plan, Project, RunOptions};

/// Runs tools of a project through the full chain (stages 3–6 and a real subprocess).
pub struct ExecRunner<'a> {
    /// The project whose `tools/` are used.
    pub project: &'a Project,
    /// Strictness and environment for every run.
    pub options: RunOptions,
}

impl ExecRunner<'_> {
    /// Runs tool `id`; `timeout` shortens the tool's own timeout when it is smaller.
    fn run_tool(
        &self,
        id: &str,
        params: &Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, Error> {
        let caller = CallerParams {
            typed: params.clone(),
            strings: Vec::new(),
        };
        let plan = Plan::new(self.project, id, &caller, &self.options)?;
        let mut prepared = plan.prepare()?;
        if let Some(limit) = timeout {
            prepared.spec.timeout = prepared.spec.timeout.min(limit);
        }
        Ok(spawn(&prepared.spec)?.to_json())
    }
}

impl ToolRunner for ExecRunner<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.project.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.project.unknown_tool(id, "tool")
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, Error> {
        self.run_tool(id, params, timeout)
    }
}

impl strata_graph::Tools for ExecRunner<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.project.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.project.unknown_tool(id, "tool")
    }

    fn run(&self, id: &str, params: &Map<String, Value>) -> Result<Value, Error> {
        self.run_tool(id, params, None)
    }
}
