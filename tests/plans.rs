//! End-to-end tests of `strata plan`: the real binary in scratch projects running real tools.
//! Progress lines, failure propagation, user values, dry runs, JSON reports, resolve (once
//! and JSON Lines), show and graph, bad input with file:line:col, streamed steps, the shipped
//! example plans, and a run killed with SIGKILL and resumed.

mod common;
use common::{timeless, wait_for, Ran, Test};

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Prints its caller parameters as JSON (the subprocess primitive: fast).
const JSON_TOOL: &str = r#"description: prints its parameters as JSON
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    n: {type: integer}
    text: {type: string}
    data: {}
    to: {type: string}
    body: {type: string}
    from: {type: string}
    input: {}
    x: {}
config:
  command: printf
  args: ["%s\n", "{params_json}"]
"#;

/// Prints plain text: a result that is not JSON.
const TEXT_TOOL: &str = r#"description: prints text
executor: runtimes/subprocess
config:
  command: printf
  args: ["plain words\n"]
"#;

/// Fails with seven lines on standard error, one of them holding its secret token.
const FAIL_TOOL: &str = r#"description: fails loudly
executor: runtimes/bash
secrets: [API_TOKEN]
env_config:
  env:
    API_TOKEN: "${API_TOKEN:-none}"
parameters:
  type: object
  properties:
    from: {type: string}
config:
  script: fail.sh
"#;

const FAIL_SCRIPT: &str = r#"for i in 1 2 3 4 5; do printf 'line %s\n' "$i" >&2; done
printf 'token was %s\n' "$API_TOKEN" >&2
printf 'giving up\n' >&2
exit 3
"#;

/// Logs its name, pauses while `pause-<name>` exists (writing its pid to `paused.pid`),
/// then prints `{"name": …, "n": …}`.
const STEP_TOOL: &str = r#"description: logs, may pause, prints JSON
executor: runtimes/bash
parameters:
  type: object
  properties:
    name: {type: string}
    n: {type: integer}
  required: [name, n]
config:
  script: step.sh
"#;

const STEP_SCRIPT: &str = r#"printf '%s\n' "$PARAM_NAME" >> steps.log
if [ -e "pause-$PARAM_NAME" ]; then
  printf '%s\n' "$$" > paused.tmp
  mv paused.tmp paused.pid
  exec sleep 30
fi
printf '{"name": "%s", "n": %s}\n' "$PARAM_NAME" "$PARAM_N"
"#;

/// A scratch project: the repository's `tools/` and `plans/`, plus small test tools.
fn project() -> Test {
    Test::new()
        .copy("tools")
        .copy("plans")
        .tool("t/json", JSON_TOOL)
        .tool("t/text", TEXT_TOOL)
        .tool("t/fail", FAIL_TOOL)
        .file("tools/t/fail.sh", FAIL_SCRIPT)
        .tool("t/step", STEP_TOOL)
        .file("tools/t/step.sh", STEP_SCRIPT)
}

/// Waits until run `run`'s checkpoint holds the record of step `id`.
fn wait_for_record(p: &Test, run: &str, id: &str) {
    let checkpoint = format!(".strata/runs/{run}/checkpoint.json");
    let record = format!("\"id\":\"{id}\"");
    let start = Instant::now();
    while !p.read(&checkpoint).contains(&record) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "step `{id}` was never recorded"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `"duration_ms": 12` becomes 0, wherever it is.
fn zero_durations(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                if k == "duration_ms" {
                    *x = json!(0);
                } else {
                    zero_durations(x);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(zero_durations),
        _ => {}
    }
}

const CHAIN: &str = r#"# a -> b -> c, and d on its own
- {id: a, tool: t/json, arguments: {n: 1, text: "first"}}
- {id: b, tool: t/json, arguments: {n: "$step9.n", text: "after {{a.result.text}}"}, depends_on: [a]}
- {id: 9, tool: t/json, arguments: {n: 9}}
- {id: c, tool: t/json, arguments: {data: "{{b.result}}", text: "n={{ b.result.n }}"}}
"#;

#[test]
fn a_run_prints_a_line_per_step_and_the_results_of_the_last_steps() {
    let o = project()
        .file("plans/chain.yaml", CHAIN)
        .args(&[
            "plan",
            "run",
            "plans/chain.yaml",
            "--jobs",
            "1",
            "--run-id",
            "r1",
        ])
        .stdout("{\n  \"c\": {\n    \"text\": \"n=9\",\n    \"data\": {\n      \"n\": 9,\n      \"text\": \"after first\"\n    }\n  }\n}\n")
        .status(0)
        .run();
    assert_eq!(
        timeless(&o.stderr),
        "run r1: plans/chain.yaml, 4 steps in 3 levels, at most 1 at once
start a (t/json)
end a (t/json): completed in N ms
start step9 (t/json)
end step9 (t/json): completed in N ms
start b (t/json)
end b (t/json): completed in N ms
start c (t/json)
end c (t/json): completed in N ms
run r1: completed (4 completed)
"
    );
}

const EXERCISE: &str = r#"[
  { "id": "A", "tool": "t/json", "arguments": { "data": [{"email": "ann@example.com"}] } },
  { "id": "B", "tool": "t/fail", "arguments": { "from": "{{A.result.data[0].email}}" } },
  { "id": "C", "tool": "t/json", "arguments": { "text": "{{B.result.data[0].body}}" } },
  { "id": "D", "tool": "t/json", "arguments": { "to": "{{A.result.data[0].email}}", "body": "{{C.result.summary}}" } }
]
"#;

#[test]
fn when_b_fails_c_and_d_are_skipped_a_completed_and_the_tail_is_redacted() {
    let o = project()
        .file("plans/exercise.json", EXERCISE)
        .args(&["plan", "run", "plans/exercise.json", "--run-id", "ex"])
        .env("API_TOKEN", "t0p-s3cret")
        .stdout("{}\n")
        .status(1)
        .run();
    assert_eq!(
        timeless(&o.stderr),
        "run ex: plans/exercise.json, 4 steps in 4 levels, at most 4 at once
start A (t/json)
end A (t/json): completed in N ms
start B (t/fail)
end B (t/fail): failed in N ms: tool `t/fail` exited with code 3
    ! line 1
    ! line 2
    ! line 3
    ! line 4
    ! line 5
    ! token was ***
    ! giving up
skip C (t/json): step `B` failed
skip D (t/json): step `C` was skipped
run ex: failed (1 completed, 1 failed, 2 skipped)
"
    );
    // What the tool printed about its secret is redacted in the record too: nothing on disk
    // holds it.
    let text = o.read(".strata/runs/ex/checkpoint.json");
    assert!(!text.contains("t0p-s3cret"));
    let cp: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(cp["status"], json!("failed"));
    assert_eq!(cp["records"].as_array().unwrap().len(), 4);
}

/// Prints a result holding every layer's syntax, quotes, a newline and backslashes.
const EMIT_TOOL: &str = r#"description: prints awkward data
executor: runtimes/subprocess
config:
  command: printf
  args:
    - "%s\n"
    - literal: '{"text": "{{b.result.secret}} $step2 {$step1.x} \"q\" \\ ${HOME} {tool_path}\nline two"}'
"#;

#[test]
fn results_reach_the_next_tool_byte_for_byte() {
    let o = project()
        .tool("t/emit", EMIT_TOOL)
        .file(
            "plans/data.yaml",
            "- {tool: t/emit, arguments: {}}\n\
             - {tool: t/json, arguments: {text: '$step1.text', x: '<{$step1.text}>', data: '$step1'}}\n",
        )
        .args(&["plan", "run", "plans/data.yaml", "--quiet"])
        .status(0)
        .run();
    let text = "{{b.result.secret}} $step2 {$step1.x} \"q\" \\ ${HOME} {tool_path}\nline two";
    assert_eq!(
        o.json(),
        json!({"step2": {"text": text, "data": {"text": text}, "x": format!("<{text}>")}})
    );
}

#[test]
fn a_referenced_value_that_fails_the_schema_fails_its_step() {
    let o = project()
        .file(
            "plans/schema.yaml",
            "- {tool: t/text, arguments: {}}\n- {tool: t/json, arguments: {n: '$step1'}}\n",
        )
        .args(&["plan", "run", "plans/schema.yaml", "--json", "--quiet"])
        .status(1)
        .run();
    assert_eq!(
        o.json()["steps"][1]["error"],
        json!({"kind": "invalid", "message": "params error at $: invalid parameters for `t/json`: parameter `n` must be an integer, not a string (hint: the parameters are: n (integer), text (string), data, to (string), body (string), from (string), input, x)"})
    );
}

#[test]
fn the_json_report_has_every_record_the_levels_and_missing_values() {
    let o = project()
        .file(
            "plans/mixed.yaml",
            "- {id: a, tool: t/json, arguments: {n: 1}}\n\
         - {id: b, tool: t/json, arguments: {text: '{{PLACEHOLDER_who}}', n: '{{a.result.n}}'}}\n\
         - {id: c, tool: t/json, arguments: {x: '{{b.result}}'}}\n\
         - {id: d, tool: t/text, arguments: {}}\n\
         - {id: e, tool: t/json, arguments: {text: '{{d.result.words}}'}}\n",
        )
        .args(&[
            "plan",
            "run",
            "plans/mixed.yaml",
            "--json",
            "--quiet",
            "--run-id",
            "j1",
        ])
        .stderr(
            "waiting for values: `who`\n  resume with: strata plan run --resume j1 --value who=…\n",
        )
        .status(1)
        .run();
    let mut report = o.json();
    zero_durations(&mut report);
    let run = json!({"success": true, "exit_code": 0, "signal": null, "stderr": "", "duration_ms": 0,
                     "truncated": false, "timed_out": false});
    assert_eq!(
        report,
        json!({
            "run_id": "j1",
            "plan": "plans/mixed.yaml",
            "status": "failed",
            "levels": [["a", "d"], ["b", "e"], ["c"]],
            "steps": [
                {"id": "a", "status": "completed", "result": {"n": 1}, "error": null, "run": run},
                {"id": "b", "status": "waiting", "result": null, "error": null, "run": null, "waiting_for": ["who"]},
                {"id": "c", "status": "waiting", "result": null, "error": null, "run": null, "waiting_for": ["who"]},
                {"id": "d", "status": "completed", "result": "plain words", "error": null, "run": run},
                {"id": "e", "status": "failed", "result": null, "error": {
                    "kind": "path_not_found",
                    "message": "plans/mixed.yaml:5:44: plan error at [4].arguments.text 0..18: `{{d.result.words}}`: step `d` has no `result.words`; `result` is a string"
                }, "run": null},
            ],
            "missing_values": ["who"],
            "rejected": [],
        })
    );
}

#[test]
fn missing_values_are_listed_with_their_own_exit_code_and_a_resume_supplies_them() {
    let p = project();
    p.then(&["plan", "run", "plans/meeting.yaml", "--run-id", "m1"])
        .stderr(
            "run m1: plans/meeting.yaml, 2 steps in 2 levels, at most 4 at once
wait invite (plans/reply): needs `meeting_title`, `attendees`
wait confirm (plans/reply): needs `meeting_title`, `attendees`
run m1: waiting (2 waiting)
waiting for values: `meeting_title`, `attendees`
  resume with: strata plan run --resume m1 --value meeting_title=… --value attendees=…
",
        )
        .status(3)
        .run();
    p.then(&[
        "plan",
        "run",
        "--resume",
        "m1",
        "--value",
        "meeting_title=Q1 review",
        "--value-json",
        "attendees=[\"ann@example.com\", \"bob@example.com\"]",
        "--quiet",
    ])
    .stdout(
        "{\n  \"confirm\": {\n    \"message\": \"Sent Q1 review to [\\\"ann@example.com\\\",\\\"bob@example.com\\\"]\",\n    \"details\": null\n  }\n}\n",
    )
    .status(0)
    .run();
    p.then(&["plan", "run", "--resume", "m1"])
        .stderr("error[request]: run `m1` has already ended (completed)\n")
        .status(2)
        .run();
    p.then(&[
        "plan",
        "run",
        "plans/meeting.yaml",
        "--value",
        "meeting_title",
    ])
    .stderr("error[request]: --value `meeting_title` is not of the form KEY=VALUE\n")
    .status(2)
    .run();
}

#[test]
fn a_dry_run_resolves_and_validates_what_it_can_and_runs_nothing() {
    let p = project().file(
        "plans/dry.yaml",
        "- {id: a, tool: t/json, arguments: {n: 1, text: 'hi {{PLACEHOLDER_who}}'}}\n\
         - {id: b, tool: t/json, arguments: {n: '{{a.result.n}}'}}\n\
         - {id: c, tool: plans/mail, arguments: {op: fetch_contacts, ms: '{{PLACEHOLDER_ms}}'}}\n\
         - {id: d, tool: t/json, arguments: {text: '{{PLACEHOLDER_missing}}'}}\n",
    );
    p.then(&[
        "plan",
        "run",
        "plans/dry.yaml",
        "--dry-run",
        "--value",
        "who=Ann",
        "--value-json",
        "ms=-1",
    ])
    .stdout(
        "dry run: 4 steps in 2 levels, nothing runs
a (t/json), level 0: ready {\"n\":1,\"text\":\"hi Ann\"}
b (t/json), level 1: blocked until a completed
c (plans/mail), level 0: failed: invalid parameters for `plans/mail`: parameter `ms` must be at least 0
d (t/json), level 0: waiting for `missing`
missing values: `missing`
",
    )
    .status(1)
    .run();
    assert!(!p.path().join(".strata/runs").exists());
    let v = p
        .then(&["plan", "run", "plans/dry.yaml", "--dry-run", "--json"])
        .status(3)
        .run()
        .json();
    assert_eq!(v["missing_values"], json!(["who", "ms", "missing"]));
    assert_eq!(
        v["steps"][0],
        json!({"id": "a", "depends_on": [], "state": "waiting", "waiting_for": ["who"]})
    );
    assert_eq!(v["levels"], json!([["a", "c", "d"], ["b"]]));
}

#[test]
fn show_and_graph_draw_the_dependencies() {
    let p = project();
    p.then(&["plan", "show", "plans/exercise.yaml"])
        .stdout(
            "plans/exercise.yaml: 4 steps in 4 levels
level 0
  A (plans/mail)
    intent: Find John
level 1
  B (plans/mail) after A
    intent: Fetch John's e-mails
level 2
  C (plans/mail) after B
    intent: Summarise the latest one
level 3
  D (plans/mail) after A, C
    intent: Send John the summary
",
        )
        .status(0)
        .run();
    assert_eq!(
        p.then(&["plan", "show", "plans/meeting.yaml", "--json"])
            .status(0)
            .run()
            .json(),
        json!({
            "steps": [
                {"id": "invite", "tool": "plans/reply", "depends_on": [], "level": 0, "intent": "Create the meeting"},
                {"id": "confirm", "tool": "plans/reply", "depends_on": ["invite"], "level": 1, "intent": null},
            ],
            "levels": [["invite"], ["confirm"]],
            "values": ["meeting_title", "attendees"],
        })
    );
    p.then(&["plan", "graph", "plans/diamond.yaml"])
        .stdout(
            "flowchart TD
    s0[\"A<br/>plans/work\"]
    s1[\"B<br/>plans/work\"]
    s2[\"C<br/>plans/work\"]
    s3[\"D<br/>plans/work\"]
    s0 --> s1
    s0 --> s2
    s1 --> s3
    s2 --> s3
",
        )
        .status(0)
        .run();
    p.then(&["plan", "graph", "plans/duplicates.json", "--format", "dot"])
        .stdout(
            "digraph plan {
    rankdir=TB;
    \"setup\" [shape=box, label=\"setup\\nplans/make_sample\"];
    \"step1\" [shape=box, label=\"step1\\nplans/duplicates\"];
    \"step2\" [shape=box, label=\"step2\\nplans/reply\"];
    \"setup\" -> \"step1\";
    \"step1\" -> \"step2\";
}
",
        )
        .status(0)
        .run();
}

#[test]
fn resolve_answers_once_for_a_plan_file() {
    let p = project();
    let o = p
        .then(&[
            "plan",
            "resolve",
            "plans/exercise.yaml",
            "--results",
            r#"{"A": {"data": [{"email": "x@y"}]}, "B": {"data": []}}"#,
        ])
        .status(0)
        .run();
    assert_eq!(
        o.json(),
        json!({
            "ok": true,
            "levels": [["A"], ["B"], ["C"], ["D"]],
            "steps": [
                {"id": "A", "depends_on": [], "state": "completed"},
                {"id": "B", "depends_on": ["A"], "state": "completed"},
                {"id": "C", "depends_on": ["B"], "state": "failed", "error": {
                    "kind": "path_not_found",
                    "message": "`{{B.result.data[0].body}}`: step `B` has no `result.data[0]`; `result.data` is a list of 0 items"}},
                {"id": "D", "depends_on": ["A", "C"], "state": "skipped", "error": {"kind": "run_state", "message": "step `C` failed"}},
            ],
            "missing_values": [],
        })
    );
    let v = p
        .then(&["plan", "resolve", "plans/exercise.yaml", "--failed", "A"])
        .status(0)
        .run()
        .json();
    assert_eq!(v["steps"][1]["state"], json!("skipped"));
    let o = p
        .then(&["plan", "resolve", "plans/exercise.yaml", "--failed", "Z"])
        .status(2)
        .run();
    assert_eq!(
        o.json(),
        json!({"ok": false, "error": {"kind": "unknown_step", "message": "the plan has no step `Z`", "path": "failed[0]", "span": null}})
    );
}

#[test]
fn batch_answers_every_line_even_after_bad_ones() {
    let big = "x".repeat(10_000_000);
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let lines = [
        json!({"id": 1, "plan": [{"tool": "t", "arguments": {"m": "{$step2.n} and {{step2.status}}"}}, {"tool": "u", "arguments": {}}], "results": {"step2": {"n": 5}}}).to_string(),
        "not json".to_string(),
        json!({"id": 2, "plan": [{"id": "a", "tool": "t", "arguments": {"x": "{{b.result}}"}}, {"id": "b", "tool": "t", "arguments": {"x": "$step1 more"}}]}).to_string(),
        String::new(),
        json!({"id": 3, "plan": [{"tool": "t", "arguments": {"x": "{{PLACEHOLDER_v}}"}}], "values": {"v": [1, 2]}}).to_string(),
        format!("{{\"id\": 4, \"plan\": {deep}}}"),
        json!({"id": 5, "plan": [{"tool": "t", "arguments": {}}, {"tool": "t", "arguments": {"len": "{$step1.big}", "x": "$step1.missing"}}], "results": {"step1": {"big": big}}}).to_string(),
        json!({"id": 6, "plan": [{"tool": "t", "arguments": {"x": "{{a.result}}"}}]}).to_string(),
    ]
    .join("\n");
    let o = project()
        .args(&["plan", "resolve", "--batch"])
        .stdin(lines + "\n")
        .status(0)
        .run();
    let replies: Vec<Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 7);
    assert_eq!(
        replies[0],
        json!({"id": 1, "ok": true, "levels": [["step2"], ["step1"]], "steps": [
            {"id": "step1", "depends_on": ["step2"], "state": "ready", "arguments": {"m": "5 and completed"}},
            {"id": "step2", "depends_on": [], "state": "completed"}], "missing_values": []})
    );
    assert_eq!(
        replies[1],
        json!({"ok": false, "error": {"kind": "syntax", "message": "the line is not JSON: expected ident at line 1 column 2", "path": "$", "span": null}})
    );
    assert_eq!(
        replies[2]["error"],
        json!({"kind": "syntax", "message": "a string starting with `$step` must be exactly one reference (`$stepN` or `$stepN.path`); embed with `{$stepN.path}`; write `$$step` for the literal text `$step`", "path": "plan[1].arguments.x", "span": [0, 11]})
    );
    assert_eq!(replies[3]["steps"][0]["arguments"], json!({"x": [1, 2]}));
    assert_eq!(
        replies[4],
        json!({"id": 4, "ok": false, "error": {"kind": "syntax", "message": "the line is not JSON: recursion limit exceeded at line 1 column 145", "path": "$", "span": null}})
    );
    assert_eq!(
        replies[5]["steps"][1]["error"],
        json!({"kind": "path_not_found", "message": "`$step1.missing`: step `step1` has no `result.missing`; `result` has `big`"})
    );
    assert_eq!(
        replies[6]["error"]["message"],
        json!("step `step1` refers to unknown step `a`")
    );
}

#[test]
fn a_ten_thousand_step_chain_resolves() {
    let steps: Vec<Value> = (1..=10_000)
        .map(|i| {
            if i == 1 {
                json!({"tool": "t", "arguments": {}})
            } else {
                json!({"tool": "t", "arguments": {"prev": format!("$step{}", i - 1)}})
            }
        })
        .collect();
    let v = project()
        .file("plans/long.json", Value::Array(steps).to_string())
        .args(&["plan", "resolve", "plans/long.json"])
        .status(0)
        .run()
        .json();
    assert_eq!(v["levels"].as_array().unwrap().len(), 10_000);
    assert_eq!(v["steps"][0]["state"], json!("ready"));
    assert_eq!(v["steps"][9_999]["waiting_for"], json!(["step9999"]));
}

/// Runs `plans/<name>` holding `text`.
fn plan_error(p: &Test, name: &str, text: &str) -> Ran {
    let path = format!("plans/{name}");
    p.then(&["plan", "run", &path])
        .file(&path, text)
        .status(2)
        .run()
}

#[test]
fn bad_plans_are_errors_with_file_line_col_and_nothing_runs() {
    let p = project();
    let cases: [(&str, &str, &str); 8] = [
        (
            "bad.json",
            "[{\"tool\": \"t/json\", \"arguments\": {\"n\": 1}]",
            "error[request]: JSON syntax error: expected `,` or `}`
  --> plans/bad.json:1:42
  |
1 | [{\"tool\": \"t/json\", \"arguments\": {\"n\": 1}]
  |                                          ^
",
        ),
        (
            "bad.yaml",
            "- tool: t/json\n  arguments: {n: [1, 2}\n",
            "error[request]: YAML syntax error: while parsing a flow sequence, expected ',' or ']'
  --> plans/bad.yaml:2:23
  |
2 |   arguments: {n: [1, 2}
  |                       ^
",
        ),
        (
            "both.yaml",
            "- tool: t/json\n  arguments: {}\n  parameters: {}\n",
            "error[plan]: step `step1` has both `arguments` and `parameters`
  --> plans/both.yaml:3:15
  |
3 |   parameters: {}
  |               ^
   = field: [0].parameters
   = help: give exactly one of them
",
        ),
        (
            "tool.yaml",
            "- tool: t/jsn\n  arguments: {}\n",
            "error[request]: step `step1` calls unknown tool `t/jsn`
  --> plans/tool.yaml:1:9
  |
1 | - tool: t/jsn
  |         ^
   = field: [0].tool
   = help: did you mean `t/json`?
",
        ),
        (
            "typo.yaml",
            "- {id: find_john, tool: t/json, arguments: {}}\n- {id: send, tool: t/json, arguments: {to: '{{fnd_john.result.email}}'}}\n",
            "error[plan]: step `send` refers to unknown step `fnd_john`
  --> plans/typo.yaml:2:45
  |
2 | - {id: send, tool: t/json, arguments: {to: '{{fnd_john.result.email}}'}}
  |                                             ^^^^^^^^^^^^^^^^^^^^^^^^^
   = field: [1].arguments.to (bytes 0..25)
   = help: did you mean `find_john`?
",
        ),
        (
            "cycle.yaml",
            "- {id: a, tool: t/json, arguments: {}}\n- {id: b, tool: t/json, arguments: {x: '{{c.result}}'}}\n- {id: c, tool: t/json, arguments: {x: '{{b.result}}'}}\n",
            "error[plan]: circular dependency: b -> c -> b
  --> plans/cycle.yaml:2:41
  |
2 | - {id: b, tool: t/json, arguments: {x: '{{c.result}}'}}
  |                                         ^^^^^^^^^^^^
   = field: [1].arguments.x (bytes 0..12)
   = help: a step cannot depend on itself, directly or through others
",
        ),
        (
            "whole.yaml",
            "- {tool: t/json, arguments: {}}\n- {tool: t/json, arguments: {text: '$step1.text and more'}}\n",
            "error[plan]: a string starting with `$step` must be exactly one reference (`$stepN` or `$stepN.path`)
  --> plans/whole.yaml:2:37
  |
2 | - {tool: t/json, arguments: {text: '$step1.text and more'}}
  |                                     ^^^^^^^^^^^^^^^^^^^^
   = field: [1].arguments.text (bytes 0..20)
   = help: embed with `{$stepN.path}`; write `$$step` for the literal text `$step`
",
        ),
        (
            "field.yaml",
            "- {id: a, tool: t/json, arguments: {}}\n- {tool: t/json, arguments: {to: '{{a.email}}'}}\n",
            "error[plan]: `email` is not a field of step `a`'s record (id, status, result, error, run)
  --> plans/field.yaml:2:35
  |
2 | - {tool: t/json, arguments: {to: '{{a.email}}'}}
  |                                   ^^^^^^^^^^^
   = field: [1].arguments.to (bytes 0..11)
   = help: did you mean `{{a.result.email}}`?
",
        ),
    ];
    for (name, text, want) in cases {
        let o = plan_error(&p, name, text);
        assert_eq!(o.stderr, want, "{name}");
        assert_eq!(o.code, Some(2), "{name}");
    }
    assert!(!p.path().join(".strata/runs").exists());
    assert_eq!(p.read("steps.log"), "");
}

#[test]
fn a_run_of_a_deeply_nested_or_huge_plan_is_an_error_or_works_never_a_panic() {
    let p = project();
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let o = plan_error(&p, "deep.yaml", &deep);
    assert_eq!(
        o.error_line(),
        "error[request]: JSON syntax error: recursion limit exceeded"
    );
    assert_eq!(o.code, Some(2));
    // 100,000 steps: shown (every level listed) without trouble.
    let steps: Vec<Value> = (0..100_000)
        .map(|i| json!({"tool": "t/json", "arguments": {"n": i}}))
        .collect();
    let o = p
        .then(&["plan", "show", "plans/huge.json"])
        .file("plans/huge.json", Value::Array(steps).to_string())
        .status(0)
        .run();
    assert_eq!(
        o.stdout.lines().next().unwrap(),
        "plans/huge.json: 100000 steps in 1 levels"
    );
}

#[test]
fn streamed_steps_start_as_they_arrive() {
    let p = project();
    let mut running = p
        .then(&["plan", "run", "-", "--run-id", "st"])
        .status(1)
        .start();
    running.write(
        r#"{"id": "first", "tool": "t/step", "arguments": {"name": "first", "n": 1}}
"#,
    );
    // The first step runs, and ends, before the next line exists.
    wait_for_record(&p, "st", "first");
    running.write(
        r#"{"tool": "t/step", "arguments": {"name": "second", "n": "{{first.result.n}}"}}
{"tool": "t/json", "arguments": {"x": "{{later.result}}"}}
{"tool": oops}
"#,
    );
    let o = running.finish();
    // The fourth line's error is printed when it is read, whatever runs then.
    let error = "error[request]: JSON syntax error: expected value\n  --> <stdin>:4:10\n";
    assert!(o.stderr.contains(error), "{}", o.stderr);
    assert_eq!(
        timeless(&o.stderr.replace(error, "")),
        "run st: steps from <stdin> as they arrive, at most 4 at once
start first (t/step)
end first (t/step): completed in N ms
start step2 (t/step)
end step2 (t/step): completed in N ms
end step3 (t/json): failed: <stdin>:3:40: plan error at arguments.x 0..16: step `step3` refers to unknown step `later` (hint: the other steps are `first`, `step2`)
run st: failed (2 completed, 1 failed)
"
    );
    assert_eq!(o.read("steps.log"), "first\nsecond\n");
    o.then(&["plan", "run", "--resume", "st"])
        .stderr(
            "error[request]: run `st` ran steps streamed on standard input; it cannot be resumed
   = help: start a new run with the whole plan; finished steps are in its checkpoint
",
        )
        .status(2)
        .run();
}

#[test]
fn a_whole_plan_on_standard_input_runs_too() {
    let p = project();
    p.then(&["plan", "run", "-", "--quiet"])
        .stdin(
            "- {tool: t/json, arguments: {n: 2}}\n- {tool: t/json, arguments: {n: '$step1.n'}}\n",
        )
        .stdout("{\n  \"step2\": {\n    \"n\": 2\n  }\n}\n")
        .status(0)
        .run();
    // Streamed steps can be dry-run too: read to the end, then checked as one plan.
    p.then(&["plan", "run", "-", "--dry-run"])
        .stdin(
            "{\"tool\": \"t/json\", \"arguments\": {\"n\": 2}}\n\n{\"tool\": \"t/json\", \"arguments\": {\"n\": \"$step1.n\"}}\n",
        )
        .stdout(
            "dry run: 2 steps in 2 levels, nothing runs\nstep1 (t/json), level 0: ready {\"n\":2}\nstep2 (t/json), level 1: blocked until step1 completed\n",
        )
        .status(0)
        .run();
    p.then(&["plan", "show", "-"])
        .stdin("{\"steps\": [{\"tool\": \"t\", \"arguments\": {}}]}")
        .stdout("<stdin>: 1 steps in 1 levels\nlevel 0\n  step1 (t)\n")
        .status(0)
        .run();
}

#[test]
fn the_shipped_plans_run() {
    let p = project();
    assert_eq!(
        p.then(&["plan", "run", "plans/duplicates.json", "--quiet"])
            .status(0)
            .run()
            .json(),
        json!({"step2": {
            "message": "Found 2 group(s) of duplicate files, wasting 0.4 MB.",
            "details": [
                {"files": ["backup/beach.jpg", "old/beach (1).jpg", "photos/beach.jpg"], "size_bytes": 200004, "sha256": "1213f4abb2b3000d"},
                {"files": ["copy of notes.txt", "notes.txt"], "size_bytes": 15, "sha256": "f233a56920f05d8d"},
            ],
        }})
    );
    assert_eq!(
        p.then(&["plan", "run", "plans/exercise.yaml", "--quiet"])
            .status(0)
            .run()
            .json(),
        json!({"D": {"sent": true, "to": "john.smith@example.com", "body": "Summary: The Q1 report is ready."}})
    );
    let o = p
        .then(&["plan", "run", "plans/diamond.yaml", "--run-id", "dia"])
        .status(0)
        .run();
    let lines: Vec<String> = timeless(&o.stderr).lines().map(String::from).collect();
    // B and C both start before either ends: they run at the same time.
    assert_eq!(
        lines[1..4],
        [
            "start A (plans/work)",
            "end A (plans/work): completed in N ms",
            "start B (plans/work)"
        ]
    );
    assert_eq!(lines[4], "start C (plans/work)");
    assert_eq!(
        lines[7..],
        [
            "start D (plans/work)",
            "end D (plans/work): completed in N ms",
            "run dia: completed (4 completed)"
        ]
    );
    assert_eq!(
        o.json(),
        json!({"D": {"step": "D", "input": ["B", "C"], "slept_ms": 300}})
    );
}

#[test]
fn a_run_killed_during_a_step_resumes_without_rerunning_finished_steps() {
    let p = project()
        .file(
            "plans/three.yaml",
            "- {id: s1, tool: t/step, arguments: {name: s1, n: 1}}\n\
         - {id: s2, tool: t/step, arguments: {name: s2, n: '{{s1.result.n}}'}}\n\
         - {id: s3, tool: t/step, arguments: {name: s3, n: '$step9.n'}}\n\
         - {id: 9, tool: t/step, arguments: {name: s9, n: 9}, depends_on: [s2]}\n",
        )
        .file("pause-s2", "");
    let mut child = p
        .then(&[
            "plan",
            "run",
            "plans/three.yaml",
            "--run-id",
            "k",
            "--jobs",
            "1",
        ])
        .spawn();
    let pid = wait_for(&p.path().join("paused.pid"));
    // s1's record is written while s2 runs (a step whose end was not written yet would run
    // again after a resume, which is the documented contract; this test is about s1).
    wait_for_record(&p, "k", "s1");
    child.kill().unwrap(); // SIGKILL, in the middle of step s2
    child.wait().unwrap();
    Command::new("kill").args(["-9", &pid]).status().unwrap();
    std::fs::remove_file(p.path().join("pause-s2")).unwrap();
    p.then(&["runs"])
        .stdout(
            "RUN  GRAPH                  STATUS       STEPS  NEXT\nk    plan:plans/three.yaml  interrupted  1      -\n",
        )
        .status(0)
        .run();
    let o = p
        .then(&["plan", "run", "--resume", "k"])
        .stdout("{\n  \"s3\": {\n    \"name\": \"s3\",\n    \"n\": 9\n  }\n}\n")
        .status(0)
        .run();
    assert_eq!(
        timeless(&o.stderr),
        "run k: resuming plans/three.yaml, 1 of 4 steps finished, at most 4 at once
start s2 (t/step)
end s2 (t/step): completed in N ms
start step9 (t/step)
end step9 (t/step): completed in N ms
start s3 (t/step)
end s3 (t/step): completed in N ms
run k: completed (4 completed)
"
    );
    // s1 ran once; s2 twice (killed, then again); the others once.
    assert_eq!(o.read("steps.log"), "s1\ns2\ns2\ns9\ns3\n");
    let runs = p.then(&["runs"]).status(0).run().stdout;
    assert!(
        runs.contains("k    plan:plans/three.yaml  completed  4"),
        "{runs}"
    );
    let listed = p.then(&["runs", "--json"]).status(0).run().json();
    let row = &listed[0];
    assert_eq!(
        (
            &row["run_id"],
            &row["plan"],
            &row["status"],
            &row["steps"],
            &row["next"]
        ),
        (
            &json!("k"),
            &json!("plans/three.yaml"),
            &json!("completed"),
            &json!(4),
            &Value::Null
        )
    );
    // A changed plan does not resume.
    p.then(&[
        "plan",
        "run",
        "plans/three.yaml",
        "--run-id",
        "k2",
        "--quiet",
    ])
    .file("plans/three.yaml", "- {tool: t/json, arguments: {}}\n")
    .status(0)
    .run();
    let cp = p.read(".strata/runs/k2/checkpoint.json").replace(
        "\"status\":\"completed\",\"steps\"",
        "\"status\":\"running\",\"steps\"",
    );
    p.then(&["plan", "run", "plans/three.yaml", "--resume", "k2"])
        .file("plans/three.yaml", "- {tool: t/json, arguments: {n: 1}}\n")
        .file(".strata/runs/k2/checkpoint.json", cp)
        .stderr(
            "error[request]: `plans/three.yaml` changed since run `k2` started
   = help: resume without naming the plan to use the plan the run started with
",
        )
        .status(2)
        .run();
}
