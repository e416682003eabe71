//! What the walker does when a step fails or the step limit is reached: the `error` and
//! `limit` events, then `on_error` (`fail`, `continue`, or go to a node).

use serde_json::{json, Value};

use crate::checkpoint::Status;
use crate::events::{LogEvent, Observer, Taken};
use crate::exec::{choose, Failure};
use crate::hooks::Event;
use crate::model::{Body, OnError};
use crate::walker::{node_json, set, set_work, Run, Walker};

impl Walker<'_> {
    /// Handles the failure `f` of the step that ran node `cur`.
    pub(crate) fn failed(&self, run: &mut Run, cur: usize, f: Failure, obs: &mut dyn Observer) {
        let node = &self.graph.nodes[cur];
        let step = run.progress.step;
        let handling = match self.graph.on_error {
            OnError::Fail => "fail".to_string(),
            OnError::Goto(h) if h == cur => "fail".to_string(),
            OnError::Continue => "continue".to_string(),
            OnError::Goto(h) => format!("goto {}", self.graph.nodes[h].id),
        };
        obs.on(LogEvent::Error {
            step,
            node: node.id.clone(),
            kind: f.kind,
            message: f.message.clone(),
            stderr: f.stderr_tail(),
            handling: handling.clone(),
        });
        let (result, run_json) = match &f.work {
            Some(w) => (w.result.clone(), w.run.clone().unwrap_or(Value::Null)),
            None => (Value::Null, Value::Null),
        };
        let error = json!({"kind": "error", "node": node.id, "step": step,
                           "message": f.message, "result": result, "run": run_json});
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
            run.progress.failure = Some(format!("node `{}`: {}", node.id, f.message));
            return self.finish(run, Status::Failed, Value::Null);
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
        });
        self.go(run, to);
        if to.is_none() {
            if matches!(node.body, Body::Return(_)) {
                run.progress.failure = Some(format!("node `{}`: {}", node.id, f.message));
                return self.finish(run, Status::Failed, Value::Null);
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
        let message = format!(
            "max_steps ({}) reached before node `{}`",
            g.max_steps, node.id
        );
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
                let error = json!({"kind": "limit", "node": node.id, "step": step,
                                   "message": message, "result": null, "run": null});
                set(&mut run.root, "error", Some(error));
                self.go(run, Some(h));
            }
            None => {
                run.progress.failure = Some(message);
                self.finish(run, Status::Limited, Value::Null);
            }
        }
    }
}
