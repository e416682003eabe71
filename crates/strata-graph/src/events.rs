//! What a run reports as it goes: one event per step, hook, warning, error and limit, with a
//! one-line human form and a JSON form (`strata run --json` prints one per line). An error
//! in an event is a [`strata_core::Error`]: its JSON form is [`Error::to_json`]'s, its text
//! [`crate::error_line`]'s.

use serde_json::{json, Value};
use strata_core::{Error, Warning};

use crate::checkpoint::Status;
use crate::errors::error_line;
use strata_tools::Firing;

/// Why the walker took the edge it took.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// The node's only edge, unconditional.
    Next,
    /// The edge's condition held (its text).
    When(String),
    /// The unconditional last edge, after every condition before it was false.
    Otherwise,
}

/// Where a step went.
#[derive(Debug, Clone, PartialEq)]
pub enum Taken {
    /// Along an edge to a node.
    Edge {
        /// The target's id.
        to: String,
        /// Why.
        why: Why,
    },
    /// Nowhere: the node has no edge that matched, so the graph ends.
    End,
    /// A return node ended the graph.
    Return,
}

/// One state key an assignment changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The state key.
    pub key: String,
    /// The value before (`None`: the key was not set).
    pub from: Option<Value>,
    /// The value after.
    pub to: Value,
}

/// Something that happened during a run.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEvent {
    /// The run started or resumed.
    Started {
        /// The run id.
        run_id: String,
        /// The graph's id.
        graph: String,
        /// The node that runs first.
        node: String,
        /// Steps already completed (0 unless resumed).
        step: u64,
        /// True when the run was resumed from a checkpoint.
        resumed: bool,
    },
    /// A step completed.
    Step {
        /// Its number, from 1.
        step: u64,
        /// The node.
        node: String,
        /// The node's kind.
        kind: &'static str,
        /// Where it went.
        taken: Taken,
        /// The state keys it changed.
        changes: Vec<Change>,
    },
    /// A missing context path met while rendering.
    Warning {
        /// The step during which it happened.
        step: u64,
        /// The warning.
        warning: Warning,
    },
    /// A hook fired.
    Hook(Box<Firing>),
    /// A step failed.
    Error {
        /// Its number, from 1.
        step: u64,
        /// The node.
        node: String,
        /// What went wrong: its kind, message and where (the field of the graph file
        /// holding what failed, a template's file position).
        error: Error,
        /// The last lines the failed tool printed on stderr (secrets redacted), if any.
        stderr: Option<String>,
        /// What `on_error` does about it: `fail`, `continue` or `goto <node>`.
        handling: String,
    },
    /// `max_steps` was reached.
    Limit {
        /// Steps completed.
        step: u64,
        /// The limit.
        max_steps: u64,
        /// What `on_error` does about it: `stop` or `goto <node>`.
        handling: String,
    },
    /// The run ended.
    Finished {
        /// The run id.
        run_id: String,
        /// How it ended.
        status: Status,
        /// Steps completed.
        steps: u64,
        /// The graph's result (null unless completed).
        result: Value,
        /// Why it failed or stopped (see [`crate::Outcome::failure`]).
        failure: Option<Error>,
    },
}

/// Receives events as a run goes.
pub trait Observer {
    /// Called for every event, in order.
    fn on(&mut self, event: LogEvent);
}

/// Drops every event.
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    fn on(&mut self, _event: LogEvent) {}
}

/// Keeps every event.
#[derive(Debug, Default)]
pub struct Recorder(pub Vec<LogEvent>);

impl Observer for Recorder {
    fn on(&mut self, event: LogEvent) {
        self.0.push(event);
    }
}

const SHOWN_CHARS: usize = 60;

/// A value in compact JSON, cut to a readable length.
pub fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_CHARS {
        return text;
    }
    let cut: String = text.chars().take(SHOWN_CHARS - 1).collect();
    format!("{cut}…")
}

fn changes_text(changes: &[Change]) -> String {
    if changes.is_empty() {
        return "no state change".into();
    }
    changes
        .iter()
        .map(|c| match &c.from {
            Some(from) => format!("{} = {} (was {})", c.key, short(&c.to), short(from)),
            None => format!("{} = {} (new)", c.key, short(&c.to)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn taken_json(taken: &Taken) -> Value {
    match taken {
        Taken::Edge { to, why } => {
            let (why, when) = match why {
                Why::Next => ("next", Value::Null),
                Why::When(w) => ("when", Value::String(w.clone())),
                Why::Otherwise => ("otherwise", Value::Null),
            };
            json!({"to": to, "why": why, "when": when})
        }
        Taken::End => json!({"to": null, "why": "end", "when": null}),
        Taken::Return => json!({"to": null, "why": "return", "when": null}),
    }
}

impl LogEvent {
    /// The event as one line for people (no trailing newline).
    pub fn human(&self) -> String {
        match self {
            LogEvent::Started {
                run_id,
                graph,
                node,
                step,
                resumed,
            } => {
                if *resumed {
                    format!("run {run_id}: resuming {graph} after step {step} at `{node}`")
                } else {
                    format!("run {run_id}: starting {graph} at `{node}`")
                }
            }
            LogEvent::Step {
                step,
                node,
                kind,
                taken,
                changes,
            } => {
                let to = match taken {
                    Taken::Edge { to, why: Why::Next } => format!("-> {to}"),
                    Taken::Edge {
                        to,
                        why: Why::When(w),
                    } => format!("-> {to} (when {w})"),
                    Taken::Edge {
                        to,
                        why: Why::Otherwise,
                    } => format!("-> {to} (otherwise)"),
                    Taken::End => "-> end".into(),
                    Taken::Return => "-> return".into(),
                };
                format!(
                    "step {step} {node} ({kind}) {to}: {}",
                    changes_text(changes)
                )
            }
            LogEvent::Warning { step, warning } => format!("step {step} {warning}"),
            LogEvent::Hook(f) => f.line(),
            LogEvent::Error {
                step,
                node,
                error,
                stderr,
                handling,
            } => {
                let mut line = format!(
                    "step {step} {node} failed: {} (on_error: {handling})",
                    error_line(error)
                );
                for l in stderr.iter().flat_map(|t| t.lines()) {
                    line.push_str(&format!("\n    ! {l}"));
                }
                line
            }
            LogEvent::Limit {
                step,
                max_steps,
                handling,
            } => format!(
                "limit: max_steps ({max_steps}) reached after step {step} (on_error: {handling})"
            ),
            LogEvent::Finished {
                run_id,
                status,
                steps,
                failure,
                ..
            } => {
                let unit = if *steps == 1 { "step" } else { "steps" };
                let head = format!("run {run_id}: {} after {steps} {unit}", status.name());
                match failure {
                    None => head,
                    Some(why) => format!("{head}: {}", error_line(why)),
                }
            }
        }
    }

    /// The event as a JSON object with an `event` field naming its type.
    pub fn to_json(&self) -> Value {
        match self {
            LogEvent::Started {
                run_id,
                graph,
                node,
                step,
                resumed,
            } => json!({"event": "started", "run_id": run_id, "graph": graph, "node": node,
                        "step": step, "resumed": resumed}),
            LogEvent::Step {
                step,
                node,
                kind,
                taken,
                changes,
            } => {
                let changes: Vec<Value> = changes
                    .iter()
                    .map(|c| json!({"key": c.key, "from": c.from, "to": c.to}))
                    .collect();
                json!({"event": "step", "step": step, "node": node, "kind": kind,
                       "edge": taken_json(taken), "changes": changes})
            }
            LogEvent::Warning { step, warning } => json!({"event": "warning", "step": step,
                "warning": warning.to_json()}),
            LogEvent::Hook(f) => f.event_json(),
            LogEvent::Error {
                step,
                node,
                error,
                stderr,
                handling,
            } => json!({"event": "error", "step": step, "node": node, "error": error.to_json(),
                        "stderr": stderr, "handling": handling}),
            LogEvent::Limit {
                step,
                max_steps,
                handling,
            } => json!({"event": "limit", "step": step, "max_steps": max_steps,
                        "handling": handling}),
            LogEvent::Finished {
                run_id,
                status,
                steps,
                result,
                failure,
            } => json!({"event": "finished", "run_id": run_id, "status": status.name(),
                        "steps": steps, "result": result,
                        "failure": failure.as_ref().map(Error::to_json)}),
        }
    }
}
