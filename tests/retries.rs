//! End-to-end tests of `retries:` under `strata plan run`: a step whose tool fails runs again
//! as its declaration (over its tool's) allows, each attempt on the progress stream and the
//! policy and the attempt count in the step's record; and under `strata run` of a graph: an
//! action's tool (a node's, a foreach element's) runs again as its tool declares, before
//! `on_error` sees its failure, each retry in the run's event log.

mod common;
use common::{timeless, Test};

use serde_json::{json, Value};

/// Fails (exit 1, `attempt N` on stderr) until its third run, counting runs in `count`.
const FLAKY: &str = r#"description: fails twice, then prints ok
executor: runtimes/subprocess
retries: {limit: 1, delay: 1ms}
config:
  command: sh
  args: ["-c", "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; if [ $n -lt 3 ]; then echo \"attempt $n\" >&2; exit 1; fi; echo ok"]
"#;

fn project(plan: &str) -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/flaky", FLAKY)
        .file("plans/p.yaml", plan)
}

#[test]
fn a_step_retries_its_failing_tool_each_attempt_shown_and_recorded() {
    let o = project("- id: a\n  tool: t/flaky\n  arguments: {}\n  retries: {limit: 3}\n")
        .args(&["plan", "run", "plans/p.yaml", "--run-id", "r"])
        .stdout("{\n  \"a\": \"ok\"\n}\n")
        .status(0)
        .run();
    assert_eq!(
        timeless(&o.stderr),
        "run r: plans/p.yaml, 1 steps in 1 levels, at most 4 at once
start a (t/flaky)
retry a (t/flaky): attempt 1 of 4 failed: tool `t/flaky` exited with code 1; again in 1ms
    ! attempt 1
retry a (t/flaky): attempt 2 of 4 failed: tool `t/flaky` exited with code 1; again in 1ms
    ! attempt 2
end a (t/flaky): completed in N ms
run r: completed (1 completed)
"
    );
}

#[test]
fn the_tool_limit_ends_the_retries_and_json_streams_every_attempt() {
    let o = project("- id: a\n  tool: t/flaky\n  arguments: {}\n")
        .args(&["plan", "run", "plans/p.yaml", "--json"])
        .status(1)
        .run();
    let events: Vec<Value> = o
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["step_started", "step_retrying", "step_finished"]);
    assert_eq!(events[1]["attempt"], json!(1));
    assert_eq!(events[1]["attempts"], json!(2));
    assert_eq!(events[1]["delay_ms"], json!(1));
    assert_eq!(events[1]["record"]["run"]["stderr"], json!("attempt 1\n"));
    let step = &o.json()["steps"][0];
    assert_eq!(step["status"], json!("failed"));
    assert_eq!(step["run"]["attempts"], json!(2));
    assert_eq!(step["run"]["retries"], json!({"limit": 1, "delay_ms": 1}));
    assert_eq!(step["run"]["stderr"], json!("attempt 2\n"));
}

/// Fails (exit 1, `attempt N` on stderr) until its `until`-th run for `name`, counting runs in
/// `count-<name>`; then prints the count. Declares two retries.
const FLAKY_BY_NAME: &str = r#"description: fails until its until-th run for a name
executor: runtimes/subprocess
retries: {limit: 2, delay: 1ms}
parameters:
  type: object
  properties:
    name: {type: string}
    until: {type: integer}
config:
  command: sh
  args: ["-c", "f=count-$1; n=$(cat $f 2>/dev/null || echo 0); n=$((n+1)); echo $n > $f; if [ $n -lt $2 ]; then echo \"attempt $n\" >&2; exit 1; fi; echo $n", "sh", "{name}", "{until}"]
"#;

fn graph_project(graph: &str) -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/flaky", FLAKY_BY_NAME)
        .tool("graphs/g", graph)
}

/// The events of run `id`'s log, each without its time.
fn logged(ran: &common::Ran, id: &str) -> Vec<Value> {
    ran.read(&format!(".strata/runs/{id}/events.jsonl"))
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).unwrap();
            event.as_object_mut().unwrap().remove("ts");
            event
        })
        .collect()
}

/// The `action_retrying` event of attempt `attempt` (of 3) of `t/flaky` at `node`, in step
/// `step` (of element `index`, when given).
fn retrying(step: u64, node: &str, index: Option<u64>, attempt: u64) -> Value {
    let path = match index {
        Some(_) => "nodes.each.do.tool",
        None => "nodes.try.tool",
    };
    let mut event = json!({
        "event": "action_retrying",
        "step": step,
        "node": node,
        "tool": "t/flaky",
        "attempt": attempt,
        "attempts": 3,
        "delay_ms": 1,
        "error": {
            "kind": "tool_failed",
            "layer": "graph",
            "message": "tool `t/flaky` exited with code 1",
            "path": path,
            "span": null,
        },
        "stderr": format!("attempt {attempt}"),
    });
    if let Some(i) = index {
        event["index"] = json!(i);
    }
    event
}

const RETRIED_NODE: &str = "kind: graph
nodes:
  try:
    kind: action
    tool: t/flaky
    params: {name: a, until: 3}
    assign: {n: \"${result}\", attempts: \"${run.attempts}\", retries: \"${run.retries}\"}
    next: done
  done: {kind: return, output: \"${state}\"}
";

#[test]
fn a_graphs_action_retries_its_failing_tool_as_declared_each_retry_logged() {
    let ran = graph_project(RETRIED_NODE)
        .args(&["run", "graphs/g", "--run-id", "r"])
        .stdout("{\n  \"n\": 3,\n  \"attempts\": 3,\n  \"retries\": {\n    \"limit\": 2,\n    \"delay_ms\": 1\n  }\n}\n")
        .stderr("run r: starting graphs/g at `try`\nstep 1 try (t/flaky): attempt 1 of 3 failed: tool `t/flaky` exited with code 1; again in 1ms\nstep 1 try (t/flaky): attempt 2 of 3 failed: tool `t/flaky` exited with code 1; again in 1ms\nstep 1 try (action) -> done: n = 3 (new), attempts = 3 (new), retries = {\"limit\":2,\"delay_ms\":1} (new)\nstep 2 done (return) -> return: no state change\nrun r: completed after 2 steps\n")
        .status(0)
        .run();
    assert_eq!(ran.read("count-a"), "3\n");
    let log = logged(&ran, "r");
    let names: Vec<&str> = log.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "started",
            "action_retrying",
            "action_retrying",
            "step",
            "step",
            "finished"
        ]
    );
    assert_eq!(log[1], retrying(1, "try", None, 1));
    assert_eq!(log[2], retrying(1, "try", None, 2));
}

const HANDLED: &str = "kind: graph
on_error: handle
nodes:
  try:
    kind: action
    tool: t/flaky
    params: {name: a, until: 9}
    next: done
  handle:
    kind: return
    output: {attempts: \"${error.run.attempts}\", stderr: \"${error.run.stderr}\"}
  done: {kind: return, output: ok}
";

#[test]
fn a_graphs_failing_action_is_retried_before_on_error_sees_its_last_attempt() {
    let ran = graph_project(HANDLED)
        .args(&["run", "graphs/g", "--run-id", "h", "--json"])
        .status(0)
        .run();
    assert_eq!(
        ran.json()["result"],
        json!({"attempts": 3, "stderr": "attempt 3\n"})
    );
    assert_eq!(ran.read("count-a"), "3\n");
    let log: Vec<Value> = logged(&ran, "h")
        .iter()
        .map(|e| json!([e["event"], e["node"], e["attempt"], e["handling"]]))
        .collect();
    assert_eq!(
        log,
        [
            json!(["started", "try", null, null]),
            json!(["action_retrying", "try", 1, null]),
            json!(["action_retrying", "try", 2, null]),
            json!(["error", "try", null, "goto handle"]),
            json!(["step", "handle", null, null]),
            json!(["finished", null, null, null]),
        ]
    );
    // The `--json` stream has each retry as it happens, and the error once, after the last
    // attempt.
    let streamed: Vec<Value> = ran
        .stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .collect();
    assert_eq!(
        streamed,
        [
            "started",
            "action_retrying",
            "action_retrying",
            "error",
            "step",
            "finished"
        ]
    );
}

const RETRIED_ELEMENTS: &str = "kind: graph
nodes:
  each:
    kind: foreach
    over: [a, b]
    do: {kind: action, tool: t/flaky, params: {name: \"${item}\", until: 3}}
    collect: counts
    next: done
  done: {kind: return, output: \"${state.counts}\"}
";

#[test]
fn a_foreach_element_retries_its_failing_tool_as_declared_each_retry_logged() {
    let ran = graph_project(RETRIED_ELEMENTS)
        .args(&["run", "graphs/g", "--run-id", "e", "--quiet"])
        .stdout("[\n  3,\n  3\n]\n")
        .status(0)
        .run();
    let log = logged(&ran, "e");
    let shown: Vec<Value> = log
        .iter()
        .map(|e| json!([e["event"], e["index"], e["attempt"]]))
        .collect();
    assert_eq!(
        shown,
        [
            json!(["started", null, null]),
            json!(["foreach_started", null, null]),
            json!(["element_started", 0, null]),
            json!(["action_retrying", 0, 1]),
            json!(["action_retrying", 0, 2]),
            json!(["element_finished", 0, null]),
            json!(["element_started", 1, null]),
            json!(["action_retrying", 1, 1]),
            json!(["action_retrying", 1, 2]),
            json!(["element_finished", 1, null]),
            json!(["step", null, null]),
            json!(["step", null, null]),
            json!(["finished", null, null]),
        ]
    );
    assert_eq!(log[3], retrying(1, "each.do[0]", Some(0), 1));
    // The progress shows each retry as it happens, naming the element.
    let again = graph_project(RETRIED_ELEMENTS)
        .args(&["run", "graphs/g", "--run-id", "e"])
        .status(0)
        .run();
    let retries: Vec<&str> = again
        .stderr
        .lines()
        .filter(|l| l.contains("attempt"))
        .collect();
    assert_eq!(
        retries,
        [
            "step 1 each.do[0][0] (t/flaky): attempt 1 of 3 failed: tool `t/flaky` exited with code 1; again in 1ms",
            "step 1 each.do[0][0] (t/flaky): attempt 2 of 3 failed: tool `t/flaky` exited with code 1; again in 1ms",
            "step 1 each.do[0][1] (t/flaky): attempt 1 of 3 failed: tool `t/flaky` exited with code 1; again in 1ms",
            "step 1 each.do[0][1] (t/flaky): attempt 2 of 3 failed: tool `t/flaky` exited with code 1; again in 1ms",
        ]
    );
    // The timeline names each retry and still sums the elements up.
    let shown = ran.then(&["runs", "show", "e"]).status(0).run();
    let timeline: Vec<&str> = shown
        .stdout
        .lines()
        .skip_while(|l| *l != "timeline:")
        .skip(1)
        .map(|l| l.split_once(" ms  ").unwrap().1)
        .collect();
    assert_eq!(
        timeline,
        [
            "started graphs/g at `each`",
            "foreach_started 1 each: 2 elements",
            "action_retrying 1 each.do[0][0]: attempt 1 of 3 failed: tool `t/flaky` exited with code 1; again in 1 ms",
            "action_retrying 1 each.do[0][0]: attempt 2 of 3 failed: tool `t/flaky` exited with code 1; again in 1 ms",
            "action_retrying 1 each.do[0][1]: attempt 1 of 3 failed: tool `t/flaky` exited with code 1; again in 1 ms",
            "action_retrying 1 each.do[0][1]: attempt 2 of 3 failed: tool `t/flaky` exited with code 1; again in 1 ms",
            "elements 1 each: 2 done",
            "step 1 each (foreach) -> done",
            "step 2 done (return) -> end",
            "finished completed after 2 steps",
        ]
    );
}

#[test]
fn a_graphs_tool_that_cannot_start_is_not_retried() {
    // Its command is on no PATH: the call fails before anything runs, once.
    let missing = "executor: runtimes/subprocess\nretries: {limit: 2, delay: 1ms}\nconfig: {command: no-such-program-anywhere}\n";
    let graph = "kind: graph\nnodes:\n  try: {kind: action, tool: t/missing, next: done}\n  done: {kind: return, output: ok}\n";
    let ran = Test::new()
        .copy("tools/runtimes")
        .tool("t/missing", missing)
        .tool("graphs/g", graph)
        .args(&["run", "graphs/g", "--run-id", "m", "--quiet"])
        .status(1)
        .run();
    let log: Vec<Value> = logged(&ran, "m")
        .iter()
        .map(|e| json!([e["event"], e["error"]["kind"]]))
        .collect();
    assert_eq!(
        log,
        [
            json!(["started", null]),
            json!(["error", "invalid"]),
            json!(["finished", null]),
        ]
    );
}

#[test]
fn a_graphs_tool_that_times_out_is_retried() {
    let slow = "executor: runtimes/subprocess\nretries: {limit: 1}\nconfig:\n  command: sh\n  args: [\"-c\", \"echo x >> count; sleep 30\"]\n  timeout: 0.2\n";
    let graph = "kind: graph\nnodes:\n  try: {kind: action, tool: t/slow, next: done}\n  done: {kind: return, output: ok}\n";
    let ran = Test::new()
        .copy("tools/runtimes")
        .tool("t/slow", slow)
        .tool("graphs/g", graph)
        .args(&["run", "graphs/g", "--run-id", "s", "--quiet"])
        .status(1)
        .run();
    assert_eq!(ran.read("count"), "x\nx\n");
    let log: Vec<Value> = logged(&ran, "s")
        .iter()
        .map(|e| json!([e["event"], e["error"]["kind"], e["attempt"]]))
        .collect();
    assert_eq!(
        log,
        [
            json!(["started", null, null]),
            json!(["action_retrying", "timeout", 1]),
            json!(["error", "timeout", null]),
            json!(["finished", null, null]),
        ]
    );
}
