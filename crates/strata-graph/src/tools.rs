//! The tools a graph calls, behind a trait so that the walker can be tested with fakes and the
//! CLI can back it with the tool pipeline.

use serde_json::{Map, Value};
use strata_core::Error;

/// Runs tools for graph nodes and hooks.
pub trait Tools: Sync {
    /// Whether the tool exists.
    fn has_tool(&self, id: &str) -> bool;

    /// The error for an unknown tool (with a did-you-mean).
    fn unknown_tool(&self, id: &str) -> Error;

    /// Runs the tool with caller parameters. The result object has at least `success`
    /// (`exit_code`, `stdout`, `stderr`, `data`, … for real tools). `Err` means the tool
    /// could not run at all.
    fn run(&self, id: &str, params: &Map<String, Value>) -> Result<Value, Error>;
}
