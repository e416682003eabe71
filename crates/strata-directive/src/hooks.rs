use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use strata_context::{When, WhenError};
use strata_core::{Error, ErrorKind, FieldPath, Layer, Limits, PathSeg};
use strata_doc::{Document, Format};
use strata_pipeline::{Chain, Template};
use strata_tools::{Hook, ToolRunner};

use crate::front_matter::HookSpec;

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
    pub fn name(self) -> &'static str {
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
pub fn under(mut e: Error, prefix: &FieldPath) -> Error {
    e.path = e.path.under(prefix);
    e
}

/// Checks and compiles a declared hook found at `path` in `doc`.
pub fn compile_hook(
    spec: &HookSpec,
    doc: &Document,
    path: &FieldPath,
    tools: &dyn ToolRunner,
    limits: &Limits,
) -> Result<Hook, Error> {
    let fail = |field: &str, message: String| {
        let e = Error::new(Layer::REQUEST, ErrorKind::Invalid, message)
            .at_path(&path.child(PathSeg::Key(field.into())));
        doc.locate_error(e)
    };
    let event = Event::parse(&spec.event)
        .map_err(|e| doc.locate_error(e.at_path(&path.child(PathSeg::Key("event".into())))))?;
    let when = match &spec.condition {
        Some(c) => Some(When::parse(c).map_err(|e| match e {
            WhenError::Expr(e) => {
                doc.locate_error(under(e, &path.child(PathSeg::Key("condition".into()))))
            }
            WhenError::Structured(m) => fail("condition", format!("bad condition: {m}")),
        })?),
        None => None,
    };
    let action_path = path.child(PathSeg::Key("action".into()));
    tools.callable(&spec.action.tool).map_err(|e| {
        doc.locate_error(e.at_path(&action_path.child(PathSeg::Key("tool".into()))))
    })?;
    let chain = Chain::of(&[Layer::INPUTS, Layer::CONTEXT]);
    let params_path = action_path.child(PathSeg::Key("params".into()));
    let params = Template::compile(&Value::Object(spec.action.params.clone()), &chain, limits)
        .map_err(|e| doc.locate_error(under(e, &params_path)))?;
    Ok(Hook {
        id: spec.id.clone(),
        event: event.name(),
        when,
        tool: spec.action.tool.clone(),
        params,
        file: doc.name.clone(),
        path: path.clone(),
    })
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
        let (specs, base): (Vec<HookSpec>, Option<FieldPath>) = match &doc.value {
            Value::Array(_) => (parse_specs(&doc, &doc.value)?, None),
            one => (
                vec![parse_spec(&doc, one, &FieldPath::root())?],
                Some(FieldPath::root()),
            ),
        };
        for (i, spec) in specs.iter().enumerate() {
            let path = base
                .clone()
                .unwrap_or_else(|| FieldPath(vec![PathSeg::Index(i)]));
            hooks.push(Arc::new(compile_hook(spec, &doc, &path, tools, limits)?));
        }
    }
    Ok(hooks)
}

fn parse_specs(doc: &Document, value: &Value) -> Result<Vec<HookSpec>, Error> {
    let Value::Array(items) = value else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| parse_spec(doc, v, &FieldPath(vec![PathSeg::Index(i)])))
        .collect()
}

fn parse_spec(doc: &Document, value: &Value, path: &FieldPath) -> Result<HookSpec, Error> {
    serde_json::from_value(value.clone()).map_err(|e| {
        let err = Error::new(Layer::REQUEST, ErrorKind::Syntax, format!("bad hook: {e}"))
            .with_hint("a hook is {id, event, condition, action: {tool, params}}");
        let mut err = doc.locate_error(err.at_path(path));
        if path.is_root() {
            err.location = Some(strata_core::Location {
                file: doc.name.clone(),
                line: 1,
                column: 1,
            });
        }
        err
    })
}
