//! The pre-run gate and the cache of compiled tools (`strata-app`, `strata-project`), what a
//! long graph pays for them.
//!
//! * `gate_graph_step`: a graph of [`STEPS`] action steps calling `bench/true` (a tool whose
//!   command is `true`, on the shipped `runtimes/subprocess`) and a return, run in process by
//!   `App::run_graph` with a fresh `App` per run (as one `strata run graphs/loop` has), events
//!   dropped, a checkpoint every [`CHECKPOINT_EVERY`] steps: the run's time divided by its
//!   tool steps, against as many `std::process::Command::new("true").output()` in a row (the
//!   spawn every step makes), their time divided likewise; runs and rounds of spawns
//!   alternate, the median of the rounds is reported. Every step passes the gate (`App::admit`) and
//!   takes the tool from the cache; the cache's hits, misses and re-reads over the run are
//!   printed and checked: one miss per distinct id looked up (the tool, and the graph the
//!   gate asks for), no re-read, a hit per step at least. The project's files are dated an
//!   hour back first, as a project is that was not written in the last two seconds (a file
//!   younger than that is read again on every hit, by design); a run on a project just
//!   written is printed next to it.
//! * `gate_prepare_hit`: one gated `App::prepare_tool` of `bench/true` on a warm cache (the
//!   gate's remembered verdict, the invocation, stages 3–6, the spawn spec; no spawn), against
//!   the same without the gate, `Invocation::new(..).prepare()` on the same project: the
//!   difference is what the gate costs a call on a hit.
//! * `gate_cache_hit`: one `Project::compiled` of `bench/true` on a warm cache, against a
//!   `stat` of each of the two files of its chain (the floor of a hit validated by each
//!   file's identity).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Map};
use strata_app::{App, CacheStats, CallerParams, ExecOptions, GraphRun, GraphStart, Invocation};
use strata_graph::{CheckpointEvery, Silent, Status};

use crate::harness::{compare, of_calls, Measurement, Settings};
use crate::report::Report;
use crate::workloads::exec::{write, PRIMITIVE};

/// Tool steps of the graph (each an action calling `bench/true`); a return node follows.
pub const STEPS: u64 = 1_000;

/// Tool steps of the graph in smoke mode.
pub const SMOKE_STEPS: u64 = 50;

/// Steps between two synced checkpoints of the measured runs: the relaxed setting, so that
/// the `fsync`s (1–10 ms each on this machine) do not hide what the gate and the cache cost.
pub const CHECKPOINT_EVERY: u64 = 1_000;

/// The tool every step calls.
const TOOL: &str = "bench/true";

/// The graph's id.
const GRAPH: &str = "graphs/loop";

/// How far back the project's files are dated: well past the two seconds within which a
/// modification time is not trusted to identify a file's content.
const BACKDATE: Duration = Duration::from_secs(3600);

/// A graph of `steps` action steps calling [`TOOL`], counting them in `state.n`, then a
/// return of the count (`steps + 1` steps in all).
pub fn tool_loop_graph(steps: u64) -> String {
    format!(
        "kind: graph
description: calls {TOOL} {steps} times
state: {{n: 0}}
max_steps: {}
nodes:
  tick:
    kind: action
    tool: {TOOL}
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

/// A project with the shipped primitive, `bench/true` and the graph of `steps` tool steps;
/// with `backdate`, every file's modification time is set an hour back.
pub fn gate_project(steps: u64, backdate: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    write(root, "tools/runtimes/subprocess.yaml", PRIMITIVE);
    write(
        root,
        "tools/bench/true.yaml",
        "description: does nothing\nexecutor: runtimes/subprocess\nconfig:\n  command: \"true\"\n",
    );
    write(root, "tools/graphs/loop.yaml", &tool_loop_graph(steps));
    if backdate {
        let then = SystemTime::now() - BACKDATE;
        for rel in [
            "tools/runtimes/subprocess.yaml",
            "tools/bench/true.yaml",
            "tools/graphs/loop.yaml",
        ] {
            std::fs::OpenOptions::new()
                .write(true)
                .open(root.join(rel))
                .and_then(|f| f.set_modified(then))
                .expect("set the modification time");
        }
    }
    dir
}

/// The counters of `after` minus those of `before`.
fn delta(before: CacheStats, after: CacheStats) -> CacheStats {
    CacheStats {
        hits: after.hits - before.hits,
        misses: after.misses - before.misses,
        reads: after.reads - before.reads,
    }
}

/// One run of the graph through a fresh `App` on `root` (as one `strata run` makes): how long
/// it took and how the cache served it. Panics unless it completes with `steps` counted.
fn run_once(root: &Path, run_id: &str, steps: u64) -> (Duration, CacheStats) {
    let app = App::at(root).expect("a project");
    let before = app.cache_stats();
    let run = GraphRun {
        id: GRAPH.to_string(),
        start: GraphStart::New {
            run_id: run_id.to_string(),
            typed: Map::new(),
            strings: Vec::new(),
        },
        options: ExecOptions::default(),
        every: CheckpointEvery::Steps(CHECKPOINT_EVERY),
    };
    let start = Instant::now();
    let outcome = app
        .run_graph(&run, &mut Silent)
        .unwrap_or_else(|f| panic!("the graph does not run: {}", f.error()));
    let spent = start.elapsed();
    assert_eq!(
        outcome.status,
        Status::Completed,
        "the graph did not complete: {:?}",
        outcome.failure
    );
    assert_eq!(outcome.steps, steps + 1, "steps of the run");
    assert_eq!(outcome.result, json!(steps), "the graph's count");
    (spent, delta(before, app.cache_stats()))
}

/// Tool ids a run looks up in the cache: the tool, and the graph itself, which the gate asks
/// the cache for (as for any `Target::Tool`) and which never compiles as a tool, so is missed
/// once per run and then judged by the check.
const DISTINCT_IDS: u64 = 2;

/// The self-checks of one run's cache counters: one miss per distinct id looked up
/// ([`DISTINCT_IDS`]), no file read again, a hit per tool step at least.
fn check_counters(stats: CacheStats, steps: u64) {
    assert_eq!(
        stats.misses, DISTINCT_IDS,
        "misses in a run calling one tool (and the graph's own look-up by the gate): {stats:?}"
    );
    assert_eq!(
        stats.reads, 0,
        "files read again in a run of a project written an hour ago: {stats:?}"
    );
    assert!(
        stats.hits >= steps,
        "fewer hits than tool steps ({steps}): {stats:?}"
    );
}

/// A measurement per step from whole-run times.
fn per_step(times: &[Duration], steps: u64) -> Measurement {
    of_calls(times.iter().map(|t| *t / steps as u32))
}

/// Spawns `true` as a step does (`std::process::Command`, stdout and stderr piped), `n` times
/// in a row: the time of them all (measured like a run, outliers included).
fn spawn_true(n: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        let out = Command::new("true")
            .stdin(Stdio::null())
            .output()
            .expect("spawns");
        assert!(out.status.success(), "`true` failed");
    }
    start.elapsed()
}

/// Measures the graph, the gated prepare and a cache hit.
pub fn run(settings: &Settings, report: &mut Report) {
    let steps = settings.pick(STEPS, STEPS, SMOKE_STEPS);
    let rounds = settings.pick(7, 3, 1);
    let dir = gate_project(steps, true);
    let root = dir.path();

    // A first run, untimed beyond its own figure: the cache's counters of one whole run.
    let (first, stats) = run_once(root, "bench-0", steps);
    check_counters(stats, steps);
    let lookups = stats.hits + stats.misses;
    report.note(&format!(
        "gate_graph: {} tool steps (+ a return) in {:.1} ms, {:.1} µs per step; cache: {} hits, \
         {} misses, {} re-reads: hit rate {:.2}% ({:.2} look-ups per step)",
        steps,
        first.as_secs_f64() * 1e3,
        first.as_secs_f64() * 1e6 / steps as f64,
        stats.hits,
        stats.misses,
        stats.reads,
        100.0 * stats.hits as f64 / lookups as f64,
        lookups as f64 / steps as f64,
    ));

    let mut graph_times = Vec::new();
    let mut spawn_times = Vec::new();
    for round in 1..=rounds {
        let (spent, stats) = run_once(root, &format!("bench-{round}"), steps);
        check_counters(stats, steps);
        graph_times.push(spent);
        spawn_times.push(spawn_true(steps));
    }
    let graph = per_step(&graph_times, steps);
    let spawn = per_step(&spawn_times, steps);
    report.compare("gate_graph_step", &graph, "std_command", &spawn);

    // A project just written: its files are read again on every hit, by design.
    let fresh = gate_project(steps, false);
    let (fresh_time, fresh_stats) = run_once(fresh.path(), "bench-fresh", steps);
    report.note(&format!(
        "gate_graph on a project written just before the run (no backdating): {:.1} µs per \
         step, {} re-reads ({:.1} per step), {} hits, {} misses",
        fresh_time.as_secs_f64() * 1e6 / steps as f64,
        fresh_stats.reads,
        fresh_stats.reads as f64 / steps as f64,
        fresh_stats.hits,
        fresh_stats.misses,
    ));

    prepare_and_hit(settings, report, root);
}

/// `gate_prepare_hit` and `gate_cache_hit` on the project at `root`, its cache warm.
fn prepare_and_hit(settings: &Settings, report: &mut Report, root: &Path) {
    let app = App::at(root).expect("a project");
    let caller = CallerParams::default();
    let opts = ExecOptions::default();
    let gated = || {
        app.prepare_tool(TOOL, &caller, &opts)
            .unwrap_or_else(|f| panic!("prepares: {}", f.error()))
    };
    let ungated = || {
        Invocation::new(app.project(), TOOL, &caller, &opts)
            .and_then(|call| call.prepare())
            .expect("prepares")
    };
    let (_, spec) = gated();
    assert_eq!(spec.spec.program.file_name(), Some("true".as_ref()));
    ungated();
    let before = app.cache_stats();
    let (with_gate, without) = compare(settings, gated, ungated);
    let warm = delta(before, app.cache_stats());
    assert!(
        warm.misses == 0 && warm.reads == 0 && warm.hits >= 2,
        "a warm cache missed or read again: {warm:?}"
    );
    report.compare("gate_prepare_hit", &with_gate, "ungated", &without);

    let files: Vec<PathBuf> = ["tools/bench/true.yaml", "tools/runtimes/subprocess.yaml"]
        .iter()
        .map(|rel| root.join(rel))
        .collect();
    let before = app.cache_stats();
    let (hit, stat) = compare(
        settings,
        || app.compiled(TOOL).expect("compiles"),
        || {
            files
                .iter()
                .map(|f| std::fs::metadata(f).expect("stat").len())
                .sum::<u64>()
        },
    );
    let warm = delta(before, app.cache_stats());
    assert!(
        warm.misses == 0 && warm.reads == 0 && warm.hits >= 1,
        "a warm cache missed or read again: {warm:?}"
    );
    report.compare("gate_cache_hit", &hit, "stat_chain", &stat);
    report.note(&format!(
        "gate: {:.2} µs per gated call on a hit over the ungated prepare ({:.2} against {:.2} µs); \
         a cache hit {:.2} µs against {:.2} µs for a stat of each of its 2 files",
        (with_gate.median_ns - without.median_ns) / 1e3,
        with_gate.median_ns / 1e3,
        without.median_ns / 1e3,
        hit.median_ns / 1e3,
        stat.median_ns / 1e3,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backdated_files_are_an_hour_old() {
        let dir = gate_project(3, true);
        let meta = std::fs::metadata(dir.path().join("tools/bench/true.yaml")).unwrap();
        let age = SystemTime::now()
            .duration_since(meta.modified().unwrap())
            .unwrap();
        assert!(age >= BACKDATE - Duration::from_secs(60));
    }

    #[test]
    fn a_small_graph_runs_from_the_cache() {
        let dir = gate_project(5, true);
        let (_, stats) = run_once(dir.path(), "t", 5);
        check_counters(stats, 5);
    }
}
