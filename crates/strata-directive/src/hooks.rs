use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use strata_core::{Error, ErrorKind, FieldPath, Layer, Limits};
use strata_doc::{Document, Format};
use strata_tools::{parse_hook, Hook, HookFormat, ToolRunner};

use crate::load::stages;

/// The events a directive fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Before the first action.
    DirectiveStarted,
    /// Before each action.
    BeforeAction,
    /// After each action that succeeded.
    AfterAction,
    /// After each action that failed (or could not run).
    ActionFailed,
    /// When `limits.turns` or `limits.timeout` stops the directive.
    LimitReached,
    /// At the end, whatever the outcome.
    DirectiveCompleted,
}

/// The names every directive template sees; a hook's context adds `event` and its event's
/// [`Event::fields`].
pub const BASE_CONTEXT: [&str; 5] = ["directive", "model", "limits", "inputs", "steps"];

/// Every event, in the order of a run.
pub const EVENTS: [Event; 6] = [
    Event::DirectiveStarted,
    Event::BeforeAction,
    Event::AfterAction,
    Event::ActionFailed,
    Event::LimitReached,
    Event::DirectiveCompleted,
];

impl Event {
    /// The event's name in files and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Event::DirectiveStarted => "directive_started",
            Event::BeforeAction => "before_action",
            Event::AfterAction => "after_action",
            Event::ActionFailed => "action_failed",
            Event::LimitReached => "limit_reached",
            Event::DirectiveCompleted => "directive_completed",
        }
    }

    /// The names an event adds to the directive's context (besides `event`).
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Event::DirectiveStarted => &[],
            Event::BeforeAction => &["action"],
            Event::AfterAction => &["action", "result", "run", "error"],
            Event::ActionFailed => &["action", "result", "run", "error"],
            Event::LimitReached => &["limit_code", "current_value", "limit"],
            Event::DirectiveCompleted => &["status"],
        }
    }

    /// Every name a hook on this event reads: [`BASE_CONTEXT`], `event` and its fields.
    pub fn context_names(self) -> Vec<&'static str> {
        BASE_CONTEXT
            .iter()
            .copied()
            .chain(["event"])
            .chain(self.fields().iter().copied())
            .collect()
    }

    /// The event called `name`.
    pub fn from_name(name: &str) -> Option<Event> {
        EVENTS.iter().copied().find(|e| e.name() == name)
    }

    /// Parses an event name; the error (kind `unknown_name`) lists the events.
    pub fn parse(name: &str) -> Result<Event, Error> {
        Event::from_name(name).ok_or_else(|| {
            let all: Vec<&str> = EVENTS.iter().map(|e| e.name()).collect();
            Error::new(
                Layer::REQUEST,
                ErrorKind::UnknownName,
                format!("unknown event `{name}`; the events are {}", all.join(", ")),
            )
        })
    }
}

/// Prefixes an error's field path with `prefix` (compile errors carry paths relative to the
/// value compiled).
pub fn under(e: Error, prefix: &FieldPath) -> Error {
    e.map_path(|p| p.under(prefix))
}

/// The names of the directive events, in the order of a run.
const EVENT_NAMES: [&str; EVENTS.len()] = [
    EVENTS[0].name(),
    EVENTS[1].name(),
    EVENTS[2].name(),
    EVENTS[3].name(),
    EVENTS[4].name(),
    EVENTS[5].name(),
];

/// Parses the hooks found at `path` of `doc` (a list, or one hook when `one`) with the shared
/// hook parser: directive events, parameters templated with stages 1 and 2.
pub(crate) fn parse_hooks(
    doc: &Document,
    value: Option<&Value>,
    path: &FieldPath,
    tools: &dyn ToolRunner,
    limits: &Limits,
) -> Result<Vec<Hook>, Error> {
    let chain = stages();
    let format = HookFormat {
        events: &EVENT_NAMES,
        chain: &chain,
        tools,
        limits,
    };
    match value {
        Some(one @ Value::Object(_)) if path.is_root() => {
            Ok(vec![parse_hook(one, path, &format, doc)?])
        }
        _ => strata_tools::parse_hooks(value, path, &format, doc),
    }
}

/// Loads the project's hooks: every `hooks/*.yaml` under `root`, in file-name order; a file
/// holds one hook or a list of hooks. Shared, so that every directive of a run or a check
/// uses the same compiled hooks.
pub fn load_project_hooks(
    root: &Path,
    tools: &dyn ToolRunner,
    limits: &Limits,
) -> Result<Vec<Arc<Hook>>, Error> {
    let dir = root.join("hooks");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    let mut hooks = Vec::new();
    for file in files {
        let name = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let real = strata_doc::confine(&file, &dir, &name, "`hooks/`")?;
        let bytes = strata_doc::read_file(&real, &name, limits)?;
        let doc = Document::parse(&name, bytes, Format::Yaml, limits)?;
        let parsed = parse_hooks(&doc, Some(&doc.value), &FieldPath::root(), tools, limits)?;
        hooks.extend(parsed.into_iter().map(Arc::new));
    }
    Ok(hooks)
}
