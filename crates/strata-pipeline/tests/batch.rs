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
        (r#"{"template": 1, "colour": 2}"#, "request", "malformed request: unknown field `colour`, expected one of `id`, `template`, `layers`, `env`, `secrets`, `params`, `context`, `inputs`, `strict`"),
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

/// Serves `input` and returns the replies.
fn serve_bytes(input: &[u8], limits: &Limits) -> Vec<Value> {
    let mut out = Vec::new();
    serve(input, &mut out, limits).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_line_that_is_not_utf8_gets_an_error_reply_and_the_rest_are_served() {
    let input = b"{\"template\":\"a\"}\n{\"template\":\"\xff\"}\n{\"id\": 3, \"template\":\"\xfe\"}\n{\"template\":\"c\"}\n";
    let replies = serve_bytes(input, &Limits::default());
    assert_eq!(replies.len(), 4);
    assert_eq!(
        replies[0],
        json!({"ok": true, "value": "a", "warnings": []})
    );
    assert_eq!(
        replies[1],
        json!({"ok": false, "error": {"kind": "request", "layer": "request", "message": "malformed request: not valid UTF-8 (byte 13)", "path": "$", "span": null, "hint": "a request is one line of UTF-8 JSON"}})
    );
    assert_eq!(
        replies[2]["id"],
        json!(3),
        "the id is read from what is valid"
    );
    assert_eq!(
        replies[2]["error"]["message"],
        json!("malformed request: not valid UTF-8 (byte 22)")
    );
    assert_eq!(
        replies[3],
        json!({"ok": true, "value": "c", "warnings": []})
    );
}

#[test]
fn requests_may_carry_an_id_that_the_reply_echoes() {
    let input = [
        json!({"id": 7, "template": "x"}).to_string(),
        json!({"id": "b", "template": "${A"}).to_string(),
        json!({"id": null, "template": "{p}", "params": {"p": [1]}}).to_string(),
        json!({"id": {"k": 1}, "template": 1, "colour": 2}).to_string(),
        json!({"template": "no id"}).to_string(),
    ]
    .join("\n");
    let replies = serve_bytes(input.as_bytes(), &Limits::default());
    assert_eq!(
        replies[0],
        json!({"id": 7, "ok": true, "value": "x", "warnings": []})
    );
    assert_eq!(replies[1]["id"], json!("b"));
    assert_eq!(replies[1]["ok"], json!(false));
    assert_eq!(
        replies[2],
        json!({"id": null, "ok": true, "value": [1], "warnings": []})
    );
    assert_eq!(replies[3]["id"], json!({"k": 1}));
    assert_eq!(
        replies[3]["error"]["message"],
        json!("malformed request: unknown field `colour`, expected one of `id`, `template`, `layers`, `env`, `secrets`, `params`, `context`, `inputs`, `strict`")
    );
    assert_eq!(
        replies[4],
        json!({"ok": true, "value": "no id", "warnings": []})
    );
    // The id comes first in the reply.
    let mut out = Vec::new();
    serve(
        &b"{\"template\": 1, \"id\": 2}\n"[..],
        &mut out,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"id\":2,\"ok\":true,\"value\":1,\"warnings\":[]}\n"
    );
}

#[test]
fn every_non_empty_line_is_answered_whitespace_included() {
    let input = b"{\"template\":1}\n\n   \t\n\r\n{\"template\":2}\r\n \r\n{\"template\":3}";
    let replies = serve_bytes(input, &Limits::default());
    assert_eq!(replies.len(), 5, "{replies:?}");
    assert_eq!(replies[0]["value"], json!(1));
    assert_eq!(
        replies[1],
        json!({"ok": false, "error": {"kind": "request", "layer": "request", "message": "empty request", "path": "$", "span": null, "hint": "a request is one JSON object: {\"template\": …, \"layers\", \"env\", \"secrets\", \"params\", \"context\", \"inputs\", \"strict\"}"}})
    );
    assert_eq!(replies[2]["value"], json!(2));
    assert_eq!(replies[3]["error"]["message"], json!("empty request"));
    assert_eq!(
        replies[4]["value"],
        json!(3),
        "the last line needs no newline"
    );
}

#[test]
fn a_line_past_the_document_limit_is_refused_unread_and_the_rest_are_served() {
    let limits = Limits {
        document_bytes: 100,
        ..Limits::default()
    };
    let long = json!({"id": 1, "template": "x".repeat(10_000)}).to_string();
    let input = format!("{long}\n{}\n", json!({"id": 2, "template": "y"}));
    let replies = serve_bytes(input.as_bytes(), &limits);
    assert_eq!(replies.len(), 2);
    assert_eq!(
        replies[0],
        json!({"ok": false, "error": {"kind": "limit", "layer": "request", "message": "request line exceeds the limit of 100 bytes", "path": "$", "span": null, "hint": "pass large values in several requests"}})
    );
    assert_eq!(
        replies[1],
        json!({"id": 2, "ok": true, "value": "y", "warnings": []})
    );
}

#[test]
fn duplicate_keys_in_a_request_are_refused() {
    let r = handle_line(r#"{"template": 1, "template": 2}"#, &Limits::default());
    assert_eq!(
        r["error"]["message"],
        json!("malformed request: duplicate key `template` at line 1 column 26")
    );
}

#[test]
fn a_line_that_cannot_be_read_still_gets_its_id_back() {
    const HINT: &str = "a request is one JSON object: {\"template\": …, \"layers\", \"env\", \"secrets\", \"params\", \"context\", \"inputs\", \"strict\"}";
    let lines = [
        r#"{"id": 1, "template": 1, "template": 2}"#,
        r#"{"id": "two", "template": 1e400}"#,
        r#"{"id": 3, "params": {"a": 1, "a": 2}, "template": "x"}"#,
        r#"{"id": 4, "id": 5, "template": 1}"#,
        r#"{"template": 1, "template": 2}"#,
    ];
    let error = |message: &str| json!({"kind": "request", "layer": "request", "message": message, "path": "$", "span": null, "hint": HINT});
    let expected = [
        json!({"id": 1, "ok": false, "error": error("malformed request: duplicate key `template` at line 1 column 35")}),
        json!({"id": "two", "ok": false, "error": error("malformed request: number out of range at line 1 column 31")}),
        json!({"id": 3, "ok": false, "error": error("malformed request: duplicate key `a` at line 1 column 32")}),
        json!({"ok": false, "error": error("malformed request: duplicate key `id` at line 1 column 14")}),
        json!({"ok": false, "error": error("malformed request: duplicate key `template` at line 1 column 26")}),
    ];
    let input = lines.join("\n");
    assert_eq!(serve_bytes(input.as_bytes(), &Limits::default()), expected);
    for (line, reply) in lines.iter().zip(&expected) {
        assert_eq!(&handle_line(line, &Limits::default()), reply, "{line}");
    }
    // A line that is not UTF-8 and repeats a key: the id is read all the same.
    let replies = serve_bytes(
        b"{\"id\": 6, \"template\": 1, \"template\": \"\xff\"}\n",
        &Limits::default(),
    );
    assert_eq!(replies[0]["id"], json!(6));
    assert_eq!(
        replies[0]["error"]["message"],
        json!("malformed request: not valid UTF-8 (byte 38)")
    );
}

#[test]
fn serving_answers_every_line_as_handle_line_does_repeated_templates_included() {
    // Served lines are read in one pass, their templates compiled once per text and layers;
    // each reply must be the one the general reading gives the line on its own.
    let limits = Limits {
        yaml_nodes: 12,
        ..Limits::default()
    };
    let lines = [
        r#"{"template": {"a": "{x} ${A:-d}", "b": ["${state.n}"]}, "params": {"x": 1}, "context": {"state": {"n": 2}}}"#,
        r#"{"template": {"a": "{x} ${A:-d}", "b": ["${state.n}"]}, "params": {"x": "y"}, "env": {"A": "e"}}"#,
        r#"{"template": {"a": "{x} ${A:-d}", "b": ["${state.n}"]}, "layers": ["params"], "params": {"x": 3}}"#,
        r#"{"template": {"a": "{x} ${A:-d}", "b": ["${state.n}"]}, "layers": ["env"], "params": {"x": 3}}"#,
        // The template's nodes count against each request that repeats it: this one is past
        // the limit only with them.
        r#"{"template": {"a": "{x} ${A:-d}", "b": ["${state.n}"]}, "context": {"s": [1, 2, 3, 4, 5, 6]}}"#,
        r#"{"template": {"a": "{x} ${A:-d}", "b": ["${state.n}"]}, "context": {"s": [1, 2]}}"#,
        // The environment is checked before the template is compiled.
        r#"{"template": "${A", "env": {"N": 5}}"#,
        r#"{"template": "${A", "env": {"N": "5"}}"#,
        r#"{"id": [1], "template": "{x}", "params": {"x": 1.5}, "secrets": ["A"], "strict": true}"#,
        r#"{"template": "{x}", "strict": null}"#,
        r#"{"template": "{x}", "context": []}"#,
        r#"{"template": {"k": 1, "k": 2}}"#,
        r#"{"template": "a", "env": {"B": "1", "B": "2"}}"#,
        r#"{"templ\u0061te": "escaped key"}"#,
        r#"{"template": "x"} trailing"#,
        r#"{"template": "x", "id": 1, "id": 2}"#,
    ];
    let input = lines.join("\n");
    let served = serve_bytes(input.as_bytes(), &limits);
    assert_eq!(served.len(), lines.len());
    for (line, reply) in lines.iter().zip(&served) {
        assert_eq!(reply, &handle_line(line, &limits), "{line}");
    }
    assert_eq!(served[0]["value"], json!({"a": "1 d", "b": [2]}));
    assert_eq!(
        served[2]["value"],
        json!({"a": "3 ${A:-d}", "b": ["${state.n}"]})
    );
    assert_eq!(served[4]["error"]["kind"], json!("limit"));
    assert_eq!(served[5]["ok"], json!(true));
    assert_eq!(
        served[6]["error"]["message"],
        json!("env value of `N` must be a string")
    );
    assert_eq!(served[13]["value"], json!("escaped key"));
}

/// Serves `lines` under `limits` and checks each reply, byte for byte, against the general
/// reading of the line on its own.
fn assert_served_as_read_alone(lines: &[&str], limits: &Limits) {
    let mut out = Vec::new();
    serve(lines.join("\n").as_bytes(), &mut out, limits).unwrap();
    let out = String::from_utf8(out).unwrap();
    let served: Vec<&str> = out.lines().collect();
    assert_eq!(served.len(), lines.len());
    for (line, reply) in lines.iter().zip(served) {
        let alone = handle_line(line, limits).to_string();
        assert_eq!(reply, alone, "{line} under {limits:?}");
    }
}

/// `"k0": 0, "k1": 1, …` up to `n` keys.
fn many_keys(n: usize) -> String {
    let keys: Vec<String> = (0..n).map(|i| format!(r#""k{i}": {i}"#)).collect();
    keys.join(", ")
}

#[test]
fn values_read_when_named_answer_as_values_read_whole() {
    // `env`, `params`, `context` and `inputs` are checked in one pass and read only where a
    // template names them; every refusal and every answer must be the general reading's.
    let deep = format!(
        r#"{{"template": "{{x}}", "params": {{"x": 1, "d": {}1{}}}}}"#,
        "[".repeat(120),
        "]".repeat(120)
    );
    let many = format!(
        r#"{{"template": ["{{k39}}", "{{k0}}", "{{k41}}", "{{input:k20}}", "${{k7.a}}"], "params": {{{m}}}, "inputs": {{{m}}}, "context": {{{m}}}}}"#,
        m = many_keys(40)
    );
    let repeated = format!(
        r#"{{"template": "{{k0}}", "params": {{{}, "k3": 0}}}}"#,
        many_keys(20)
    );
    let lines = [
        // Escapes in values, in keys, and secrets.
        r#"{"template": "${A} ${B}", "env": {"A": "a\u0062\n", "B": "q"}, "secrets": ["B", "C"]}"#,
        r#"{"template": "${A:?gone ${B}} ${B}", "env": {"B": "hidden"}, "secrets": ["B"]}"#,
        r#"{"template": "{x}", "params": {"x": {"k\u0065y": 1}}}"#,
        r#"{"template": "{x}", "params": {"\u0078": 2}}"#,
        // Refusals in values no template names.
        r#"{"template": "{x}", "params": {"x": 1, "y": {"k": 1, "k": 2}}}"#,
        r#"{"template": "{x}", "params": {"x": 1, "x": 2}}"#,
        r#"{"template": "{x}", "context": {"n": 1e400}}"#,
        r#"{"template": "{x}", "inputs": {"f": [1, 2, -0.5e3]}}"#,
        r#"{"template": "{x}", "params": null}"#,
        r#"{"template": "{x}", "env": null}"#,
        r#"{"template": "{x}", "env": {"A": null}}"#,
        r#"{"template": "{x}", "inputs": "f"}"#,
        r#"{"template": "{x}", "secrets": "B"}"#,
        &deep,
        // Lookups: whole values, paths into them, did-you-mean, the inputs namespace.
        r#"{"template": {"a": "{x}", "b": "${state.n}", "c": "${inputs}", "d": "${inputs.fo}"}, "params": {"x": [1, {"y": null}]}, "context": {"state": {"n": 2.5}}, "inputs": {"foo": true, "bar": "z"}}"#,
        r#"{"template": "${stat.n} {nam} {input:fo}", "params": {"name": 1}, "context": {"state": {}}, "inputs": {"foo": 1}, "strict": true}"#,
        r#"{"template": "${inputs.f}", "context": {"inputs": {"f": "from context"}}, "inputs": {"f": "from inputs"}}"#,
        &many,
        // A key repeated past the number of keys compared one by one.
        &repeated,
    ];
    assert_served_as_read_alone(&lines, &Limits::default());
    // Every node limit either reading could stop at: the same answer each time. (The bytes
    // of strings and keys never pass the byte limit when the line itself is within it.)
    let small = [lines[0], lines[2], lines[14], lines[16]];
    for nodes in 1..24 {
        let limits = Limits {
            yaml_nodes: nodes,
            ..Limits::default()
        };
        assert_served_as_read_alone(&small, &limits);
    }
}
