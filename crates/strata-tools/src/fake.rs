//! A scripted [`ToolRunner`] for tests, benchmarks and examples: each tool is a closure from
//! parameters to a [`RunResult`], and every call is recorded.

use std::sync::Mutex;

use serde_json::{Map, Value};
use strata_core::{did_you_mean, Error, ErrorKind, Layer};

use crate::{CallOptions, RunResult, ToolRunner};

type Behaviour = Box<dyn Fn(&Map<String, Value>) -> Result<RunResult, Error> + Send + Sync>;

/// Tools that are closures; unknown tools are errors with a did-you-mean.
///
/// ```
/// use serde_json::{json, Map};
/// use strata_tools::{CallOptions, FakeTools, RunResult, ToolRunner};
///
/// let tools = FakeTools::new().tool("echo", |p| Ok(RunResult::ok(json!(p).to_string())));
/// let run = tools.run("echo", &Map::new(), &CallOptions::default()).unwrap();
/// assert_eq!(run.result(), json!({}));
/// assert_eq!(tools.calls(), vec![("echo".to_string(), json!({}))]);
/// ```
#[derive(Default)]
pub struct FakeTools {
    tools: Vec<(String, Behaviour)>,
    calls: Mutex<Vec<(String, Value)>>,
}

impl FakeTools {
    /// No tools yet.
    pub fn new() -> FakeTools {
        FakeTools::default()
    }

    /// Adds tool `id`, which answers its parameters with `f`.
    pub fn tool(
        mut self,
        id: &str,
        f: impl Fn(&Map<String, Value>) -> Result<RunResult, Error> + Send + Sync + 'static,
    ) -> FakeTools {
        self.tools.push((id.to_string(), Box::new(f)));
        self
    }

    /// Every call so far, in order: the tool and its parameters.
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl ToolRunner for FakeTools {
    fn has_tool(&self, id: &str) -> bool {
        self.tools.iter().any(|(t, _)| t == id)
    }

    fn unknown_tool(&self, id: &str) -> Error {
        let err = Error::new(
            Layer::REQUEST,
            ErrorKind::UnknownTool,
            format!("unknown tool `{id}`"),
        );
        match did_you_mean(id, self.tools.iter().map(|(t, _)| t.as_str())) {
            Some(best) => err.with_hint(format!("did you mean `{best}`?")),
            None => err,
        }
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        _options: &CallOptions,
    ) -> Result<RunResult, Error> {
        let Some((_, f)) = self.tools.iter().find(|(t, _)| t == id) else {
            return Err(self.unknown_tool(id));
        };
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id.to_string(), Value::Object(params.clone())));
        f(params)
    }
}
