//! The tool pipeline behind directives, graphs, plans and their hooks.

use serde_json::{Map, Value};
use strata_core::Error;
use strata_exec::{spawn, CallerParams, ExecOptions, Invocation, Project};
use strata_tools::{CallOptions, RunResult, ToolRunner};

/// Runs tools of a project through the full chain (stages 3–6 and a real subprocess).
pub struct ExecRunner<'a> {
    /// The project whose `tools/` are used.
    pub project: &'a Project,
    /// Strictness and environment for every run.
    pub options: ExecOptions,
}

impl ToolRunner for ExecRunner<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.project.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.project.unknown_tool(id, "tool")
    }

    fn callable(&self, id: &str) -> Result<(), Error> {
        self.project.callable(id)
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error> {
        let caller = CallerParams {
            typed: params.clone(),
            strings: Vec::new(),
        };
        let call = Invocation::new(self.project, id, &caller, &self.options)?;
        let mut prepared = call.prepare()?;
        if let Some(limit) = options.timeout {
            prepared.spec.timeout = prepared.spec.timeout.min(limit);
        }
        let mut run = spawn(&prepared.spec)?;
        let vars = &call.env().vars;
        run.redact_stderr(
            vars.0
                .values()
                .filter(|v| v.secret)
                .map(|v| v.value.as_str()),
        );
        Ok(run)
    }
}
