//! Directives against a fake tool runner: loading checks, input binding, stages 1–2, actions,
//! `${steps…}`, failures, limits and hooks.

use serde_json::{json, Map, Value};
use strata_core::{Error, Limits};
use strata_directive::{Directive, RunOptions};
use strata_tools::{FakeTools, RunResult};

/// Tools: `echo` prints its params as JSON; `fail` exits 3; `slow` times out; `log` records.
fn fake() -> FakeTools {
    let echo = |p: &Map<String, Value>| Ok(RunResult::ok(Value::Object(p.clone()).to_string()));
    FakeTools::new()
        .tool("echo", echo)
        .tool("log", echo)
        .tool("fail", |_| Ok(RunResult::exited(3, "", "bad")))
        .tool("slow", |_| {
            let mut run = RunResult::exited(0, "", "");
            (run.success, run.exit_code, run.timed_out) = (false, None, true);
            Ok(run)
        })
}

fn load(text: &str) -> Result<Directive, Error> {
    Directive::load("d.md", text, &fake(), &[], &Limits::default())
}

fn given(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect()
}

fn located(e: &Error) -> String {
    let loc = e
        .location()
        .map(|l| format!("{}:{}:{}", l.file, l.line, l.column))
        .unwrap_or_default();
    format!("{loc} {}", e.message())
}

const CHAIN: &str = "---
name: chain
model: {tier: fast}
limits: {turns: 4}
inputs:
  - {name: who, type: string, required: true}
  - {name: n, type: integer, default: 2}
actions:
  - id: first
    tool: echo
    params: {greeting: 'hi {input:who}', n: '{input:n}', tier: '${model.tier}'}
  - id: second
    tool: echo
    params: {got: '${steps.first.result.greeting}', n: '${steps.first.result.n}', all: '${steps.first.result}'}
---
Dear {input:who}, ${directive} used ${limits.turns} turns: ${steps.second.result.got}
";

#[test]
fn actions_chain_through_steps_and_keep_types() {
    let d = load(CHAIN).unwrap();
    let inputs = d
        .bind_inputs(&given(&[("who", "Ann"), ("n", "5")]))
        .unwrap();
    assert_eq!(Value::Object(inputs.clone()), json!({"who": "Ann", "n": 5}));
    let tools = fake();
    let report = d.run(&inputs, &tools, RunOptions::default()).unwrap();
    assert_eq!(report.prompt, "Dear Ann, chain used 4 turns: hi Ann\n");
    let calls = tools.calls();
    assert_eq!(
        calls[0],
        (
            "echo".to_string(),
            json!({"greeting": "hi Ann", "n": 5, "tier": "fast"})
        )
    );
    assert_eq!(
        calls[1],
        (
            "echo".to_string(),
            json!({"got": "hi Ann", "n": 5, "all": {"greeting": "hi Ann", "n": 5, "tier": "fast"}})
        )
    );
    assert_eq!(report.status.name(), "completed");
    assert!(report.warnings.is_empty());
}

#[test]
fn inputs_are_validated_before_anything_runs() {
    let d = load(CHAIN).unwrap();
    let e = d.bind_inputs(&given(&[("whoo", "x")])).unwrap_err();
    assert_eq!(e.to_string(), "inputs error at $: unknown input `whoo`; did you mean `who`? (hint: the inputs are `who`, `n`)");
    let e = d.bind_inputs(&given(&[("n", "5")])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "inputs error at $: missing required input `who` (hint: give each as --input NAME=VALUE)"
    );
    let e = d
        .bind_inputs(&given(&[("who", "a"), ("n", "five")]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "inputs error at $: input `n` must be an integer, got `five`"
    );
    assert_eq!(
        Value::Object(d.bind_inputs(&given(&[("who", "a")])).unwrap()),
        json!({"who": "a", "n": 2})
    );
}

#[test]
fn every_input_type_is_parsed_from_text() {
    let d = load("---\nname: t\ninputs:\n  - {name: i, type: integer}\n  - {name: f, type: number}\n  - {name: b, type: boolean}\n  - {name: a, type: array}\n  - {name: o, type: object}\n  - {name: s, type: string}\n---\n").unwrap();
    let got = d
        .bind_inputs(&given(&[
            ("i", "-7"),
            ("f", "2.5"),
            ("b", "true"),
            ("a", "[1,\"x\"]"),
            ("o", "{\"k\":1}"),
            ("s", "5"),
        ]))
        .unwrap();
    assert_eq!(
        Value::Object(got),
        json!({"i": -7, "f": 2.5, "b": true, "a": [1, "x"], "o": {"k": 1}, "s": "5"})
    );
    for (name, raw, want) in [
        ("f", "x", "a number"),
        ("b", "yes", "a boolean"),
        ("a", "{}", "an array"),
        ("o", "[1]", "an object"),
    ] {
        let e = d.bind_inputs(&given(&[(name, raw)])).unwrap_err();
        assert_eq!(
            e.message(),
            format!("input `{name}` must be {want}, got `{raw}`")
        );
    }
}

#[test]
fn a_failed_action_stops_the_directive_unless_told_to_continue() {
    let text = "---\nname: f\nactions:\n  - {id: a, tool: fail}\n  - {id: b, tool: echo}\n---\n";
    let d = load(text).unwrap();
    let report = d.run(&Map::new(), &fake(), RunOptions::default()).unwrap();
    let statuses: Vec<&str> = report.actions.iter().map(|a| a.status).collect();
    assert_eq!(statuses, ["failed", "skipped"]);
    assert_eq!(report.status.name(), "failed");
    assert_eq!(
        report.stopped.as_deref(),
        Some("action `a` failed: tool `fail` exited with code 3")
    );

    let text = "---\nname: f\nactions:\n  - {id: a, tool: fail, continue_on_error: true}\n  - {id: b, tool: echo, params: {s: '${steps.a.status}'}}\n---\n";
    let report = load(text)
        .unwrap()
        .run(&Map::new(), &fake(), RunOptions::default())
        .unwrap();
    let statuses: Vec<&str> = report.actions.iter().map(|a| a.status).collect();
    assert_eq!(statuses, ["failed", "completed"]);
    assert_eq!(report.actions[1].params, json!({"s": "failed"}));
    assert_eq!(report.status.name(), "completed");
}

#[test]
fn turns_limit_stops_cleanly_and_fires_limit_reached() {
    let text = "---\nname: l\nlimits: {turns: 1}\nhooks:\n  - id: note\n    event: limit_reached\n    action: {tool: log, params: {code: '${limit_code}', at: '${current_value}', of: '${limits.turns}'}}\nactions:\n  - {id: a, tool: echo}\n  - {id: b, tool: echo}\n---\n";
    let tools = fake();
    let report = load(text)
        .unwrap()
        .run(&Map::new(), &tools, RunOptions::default())
        .unwrap();
    assert_eq!(report.status.name(), "limited");
    assert_eq!(
        report.stopped.as_deref(),
        Some("limit `turns` reached (1 of 1)")
    );
    assert_eq!(
        report.actions.iter().map(|a| a.status).collect::<Vec<_>>(),
        ["completed", "skipped"]
    );
    assert_eq!(
        tools.calls().last().unwrap(),
        &(
            "log".to_string(),
            json!({"code": "turns", "at": 1, "of": 1})
        )
    );
}

#[test]
fn hooks_fire_on_events_with_conditions_and_error_data() {
    let text = "---
name: h
model: {tier: fast}
hooks:
  - id: start
    event: directive_started
    action: {tool: log, params: {msg: 'start ${directive} ${model.tier}'}}
  - id: only_echo
    event: before_action
    condition: {path: action.tool, op: eq, value: echo}
    action: {tool: log, params: {msg: 'before ${action.id}'}}
  - id: failed
    event: action_failed
    action: {tool: log, params: {msg: '${error.message}', code: '${run.exit_code}'}}
  - id: done
    event: directive_completed
    action: {tool: log, params: {msg: '${status}'}}
actions:
  - {id: a, tool: echo}
  - {id: b, tool: fail, continue_on_error: true}
---
";
    let tools = fake();
    let report = load(text)
        .unwrap()
        .run(&Map::new(), &tools, RunOptions::default())
        .unwrap();
    let logs: Vec<Value> = tools
        .calls()
        .iter()
        .filter(|c| c.0 == "log")
        .map(|c| c.1.clone())
        .collect();
    assert_eq!(
        logs,
        [
            json!({"msg": "start h fast"}),
            json!({"msg": "before a"}),
            json!({"msg": "tool `fail` exited with code 3", "code": 3}),
            json!({"msg": "completed"}),
        ]
    );
    let fired: Vec<(&str, &str)> = report
        .hooks
        .iter()
        .map(|h| (h.id.as_str(), h.event))
        .collect();
    assert_eq!(
        fired,
        [
            ("start", "directive_started"),
            ("only_echo", "before_action"),
            ("failed", "action_failed"),
            ("done", "directive_completed")
        ]
    );
}

#[test]
fn dry_run_renders_and_runs_nothing() {
    let d = load(CHAIN).unwrap();
    let inputs = d.bind_inputs(&given(&[("who", "Ann")])).unwrap();
    let tools = fake();
    let report = d
        .run(
            &inputs,
            &tools,
            RunOptions {
                dry_run: true,
                ..RunOptions::default()
            },
        )
        .unwrap();
    assert!(tools.calls().is_empty());
    assert_eq!(
        report.actions[0].params,
        json!({"greeting": "hi Ann", "n": 2, "tier": "fast"})
    );
    assert_eq!(
        report.actions.iter().map(|a| a.status).collect::<Vec<_>>(),
        ["dry run", "dry run"]
    );
    assert_eq!(report.status.name(), "dry run");
}

#[test]
fn load_time_errors_have_file_line_and_column() {
    let cases = [
        ("no front matter\n", "d.md:1:1 a directive starts with YAML front matter between `---` lines"),
        ("---\nname: [x\n---\n", "d.md:3:1 YAML syntax error: while parsing a flow sequence, expected ',' or ']'"),
        ("---\nname: x\ncolour: red\n---\n", "d.md:3:1 bad front matter: unknown field `colour`, expected one of `name`, `description`, `version`, `inputs`, `model`, `limits`, `actions`, `hooks`, `responses`"),
        ("---\nname: x\n---\nHello {input:who\n", "d.md:4:7 unclosed `{input:`: no matching `}`"),
        ("---\nname: x\nactions:\n  - {id: a, tool: ech}\n---\n", "d.md:4:19 unknown tool `ech`"),
        ("---\nname: x\nhooks:\n  - {id: h, event: on_start, action: {tool: log}}\n---\n", "d.md:4:20 unknown event `on_start`"),
        ("---\nname: x\nhooks:\n  - {id: h, event: before_action, condition: {path: a, op: is, value: 1}, action: {tool: log}}\n---\n", "d.md:4:46 bad condition: unknown operator `is`; the operators are eq, ne, gt, gte, lt, lte, in, contains, regex, exists"),
        ("---\nname: x\nactions:\n  - {id: a, tool: echo, params: {x: '${steps.a.result}'}}\n---\n", "d.md:4:38 action `a` refers to its own result (`steps.a.result`)"),
        ("---\nname: x\nactions:\n  - id: a\n    tool: echo\n    params:\n      x: 'see ${steps.b.result.stdout}'\n  - {id: b, tool: echo}\n---\n", "d.md:7:15 action `a` refers to `b`, which runs after it (`steps.b.result.stdout`)"),
        ("---\nname: x\nactions:\n  - {id: a, tool: echo}\n  - {id: b, tool: echo, params: {x: '${steps.aa.result}'}}\n---\n", "d.md:5:38 action `b` refers to unknown step `aa` (`steps.aa.result`); did you mean `a`?"),
        ("---\nname: x\ninputs:\n  - {name: n, type: integer, default: two}\n---\n", "d.md:4:39 default of input `n` must be an integer, got `two`"),
        ("---\nname: x\ninputs:\n  - {name: n, type: int}\n---\n", "d.md:4:21 bad front matter: inputs[0].type: unknown variant `int`, expected one of `string`, `integer`, `number`, `boolean`, `array`, `object`"),
    ];
    for (text, want) in cases {
        let e = load(text).unwrap_err();
        assert_eq!(located(&e), want, "{text}");
    }
}

#[test]
fn hook_when_is_honoured_as_in_graphs() {
    let text = "---
name: w
hooks:
  - id: yes
    event: before_action
    when: 'action.tool == \"echo\"'
    action: {tool: log, params: {msg: 'yes ${action.id}'}}
  - id: no
    event: before_action
    when: 'action.tool == \"fail\"'
    action: {tool: log, params: {msg: 'no ${action.id}'}}
  - id: never
    event: directive_completed
    when: false
    action: {tool: log, params: {msg: never}}
  - id: structured
    event: directive_completed
    when: {path: status, op: eq, value: completed}
    action: {tool: log, params: {msg: '${status}'}}
actions:
  - {id: a, tool: echo}
---
";
    let tools = fake();
    let report = load(text)
        .unwrap()
        .run(&Map::new(), &tools, RunOptions::default())
        .unwrap();
    let logs: Vec<Value> = tools
        .calls()
        .iter()
        .filter(|c| c.0 == "log")
        .map(|c| c.1.clone())
        .collect();
    assert_eq!(logs, [json!({"msg": "yes a"}), json!({"msg": "completed"})]);
    let fired: Vec<&str> = report.hooks.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(fired, ["yes", "structured"]);
}

#[test]
fn hook_errors_are_those_of_graph_hooks() {
    let cases = [
        (
            "---\nname: x\nhooks:\n  - {id: h, event: directive_started, whn: 'true', action: {tool: log}}\n---\n",
            "d.md:4:44 unknown key `whn` in a hook",
            Some("did you mean `when`?"),
        ),
        (
            "---\nname: x\nhooks:\n  - {id: h, event: directive_started, action: {tool: log, parms: {}}}\n---\n",
            "d.md:4:66 unknown key `parms` in a hook's `action`",
            Some("did you mean `params`?"),
        ),
        (
            "---\nname: x\nhooks:\n  - {id: h, event: directive_started, when: 'true', condition: 'true', action: {tool: log}}\n---\n",
            "d.md:4:64 a hook has `when` or `condition`, not both",
            None,
        ),
        (
            "---\nname: x\nhooks:\n  - {id: h, event: directive_strated, action: {tool: log}}\n---\n",
            "d.md:4:20 unknown event `directive_strated`",
            Some("did you mean `directive_started`?"),
        ),
        (
            "---\nname: x\nhooks:\n  - {id: h, event: directive_started, action: {tool: log}}\n  - {id: h, event: before_action, action: {tool: log}}\n---\n",
            "d.md:5:10 duplicate hook id `h`",
            None,
        ),
        (
            "---\nname: x\nhooks: {id: h}\n---\n",
            "d.md:3:8 `hooks` must be an array, not an object",
            None,
        ),
    ];
    for (text, want, hint) in cases {
        let e = load(text).unwrap_err();
        assert_eq!(located(&e), want, "{text}");
        assert_eq!(e.hint(), hint, "{text}");
    }
}
