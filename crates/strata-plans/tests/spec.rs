//! SPEC §5, rule by rule, through the library: the plan document, the reference forms,
//! resolution, dependencies and levels, user values, states and the partial-resolution
//! protocol.

use std::collections::HashMap;

use serde_json::{json, Map, Value};
use strata_core::{ErrorKind, FieldPath, Limits};
use strata_doc::{Document, Format};
use strata_plans::{answer_line, assess, parse_document, resolve, Plan, Sources, State};
use strata_tools::{RunResult, StepRecord};

fn plan(v: Value) -> Plan {
    Plan::from_value(&v, &FieldPath::root()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn errors(v: Value) -> Vec<String> {
    Plan::from_value(&v, &FieldPath::root())
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect()
}

fn load_file(name: &str, text: &str) -> Result<Plan, Vec<String>> {
    let doc = Document::parse(
        name,
        text.as_bytes().to_vec(),
        Format::from_name(name),
        &Limits::default(),
    )
    .map_err(|e| vec![e.to_string()])?;
    Plan::load(&doc).map_err(|es| es.iter().map(|e| e.to_string()).collect())
}

fn done(id: &str, result: Value) -> (String, StepRecord) {
    let mut r = StepRecord::from_run(id, "t", &RunResult::ok(Vec::new()));
    r.result = result;
    (id.to_string(), r)
}

fn resolved(p: &Plan, step: &str, records: &[(String, StepRecord)], values: Value) -> Value {
    let records: HashMap<String, StepRecord> = records.iter().cloned().collect();
    let values: Map<String, Value> = values.as_object().cloned().unwrap_or_default();
    let step = &p.steps[p.find(step).unwrap()];
    resolve(
        step,
        &Sources {
            records: &records,
            values: &values,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

// §5.1 The plan document ---------------------------------------------------------------

#[test]
fn a_plan_is_a_list_or_an_object_with_steps_only() {
    let list = plan(json!([{"tool": "t", "arguments": {}}]));
    let obj = plan(json!({"steps": [{"tool": "t", "arguments": {}}]}));
    assert_eq!(
        list.steps,
        obj.steps
            .iter()
            .map(|s| {
                let mut s = s.clone();
                s.at = FieldPath::root().child(strata_core::PathSeg::Index(0));
                s
            })
            .collect::<Vec<_>>()
    );
    assert_eq!(
        errors(json!({"steps": [], "name": "x"})),
        ["plan error at name: unknown top-level key `name` (hint: a plan object has only `steps`)"]
    );
    assert_eq!(
        errors(json!("steps")),
        ["plan error at $: a plan is a list of steps, or a map `{steps: [...]}`"]
    );
    assert_eq!(
        errors(json!({"plan": []})),
        [
            "plan error at plan: unknown top-level key `plan` (hint: a plan object has only `steps`)",
            "plan error at $: a plan object needs `steps`: a list of steps"
        ]
    );
}

#[test]
fn numeric_and_missing_ids_become_step_n() {
    let p = plan(json!([
        {"tool": "t", "arguments": {}},
        {"id": 7, "tool": "t", "arguments": {"x": "$step1"}},
        {"id": "named", "tool": "t", "parameters": {"y": "{$step1.a}"}, "depends_on": [7], "intent": "why"},
    ]));
    assert_eq!(p.ids().collect::<Vec<_>>(), ["step1", "step7", "named"]);
    assert_eq!(p.steps[2].args_key, "parameters");
    assert_eq!(p.steps[2].intent.as_deref(), Some("why"));
    assert_eq!(p.steps[2].depends_on, ["step7"]);
    assert_eq!(
        errors(json!([{"tool": "t", "arguments": {"x": "$step7"}}])),
        ["plan error at [0].arguments.x 0..6: step `step1` refers to unknown step `step7`"]
    );
}

#[test]
fn a_step_declares_resources_and_retries_checked_where_they_stand() {
    let p = plan(json!([
        {"tool": "t", "arguments": {}, "resources": {"gpus": 1, "memory": "2Gi"}, "retries": {"limit": 2, "delay": "500ms"}},
    ]));
    let scale = &p.steps[0].scale;
    assert_eq!(scale.resources.gpus, Some(1.0));
    assert_eq!(scale.resources.memory, Some(2 << 30));
    assert_eq!(scale.retries.map(|r| r.limit), Some(2));
    assert_eq!(
        load_file(
            "p.yaml",
            "steps:\n  - tool: t\n    arguments: {}\n    resources: {cpus: -0.5, gpu: 1}\n"
        )
        .unwrap_err(),
        ["p.yaml:4:34: plan error at steps[0].resources.gpu: unknown key `gpu` in `resources` (hint: did you mean `gpus`?)"]
    );
    assert_eq!(
        errors(json!([{"tool": "t", "arguments": {}, "resources": {"cpus": -0.5}}])),
        ["plan error at [0].resources.cpus: `cpus` must be at least 0, not -0.5"]
    );
}

#[test]
fn bad_steps_are_errors_naming_the_step() {
    assert_eq!(
        errors(json!([
            {"tool": "t", "arguments": {}, "parameters": {}},
            {"tool": "t"},
            {"id": "b c", "tool": 3, "arguments": {}, "deps": ["a"]},
            {"id": 0, "tool": "t", "arguments": {}, "depends_on": ["x y"], "intent": 1},
            "step",
        ])),
        [
            "plan error at [0].parameters: step `step1` has both `arguments` and `parameters` (hint: give exactly one of them)",
            "plan error at [1]: step `step2` has neither `arguments` nor `parameters` (hint: give the tool's parameters as `arguments: {...}` (or `parameters`))",
            "plan error at [2].deps: unknown key `deps` in step 3 (hint: did you mean `depends_on`?)",
            "plan error at [2].id: invalid id \"b c\" in step 3 (hint: an id is `[A-Za-z_][A-Za-z0-9_-]*` or a positive integer `n` (`step<n>`))",
            "plan error at [2].tool: `tool` of step `step3` must be a tool id (a string)",
            "plan error at [3].id: invalid id 0 in step 4 (hint: an id is `[A-Za-z_][A-Za-z0-9_-]*` or a positive integer `n` (`step<n>`))",
            "plan error at [3].depends_on[0]: invalid step id \"x y\" in `depends_on` of step `step4` (hint: an id is `[A-Za-z_][A-Za-z0-9_-]*` or a positive integer `n` (`step<n>`))",
            "plan error at [3].intent: `intent` of step `step4` must be text",
            "plan error at [4]: step 5 must be a map `{id?, tool, arguments, depends_on?, intent?}`",
        ]
    );
}

#[test]
fn duplicate_ids_name_both_positions_with_file_line_col() {
    let text = "- {id: a, tool: t, arguments: {}}\n- {tool: t, arguments: {}}\n- {id: a, tool: t, arguments: {}}\n- {id: 2, tool: t, arguments: {}}\n";
    assert_eq!(
        load_file("plans/dup.yaml", text).unwrap_err(),
        [
            "plans/dup.yaml:3:8: plan error at [2].id: duplicate step id `a`: steps 1 and 3 (hint: every step needs its own id)",
            "plans/dup.yaml:4:8: plan error at [3].id: duplicate step id `step2`: steps 2 and 4 (hint: every step needs its own id)",
        ]
    );
}

#[test]
fn malformed_documents_are_syntax_errors_with_positions() {
    assert_eq!(
        load_file("plans/bad.json", "[{\"tool\": \"t\",, }]").unwrap_err(),
        ["plans/bad.json:1:15: request error at $: JSON syntax error: key must be a string"]
    );
    assert_eq!(
        load_file("plans/bad.yaml", "- tool: t\n  arguments: {a: [1, 2}\n").unwrap_err(),
        ["plans/bad.yaml:2:23: request error at $: YAML syntax error: while parsing a flow sequence, expected ',' or ']'"]
    );
}

#[test]
fn plan_text_is_json_by_name_or_first_character_else_yaml() {
    let limits = Limits::default();
    let read = |name: &str, text: &str| -> Result<Vec<Vec<String>>, String> {
        let doc =
            parse_document(name, text.as_bytes().to_vec(), &limits).map_err(|e| e.to_string())?;
        Plan::load(&doc).map(|p| p.level_ids()).map_err(|es| {
            es.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
    };
    let json = r#"[{"id": "a", "tool": "t", "arguments": {}}, {"id": "b", "tool": "t", "arguments": {"x": "{{a.result}}"}}]"#;
    assert_eq!(
        read("<string>", json),
        Ok(vec![vec!["a".to_string()], vec!["b".to_string()]])
    );
    assert_eq!(
        read("plan.yaml", "steps:\n  - {id: a, tool: t, arguments: {}}\n"),
        Ok(vec![vec!["a".to_string()]])
    );
    // A `{` opens JSON, so a YAML flow mapping with an unquoted key is a JSON error.
    assert_eq!(
        read("<string>", "  {steps: []}"),
        Err(
            "<string>:1:4: request error at $: JSON syntax error: key must be a string".to_string()
        )
    );
    assert_eq!(
        read("plan.json", "steps: []"),
        Err("plan.json:1:1: request error at $: JSON syntax error: expected value".to_string())
    );
    assert_eq!(
        read("plan.yaml", "- id: a\n  tool: t\n  arguments: {x: \"{{b.result}}\"}\n"),
        Err("plan.yaml:3:19: plan error at [0].arguments.x 0..12: step `a` refers to unknown step `b`".to_string())
    );
}

// §5.3 Three reference forms, one resolver ---------------------------------------------

#[test]
fn the_three_forms_and_user_values_resolve() {
    let p = plan(json!([
        {"id": 1, "tool": "find", "arguments": {}},
        {"id": "find_john", "tool": "fetch", "arguments": {}},
        {"id": "send", "tool": "send", "arguments": {"input": {
            "to": "{{find_john.result.data[0].email}}",
            "body": "Hi {{ find_john.result.data[0].name }}!",
            "details": "$step1.duplicates",
            "message": "Found {$step1.total_duplicate_groups} groups, wasting {$step1.wasted_space_mb} MB",
            "count": "{$step1.total_duplicate_groups}",
            "last": "$step1.duplicates[-1]",
            "status": "{{step1.status}}",
            "title": "{{PLACEHOLDER_title}}",
            "tagged": "[{{PLACEHOLDER_title}}]",
        }}},
    ]));
    let records = [
        done(
            "step1",
            json!({"duplicates": [["a", "b"], ["c", "d"]], "total_duplicate_groups": 2, "wasted_space_mb": 0.38}),
        ),
        done(
            "find_john",
            json!({"data": [{"name": "John Smith", "email": "john.smith@example.com"}]}),
        ),
    ];
    assert_eq!(
        resolved(&p, "send", &records, json!({"title": 7})),
        json!({"input": {
            "to": "john.smith@example.com",
            "body": "Hi John Smith!",
            "details": [["a", "b"], ["c", "d"]],
            "message": "Found 2 groups, wasting 0.38 MB",
            "count": 2,
            "last": ["c", "d"],
            "status": "completed",
            "title": 7,
            "tagged": "[7]",
        }})
    );
}

#[test]
fn embedded_values_render_like_layer_c() {
    let p = plan(json!([
        {"tool": "a", "arguments": {}},
        {"tool": "b", "arguments": {"t": "n={$step1.n} f={$step1.f} z={$step1.z} o={$step1.o} l={$step1.l} b={$step1.b} big={$step1.big}"}},
    ]));
    let records = [done(
        "step1",
        json!({"n": 10000000, "f": 0.38, "z": null, "o": {"a": [1, "x"]}, "l": [1, 2], "b": true, "big": 12345678901234567890u64}),
    )];
    assert_eq!(
        resolved(&p, "step2", &records, json!({})),
        json!({"t": "n=10000000 f=0.38 z= o={\"a\":[1,\"x\"]} l=[1,2] b=true big=12345678901234567890"})
    );
}

#[test]
fn dotted_indexes_follow_one_another_in_every_form() {
    let p = plan(json!([
        {"tool": "a", "arguments": {}},
        {"tool": "b", "arguments": {
            "dollar": "$step1.m.0.0",
            "dollar_neg": "$step1.m.-1.0",
            "embedded": "{$step1.m.1.0}-{$step1.m.0.-1}",
            "braces": "{{step1.result.m.1.1}}",
            "braces_neg": "{{ step1.result.m.-1.-1 }}",
            "mixed": "$step1.m.1[0]",
        }},
    ]));
    let records = [done("step1", json!({"m": [[1, 2], [3, 4]]}))];
    assert_eq!(
        resolved(&p, "step2", &records, json!({})),
        json!({"dollar": 1, "dollar_neg": 3, "embedded": "3-2", "braces": 4, "braces_neg": 4, "mixed": 3})
    );
}

#[test]
fn resolved_values_are_data_byte_for_byte() {
    let nasty = "{{b.result.secret}} $step2 {$step1.x} {{PLACEHOLDER_v}} \"quoted\"\n\\back\\slash ${HOME} {name}";
    let p = plan(json!([
        {"tool": "a", "arguments": {}},
        {"tool": "b", "arguments": {}},
        {"tool": "c", "arguments": {"whole": "$step1.text", "inside": "<{$step1.text}>", "obj": "$step1"}},
    ]));
    let records = [
        done("step1", json!({"text": nasty})),
        done("step2", json!({"secret": "s3cr3t"})),
    ];
    let out = resolved(&p, "step3", &records, json!({"v": "V"}));
    assert_eq!(out["whole"], json!(nasty));
    assert_eq!(out["inside"], json!(format!("<{nasty}>")));
    assert_eq!(out["obj"], json!({"text": nasty}));
}

#[test]
fn map_keys_are_never_resolved_and_escapes_are_literal() {
    let p = plan(json!([
        {"tool": "a", "arguments": {}},
        {"tool": "b", "arguments": {"$step1": "$$step1.x", "{{step1.result}}": "{{{{step1.result}} {$$step1} {{not a ref}} {{x}}"}},
    ]));
    assert_eq!(
        resolved(&p, "step2", &[done("step1", json!(1))], json!({})),
        json!({"$step1": "$step1.x", "{{step1.result}}": "{{step1.result}} {$step1} {{not a ref}} {{x}}"})
    );
    assert!(p.deps[1].is_empty());
}

#[test]
fn unknown_steps_and_fields_are_errors_before_anything_runs() {
    let text = r#"[
  {"id": "find_john", "tool": "fetch", "arguments": {}},
  {"id": "send", "tool": "send", "arguments": {"to": "{{fnd_john.result.email}}", "cc": "$step3"}}
]"#;
    assert_eq!(
        load_file("plans/typo.json", text).unwrap_err(),
        [
            "plans/typo.json:3:55: plan error at [1].arguments.to 0..25: step `send` refers to unknown step `fnd_john` (hint: did you mean `find_john`?)",
            "plans/typo.json:3:90: plan error at [1].arguments.cc 0..6: step `send` refers to unknown step `step3` (hint: the other steps are `find_john`)",
        ]
    );
    let text = text.replace("$step3", "{{find_john.email}}");
    assert_eq!(
        load_file("plans/typo.json", &text).unwrap_err(),
        ["plans/typo.json:3:90: plan error at [1].arguments.cc 0..19: `email` is not a field of step `find_john`'s record (id, status, result, error, run) (hint: did you mean `{{find_john.result.email}}`?)"]
    );
}

#[test]
fn a_dollar_step_string_that_is_not_one_reference_is_an_error() {
    assert_eq!(
        errors(json!([{"tool": "a", "arguments": {}}, {"tool": "b", "arguments": {"m": "$step1.count items"}}])),
        ["plan error at [1].arguments.m 0..18: a string starting with `$step` must be exactly one reference (`$stepN` or `$stepN.path`) (hint: embed with `{$stepN.path}`; write `$$step` for the literal text `$step`)"]
    );
}

// §5.4 Dependencies, levels, cycles ----------------------------------------------------

fn exercise() -> Value {
    json!([
        { "id": "A", "tool": "fetch_contacts", "arguments": { "input": {} } },
        { "id": "B", "tool": "fetch_emails", "arguments": { "input": { "from": "{{A.result.data[0].email}}" } } },
        { "id": "C", "tool": "summarize", "arguments": { "input": { "text": "{{B.result.data[0].body}}" } } },
        { "id": "D", "tool": "send_email", "arguments": { "input": { "to": "{{A.result.data[0].email}}", "body": "{{C.result.summary}}" } } }
    ])
}

#[test]
fn levels_of_the_exercise_and_the_diamond() {
    assert_eq!(plan(exercise()).level_ids(), [["A"], ["B"], ["C"], ["D"]]);
    let diamond = plan(json!([
        {"id": "A", "tool": "t", "arguments": {}},
        {"id": "B", "tool": "t", "arguments": {"x": "{{A.result}}"}},
        {"id": "C", "tool": "t", "arguments": {"x": ["deep", {"in": "v={$step9}"}]}, "depends_on": ["A"]},
        {"id": "D", "tool": "t", "arguments": {"b": "{{B.result}}", "c": "{{C.status}}"}},
        {"id": 9, "tool": "t", "arguments": {}},
    ]));
    assert_eq!(
        diamond.level_ids(),
        [vec!["A", "step9"], vec!["B", "C"], vec!["D"]]
    );
    assert_eq!(diamond.deps[2], [4, 0]);
}

#[test]
fn cycles_are_named_in_plan_order() {
    assert_eq!(
        errors(json!([
            {"id": "a", "tool": "t", "arguments": {}},
            {"id": "b", "tool": "t", "arguments": {"x": "{{c.result}}"}},
            {"id": "c", "tool": "t", "arguments": {"x": "{{b.result}}"}},
        ])),
        ["plan error at [1].arguments.x 0..12: circular dependency: b -> c -> b (hint: a step cannot depend on itself, directly or through others)"]
    );
    assert_eq!(
        errors(json!([{"id": "a", "tool": "t", "arguments": {}, "depends_on": "a"}])),
        ["plan error at [0].depends_on[0]: circular dependency: a -> a (hint: a step cannot depend on itself, directly or through others)"]
    );
}

// §5.5, §5.6 User values, states and failure -------------------------------------------

fn states(
    p: &Plan,
    records: &[(String, StepRecord)],
    values: Value,
) -> Vec<(String, &'static str, Vec<String>)> {
    let records: HashMap<String, StepRecord> = records.iter().cloned().collect();
    let values = values.as_object().cloned().unwrap_or_default();
    let a = assess(p, &records, &values);
    p.ids()
        .zip(&a.steps)
        .map(|(id, s)| (id.to_string(), s.state.name(), s.waiting_for.clone()))
        .collect()
}

#[test]
fn when_b_fails_c_and_d_are_skipped_and_a_completed() {
    let p = plan(exercise());
    let mut b = done("B", Value::Null).1;
    b.status = strata_tools::StepStatus::Failed;
    let records = [
        done("A", json!({"data": [{"email": "x@y"}]})),
        ("B".into(), b),
    ];
    let got = states(&p, &records, json!({}));
    assert_eq!(
        got.iter().map(|s| (s.0.as_str(), s.1)).collect::<Vec<_>>(),
        [
            ("A", "completed"),
            ("B", "failed"),
            ("C", "skipped"),
            ("D", "skipped")
        ]
    );
    let rec: HashMap<String, StepRecord> = records.iter().cloned().collect();
    let a = assess(&p, &rec, &Map::new());
    assert_eq!(
        a.steps[2].error.as_ref().unwrap().message(),
        "step `B` failed"
    );
    assert_eq!(
        a.steps[3].error.as_ref().unwrap().message(),
        "step `C` was skipped"
    );
}

#[test]
fn missing_values_make_steps_wait_and_are_listed_once_in_plan_order() {
    let p = plan(json!([
        {"id": "a", "tool": "t", "arguments": {"x": "{{PLACEHOLDER_zeta}} {{PLACEHOLDER_alpha}}"}},
        {"id": "b", "tool": "t", "arguments": {"y": "{{a.result}}", "z": "{{PLACEHOLDER_alpha}}"}},
        {"id": "c", "tool": "t", "arguments": {"w": "{{PLACEHOLDER_given}}"}},
        {"id": "d", "tool": "t", "arguments": {"v": "{{c.result}}"}},
    ]));
    assert_eq!(
        states(&p, &[], json!({"given": "g"})),
        [
            ("a".into(), "waiting", vec!["zeta".into(), "alpha".into()]),
            ("b".into(), "waiting", vec!["alpha".into()]),
            ("c".into(), "ready", vec![]),
            ("d".into(), "blocked", vec!["c".to_string()]),
        ]
    );
    let values = json!({"given": "g"}).as_object().cloned().unwrap();
    assert_eq!(
        assess(&p, &HashMap::new(), &values).missing_values,
        ["zeta", "alpha"]
    );
}

#[test]
fn a_missing_path_fails_the_step_naming_the_path_and_the_keys_there() {
    let p = plan(exercise());
    let records: HashMap<String, StepRecord> = [
        done("A", json!({"data": [{"email": "x@y"}]})),
        done("B", json!({"items": [], "count": 0})),
    ]
    .into_iter()
    .collect();
    let a = assess(&p, &records, &Map::new());
    assert_eq!(a.steps[2].state, State::Failed);
    let e = a.steps[2].error.as_ref().unwrap();
    assert_eq!(e.kind(), ErrorKind::PathNotFound);
    assert_eq!(
        e.to_string(),
        "plan error at arguments.input.text 0..25: `{{B.result.data[0].body}}`: step `B` has no `result.data`; `result` has `items`, `count`"
    );
    // A result that is not JSON is text; an index past the end; a near miss.
    let text = [done("A", json!("plain text"))]
        .into_iter()
        .collect::<HashMap<_, _>>();
    let a = assess(&p, &text, &Map::new());
    assert_eq!(
        a.steps[1].error.as_ref().unwrap().message(),
        "`{{A.result.data[0].email}}`: step `A` has no `result.data`; `result` is a string"
    );
    let empty = [done("A", json!({"data": []}))]
        .into_iter()
        .collect::<HashMap<_, _>>();
    assert_eq!(
        assess(&p, &empty, &Map::new()).steps[1].error.as_ref().unwrap().message(),
        "`{{A.result.data[0].email}}`: step `A` has no `result.data[0]`; `result.data` is a list of 0 items"
    );
    let near = [done("A", json!({"data": [{"emial": 1}]}))]
        .into_iter()
        .collect::<HashMap<_, _>>();
    let e = assess(&p, &near, &Map::new()).steps[1]
        .error
        .clone()
        .unwrap();
    assert_eq!(e.hint(), Some("did you mean `result.data[0].emial`?"));
}

// §5.7 Partial resolution ---------------------------------------------------------------

#[test]
fn a_request_is_answered_with_states_arguments_levels_and_missing_values() {
    let line = json!({
        "id": 42,
        "plan": exercise(),
        "results": {"A": {"data": [{"email": "ann@example.com"}]}},
        "values": {},
    })
    .to_string();
    assert_eq!(
        answer_line(&line),
        json!({
            "id": 42,
            "ok": true,
            "levels": [["A"], ["B"], ["C"], ["D"]],
            "steps": [
                {"id": "A", "depends_on": [], "state": "completed"},
                {"id": "B", "depends_on": ["A"], "state": "ready", "arguments": {"input": {"from": "ann@example.com"}}},
                {"id": "C", "depends_on": ["B"], "state": "blocked", "waiting_for": ["B"]},
                {"id": "D", "depends_on": ["A", "C"], "state": "blocked", "waiting_for": ["C"]},
            ],
            "missing_values": [],
        })
    );
    let failed =
        json!({"plan": exercise(), "results": {"A": {"data": []}}, "failed": ["B"]}).to_string();
    assert_eq!(
        answer_line(&failed)["steps"],
        json!([
            {"id": "A", "depends_on": [], "state": "completed"},
            {"id": "B", "depends_on": ["A"], "state": "failed"},
            {"id": "C", "depends_on": ["B"], "state": "skipped", "error": {"kind": "run_state", "message": "step `B` failed"}},
            {"id": "D", "depends_on": ["A", "C"], "state": "skipped", "error": {"kind": "run_state", "message": "step `C` was skipped"}},
        ])
    );
}

#[test]
fn plan_and_request_errors_are_error_replies() {
    let reply = |v: Value| answer_line(&v.to_string());
    assert_eq!(
        reply(
            json!({"id": "r1", "plan": [{"id": "a", "tool": "t", "arguments": {"x": "{{a.result}}"}}]})
        ),
        json!({"id": "r1", "ok": false, "error": {"kind": "cycle", "message": "circular dependency: a -> a; a step cannot depend on itself, directly or through others", "path": "plan[0].arguments.x", "span": [0, 12]}})
    );
    assert_eq!(
        reply(
            json!({"plan": [{"id": "a", "tool": "t", "arguments": {}}, {"id": "a", "tool": "t", "arguments": {}}]})
        )["error"]["kind"],
        json!("duplicate_id")
    );
    assert_eq!(
        reply(json!({"plan": [{"tool": "t", "arguments": {"x": "{{a.email}}"}}]}))["error"]["kind"],
        json!("unknown_field")
    );
    assert_eq!(
        reply(json!({"plan": [{"tool": "t", "arguments": {"x": "$step1 x"}}]}))["error"]["kind"],
        json!("syntax")
    );
    assert_eq!(
        reply(json!({"plan": [{"tool": "t"}]}))["error"],
        json!({"kind": "request", "message": "step `step1` has neither `arguments` nor `parameters`; give the tool's parameters as `arguments: {...}` (or `parameters`)", "path": "plan[0]", "span": null})
    );
    assert_eq!(
        reply(json!({"plan": [], "reslts": {}}))["error"],
        json!({"kind": "request", "message": "unknown request key `reslts`; did you mean `results`?", "path": "reslts", "span": null})
    );
    assert_eq!(
        reply(json!({"plan": [{"id": "a", "tool": "t", "arguments": {}}], "results": {"b": 1}}))
            ["error"],
        json!({"kind": "unknown_step", "message": "the plan has no step `b`", "path": "results.b", "span": null})
    );
    assert_eq!(
        answer_line("{\"plan\": ["),
        json!({"ok": false, "error": {"kind": "syntax", "message": "the line is not JSON: EOF while parsing a list at line 1 column 10", "path": "$", "span": null}})
    );
}
