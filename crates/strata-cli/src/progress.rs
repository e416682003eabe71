//! The progress lines of directives and plans on standard error: `start <id> (<tool>)` when
//! a step's tool starts, `end <id> (<tool>): <status> in <N> ms` (and `: <why>`) when it
//! ends, the status coloured.

use std::time::Duration;

use strata_tools::{StepRecord, StepStatus};

use crate::style::{paint, status_style};

/// The line of a step whose tool starts.
pub(crate) fn start_line(id: &str, tool: &str) -> String {
    format!("start {id} ({tool})")
}

/// The line of a step that ended with `record` after `elapsed`: `end` with the time when its
/// tool ran, `skip` with the reason when it was skipped.
pub(crate) fn end_line(id: &str, tool: &str, record: &StepRecord, elapsed: Duration) -> String {
    let head = format!("{id} ({tool})");
    let status = paint(status_style(record.status), record.status.name());
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

/// The line of a step whose attempt `attempt` of `attempts` failed with `record` and runs
/// again after `delay`: `retry <id> (<tool>): attempt 1 of 3 failed: <why>; again in 2s`.
pub(crate) fn retry_line(
    id: &str,
    tool: &str,
    record: &StepRecord,
    attempt: u32,
    attempts: u32,
    delay: Duration,
) -> String {
    let why = record
        .message()
        .map(strata_core::escaped)
        .unwrap_or_default();
    format!(
        "retry {id} ({tool}): attempt {attempt} of {attempts} failed: {why}; again in {}",
        strata_core::duration_text(delay)
    )
}

/// How a directive run shows its progress (`strata run <file>.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A line per action start and end and per hook, on standard error.
    Human,
    /// One JSON object per event (`action_started`, `action_finished`, `hook`) on standard
    /// error, the report staying one document on standard output.
    Json,
    /// Nothing but the report.
    Quiet,
}

impl Mode {
    /// The mode `--json` and `--quiet` ask for (`--quiet` wins).
    pub(crate) fn of(json: bool, quiet: bool) -> Mode {
        match (json, quiet) {
            (_, true) => Mode::Quiet,
            (true, false) => Mode::Json,
            (false, false) => Mode::Human,
        }
    }
}

impl strata_directive::Observer for Mode {
    fn on(&self, event: strata_directive::Progress<'_>) {
        use strata_directive::Progress;
        match self {
            Mode::Quiet => {}
            Mode::Json => eprintln!("{}", event.to_json()),
            Mode::Human => anstream::eprintln!(
                "{}",
                match event {
                    Progress::Started { id, tool, .. } => start_line(id, tool),
                    Progress::Finished {
                        id,
                        tool,
                        record,
                        elapsed,
                        ..
                    } => end_line(id, tool, record, elapsed),
                    Progress::Hook(f) => strata_core::escaped(&f.line()).into_owned(),
                }
            ),
        }
    }
}
