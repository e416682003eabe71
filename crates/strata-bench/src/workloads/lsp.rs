//! `strata lsp` through the binary, as an editor drives it over standard input and output,
//! on the generated project of [`super::check`] (1,000 tools, 200 directives) and on one tool
//! file of 50,000 lines. Each figure is the 95th percentile of the calls, against the goal:
//!
//! * `lsp_edit_diagnostics_p95`: a one-file edit (`didChange`) until that file's diagnostics
//!   are answered (a pull, which waits for the check of the edit) — goal 50 ms;
//! * `lsp_hover_during_check_p95`: a hover sent right after an edit starts a whole-project
//!   check, until it is answered — goal 20 ms;
//! * `lsp_completion_p95`: completion of a tool's parameters — goal 30 ms;
//! * `lsp_first_diagnostics_50k_lines`: the 50,000-line file opened until its diagnostics are
//!   answered — goal 1 s (the server's peak resident memory is a note; goal 200 MB);
//! * `check_whole_project`: `strata check` of the generated project, for comparison.

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{json, Value};

use super::check::generated_project;
use super::exec::{write, PRIMITIVE};
use crate::harness::{of_calls, run_strata, strata_binary, Settings};
use crate::report::Report;

/// A `strata lsp` started by the bench; killed (by its PID) when dropped.
struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: i32,
    root: String,
}

impl Server {
    fn start(bin: &Path, root: &Path) -> Server {
        let mut child = Command::new(bin)
            .arg("lsp")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("strata lsp starts");
        let input = child.stdin.take().expect("its input");
        let output = BufReader::new(child.stdout.take().expect("its output"));
        let mut server = Server {
            child,
            input,
            output,
            next_id: 0,
            root: format!("file://{}", root.display()),
        };
        let root_uri = server.root.clone();
        let init = server.request(
            "initialize",
            json!({"processId": null, "rootUri": root_uri, "capabilities": {}}),
        );
        assert!(init["capabilities"].is_object(), "initialized: {init}");
        server.notify("initialized", json!({}));
        server
    }

    fn uri(&self, relative: &str) -> String {
        format!("{}/{relative}", self.root)
    }

    fn notify(&mut self, method: &str, params: Value) {
        Message::Notification(Notification::new(method.to_string(), params))
            .write(&mut self.input)
            .expect("the server reads");
        self.input.flush().expect("the server reads");
    }

    /// Sends a request and waits for its result (notifications meanwhile are dropped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        Message::Request(Request::new(id.clone(), method.to_string(), params))
            .write(&mut self.input)
            .expect("the server reads");
        self.input.flush().expect("the server reads");
        loop {
            match Message::read(&mut self.output).expect("the server writes") {
                Some(Message::Response(r)) if r.id == id => {
                    assert!(r.error.is_none(), "{method}: {:?}", r.error);
                    return r.result.unwrap_or(Value::Null);
                }
                Some(_) => {}
                None => panic!("strata lsp closed its output during {method}"),
            }
        }
    }

    fn open(&mut self, relative: &str, text: &str) {
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
    }

    fn set(&mut self, relative: &str, text: &str, version: i32) {
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    fn diagnostics(&mut self, relative: &str) -> Vec<Value> {
        let uri = self.uri(relative);
        let report = self.request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": uri}}),
        );
        report["items"].as_array().expect("a full report").clone()
    }

    fn at(&self, relative: &str, line: u32, character: u32) -> Value {
        json!({"textDocument": {"uri": self.uri(relative)}, "position": {"line": line, "character": character}})
    }

    /// The server's peak resident memory so far, in bytes (Linux).
    fn peak_rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

    let mut server = Server::start(&bin, root);
    let all = server.request("workspace/diagnostic", json!({"previousResultIds": []}));
    assert!(all["items"].is_array(), "a workspace report: {all}");
    let (tool, text) = tool_zero(root, 0);
    server.open(&tool, &text);

    let mut edits = Vec::new();
    for n in 1..=calls {
        let (_, edited) = tool_zero(root, n);
        let began = Instant::now();
        server.set(&tool, &edited, n as i32 + 1);
        let found = server.diagnostics(&tool);
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
        server.set(&tool, &edited, (n + calls) as i32 + 1);
        let at = server.at(&tool, 12, 22);
        let began = Instant::now();
        let hover = server.request("textDocument/hover", at);
        hovers.push(began.elapsed());
        let shown = hover["contents"]["value"].as_str().unwrap_or_default();
        assert!(
            shown.starts_with("**`name`**: declared parameter"),
            "hover: {hover}"
        );
        server.diagnostics(&tool);
    }
    report.against("lsp_hover_during_check_p95", &p95(hovers), "target", 20e6);

    let mut completions = Vec::new();
    for _ in 0..calls {
        let at = server.at(&tool, 12, 22);
        let began = Instant::now();
        let items = server.request("textDocument/completion", at);
        completions.push(began.elapsed());
        let names = items.as_array().map_or(0, Vec::len);
        assert!(names > 6, "parameters offered: {items}");
    }
    report.against("lsp_completion_p95", &p95(completions), "target", 30e6);
    drop(server);

    let lines = settings.pick(50_000, 50_000, 500);
    let long = tempfile::tempdir().expect("a temporary directory");
    write(long.path(), "tools/runtimes/subprocess.yaml", PRIMITIVE);
    let mut server = Server::start(&bin, long.path());
    let text = long_tool(lines);
    let began = Instant::now();
    server.open("tools/t/long.yaml", &text);
    let found = server.diagnostics("tools/t/long.yaml");
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
