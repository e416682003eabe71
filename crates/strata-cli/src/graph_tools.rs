//! The tool pipeline behind graph nodes and graph hooks.

use serde_json::{Map, Value};
use strata_core::Error;
use strata_exec::{run_tool, CallerParams, Project, RunOptions};
use strata_graph::Tools;

/// Runs tools of a project through the full chain (stages 3–6 and a real subprocess).
pub struct GraphTools<'a> {
    /// The project whose `tools/` are used.
    pub project: &'a Project,
    /// Strictness and environment for every run.
    pub options: RunOptions,
}

impl Tools for GraphTools<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.project.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.project.unknown_tool(id, "tool")
    }

    fn run(&self, id: &str, params: &Map<String, Value>) -> Result<Value, Error> {
        let caller = CallerParams {
            typed: params.clone(),
            strings: Vec::new(),
        };
        Ok(run_tool(self.project, id, &caller, &self.options)?.to_json())
    }
}
