//! Hooks: a tool call fired on a named event when its condition holds, its parameters a
//! template rendered against the event's context. Directives, graphs and project hook files
//! declare hooks with the same keys, read by the one parser [`parse_hook`] (each front-end
//! brings its events and its template stages), and fire them all through [`fire`].

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use strata_context::{When, WhenError};
use strata_core::{
    a_or_an, did_you_mean, type_name, ContextSource, Error, ErrorKind, FieldPath, Layer, Limits,
    Location, PathSeg, RenderOptions, Scope, Warning,
};
use strata_doc::Document;
use strata_pipeline::{Chain, Template};

use crate::{CallOptions, StepRecord, ToolRunner};

/// A loaded hook.
#[derive(Debug)]
pub struct Hook {
    /// Its id.
    pub id: String,
    /// The event it fires on (one of its front-end's event names).
    pub event: &'static str,
    /// When it fires; always when absent.
    pub when: Option<When>,
    /// The tool it runs.
    pub tool: String,
    /// The tool's parameters, compiled for the stages its front-end renders.
    pub params: Template,
    /// The file that declared it.
    pub file: String,
    /// Where it stands in that file (its parameters are at `<path>.action.params`).
    pub path: FieldPath,
}

impl Hook {
    /// Where its parameters stand in its file.
    pub fn params_path(&self) -> FieldPath {
        params_path(&self.path)
    }
}

/// What happened when a hook fired.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// The hook's id.
    pub id: String,
    /// The event.
    pub event: &'static str,
    /// The tool.
    pub tool: String,
    /// The rendered parameters (null when they could not be rendered).
    pub params: Value,
    /// `completed`, `failed` or `dry run`.
    pub status: &'static str,
    /// The tool call, when the tool ran (or could not start).
    pub record: Option<StepRecord>,
    /// Why it failed: the condition, the parameters or the tool.
    pub error: Option<String>,
}

impl Firing {
    /// The firing as one progress line for people: `hook <id> on <event> (<tool>): <status>`,
    /// and `: <why>` when it failed.
    pub fn line(&self) -> String {
        let head = format!(
            "hook {} on {} ({}): {}",
            self.id, self.event, self.tool, self.status
        );
        match &self.error {
            None => head,
            Some(e) => format!("{head}: {e}"),
        }
    }

    /// The firing as a progress event: `{event: "hook", id, on, tool, status, error}`.
    pub fn event_json(&self) -> Value {
        #[derive(Serialize)]
        struct Tagged<'a> {
            event: &'static str,
            #[serde(flatten)]
            fields: HookEvent<'a>,
        }
        let tagged = Tagged {
            event: "hook",
            fields: self.hook_event(),
        };
        serde_json::to_value(tagged).unwrap_or(Value::Null)
    }

    /// The fields of the firing's progress event, after its `event` tag.
    pub fn hook_event(&self) -> HookEvent<'_> {
        HookEvent {
            id: &self.id,
            on: self.event,
            tool: &self.tool,
            status: self.status,
            error: self.error.as_deref(),
        }
    }

    /// The firing as JSON: `{id, event, tool, params, status, result, error, run}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A firing as a progress event (`{id, on, tool, status, error}`), the `event: "hook"` tag
/// left to the event type that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HookEvent<'a> {
    /// The hook's id.
    pub id: &'a str,
    /// The event it fired on.
    pub on: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// `completed`, `failed` or `dry run`.
    pub status: &'a str,
    /// Why it failed.
    pub error: Option<&'a str>,
}

/// The JSON form of a [`Firing`]: a derived form of borrowed fields rather than the struct
/// itself, because the record's `result` and `run` stand around the firing's own `error`.
#[derive(Serialize)]
struct FiringForm<'a> {
    id: &'a str,
    event: &'a str,
    tool: &'a str,
    params: &'a Value,
    status: &'a str,
    result: Option<&'a Value>,
    error: Option<&'a str>,
    run: Option<&'a Value>,
}

impl Serialize for Firing {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FiringForm {
            id: &self.id,
            event: self.event,
            tool: &self.tool,
            params: &self.params,
            status: self.status,
            result: self.record.as_ref().map(|r| &r.result),
            error: self.error.as_deref(),
            run: self.record.as_ref().and_then(|r| r.run.as_ref()),
        }
        .serialize(s)
    }
}

/// How hooks run: the tools, what a missing value does, and whether to run nothing.
#[derive(Clone, Copy)]
pub struct HookCall<'a> {
    /// Runs the hooks' tools.
    pub tools: &'a dyn ToolRunner,
    /// What a missing value in a hook's parameters does.
    pub render: RenderOptions,
    /// Render the parameters, run nothing.
    pub dry_run: bool,
}

/// Fires every hook of `event` whose condition holds against `context`, in order. A hook
/// that fails is reported in its [`Firing`], never fatal; warnings of its parameters are
/// appended to `warnings` (their paths under the hook's `params`).
pub fn fire<'h>(
    hooks: impl IntoIterator<Item = &'h Hook>,
    event: &str,
    context: &dyn ContextSource,
    inputs: &Map<String, Value>,
    call: &HookCall<'_>,
    warnings: &mut Vec<Warning>,
) -> Vec<Firing> {
    let mut out = Vec::new();
    for hook in hooks.into_iter().filter(|h| h.event == event) {
        let mut firing = Firing {
            id: hook.id.clone(),
            event: hook.event,
            tool: hook.tool.clone(),
            params: Value::Null,
            status: "failed",
            record: None,
            error: None,
        };
        if let Some(when) = &hook.when {
            match when.eval(context) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    firing.error = Some(format!("condition `{}`: {}", when.source(), e.message()));
                    out.push(firing);
                    continue;
                }
            }
        }
        let scope = Scope {
            context,
            inputs,
            ..Scope::default()
        };
        let params = match hook.params.render(&scope, &call.render) {
            Ok(rendered) => {
                let value = rendered.value.into_json();
                warnings.extend(rendered.warnings.into_iter().map(|mut w| {
                    w.path = w.path.under(&hook.params_path());
                    w
                }));
                value
            }
            Err(e) => {
                let e = e.map_path(|p| p.under(&hook.params_path()));
                firing.error = Some(e.to_string());
                out.push(firing);
                continue;
            }
        };
        firing.params = params.clone();
        if call.dry_run {
            firing.status = "dry run";
            out.push(firing);
            continue;
        }
        let Value::Object(params) = params else {
            firing.error = Some("hook parameters must render to a map".into());
            out.push(firing);
            continue;
        };
        let record = match call.tools.run(&hook.tool, &params, &CallOptions::default()) {
            Ok(run) => StepRecord::from_run(&hook.id, &hook.tool, &run),
            Err(e) => StepRecord::failed(&hook.id, &e),
        };
        firing.status = record.status.name();
        firing.error = record.message().map(str::to_string);
        firing.record = Some(record);
        out.push(firing);
    }
    out
}

/// The field path of a hook's parameters: `<base>.action.params`.
pub fn params_path(base: &FieldPath) -> FieldPath {
    base.child(PathSeg::Key("action".into()))
        .child(PathSeg::Key("params".into()))
}

/// The keys of a hook, in directives, graphs and project hook files alike. `when` and
/// `condition` are two spellings of the same field (one at most).
pub const HOOK_KEYS: [&str; 5] = ["id", "event", "when", "condition", "action"];

/// The keys of a hook's `action`.
pub const HOOK_ACTION_KEYS: [&str; 2] = ["tool", "params"];

/// Where hook errors are placed: the file being read, and how a field path becomes a line
/// and column in it. Each front-end implements it for its own reader; [`Document`]
/// implements it for directives and project hook files.
pub trait HookSource {
    /// The file's name, as errors and [`Hook::file`] show it.
    fn file(&self) -> &str;

    /// Attaches the line and column of the error's field (its path is set).
    fn locate(&self, err: Error) -> Error;

    /// Attaches the line and column of the key that ends the error's path (an unknown key);
    /// by default the position of its value.
    fn locate_key(&self, err: Error) -> Error {
        self.locate(err)
    }
}

impl HookSource for Document {
    fn file(&self) -> &str {
        &self.name
    }

    fn locate(&self, err: Error) -> Error {
        let mut err = self.locate_error(err);
        if err.location().is_none() {
            err = err.at_location(Location {
                file: self.name.clone(),
                line: 1,
                column: 1,
            });
        }
        err
    }
}

/// How a front-end reads its hooks: the events it fires, the stages its hook parameters go
/// through, the tools a hook may call and the limits of its templates.
#[derive(Clone, Copy)]
pub struct HookFormat<'a> {
    /// The names of the front-end's events.
    pub events: &'a [&'static str],
    /// The stages of the parameter templates (layer C alone for graphs, I then C for
    /// directives).
    pub chain: &'a Chain,
    /// The tools a hook may call.
    pub tools: &'a dyn ToolRunner,
    /// The limits of the parameter templates.
    pub limits: &'a Limits,
}

fn key(path: &FieldPath, k: &str) -> FieldPath {
    path.child(PathSeg::Key(k.to_string()))
}

fn invalid(path: &FieldPath, message: impl Into<String>) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Invalid, message).at_path(path)
}

/// A list of names for hints: `` `a`, `b`, `c` ``.
fn names(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The hint for a name not among `known`: did-you-mean when one is close, else the list.
fn suggest(name: &str, known: &[&str], what: &str) -> String {
    match did_you_mean(name, known.iter().copied()) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("{what} are {}", names(known)),
    }
}

fn object<'v>(
    value: &'v Value,
    path: &FieldPath,
    what: &str,
    src: &dyn HookSource,
) -> Result<&'v Map<String, Value>, Error> {
    value.as_object().ok_or_else(|| {
        src.locate(invalid(
            path,
            format!("{what} must be a map, not {}", a_or_an(type_name(value))),
        ))
    })
}

fn known_keys(
    map: &Map<String, Value>,
    path: &FieldPath,
    allowed: &[&str],
    what: &str,
    src: &dyn HookSource,
) -> Result<(), Error> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) => Err(src.locate_key(
            invalid(&key(path, k), format!("unknown key `{k}` in {what}")).with_hint(suggest(
                k,
                allowed,
                &format!("the keys of {what}"),
            )),
        )),
    }
}

fn text<'v>(
    map: &'v Map<String, Value>,
    path: &FieldPath,
    k: &str,
    missing: &str,
    src: &dyn HookSource,
) -> Result<&'v str, Error> {
    match map.get(k) {
        None => Err(src.locate(invalid(path, missing))),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(src.locate(invalid(
            &key(path, k),
            format!("`{k}` must be a string, not {}", a_or_an(type_name(other))),
        ))),
    }
}

/// Parses the condition of a hook (its `when:` or `condition:` value, found at `path`).
fn condition(value: &Value, path: &FieldPath, src: &dyn HookSource) -> Result<When, Error> {
    When::parse(value).map_err(|e| match e {
        WhenError::Expr(e) => src.locate(e.map_path(|p| p.under(path))),
        WhenError::Structured(m) => src.locate(invalid(path, format!("bad condition: {m}"))),
    })
}

/// Parses and compiles one hook declared at `path` of the file `src` reads: a map of
/// [`HOOK_KEYS`] (`id`, `event`, `when` or `condition`, `action: {tool, params}`). This is
/// the one hook parser of strata: directives, graphs and project hook files all read their
/// hooks through it, so the same keys mean the same thing everywhere. Every error is
/// located in the file; an unknown key is refused with a did-you-mean.
pub fn parse_hook(
    value: &Value,
    path: &FieldPath,
    format: &HookFormat<'_>,
    src: &dyn HookSource,
) -> Result<Hook, Error> {
    let map = object(value, path, "a hook", src)?;
    known_keys(map, path, &HOOK_KEYS, "a hook", src)?;
    let id = text(map, path, "id", "a hook needs an `id`", src)?;
    let event_name = text(map, path, "event", "a hook needs an `event`", src)?;
    let event = format
        .events
        .iter()
        .copied()
        .find(|e| *e == event_name)
        .ok_or_else(|| {
            src.locate(
                invalid(&key(path, "event"), format!("unknown event `{event_name}`"))
                    .with_hint(suggest(event_name, format.events, "the events")),
            )
        })?;
    if map.contains_key("when") && map.contains_key("condition") {
        return Err(src.locate(invalid(
            &key(path, "condition"),
            "a hook has `when` or `condition`, not both",
        )));
    }
    let when = match ["when", "condition"]
        .into_iter()
        .find(|k| map.contains_key(*k))
    {
        Some(k) => Some(condition(&map[k], &key(path, k), src)?),
        None => None,
    };
    let action_path = key(path, "action");
    let action = map
        .get("action")
        .ok_or_else(|| src.locate(invalid(path, "a hook needs an `action: {tool, params}`")))?;
    let action = object(action, &action_path, "a hook's `action`", src)?;
    known_keys(
        action,
        &action_path,
        &HOOK_ACTION_KEYS,
        "a hook's `action`",
        src,
    )?;
    let tool = text(
        action,
        &action_path,
        "tool",
        "a hook's `action` needs a `tool`",
        src,
    )?;
    format
        .tools
        .callable(tool)
        .map_err(|e| src.locate(e.at_path(&key(&action_path, "tool"))))?;
    let params_at = params_path(path);
    let params = action
        .get("params")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    object(&params, &params_at, "a hook's `params`", src)?;
    let params = Template::compile_owned(params, format.chain, format.limits)
        .map_err(|e| src.locate(e.map_path(|p| p.under(&params_at))))?;
    Ok(Hook {
        id: id.to_string(),
        event,
        when,
        tool: tool.to_string(),
        params,
        file: src.file().to_string(),
        path: path.clone(),
    })
}

/// Parses a list of hooks found at `path` (the `hooks:` of a directive or a graph, or a
/// project hook file holding a list) with [`parse_hook`]; two hooks with one id are an
/// error. `None` (no `hooks:`) is no hooks.
pub fn parse_hooks(
    value: Option<&Value>,
    path: &FieldPath,
    format: &HookFormat<'_>,
    src: &dyn HookSource,
) -> Result<Vec<Hook>, Error> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = value else {
        return Err(src.locate(invalid(
            path,
            format!(
                "`hooks` must be an array, not {}",
                a_or_an(type_name(value))
            ),
        )));
    };
    let mut hooks: Vec<Hook> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = path.child(PathSeg::Index(i));
        let hook = parse_hook(item, &at, format, src)?;
        if hooks.iter().any(|h| h.id == hook.id) {
            return Err(src.locate(invalid(
                &key(&at, "id"),
                format!("duplicate hook id `{}`", hook.id),
            )));
        }
        hooks.push(hook);
    }
    Ok(hooks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FakeTools, RunResult};
    use strata_doc::Format;

    const EVENTS: [&str; 2] = ["started", "done"];

    fn tools() -> FakeTools {
        FakeTools::new().tool("log", |_| Ok(RunResult::ok("")))
    }

    fn parse(yaml: &str) -> Result<Vec<Hook>, Error> {
        let limits = Limits::default();
        let doc = Document::parse("h.yaml", yaml.as_bytes().to_vec(), Format::Yaml, &limits)?;
        let chain = Chain::of(&[Layer::CONTEXT]);
        let tools = tools();
        let format = HookFormat {
            events: &EVENTS,
            chain: &chain,
            tools: &tools,
            limits: &limits,
        };
        parse_hooks(Some(&doc.value), &FieldPath::root(), &format, &doc)
    }

    fn error(yaml: &str) -> String {
        let e = parse(yaml).unwrap_err();
        let loc = e.location().unwrap();
        let hint = e.hint().as_ref().map(|h| format!(" (hint: {h})"));
        format!(
            "{}:{} {}{}",
            loc.line,
            loc.column,
            e.message(),
            hint.unwrap_or_default()
        )
    }

    #[test]
    fn when_and_condition_are_one_field() {
        let hooks = parse(
            "- {id: a, event: started, when: 'x > 1', action: {tool: log}}\n\
             - {id: b, event: done, condition: {path: x, op: exists}, action: {tool: log, params: {m: '${x}'}}}\n\
             - {id: c, event: done, action: {tool: log}}\n",
        )
        .unwrap();
        let conditions: Vec<Option<String>> = hooks
            .iter()
            .map(|h| h.when.as_ref().map(When::source))
            .collect();
        assert_eq!(
            conditions,
            [
                Some("x > 1".to_string()),
                Some(r#"{"path":"x","op":"exists"}"#.to_string()),
                None
            ]
        );
        assert_eq!(hooks[1].event, "done");
        assert_eq!(hooks[1].file, "h.yaml");
        assert_eq!(hooks[1].params_path().to_string(), "[1].action.params");
    }

    #[test]
    fn bad_hooks_are_refused_with_located_messages() {
        let cases = [
            (
                "- {id: a, event: started, whne: true, action: {tool: log}}\n",
                "1:33 unknown key `whne` in a hook (hint: did you mean `when`?)",
            ),
            (
                "- {id: a, event: started, zzz: 1, action: {tool: log}}\n",
                "1:32 unknown key `zzz` in a hook (hint: the keys of a hook are `id`, `event`, `when`, `condition`, `action`)",
            ),
            (
                "- {id: a, event: started, action: {tool: log, param: {}}}\n",
                "1:54 unknown key `param` in a hook's `action` (hint: did you mean `params`?)",
            ),
            (
                "- {id: a, event: stopped, action: {tool: log}}\n",
                "1:18 unknown event `stopped` (hint: the events are `started`, `done`)",
            ),
            (
                "- {event: started, action: {tool: log}}\n",
                "1:3 a hook needs an `id`",
            ),
            (
                "- {id: a, event: started}\n",
                "1:3 a hook needs an `action: {tool, params}`",
            ),
            (
                "- {id: a, event: started, action: {params: {}}}\n",
                "1:35 a hook's `action` needs a `tool`",
            ),
            (
                "- {id: a, event: started, when: 'x >', action: {tool: log}}\n",
                "1:37 expected a context path or a value (hint: a placeholder holds a path such as `state.items[0].name`, optionally `?? fallback`, or an expression)",
            ),
            ("- [1]\n", "1:3 a hook must be a map, not an array"),
            ("7\n", "1:1 `hooks` must be an array, not an integer"),
        ];
        for (yaml, want) in cases {
            assert_eq!(error(yaml), want, "{yaml}");
        }
    }
}
