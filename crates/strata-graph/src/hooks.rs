//! Graph hooks: the events a walker fires, and the `hooks` list of a graph file, parsed into
//! the shared hook model (a tool call fired when its condition holds, its parameters a layer-C
//! template over the event context).

use serde_json::{Map, Value};
use strata_core::{Error, FieldPath};
use strata_tools::{params_path, Hook, ToolRunner};

use crate::fields::{index, key, names, Reader};
use crate::load::parse_when;

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

/// The keys of a hook's `action`.
pub const HOOK_ACTION_KEYS: [&str; 2] = ["tool", "params"];

/// The keys of a hook.
pub const HOOK_KEYS: [&str; 5] = ["id", "event", "when", "condition", "action"];

/// Parses the `hooks` list.
pub(crate) fn parse_hooks(
    r: &Reader<'_>,
    value: Option<&Value>,
    tools: &dyn ToolRunner,
) -> Result<Vec<Hook>, Error> {
    let path = FieldPath(vec![strata_core::PathSeg::Key("hooks".into())]);
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = value else {
        return Err(r.err(&path, "`hooks` must be a list"));
    };
    let mut hooks: Vec<Hook> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = index(&path, i);
        let hook = parse_hook(r, item, &at, tools)?;
        if hooks.iter().any(|h| h.id == hook.id) {
            return Err(r.err(&key(&at, "id"), format!("duplicate hook id `{}`", hook.id)));
        }
        hooks.push(hook);
    }
    Ok(hooks)
}

fn parse_hook(
    r: &Reader<'_>,
    item: &Value,
    at: &FieldPath,
    tools: &dyn ToolRunner,
) -> Result<Hook, Error> {
    let map = r.map(item, at, "a hook")?;
    r.known_keys(map, at, &HOOK_KEYS, "a hook")?;
    let id = r
        .opt_str(map, at, "id")?
        .ok_or_else(|| r.err(at, "a hook needs an `id`"))?;
    let event_name = r
        .opt_str(map, at, "event")?
        .ok_or_else(|| r.err(at, "a hook needs an `event`"))?;
    let all: Vec<&str> = EVENTS.iter().map(|e| e.name()).collect();
    let event = Event::parse(event_name).ok_or_else(|| {
        r.err_hint(
            &key(at, "event"),
            format!("unknown event `{event_name}`"),
            &format!("the events are {}", names(&all)),
        )
    })?;
    if map.contains_key("when") && map.contains_key("condition") {
        return Err(r.err(
            &key(at, "condition"),
            "a hook has `when` or `condition`, not both",
        ));
    }
    let when = match ["when", "condition"].iter().find(|k| map.contains_key(**k)) {
        Some(k) => Some(parse_when(r, &map[*k], &key(at, k))?),
        None => None,
    };
    let action_path = key(at, "action");
    let action = map
        .get("action")
        .ok_or_else(|| r.err(at, "a hook needs an `action: {tool, params}`"))?;
    let action = r.map(action, &action_path, "a hook's `action`")?;
    r.known_keys(
        action,
        &action_path,
        &["tool", "params"],
        "a hook's `action`",
    )?;
    let tool = r
        .opt_str(action, &action_path, "tool")?
        .ok_or_else(|| r.err(&action_path, "a hook's action needs a `tool`"))?;
    tools
        .callable(tool)
        .map_err(|e| r.locate(e.at_path(&key(&action_path, "tool"))))?;
    let params_at = params_path(at);
    let params = action
        .get("params")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    r.map(&params, &params_at, "a hook's `params`")?;
    Ok(Hook {
        id: id.to_string(),
        event: event.name(),
        when,
        tool: tool.to_string(),
        params: r.template(&params, &params_at)?,
        file: r.doc.name.clone(),
        path: at.clone(),
    })
}
