//! End-to-end tests of the plan edges of issue 27 (SPEC §5.1, §5.3, §5.7), through the real
//! binary: literal arguments that are not a map are refused when the plan loads, alike in
//! `plan run`, `plan resolve` (once and `--batch`), `plan show` and `check`; a whole-value
//! reference that yields a non-map fails that step; `path_not_found` names `2.0` and `-0.0`
//! numbers, not integers; `$stepN` names the step whose id is `stepN`.

mod common;
use common::Test;

use serde_json::{json, Value};

/// Prints its caller parameters as JSON.
const JSON_TOOL: &str = r#"description: prints its parameters as JSON
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    n: {}
    x: {}
config:
  command: printf
  args: ["%s\n", "{params_json}"]
"#;

fn project() -> Test {
    Test::new().copy("tools").tool("t/json", JSON_TOOL)
}

const HINT: &str = "give the tool's parameters as a map `{name: value, ...}`, or as one whole-value reference to a map (`\"$step1\"`, `\"{{a.result}}\"`)";

/// The diagnostic for step `a`'s literal arguments of type `what`, written as `written` on
/// line 2 of `file`.
fn refused(file: &str, what: &str, written: &str) -> String {
    let line = format!("- {{id: a, tool: t/json, arguments: {written}}}");
    let col = line.find(written).unwrap() + 1;
    format!(
        "error[plan]: the arguments of step `a` must be a map, not {what}\n  --> {file}:2:{col}\n  |\n2 | {line}\n  | {pad}^\n   = field: [1].arguments\n   = help: {HINT}\n",
        pad = " ".repeat(col - 1),
    )
}

fn plan_text(written: &str) -> String {
    format!("- {{id: z, tool: t/json, arguments: {{n: 1}}}}\n- {{id: a, tool: t/json, arguments: {written}}}\n")
}

/// Literal arguments of every non-map shape, and the type each is named by.
const NOT_MAPS: [(&str, &str); 6] = [
    ("[1, 2]", "array"),
    ("'text'", "string"),
    ("'see {$step1.n}'", "string"),
    ("7", "integer"),
    ("2.5", "number"),
    ("null", "null"),
];

#[test]
fn literal_arguments_that_are_not_a_map_are_refused_by_run_resolve_and_show() {
    for (written, what) in NOT_MAPS {
        let p = project().file("p.yaml", plan_text(written));
        let expected = refused("p.yaml", what, written);
        for args in [
            &["plan", "run", "p.yaml"][..],
            &["plan", "show", "p.yaml"][..],
            &["plan", "resolve", "p.yaml"][..],
        ] {
            let o = p.then(args).status(2).stderr(&expected).run();
            assert!(
                !p.path().join(".strata/runs").exists() || args[1] != "run",
                "nothing runs"
            );
            if args[1] == "resolve" {
                assert_eq!(
                    o.json(),
                    json!({"ok": false, "error": {
                        "kind": "request",
                        "message": format!("the arguments of step `a` must be a map, not {what}; {HINT}"),
                        "path": "[1].arguments",
                        "span": null,
                    }}),
                    "{written}"
                );
            }
        }
    }
}

#[test]
fn check_refuses_the_same_plan() {
    let o = project()
        .file("plans/bad.yaml", plan_text("[1, 2]"))
        .args(&["check"])
        .status(1)
        .run();
    let expected =
        refused("plans/bad.yaml", "array", "[1, 2]").replacen("error[plan]", "error[P001]", 1);
    assert!(o.all().contains(&expected), "{}", o.brief());
}

#[test]
fn a_batch_request_with_literal_non_map_arguments_gets_a_request_error() {
    let request = json!({"id": 4, "plan": [
        {"id": "z", "tool": "t/json", "arguments": {}},
        {"id": "a", "tool": "t/json", "arguments": [1, 2]},
    ]});
    let o = project()
        .args(&["plan", "resolve", "--batch"])
        .stdin(format!("{request}\n"))
        .status(0)
        .run();
    let reply: Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(
        reply,
        json!({"id": 4, "ok": false, "error": {
            "kind": "request",
            "message": format!("the arguments of step `a` must be a map, not array; {HINT}"),
            "path": "plan[1].arguments",
            "span": null,
        }})
    );
}

const WHOLE: &str = "- {id: a, tool: t/json, arguments: {n: 1}}\n- {id: b, tool: t/json, arguments: '{{a.result.list}}'}\n- {id: c, tool: t/json, arguments: {x: '{{b.result}}'}}\n- {id: d, tool: t/json, arguments: '$step9'}\n- {id: 9, tool: t/json, arguments: {n: 9}}\n";

#[test]
fn a_whole_value_reference_that_yields_a_non_map_fails_that_step_in_resolve() {
    let o = project()
        .file("p.yaml", WHOLE)
        .args(&[
            "plan",
            "resolve",
            "p.yaml",
            "--results",
            r#"{"a": {"list": [1, 2]}, "step9": {"n": 9}}"#,
        ])
        .status(0)
        .run();
    assert_eq!(
        o.json()["steps"],
        json!([
            {"id": "a", "depends_on": [], "state": "completed"},
            {"id": "b", "depends_on": ["a"], "state": "failed", "error": {
                "kind": "invalid",
                "message": "the arguments of step `b` must be a map, not array"}},
            {"id": "c", "depends_on": ["b"], "state": "skipped", "error": {
                "kind": "run_state", "message": "step `b` failed"}},
            {"id": "d", "depends_on": ["step9"], "state": "ready", "arguments": {"n": 9}},
            {"id": "step9", "depends_on": [], "state": "completed"},
        ])
    );
}

#[test]
fn a_whole_value_reference_that_yields_a_non_map_fails_that_step_in_run() {
    let plan = "- {id: a, tool: t/json, arguments: {x: [1, 2]}}\n- {id: b, tool: t/json, arguments: '{{a.result.x}}'}\n- {id: c, tool: t/json, arguments: '{{a.result}}'}\n";
    let o = project()
        .file("p.yaml", plan)
        .args(&["plan", "run", "p.yaml", "--json", "--jobs", "1"])
        .status(1)
        .run();
    let report = o.json();
    let text = report.to_string();
    assert!(
        text.contains("the arguments of step `b` must be a map, not array"),
        "{}",
        o.brief()
    );
    assert!(
        text.contains("\"x\":[1,2]"),
        "c ran with a's result: {text}"
    );
}

#[test]
fn path_not_found_names_2_0_and_minus_0_0_numbers_and_2_an_integer() {
    let plan = "- {id: a, tool: t/json, arguments: {}}\n- {id: b, tool: t/json, arguments: {x: '{{a.result.f.k}}'}}\n";
    let results = [
        ("2.0", "a number"),
        ("-0.0", "a number"),
        ("1e3", "a number"),
        ("2.5", "a number"),
        ("2", "an integer"),
        ("-7", "an integer"),
    ];
    for (written, named) in results {
        let o = project()
            .file("p.yaml", plan)
            .args(&[
                "plan",
                "resolve",
                "p.yaml",
                "--results",
                &format!(r#"{{"a": {{"f": {written}}}}}"#),
            ])
            .status(0)
            .run();
        assert_eq!(
            o.json()["steps"][1]["error"],
            json!({"kind": "path_not_found", "message": format!(
                "`{{{{a.result.f.k}}}}`: step `a` has no `result.f.k`; `result.f` is {named}")}),
            "{written}"
        );
    }
}

#[test]
fn path_not_found_names_a_yaml_float_a_number_in_a_run() {
    // The tool prints `{"n": 2.0}`; a run reads it back and misses a path under it.
    let plan = "- {id: a, tool: t/json, arguments: {n: 2.0}}\n- {id: b, tool: t/json, arguments: {x: '{{a.result.n.k}}'}}\n";
    let o = project()
        .file("p.yaml", plan)
        .args(&["plan", "run", "p.yaml", "--json"])
        .status(1)
        .run();
    assert!(
        o.all()
            .contains("`{{a.result.n.k}}`: step `a` has no `result.n.k`; `result.n` is a number"),
        "{}",
        o.brief()
    );
}

#[test]
fn dollar_step_n_names_the_step_whose_id_is_step_n_not_the_nth_step() {
    // `$step1` is the step whose id is `step1` (here the second), `{$step01.n}` is step
    // `step01`; neither is "the first step".
    let plan = "- {id: step01, tool: t/json, arguments: {}}\n- {id: step1, tool: t/json, arguments: {}}\n- {tool: t/json, arguments: {x: '{$step01.n}', n: '$step1.n'}}\n";
    let o = project()
        .file("p.yaml", plan)
        .args(&[
            "plan",
            "resolve",
            "p.yaml",
            "--results",
            r#"{"step01": {"n": "zero-one"}, "step1": {"n": "one"}}"#,
        ])
        .status(0)
        .run();
    assert_eq!(
        o.json()["steps"][2],
        json!({"id": "step3", "depends_on": ["step01", "step1"], "state": "ready",
               "arguments": {"x": "zero-one", "n": "one"}})
    );
    // With no step of id `step1`, `$step1` is an unknown step, even though a first step
    // exists.
    project()
        .file(
            "q.yaml",
            "- {id: a, tool: t/json, arguments: {}}\n- {id: b, tool: t/json, arguments: {x: '$step1.n'}}\n",
        )
        .args(&["plan", "show", "q.yaml"])
        .status(2)
        .stderr("error[plan]: step `b` refers to unknown step `step1`\n  --> q.yaml:2:41\n  |\n2 | - {id: b, tool: t/json, arguments: {x: '$step1.n'}}\n  |                                         ^^^^^^^^\n   = field: [1].arguments.x (bytes 0..8)\n   = help: the other steps are `a`\n")
        .run();
}
