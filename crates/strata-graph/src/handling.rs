//! What the walker does when a step fails or the step limit is reached: the `error` and
//! `limit` events, then `on_error` (`fail`, `continue`, or go to a node).

use serde_json::{json, Value};
use strata_core::{Error, ErrorKind, FieldPath, PathSeg};

use crate::checkpoint::Status;
use crate::errors::GRAPH;
use crate::events::{LogEvent, Observer, Taken};
use crate::exec::{choose, Failure};
use crate::hooks::Event;
use crate::model::{Body, OnError};
use crate::walker::{node_json, set, set_work, Run, Walker};

impl Walker<'_> {
    /// Handles the failure `f` of the step that ran node `cur`.
    pub(crate) fn failed(&self, run: &mut Run, cur: usize, f: Failure, obs: &mut dyn Observer) {
        let node = &self.graph.nodes[cur];
        if f.error.kind() == ErrorKind::Cancelled {
            return cancelled(run, node_failure(&node.id, f.at(&node.path).error));
        }
        let step = run.progress.step;
        let handling = match self.graph.on_error {
            OnError::Fail => "fail".to_string(),
            OnError::Goto(h) if h == cur => "fail".to_string(),
            OnError::Continue => "continue".to_string(),
            OnError::Goto(h) => format!("goto {}", self.graph.nodes[h].id),
        };
        let f = f.at(&node.path);
        obs.on(LogEvent::Error {
            step,
            node: node.id.clone(),
            error: f.error.clone(),
            stderr: f.stderr_tail(),
            handling: handling.clone(),
            inputs: f.work.as_ref().and_then(|w| w.inputs.clone()),
        });
        let error = context_error(f.to_json(), &node.id, step);
        let shown = handling.clone();
        self.fire(
            Event::Error,
            run,
            || {
                vec![
                    ("node", node_json(node)),
                    ("error", error.clone()),
                    ("handling", Value::from(shown)),
                ]
            },
            obs,
        );
        if handling == "fail" {
            return self.fail(run, Status::Failed, node_failure(&node.id, f.error));
        }
        set(&mut run.root, "error", Some(error));
        if let OnError::Goto(h) = self.graph.on_error {
            return self.go(run, Some(h));
        }
        set_work(&mut run.root, f.work.as_deref());
        let chosen = choose(node, &run.root, true);
        set_work(&mut run.root, None);
        let (to, taken) = chosen.unwrap_or((None, Taken::End));
        obs.on(LogEvent::Step {
            step,
            node: node.id.clone(),
            kind: node.body.kind(),
            taken,
            changes: Vec::new(),
            inputs: None,
        });
        self.go(run, to);
        if to.is_none() {
            if matches!(node.body, Body::Return(_)) {
                return self.fail(run, Status::Failed, node_failure(&node.id, f.error));
            }
            let state = run.root.get("state").cloned().unwrap_or(Value::Null);
            self.finish(run, Status::Completed, state);
        }
    }

    /// Handles the step limit, reached before node `cur`.
    pub(crate) fn limit(&self, run: &mut Run, cur: usize, obs: &mut dyn Observer) {
        let g = self.graph;
        let node = &g.nodes[cur];
        let handler = match g.on_error {
            OnError::Goto(h) if !run.progress.limit_handled => Some(h),
            _ => None,
        };
        let handling = handler.map_or("stop".to_string(), |h| format!("goto {}", g.nodes[h].id));
        let step = run.progress.step;
        obs.on(LogEvent::Limit {
            step,
            max_steps: g.max_steps,
            handling: handling.clone(),
        });
        let error = limit_error(g.max_steps, &node.id);
        self.fire(
            Event::Limit,
            run,
            || {
                vec![
                    ("node", node_json(node)),
                    ("limit", json!({"max_steps": g.max_steps, "steps": step})),
                    ("handling", Value::from(handling)),
                ]
            },
            obs,
        );
        match handler {
            Some(h) => {
                run.progress.limit_handled = true;
                run.progress.budget += g.max_steps;
                let mut error = error.to_json();
                error["result"] = Value::Null;
                error["run"] = Value::Null;
                set(
                    &mut run.root,
                    "error",
                    Some(context_error(error, &node.id, step)),
                );
                self.go(run, Some(h));
            }
            None => self.fail(run, Status::Limited, error),
        }
    }
}

/// The step limit `max_steps`, reached before node `node`: a `limit` error about the graph's
/// `max_steps`.
fn limit_error(max_steps: u64, node: &str) -> Error {
    Error::new(
        GRAPH,
        ErrorKind::Limit,
        format!("max_steps ({max_steps}) reached before node `{node}`"),
    )
    .at_path(&FieldPath(vec![PathSeg::Key("max_steps".into())]))
    .with_hint("raise the graph's `max_steps`, or handle the limit with `on_error: <node>`")
}

/// The failure of the run that node `node` ended with `error`: the same error, its message
/// naming the node (`node `fetch`: tool `t` exited with code 3`).
fn node_failure(node: &str, error: Error) -> Error {
    error.map_message(|m| format!("node `{node}`: {m}"))
}

/// What `${error…}` reads (and the `error` and `limit` hooks see): the error's JSON form
/// (`kind`, `layer`, `message`, `path`, `span`, `hint`?, …, `result`, `run`) with the node
/// and the step.
fn context_error(mut error: Value, node: &str, step: u64) -> Value {
    error["node"] = Value::from(node);
    error["step"] = Value::from(step);
    error
}

/// Ends the run as `cancelled` by `error`, the cancellation of the step that ran: the step is
/// not counted and the run stays at its node (`on_error` does not apply), so a resume runs it
/// again.
fn cancelled(run: &mut Run, error: Error) {
    run.progress.step -= 1;
    run.progress.status = Status::Cancelled;
    run.progress.failure = Some(crate::errors::error_line(&error));
    run.failure = Some(error);
}
