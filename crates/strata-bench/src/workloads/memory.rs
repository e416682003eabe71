//! What a large document costs through the `strata` binary: time and peak resident memory.
//!
//! * `memory_render_10mb_bin`: `strata render doc.yaml` of a 10 MiB YAML map (about 160,000
//!   string leaves of ten words, a `${HOME}` in every third: within the default limits of
//!   100,000 placeholders per document), its JSON written to /dev/null; wall time of one run
//!   against the 1 s budget.
//! * `memory_render_10mb_rss_bin`: the peak resident memory of the same runs, in **bytes**
//!   (not nanoseconds: `strata_ns` and `peer_ns` hold bytes on this row), against 8× the
//!   document's size (`peer=8x_input`).
//!
//! * `scaling_render_decade_bin`: the same render against 10.5× the render of the document a
//!   tenth its size (1 MB), run alternately with it: the growth per decade through the binary.
//! * `memory_render_10mb_json_rss_bin`: the peak of `strata render doc.json`, the same map
//!   written as JSON, against 8× its size.
//! * `memory_long_strings_rss_bin`: the peak of `strata render` of a 10 MiB map of long strings
//!   (160 strings of 64 KiB, a `${HOME}` in each), against 8× its size.
//! * `memory_limit_refused_bin` / `memory_limit_refused_rss_bin`: a 10 MiB document with a
//!   `${HOME}` in every leaf (over 100,000 placeholders, the default limit): the time until
//!   strata refuses it (exit code 1) against 50 ms, and its peak memory against 20 MB.
//!
//! All use the median of runs; the peaks are GNU time's (see `harness::run_rss`).

use std::time::Duration;

use crate::harness::{
    of_calls, run_rss_code, run_strata_rss, strata_binary, Measurement, Settings,
};
use crate::report::Report;

/// Size of the document.
pub const LEN: usize = 10 << 20;
/// Size of the document in smoke mode.
const SMOKE_LEN: usize = 256 << 10;
/// The wall-time budget of one render, in nanoseconds.
const TIME_TARGET_NS: f64 = 1e9;
/// Runs of the binary measured (one per sample).
const RUNS_QUICK: usize = 5;

/// A YAML map of `len` bytes: keys `k<i>`, strings of ten words, `${HOME}` in every third.
pub fn document(len: usize) -> String {
    config_map(len, Syntax::Yaml)
}

/// The syntax a document generator writes.
#[derive(Clone, Copy, PartialEq)]
enum Syntax {
    Yaml,
    Json,
}

/// The map of [`document`], of at least `len` bytes, in YAML or in JSON (an entry a line).
fn config_map(len: usize, syntax: Syntax) -> String {
    const WORDS: [&str; 8] = [
        "the", "engine", "renders", "config", "values", "into", "text", "tools",
    ];
    let mut out = String::with_capacity(len + 128);
    if syntax == Syntax::Json {
        out.push('{');
    }
    let mut i = 0usize;
    while out.len() < len {
        let words: Vec<&str> = (0..10)
            .map(|w| WORDS[(i * 7 + w * 3) % WORDS.len()])
            .collect();
        let hole = if i.is_multiple_of(3) { " ${HOME}" } else { "" };
        let value = format!("{}{hole}", words.join(" "));
        match syntax {
            Syntax::Yaml => out.push_str(&format!("k{i}: \"{value}\"\n")),
            Syntax::Json if i == 0 => out.push_str(&format!("\n\"k{i}\": \"{value}\"")),
            Syntax::Json => out.push_str(&format!(",\n\"k{i}\": \"{value}\"")),
        }
        i += 1;
    }
    if syntax == Syntax::Json {
        out.push_str("\n}\n");
    }
    out
}

/// A YAML map of `len` bytes of strings of 64 KiB of words, a `${HOME}` in each.
pub fn long_strings(len: usize) -> String {
    let mut line = String::new();
    while line.len() < 64 << 10 {
        line.push_str("the engine renders config values ");
    }
    let mut out = String::with_capacity(len + line.len() + 64);
    let mut i = 0usize;
    while out.len() < len {
        out.push_str(&format!("k{i}: \"{line}${{HOME}}\"\n"));
        i += 1;
    }
    out
}

/// A YAML map of `len` bytes with a `${HOME}` in every leaf.
pub fn dense(len: usize) -> String {
    let mut out = String::with_capacity(len + 64);
    let mut i = 0usize;
    while out.len() < len {
        out.push_str(&format!("k{i}: \"x ${{HOME}}\"\n"));
        i += 1;
    }
    out
}

/// The most a render may grow from a document to one ten times its size (issue 26: ≤ 10.5×).
const DECADE_TARGET: f64 = 10.5;

/// The time budget of the refusal of a document over the placeholder limit, in nanoseconds.
const REFUSAL_TARGET_NS: f64 = 50e6;
/// The memory budget of that refusal, in bytes.
const REFUSAL_RSS_TARGET: f64 = 20e6;

/// Measures the render's time and peak memory.
pub fn run(settings: &Settings, report: &mut Report) {
    let Some(bin) = strata_binary() else {
        report.note("no strata binary next to strata-bench: the memory rows are skipped");
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let text = document(settings.pick(LEN, LEN, SMOKE_LEN));
    std::fs::write(tmp.path().join("doc.yaml"), &text).expect("write");
    // The same document a decade smaller, run alternately with the big one, for the growth
    // of a render through the binary from 1 MB to 10 MB.
    let small = document(text.len() / 10);
    std::fs::write(tmp.path().join("small.yaml"), &small).expect("write");
    let runs = settings.pick(settings.samples, RUNS_QUICK, 1);
    let mut small_times = Vec::with_capacity(runs);
    let (times, peaks): (Vec<Duration>, Vec<u64>) = (0..runs)
        .map(|_| {
            let home = [("HOME", "/home/ada")];
            small_times.push(run_strata_rss(&bin, tmp.path(), &["render", "small.yaml"], &home).0);
            run_strata_rss(&bin, tmp.path(), &["render", "doc.yaml"], &home)
        })
        .unzip();
    let time = of_calls(times);
    let small_time = of_calls(small_times);
    report.against(
        "scaling_render_decade_bin",
        &time,
        "10.5x_tenth",
        DECADE_TARGET * small_time.median_ns,
    );
    report.against("memory_render_10mb_bin", &time, "target", TIME_TARGET_NS);
    let rss: Measurement = of_calls(peaks.iter().map(|b| Duration::from_nanos(*b)));
    report.against(
        "memory_render_10mb_rss_bin",
        &rss,
        "8x_input",
        8.0 * text.len() as f64,
    );
    report.note(&format!(
        "memory: a {:.1} MB document renders in {:.0} ms with a peak of {:.0} MB ({:.1}× its size)",
        text.len() as f64 / 1e6,
        time.median_ns / 1e6,
        rss.median_ns / 1e6,
        rss.median_ns / text.len() as f64
    ));
    let peak_of = |file: &str, text: &str| {
        std::fs::write(tmp.path().join(file), text).expect("write");
        let env = [("HOME", "/home/ada")];
        let peaks: Vec<u64> = (0..runs)
            .map(|_| run_strata_rss(&bin, tmp.path(), &["render", file], &env).1)
            .collect();
        of_calls(peaks.iter().map(|b| Duration::from_nanos(*b)))
    };
    for (row, file, text) in [
        (
            "memory_render_10mb_json_rss_bin",
            "doc.json",
            config_map(settings.pick(LEN, LEN, SMOKE_LEN), Syntax::Json),
        ),
        (
            "memory_long_strings_rss_bin",
            "long.yaml",
            long_strings(settings.pick(LEN, LEN, SMOKE_LEN)),
        ),
    ] {
        let rss = peak_of(file, &text);
        report.against(row, &rss, "8x_input", 8.0 * text.len() as f64);
    }
    let over = dense(settings.pick(LEN, LEN, SMOKE_LEN));
    std::fs::write(tmp.path().join("dense.yaml"), &over).expect("write");
    // In smoke mode the small document is under the default limit: the limit is lowered so
    // that it is refused all the same.
    let limit_env = [
        ("HOME", "/home/ada"),
        (
            "STRATA_LIMITS_PLACEHOLDERS_PER_DOCUMENT",
            if settings.smoke { "100" } else { "100000" },
        ),
    ];
    let refusals: Vec<(Duration, u64)> = (0..runs)
        .map(|_| {
            let (spent, peak, code) = run_rss_code(
                &bin,
                tmp.path(),
                &["render", "dense.yaml"],
                &limit_env,
                None,
            );
            assert_eq!(
                code,
                Some(2),
                "a document over the placeholder limit is refused"
            );
            (spent, peak)
        })
        .collect();
    let time = of_calls(refusals.iter().map(|r| r.0));
    let rss = of_calls(refusals.iter().map(|r| Duration::from_nanos(r.1)));
    report.against(
        "memory_limit_refused_bin",
        &time,
        "target",
        REFUSAL_TARGET_NS,
    );
    report.against(
        "memory_limit_refused_rss_bin",
        &rss,
        "target",
        REFUSAL_RSS_TARGET,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON form holds the YAML form's entries (as many as fit the same size).
    #[test]
    fn the_json_document_is_the_yaml_one() {
        let yaml = strata_doc::Document::yaml_value(&config_map(4096, Syntax::Yaml)).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&config_map(4096, Syntax::Json)).unwrap();
        let (yaml, json) = (yaml.as_object().unwrap(), json.as_object().unwrap());
        assert!(json.len() > 50 && yaml.len() > 50);
        assert!(json.iter().zip(yaml).all(|(j, y)| j == y));
        assert_eq!(
            json["k3"],
            "into the config text engine values tools renders into the ${HOME}"
        );
    }
}
