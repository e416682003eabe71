//! The JSON Lines protocol of `strata render --batch`.

use serde_json::{json, Value};
use strata_core::Limits;
use strata_pipeline::batch::{handle_line, serve};

fn reply(req: Value) -> Value {
    handle_line(&req.to_string(), &Limits::default())
}

#[test]
fn renders_with_every_source_through_the_default_chain() {
    let r = reply(json!({
        "template": {"cmd": "${BIN:-run}", "args": ["{input:f}", "${state.n}", "{x}", "{greet}"], "greet": "hi {x}"},
        "env": {"BIN": "tool"},
        "params": {"x": "X"},
        "context": {"state": {"n": 3}},
        "inputs": {"f": "a.txt"}
    }));
    assert_eq!(
        r,
        json!({"ok": true, "value": {"cmd": "tool", "args": ["a.txt", 3, "X", "hi X"], "greet": "hi X"}, "warnings": []})
    );
}

#[test]
fn layers_choose_and_order_the_stages() {
    let r = reply(
        json!({"template": "${HOME} {x}", "layers": ["params"], "params": {"x": 1}, "env": {"HOME": "/h"}}),
    );
    assert_eq!(r, json!({"ok": true, "value": "${HOME} 1", "warnings": []}));
}

#[test]
fn warnings_are_objects_naming_layer_path_and_span() {
    let r = reply(json!({"template": {"a": ["${state.gone}"]}}));
    assert_eq!(
        r,
        json!({"ok": true, "value": {"a": [""]}, "warnings": [
            {"layer": "context", "message": "context path `state.gone` not found", "path": "a[0]", "span": [0, 13]}
        ]})
    );
}

#[test]
fn strict_turns_warnings_into_errors() {
    let r = reply(json!({"template": {"a": "x ${GONE}"}, "strict": true}));
    assert_eq!(
        r,
        json!({"ok": false, "error": {"kind": "undefined", "layer": "env", "message": "environment variable `GONE` is not set", "path": "a", "span": [2, 9], "hint": "strict mode turns missing values into errors"}})
    );
}

#[test]
fn errors_carry_layer_message_path_span_and_hint() {
    let r = reply(json!({"template": {"args": ["ok", "{input:"]}}));
    assert_eq!(r["ok"], json!(false));
    assert_eq!(r["error"]["kind"], json!("syntax"));
    assert_eq!(r["error"]["layer"], json!("inputs"));
    assert_eq!(
        r["error"]["message"],
        json!("unclosed `{input:`: no matching `}`")
    );
    assert_eq!(r["error"]["path"], json!("args[1]"));
    assert_eq!(r["error"]["span"], json!([0, 7]));
}

#[test]
fn secrets_are_redacted_in_errors() {
    let r = reply(
        json!({"template": "${NEED:?no ${TOKEN}}", "env": {"TOKEN": "hunter2"}, "secrets": ["TOKEN"]}),
    );
    assert_eq!(
        r["error"]["message"],
        json!("required variable `NEED` is unset or empty: no ***")
    );
    assert!(!r.to_string().contains("hunter2"));
}

#[test]
fn bad_requests_get_request_errors() {
    let cases = [
        ("{not json", "request", "malformed request: key must be a string at line 1 column 2"),
        ("[1]", "request", "a request must be a JSON object"),
        (r#"{"env": {}}"#, "request", "malformed request: missing field `template`"),
        (r#"{"template": 1, "colour": 2}"#, "request", "malformed request: unknown field `colour`, expected one of `template`, `layers`, `env`, `secrets`, `params`, `context`, `inputs`, `strict`"),
        (r#"{"template": 1, "strict": "yes"}"#, "request", "malformed request: invalid type: string \"yes\", expected a boolean"),
        (r#"{"template": 1, "layers": ["env", "shell"]}"#, "unknown_name", "unknown layer `shell`"),
        (r#"{"template": 1, "env": {"N": 5}}"#, "request", "env value of `N` must be a string"),
    ];
    for (line, kind, message) in cases {
        let r = handle_line(line, &Limits::default());
        assert_eq!(r["ok"], json!(false), "{line}");
        assert_eq!(r["error"]["kind"], json!(kind), "{line}");
        assert_eq!(r["error"]["layer"], json!("request"), "{line}");
        assert_eq!(r["error"]["message"], json!(message), "{line}");
    }
}

#[test]
fn serves_every_line_in_order_even_after_a_bad_one() {
    let input = [
        json!({"template": "{x}", "params": {"x": 1}}).to_string(),
        "garbage".to_string(),
        String::new(),
        json!({"template": "${A"}).to_string(),
        json!({"template": "{x}", "params": {"x": [2]}}).to_string(),
    ]
    .join("\n");
    let mut out = Vec::new();
    serve(input.as_bytes(), &mut out, &Limits::default()).unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], json!({"ok": true, "value": 1, "warnings": []}));
    assert_eq!(lines[1]["error"]["layer"], json!("request"));
    assert_eq!(lines[2]["error"]["layer"], json!("env"));
    assert_eq!(lines[3], json!({"ok": true, "value": [2], "warnings": []}));
}
