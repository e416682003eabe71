//! The project's tools as the loaders see them during a check: known, never run.

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer};
use strata_project::Project;
use strata_tools::{CallOptions, RunResult, ToolRunner};

/// Knows the project's tools; running one is refused.
pub struct Catalog<'a>(pub &'a Project);

impl ToolRunner for Catalog<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.0.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.0.unknown_tool(id, "tool")
    }

    fn callable(&self, id: &str) -> Result<(), Error> {
        self.0.callable(id)
    }

    fn parameters(&self, id: &str) -> Option<Value> {
        strata_project::tool_parameters(self.0, id)
    }

    fn run(&self, id: &str, _: &Map<String, Value>, _: &CallOptions) -> Result<RunResult, Error> {
        Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            format!("`{id}` is not run by checks"),
        ))
    }
}
