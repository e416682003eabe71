//! What a directive run reports as it goes: each action's start and end, and each hook that
//! fired — for progress lines, and as JSON objects (`strata run --json`).

use std::fmt;
use std::time::Duration;

use serde_json::{json, Value};
use strata_tools::{Firing, StepRecord, StepStatus};

/// Something that happened during a directive run.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// An action is about to call its tool.
    Started {
        /// Its position among the actions, from 0.
        index: usize,
        /// Its step id.
        id: &'a str,
        /// The tool.
        tool: &'a str,
    },
    /// An action ended: it ran, or failed before its tool could run (its parameters could
    /// not be rendered or were refused; no `Started` came before).
    Finished {
        /// Its position among the actions, from 0.
        index: usize,
        /// Its step id.
        id: &'a str,
        /// The tool.
        tool: &'a str,
        /// Its step record.
        record: &'a StepRecord,
        /// How long it took, from its start.
        elapsed: Duration,
    },
    /// A hook fired.
    Hook(&'a Firing),
}

impl Progress<'_> {
    /// The event as a JSON object with an `event` field naming its type.
    pub fn to_json(&self) -> Value {
        match self {
            Progress::Started { index, id, tool } => {
                json!({"event": "action_started", "index": index, "id": id, "tool": tool})
            }
            Progress::Finished {
                index,
                id,
                tool,
                record,
                elapsed,
            } => json!({"event": "action_finished", "index": index, "id": id, "tool": tool,
                "status": record.status.name(), "elapsed_ms": elapsed.as_millis() as u64,
                "error": record.message(),
                "stderr": record.stderr_tail().filter(|_| record.status == StepStatus::Failed)}),
            Progress::Hook(f) => f.event_json(),
        }
    }
}

/// Receives the events of a run as they happen.
pub trait Observer {
    /// Called for every event, in order.
    fn on(&self, event: Progress<'_>);
}

/// An observer as a run option: optional, copied with the options.
#[derive(Clone, Copy, Default)]
pub struct Watch<'a>(pub Option<&'a dyn Observer>);

impl Watch<'_> {
    /// Reports `event` to the observer, if there is one.
    pub fn on(&self, event: Progress<'_>) {
        if let Some(o) = self.0 {
            o.on(event);
        }
    }
}

impl fmt::Debug for Watch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Watch(observer)"
        } else {
            "Watch(none)"
        })
    }
}
