//! Field paths and values while rendering nested documents and config-key parameters: the
//! path of every warning and error is the field being rendered, also when a placeholder
//! makes another config key render first.

mod common;

use common::*;
use serde_json::json;

#[test]
fn warnings_name_nested_fields() {
    let doc = json!({
        "cfg": {"args": ["x", "${state.gone}"], "env": {"A B": "${state.nope}"}},
        "n": 1
    });
    let out = case().render(&[C], &doc).unwrap();
    assert_eq!(
        out.warnings,
        [
            "context warning at cfg.args[1] 0..13: context path `state.gone` not found",
            "context warning at cfg.env[\"A B\"] 0..13: context path `state.nope` not found",
        ]
    );
    assert_eq!(
        out.value,
        json!({"cfg": {"args": ["x", ""], "env": {"A B": ""}}, "n": 1})
    );
}

#[test]
fn a_referenced_key_warns_at_its_own_path() {
    let doc = json!({"a": "{b} ${state.x1}", "b": ["${state.x2}"]});
    let out = case().render(&[C, P], &doc).unwrap();
    assert_eq!(
        out.warnings,
        [
            "context warning at b[0] 0..11: context path `state.x2` not found",
            "context warning at a 4..15: context path `state.x1` not found",
        ]
    );
    assert_eq!(out.value, json!({"a": "[\"\"] ", "b": [""]}));
}

#[test]
fn errors_name_deep_fields() {
    let doc = json!({"outer": [{"inner": ["ok", "${state.gone}"]}]});
    let e = case().strict().render(&[C], &doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "context error at outer[0].inner[1] 0..13: context path `state.gone` not found (hint: strict mode turns missing values into errors)"
    );
}

#[test]
fn referenced_keys_keep_their_values_and_the_document_order() {
    let doc = json!({"x": "{y}!", "y": "{z}", "z": "end", "w": [1, "{x}"], "v": "{y}?"});
    let out = case().render(&[P], &doc).unwrap();
    assert_eq!(
        serde_json::to_string(&out.value).unwrap(),
        r#"{"x":"end!","y":"end","z":"end","w":[1,"end!"],"v":"end?"}"#
    );
}
