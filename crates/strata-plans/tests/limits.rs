//! References that multiply a result count against the output limits while they resolve
//! (issue 24, row 2).

use serde_json::{json, Value};
use strata_core::Limits;
use strata_plans::answer_line_within;

fn bomb(n: usize, result: Value, arguments: Value) -> String {
    let _ = n;
    json!({
        "plan": [
            {"tool": "t", "arguments": {}},
            {"tool": "t", "arguments": arguments},
        ],
        "results": {"step1": result},
    })
    .to_string()
}

#[test]
fn whole_references_stop_at_the_per_document_limit() {
    let limits = Limits {
        output_bytes_per_config: 1_000_000,
        ..Limits::default()
    };
    let line = bomb(
        100,
        json!("x".repeat(64 << 10)),
        json!({"a": vec!["$step1"; 100]}),
    );
    let reply = answer_line_within(&line, &limits);
    assert_eq!(
        reply["steps"][1]["error"],
        json!({
            "kind": "limit",
            "message": "resolved arguments exceed 1000000 bytes"
        })
    );
    // Within the limit, the same references resolve.
    let line = bomb(
        10,
        json!("x".repeat(64 << 10)),
        json!({"a": vec!["$step1"; 10]}),
    );
    let reply = answer_line_within(&line, &limits);
    assert_eq!(reply["steps"][1]["state"], json!("ready"));
}

#[test]
fn embedded_references_stop_at_the_per_string_limit() {
    let limits = Limits {
        output_bytes_per_string: 100_000,
        ..Limits::default()
    };
    let line = bomb(
        1,
        json!("y".repeat(30_000)),
        json!({"a": "{$step1}".repeat(10)}),
    );
    let reply = answer_line_within(&line, &limits);
    let error = &reply["steps"][1]["error"];
    assert_eq!(
        error["message"],
        json!("a resolved string exceeds 100000 bytes")
    );
    assert_eq!(error["kind"], json!("limit"));
}
