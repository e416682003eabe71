//! A fake tool set and helpers shared by the graph tests.

#![allow(dead_code)]

use std::sync::Mutex;

use serde_json::{json, Map, Value};
use strata_core::{Error, Layer, Limits};
use strata_doc::{Document, Format};
use strata_graph::{Graph, LogEvent, Recorder, Tools, Walker};

/// Tools: `echo` returns its params as `data`; `fail` exits 3; `flaky` fails while
/// `params.attempt < 3`; `split` returns the words of `params.text` as `data`; `broken`
/// cannot run at all; `log` records its params.
#[derive(Default)]
pub struct Fake {
    /// Every call, in order: tool and params.
    pub calls: Mutex<Vec<(String, Value)>>,
}

fn ok(data: Value) -> Value {
    json!({"success": true, "exit_code": 0, "stdout": "", "stderr": "", "data": data, "timed_out": false})
}

impl Tools for Fake {
    fn has_tool(&self, id: &str) -> bool {
        ["echo", "fail", "flaky", "split", "broken", "log"].contains(&id)
    }

    fn unknown_tool(&self, id: &str) -> Error {
        Error::new(Layer::Request, format!("unknown tool `{id}`"))
    }

    fn run(&self, id: &str, params: &Map<String, Value>) -> Result<Value, Error> {
        self.calls
            .lock()
            .unwrap()
            .push((id.to_string(), Value::Object(params.clone())));
        let failed = json!({"success": false, "exit_code": 3, "stdout": "", "stderr": "bad", "data": null, "timed_out": false});
        Ok(match id {
            "fail" => failed,
            "flaky" if params.get("attempt").and_then(Value::as_i64).unwrap_or(0) < 3 => failed,
            "split" => {
                let text = params.get("text").and_then(Value::as_str).unwrap_or("");
                ok(json!(text.split_whitespace().collect::<Vec<_>>()))
            }
            "broken" => return Err(Error::new(Layer::Request, "cannot spawn `broken`")),
            _ => ok(Value::Object(params.clone())),
        })
    }
}

impl Fake {
    /// The calls made so far, as `tool params` lines.
    pub fn calls(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
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
        .location
        .as_ref()
        .map(|l| format!("{}:{}:{}", l.file, l.line, l.column))
        .unwrap_or_default();
    let hint = e
        .hint
        .as_ref()
        .map(|h| format!(" (hint: {h})"))
        .unwrap_or_default();
    format!("{loc} {}: {}{hint}", e.layer, e.message)
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
    let outcome = Walker::new(graph, tools, None, false)
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
