//! The step record: what a tool call left behind, as every front-end shows it.

use serde::Serialize;
use serde_json::Value;
use strata_core::{Error, ErrorKind};

use crate::RunResult;

/// The fields of a step record, in order: the only names a reference may use after a step id.
pub const RECORD_FIELDS: [&str; 5] = ["id", "status", "result", "error", "run"];

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// The tool ran and succeeded.
    Completed,
    /// The tool failed, or could not run, or its arguments could not be resolved.
    Failed,
    /// The step did not run because something it depends on did not complete.
    Skipped,
}

impl StepStatus {
    /// `completed`, `failed` or `skipped`.
    pub fn name(self) -> &'static str {
        match self {
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
        }
    }

    /// The status called `name`.
    pub fn from_name(name: &str) -> Option<StepStatus> {
        [
            StepStatus::Completed,
            StepStatus::Failed,
            StepStatus::Skipped,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

/// Why a step failed or was skipped: a kind to match on and a message (never holding data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepError {
    /// The error kind.
    #[serde(serialize_with = "crate::ser::kind")]
    pub kind: ErrorKind,
    /// What went wrong.
    pub message: String,
}

/// The last lines of the stderr of a step's `run` (at most 10 lines and 2 KiB, cut at a
/// character boundary), for people reading why a step failed; `None` when it printed nothing.
pub fn stderr_tail(run: &Value) -> Option<String> {
    const LINES: usize = 10;
    const BYTES: usize = 2048;
    let text = run.get("stderr")?.as_str()?.trim_end();
    if text.is_empty() {
        return None;
    }
    let mut start = text.len().saturating_sub(BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let tail: Vec<&str> = text[start..].lines().collect();
    Some(tail[tail.len().saturating_sub(LINES)..].join("\n"))
}

/// One tool call: `{id, status, result, error, run}`.
///
/// `result` is what the tool returned — its standard output parsed as JSON, or else the text
/// (one trailing newline removed; empty output is null); `run` is the rest of the process
/// outcome (`success`, `exit_code`, `signal`, `stderr`, `duration_ms`, `truncated`,
/// `timed_out`), null when the tool never ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRecord {
    /// The step id.
    pub id: String,
    /// How it ended.
    pub status: StepStatus,
    /// What the tool returned.
    pub result: Value,
    /// Why it failed or was skipped.
    pub error: Option<StepError>,
    /// The process outcome, when the tool ran.
    pub run: Option<Value>,
}

impl StepRecord {
    /// The record of a tool that ran: completed when it succeeded, failed otherwise (with a
    /// `tool_failed` or `timeout` error naming `tool`).
    pub fn from_run(id: impl Into<String>, tool: &str, run: &RunResult) -> StepRecord {
        let error = (!run.success).then(|| StepError {
            kind: if run.timed_out {
                ErrorKind::Timeout
            } else {
                ErrorKind::ToolFailed
            },
            message: run.failure_message(tool),
        });
        StepRecord {
            id: id.into(),
            status: if run.success {
                StepStatus::Completed
            } else {
                StepStatus::Failed
            },
            result: run.result(),
            error,
            run: Some(run.outcome_json()),
        }
    }

    /// The record of a step that failed without running (its arguments could not be
    /// resolved, its tool could not start); the message is the error as people read it.
    pub fn failed(id: impl Into<String>, error: &Error) -> StepRecord {
        StepRecord {
            id: id.into(),
            status: StepStatus::Failed,
            result: Value::Null,
            error: Some(StepError {
                kind: error.kind(),
                message: error.to_string(),
            }),
            run: None,
        }
    }

    /// The last lines of what the tool printed on stderr ([`stderr_tail`]).
    pub fn stderr_tail(&self) -> Option<String> {
        stderr_tail(self.run.as_ref()?)
    }

    /// The error message, when the step failed or was skipped.
    pub fn message(&self) -> Option<&str> {
        self.error.as_ref().map(|e| e.message.as_str())
    }

    /// The record of a step that did not run because of `reason`.
    pub fn skipped(id: impl Into<String>, reason: impl Into<String>) -> StepRecord {
        StepRecord {
            id: id.into(),
            status: StepStatus::Skipped,
            result: Value::Null,
            error: Some(StepError {
                kind: ErrorKind::RunState,
                message: reason.into(),
            }),
            run: None,
        }
    }

    /// The record as JSON: `{id, status, result, error, run}`, `error` being
    /// `{kind, message}` or null.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a record back from its JSON form (checkpoints, partial-resolution requests).
    pub fn from_json(value: &Value) -> Option<StepRecord> {
        let error = match value.get("error") {
            None | Some(Value::Null) => None,
            Some(e) => Some(StepError {
                kind: e
                    .get("kind")
                    .and_then(Value::as_str)
                    .and_then(ErrorKind::from_name)
                    .unwrap_or(ErrorKind::ToolFailed),
                message: e.get("message")?.as_str()?.to_string(),
            }),
        };
        Some(StepRecord {
            id: value.get("id")?.as_str()?.to_string(),
            status: StepStatus::from_name(value.get("status")?.as_str()?)?,
            result: value.get("result").cloned().unwrap_or(Value::Null),
            error,
            run: value.get("run").filter(|r| !r.is_null()).cloned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use serde_json::json;

    fn run(stdout: &str, code: i32) -> RunResult {
        RunResult {
            success: code == 0,
            exit_code: Some(code),
            signal: None,
            stdout: stdout.as_bytes().to_vec(),
            stderr: b"oops\n".to_vec(),
            stdout_truncated: false,
            stderr_truncated: false,
            timed_out: false,
            duration: Duration::from_millis(7),
        }
    }

    #[test]
    fn a_completed_step_keeps_the_parsed_output_as_its_result() {
        let record = StepRecord::from_run("count", "examples/words", &run("{\"words\": 3}\n", 0));
        assert_eq!(
            record.to_json(),
            json!({"id": "count", "status": "completed", "result": {"words": 3}, "error": null,
                   "run": {"success": true, "exit_code": 0, "signal": null, "stderr": "oops\n",
                           "duration_ms": 7, "truncated": false, "timed_out": false}})
        );
        assert_eq!(StepRecord::from_json(&record.to_json()), Some(record));
    }

    #[test]
    fn text_output_is_the_text_and_a_failure_names_the_tool() {
        let record = StepRecord::from_run("a", "x/y", &run("hello\n", 3));
        assert_eq!(record.result, json!("hello"));
        assert_eq!(record.status, StepStatus::Failed);
        assert_eq!(
            record.error,
            Some(StepError {
                kind: ErrorKind::ToolFailed,
                message: "tool `x/y` exited with code 3".into()
            })
        );
        assert_eq!(
            StepRecord::from_run("b", "t", &run("", 0)).result,
            Value::Null
        );
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_lines() {
        let long: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let mut r = run("", 1);
        r.stderr = long.into_bytes();
        let tail = StepRecord::from_run("a", "t", &r).stderr_tail().unwrap();
        assert_eq!(tail.lines().count(), 10);
        assert!(tail.starts_with("line 21\n") && tail.ends_with("line 30"));
        r.stderr = Vec::new();
        assert_eq!(StepRecord::from_run("a", "t", &r).stderr_tail(), None);
    }

    #[test]
    fn skipped_and_unresolved_steps_have_no_run() {
        let s = StepRecord::skipped("c", "step `b` failed");
        assert_eq!(
            s.to_json(),
            json!({"id": "c", "status": "skipped", "result": null,
                   "error": {"kind": "run_state", "message": "step `b` failed"}, "run": null})
        );
        let e = Error::new(
            strata_core::Layer::new("plan"),
            ErrorKind::PathNotFound,
            "no `x`",
        );
        assert_eq!(
            StepRecord::failed("d", &e).to_json()["error"],
            json!({"kind": "path_not_found", "message": "plan error at $: no `x`"})
        );
    }
}
