//! The walker against fake tools: every node kind, assign semantics, edges, foreach,
//! on_error, max_steps and hooks, with the exact log of every run.

mod common;

use common::run;
use serde_json::json;
use strata_core::ErrorKind;
use strata_graph::{Status, GRAPH};

const COUNTER: &str = "
kind: graph
state: {count: 0}
max_steps: 20
nodes:
  loop:
    kind: gate
    assign: {count: '${state.count + 1}'}
    next:
      - {to: loop, when: 'state.count < 3'}
      - to: done
  done:
    kind: return
    output: {count: '${state.count}', twice: '${state.count * 2}'}
";

#[test]
fn a_gate_loop_counts_and_returns() {
    let (lines, outcome, _) = run(COUNTER, &[]);
    assert_eq!(
        lines,
        [
            "run r1: starting graphs/t at `loop`",
            "step 1 loop (gate) -> loop (when state.count < 3): count = 1 (was 0)",
            "step 2 loop (gate) -> loop (when state.count < 3): count = 2 (was 1)",
            "step 3 loop (gate) -> done (otherwise): count = 3 (was 2)",
            "step 4 done (return) -> return: no state change",
            "run r1: completed after 4 steps",
        ]
    );
    assert_eq!(outcome.status, Status::Completed);
    assert_eq!(outcome.result, json!({"count": 3, "twice": 6}));
}

#[test]
fn assignments_read_the_state_before_the_node() {
    let text = "
kind: graph
state: {a: 1, b: 2}
nodes:
  swap:
    kind: gate
    assign: {a: '${state.b}', b: '${state.a}', sum: '${state.a + state.b}'}
";
    let (lines, outcome, _) = run(text, &[]);
    assert_eq!(
        lines[1],
        "step 1 swap (gate) -> end: a = 2 (was 1), b = 1 (was 2), sum = 3 (new)"
    );
    assert_eq!(outcome.result, json!({"a": 2, "b": 1, "sum": 3}));
}

#[test]
fn actions_render_params_call_tools_and_assign_results() {
    let text = "
kind: graph
parameters:
  type: object
  properties:
    who: {type: string}
    n: {type: integer, default: 2}
  required: [who]
state: {greeting: ''}
nodes:
  call:
    kind: action
    tool: echo
    params: {text: 'hi ${inputs.who}', n: '${inputs.n}', raw: '${HOME}'}
    assign:
      greeting: '${result.text}'
      n: '${result.n + 1}'
    next: done
  done:
    kind: return
    output: '${state.greeting} x${state.n}'
";
    let (lines, outcome, tools) = run(text, &[("who", "${ann}")]);
    assert_eq!(
        lines[1],
        r#"step 1 call (action) -> done: greeting = "hi ${ann}" (was ""), n = 3 (new)"#
    );
    assert_eq!(outcome.result, json!("hi ${ann} x3"));
    assert_eq!(
        tools.calls(),
        [r#"echo {"text":"hi ${ann}","n":2,"raw":"${HOME}"}"#]
    );
}

#[test]
fn foreach_runs_in_parallel_and_collects_in_input_order() {
    let text = "
kind: graph
state: {words: '[\"b\", \"a\", \"c\", \"d\"]'}
nodes:
  each:
    kind: foreach
    over: '${state.words}'
    as: word
    parallel: true
    max_concurrency: 3
    do:
      - kind: action
        tool: echo
        params: {w: '${word}', i: '${word_index}'}
        assign: {seen: '${result.w}'}
      - kind: gate
        assign: {last: '${state.seen + \"!\"}'}
    output: {w: '${state.last}', i: '${result.i}'}
    collect: out
    assign: {n: '${length(result)}'}
    next: done
  done:
    kind: return
    output: '${state}'
";
    let (lines, outcome, tools) = run(text, &[]);
    assert_eq!(
        lines[1],
        r#"step 1 each (foreach) -> done: out = [{"w":"b!","i":0},{"w":"a!","i":1},{"w":"c!","i":2},{"w":"d… (new), n = 4 (new)"#
    );
    assert_eq!(
        outcome.result["out"],
        json!([{"w": "b!", "i": 0}, {"w": "a!", "i": 1}, {"w": "c!", "i": 2}, {"w": "d!", "i": 3}])
    );
    assert_eq!(outcome.result.get("seen"), None, "body state is private");
    let mut calls = tools.calls();
    calls.sort();
    assert_eq!(
        calls,
        [
            r#"echo {"w":"a","i":1}"#,
            r#"echo {"w":"b","i":0}"#,
            r#"echo {"w":"c","i":2}"#,
            r#"echo {"w":"d","i":3}"#,
        ]
    );
}

#[test]
fn foreach_over_a_tool_result_in_order() {
    let text = "
kind: graph
parameters: {type: object, properties: {text: {type: string}}}
nodes:
  split:
    kind: action
    tool: split
    params: {text: '${inputs.text}'}
    assign: {words: '${result}'}
    next: each
  each:
    kind: foreach
    over: '${state.words}'
    do: {kind: action, tool: echo, params: {up: '${upper(item)}'}}
    output: '${result.up}'
    collect: upper
";
    let (_, outcome, _) = run(text, &[("text", "x y z")]);
    assert_eq!(outcome.result["upper"], json!(["X", "Y", "Z"]));
}

#[test]
fn a_failing_node_fails_the_run_by_default() {
    let text = "
kind: graph
nodes:
  bad: {kind: action, tool: fail, next: never}
  never: {kind: return, output: 1}
";
    let (lines, outcome, _) = run(text, &[]);
    assert_eq!(
        lines[1..],
        [
            "step 1 bad failed: tool `fail` exited with code 3 (on_error: fail)\n    ! bad",
            "run r1: failed after 1 step: node `bad`: tool `fail` exited with code 3",
        ]
    );
    assert_eq!(outcome.status, Status::Failed);
    let failure = outcome.failure.unwrap();
    assert_eq!(failure.kind(), ErrorKind::ToolFailed);
    assert_eq!(failure.layer(), GRAPH);
    assert_eq!(
        failure.message(),
        "node `bad`: tool `fail` exited with code 3"
    );
    assert_eq!(failure.path().to_string(), "nodes.bad.tool");
    assert_eq!(
        failure.to_json(),
        json!({"kind": "tool_failed", "layer": "graph",
               "message": "node `bad`: tool `fail` exited with code 3",
               "path": "nodes.bad.tool", "span": null})
    );
}

#[test]
fn on_error_goto_recovers_with_the_error_in_context() {
    let text = "
kind: graph
on_error: recover
state: {attempt: 0}
nodes:
  try:
    kind: action
    tool: flaky
    params: {attempt: '${state.attempt}'}
    next: done
  recover:
    kind: gate
    assign: {attempt: '${state.attempt + 1}', why: '${error.message}'}
    next: try
  done:
    kind: return
    output: {attempts: '${state.attempt}', why: '${state.why}'}
";
    let (lines, outcome, _) = run(text, &[]);
    assert_eq!(
        lines,
        [
            "run r1: starting graphs/t at `try`",
            "step 1 try failed: tool `flaky` exited with code 3 (on_error: goto recover)\n    ! bad",
            r#"step 2 recover (gate) -> try: attempt = 1 (was 0), why = "tool `flaky` exited with code 3" (new)"#,
            "step 3 try failed: tool `flaky` exited with code 3 (on_error: goto recover)\n    ! bad",
            "step 4 recover (gate) -> try: attempt = 2 (was 1)",
            "step 5 try failed: tool `flaky` exited with code 3 (on_error: goto recover)\n    ! bad",
            "step 6 recover (gate) -> try: attempt = 3 (was 2)",
            "step 7 try (action) -> done: no state change",
            "step 8 done (return) -> return: no state change",
            "run r1: completed after 8 steps",
        ]
    );
    assert_eq!(
        outcome.result,
        json!({"attempts": 3, "why": "tool `flaky` exited with code 3"})
    );
}

#[test]
fn on_error_continue_skips_the_node_and_failing_conditions() {
    let text = "
kind: graph
on_error: continue
state: {n: 0}
nodes:
  bad:
    kind: action
    tool: broken
    assign: {n: 5}
    next:
      - {to: odd, when: 'result.x > 1'}
      - to: next
  odd: {kind: return, output: odd}
  next:
    kind: gate
    assign: {n: '${state.n + 1}'}
    next: done
  done: {kind: return, output: '${state}'}
";
    let (lines, outcome, _) = run(text, &[]);
    assert_eq!(
        lines[1..],
        [
            "step 1 bad failed: tool `broken`: cannot spawn `broken` (on_error: continue)",
            "step 1 bad (action) -> next (otherwise): no state change",
            "step 2 next (gate) -> done: n = 1 (was 0)",
            "step 3 done (return) -> return: no state change",
            "run r1: completed after 3 steps",
        ]
    );
    assert_eq!(outcome.result, json!({"n": 1}));
}

#[test]
fn a_condition_that_cannot_be_evaluated_is_a_node_error() {
    let text = "
kind: graph
state: {n: 'three'}
nodes:
  check:
    kind: gate
    assign: {m: 1}
    next:
      - {to: done, when: 'state.n > 2'}
      - to: done
  done: {kind: return, output: '${state}'}
";
    let (lines, outcome, _) = run(text, &[]);
    assert_eq!(
        lines[1],
        "step 1 check failed: condition `state.n > 2` of the edge to `done` failed: `>`: cannot order a string and an integer (on_error: fail)"
    );
    assert_eq!(outcome.status, Status::Failed);
}

#[test]
fn max_steps_stops_a_loop_or_goes_to_the_handler_once() {
    let text = "
kind: graph
max_steps: 3
state: {n: 0}
nodes:
  spin: {kind: gate, assign: {n: '${state.n + 1}'}, next: spin}
";
    let (lines, outcome, _) = run(text, &[]);
    assert_eq!(
        lines[3..],
        [
            "step 3 spin (gate) -> spin: n = 3 (was 2)",
            "limit: max_steps (3) reached after step 3 (on_error: stop)",
            "run r1: limited after 3 steps: max_steps (3) reached before node `spin`",
        ]
    );
    assert_eq!(outcome.status, Status::Limited);
    let failure = outcome.failure.unwrap();
    assert_eq!(failure.kind(), ErrorKind::Limit);
    assert_eq!(
        failure.message(),
        "max_steps (3) reached before node `spin`"
    );
    assert_eq!(failure.path().to_string(), "max_steps");
    assert_eq!(
        failure.hint(),
        Some("raise the graph's `max_steps`, or handle the limit with `on_error: <node>`")
    );

    let text = format!("{text}  out:\n    kind: return\n    output: '${{error.kind}} at ${{state.n}}'\non_error: out\n");
    let (lines, outcome, _) = run(&text, &[]);
    assert_eq!(
        lines[4..],
        [
            "limit: max_steps (3) reached after step 3 (on_error: goto out)",
            "step 4 out (return) -> return: no state change",
            "run r1: completed after 4 steps",
        ]
    );
    assert_eq!(outcome.result, json!("limit at 3"));
}

#[test]
fn hooks_fire_on_every_event_with_their_context() {
    let text = "
kind: graph
max_steps: 2
on_error: continue
state: {n: 0}
hooks:
  - {id: start, event: graph_started, action: {tool: log, params: {m: 'start ${graph} ${run_id}'}}}
  - {id: before, event: before_node, when: 'node.id == \"b\"', action: {tool: log, params: {m: 'before ${node.id} step ${step}'}}}
  - id: after
    event: after_node
    condition: {path: changes.n.to, op: exists}
    action: {tool: log, params: {m: 'after ${node.id}', c: '${changes}'}}
  - {id: err, event: error, action: {tool: log, params: {m: '${error.message} -> ${handling}'}}}
  - {id: lim, event: limit, action: {tool: log, params: {m: '${limit.max_steps} at ${node.id}'}}}
  - {id: end, event: graph_completed, action: {tool: fail, params: {m: '${status} ${output}'}}}
nodes:
  a: {kind: gate, assign: {n: 1}, next: b}
  b: {kind: action, tool: fail, next: a}
";
    let (lines, _, tools) = run(text, &[]);
    assert_eq!(
        lines,
        [
            "run r1: starting graphs/t at `a`",
            "hook start on graph_started (log): completed",
            "step 1 a (gate) -> b: n = 1 (was 0)",
            "hook after on after_node (log): completed",
            "hook before on before_node (log): completed",
            "step 2 b failed: tool `fail` exited with code 3 (on_error: continue)\n    ! bad",
            "hook err on error (log): completed",
            "step 2 b (action) -> a: no state change",
            "limit: max_steps (2) reached after step 2 (on_error: stop)",
            "hook lim on limit (log): completed",
            "hook end on graph_completed (fail): failed: tool `fail` exited with code 3",
            "run r1: limited after 2 steps: max_steps (2) reached before node `a`",
        ]
    );
    assert_eq!(
        tools.calls(),
        [
            r#"log {"m":"start graphs/t r1"}"#,
            r#"log {"m":"after a","c":{"n":{"from":0,"to":1}}}"#,
            r#"log {"m":"before b step 1"}"#,
            r#"fail {}"#,
            r#"log {"m":"tool `fail` exited with code 3 -> continue"}"#,
            r#"log {"m":"2 at a"}"#,
            r#"fail {"m":"limited "}"#,
        ]
    );
}
