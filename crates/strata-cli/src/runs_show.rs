//! `strata runs show <id>`: one run from its checkpoint — what it runs, its status and times,
//! its inputs, state, result and errors (graphs), or each step's record (plans, directives).

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;
use strata_app::Project;
use strata_core::{value_to_text, Error, ErrorKind, Layer};
use strata_runs::{utc_text, RunDir, RunStore};
use strata_tools::{StepRecord, StepStatus};

use crate::runs_table::{bare_status, rows, STARTED};
use crate::style::{paint, status_style};

/// Options of `strata runs show`.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The run id (`strata runs` lists them)
    #[arg(add = crate::complete::run_ids())]
    pub(crate) run_id: String,
}

/// Runs `strata runs show`.
/// With `json` (`--json`), the checkpoint is printed as it is stored.
pub(crate) fn run(project: &Project, store: &RunStore, args: &ShowArgs, json: bool) -> ExitCode {
    match show(store, args, json) {
        Ok(text) => {
            crate::output::print_styled(&text);
            ExitCode::SUCCESS
        }
        Err(e) => crate::outcome::report(strata_app::Failure::Error(e), Some(project), json),
    }
}

/// `  name:     value`, a line of the run shown.
fn push_field(out: &mut String, name: &str, value: &str) {
    out.push_str(&format!("  {:<9} {value}\n", format!("{name}:")));
}

/// A run whose directory holds no checkpoint: its status and when the directory was made
/// (with `json`, `{"run_id", "status", "started"}`).
fn bare(store: &RunStore, id: &str, json: bool) -> String {
    let dir = RunDir {
        path: store.dir.join(id),
    };
    let (status, at) = (bare_status(&dir), dir.created());
    if json {
        let value = serde_json::json!({"run_id": id, "status": status, "started": at});
        return serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
    }
    let what = if status == STARTED {
        "started, no checkpoint: stopped before its first one, nothing of it ran"
    } else {
        "running, no checkpoint yet"
    };
    let mut out = format!("run {id}\n");
    push_field(&mut out, "status", what);
    push_field(&mut out, "started", &utc_text(at));
    out
}

fn show(store: &RunStore, args: &ShowArgs, json: bool) -> Result<String, Error> {
    if store.unstarted(&args.run_id) {
        return Ok(bare(store, &args.run_id, json));
    }
    let dir = store.open(&args.run_id)?;
    let bytes = dir.read_checkpoint()?;
    let cp: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::RunState,
            format!(
                "the checkpoint of run `{}` cannot be read: {e}",
                args.run_id
            ),
        )
        .with_source(e)
    })?;
    if json {
        return Ok(serde_json::to_string_pretty(&cp).unwrap_or_default() + "\n");
    }
    // The status as `strata runs` shows it (a `running` run no process holds is interrupted).
    let status = rows(store)
        .into_iter()
        .find(|r| r.id() == args.run_id)
        .map_or_else(|| value_to_text(&cp["status"]), |r| r.status().to_string());
    let mut out = format!("run {}\n", args.run_id);
    let mut field = |name: &str, value: String| push_field(&mut out, name, &value);
    let mut records: Vec<StepRecord> = cp["records"]
        .as_array()
        .map(|rs| rs.iter().filter_map(StepRecord::from_json).collect())
        .unwrap_or_default();
    // A plan's steps in plan order (the checkpoint keeps them in the order they finished);
    // a streamed plan, whose whole text is not kept, in the order they finished.
    let order: Vec<String> = strata_plans::checkpoint::load_plan(&dir)
        .ok()
        .and_then(|v| strata_plans::Plan::from_value(&v, &strata_core::FieldPath::root()).ok())
        .map(|plan| plan.steps.into_iter().map(|s| s.id).collect())
        .unwrap_or_default();
    records.sort_by_key(|r| {
        order
            .iter()
            .position(|id| *id == r.id)
            .unwrap_or(usize::MAX)
    });
    if cp.get("plan").is_some() {
        field("plan", value_to_text(&cp["plan"]));
        let total = cp["steps"].as_u64().unwrap_or(0);
        let done = records.len();
        field(
            "status",
            format!("{status}, {done} of {total} steps finished"),
        );
    } else if let Some(directive) = cp.get("directive") {
        field("directive", value_to_text(directive));
        let total = cp["steps"].as_u64().unwrap_or(0);
        let done = records.len();
        field(
            "status",
            format!("{status}, {done} of {total} actions finished"),
        );
    } else {
        field("graph", value_to_text(&cp["graph"]));
        let done = cp["step"].as_u64().unwrap_or(0);
        let unit = if done == 1 { "step" } else { "steps" };
        field("status", format!("{status} after {done} {unit}"));
    }
    if let Some(node) = cp["node"].as_str() {
        field("next", format!("`{node}`"));
    }
    field("started", utc_text(cp["started"].as_u64().unwrap_or(0)));
    field("updated", utc_text(cp["updated"].as_u64().unwrap_or(0)));
    for name in ["inputs", "values", "state", "result", "failure"] {
        match cp.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) if m.is_empty() => {}
            Some(v) => field(name, value_to_text(v)),
        }
    }
    if let Some(e) = cp.get("error").filter(|e| !e.is_null()) {
        let message = e
            .get("message")
            .map_or_else(|| value_to_text(e), value_to_text);
        field("error", message);
        stderr_lines(&mut out, e.get("stderr").and_then(Value::as_str));
    }
    if !records.is_empty() {
        out.push_str("steps:\n");
    }
    for r in &records {
        out.push_str(&format!(
            "  [{}] {}",
            paint(status_style(r.status), r.status.name()),
            r.id
        ));
        if let Some(m) = r.message() {
            out.push_str(&format!(": {m}"));
        }
        out.push('\n');
        if r.status == StepStatus::Failed {
            stderr_lines(&mut out, r.stderr_tail().as_deref());
        }
    }
    timeline(&mut out, &dir)?;
    Ok(out)
}

/// The run's timeline from its event log (none without one): one line per event, its time
/// in milliseconds since the first. A foreach's elements are summed up rather than listed
/// (a run may have thousands): its failed elements are named, the first
/// [`FAILED_ELEMENTS_SHOWN`] of them (and as many retries of their tools), and one `elements`
/// line counts them all when they end.
fn timeline(out: &mut String, dir: &RunDir) -> Result<(), Error> {
    let events = dir.read_events(0)?.events;
    let Some(first) = events.first().and_then(|(_, e)| e["ts"].as_u64()) else {
        return Ok(());
    };
    out.push_str("timeline:\n");
    let mut line = |ts: Option<u64>, text: String| {
        let at = ts.unwrap_or(first).saturating_sub(first);
        out.push_str(&format!("  {:>9}  {text}\n", format!("+{at} ms")));
    };
    let mut open: Option<Elements> = None;
    for (_, e) in &events {
        let ts = e["ts"].as_u64();
        match e["event"].as_str() {
            Some("foreach_started") => {
                if let Some(done) = open.take() {
                    line(done.last, done.summary());
                }
                open = Some(Elements::new(e));
                line(ts, event_text(e));
            }
            Some("element_started") => {}
            Some("action_retrying") if e.get("index").is_some() => match open.as_mut() {
                Some(elements) => {
                    elements.retries += 1;
                    if elements.retries <= FAILED_ELEMENTS_SHOWN {
                        line(ts, event_text(e));
                    }
                }
                None => line(ts, event_text(e)),
            },
            Some("element_finished") => {
                let Some(elements) = open.as_mut() else {
                    continue;
                };
                elements.last = ts;
                if e["status"] == "failed" {
                    elements.failed += 1;
                    if elements.failed <= FAILED_ELEMENTS_SHOWN {
                        line(ts, event_text(e));
                    }
                } else {
                    elements.done += 1;
                }
            }
            _ => {
                if let Some(done) = open.take() {
                    line(done.last, done.summary());
                }
                line(ts, event_text(e));
            }
        }
    }
    if let Some(done) = open.take() {
        line(done.last, done.summary());
    }
    Ok(())
}

/// How many failed elements of one foreach the timeline names (and how many retries of its
/// elements' tools).
const FAILED_ELEMENTS_SHOWN: u64 = 10;

/// The elements of the foreach the timeline is in: how many, how many ended and how.
struct Elements {
    step: String,
    node: String,
    count: u64,
    done: u64,
    failed: u64,
    /// The retries of the elements' tools so far.
    retries: u64,
    last: Option<u64>,
}

impl Elements {
    /// The elements a `foreach_started` event announces, none ended yet.
    fn new(e: &Value) -> Elements {
        Elements {
            step: value_to_text(&e["step"]),
            node: value_to_text(&e["node"]),
            count: e["count"].as_u64().unwrap_or(0),
            done: 0,
            failed: 0,
            retries: 0,
            last: e["ts"].as_u64(),
        }
    }

    /// `elements 2 more: 1 done, 1 failed, 1 not run`.
    fn summary(&self) -> String {
        let rest = self.count.saturating_sub(self.done + self.failed);
        let parts: Vec<String> = [
            (self.done, "done"),
            (self.failed, "failed"),
            (rest, "not run"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let counts = if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        };
        let line = format!("elements {} {}: {counts}", self.step, self.node);
        strata_core::escaped(&line).into_owned()
    }
}

/// One event of the log as a line: its name, then what it is about.
fn event_text(e: &Value) -> String {
    let text = |k: &str| value_to_text(&e[k]);
    let name = text("event");
    let about = match name.as_str() {
        "run_started" if e["resumed"] == true => format!("resumed {}", text("plan")),
        "run_started" if e.get("directive").is_some() => text("directive"),
        "run_started" => text("plan"),
        "action_started" => format!("{} ({})", text("id"), text("tool")),
        "action_finished" => format!(
            "{} ({}): {} in {} ms",
            text("id"),
            text("tool"),
            text("status"),
            text("elapsed_ms")
        ),
        "hook" => format!("{} on {}", text("id"), text("on")),
        "step_started" => format!("{} ({})", text("id"), text("tool")),
        "step_finished" => format!(
            "{} ({}): {} in {} ms",
            text("id"),
            text("tool"),
            text("status"),
            text("ms")
        ),
        "step_waiting" => format!("{} ({}): needs {}", text("id"), text("tool"), text("needs")),
        "run_finished" => text("status"),
        "started" => format!("{} at `{}`", text("graph"), text("node")),
        "step" => {
            let to = e["edge"]["to"].as_str().map_or("end", |t| t);
            let when = e["edge"]["when"]
                .as_str()
                .map_or_else(String::new, |w| format!(" (when {w})"));
            format!(
                "{} {} ({}) -> {to}{when}",
                text("step"),
                text("node"),
                text("kind")
            )
        }
        "error" => format!(
            "{} {}: {}",
            text("step"),
            text("node"),
            value_to_text(&e["error"]["message"])
        ),
        "finished" => format!("{} after {} steps", text("status"), text("steps")),
        "foreach_started" => format!(
            "{} {}: {} elements",
            text("step"),
            text("node"),
            text("count")
        ),
        "action_retrying" => {
            let element = e
                .get("index")
                .map_or_else(String::new, |i| format!("[{}]", value_to_text(i)));
            format!(
                "{} {}{element}: attempt {} of {} failed: {}; again in {} ms",
                text("step"),
                text("node"),
                text("attempt"),
                text("attempts"),
                value_to_text(&e["error"]["message"]),
                text("delay_ms")
            )
        }
        "element_finished" => format!(
            "{} {}[{}]: {} ({})",
            text("step"),
            text("node"),
            text("index"),
            text("status"),
            text("error")
        ),
        _ => String::new(),
    };
    let line = format!("{name} {about}");
    strata_core::escaped(line.trim_end()).into_owned()
}

/// The lines of a failed tool's stderr tail, as `    ! line`.
fn stderr_lines(out: &mut String, tail: Option<&str>) {
    for line in tail.iter().flat_map(|t| t.lines()) {
        out.push_str(&format!("    ! {}\n", strata_core::escaped(line)));
    }
}
