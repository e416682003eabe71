//! Running a directive: stages 1–2 of its templates, its actions through the one tool
//! runner, its hooks on every event, its turn and time limits.

use std::time::{Duration, Instant};

use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};
use strata_core::{
    ContextSource, Entry, Error, FieldPath, Layers, PathSeg, RenderOptions, Scope, Warning,
};
use strata_pipeline::Template;
use strata_tools::{
    fire, CallOptions, Firing, HookCall, StepError, StepRecord, StepStatus, ToolRunner,
};

use crate::hooks::{under, Event};
use crate::load::Directive;
use crate::progress::{Progress, Watch};
use crate::responses::{Chosen, Turn};

/// How to run a directive.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Render everything, run nothing.
    pub dry_run: bool,
    /// What a missing path or input does.
    pub render: RenderOptions,
    /// Values that are secret (the declared `secrets` of the tools involved): a response
    /// field holding one is refused.
    pub secrets: &'a [String],
    /// Told of each action's start and end and of each hook that fired, as they happen.
    pub watch: Watch<'a>,
}

/// How a directive ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every action ran (failures with `continue_on_error` included).
    Completed,
    /// An action failed and stopped the directive.
    Failed,
    /// A limit stopped the directive.
    Limited,
    /// Nothing ran (`--dry-run`).
    #[serde(rename = "dry run")]
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

/// What happened to one action: its rendered parameters and its step record.
///
/// Its JSON form is `{id, tool, params, status, result, error, run}`, the last three the
/// record's (null without one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionOutcome {
    /// The step id.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The rendered parameters (null when they could not be rendered or the action did
    /// not get to run).
    pub params: Value,
    /// `completed`, `failed`, `skipped` or `dry run`.
    pub status: &'static str,
    /// The step record (`{id, status, result, error, run}`); none in a dry run.
    #[serde(flatten, serialize_with = "record_outcome")]
    pub record: Option<StepRecord>,
}

/// A record's `result`, `error` and `run`, null without a record.
fn record_outcome<S: Serializer>(record: &Option<StepRecord>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Outcome<'a> {
        result: Option<&'a Value>,
        error: Option<&'a StepError>,
        run: Option<&'a Value>,
    }
    Outcome {
        result: record.as_ref().map(|r| &r.result),
        error: record.as_ref().and_then(|r| r.error.as_ref()),
        run: record.as_ref().and_then(|r| r.run.as_ref()),
    }
    .serialize(s)
}

impl ActionOutcome {
    /// Why the action failed or was skipped.
    pub fn error(&self) -> Option<&str> {
        self.record.as_ref().and_then(StepRecord::message)
    }

    /// The action as JSON: `{id, tool, params, status, result, error, run}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The directive's name.
    pub directive: String,
    /// How it ended.
    pub status: Status,
    /// Why it stopped early, when it did.
    pub stopped: Option<String>,
    /// The bound inputs.
    pub inputs: Map<String, Value>,
    /// The rendered description.
    pub description: Option<String>,
    /// The rendered body (rendered last, so `${steps…}` resolve).
    pub prompt: String,
    /// Every action, in order.
    pub actions: Vec<ActionOutcome>,
    /// Every hook that fired, in order.
    pub hooks: Vec<Firing>,
    /// Missing paths and inputs met while rendering.
    #[serde(serialize_with = "strata_tools::ser::warnings")]
    pub warnings: Vec<Warning>,
    /// The reply (`responses:`), when the directive has responses and its actions completed.
    #[serde(serialize_with = "response_json")]
    pub response: Option<Result<Chosen, Error>>,
}

/// The reply as [`Chosen`]'s form, `{error}` when it failed, null when there is none.
fn response_json<S: Serializer>(
    response: &Option<Result<Chosen, Error>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Failed<'a> {
        #[serde(serialize_with = "strata_tools::ser::error")]
        error: &'a Error,
    }
    match response {
        None => s.serialize_none(),
        Some(Ok(chosen)) => chosen.serialize(s),
        Some(Err(error)) => Failed { error }.serialize(s),
    }
}

impl Report {
    /// The report as one JSON document.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The state of one run.
struct Run<'a> {
    directive: &'a Directive,
    tools: &'a dyn ToolRunner,
    inputs: &'a Map<String, Value>,
    options: RunOptions<'a>,
    /// The tool id of each action (stage 1 done for an id an input names).
    tool_ids: Vec<String>,
    /// The namespaces every template sees: `directive`, `model`, `limits`, `inputs`.
    context: Map<String, Value>,
    /// `steps`: the record of every action that ran, by id.
    steps: Value,
    report: Report,
}

/// The event fields of an action: `{id, tool, params, index}`.
fn action_json(outcome: &ActionOutcome, index: usize) -> Value {
    json!({"id": outcome.id, "tool": outcome.tool, "params": outcome.params, "index": index})
}

/// The event fields a record adds: `result`, `run` and `error`.
fn record_fields(record: &StepRecord, extra: &mut Map<String, Value>) {
    let json = record.to_json();
    for k in ["result", "run", "error"] {
        extra.insert(k.into(), json[k].clone());
    }
}

impl Run<'_> {
    /// Renders `template` (declared at `at`) against the run's context: `extra` namespaces
    /// first, then `steps`, then the directive's own (nothing is copied).
    fn render(
        &mut self,
        template: &Template,
        extra: &[&dyn ContextSource],
        at: &FieldPath,
    ) -> Result<Value, Error> {
        let steps = Entry("steps", &self.steps);
        let mut sources: Vec<&dyn ContextSource> = extra.to_vec();
        sources.push(&steps);
        sources.push(&self.context);
        let scope = Scope {
            context: &Layers(&sources),
            inputs: self.inputs,
            ..Scope::default()
        };
        let out = template
            .render(&scope, &self.options.render)
            .map_err(|e| under(e, at))?;
        let value = out.value.into_json();
        self.report
            .warnings
            .extend(out.warnings.into_iter().map(|mut w| {
                w.path = w.path.under(at);
                w
            }));
        Ok(value)
    }

    /// Fires the hooks of `event`; their context is `event`, the event's fields, `steps` and
    /// the directive's namespaces.
    fn fire(&mut self, event: Event, extra: Map<String, Value>) {
        let name = json!(event.name());
        let event_entry = Entry("event", &name);
        let steps = Entry("steps", &self.steps);
        let context = Layers(&[&event_entry, &extra, &steps, &self.context]);
        let call = HookCall {
            tools: self.tools,
            render: self.options.render,
            dry_run: self.options.dry_run,
        };
        let firings = fire(
            self.directive.hooks.iter().map(|h| &**h),
            event.name(),
            &context,
            self.inputs,
            &call,
            &mut self.report.warnings,
        );
        for f in &firings {
            self.options.watch.on(Progress::Hook(f));
        }
        self.report.hooks.extend(firings);
    }

    /// Records the outcome of an action for `${steps.<id>…}` and the report.
    fn record(&mut self, outcome: ActionOutcome) {
        if let (Some(record), Value::Object(steps)) = (&outcome.record, &mut self.steps) {
            steps.insert(outcome.id.clone(), record.to_json());
        }
        self.report.actions.push(outcome);
    }

    fn stop(&mut self, status: Status, why: String, from: usize) {
        self.report.status = status;
        self.report.stopped = Some(why);
        for (action, tool) in self.directive.actions[from..]
            .iter()
            .zip(&self.tool_ids[from..])
        {
            let reason = "the directive stopped before this action";
            self.report.actions.push(ActionOutcome {
                id: action.spec.id.clone(),
                tool: tool.clone(),
                params: Value::Null,
                status: StepStatus::Skipped.name(),
                record: Some(StepRecord::skipped(&action.spec.id, reason)),
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

    fn elapsed_limit(&mut self, started: Instant, from: usize) {
        let elapsed = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let limit = json!(self.directive.front.limits.timeout);
        self.limit("timeout", json!(elapsed), limit, from);
    }

    fn run_actions(&mut self) {
        let directive = self.directive;
        let started = Instant::now();
        let turns = directive.front.limits.turns;
        let timeout = directive.timeout;
        for (k, action) in directive.actions.iter().enumerate() {
            if turns.is_some_and(|t| k as u64 >= t) {
                return self.limit("turns", json!(k), json!(turns), k);
            }
            let remaining = timeout.map(|t| t.saturating_sub(started.elapsed()));
            if remaining == Some(Duration::ZERO) {
                return self.elapsed_limit(started, k);
            }
            let spec = &action.spec;
            let tool = self.tool_ids[k].clone();
            let tool = tool.as_str();
            let mut outcome = ActionOutcome {
                id: spec.id.clone(),
                tool: tool.to_string(),
                params: Value::Null,
                status: StepStatus::Failed.name(),
                record: None,
            };
            let at = FieldPath(vec![
                PathSeg::Key("actions".into()),
                PathSeg::Index(k),
                PathSeg::Key("params".into()),
            ]);
            let begun = Instant::now();
            let params = match self.render(&action.params, &[], &at) {
                Ok(p) => p,
                Err(e) => {
                    let record = StepRecord::failed(&spec.id, &e);
                    self.finished(k, &record, begun);
                    outcome.record = Some(record);
                    if !self.failed(outcome, k) {
                        return;
                    }
                    continue;
                }
            };
            outcome.params = params;
            let mut extra = Map::new();
            extra.insert("action".into(), action_json(&outcome, k));
            self.fire(Event::BeforeAction, extra);
            if self.options.dry_run {
                outcome.status = "dry run";
                self.report.actions.push(outcome);
                continue;
            }
            let params = outcome.params.as_object().cloned().unwrap_or_default();
            let call = CallOptions { timeout: remaining };
            self.options.watch.on(Progress::Started {
                index: k,
                id: &spec.id,
                tool,
            });
            let begun = Instant::now();
            let record = match self.tools.run(tool, &params, &call) {
                Ok(run) => StepRecord::from_run(&spec.id, tool, &run),
                Err(e) => StepRecord::failed(&spec.id, &e),
            };
            self.finished(k, &record, begun);
            outcome.status = record.status.name();
            let completed = record.status == StepStatus::Completed;
            outcome.record = Some(record);
            if completed {
                let mut extra = Map::new();
                extra.insert("action".into(), action_json(&outcome, k));
                if let Some(record) = &outcome.record {
                    record_fields(record, &mut extra);
                }
                self.record(outcome);
                self.fire(Event::AfterAction, extra);
                continue;
            }
            if timeout.is_some_and(|t| started.elapsed() >= t) {
                let extra = self.failure_fields(&outcome, k);
                self.record(outcome);
                self.fire(Event::ActionFailed, extra);
                return self.elapsed_limit(started, k + 1);
            }
            if !self.failed(outcome, k) {
                return;
            }
        }
    }

    /// Tells the observer that action `k` ended with `record`.
    fn finished(&self, k: usize, record: &StepRecord, begun: Instant) {
        let spec = &self.directive.actions[k].spec;
        self.options.watch.on(Progress::Finished {
            index: k,
            id: &spec.id,
            tool: &self.tool_ids[k],
            record,
            elapsed: begun.elapsed(),
        });
    }

    /// The fields of `action_failed`: the action, and its record's `result`, `run`, `error`.
    fn failure_fields(&self, outcome: &ActionOutcome, k: usize) -> Map<String, Value> {
        let mut extra = Map::new();
        extra.insert("action".into(), action_json(outcome, k));
        if let Some(record) = &outcome.record {
            record_fields(record, &mut extra);
        }
        extra
    }

    /// Records a failed action and fires `action_failed`; returns whether to go on.
    fn failed(&mut self, outcome: ActionOutcome, k: usize) -> bool {
        let go_on = self.directive.actions[k].spec.continue_on_error;
        let id = outcome.id.clone();
        let why = outcome.error().unwrap_or_default().to_string();
        let extra = self.failure_fields(&outcome, k);
        self.record(outcome);
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
        let tool_ids = self.tool_ids(inputs, tools, &options.render)?;
        let mut run = Run {
            directive: self,
            tools,
            inputs,
            options,
            tool_ids,
            context,
            steps: Value::Object(Map::new()),
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
                response: None,
            },
        };
        if let Some(d) = &self.description {
            let at = FieldPath(vec![PathSeg::Key("description".into())]);
            let text = run.render(d, &[], &at)?;
            run.report.description = Some(strata_core::value_to_text(&text));
        }
        run.fire(Event::DirectiveStarted, Map::new());
        run.run_actions();
        let body = FieldPath(vec![PathSeg::Key("body".into())]);
        let prompt = run.render(&self.body, &[], &body)?;
        run.report.prompt = strata_core::value_to_text(&prompt);
        if let (Some(responses), Status::Completed) = (&self.responses, run.report.status) {
            let at = FieldPath(vec![
                PathSeg::Key("responses".into()),
                PathSeg::Key("std".into()),
            ]);
            let reply = run.render(&responses.std, &[], &at).and_then(|std| {
                let steps = Entry("steps", &run.steps);
                let turn = Turn {
                    std,
                    context: &Layers(&[&steps, &run.context]),
                    actions: &run.report.actions,
                    tools,
                    secrets: options.secrets,
                };
                crate::responses::reply(self, responses, turn)
            });
            run.report.response = Some(reply);
        }
        let mut extra = Map::new();
        extra.insert("status".into(), json!(run.report.status.name()));
        run.fire(Event::DirectiveCompleted, extra);
        Ok(run.report)
    }
}
