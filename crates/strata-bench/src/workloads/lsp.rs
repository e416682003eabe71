//! `strata lsp` through the binary, as an editor drives it over standard input and output,
//! on the generated project of [`super::check`] (1,000 tools, 200 directives) and on one tool
//! file of 50,000 lines. Each figure is the 95th percentile of the calls, against the goal:
//!
//! * `lsp_edit_diagnostics_p95`: a one-file edit (`didChange`) until that file's diagnostics
//!   are answered (a pull, which waits for the check of the edit) — goal 50 ms;
//! * `lsp_hover_during_check_p95`: a hover sent right after an edit starts its
//!   check, until it is answered — goal 20 ms;
//! * `lsp_completion_p95`: completion of a tool's parameters — goal 30 ms;
//! * `lsp_first_diagnostics_50k_lines`: the 50,000-line file opened until its diagnostics are
//!   answered — goal 1 s (the server's peak resident memory is a note; goal 200 MB);
//! * `check_whole_project`: `strata check` of the generated project, for comparison.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use strata_lsp_client::Client;

use super::check::generated_project;
use super::exec::{write, PRIMITIVE};
use crate::harness::{of_calls, run_strata, strata_binary, Settings};
use crate::report::Report;

/// Sends a request and returns its result (an error fails the bench).
fn result(server: &mut Client, method: &str, params: Value) -> Value {
    let answer = server.request(method, params);
    assert!(answer.get("error").is_none(), "{method}: {answer}");
    answer["result"].clone()
}

/// The 95th percentile of `times`, as a measurement of one value.
fn p95(mut times: Vec<Duration>) -> crate::harness::Measurement {
    times.sort();
    let at = (times.len() * 95).div_ceil(100).saturating_sub(1);
    of_calls([times[at]])
}

/// The first tool of the generated project and a version of it with another default.
fn tool_zero(root: &Path, n: usize) -> (String, String) {
    let relative = "tools/gen/g00/tool0.yaml".to_string();
    let text = std::fs::read_to_string(root.join(&relative)).expect("the generated tool");
    let edited = text.replace("default: n0}", &format!("default: v{n}}}"));
    (relative, edited)
}

/// A tool whose `args` are `lines` lines long, each reading its parameter.
fn long_tool(lines: usize) -> String {
    let mut text = String::from("executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    name: {type: string}\nconfig:\n  command: echo\n  args:\n");
    for i in 0..lines {
        text.push_str(&format!("    - \"{{name}} line {i}\"\n"));
    }
    text
}

/// Measures the server on the generated project and on the long file.
pub fn run(settings: &Settings, report: &mut Report) {
    let Some(bin) = strata_binary() else {
        report.skip("lsp: no strata binary next to strata-bench");
        return;
    };
    let tools = settings.pick(super::check::TOOLS, super::check::TOOLS, 40);
    let directives = settings.pick(super::check::DIRECTIVES, super::check::DIRECTIVES, 10);
    let calls = settings.pick(40, 20, 1);
    let dir = generated_project(tools, directives);
    let root = dir.path();

    let began = Instant::now();
    run_strata(&bin, root, &["check"], 0);
    report.against(
        "check_whole_project",
        &of_calls([began.elapsed()]),
        "target",
        1e9,
    );

    let mut server = Client::start(&bin, root, Value::Null);
    let all = result(
        &mut server,
        "workspace/diagnostic",
        json!({"previousResultIds": []}),
    );
    assert!(all["items"].is_array(), "a workspace report: {all}");
    let (tool, text) = tool_zero(root, 0);
    server.open(&tool, &text);

    let mut edits = Vec::new();
    for n in 1..=calls {
        let (_, edited) = tool_zero(root, n);
        let began = Instant::now();
        server.set(&tool, &edited);
        let found = server.document_diagnostics(&tool);
        edits.push(began.elapsed());
        assert!(
            found.iter().all(|d| d["severity"] != 1),
            "the edit is clean: {found:?}"
        );
    }
    report.against("lsp_edit_diagnostics_p95", &p95(edits), "target", 50e6);

    // `label: "tool 0 for {name}"` is line 12; `{name}` starts at character 21, its name at 22.
    let mut hovers = Vec::new();
    for n in 1..=calls {
        let (_, edited) = tool_zero(root, n + calls);
        server.set(&tool, &edited);
        let at = server.at(&tool, 12, 22);
        let began = Instant::now();
        let hover = result(&mut server, "textDocument/hover", at);
        hovers.push(began.elapsed());
        let shown = hover["contents"]["value"].as_str().unwrap_or_default();
        assert!(
            shown.starts_with("**`name`**: declared parameter"),
            "hover: {hover}"
        );
        server.document_diagnostics(&tool);
    }
    report.against("lsp_hover_during_check_p95", &p95(hovers), "target", 20e6);

    let mut completions = Vec::new();
    for _ in 0..calls {
        let at = server.at(&tool, 12, 22);
        let began = Instant::now();
        let items = result(&mut server, "textDocument/completion", at);
        completions.push(began.elapsed());
        let names = items.as_array().map_or(0, Vec::len);
        assert!(names > 6, "parameters offered: {items}");
    }
    report.against("lsp_completion_p95", &p95(completions), "target", 30e6);
    drop(server);

    let lines = settings.pick(50_000, 50_000, 500);
    let long = tempfile::tempdir().expect("a temporary directory");
    write(long.path(), "tools/runtimes/subprocess.yaml", PRIMITIVE);
    let mut server = Client::start(&bin, long.path(), Value::Null);
    let text = long_tool(lines);
    let began = Instant::now();
    server.open("tools/t/long.yaml", &text);
    let found = server.document_diagnostics("tools/t/long.yaml");
    let first = began.elapsed();
    assert!(
        found.is_empty(),
        "the long file is clean: {:?}",
        found.first()
    );
    report.against(
        "lsp_first_diagnostics_50k_lines",
        &of_calls([first]),
        "target",
        1e9,
    );
    if let Some(peak) = server.peak_rss() {
        report.note(&format!(
            "lsp: {lines}-line file, server peak RSS {:.1} MB (goal 200 MB)",
            peak as f64 / 1e6
        ));
    }
}
