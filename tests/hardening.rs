//! Hardening, round 2 (issue 11): the `strata` binary attacked from outside — crashes,
//! escapes, races and limits. Each test is the regression test of one reproduced failure or
//! one weakness, and covers its class: every command where the failure could appear.
//!
//! Simple runs use the [`Test`] builder; runs that need a signal, a race or a resource limit
//! start the binary themselves (see the harness below).

mod common;
use common::{home_var, path_var, Test};

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// The binary in `dir` with PATH and HOME only, stdin from `stdin`, in its own process group.
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", path_var())
        .env("HOME", home_var())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// Runs `cmd` to the end, feeding `stdin`.
fn output_with(mut cmd: Command, stdin: &[u8]) -> Output {
    cmd.stdin(Stdio::piped());
    let mut child: Child = cmd.spawn().expect("strata starts");
    let mut pipe = child.stdin.take().expect("a stdin pipe");
    let input = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("strata runs");
    let _ = feeder.join();
    out
}

/// The main thread's stack is limited to `kib` KiB in the child (`ulimit -s`).
fn limit_stack(cmd: &mut Command, kib: u64) {
    let limit = libc::rlimit {
        rlim_cur: kib << 10,
        rlim_max: kib << 10,
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_STACK, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// Every line of standard output parsed as JSON.
fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `operand op operand op …`, `n` operands.
fn chain(operand: &str, op: &str, n: usize) -> String {
    vec![operand; n].join(op)
}

// ---------------------------------------------------------------------------------------------
// 1. Recursion depth: one expression must not overflow the stack
// ---------------------------------------------------------------------------------------------

#[test]
fn a_long_operator_chain_in_a_batch_request_is_answered_and_later_lines_still_served() {
    let long = format!("${{{}}}", chain("true", " && ", 8_000));
    let deep = format!("${{{}true{}}}", "(".repeat(65), ")".repeat(65));
    let stdin = format!(
        "{}\n{}\n{}\n",
        json!({"template": long}),
        json!({"template": deep}),
        json!({"template": "c"})
    );
    let dir = tempfile::tempdir().unwrap();
    for (kib, operands) in [(8192, 8_000), (1024, 20_000)] {
        let long = format!("${{{}}}", chain("true", " && ", operands));
        let stdin = stdin.replace(&chain("true", " && ", 8_000), &long[2..long.len() - 1]);
        let mut cmd = command(dir.path(), &["render", "--batch"]);
        limit_stack(&mut cmd, kib);
        let out = output_with(cmd, stdin.as_bytes());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let replies = json_lines(&out);
        assert_eq!(replies.len(), 3, "{replies:?}");
        assert_eq!(
            replies[0],
            json!({"ok": true, "value": true, "warnings": []})
        );
        assert_eq!(replies[1]["error"]["kind"], "syntax");
        assert_eq!(
            replies[1]["error"]["message"],
            "expression nested too deeply"
        );
        assert_eq!(
            replies[2],
            json!({"ok": true, "value": "c", "warnings": []})
        );
    }
}

#[test]
fn a_graph_condition_of_eight_thousand_operands_loads_and_runs() {
    let when = chain("state.go", " && ", 8_000);
    let graph = format!(
        "kind: graph\nstate: {{go: true}}\nstart: a\nnodes:\n  a:\n    kind: gate\n    next:\n      - {{to: yes, when: \"{when}\"}}\n      - to: no\n  yes: {{kind: return, output: taken}}\n  no: {{kind: return, output: not taken}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "tools/g.yaml", &graph);
    for args in [
        &["run", "g", "--quiet", "--run-id", "r1"][..],
        &["check"],
        &["graph", "g"],
    ] {
        let mut cmd = command(dir.path(), args);
        limit_stack(&mut cmd, 1024);
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if args[0] == "run" {
            assert_eq!(String::from_utf8_lossy(&out.stdout), "\"taken\"\n");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Limits by bytes: whole values count against the output limit
// ---------------------------------------------------------------------------------------------

#[test]
fn whole_value_references_cannot_multiply_a_large_parameter() {
    let big = "x".repeat(1 << 20);
    let requests = [
        json!({"template": vec!["{p}"; 100], "params": {"p": big}}),
        json!({"template": vec!["${c}"; 100], "context": {"c": big}}),
        json!({"template": {"a": "{p}", "b": vec!["{a}"; 100]}, "params": {"p": big}}),
        json!({"template": vec!["{p}"; 60], "params": {"p": big}}),
    ];
    let stdin: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let ran = Test::new()
        .args(&["render", "--batch"])
        .stdin(stdin)
        .status(0)
        .run();
    let replies: Vec<Value> = ran
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 4);
    for (reply, path) in replies.iter().zip(["[64]", "[64]", "b[63]"]) {
        assert_eq!(
            reply["error"],
            json!({"kind": "limit", "layer": "request", "message": "rendered document exceeds 67108864 bytes", "path": path, "span": null, "hint": "raise the output-bytes-per-config limit if this is intended"})
        );
    }
    assert_eq!(replies[3]["ok"], true);
    assert_eq!(replies[3]["value"].as_array().map(Vec::len), Some(60));
}
