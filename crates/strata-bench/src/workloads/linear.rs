//! Loops that used to be quadratic (issue 11), each measured at doubling sizes against the
//! linear extrapolation of the size before it (twice its time): a ratio at or below 1 means
//! the cost grew no faster than the input.
//!
//! * `linear_check_unknown_<n>`: `strata check` of a tool holding one string of `n` unknown
//!   parameters (`{zz}` × n: n diagnostics, each located in the file);
//! * `linear_check_refs_<n>`: `strata check` of a tool whose 10 config keys hold `n` known
//!   references each (nothing to report);
//! * `linear_foreach_<n>`: a graph whose foreach runs over the `n` items of its state, with
//!   a second list of `n` items beside them (every element reads the state, none copies it).
//!
//! Each is measured in process, and through the `strata` binary built next to this one
//! (`cargo build --release`), when there is one: `<row>_bin` rows, one run of the binary
//! per call (its start-up included).

use std::hint::black_box;

use serde_json::{json, Map};
use strata_check::check_project;
use strata_core::{Limits, RenderOptions};
use strata_graph::{Graph, Silent, Status, Walker};
use strata_tools::FakeTools;

use super::exec::{write, PRIMITIVE};
use crate::harness::{measure, run_strata, strata_binary, Measurement, Settings};
use crate::report::Report;

/// The sizes of the check workloads (each twice the one before).
pub const CHECK_SIZES: [usize; 4] = [1_000, 2_000, 4_000, 8_000];

/// The sizes of the foreach workload.
pub const FOREACH_SIZES: [usize; 4] = [5_000, 10_000, 20_000, 40_000];

/// A project holding one tool with `config` (YAML lines under `config:`).
fn project(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    write(dir.path(), "tools/runtimes/subprocess.yaml", PRIMITIVE);
    write(
        dir.path(),
        "tools/t.yaml",
        &format!("executor: runtimes/subprocess\nconfig:\n  command: printf\n{config}"),
    );
    dir
}

/// One string of `n` unknown parameters.
fn unknown(n: usize) -> tempfile::TempDir {
    project(&format!("  args: [\"{}\"]\n", "{zz}".repeat(n)))
}

/// Ten config keys of `n` known references each.
fn refs(n: usize) -> tempfile::TempDir {
    let keys: String = (0..10)
        .map(|i| {
            let value = if i < 9 {
                format!("{{k{}}}", i + 1).repeat(n)
            } else {
                "x".to_string()
            };
            format!("  k{i}: \"{value}\"\n")
        })
        .collect();
    project(&format!("{keys}  args: [\"{{k8}}\"]\n"))
}

/// A graph whose foreach runs over the `n` items of its state.
pub fn foreach_graph(n: usize) -> String {
    let items: Vec<usize> = (0..n).collect();
    format!(
        "kind: graph\nstate: {{items: {}, other: {}}}\nstart: each\nnodes:\n  each:\n    kind: foreach\n    over: \"${{state.items}}\"\n    do: {{kind: gate}}\n    output: \"${{item + length(state.other)}}\"\n    collect: out\n    next: done\n  done: {{kind: return, output: \"${{length(state.out)}}\"}}\n",
        json!(items),
        json!(vec!["x"; n])
    )
}

/// Reports each row against twice the row before it.
fn rows(report: &mut Report, name: &str, sizes: &[usize], measured: &[Measurement]) {
    for (i, m) in measured.iter().enumerate().skip(1) {
        let linear = measured[i - 1].median_ns * (sizes[i] / sizes[i - 1]) as f64;
        report.against(&format!("{name}_{}", sizes[i]), m, "linear", linear);
    }
}

/// Measures every workload and prints the comparison lines.
pub fn run(settings: &Settings, report: &mut Report) {
    let limits = Limits::default();
    let bin = strata_binary();
    if bin.is_none() {
        report.note("no strata binary next to strata-bench: the _bin rows are skipped");
    }
    for (name, make, errors) in [
        (
            "linear_check_unknown",
            unknown as fn(usize) -> tempfile::TempDir,
            true,
        ),
        ("linear_check_refs", refs, false),
    ] {
        let dirs: Vec<_> = CHECK_SIZES.iter().map(|&n| make(n)).collect();
        let in_process: Vec<Measurement> = dirs
            .iter()
            .zip(CHECK_SIZES)
            .map(|(dir, n)| {
                let found = check_project(dir.path(), &limits).expect("checks");
                assert_eq!(found.diagnostics.len(), if errors { n } else { 0 });
                measure(settings, || {
                    black_box(check_project(dir.path(), &limits).expect("checks"))
                })
            })
            .collect();
        rows(report, name, &CHECK_SIZES, &in_process);
        if let Some(bin) = &bin {
            let code = i32::from(errors);
            let through: Vec<Measurement> = dirs
                .iter()
                .map(|dir| measure(settings, || run_strata(bin, dir.path(), &["check"], code)))
                .collect();
            rows(report, &format!("{name}_bin"), &CHECK_SIZES, &through);
        }
    }
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let tools = FakeTools::new();
    let mut in_process = Vec::new();
    let mut through = Vec::new();
    for n in FOREACH_SIZES {
        let file = tmp.path().join(format!("tools/g{n}.yaml"));
        write(tmp.path(), &format!("tools/g{n}.yaml"), &foreach_graph(n));
        let graph = Graph::load_file(&file, "g.yaml", "g", &tools, &limits).expect("loads");
        in_process.push(measure(settings, || {
            let walker = Walker::new(&graph, &tools, None, RenderOptions::default());
            let out = walker
                .start("bench", Map::new(), &mut Silent)
                .expect("the graph runs");
            assert_eq!(out.status, Status::Completed);
            assert_eq!(out.result, json!(n));
            out
        }));
        if let Some(bin) = &bin {
            let id = format!("g{n}");
            through.push(measure(settings, || {
                let _ = std::fs::remove_dir_all(tmp.path().join(".strata"));
                run_strata(bin, tmp.path(), &["run", &id, "--quiet"], 0)
            }));
        }
    }
    rows(report, "linear_foreach", &FOREACH_SIZES, &in_process);
    if !through.is_empty() {
        rows(report, "linear_foreach_bin", &FOREACH_SIZES, &through);
    }
}
