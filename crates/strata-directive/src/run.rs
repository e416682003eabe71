use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use strata_core::{Error, FieldPath, PathSeg, Scope, Warning};
use strata_pipeline::Template;

use crate::hooks::{under, Event, Hook};
use crate::load::Directive;

/// Runs tools for directives and hooks; the CLI backs it with the tool pipeline.
pub trait ToolRunner {
    /// Whether the tool exists.
    fn has_tool(&self, id: &str) -> bool;

    /// The error for an unknown tool (with a did-you-mean).
    fn unknown_tool(&self, id: &str) -> Error;

    /// Runs the tool with caller parameters; the result object has at least `success`.
    /// `timeout` caps the run when the directive's own time is running out.
    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, Error>;
}

/// How to run a directive.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Render everything, run nothing.
    pub dry_run: bool,
}

/// How a directive ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every action ran (failures with `continue_on_error` included).
    Completed,
    /// An action failed and stopped the directive.
    Failed,
    /// A limit stopped the directive.
    Limited,
    /// Nothing ran (`--dry-run`).
    DryRun,
}

impl Status {
    /// The status name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Limited => "limited",
            Status::DryRun => "dry run",
        }
    }
}

/// What happened to one action.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionOutcome {
    /// The step id.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The rendered parameters (null when the action did not get to run).
    pub params: Value,
    /// `ok`, `failed`, `not run` or `dry run`.
    pub status: &'static str,
    /// The tool's result object.
    pub result: Option<Value>,
    /// Why it failed or did not run.
    pub error: Option<String>,
}

/// One hook that fired.
#[derive(Debug, Clone, PartialEq)]
pub struct HookFiring {
    /// The hook's id.
    pub id: String,
    /// The event.
    pub event: &'static str,
    /// The tool.
    pub tool: String,
    /// The rendered parameters.
    pub params: Value,
    /// `ok`, `failed` or `dry run`.
    pub status: &'static str,
    /// The tool's result object.
    pub result: Option<Value>,
    /// Why it failed.
    pub error: Option<String>,
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The directive's name.
    pub directive: String,
    /// The bound inputs.
    pub inputs: Map<String, Value>,
    /// The rendered description.
    pub description: Option<String>,
    /// The rendered body (rendered last, so `${steps…}` resolve).
    pub prompt: String,
    /// Every action, in order.
    pub actions: Vec<ActionOutcome>,
    /// Every hook that fired, in order.
    pub hooks: Vec<HookFiring>,
    /// How it ended.
    pub status: Status,
    /// Why it stopped early, when it did.
    pub stopped: Option<String>,
    /// Missing paths and inputs met while rendering.
    pub warnings: Vec<Warning>,
}

fn opt(v: &Option<impl Into<Value> + Clone>) -> Value {
    v.clone().map_or(Value::Null, Into::into)
}

impl Report {
    /// The report as one JSON document.
    pub fn to_json(&self) -> Value {
        let actions: Vec<Value> = self
            .actions
            .iter()
            .map(|a| json!({"id": a.id, "tool": a.tool, "params": a.params, "status": a.status, "result": opt(&a.result), "error": opt(&a.error)}))
            .collect();
        let hooks: Vec<Value> = self
            .hooks
            .iter()
            .map(|h| json!({"id": h.id, "event": h.event, "tool": h.tool, "params": h.params, "status": h.status, "result": opt(&h.result), "error": opt(&h.error)}))
            .collect();
        let warnings: Vec<Value> = self
            .warnings
            .iter()
            .map(strata_pipeline::batch::warning_json)
            .collect();
        json!({
            "directive": self.directive,
            "status": self.status.name(),
            "stopped": opt(&self.stopped),
            "inputs": self.inputs,
            "description": opt(&self.description),
            "prompt": self.prompt,
            "actions": actions,
            "hooks": hooks,
            "warnings": warnings,
        })
    }
}

/// The state of one run.
struct Run<'a> {
    directive: &'a Directive,
    tools: &'a dyn ToolRunner,
    inputs: &'a Map<String, Value>,
    options: RunOptions,
    context: Map<String, Value>,
    steps: Map<String, Value>,
    report: Report,
}

fn error_value(message: &str, result: Option<&Value>) -> Value {
    let mut e = json!({"message": message});
    if let Some(code) = result.and_then(|r| r.get("exit_code")) {
        e["exit_code"] = code.clone();
    }
    e
}

/// Where a hook's parameters are, for warnings: `hooks.<id>.action.params` of its file.
fn hook_path(hook: &Hook) -> FieldPath {
    FieldPath(vec![
        PathSeg::Key(format!("hook {} ({})", hook.id, hook.file)),
        PathSeg::Key("params".into()),
    ])
}

/// Why a tool result counts as a failure.
fn failure(result: &Value) -> Option<String> {
    if result.get("success") == Some(&Value::Bool(true)) {
        return None;
    }
    if result.get("timed_out") == Some(&Value::Bool(true)) {
        return Some("the tool timed out".into());
    }
    Some(match result.get("exit_code") {
        Some(Value::Number(n)) => format!("the tool exited with code {n}"),
        _ => "the tool failed".into(),
    })
}

impl Run<'_> {
    fn render(
        &mut self,
        template: &Template,
        extra: &Map<String, Value>,
        at: &FieldPath,
    ) -> Result<Value, Error> {
        let mut context = self.context.clone();
        context.insert("steps".into(), Value::Object(self.steps.clone()));
        context.extend(extra.clone());
        let context = Value::Object(context);
        let scope = Scope {
            context: &context,
            inputs: self.inputs,
            ..Scope::default()
        };
        let out = template.render(&scope, false).map_err(|e| under(e, at))?;
        self.report
            .warnings
            .extend(out.warnings.into_iter().map(|mut w| {
                w.path = w.path.under(at);
                w
            }));
        Ok(out.value.into_json())
    }

    fn fire(&mut self, event: Event, extra: Map<String, Value>) {
        let directive = self.directive;
        for hook in directive.hooks.iter().filter(|h| h.event == event) {
            let mut context = self.context.clone();
            context.insert("event".into(), json!(event.name()));
            context.insert("steps".into(), Value::Object(self.steps.clone()));
            context.extend(extra.clone());
            let firing = self.fire_one(hook, event, &Value::Object(context), &extra);
            if let Some(firing) = firing {
                self.report.hooks.push(firing);
            }
        }
    }

    fn fire_one(
        &mut self,
        hook: &Hook,
        event: Event,
        context: &Value,
        extra: &Map<String, Value>,
    ) -> Option<HookFiring> {
        let mut firing = HookFiring {
            id: hook.id.clone(),
            event: event.name(),
            tool: hook.tool.clone(),
            params: Value::Null,
            status: "failed",
            result: None,
            error: None,
        };
        if let Some(condition) = &hook.condition {
            match condition.eval(context) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    firing.error = Some(format!("condition: {e}"));
                    return Some(firing);
                }
            }
        }
        let params = match self.render(&hook.params, extra, &hook_path(hook)) {
            Ok(p) => p,
            Err(e) => {
                firing.error = Some(e.to_string());
                return Some(firing);
            }
        };
        firing.params = params.clone();
        if self.options.dry_run {
            firing.status = "dry run";
            return Some(firing);
        }
        let params = params.as_object().cloned().unwrap_or_default();
        match self.tools.run(&hook.tool, &params, None) {
            Ok(result) => {
                firing.error = failure(&result);
                firing.status = if firing.error.is_none() {
                    "ok"
                } else {
                    "failed"
                };
                firing.result = Some(result);
            }
            Err(e) => firing.error = Some(e.message.clone()),
        }
        Some(firing)
    }

    fn stop(&mut self, status: Status, why: String, from: usize) {
        self.report.status = status;
        self.report.stopped = Some(why);
        for action in &self.directive.actions[from..] {
            self.report.actions.push(ActionOutcome {
                id: action.spec.id.clone(),
                tool: action.spec.tool.clone(),
                params: Value::Null,
                status: "not run",
                result: None,
                error: None,
            });
        }
    }

    fn limit(&mut self, code: &str, current: Value, limit: Value, from: usize) {
        let mut extra = Map::new();
        extra.insert("limit_code".into(), json!(code));
        extra.insert("current_value".into(), current.clone());
        extra.insert("limit".into(), limit.clone());
        self.fire(Event::LimitReached, extra);
        self.stop(
            Status::Limited,
            format!("limit `{code}` reached ({current} of {limit})"),
            from,
        );
    }

    fn run_actions(&mut self) {
        let directive = self.directive;
        let started = Instant::now();
        let turns = directive.front.limits.turns;
        let timeout = directive.front.limits.timeout.map(Duration::from_secs_f64);
        for (k, action) in directive.actions.iter().enumerate() {
            if turns.is_some_and(|t| k as u64 >= t) {
                return self.limit("turns", json!(k), json!(turns), k);
            }
            let remaining = timeout.map(|t| t.saturating_sub(started.elapsed()));
            if remaining == Some(Duration::ZERO) {
                let elapsed = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
                return self.limit(
                    "timeout",
                    json!(elapsed),
                    json!(directive.front.limits.timeout),
                    k,
                );
            }
            let spec = &action.spec;
            let mut outcome = ActionOutcome {
                id: spec.id.clone(),
                tool: spec.tool.clone(),
                params: Value::Null,
                status: "failed",
                result: None,
                error: None,
            };
            let at = FieldPath(vec![
                PathSeg::Key("actions".into()),
                PathSeg::Index(k),
                PathSeg::Key("params".into()),
            ]);
            let params = match self.render(&action.params, &Map::new(), &at) {
                Ok(p) => p,
                Err(e) => {
                    outcome.error = Some(e.to_string());
                    if !self.failed(outcome, None, k) {
                        return;
                    }
                    continue;
                }
            };
            outcome.params = params.clone();
            let mut extra = Map::new();
            extra.insert(
                "action".into(),
                json!({"id": spec.id, "tool": spec.tool, "params": params, "index": k}),
            );
            self.fire(Event::BeforeAction, extra.clone());
            if self.options.dry_run {
                outcome.status = "dry run";
                self.report.actions.push(outcome);
                continue;
            }
            let params = params.as_object().cloned().unwrap_or_default();
            match self.tools.run(&spec.tool, &params, remaining) {
                Ok(result) => {
                    let why = failure(&result);
                    self.steps.insert(spec.id.clone(), json!({"result": result, "status": if why.is_none() { "ok" } else { "failed" }}));
                    outcome.result = Some(result.clone());
                    extra.insert("result".into(), result.clone());
                    match why {
                        None => {
                            outcome.status = "ok";
                            self.report.actions.push(outcome);
                            self.fire(Event::AfterAction, extra);
                        }
                        Some(why) => {
                            outcome.error = Some(why.clone());
                            extra.insert("error".into(), error_value(&why, Some(&result)));
                            if timeout.is_some_and(|t| started.elapsed() >= t) {
                                self.report.actions.push(outcome);
                                self.fire(Event::ActionFailed, extra);
                                let elapsed =
                                    (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
                                let limit = json!(directive.front.limits.timeout);
                                return self.limit("timeout", json!(elapsed), limit, k + 1);
                            }
                            if !self.failed(outcome, Some(extra), k) {
                                return;
                            }
                        }
                    }
                }
                Err(e) => {
                    self.steps.insert(spec.id.clone(), json!({"result": null, "status": "failed", "error": {"message": e.message}}));
                    outcome.error = Some(e.message.clone());
                    extra.insert("error".into(), error_value(&e.message, None));
                    if !self.failed(outcome, Some(extra), k) {
                        return;
                    }
                }
            }
        }
    }

    /// Records a failed action and fires `action_failed`; returns whether to go on.
    fn failed(
        &mut self,
        outcome: ActionOutcome,
        extra: Option<Map<String, Value>>,
        k: usize,
    ) -> bool {
        let go_on = self.directive.actions[k].spec.continue_on_error;
        let id = outcome.id.clone();
        let why = outcome.error.clone().unwrap_or_default();
        self.report.actions.push(outcome);
        let extra = extra.unwrap_or_else(|| {
            let mut m = Map::new();
            m.insert("error".into(), error_value(&why, None));
            m
        });
        self.fire(Event::ActionFailed, extra);
        if !go_on {
            self.stop(
                Status::Failed,
                format!("action `{id}` failed: {why}"),
                k + 1,
            );
        }
        go_on
    }
}

impl Directive {
    /// Runs the directive with bound inputs (see [`Directive::bind_inputs`]).
    pub fn run(
        &self,
        inputs: &Map<String, Value>,
        tools: &dyn ToolRunner,
        options: RunOptions,
    ) -> Result<Report, Error> {
        let limits = &self.front.limits;
        let mut context = Map::new();
        context.insert("directive".into(), json!(self.front.name));
        context.insert(
            "model".into(),
            self.front.model.clone().unwrap_or_else(|| json!({})),
        );
        context.insert(
            "limits".into(),
            json!({"turns": limits.turns, "timeout": limits.timeout}),
        );
        context.insert("inputs".into(), Value::Object(inputs.clone()));
        let mut run = Run {
            directive: self,
            tools,
            inputs,
            options,
            context,
            steps: Map::new(),
            report: Report {
                directive: self.front.name.clone(),
                inputs: inputs.clone(),
                description: None,
                prompt: String::new(),
                actions: Vec::new(),
                hooks: Vec::new(),
                status: if options.dry_run {
                    Status::DryRun
                } else {
                    Status::Completed
                },
                stopped: None,
                warnings: Vec::new(),
            },
        };
        if let Some(d) = &self.description {
            let at = FieldPath(vec![PathSeg::Key("description".into())]);
            run.report.description = Some(strata_core::value_to_text(&run.render(
                d,
                &Map::new(),
                &at,
            )?));
        }
        run.fire(Event::DirectiveStarted, Map::new());
        run.run_actions();
        let prompt = run.render(
            &self.body,
            &Map::new(),
            &FieldPath(vec![PathSeg::Key("body".into())]),
        )?;
        run.report.prompt = strata_core::value_to_text(&prompt);
        let status = run.report.status.name();
        let mut extra = Map::new();
        extra.insert("status".into(), json!(status));
        run.fire(Event::DirectiveCompleted, extra);
        Ok(run.report)
    }
}
