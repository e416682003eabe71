//! The project's tools as the loaders see them during a check: known, never run.

use std::time::Duration;

use serde_json::{Map, Value};
use strata_core::{Error, Layer};
use strata_exec::Project;

/// Knows the project's tools; running one is refused.
pub struct Catalog<'a>(pub &'a Project);

impl Catalog<'_> {
    fn refuse(id: &str) -> Result<Value, Error> {
        Err(Error::new(
            Layer::Request,
            format!("`{id}` is not run by checks"),
        ))
    }
}

impl strata_directive::ToolRunner for Catalog<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.0.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.0.unknown_tool(id, "tool")
    }

    fn run(&self, id: &str, _: &Map<String, Value>, _: Option<Duration>) -> Result<Value, Error> {
        Catalog::refuse(id)
    }
}

impl strata_graph::Tools for Catalog<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.0.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.0.unknown_tool(id, "tool")
    }

    fn run(&self, id: &str, _: &Map<String, Value>) -> Result<Value, Error> {
        Catalog::refuse(id)
    }
}
