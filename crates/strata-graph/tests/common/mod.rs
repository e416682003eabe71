//! A fake tool set and helpers shared by the graph tests.

#![allow(dead_code)]

use serde_json::{json, Map, Value};
use strata_core::{Error, ErrorKind, Layer, Limits, RenderOptions};
use strata_doc::{Document, Format};
use strata_graph::{Graph, LogEvent, Recorder, Walker};
use strata_tools::{CallOptions, FakeTools, RunResult, ToolRunner};

/// Tools: `echo` prints its params as JSON; `fail` exits 3; `flaky` fails while
/// `params.attempt < 3`; `split` prints the words of `params.text` as a JSON list; `broken`
/// cannot run at all; `log` records its params.
pub struct Fake(pub FakeTools);

fn echo(params: &Map<String, Value>) -> Result<RunResult, Error> {
    Ok(RunResult::ok(Value::Object(params.clone()).to_string()))
}

fn failed() -> RunResult {
    RunResult::exited(3, "", "bad")
}

impl Default for Fake {
    fn default() -> Fake {
        Fake(
            FakeTools::new()
                .tool("echo", echo)
                .tool("log", echo)
                .tool("fail", |_| Ok(failed()))
                .tool("flaky", |p| {
                    if p.get("attempt").and_then(Value::as_i64).unwrap_or(0) < 3 {
                        Ok(failed())
                    } else {
                        echo(p)
                    }
                })
                .tool("split", |p| {
                    let text = p.get("text").and_then(Value::as_str).unwrap_or("");
                    let words: Vec<&str> = text.split_whitespace().collect();
                    Ok(RunResult::ok(json!(words).to_string()))
                })
                .tool("broken", |_| {
                    Err(Error::new(
                        Layer::REQUEST,
                        ErrorKind::Spawn,
                        "cannot spawn `broken`",
                    ))
                }),
        )
    }
}

impl ToolRunner for Fake {
    fn has_tool(&self, id: &str) -> bool {
        self.0.has_tool(id)
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.0.unknown_tool(id)
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error> {
        self.0.run(id, params, options)
    }
}

impl Fake {
    /// The calls made so far, as `tool params` lines.
    pub fn calls(&self) -> Vec<String> {
        self.0
            .calls()
            .iter()
            .map(|(t, p)| format!("{t} {p}"))
            .collect()
    }
}

/// Loads `text` as graph `graphs/t` from file `t.yaml`.
pub fn load(text: &str, tools: &Fake) -> Result<Graph, Error> {
    let doc = Document::parse(
        "t.yaml",
        text.as_bytes().to_vec(),
        Format::Yaml,
        &Limits::default(),
    )?;
    Graph::load(&doc, "graphs/t", tools, &Limits::default())
}

/// The error as `file:line:col layer: message (hint)`.
pub fn located(e: &Error) -> String {
    let loc = e
        .location()
        .map(|l| format!("{}:{}:{}", l.file, l.line, l.column))
        .unwrap_or_default();
    let hint = e
        .hint()
        .as_ref()
        .map(|h| format!(" (hint: {h})"))
        .unwrap_or_default();
    format!("{loc} {}: {}{hint}", e.layer(), e.message())
}

/// Runs a loaded graph without checkpoints; returns the log lines and the outcome.
pub fn run_with(
    graph: &Graph,
    tools: &Fake,
    inputs: &[(&str, &str)],
) -> (Vec<String>, strata_graph::Outcome) {
    let strings: Vec<(String, String)> = inputs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let inputs = graph.bind_inputs(&Map::new(), &strings).unwrap();
    let mut rec = Recorder::default();
    let outcome = Walker::new(graph, tools, None, RenderOptions::default())
        .start("r1", inputs, &mut rec)
        .unwrap();
    (lines(&rec.0), outcome)
}

/// The human lines of events.
pub fn lines(events: &[LogEvent]) -> Vec<String> {
    events.iter().map(LogEvent::human).collect()
}

/// Loads and runs `text`; panics on load errors.
pub fn run(text: &str, inputs: &[(&str, &str)]) -> (Vec<String>, strata_graph::Outcome, Fake) {
    let tools = Fake::default();
    let graph = load(text, &tools).unwrap_or_else(|e| panic!("{}", located(&e)));
    let (lines, outcome) = run_with(&graph, &tools, inputs);
    (lines, outcome, tools)
}
