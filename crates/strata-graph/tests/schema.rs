//! docs/schemas/graph.schema.json names exactly the keys, kinds, events and operators the
//! loader accepts.

use serde_json::Value;
use strata_graph::{node_keys, EDGE_KEYS, EVENTS, GRAPH_KEYS, HOOK_ACTION_KEYS, HOOK_KEYS, KINDS};

fn schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schemas/graph.schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

fn sorted(items: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

#[test]
fn the_schema_matches_the_loader() {
    let s = schema();
    let defs = &s["$defs"];
    assert_eq!(keys(&s), sorted(&GRAPH_KEYS));
    for kind in KINDS {
        assert_eq!(keys(&defs[kind]), sorted(&node_keys(kind, false)), "{kind}");
        if kind != "return" {
            let body = &defs[format!("body_{kind}")];
            assert_eq!(keys(body), sorted(&node_keys(kind, true)), "body {kind}");
        }
    }
    assert_eq!(keys(&defs["edge"]), sorted(&EDGE_KEYS));
    assert_eq!(keys(&defs["hook"]), sorted(&HOOK_KEYS));
    assert_eq!(
        keys(&defs["hook"]["properties"]["action"]),
        sorted(&HOOK_ACTION_KEYS)
    );
    let events: Vec<&str> = EVENTS.iter().map(|e| e.name()).collect();
    assert_eq!(
        defs["hook"]["properties"]["event"]["enum"],
        serde_json::json!(events)
    );
    assert_eq!(
        defs["structured"]["oneOf"][0]["properties"]["op"]["enum"],
        serde_json::json!(strata_context::condition::OPERATORS)
    );
}
