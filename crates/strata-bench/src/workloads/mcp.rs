//! `strata mcp` as an agent's client uses it: the binary next to this one serving a project
//! over stdio, one JSON-RPC line per request.
//!
//! * `mcp_call`: a `tools/call` of a tool that runs `true`, one call at a time, against the
//!   same call through `strata run --batch` (target: ratio ≤ 1.2);
//! * `mcp_list_1000`: `tools/list` of a 1,000-tool project, the server up (target: 50 ms);
//! * `mcp_start_list_1000`: from starting the server to the answer of its first `tools/list`
//!   (the catalog read at start), against the same target;
//! * `mcp_call_100_at_once`: 100 calls sent at once, per call, against the same 100 one at a
//!   time.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::{of_calls, strata_binary, Measurement, Settings};
use crate::report::Report;

/// `strata mcp` or `strata run --batch` with a line client on its standard input and output;
/// killed when dropped.
struct Line {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Line {
    fn start(strata: &Path, dir: &Path, args: &[&str]) -> Line {
        let mut child = Command::new(strata)
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("strata starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Line {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .expect("write a request");
        self.stdin.flush().expect("flush");
    }

    /// The next line that answers a request (notifications skipped).
    fn reply(&mut self) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).expect("read") > 0,
                "the server closed"
            );
            let value: Value = serde_json::from_str(&line).expect("a JSON line");
            if value.get("id").is_some() || value.get("ok").is_some() {
                return value;
            }
        }
    }

    /// The MCP handshake (2025-11-25).
    fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "strata-bench", "version": "1"}}}),
        );
        assert!(self.reply()["result"].is_object(), "initialize");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(id: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "true", "arguments": {}}})
}

/// A project with a tool that runs `true` and `extra` more tools under `gen/`.
fn project(dir: &Path, extra: usize) {
    let tools = dir.join("tools");
    std::fs::create_dir_all(tools.join("runtimes")).expect("mkdir");
    std::fs::create_dir_all(tools.join("gen")).expect("mkdir");
    std::fs::write(
        tools.join("runtimes/subprocess.yaml"),
        "description: the primitive\nconfig:\n  args: []\n  timeout: 60\n",
    )
    .expect("write");
    std::fs::write(
        tools.join("true.yaml"),
        "description: Does nothing\nexecutor: runtimes/subprocess\nread_only: true\nconfig:\n  command: \"true\"\n",
    )
    .expect("write");
    for i in 0..extra {
        std::fs::write(
            tools.join(format!("gen/t{i:04}.yaml")),
            format!(
                "description: Generated tool {i}\nexecutor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    message: {{type: string, default: m{i}}}\nconfig:\n  command: printf\n  args: [\"%s\", \"{{message}}\"]\n"
            ),
        )
        .expect("write");
    }
}

/// `n` calls one at a time through `line`, per call (`mcp` says which protocol).
fn one_at_a_time(line: &mut Line, n: usize, mcp: bool) -> Duration {
    let start = Instant::now();
    for i in 0..n {
        if mcp {
            line.send(&call(i));
            let reply = line.reply();
            assert_eq!(reply["result"]["isError"], json!(false), "{reply}");
        } else {
            line.send(&json!({"id": i, "tool": "true"}));
            let reply = line.reply();
            assert_eq!(reply["record"]["status"], json!("completed"), "{reply}");
        }
    }
    start.elapsed() / n as u32
}

fn samples(runs: usize, mut sample: impl FnMut() -> Duration) -> Measurement {
    of_calls((0..runs).map(|_| sample()).collect::<Vec<_>>())
}

/// Every `mcp_*` workload.
pub fn run(settings: &Settings, report: &mut Report) {
    let Some(strata) = strata_binary() else {
        report.note("mcp skipped: build the binary first (cargo build --release -p strata)");
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tools = settings.pick(1000, 1000, 20);
    project(dir.path(), tools);
    let calls = settings.pick(200, 50, 2);
    let runs = settings.pick(7, 3, 1);

    let mut mcp = Line::start(&strata, dir.path(), &["mcp"]);
    mcp.initialize();
    let mut batch = Line::start(&strata, dir.path(), &["run", "--batch"]);
    // Warm both (the gate's first verdict, the tool compiled once).
    one_at_a_time(&mut mcp, 1, true);
    one_at_a_time(&mut batch, 1, false);
    let ours = samples(runs, || one_at_a_time(&mut mcp, calls, true));
    let peer = samples(runs, || one_at_a_time(&mut batch, calls, false));
    report.compare("mcp_call", &ours, "run_batch", &peer);

    let list = samples(runs, || {
        let start = Instant::now();
        mcp.send(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
        let reply = mcp.reply();
        let spent = start.elapsed();
        let n = reply["result"]["tools"].as_array().map_or(0, Vec::len);
        assert_eq!(n, tools + 2, "every tool listed, and run_plan");
        spent
    });
    report.against("mcp_list_1000", &list, "target", 50e6);

    let start_list = samples(settings.pick(5, 2, 1), || {
        let start = Instant::now();
        let mut fresh = Line::start(&strata, dir.path(), &["mcp"]);
        fresh.initialize();
        fresh.send(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
        assert!(fresh.reply()["result"]["tools"].is_array(), "tools/list");
        start.elapsed()
    });
    report.against("mcp_start_list_1000", &start_list, "target", 50e6);

    let at_once = settings.pick(100, 100, 3);
    let burst = samples(runs, || {
        let start = Instant::now();
        for i in 0..at_once {
            mcp.send(&call(i));
        }
        for _ in 0..at_once {
            let reply = mcp.reply();
            assert_eq!(reply["result"]["isError"], json!(false), "{reply}");
        }
        start.elapsed() / at_once as u32
    });
    let sequential = samples(runs, || one_at_a_time(&mut mcp, at_once, true));
    report.compare("mcp_call_100_at_once", &burst, "one_at_a_time", &sequential);
}
