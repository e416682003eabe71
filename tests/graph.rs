//! End-to-end tests of graph tools: the real `strata` binary in scratch projects running real
//! tools. Every node kind, every condition operator, load errors with file:line:col,
//! `max_steps`, the JSON log, drawing, `strata runs`, the shipped graphs, and a run killed
//! with SIGKILL during each step of a five-step graph and resumed.

mod common;
use common::{refusal, wait_for, Test};

use std::process::Command;

/// A scratch project holding a copy of the repository's `tools/` (runtimes, examples and
/// the shipped graphs).
fn project() -> Test {
    Test::new().copy("tools")
}

// ---------------------------------------------------------------------------------------
// Every node kind, with real tools.

const KINDS: &str = r#"kind: graph
description: every node kind
parameters:
  type: object
  properties:
    text: {type: string, default: "b a c"}
state: {words: "", count: 0}
nodes:
  split:
    kind: action
    tool: examples/split
    params: {text: "${inputs.text}"}
    assign: {words: "${result}"}
    next: each
  each:
    kind: foreach
    over: "${state.words}"
    as: w
    parallel: true
    max_concurrency: 2
    do:
      kind: action
      tool: examples/echo
      params: {message: "${w_index}:${upper(w)}"}
    output: "${result}"
    collect: echoed
    next: check
  check:
    kind: gate
    assign: {count: "${length(state.echoed)}"}
    next:
      - {to: each, when: "state.count < 3"}
      - to: done
  done:
    kind: return
    output: {echoed: "${state.echoed}", count: "${state.count}"}
"#;

#[test]
fn every_node_kind_runs_with_real_tools() {
    let o = project()
        .file("tools/graphs/kinds.yaml", KINDS)
        .args(&["run", "tools/graphs/kinds.yaml", "--run-id", "k1"])
        .stderr(
            r#"run k1: starting graphs/kinds at `split`
step 1 split (action) -> each: words = ["b","a","c"] (was "")
step 2 each (foreach) -> check: echoed = ["0:B","1:A","2:C"] (new)
step 3 check (gate) -> done (otherwise): count = 3 (was 0)
step 4 done (return) -> return: no state change
run k1: completed after 4 steps
"#,
        )
        .stdout(
            "{\n  \"echoed\": [\n    \"0:B\",\n    \"1:A\",\n    \"2:C\"\n  ],\n  \"count\": 3\n}\n",
        )
        .status(0)
        .run();
    let checkpoint = o.read(".strata/runs/k1/checkpoint.json");
    assert!(
        checkpoint.contains(r#""status":"completed","step":4,"node":null"#),
        "{checkpoint}"
    );
}

// ---------------------------------------------------------------------------------------
// Every condition operator: each node's first edge must be false, its second true.

const OPERATORS: &str = r#"kind: graph
parameters:
  type: object
  properties:
    name: {type: string, default: strata}
state:
  n: 3
  s: hello world
  tags: [a, b]
  obj: {k: 1}
  none: null
nodes:
  eq: {kind: gate, next: [{to: wrong, when: "state.n == 4"}, {to: ne, when: "state.n == 3"}]}
  ne: {kind: gate, next: [{to: wrong, when: "state.s != 'hello world'"}, {to: lt, when: "state.s != 'bye'"}]}
  lt: {kind: gate, next: [{to: wrong, when: "state.n < 3"}, {to: le, when: "state.n < 4"}]}
  le: {kind: gate, next: [{to: wrong, when: "state.n <= 2"}, {to: gt, when: "state.n <= 3"}]}
  gt: {kind: gate, next: [{to: wrong, when: "state.n > 3"}, {to: ge, when: "state.n > 2.5"}]}
  ge: {kind: gate, next: [{to: wrong, when: "state.s >= 'z'"}, {to: and, when: "state.s >= 'hello'"}]}
  and: {kind: gate, next: [{to: wrong, when: "state.n == 3 && state.none != null"}, {to: or, when: "state.n == 3 && inputs.name == 'strata'"}]}
  or: {kind: gate, next: [{to: wrong, when: "state.n == 1 || state.n == 2"}, {to: not, when: "state.n == 1 || state.n == 3"}]}
  not: {kind: gate, next: [{to: wrong, when: "!(state.n == 3)"}, {to: in, when: "!(state.n == 4)"}]}
  in: {kind: gate, next: [{to: wrong, when: "'c' in state.tags"}, {to: fallback, when: "'b' in state.tags"}]}
  fallback: {kind: gate, next: [{to: wrong, when: "(state.none ?? 0) == 1"}, {to: arithmetic, when: "(state.none ?? 7) == 7"}]}
  arithmetic: {kind: gate, next: [{to: wrong, when: "state.n * 2 + 1 == 6"}, {to: functions, when: "state.n * 2 + 1 == 7 && state.n % 2 == 1 && state.n / 2 == 1 && state.n - 5 == -2 && 'a' + 'b' == 'ab'"}]}
  functions:
    kind: gate
    next:
      - to: wrong
        when: length(state.tags) == 3
      - to: s_eq
        when: >-
          length(state.tags) == 2 && contains(state.s, 'world') && exists(state.obj.k)
          && !exists(state.obj.z) && keys(state.obj) == ['k'] && upper(lower('AbC')) == 'ABC'
          && json(state.obj) == '{"k":1}' && from_json('[1]') == [1]
          && number('2') + 1 == 3 && string(state.n) + '!' == '3!'
  s_eq: {kind: gate, next: [{to: wrong, when: {path: state.n, op: eq, value: 4}}, {to: s_ne, when: {path: state.n, op: eq, value: 3}}]}
  s_ne: {kind: gate, next: [{to: wrong, when: {path: state.s, op: ne, value: hello world}}, {to: s_gt, when: {path: state.s, op: ne, value: x}}]}
  s_gt: {kind: gate, next: [{to: wrong, when: {path: state.n, op: gt, value: 3}}, {to: s_gte, when: {path: state.n, op: gt, value: 2}}]}
  s_gte: {kind: gate, next: [{to: wrong, when: {path: state.n, op: gte, value: 4}}, {to: s_lt, when: {path: state.n, op: gte, value: 3}}]}
  s_lt: {kind: gate, next: [{to: wrong, when: {path: state.n, op: lt, value: 3}}, {to: s_lte, when: {path: state.n, op: lt, value: 4}}]}
  s_lte: {kind: gate, next: [{to: wrong, when: {path: state.n, op: lte, value: 2}}, {to: s_in, when: {path: state.n, op: lte, value: 3}}]}
  s_in: {kind: gate, next: [{to: wrong, when: {path: state.n, op: in, value: [1, 2]}}, {to: s_contains, when: {path: state.n, op: in, value: [3, 4]}}]}
  s_contains: {kind: gate, next: [{to: wrong, when: {path: state.tags, op: contains, value: c}}, {to: s_regex, when: {path: state.tags, op: contains, value: b}}]}
  s_regex: {kind: gate, next: [{to: wrong, when: {path: state.s, op: regex, value: "^world"}}, {to: s_exists, when: {path: state.s, op: regex, value: "^hello\\s"}}]}
  s_exists: {kind: gate, next: [{to: wrong, when: {path: state.obj.z, op: exists}}, {to: s_any, when: {path: state.none, op: exists}}]}
  s_any: {kind: gate, next: [{to: wrong, when: {any: [{path: state.n, op: eq, value: 1}, {path: state.n, op: eq, value: 2}]}}, {to: s_all, when: {any: [{path: state.n, op: eq, value: 1}, {path: state.n, op: eq, value: 3}]}}]}
  s_all: {kind: gate, next: [{to: wrong, when: {all: [{path: state.n, op: eq, value: 3}, {path: state.n, op: eq, value: 4}]}}, {to: s_not, when: {all: [{path: state.n, op: eq, value: 3}, {path: state.n, op: gt, value: 0}]}}]}
  s_not: {kind: gate, next: [{to: wrong, when: {not: {path: state.n, op: eq, value: 3}}}, {to: done, when: {not: {path: state.n, op: eq, value: 4}}}]}
  done: {kind: return, output: right}
  wrong: {kind: return, output: wrong}
"#;

#[test]
fn every_condition_operator_is_false_then_true() {
    let o = project()
        .file("tools/graphs/ops.yaml", OPERATORS)
        .args(&["run", "graphs/ops", "--run-id", "ops"])
        .stdout("\"right\"\n")
        .status(0)
        .run();
    let want = [
        "run ops: starting graphs/ops at `eq`",
        "step 1 eq (gate) -> ne (when state.n == 3): no state change",
        "step 2 ne (gate) -> lt (when state.s != 'bye'): no state change",
        "step 3 lt (gate) -> le (when state.n < 4): no state change",
        "step 4 le (gate) -> gt (when state.n <= 3): no state change",
        "step 5 gt (gate) -> ge (when state.n > 2.5): no state change",
        "step 6 ge (gate) -> and (when state.s >= 'hello'): no state change",
        "step 7 and (gate) -> or (when state.n == 3 && inputs.name == 'strata'): no state change",
        "step 8 or (gate) -> not (when state.n == 1 || state.n == 3): no state change",
        "step 9 not (gate) -> in (when !(state.n == 4)): no state change",
        "step 10 in (gate) -> fallback (when 'b' in state.tags): no state change",
        "step 11 fallback (gate) -> arithmetic (when (state.none ?? 7) == 7): no state change",
        "step 12 arithmetic (gate) -> functions (when state.n * 2 + 1 == 7 && state.n % 2 == 1 && state.n / 2 == 1 && state.n - 5 == -2 && 'a' + 'b' == 'ab'): no state change",
        "step 13 functions (gate) -> s_eq (when length(state.tags) == 2 && contains(state.s, 'world') && exists(state.obj.k) && !exists(state.obj.z) && keys(state.obj) == ['k'] && upper(lower('AbC')) == 'ABC' && json(state.obj) == '{\"k\":1}' && from_json('[1]') == [1] && number('2') + 1 == 3 && string(state.n) + '!' == '3!'): no state change",
        "step 14 s_eq (gate) -> s_ne (when {\"path\":\"state.n\",\"op\":\"eq\",\"value\":3}): no state change",
        "step 15 s_ne (gate) -> s_gt (when {\"path\":\"state.s\",\"op\":\"ne\",\"value\":\"x\"}): no state change",
        "step 16 s_gt (gate) -> s_gte (when {\"path\":\"state.n\",\"op\":\"gt\",\"value\":2}): no state change",
        "step 17 s_gte (gate) -> s_lt (when {\"path\":\"state.n\",\"op\":\"gte\",\"value\":3}): no state change",
        "step 18 s_lt (gate) -> s_lte (when {\"path\":\"state.n\",\"op\":\"lt\",\"value\":4}): no state change",
        "step 19 s_lte (gate) -> s_in (when {\"path\":\"state.n\",\"op\":\"lte\",\"value\":3}): no state change",
        "step 20 s_in (gate) -> s_contains (when {\"path\":\"state.n\",\"op\":\"in\",\"value\":[3,4]}): no state change",
        "step 21 s_contains (gate) -> s_regex (when {\"path\":\"state.tags\",\"op\":\"contains\",\"value\":\"b\"}): no state change",
        "step 22 s_regex (gate) -> s_exists (when {\"path\":\"state.s\",\"op\":\"regex\",\"value\":\"^hello\\\\s\"}): no state change",
        "step 23 s_exists (gate) -> s_any (when {\"path\":\"state.none\",\"op\":\"exists\"}): no state change",
        "step 24 s_any (gate) -> s_all (when {\"any\":[{\"path\":\"state.n\",\"op\":\"eq\",\"value\":1},{\"path\":\"state.n\",\"op\":\"eq\",\"value\":3}]}): no state change",
        "step 25 s_all (gate) -> s_not (when {\"all\":[{\"path\":\"state.n\",\"op\":\"eq\",\"value\":3},{\"path\":\"state.n\",\"op\":\"gt\",\"value\":0}]}): no state change",
        "step 26 s_not (gate) -> done (when {\"not\":{\"path\":\"state.n\",\"op\":\"eq\",\"value\":4}}): no state change",
        "step 27 done (return) -> return: no state change",
        "run ops: completed after 27 steps",
    ];
    assert_eq!(o.stderr.lines().collect::<Vec<_>>(), want);
}

// ---------------------------------------------------------------------------------------
// Limits, errors, logs, drawings, runs.

const SPIN: &str = "kind: graph
max_steps: 3
state: {n: 0}
nodes:
  spin: {kind: gate, assign: {n: '${state.n + 1}'}, next: spin}
";

#[test]
fn max_steps_stops_the_run_with_exit_code_3() {
    project()
        .file("tools/graphs/spin.yaml", SPIN)
        .args(&["run", "graphs/spin", "--run-id", "s1"])
        .stderr(
            "run s1: starting graphs/spin at `spin`
step 1 spin (gate) -> spin: n = 1 (was 0)
step 2 spin (gate) -> spin: n = 2 (was 1)
step 3 spin (gate) -> spin: n = 3 (was 2)
limit: max_steps (3) reached after step 3 (on_error: stop)
run s1: limited after 3 steps: max_steps (3) reached before node `spin`
",
        )
        .stdout("")
        .status(3)
        .run()
        .then(&["run", "graphs/spin", "--run-id", "s2", "--quiet"])
        .stderr("strata: run s2 limited: max_steps (3) reached before node `spin`\n")
        .status(3).run()
        .then(&["run", "graphs/spin", "--resume", "s1"])
        .stderr("error[request]: run `s1` has already ended (limited)\n   = help: `strata runs` shows every run and its status\n")
        .status(2)
        .run();
}

#[test]
fn progress_is_coloured_with_color_always_and_plain_with_no_color() {
    let s = project().file("tools/graphs/spin.yaml", SPIN).file(
        "tools/graphs/once.yaml",
        "kind: graph\nstate: {n: 0}\nnodes:\n  one: {kind: gate, assign: {n: 1}}\n",
    );
    let ran = s
        .then(&["--color", "always", "run", "graphs/spin", "--run-id", "s1"])
        .status(3)
        .run();
    let lines: Vec<&str> = ran.stderr.lines().collect();
    assert_eq!(
        lines[4..],
        [
            "\u{1b}[1m\u{1b}[31mlimit\u{1b}[0m: max_steps (3) reached after step 3 (on_error: stop)",
            "run s1: \u{1b}[1m\u{1b}[31mlimited\u{1b}[0m after 3 steps: max_steps (3) reached before node `spin`",
        ]
    );
    assert!(!lines[1].contains('\u{1b}'), "{}", lines[1]);
    s.then(&["--color", "always", "run", "graphs/once", "--run-id", "c1"])
        .stderr(
            "run c1: starting graphs/once at `one`
step 1 one (gate) -> end: n = 1 (was 0)
run c1: \u{1b}[32mcompleted\u{1b}[0m after 1 step
",
        )
        .status(0)
        .run();
    let plain = s
        .then(&["run", "graphs/spin", "--run-id", "s2"])
        .env("NO_COLOR", "1")
        .status(3)
        .run();
    assert!(!plain.stderr.contains('\u{1b}'), "{}", plain.stderr);
}

/// Events go to standard error (JSON Lines with `--json`), as directives' and plans' do;
/// standard output holds the one result document.
#[test]
fn the_json_log_has_one_event_per_line() {
    project()
        .file(
            "tools/graphs/spin.yaml",
            SPIN.replace("max_steps: 3", "max_steps: 1"),
        )
        .args(&["run", "graphs/spin", "--run-id", "j", "--json"])
        .stdout(
            r#"{
  "run_id": "j",
  "status": "limited",
  "steps": 1,
  "result": null,
  "failure": {
    "kind": "limit",
    "layer": "graph",
    "message": "max_steps (1) reached before node `spin`",
    "path": "max_steps",
    "span": null,
    "hint": "raise the graph's `max_steps`, or handle the limit with `on_error: <node>`"
  }
}
"#,
        )
        .stderr(
            r#"{"event":"started","run_id":"j","graph":"graphs/spin","node":"spin","step":0,"resumed":false}
{"event":"step","step":1,"node":"spin","kind":"gate","edge":{"to":"spin","why":"next","when":null},"changes":[{"key":"n","from":0,"to":1}]}
{"event":"limit","step":1,"max_steps":1,"handling":"stop"}
{"event":"finished","run_id":"j","status":"limited","steps":1,"result":null,"failure":{"kind":"limit","layer":"graph","message":"max_steps (1) reached before node `spin`","path":"max_steps","span":null,"hint":"raise the graph's `max_steps`, or handle the limit with `on_error: <node>`"}}
"#,
        )
        .status(3)
        .run();
}

#[test]
fn load_errors_point_at_the_file_before_anything_runs() {
    let o = project()
        .file(
            "tools/graphs/bad.yaml",
            "kind: graph\nstate: {count: 0}\nnodes:\n  a:\n    kind: action\n    tool: examples/echo\n    params: {message: '${state.cuont}'}\n",
        )
        .args(&["run", "tools/graphs/bad.yaml"])
        .stderr(
            &("error[G001]: state key `cuont` is never initialised nor assigned
  --> tools/graphs/bad.yaml:7:24
  |
7 |     params: {message: '${state.cuont}'}
  |                        ^^^^^^^^^^^^^^
   = field: nodes.a.params.message
   = help: did you mean `state.count`?
".to_string()
                + &refusal("graphs/bad", 1)),
        )
        .status(2)
        .run();
    assert!(!o.path().join(".strata").exists(), "nothing ran");
    let o = o
        .then(&["run", "graphs/spin", "--resume", "../../etc/passwd"])
        .status(2)
        .run()
        .then(&["run", "graphs/spin", "--resume", "../../etc/passwd"])
        .file("tools/graphs/spin.yaml", SPIN)
        .stderr("error[request]: invalid run id `../../etc/passwd`\n   = help: run ids are 1 to 64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-`\n")
        .status(2).run()
        .then(&["run", "graphs/spin", "--run-id", "x/y"])
        .status(2)
        .run();
    assert!(o.stderr.starts_with("error[request]: invalid run id `x/y`"));
}

#[test]
fn graphs_are_drawn_and_runs_are_listed() {
    let s = project();
    s.then(&["graph", "retry", "--format", "dot"])
        .stdout(
            r#"digraph "graphs/retry" {
    rankdir=TB;
    "__start" [shape=circle, label="start"];
    "try" [shape=box, label="try\naction: examples/flaky"];
    "done" [shape=oval, label="done\nreturn"];
    "give_up" [shape=oval, label="give_up\nreturn"];
    "__start" -> "try";
    "try" -> "done" [label="run.success"];
    "try" -> "give_up" [label="state.attempt >= inputs.max_attempts"];
    "try" -> "try" [label="otherwise"];
}
"#,
        )
        .status(0)
        .run();
    s.then(&["graph", "tools/graphs/recover.yaml"])
        .stdout(
            r#"flowchart TD
    start([start]) --> n0
    n0["summarise<br/>action: examples/stats"]
    n1{"recover<br/>gate"}
    n2(["report<br/>return"])
    n3(["give_up<br/>return"])
    n0 --> n2
    n1 -->|"state.recoveries <= 1"| n0
    n1 -->|"otherwise"| n3
    on_error{{on_error}} -.-> n1
"#,
        )
        .status(0)
        .run();
    s.then(&["graph", "examples/echo"])
        .stderr("error[request]: `examples/echo` is not a graph\n   = help: graphs are tool files with `kind: graph`\n")
        .status(2).run();
    s.then(&["runs"]).stdout("no runs yet\n").status(0).run();
    let s = s.file("tools/graphs/spin.yaml", SPIN);
    // Oldest first, ties by id: started in this order, the listing is the same whether or not
    // the two runs start within the same second.
    s.then(&["run", "graphs/retry", "--run-id", "a-retry", "--quiet"])
        .status(0)
        .run();
    s.then(&["run", "graphs/spin", "--run-id", "b-spin", "--quiet"])
        .status(3)
        .run();
    s.then(&["runs"])
        .stdout(
            "RUN      GRAPH         STATUS     STEPS  NEXT
a-retry  graphs/retry  completed  4      -
b-spin   graphs/spin   limited    3      -
",
        )
        .status(0)
        .run();
}

// ---------------------------------------------------------------------------------------
// The shipped graphs.

#[test]
fn the_shipped_graphs_run() {
    let o = project()
        .args(&["run", "tools/graphs/retry.yaml", "--quiet"])
        .stdout("{\n  \"status\": \"succeeded\",\n  \"attempts\": 3,\n  \"last_exit\": 0\n}\n")
        .status(0)
        .run()
        .then(&[
            "run",
            "graphs/retry",
            "--input",
            "succeed_on=9",
            "--input",
            "max_attempts=2",
            "--quiet",
        ])
        .stdout("{\n  \"status\": \"gave up\",\n  \"attempts\": 2,\n  \"last_exit\": 1\n}\n")
        .status(0)
        .run()
        .then(&["run", "graphs/words", "--input", "text=a bb ccc", "--quiet"])
        .stdout("{\n  \"words\": 3,\n  \"lengths\": [\n    1,\n    2,\n    3\n  ],\n  \"longest\": 3,\n  \"mean\": 2.0\n}\n")
        .status(0)
        .run()
        .then(&["run", "graphs/recover", "--run-id", "rec"])
        .stderr(
            "run rec: starting graphs/recover at `summarise`
step 1 summarise failed: tool `examples/stats`: invalid parameters for `examples/stats`: parameter `numbers` must have at least 1 items (on_error: goto recover)
hook log_errors on error (examples/log): completed
step 2 recover (gate) -> summarise (when state.recoveries <= 1): numbers = [0] (was null), recoveries = 1 (was 0), reason = \"tool `examples/stats`: invalid parameters for `examples/st… (was null)
step 3 summarise (action) -> report: summary = {\"label\":\"numbers\",\"count\":1,\"sum\":0,\"mean\":0.0,\"min\":0,\"ma… (new)
step 4 report (return) -> return: no state change
run rec: completed after 4 steps
",
        )
        .status(0)
        .run();
    assert_eq!(
        o.read(".strata/logs/graph-errors.log"),
        "graphs/recover rec: summarise failed: tool `examples/stats`: invalid parameters for `examples/stats`: parameter `numbers` must have at least 1 items\n"
    );
}

// ---------------------------------------------------------------------------------------
// SIGKILL during every step of a five-step graph, then --resume.

const STEP_TOOL: &str = "description: Logs its node, pauses while pause-<node> exists, prints JSON
executor: runtimes/bash
parameters:
  type: object
  properties:
    node: {type: string}
    n: {type: integer}
    log: {type: string}
  required: [node, n, log]
config:
  script: step.sh
";

const STEP_SCRIPT: &str = r#"printf '%s\n' "$PARAM_NODE" >> "$PARAM_LOG"
if [ -e "pause-$PARAM_NODE" ]; then
  printf '%s\n' "$$" > paused.tmp
  mv paused.tmp paused.pid
  exec sleep 30
fi
printf '{"node": "%s", "n": %s}\n' "$PARAM_NODE" "$PARAM_N"
"#;

fn five_steps() -> String {
    let mut text = String::from(
        "kind: graph
parameters: {type: object, properties: {log: {type: string}}, required: [log]}
state: {total: 0, trail: ''}
nodes:
",
    );
    for i in 1..=5 {
        let next = if i < 5 {
            format!(", next: s{}", i + 1)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "  s{i}: {{kind: action, tool: test/step, params: {{node: s{i}, n: {i}, log: '${{inputs.log}}'}}, \
             assign: {{total: '${{state.total + result.n}}', trail: '${{state.trail + result.node}}'}}{next}}}\n"
        ));
    }
    text
}

#[test]
fn a_run_killed_during_any_step_resumes_to_the_same_result() {
    let result = "{\n  \"total\": 15,\n  \"trail\": \"s1s2s3s4s5\"\n}\n";
    let s = project()
        .file("tools/test/step.yaml", STEP_TOOL)
        .file("tools/test/step.sh", STEP_SCRIPT)
        .file("tools/graphs/five.yaml", five_steps())
        .args(&["run", "graphs/five", "--input", "log=whole.log", "--quiet"])
        .stdout(result)
        .status(0)
        .run();
    assert_eq!(s.read("whole.log"), "s1\ns2\ns3\ns4\ns5\n");
    for k in 1..=5 {
        let run_id = format!("kill{k}");
        let log = format!("log={run_id}.log");
        let mut child = s
            .then(&[
                "run",
                "graphs/five",
                "--input",
                &log,
                "--run-id",
                &run_id,
                "--quiet",
            ])
            .file(&format!("pause-s{k}"), "")
            .spawn();
        let pid = wait_for(&s.path().join("paused.pid"));
        child.kill().unwrap(); // SIGKILL, in the middle of step k
        child.wait().unwrap();
        Command::new("kill").args(["-9", &pid]).status().unwrap();
        std::fs::remove_file(s.path().join("paused.pid")).unwrap();
        std::fs::remove_file(s.path().join(format!("pause-s{k}"))).unwrap();
        let runs = s.then(&["runs"]).status(0).run().stdout;
        let line = runs.lines().find(|l| l.starts_with(&run_id)).unwrap();
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            [
                run_id.as_str(),
                "graphs/five",
                "interrupted",
                &(k - 1).to_string(),
                &format!("s{k}")
            ]
        );
        let resumed = s
            .then(&["run", "graphs/five", "--resume", &run_id])
            .status(0)
            .run();
        assert_eq!(resumed.stdout, result, "killed during step {k}");
        let first = resumed
            .stderr
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        assert_eq!(
            first,
            format!(
                "run {run_id}: resuming graphs/five after step {} at `s{k}`",
                k - 1
            )
        );
        let mut trail: Vec<String> = (1..=5).map(|i| format!("s{i}")).collect();
        trail.insert(k - 1, format!("s{k}"));
        assert_eq!(
            s.read(&format!("{run_id}.log")),
            trail.join("\n") + "\n",
            "only the interrupted step ran twice"
        );
    }
}

// SIGKILL during every step of the five-step graph checkpointed every two steps (set by the
// flag, a STRATA_* variable or strata.yaml), then --resume: the run goes on from the last
// checkpoint written, running again only the steps taken since.
#[test]
fn a_run_checkpointed_every_two_steps_resumes_from_the_last_checkpoint() {
    let result = "{\n  \"total\": 15,\n  \"trail\": \"s1s2s3s4s5\"\n}\n";
    let s = project()
        .file("tools/test/step.yaml", STEP_TOOL)
        .file("tools/test/step.sh", STEP_SCRIPT)
        .file("tools/graphs/five.yaml", five_steps())
        .args(&["config", "--json"])
        .env("STRATA_CHECKPOINT_EVERY", "2s")
        .status(0)
        .run();
    assert_eq!(
        s.json()["checkpoint_every"],
        serde_json::json!({"value": "2s", "source": "env STRATA_CHECKPOINT_EVERY"})
    );
    for k in 1..=5usize {
        let run_id = format!("every2-{k}");
        let log = format!("log={run_id}.log");
        let mut args = vec![
            "run",
            "graphs/five",
            "--input",
            &log,
            "--run-id",
            &run_id,
            "--quiet",
        ];
        let mut run = s.then(&[]).file(&format!("pause-s{k}"), "");
        match k {
            2 => run = run.env("STRATA_CHECKPOINT_EVERY", "2"),
            4 => run = run.file("strata.yaml", "checkpoint_every: 2\n"),
            _ => args.extend(["--checkpoint-every", "2"]),
        }
        let mut child = run.args(&args).spawn();
        let pid = wait_for(&s.path().join("paused.pid"));
        child.kill().unwrap(); // SIGKILL, in the middle of step k
        child.wait().unwrap();
        Command::new("kill").args(["-9", &pid]).status().unwrap();
        std::fs::remove_file(s.path().join("paused.pid")).unwrap();
        std::fs::remove_file(s.path().join(format!("pause-s{k}"))).unwrap();
        let _ = std::fs::remove_file(s.path().join("strata.yaml"));
        // The last checkpoint written: before the first step, after the second, the fourth.
        let durable = (k - 1) / 2 * 2;
        let runs = s.then(&["runs"]).status(0).run().stdout;
        let line = runs.lines().find(|l| l.starts_with(&run_id)).unwrap();
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            [
                run_id.as_str(),
                "graphs/five",
                "interrupted",
                &durable.to_string(),
                &format!("s{}", durable + 1)
            ],
            "killed during step {k}"
        );
        let resumed = s
            .then(&["run", "graphs/five", "--resume", &run_id])
            .status(0)
            .run();
        assert_eq!(resumed.stdout, result, "killed during step {k}");
        assert_eq!(
            resumed.stderr.lines().next().unwrap_or_default(),
            format!(
                "run {run_id}: resuming graphs/five after step {durable} at `s{}`",
                durable + 1
            )
        );
        let trail: Vec<String> = (1..=k)
            .chain(durable + 1..=5)
            .map(|i| format!("s{i}"))
            .collect();
        assert_eq!(
            s.read(&format!("{run_id}.log")),
            trail.join("\n") + "\n",
            "killed during step {k}: the steps since the last checkpoint ran again"
        );
    }
    // The interval is a duration of the one grammar (`1m`, `1.5s`, `1w`), the range its own.
    for every in ["1m", "1.5s", "1w", " 500ms "] {
        s.then(&[
            "run",
            "graphs/five",
            "--input",
            "log=every.log",
            "--quiet",
            "--checkpoint-every",
            every,
        ])
        .stdout(result)
        .status(0)
        .run();
    }
    for (every, why) in [
        ("0s", "`0s` is not a checkpoint interval: it must be greater than 0"),
        ("8d", "`8d` is not a checkpoint interval: it must be at most a week (1w)"),
        ("0", "`0` is not a number of steps: it must be greater than 0"),
        ("soon", "`soon` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"),
        ("1.0005s", "`1.0005s` is finer than a millisecond"),
    ] {
        s.then(&["run", "graphs/five", "--checkpoint-every", every])
            .stderr(&format!(
                "error: invalid value '{every}' for '--checkpoint-every <N|DURATION>': {why}\n\nFor more information, try '--help'.\n",
            ))
            .status(2)
            .run();
    }
    let e = s
        .then(&["run", "graphs/five", "--input", "log=every.log", "--quiet"])
        .env("STRATA_CHECKPOINT_EVERY", "1h30m")
        .status(2)
        .run();
    assert!(
        e.stderr.contains("STRATA_CHECKPOINT_EVERY: `1h30m` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"),
        "{}",
        e.stderr
    );
    let config = s
        .then(&["config", "--json"])
        .env("STRATA_CHECKPOINT_EVERY", "1.5h")
        .status(0)
        .run();
    assert_eq!(
        config.json()["checkpoint_every"],
        serde_json::json!({"value": "90m", "source": "env STRATA_CHECKPOINT_EVERY"})
    );
}
