//! The progress lines of directives and plans, as every front-end prints them on standard
//! error: `start <id> (<tool>)` when a step's tool starts; `end <id> (<tool>): <status> in
//! <N> ms` (and `: <why>`) when it ends, `skip …` when it was skipped; `retry <id> (<tool>):
//! attempt 1 of 3 failed: <why>; again in 2s` before a step runs again; `wait <id> (<tool>):
//! needs <names>` for a step waiting for values; under a failed attempt, the last lines its
//! tool printed on standard error (`    ! <line>`). Tool text in them is escaped.

use std::time::Duration;

use serde_json::Value;
use strata_tools::{StepRecord, StepStatus};

/// The line of a step whose tool starts.
pub fn start_line(id: &str, tool: &str) -> String {
    format!("start {id} ({tool})")
}

/// The line of a step that ended with `record` after `elapsed`: `end` with the time when its
/// tool ran, `skip` with the reason when it was skipped; `status` is the record's status as
/// the line shows it (its name, coloured or not).
pub fn end_line(
    id: &str,
    tool: &str,
    record: &StepRecord,
    elapsed: Duration,
    status: &str,
) -> String {
    let head = format!("{id} ({tool})");
    // The message may quote tool text: escaped, as every printer of tool text does.
    let why = record.message().map(strata_core::escaped);
    match (record.status, &record.run) {
        (StepStatus::Skipped, _) => format!("skip {head}: {}", why.unwrap_or_default()),
        (_, Some(_)) => {
            let mut line = format!("end {head}: {status} in {} ms", elapsed.as_millis());
            if let Some(m) = why {
                line.push_str(&format!(": {m}"));
            }
            line
        }
        (_, None) => format!("end {head}: {status}: {}", why.unwrap_or_default()),
    }
}

/// The lines of a step that ended with `record` after `elapsed` ([`end_line`], `status` as it
/// shows there): its line, and under a failure the last lines its tool printed on standard
/// error.
pub fn finished_lines(
    id: &str,
    tool: &str,
    record: &StepRecord,
    elapsed: Duration,
    status: &str,
) -> Vec<String> {
    let mut lines = vec![end_line(id, tool, record, elapsed, status)];
    if record.status == StepStatus::Failed {
        lines.extend(tail_lines(record));
    }
    lines
}

/// The lines of a step whose attempt `attempt` of `attempts` failed with `record` and runs
/// again after `delay`: its line, and the last lines its tool printed on standard error.
pub fn retry_lines(
    id: &str,
    tool: &str,
    record: &StepRecord,
    attempt: u32,
    attempts: u32,
    delay: Duration,
) -> Vec<String> {
    let why = record
        .message()
        .map(strata_core::escaped)
        .unwrap_or_default();
    let mut lines = vec![format!(
        "retry {id} ({tool}): attempt {attempt} of {attempts} failed: {why}; again in {}",
        strata_core::duration_text(delay)
    )];
    lines.extend(tail_lines(record));
    lines
}

/// The line of a step that waits for the values `names`.
pub fn waiting_line(id: &str, tool: &str, names: &[String]) -> String {
    format!("wait {id} ({tool}): needs {}", ticked(names))
}

/// `` `a`, `b` ``: names as messages list them.
pub fn ticked(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The last lines the tool of `record` printed on standard error, each as it is shown under
/// the step's line.
pub fn tail_lines(record: &StepRecord) -> Vec<String> {
    record
        .stderr_tail()
        .iter()
        .flat_map(|t| t.lines())
        .map(|l| format!("    ! {}", strata_core::escaped(l)))
        .collect()
}

/// What `strata plan run` prints for a plan run's event in its JSON form (`step_started`,
/// `step_finished`, `step_retrying`, `step_waiting`, as `--json` streams them): its line,
/// and the tool's last lines on standard error under a failed attempt; `None` for anything
/// else.
pub fn event_text(event: &Value) -> Option<String> {
    let text = |key: &str| event.get(key).and_then(Value::as_str);
    let number = |key: &str| event.get(key).and_then(Value::as_u64);
    let (id, tool) = (text("id")?, text("tool")?);
    let record = || event.get("record").and_then(StepRecord::from_json);
    let lines: Vec<String> = match text("event")? {
        "step_started" => vec![start_line(id, tool)],
        "step_waiting" => {
            let names: Vec<String> = event
                .get("needs")?
                .as_array()?
                .iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect();
            vec![waiting_line(id, tool, &names)]
        }
        "step_finished" => {
            let record = record()?;
            let elapsed = Duration::from_millis(number("ms")?);
            finished_lines(id, tool, &record, elapsed, record.status.name())
        }
        "step_retrying" => {
            let record = record()?;
            let attempt = u32::try_from(number("attempt")?).ok()?;
            let attempts = u32::try_from(number("attempts")?).ok()?;
            let delay = Duration::from_millis(number("delay_ms")?);
            retry_lines(id, tool, &record, attempt, attempts, delay)
        }
        _ => return None,
    };
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn failed() -> Value {
        json!({
            "id": "s", "status": "failed", "result": null,
            "error": {"kind": "tool_failed", "message": "exit code 1"},
            "run": {"success": false, "exit_code": 1, "signal": null, "stderr": "boom\nbad\n",
                    "duration_ms": 3, "truncated": false, "timed_out": false}
        })
    }

    #[test]
    fn each_plan_event_reads_as_plan_run_prints_it() {
        let shown = |event: Value| event_text(&event);
        assert_eq!(
            shown(json!({"event": "step_started", "id": "s", "tool": "t"})).as_deref(),
            Some("start s (t)")
        );
        assert_eq!(
            shown(json!({"event": "step_waiting", "id": "s", "tool": "t", "needs": ["a", "b"]}))
                .as_deref(),
            Some("wait s (t): needs `a`, `b`")
        );
        assert_eq!(
            shown(
                json!({"event": "step_finished", "id": "s", "tool": "t", "status": "failed",
                         "ms": 12, "record": failed()})
            )
            .as_deref(),
            Some("end s (t): failed in 12 ms: exit code 1\n    ! boom\n    ! bad")
        );
        assert_eq!(
            shown(json!({"event": "step_retrying", "id": "s", "tool": "t", "attempt": 1,
                         "attempts": 3, "delay_ms": 2000, "record": failed()}))
            .as_deref(),
            Some("retry s (t): attempt 1 of 3 failed: exit code 1; again in 2s\n    ! boom\n    ! bad")
        );
        let skipped = json!({"id": "s", "status": "skipped", "result": null,
                             "error": {"kind": "skipped", "message": "`a` failed"}, "run": null});
        assert_eq!(
            shown(
                json!({"event": "step_finished", "id": "s", "tool": "t", "status": "skipped",
                         "ms": 0, "record": skipped})
            )
            .as_deref(),
            Some("skip s (t): `a` failed")
        );
        assert_eq!(
            shown(json!({"event": "run_started", "id": "s", "tool": "t"})),
            None
        );
        assert_eq!(
            shown(json!({"event": "step_finished", "id": "s", "tool": "t"})),
            None
        );
    }
}
