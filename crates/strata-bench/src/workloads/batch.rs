//! `strata render --batch` as a client uses it: the release binary next to this one serving
//! a file of small requests (one process per run, its start-up included), per request.
//!
//! * `batch_cli`: against a plain-Python server of the same protocol on the same requests
//!   (`crates/strata-py/bench/batch.py`: the regex implementation of the four layers the
//!   Python benchmarks use, no error handling, output written once at the end), its replies
//!   checked equal to strata's (target: ratio ≤ 0.02, 50× faster);
//! * `batch_cli_rate`: the same run against a budget of 300,000 requests per second
//!   (3,333 ns per request).
//!
//! The requests cycle through eight small templates of all four layers (most repeated, as a
//! client rendering the same configs for many calls does), each with its own values.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::{of_calls, strata_binary, Measurement, Settings};
use crate::report::Report;

/// The Python peer's directory (its `batch.py` imports `reference.py` beside it).
const PYTHON_BENCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../strata-py/bench");

/// Nanoseconds per request that make 300,000 requests per second.
const RATE_TARGET_NS: f64 = 1e9 / 300_000.0;

/// The eight templates, each a small tool-config-like object.
fn templates() -> [Value; 8] {
    [
        json!({"cmd": "${BIN:-run}", "args": ["{input:f}", "${state.n}", "{x}"]}),
        json!({"url": "https://{host}/api/${state.path}", "token": "${TOKEN:-none}"}),
        json!({"greeting": "hello {name}", "n": "${state.n}", "lang": "${LANG:-C}"}),
        json!({"python": "${PYTHON:-python3}", "workdir": "{project_path}/src", "args": ["-m", "ruff", "{input:f}"]}),
        json!({"cwd": "${state.path}", "env": {"HOME": "${HOME}", "MODE": "{x}"}, "retries": 2}),
        json!({"label": "{name} #{x}", "stdin": "{input:f}", "timeout": "${TIMEOUT:-30}"}),
        json!({"argv": ["{x}", "{name}", "{host}", "${BIN:-run}", "${state.n}"]}),
        json!({"plain": "no placeholders", "list": [1, 2, 3], "flag": true}),
    ]
}

/// `n` requests cycling through the templates, one JSON object per line.
pub fn requests(n: usize) -> String {
    let templates = templates();
    let mut out = String::new();
    for i in 0..n {
        let request = json!({
            "id": i,
            "template": templates[i % templates.len()],
            "env": {"BIN": format!("tool{}", i % 5), "HOME": "/home/ada", "PYTHON": "/usr/bin/python3"},
            "params": {"x": i, "name": format!("user{}", i % 7), "host": "example.org", "project_path": "/srv/app"},
            "context": {"state": {"n": i, "path": format!("p/{i}")}},
            "inputs": {"f": format!("file{i}.txt")},
        });
        out.push_str(&request.to_string());
        out.push('\n');
    }
    out
}

/// One run of `program args…` with `input` on stdin: how long it took and what it printed;
/// `None` when it could not run or failed.
fn serve(program: &Path, args: &[&str], input: &Path, dir: &Path) -> Option<(Duration, Vec<u8>)> {
    let stdin = std::fs::File::open(input).ok()?;
    let start = Instant::now();
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let spent = start.elapsed();
    out.status.success().then_some((spent, out.stdout))
}

/// `runs` runs per request: the median (and spread) of the time per request, and the output
/// of the first run.
fn measure(
    program: &Path,
    args: &[&str],
    input: &Path,
    dir: &Path,
    n: usize,
    runs: usize,
) -> Option<(Measurement, Vec<u8>)> {
    let mut first = None;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let (spent, out) = serve(program, args, input, dir)?;
        times.push(spent / n as u32);
        first.get_or_insert(out);
    }
    Some((of_calls(times), first?))
}

/// The replies of a run, parsed.
fn replies(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `batch_cli` and `batch_cli_rate`.
pub fn run(settings: &Settings, report: &mut Report) {
    let Some(strata) = strata_binary() else {
        report.note("batch_cli skipped: build the binary first (cargo build --release -p strata)");
        return;
    };
    let n = settings.pick(100_000, 20_000, 200);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("requests.jsonl");
    std::fs::write(&input, requests(n)).expect("write");
    let runs = settings.pick(15, 5, 1);
    let Some((ours, out)) = measure(&strata, &["render", "--batch"], &input, dir.path(), n, runs)
    else {
        report.check_failed(
            settings.smoke,
            "batch_cli skipped: `strata render --batch` failed",
        );
        return;
    };
    let ours_replies = replies(&out);
    if ours_replies.len() != n || ours_replies.iter().any(|r| r["ok"] != json!(true)) {
        report.check_failed(
            settings.smoke,
            "batch_cli skipped: strata did not answer every request with a value",
        );
        return;
    }
    report.against("batch_cli_rate", &ours, "target", RATE_TARGET_NS);
    let script = Path::new(PYTHON_BENCH).join("batch.py");
    let python = Path::new("python3");
    let script = script.to_string_lossy();
    match measure(
        python,
        &[&script],
        &input,
        dir.path(),
        n,
        settings.pick(5, 3, 1),
    ) {
        Some((peer, out)) if replies(&out) == ours_replies => {
            report.compare("batch_cli", &ours, "python_batch", &peer);
        }
        Some(_) => report.check_failed(
            settings.smoke,
            "batch_cli: the Python peer's replies differ from strata's",
        ),
        None => report.skip("batch_cli: the Python peer could not run (python3 missing?)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requests_are_one_object_per_line_cycling_through_the_templates() {
        let text = requests(10);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[0]["template"], lines[8]["template"]);
        assert_ne!(lines[0]["template"], lines[1]["template"]);
        assert_eq!(lines[9]["context"]["state"]["n"], json!(9));
    }
}
