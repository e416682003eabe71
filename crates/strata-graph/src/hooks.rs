//! Graph hooks: the events a walker fires, and the `hooks` list of a graph file, parsed into
//! the shared hook model (a tool call fired when its condition holds, its parameters a layer-C
//! template over the event context).

use serde_json::Value;
use strata_core::{Error, FieldPath, Layer, PathSeg};
use strata_pipeline::Chain;
use strata_tools::{parse_hooks as parse_hooks_in, Hook, HookFormat, HookSource, ToolRunner};

use crate::fields::Reader;

/// The events a graph run fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Once, when a run starts (not again when it is resumed).
    GraphStarted,
    /// Before every step.
    BeforeNode,
    /// After every step that succeeded.
    AfterNode,
    /// When a node fails (before `on_error` handling).
    Error,
    /// When `max_steps` is reached.
    Limit,
    /// Once, when the run ends, whatever the outcome.
    GraphCompleted,
}

/// Every event, in the order of a run.
pub const EVENTS: [Event; 6] = [
    Event::GraphStarted,
    Event::BeforeNode,
    Event::AfterNode,
    Event::Error,
    Event::Limit,
    Event::GraphCompleted,
];

impl Event {
    /// The event's name in files and logs.
    pub fn name(self) -> &'static str {
        match self {
            Event::GraphStarted => "graph_started",
            Event::BeforeNode => "before_node",
            Event::AfterNode => "after_node",
            Event::Error => "error",
            Event::Limit => "limit",
            Event::GraphCompleted => "graph_completed",
        }
    }

    /// Parses an event name.
    pub fn parse(name: &str) -> Option<Event> {
        EVENTS.iter().copied().find(|e| e.name() == name)
    }
}

/// The names a hook template or condition may read: the event context.
pub const CONTEXT_NAMES: [&str; 15] = [
    "graph", "run_id", "event", "step", "state", "inputs", "node", "result", "run", "changes",
    "error", "handling", "limit", "status", "output",
];

/// The keys of a hook (the keys of every hook of strata: directives and project hook files
/// read hooks with the same parser).
pub use strata_tools::{HOOK_ACTION_KEYS, HOOK_KEYS};

impl HookSource for Reader<'_> {
    fn file(&self) -> &str {
        &self.doc.name
    }

    fn locate(&self, err: Error) -> Error {
        Reader::locate(self, err)
    }

    fn locate_key(&self, err: Error) -> Error {
        let located = self
            .err_at_key(err.path(), err.message(), "")
            .with_kind(err.kind())
            .without_hint();
        match err.hint() {
            Some(hint) => located.with_hint(hint),
            None => located,
        }
    }
}

/// Parses the `hooks` list with the shared hook parser: graph events, parameters templated
/// with layer C.
pub(crate) fn parse_hooks(
    r: &Reader<'_>,
    value: Option<&Value>,
    tools: &dyn ToolRunner,
) -> Result<Vec<Hook>, Error> {
    let events: Vec<&'static str> = EVENTS.iter().map(|e| e.name()).collect();
    let chain = Chain::of(&[Layer::CONTEXT]);
    let format = HookFormat {
        events: &events,
        chain: &chain,
        tools,
        limits: r.limits,
    };
    let path = FieldPath(vec![PathSeg::Key("hooks".into())]);
    parse_hooks_in(value, &path, &format, r)
}
