//! [`Runner`]: the one [`ToolRunner`] that runs a project's tools for real — through the gate,
//! the executor chain, stages 3–6 and a real subprocess.

use serde_json::{Map, Value};
use strata_core::Error;
use strata_project::{CallerParams, ExecOptions};
use strata_tools::{CallOptions, RunResult, ToolRunner};

use crate::App;

/// Runs tools of a project: the runner behind directives, graphs, plans and hooks, in every
/// front-end. Each call passes the gate first.
pub struct Runner<'a> {
    /// The application whose project's `tools/` are used.
    pub app: &'a App,
    /// Strictness and environment for every run.
    pub options: ExecOptions,
}

impl ToolRunner for Runner<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.app.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.app.unknown_tool(id, "tool")
    }

    fn callable(&self, id: &str) -> Result<(), Error> {
        self.app.callable(id)
    }

    fn parameters(&self, id: &str) -> Option<Value> {
        strata_project::tool_parameters(self.app.project(), id)
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
        self.app
            .run_tool(id, &caller, &self.options, options)
            .map(|run| run.result)
            .map_err(|f| f.into_error())
    }
}
