//! Loops that used to be quadratic (issue 11), each measured at doubling sizes against the
//! linear extrapolation of the size before it (twice its time): a ratio at or below 1 means
//! the cost grew no faster than the input.
//!
//! * `linear_check_unknown_<n>`: `strata check` of a tool holding one string of `n` unknown
//!   parameters (`{zz}` × n: n diagnostics, each located in the file);
//! * `linear_check_refs_<n>`: `strata check` of a tool whose config keys `k0`…`k8` hold `n`
//!   known references each, in three chains as long as the `param_links` limit allows
//!   (`k0 -> k1 -> k2 -> k9`, …; most references go straight to `k9`, a constant), nothing
//!   to report;
//! * `linear_foreach_<n>`: a graph whose foreach runs over the `n` items of its state, with
//!   a second list of `n` items beside them (every element reads the state, none copies it);
//! * `linear_render_params_<n>`: the render of a map of `n` keys whose values each name a
//!   caller parameter (`{who}`), which layer P looks up among the document's config keys
//!   first (it once scanned every key for every lookup).
//!
//! Each is measured in process, and through the `strata` binary built next to this one
//! (`cargo build --release`), when there is one: `<row>_bin` rows, one run of the binary
//! per call (its start-up included).

use std::hint::black_box;

use serde_json::{json, Map};
use strata_check::{check_project, Code};
use strata_core::{Limits, RenderOptions, Scope};
use strata_doc::Format;
use strata_graph::{Graph, Silent, Status, Walker};
use strata_pipeline::{Chain, Template};
use strata_tools::FakeTools;

use super::exec::{write, PRIMITIVE};
use crate::harness::{measure, run_strata, strata_binary, Measurement, Settings};
use crate::report::Report;

/// The sizes of the check workloads (each twice the one before).
pub const CHECK_SIZES: [usize; 4] = [1_000, 2_000, 4_000, 8_000];

/// The sizes of the foreach workload.
pub const FOREACH_SIZES: [usize; 4] = [5_000, 10_000, 20_000, 40_000];

/// The sizes of the params render workload (under the limit of 100,000 placeholders).
pub const PARAMS_SIZES: [usize; 4] = [10_000, 20_000, 40_000, 80_000];

/// The sizes of all three in smoke mode.
pub const SMOKE_SIZES: [usize; 2] = [50, 100];

/// Config keys of the refs workload that refer to others (`k0`…`k8`); `k9` is the constant
/// their chains end at.
const REFERRING_KEYS: usize = 9;

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

/// Keys `k0`…`k8` of `n` known references each, in chains of at most `links` links (the
/// `param_links` limit: a longer chain is an error, R012, that the render would report too):
/// `k<i>` refers once to `k<i+1>`, except where a chain reaches `links` links, and `n - 1`
/// times (`n` at a chain's end) to `k9`, a constant, so that a render of the tool stays
/// linear in `n`. `args` refers to `k8` (two links).
fn refs(n: usize, links: usize) -> tempfile::TempDir {
    assert!(
        links >= 2,
        "the refs workload needs param_links of 2 or more"
    );
    let leaf = format!("{{k{REFERRING_KEYS}}}");
    let keys: String = (0..=REFERRING_KEYS)
        .map(|i| {
            let value = if i == REFERRING_KEYS {
                "x".to_string()
            } else if (i + 1) % links == 0 {
                leaf.repeat(n)
            } else {
                format!("{{k{}}}{}", i + 1, leaf.repeat(n.saturating_sub(1)))
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

/// A map of `n` keys, each a string naming caller parameter `who`.
pub fn params_document(n: usize) -> String {
    (0..n).map(|i| format!("k{i}: \"v {{who}}\"\n")).collect()
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
    let check_sizes = settings.pick(&CHECK_SIZES[..], &CHECK_SIZES, &SMOKE_SIZES);
    let foreach_sizes = settings.pick(&FOREACH_SIZES[..], &FOREACH_SIZES, &SMOKE_SIZES);
    let bin = strata_binary();
    if bin.is_none() {
        report.note("no strata binary next to strata-bench: the _bin rows are skipped");
    }
    let links = limits.param_links;
    for (name, make, errors) in [
        (
            "linear_check_unknown",
            Box::new(unknown) as Box<dyn Fn(usize) -> tempfile::TempDir>,
            true,
        ),
        ("linear_check_refs", Box::new(|n| refs(n, links)), false),
    ] {
        let dirs: Vec<_> = check_sizes.iter().map(|&n| make(n)).collect();
        let in_process: Vec<Measurement> = dirs
            .iter()
            .zip(check_sizes)
            .map(|(dir, &n)| {
                let found = check_project(dir.path(), &limits).expect("checks");
                // `unknown`: one R001 per `{zz}`, nothing else; `refs`: nothing at all.
                let expected = if errors { n } else { 0 };
                let unexpected: Vec<_> = found
                    .diagnostics
                    .iter()
                    .map(|d| d.code)
                    .chain(
                        found
                            .omitted
                            .iter()
                            .flat_map(|o| o.counts.iter().map(|c| c.code)),
                    )
                    .filter(|&code| !(errors && code == Code::UnknownParam))
                    .collect();
                assert!(
                    found.total() == expected && unexpected.is_empty(),
                    "{name}_{n}: expected {expected} diagnostics{}, found {} (first unexpected: \
                     {:?})",
                    if errors { " (R001)" } else { "" },
                    found.total(),
                    unexpected.first().map(|code| code.id()),
                );
                measure(settings, || {
                    black_box(check_project(dir.path(), &limits).expect("checks"))
                })
            })
            .collect();
        rows(report, name, check_sizes, &in_process);
        if let Some(bin) = &bin {
            let code = i32::from(errors);
            let through: Vec<Measurement> = dirs
                .iter()
                .map(|dir| measure(settings, || run_strata(bin, dir.path(), &["check"], code)))
                .collect();
            rows(report, &format!("{name}_bin"), check_sizes, &through);
        }
    }
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let tools = FakeTools::new();
    let mut in_process = Vec::new();
    let mut through = Vec::new();
    for &n in foreach_sizes {
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
    rows(report, "linear_foreach", foreach_sizes, &in_process);
    if !through.is_empty() {
        rows(report, "linear_foreach_bin", foreach_sizes, &through);
    }
    params_rows(settings, report, bin.as_deref(), &limits);
}

/// The `linear_render_params` rows: in process (read, compile and render) and through the
/// binary.
fn params_rows(
    settings: &Settings,
    report: &mut Report,
    bin: Option<&std::path::Path>,
    limits: &Limits,
) {
    let sizes = settings.pick(&PARAMS_SIZES[..], &PARAMS_SIZES, &SMOKE_SIZES);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let params = Map::from_iter([("who".to_string(), json!("ada"))]);
    let scope = Scope {
        caller_params: &params,
        ..Scope::default()
    };
    let chain = Chain::full();
    let mut in_process = Vec::new();
    let mut through = Vec::new();
    for &n in sizes {
        let text = params_document(n);
        let name = format!("p{n}.yaml");
        std::fs::write(tmp.path().join(&name), &text).expect("write");
        in_process.push(measure(settings, || {
            let (_, template) = Template::read(
                &name,
                text.clone().into_bytes(),
                Format::Yaml,
                &chain,
                limits,
            )
            .expect("reads");
            let template = template.expect("compiles");
            let out = template
                .render(&scope, &RenderOptions::default())
                .expect("renders");
            assert!(out.warnings.is_empty());
            black_box(out.value.size_within(usize::MAX))
        }));
        if let Some(bin) = bin {
            through.push(measure(settings, || {
                run_strata(bin, tmp.path(), &["render", &name, "-p", "who=ada"], 0)
            }));
        }
    }
    rows(report, "linear_render_params", sizes, &in_process);
    if !through.is_empty() {
        rows(report, "linear_render_params_bin", sizes, &through);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_inputs_find_exactly_what_they_promise() {
        let limits = Limits::default();
        let found = check_project(unknown(20).path(), &limits).expect("checks");
        assert_eq!(found.diagnostics.len(), 20);
        assert!(found
            .diagnostics
            .iter()
            .all(|d| d.code == Code::UnknownParam));
        let found = check_project(refs(20, limits.param_links).path(), &limits).expect("checks");
        assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
    }

    #[test]
    fn a_refs_chain_one_link_longer_than_the_limit_is_reported() {
        let limits = Limits::default();
        let dir = refs(5, limits.param_links + 1);
        let found = check_project(dir.path(), &limits).expect("checks");
        assert!(
            found.diagnostics.iter().any(|d| d.code == Code::ParamChain),
            "{:?}",
            found.diagnostics
        );
    }
}
