//! The graph walker (`strata-graph`).
//!
//! * `graph_step`: one step of a 10,000-step loop of gate nodes (`assign` renders
//!   `${state.n + 1}`, `next` evaluates `state.n < 10000`), no checkpoints, events dropped:
//!   the walker's own overhead per step, against the 5 µs target.
//! * `graph_step_checkpointed`: one step of a 20-step loop of the same gate, checkpointing
//!   after every step (write a temporary file, fsync, rename, fsync the directory), against
//!   one bare `write_atomic` of a checkpoint-sized file: the I/O floor of a durable step.
//! * `graph_step_bin_every_<n>`: one step of the 10,000-step loop through the `strata` binary
//!   (`strata run graphs/loop --quiet --checkpoint-every <n>`: process start, loading the
//!   graph, the walk, a synced checkpoint every `n` steps and at the end), the run's time
//!   divided by its steps, against the 30 µs target of the relaxed setting.
//! * `graph_step_bin_every_step`: the same through the binary with the default, a synced
//!   checkpoint after every step (the 20-step loop), against the bare atomic write.

use std::hint::black_box;
use std::path::Path;
use strata_tools::FakeTools;

use serde_json::{json, Map, Value};
use strata_core::{Limits, RenderOptions};
use strata_graph::{write_atomic, Graph, RunDir, Silent, Status, Walker};

use crate::harness::{measure, run_strata, strata_binary, Settings};
use crate::report::Report;

/// Steps of the uncheckpointed loop.
pub const STEPS: u64 = 10_000;

/// Steps of the uncheckpointed loop in smoke mode.
pub const SMOKE_STEPS: u64 = 100;

/// Steps of the checkpointed loop.
pub const DURABLE_STEPS: u64 = 20;

/// The per-step budget of the requirements, in nanoseconds.
pub const TARGET_NS: f64 = 5_000.0;

/// The per-step budget through the binary with a relaxed checkpoint setting, in nanoseconds.
pub const RELAXED_TARGET_NS: f64 = 30_000.0;

/// The relaxed setting measured through the binary: a synced checkpoint every this many steps.
pub const RELAXED_EVERY: u64 = 1_000;

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

/// The loop graph of `steps` steps, written to `dir` and loaded.
pub(super) fn load(dir: &Path, steps: u64) -> Graph {
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
    let steps = settings.pick(STEPS, STEPS, SMOKE_STEPS);
    let graph = load(tmp.path(), steps);
    assert_eq!(walk(&graph, None, steps), json!(steps));
    let mut m = measure(settings, || walk(black_box(&graph), None, steps));
    per_step(&mut m, steps + 1);
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
        steps + 1,
        m.median_ns / 1000.0
    ));
    through_binary(settings, report, &floor, steps);
}

/// The loops through the `strata` binary (the long one of `steps` steps), when it was built
/// next to this one.
fn through_binary(
    settings: &Settings,
    report: &mut Report,
    floor: &crate::harness::Measurement,
    steps: u64,
) {
    let Some(bin) = strata_binary() else {
        report.note("no strata binary next to strata-bench: the graph_step_bin rows are skipped");
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let graphs = tmp.path().join("tools/graphs");
    std::fs::create_dir_all(&graphs).expect("mkdir");
    std::fs::write(graphs.join("loop.yaml"), loop_graph(steps)).expect("write the graph");
    std::fs::write(graphs.join("short.yaml"), loop_graph(DURABLE_STEPS)).expect("write");
    let runs = tmp.path().join(".strata");
    let every = RELAXED_EVERY.to_string();
    let mut m = measure(settings, || {
        let _ = std::fs::remove_dir_all(&runs);
        let args = [
            "run",
            "graphs/loop",
            "--quiet",
            "--checkpoint-every",
            &every,
        ];
        run_strata(&bin, tmp.path(), &args, 0)
    });
    per_step(&mut m, steps + 1);
    report.against(
        &format!("graph_step_bin_every_{RELAXED_EVERY}"),
        &m,
        "target",
        RELAXED_TARGET_NS,
    );
    let mut durable = measure(settings, || {
        let _ = std::fs::remove_dir_all(&runs);
        run_strata(&bin, tmp.path(), &["run", "graphs/short", "--quiet"], 0)
    });
    per_step(&mut durable, DURABLE_STEPS + 1);
    report.compare("graph_step_bin_every_step", &durable, "atomic_write", floor);
    report.note(&format!(
        "graph through the binary: {:.1} µs per step with a synced checkpoint every {RELAXED_EVERY} steps ({} steps per run), {:.1} µs with one after every step",
        m.median_ns / 1000.0,
        steps + 1,
        durable.median_ns / 1000.0
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
pub(super) fn per_step(m: &mut crate::harness::Measurement, steps: u64) {
    let n = steps as f64;
    m.median_ns /= n;
    m.min_ns /= n;
    m.max_ns /= n;
}
