//! The work of one node: rendering its templates against the context, calling its tool or
//! running its foreach, computing its assignments and choosing its edge.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use strata_core::{ContextSource, Error, ErrorKind, FieldPath, RenderOptions, Scope, Warning};
use strata_pipeline::Template;

use crate::errors::{error_from_json, GRAPH};
use crate::events::{Change, ElementEvent, Taken, Why};
use crate::fields::{index, key};
use crate::model::{Body, Node};
use strata_tools::{CallOptions, Retries, StepRecord, ToolRunner};

/// Why a node failed: the error (its kind, message — never holding data — and where: the
/// field of the graph file, the template file), and the step record when a tool ran.
///
/// Its JSON form is the error's ([`Error::to_json`]) with `result` and `run` after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// What went wrong.
    #[serde(flatten, serialize_with = "strata_tools::ser::error")]
    pub error: Error,
    /// The tool call, when the failure is a tool that ran and failed.
    #[serde(flatten, serialize_with = "work_fields")]
    pub work: Option<Box<Work>>,
}

/// A failure's `result` and `run`, null when no tool ran.
fn work_fields<S: Serializer>(work: &Option<Box<Work>>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Fields<'a> {
        result: Option<&'a Value>,
        run: Option<&'a Value>,
    }
    Fields {
        result: work.as_ref().map(|w| &w.result),
        run: work.as_ref().and_then(|w| w.run.as_ref()),
    }
    .serialize(s)
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure { error, work: None }
    }
}

impl Failure {
    /// The last lines the failed tool printed on stderr, when a tool ran.
    pub fn stderr_tail(&self) -> Option<String> {
        strata_tools::stderr_tail(self.work.as_ref()?.run.as_ref()?)
    }

    /// The failure as JSON: the error's form ([`Error::to_json`]: `kind`, `layer`,
    /// `message`, `path`, `span`, `hint`?, `file`?, `line`?, `column`?) with `result` and
    /// `run` of the tool that failed (null when none ran).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a failure back from [`Failure::to_json`]'s form (`kind` and `message` are
    /// required).
    pub fn from_json(value: &Value) -> Option<Failure> {
        let error = error_from_json(value)?;
        let run = value.get("run").filter(|r| !r.is_null()).cloned();
        let result = value.get("result").cloned().unwrap_or(Value::Null);
        let work = (run.is_some() || !result.is_null()).then(|| {
            Box::new(Work {
                result,
                run,
                inputs: None,
            })
        });
        Some(Failure { error, work })
    }

    /// A failure of kind `invalid` (a value the node made is not what it must be) with a
    /// message only.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure::of(ErrorKind::Invalid, message)
    }

    /// A failure of `kind` in the [`GRAPH`] layer with a message only.
    pub fn of(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure::from(Error::new(GRAPH, kind, message))
    }

    /// The failure about the field at `path` of the graph file, unless it already names a
    /// field (the innermost wins).
    pub fn at(mut self, path: &FieldPath) -> Failure {
        self.error = self.error.at_path(path);
        self
    }
}

/// What a node's work produced: its `result` (a tool's parsed output, a foreach's list of
/// outputs) and, for a tool call, its `run` (the process outcome of the step record).
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    /// The node's `result`.
    pub result: Value,
    /// The node's `run`, when a tool ran.
    pub run: Option<Value>,
    /// The parameters the tool was called with, rendered, when a tool ran (for the run's
    /// event log; not part of the context or of a failure's JSON form).
    pub inputs: Option<Value>,
}

impl Work {
    /// The work of a tool call with `inputs`.
    fn of(record: StepRecord, inputs: Value) -> Work {
        Work {
            result: record.result,
            run: record.run,
            inputs: Some(inputs),
        }
    }
}

/// What node work needs: the tools and what a missing path does.
#[derive(Clone, Copy)]
pub(crate) struct Exec<'a> {
    /// Runs the tools.
    pub tools: &'a dyn ToolRunner,
    /// What a missing context path does.
    pub options: RenderOptions,
    /// The project's prompt templates, for prompt nodes.
    pub prompts: Option<&'a strata_prompts::PromptManager>,
    /// The declared `retries` of the tools the actions call, by tool.
    pub retries: &'a BTreeMap<String, Retries>,
    /// Where a foreach's elements and an action's retries report, and the step they run in.
    pub elements: Option<(&'a dyn crate::events::Elements, u64)>,
    /// The element the work is for, when it runs a foreach's body.
    pub index: Option<usize>,
}

impl Exec<'_> {
    /// Renders `template` (declared at `at`) against `root`.
    pub fn render(
        &self,
        template: &Template,
        root: &dyn ContextSource,
        at: &FieldPath,
        warnings: &mut Vec<Warning>,
    ) -> Result<Value, Failure> {
        let scope = Scope {
            context: root,
            ..Scope::default()
        };
        let out = template.render(&scope, &self.options).map_err(|e| {
            let path = e.path().under(at);
            Failure::from(
                e.map_message(|m| format!("{m} (at {path})"))
                    .with_path(path),
            )
        })?;
        warnings.extend(out.warnings.into_iter().map(|mut w| {
            w.path = w.path.under(at);
            w
        }));
        Ok(out.value.into_json())
    }

    /// Runs what the node does before assigning: its tool, or its foreach. Returns the
    /// node's work (`None` for gates and returns).
    pub fn work(
        &self,
        node: &Node,
        root: &dyn ContextSource,
        warnings: &mut Vec<Warning>,
    ) -> Result<Option<Work>, Failure> {
        match &node.body {
            Body::Action(a) => {
                let params = self.render(&a.params, root, &key(&node.path, "params"), warnings)?;
                let Value::Object(params) = params else {
                    return Err(Failure::new("`params` must render to a map")
                        .at(&key(&node.path, "params")));
                };
                let tool_at = key(&node.path, "tool");
                let (success, record) = self.call(node, &a.tool, &params, &tool_at)?;
                if !a.allow_failure && !success {
                    return Err(Failure {
                        error: tool_error(&record, &tool_at),
                        work: Some(Box::new(Work::of(record, Value::Object(params)))),
                    });
                }
                Ok(Some(Work::of(record, Value::Object(params))))
            }
            Body::Foreach(f) => crate::foreach::run(self, node, f, root, warnings).map(|list| {
                Some(Work {
                    result: list,
                    run: None,
                    inputs: None,
                })
            }),
            Body::Prompt(p) => crate::prompt::run(self, node, p, root, warnings).map(Some),
            Body::Gate(_) | Body::Return(_) => Ok(None),
        }
    }

    /// Calls the tool of action `node` (declared at `at`) with `params`, again while it runs
    /// and fails and its `retries` allow — each retry reported and made after the declared
    /// delay (cut short when the run is cancelled), before the node's `allow_failure` or the graph's `on_error` sees a failure, as
    /// a plan's step is retried ([`strata_tools::Retries::again`]). Whether the last attempt
    /// succeeded, and its record, whose `run` says `attempts` and `retries` when the tool
    /// declares retries. A tool that could not run fails at once.
    fn call(
        &self,
        node: &Node,
        tool: &str,
        params: &Map<String, Value>,
        at: &FieldPath,
    ) -> Result<(bool, StepRecord), Failure> {
        let retries = self.retries.get(tool).copied();
        let mut attempt = 1;
        loop {
            let run = self
                .tools
                .run(tool, params, &CallOptions::default())
                .map_err(|e| {
                    let e = e.map_message(|m| format!("tool `{tool}`: {m}"));
                    Failure::from(e).at(at)
                })?;
            let mut record = StepRecord::from_run(&node.id, tool, &run);
            let Some(policy) = retries else {
                return Ok((run.success, record));
            };
            if let Some(Value::Object(fields)) = &mut record.run {
                policy.note(fields, attempt);
            }
            let Some(delay) = policy.again(attempt).filter(|_| !run.success) else {
                return Ok((run.success, record));
            };
            if let Some((sink, step)) = self.elements {
                sink.element(ElementEvent::ActionRetrying {
                    step,
                    node: node.id.clone(),
                    index: self.index,
                    tool: tool.to_string(),
                    attempt,
                    attempts: policy.limit + 1,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    error: tool_error(&record, at),
                    stderr: record.run.as_ref().and_then(strata_tools::stderr_tail),
                });
            }
            strata_tools::wait_to_retry(self.tools, delay);
            attempt += 1;
        }
    }

    /// The node's assignments (and a foreach's `collect`), rendered against `root`: every
    /// value sees the state as it was before the node.
    pub fn assignments(
        &self,
        node: &Node,
        root: &dyn ContextSource,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<(String, Value)>, Failure> {
        let mut out = Vec::new();
        if let Body::Foreach(f) = &node.body {
            if let (Some(k), Some(result)) = (&f.collect, root.namespace("result")) {
                out.push((k.clone(), result.clone()));
            }
        }
        let Some(assign) = node.body.assign() else {
            return Ok(out);
        };
        let Some(template) = &assign.template else {
            return Ok(out);
        };
        let Value::Object(values) =
            self.render(template, root, &key(&node.path, "assign"), warnings)?
        else {
            return Err(
                Failure::new("`assign` must render to a map").at(&key(&node.path, "assign"))
            );
        };
        out.extend(values);
        Ok(out)
    }
}

/// The error of a tool that ran and failed, from its record, about the field at `at`.
fn tool_error(record: &StepRecord, at: &FieldPath) -> Error {
    let kind = record
        .error
        .as_ref()
        .map_or(ErrorKind::ToolFailed, |e| e.kind);
    let message = record.message().unwrap_or_default().to_string();
    Error::new(GRAPH, kind, message).at_path(at)
}

/// The state map inside the context (the walker always builds the context with one).
pub(crate) fn state_mut(root: &mut Value) -> Option<&mut Map<String, Value>> {
    root.get_mut("state").and_then(Value::as_object_mut)
}

/// Writes assignments into the state of `root`; returns every write with the value it
/// replaced.
pub(crate) fn apply(root: &mut Value, values: Vec<(String, Value)>) -> Vec<Change> {
    match state_mut(root) {
        Some(state) => assign(state, values),
        None => Vec::new(),
    }
}

/// Writes assignments into `state`; returns every write with the value it replaced.
pub(crate) fn assign(state: &mut Map<String, Value>, values: Vec<(String, Value)>) -> Vec<Change> {
    values
        .into_iter()
        .map(|(k, v)| {
            let from = state.insert(k.clone(), v.clone());
            Change {
                key: k,
                from,
                to: v,
            }
        })
        .collect()
}

/// Undoes [`apply`].
pub(crate) fn rollback(root: &mut Value, changes: Vec<Change>) {
    let Some(state) = state_mut(root) else {
        return;
    };
    for c in changes.into_iter().rev() {
        match c.from {
            Some(v) => {
                state.insert(c.key, v);
            }
            None => {
                state.remove(&c.key);
            }
        }
    }
}

/// Chooses the node's edge against `root`. With `lenient`, a condition that cannot be
/// evaluated counts as false; otherwise it fails the step.
pub(crate) fn choose(
    node: &Node,
    root: &dyn ContextSource,
    lenient: bool,
) -> Result<(Option<usize>, Taken), Failure> {
    let only = node.next.len() == 1;
    for (i, edge) in node.next.iter().enumerate() {
        let why = match &edge.when {
            None if only => Why::Next,
            None => Why::Otherwise,
            Some(w) => match w.eval(root) {
                Ok(true) => Why::When(w.source()),
                Ok(false) => continue,
                Err(_) if lenient => continue,
                Err(e) => {
                    let e = e.map_message(|m| {
                        format!(
                            "condition `{}` of the edge to `{}` failed: {m}",
                            w.source(),
                            edge.target,
                        )
                    });
                    let at = key(&index(&key(&node.path, "next"), i), "when");
                    return Err(Failure::from(e).at(&at));
                }
            },
        };
        return Ok((
            Some(edge.to),
            Taken::Edge {
                to: edge.target.clone(),
                why,
            },
        ));
    }
    Ok((None, Taken::End))
}
