//! What the graph commands share: telling a graph from a tool, loading one with the
//! project's tools, progress lines, exit codes, typed inputs, drawing formats and the prompt
//! templates a graph's prompt nodes need.

use std::io::Write;
use std::sync::Arc;

use clap::ValueEnum;
use serde_json::{Map, Value};
use strata_core::{drawing, Error, ErrorKind, Layer};
use strata_graph::{ElementEvent, Elements, LogEvent, Observer, Status};

use crate::style::{paint, ERROR, OK};

/// Exit code of a run that failed.
pub(crate) const FAILED: u8 = 1;
/// Exit code of a run stopped by `max_steps`.
pub(crate) const LIMITED: u8 = 3;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One line per event on stderr.
    Human,
    /// One JSON object per event on stderr (JSON Lines), as directives' and plans' events
    /// go: stdout holds the one result document.
    Json,
    /// Nothing but the result.
    Quiet,
}

/// Shows a run's events as `Mode` says.
pub(crate) struct Printer(pub Mode);

/// Shows each retry of an action's tool as it happens, from the thread that retries it: a
/// line, or its JSON object (`action_retrying`), as `Mode` says.
impl Elements for Printer {
    fn element(&self, event: ElementEvent) {
        let Some(line) = event.human() else {
            return;
        };
        match self.0 {
            Mode::Human => anstream::eprintln!("{}", strata_core::escaped(&line)),
            Mode::Json => {
                let json = serde_json::to_value(&event).unwrap_or(Value::Null);
                let mut out = std::io::stderr().lock();
                let _ = writeln!(out, "{json}");
                let _ = out.flush();
            }
            Mode::Quiet => {}
        }
    }
}

impl Observer for Printer {
    fn on(&mut self, event: LogEvent) {
        match self.0 {
            Mode::Human => anstream::eprintln!("{}", styled_line(&event)),
            Mode::Json => {
                let mut out = std::io::stderr().lock();
                let _ = writeln!(out, "{}", event.to_json());
                let _ = out.flush();
            }
            Mode::Quiet => {}
        }
    }

    fn live_elements(&self) -> Option<Arc<dyn Elements + Send>> {
        (self.0 != Mode::Quiet).then(|| Arc::new(Printer(self.0)) as Arc<dyn Elements + Send>)
    }
}

/// A progress line as printed for people: the word that says how a step or the run ended in
/// its colour (stripped on the way out when colour is off), as directives and plans show it.
fn styled_line(event: &LogEvent) -> String {
    let line = event.human();
    let (word, style) = match event {
        LogEvent::Error { .. } => (" failed: ", ERROR),
        LogEvent::Limit { .. } => ("limit: ", ERROR),
        LogEvent::Finished { status, .. } => match status {
            Status::Completed => (": completed after", OK),
            Status::Failed => (": failed after", ERROR),
            Status::Limited => (": limited after", ERROR),
            Status::Cancelled => (": cancelled after", ERROR),
            Status::Running => return line,
        },
        _ => return line,
    };
    let bare = word.trim_matches(|c: char| c == ' ' || c == ':');
    let bare = bare.strip_suffix(" after").unwrap_or(bare);
    let painted = word.replacen(bare, &paint(style, bare), 1);
    line.replacen(word, &painted, 1)
}

/// The typed inputs `--params-json` gives (none without it).
pub(crate) fn typed_inputs(params_json: Option<&str>) -> Result<Map<String, Value>, Error> {
    match params_json {
        None => Ok(Map::new()),
        Some(text) => match strata_doc::json_value(text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                "--params-json must be a JSON object",
            )),
        },
    }
}

/// A drawing format on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum DrawFormat {
    /// A Mermaid flowchart
    Mermaid,
    /// A Graphviz digraph
    Dot,
}

impl From<DrawFormat> for drawing::Format {
    fn from(format: DrawFormat) -> drawing::Format {
        match format {
            DrawFormat::Mermaid => drawing::Format::Mermaid,
            DrawFormat::Dot => drawing::Format::Dot,
        }
    }
}
