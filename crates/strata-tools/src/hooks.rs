//! Hooks: a tool call fired on a named event when its condition holds, its parameters a
//! template rendered against the event's context. Directives and graphs declare hooks in
//! their own file formats, and fire them all through [`fire`].

use serde_json::{Map, Value};
use strata_context::When;
use strata_core::{ContextSource, FieldPath, PathSeg, RenderOptions, Scope, Warning};
use strata_pipeline::Template;

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
        serde_json::json!({"event": "hook", "id": self.id, "on": self.event,
            "tool": self.tool, "status": self.status, "error": self.error})
    }

    /// The firing as JSON: `{id, event, tool, params, status, result, error, run}`.
    pub fn to_json(&self) -> Value {
        let record = self.record.as_ref().map(StepRecord::to_json);
        let field = |k: &str| record.as_ref().map_or(Value::Null, |r| r[k].clone());
        serde_json::json!({
            "id": self.id,
            "event": self.event,
            "tool": self.tool,
            "params": self.params,
            "status": self.status,
            "result": field("result"),
            "error": self.error,
            "run": field("run"),
        })
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
                    firing.error = Some(format!("condition `{}`: {}", when.source(), e.message));
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
                let mut e = e;
                e.path = e.path.under(&hook.params_path());
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
