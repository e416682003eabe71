//! The graph walker (`strata-graph`).
//!
//! * `graph_step`: one step of a 10,000-step loop of gate nodes (`assign` renders
//!   `${state.n + 1}`, `next` evaluates `state.n < 10000`), no checkpoints, events dropped:
//!   the walker's own overhead per step, against the 5 µs target.
//! * `graph_step_checkpointed`: one step of a 20-step loop of the same gate, checkpointing
//!   after every step (write a temporary file, fsync, rename, fsync the directory), against
//!   one bare `write_atomic` of a checkpoint-sized file: the I/O floor of a durable step.

use std::hint::black_box;
use std::path::Path;
use strata_tools::FakeTools;

use serde_json::{json, Map, Value};
use strata_core::{Limits, RenderOptions};
use strata_graph::{write_atomic, Graph, RunDir, Silent, Status, Walker};

use crate::harness::{measure, Settings};
use crate::report::Report;

/// Steps of the uncheckpointed loop.
pub const STEPS: u64 = 10_000;

/// Steps of the checkpointed loop.
pub const DURABLE_STEPS: u64 = 20;

/// The per-step budget of the requirements, in nanoseconds.
pub const TARGET_NS: f64 = 5_000.0;

/// A loop of `steps` gate steps then a return (so `steps + 1` steps in all).
pub fn loop_graph(steps: u64) -> String {
    format!(
        "kind: graph
state: {{n: 0}}
max_steps: {}
nodes:
  tick:
    kind: gate
    assign: {{n: '${{state.n + 1}}'}}
    next:
      - {{to: tick, when: 'state.n < {steps}'}}
      - to: done
  done:
    kind: return
    output: '${{state.n}}'
",
        steps + 10
    )
}

fn load(dir: &Path, steps: u64) -> Graph {
    let file = dir.join("loop.yaml");
    std::fs::write(&file, loop_graph(steps)).expect("write the graph");
    Graph::load_file(
        &file,
        "loop.yaml",
        "graphs/loop",
        &FakeTools::new(),
        &Limits::default(),
    )
    .expect("the loop graph loads")
}

fn walk(graph: &Graph, dir: Option<&RunDir>, steps: u64) -> Value {
    let tools = FakeTools::new();
    let walker = Walker::new(graph, &tools, dir.cloned(), RenderOptions::default());
    let out = walker
        .start("bench", Map::new(), &mut Silent)
        .expect("the loop runs");
    assert_eq!(out.status, Status::Completed);
    assert_eq!(out.steps, steps + 1);
    out.result
}

/// Measures both loops.
pub fn run(settings: &Settings, report: &mut Report) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let graph = load(tmp.path(), STEPS);
    assert_eq!(walk(&graph, None, STEPS), json!(STEPS));
    let mut m = measure(settings, || walk(black_box(&graph), None, STEPS));
    per_step(&mut m, STEPS + 1);
    report.against("graph_step", &m, "target", TARGET_NS);

    let durable = load(tmp.path(), DURABLE_STEPS);
    let run_dir = RunDir {
        path: tmp.path().join("run"),
    };
    std::fs::create_dir_all(&run_dir.path).expect("mkdir");
    walk(&durable, Some(&run_dir), DURABLE_STEPS);
    let size = std::fs::metadata(run_dir.file()).map_or(256, |m| m.len() as usize);
    let mut m = measure(settings, || {
        walk(black_box(&durable), Some(&run_dir), DURABLE_STEPS)
    });
    per_step(&mut m, DURABLE_STEPS + 1);
    let bytes = vec![b' '; size];
    let floor_dir = tmp.path().join("floor");
    std::fs::create_dir_all(&floor_dir).expect("mkdir");
    let floor = measure(settings, || {
        write_atomic(&floor_dir, "checkpoint.json", black_box(&bytes)).expect("write")
    });
    report.compare("graph_step_checkpointed", &m, "atomic_write", &floor);
    report.note(&format!(
        "graph: {:.2} µs per step without checkpoints ({} steps per run), {:.1} µs with a durable checkpoint of {size} bytes per step",
        report_us(report, "graph_step"),
        STEPS + 1,
        m.median_ns / 1000.0
    ));
}

/// The median of the last line of `workload`, in microseconds.
fn report_us(report: &Report, workload: &str) -> f64 {
    report
        .comparisons
        .iter()
        .rev()
        .find(|c| c.workload == workload)
        .map_or(0.0, |c| c.strata_ns / 1000.0)
}

/// Turns a per-run measurement into a per-step one.
fn per_step(m: &mut crate::harness::Measurement, steps: u64) {
    let n = steps as f64;
    m.median_ns /= n;
    m.min_ns /= n;
    m.max_ns /= n;
}
