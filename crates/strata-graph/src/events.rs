//! What a run reports as it goes: one event per step, hook, warning, error and limit, with a
//! one-line human form and a JSON form (`strata run --json` prints one per line). An error
//! in an event is a [`strata_core::Error`]: its JSON form is [`Error::to_json`]'s, its text
//! [`crate::error_line`]'s.

use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::Value;
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

/// One state key an assignment changed: `{key, from, to}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The state key.
    pub key: String,
    /// The value before (`None`: the key was not set).
    pub from: Option<Value>,
    /// The value after.
    pub to: Value,
}

/// Something that happened during a run; its JSON form is an object with an `event` field
/// naming its type.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
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
        #[serde(rename = "edge", serialize_with = "taken_json")]
        taken: Taken,
        /// The state keys it changed.
        changes: Vec<Change>,
        /// An action's tool parameters, rendered: not in the `--json` stream (the step's
        /// changes show what it did); a run's event log adds them, redacted.
        #[serde(skip)]
        inputs: Option<Value>,
    },
    /// A missing context path met while rendering.
    Warning {
        /// The step during which it happened.
        step: u64,
        /// The warning.
        #[serde(serialize_with = "strata_tools::ser::warning")]
        warning: Warning,
    },
    /// A hook fired.
    #[serde(serialize_with = "hook_event")]
    Hook(Box<Firing>),
    /// A step failed.
    Error {
        /// Its number, from 1.
        step: u64,
        /// The node.
        node: String,
        /// What went wrong: its kind, message and where (the field of the graph file
        /// holding what failed, a template's file position).
        #[serde(serialize_with = "strata_tools::ser::error")]
        error: Error,
        /// The last lines the failed tool printed on stderr (secrets redacted), if any.
        stderr: Option<String>,
        /// What `on_error` does about it: `fail`, `continue` or `goto <node>`.
        handling: String,
        /// The failed action's tool parameters, rendered, when its tool ran: not in the
        /// `--json` stream; a run's event log adds them, redacted.
        #[serde(skip)]
        inputs: Option<Value>,
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
        #[serde(serialize_with = "strata_tools::ser::option_error")]
        failure: Option<Error>,
    },
}

impl LogEvent {
    /// The rendered tool parameters of a step or an error event (an action's), which its
    /// JSON form leaves out.
    pub fn inputs(&self) -> Option<&Value> {
        match self {
            LogEvent::Step { inputs, .. } | LogEvent::Error { inputs, .. } => inputs.as_ref(),
            _ => None,
        }
    }
}

/// Receives events as a run goes.
pub trait Observer {
    /// Called for every event, in order.
    fn on(&mut self, event: LogEvent);

    /// Where the elements of a foreach report, if anywhere (none by default: elements run
    /// unobserved).
    fn elements(&mut self) -> Option<&dyn Elements> {
        None
    }

    /// Where element events go as they happen, besides the run's event log, when the
    /// observer shows them live (none by default): a progress printer shows each retry.
    fn live_elements(&self) -> Option<Arc<dyn Elements + Send>> {
        None
    }
}

/// What a step's work reports while it runs, from the threads that run it — a foreach's
/// elements as they start and end, and each retry of an action's tool: the run's event log
/// takes them (the `--json` stream does not), so a page can show each element and attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ElementEvent {
    /// A foreach's list is known: `count` elements will run (fewer after a failure).
    ForeachStarted {
        /// The step the foreach node runs as.
        step: u64,
        /// The foreach node.
        node: String,
        /// How many elements the list holds.
        count: usize,
    },
    /// An element started.
    ElementStarted {
        /// The step the foreach node runs as.
        step: u64,
        /// The foreach node.
        node: String,
        /// The element's index in the list, from 0.
        index: usize,
    },
    /// An element ended.
    ElementFinished {
        /// The step the foreach node runs as.
        step: u64,
        /// The foreach node.
        node: String,
        /// The element's index in the list, from 0.
        index: usize,
        /// `done` or `failed`.
        status: &'static str,
        /// How long its body took, in milliseconds.
        ms: u64,
        /// The kind of its error, when it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'static str>,
    },
    /// An action's tool ran and failed, and runs again after `delay_ms`, as its `retries`
    /// allow (the action of a node, or one of a foreach's body for one element).
    ActionRetrying {
        /// The step the node runs as.
        step: u64,
        /// The action node (a foreach's body node, for an element).
        node: String,
        /// The element's index in the list, when the action runs for an element.
        #[serde(skip_serializing_if = "Option::is_none")]
        index: Option<usize>,
        /// The tool.
        tool: String,
        /// The number of the attempt that failed, from 1.
        attempt: u32,
        /// The most attempts (the first and `limit` retries).
        attempts: u32,
        /// The wait before the next attempt, in milliseconds.
        delay_ms: u64,
        /// Why the attempt failed (as a failed step's error says it).
        #[serde(serialize_with = "strata_tools::ser::error")]
        error: Error,
        /// The last lines the attempt printed on stderr, if any.
        stderr: Option<String>,
    },
}

impl ElementEvent {
    /// The event as one line for people, for the events a run's progress shows (an action's
    /// retry: `step 1 try (t/flaky): attempt 1 of 3 failed: …; again in 1ms`); None for the
    /// others, which only the event log keeps.
    pub fn human(&self) -> Option<String> {
        match self {
            ElementEvent::ActionRetrying {
                step,
                node,
                index,
                tool,
                attempt,
                attempts,
                delay_ms,
                error,
                ..
            } => {
                let element = index.map_or_else(String::new, |i| format!("[{i}]"));
                Some(format!(
                    "step {step} {node}{element} ({tool}): attempt {attempt} of {attempts} failed: {}; again in {}",
                    error_line(error),
                    strata_core::duration_text(std::time::Duration::from_millis(*delay_ms))
                ))
            }
            _ => None,
        }
    }
}

/// Takes element events from any thread; it must be quick, as elements wait for it.
pub trait Elements: Sync {
    /// Called when an element starts or ends, or an action's tool is retried (in no set
    /// order across elements).
    fn element(&self, event: ElementEvent);
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

/// An edge taken as `{to, why, when}` (`to` null at the end or a return, `when` the
/// condition that held).
fn taken_json<S: Serializer>(taken: &Taken, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Edge<'a> {
        to: Option<&'a str>,
        why: &'static str,
        when: Option<&'a str>,
    }
    let edge = match taken {
        Taken::Edge { to, why } => {
            let (why, when) = match why {
                Why::Next => ("next", None),
                Why::When(w) => ("when", Some(w.as_str())),
                Why::Otherwise => ("otherwise", None),
            };
            Edge {
                to: Some(to),
                why,
                when,
            }
        }
        Taken::End => Edge {
            to: None,
            why: "end",
            when: None,
        },
        Taken::Return => Edge {
            to: None,
            why: "return",
            when: None,
        },
    };
    edge.serialize(s)
}

/// A hook's firing as its progress event's fields (the `event` tag is the enum's).
fn hook_event<S: Serializer>(firing: &Firing, s: S) -> Result<S::Ok, S::Error> {
    firing.hook_event().serialize(s)
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
                ..
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
            LogEvent::Hook(f) => strata_core::escaped(&f.line()).into_owned(),
            LogEvent::Error {
                step,
                node,
                error,
                stderr,
                handling,
                ..
            } => {
                let mut line = format!(
                    "step {step} {node} failed: {} (on_error: {handling})",
                    error_line(error)
                );
                for l in stderr.iter().flat_map(|t| t.lines()) {
                    line.push_str(&format!("\n    ! {}", strata_core::escaped(l)));
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
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
