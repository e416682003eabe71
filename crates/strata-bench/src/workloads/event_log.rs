//! The per-run event log (`events.jsonl`, `strata-runs`).
//!
//! * `event_log_graph_step`: one step of the 10,000-step gate loop of `graph_step` (no
//!   checkpoints) with every event written to a run's event log (serialized straight into
//!   its line, as a run without secrets to redact writes it; one `write` each), against
//!   the same walk with events dropped plus the 10 µs budget per step.
//! * `event_log_plan_fanout`: what the log adds to the critical path of a run of the 8 ×
//!   200 ms fan-out: its 18 events (the run's start and end, each step's start and end)
//!   appended on the scheduler's thread, and the log synced once, before the final
//!   checkpoint the run waits for; against 5 % of the run's critical path (one 200 ms
//!   sleep). The syncs before the checkpoints written while steps run happen on the
//!   checkpoint writer's thread, beside the steps. The whole run through the binary is
//!   compared with a build without the log in docs/benchmarks.md.

use std::hint::black_box;

use serde_json::{json, Map, Value};
use strata_core::RenderOptions;
use strata_graph::{Graph, LogEvent, Observer, RunStore, Silent, Status, Walker};
use strata_runs::{now_ms, EventLog, RunDir};
use strata_tools::FakeTools;

use super::graph::{load, per_step, STEPS};
use super::plans::{FANOUT, SLEEP_SECS};
use crate::harness::{measure, Measurement, Settings};
use crate::report::Report;

/// The budget per graph step, in nanoseconds.
pub const GRAPH_STEP_BUDGET_NS: f64 = 10_000.0;

/// The budget of a fan-out run's log: 5 % of its critical path, in nanoseconds.
pub const FANOUT_BUDGET_NS: f64 = SLEEP_SECS * 1e9 * 0.05;

/// Steps of the loop in smoke mode.
const SMOKE_STEPS: u64 = 100;

/// Writes every event to an event log, as a recorded run does.
struct Logged(EventLog);

impl Observer for Logged {
    fn on(&mut self, event: LogEvent) {
        self.0
            .append_object(now_ms(), &event)
            .expect("the event is written");
    }
}

fn walk(graph: &Graph, observer: &mut dyn Observer, steps: u64) {
    let tools = FakeTools::new();
    let walker = Walker::new(graph, &tools, None, RenderOptions::default());
    let out = walker
        .start("bench", Map::new(), observer)
        .expect("the loop runs");
    assert_eq!(out.status, Status::Completed);
    assert_eq!(out.steps, steps + 1);
}

/// Measures both.
pub fn run(settings: &Settings, report: &mut Report) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let store = RunStore::new(tmp.path());
    let steps = settings.pick(STEPS, STEPS, SMOKE_STEPS);
    let graph = load(tmp.path(), steps);
    let dir = store.create("graph").expect("a run directory");
    let mut logged = Logged(EventLog::open(&dir).expect("the log opens"));
    walk(&graph, &mut logged, steps);
    let lines = dir.read_events(0).expect("the log reads").events.len() as u64;
    assert_eq!(lines, steps + 3, "started, every step, finished");
    let mut bare = measure(settings, || walk(black_box(&graph), &mut Silent, steps));
    let mut with_log = measure(settings, || {
        walk(black_box(&graph), &mut logged, steps);
    });
    per_step(&mut bare, steps + 1);
    per_step(&mut with_log, steps + 1);
    report.against(
        "event_log_graph_step",
        &with_log,
        "walk_plus_budget",
        bare.median_ns + GRAPH_STEP_BUDGET_NS,
    );
    report.note(&format!(
        "event log: {:.2} µs per graph step with it, {:.2} µs without ({:.2} µs added, budget 10 µs)",
        with_log.median_ns / 1000.0,
        bare.median_ns / 1000.0,
        (with_log.median_ns - bare.median_ns) / 1000.0
    ));

    let dir = store.create("plan").expect("a run directory");
    let events = fanout_events();
    let mut log = EventLog::open(&dir).expect("the log opens");
    let with_log = measure(settings, || fanout_log(&mut log, &dir, &events));
    assert_eq!(
        dir.read_events(0).expect("the log reads").events.len() % events.len(),
        0
    );
    let bare_dir = store.create("bare").expect("a run directory");
    let bare = measure(settings, || {
        bare_dir
            .write_checkpoint(b"{}")
            .expect("the checkpoint is written")
    });
    let added = Measurement {
        median_ns: (with_log.median_ns - bare.median_ns).max(0.0),
        min_ns: (with_log.min_ns - bare.min_ns).max(0.0),
        max_ns: (with_log.max_ns - bare.max_ns).max(0.0),
        iters: with_log.iters,
    };
    report.against(
        "event_log_plan_fanout",
        &added,
        "budget_5pct",
        FANOUT_BUDGET_NS,
    );
    report.note(&format!(
        "event log of a fan-out run: {:.2} ms for its events and the final checkpoint, {:.2} ms for the checkpoint alone",
        with_log.median_ns / 1e6,
        bare.median_ns / 1e6
    ));
}

/// The events of one fan-out run, as its log holds them.
fn fanout_events() -> Vec<Value> {
    let record = json!({"id": "s0", "status": "completed", "result": "", "error": null,
        "run": {"success": true, "exit_code": 0, "signal": null, "stderr": "",
                "duration_ms": 201, "truncated": false, "timed_out": false}});
    let mut out = vec![
        json!({"event": "run_started", "kind": "plan", "run_id": "r",
        "plan": "plans/fanout.json", "resumed": false, "finished": 0}),
    ];
    for i in 0..FANOUT {
        out.push(json!({"event": "step_started", "id": format!("s{i}"),
            "tool": "plans/sleep", "arguments": {"seconds": SLEEP_SECS}}));
    }
    for i in 0..FANOUT {
        out.push(json!({"event": "step_finished", "id": format!("s{i}"),
            "tool": "plans/sleep", "status": "completed", "ms": 201, "record": record}));
    }
    out.push(json!({"event": "run_finished", "run_id": "r", "status": "completed"}));
    out
}

/// Appends a fan-out run's events, then syncs the log as the final checkpoint does.
fn fanout_log(log: &mut EventLog, dir: &RunDir, events: &[Value]) {
    for event in events {
        log.append(now_ms(), event).expect("the event is written");
    }
    dir.write_checkpoint(b"{}")
        .expect("the checkpoint is written");
}
