//! SPEC §1, layer P's fixpoint, with no other layer: config keys are followed up to
//! `limits.param_links` links; a longer chain or a cycle is an error naming the chain.

use serde_json::{json, Map, Value};
use strata_core::syntax::{Seq, Syntax};
use strata_core::{Const, Error, Limits, Node, RenderOptions, Scope};
use strata_params::{Compiled, Fixpoint, ParamSyntax};

/// Compiles every string leaf of `value` with layer P alone (map keys are never templated).
fn compile(value: &Value, limits: &Limits) -> Node {
    let stages: [&dyn Syntax; 1] = [&ParamSyntax];
    match value {
        Value::String(s) => {
            let seq = Seq::compile(s, &stages, limits).unwrap();
            if seq.is_literal() {
                Node::Const(Const::of(value.clone()))
            } else {
                Node::Leaf(seq)
            }
        }
        Value::Array(items) => Node::Array(items.iter().map(|v| compile(v, limits)).collect()),
        Value::Object(map) => Node::Object(Box::new(
            map.iter()
                .map(|(k, v)| (k.clone(), compile(v, limits)))
                .collect(),
        )),
        other => Node::Const(Const::of(other.clone())),
    }
}

/// Renders `doc` with layer P's fixpoint against the given runtime and caller parameters.
fn render_with(
    doc: &Value,
    limits: &Limits,
    runtime: &Map<String, Value>,
    caller: &Map<String, Value>,
) -> Result<Value, Error> {
    let root = compile(doc, limits);
    let fixpoint = Fixpoint::of(&root);
    let scope = Scope {
        runtime_params: runtime,
        caller_params: caller,
        ..Scope::default()
    };
    let doc = Compiled {
        root: &root,
        source: "",
        limits,
    };
    let (value, warnings) = fixpoint.render(doc, &scope, RenderOptions::STRICT)?;
    assert!(warnings.is_empty(), "{warnings:?}");
    Ok(value.into_json())
}

fn render(doc: &Value) -> Result<Value, Error> {
    render_with(doc, &Limits::default(), &Map::new(), &Map::new())
}

#[test]
fn a_chain_of_three_links_resolves() {
    let doc = json!({"a": "{b}", "b": "{c}", "c": "{d}", "d": "end"});
    assert_eq!(
        render(&doc).unwrap(),
        json!({"a": "end", "b": "end", "c": "end", "d": "end"})
    );
    // Keys are found whatever their order, and whole values keep their type.
    let doc = json!({"d": [1, {"x": 2}], "c": "{d}", "b": "<{c}>", "a": "{b}!"});
    assert_eq!(
        render(&doc).unwrap(),
        json!({"d": [1, {"x": 2}], "c": [1, {"x": 2}], "b": "<[1,{\"x\":2}]>", "a": "<[1,{\"x\":2}]>!"})
    );
}

#[test]
fn a_chain_of_four_links_is_an_error_naming_the_chain() {
    let doc = json!({"a": "{b}", "b": "{c}", "c": "{d}", "d": "{e}", "e": "end"});
    let e = render(&doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at d 0..3: parameter chain is longer than 3 links: a -> b -> c -> d -> e (hint: shorten the chain, or raise `limits.param_links` in strata.yaml (or STRATA_LIMITS_PARAM_LINKS))"
    );
    // The limit is configurable.
    let limits = Limits {
        param_links: 4,
        ..Limits::default()
    };
    let out = render_with(&doc, &limits, &Map::new(), &Map::new()).unwrap();
    assert_eq!(out["a"], json!("end"));
}

#[test]
fn the_link_limit_counts_keys_already_memoised() {
    // `x` refers to `a` after `a` was rendered (and memoised) on its own.
    let doc = json!({"a": "{b}", "b": "{c}", "c": "{d}", "d": "end", "x": "{a}"});
    assert_eq!(
        render(&doc).unwrap_err().to_string(),
        "params error at x 0..3: parameter chain is longer than 3 links: x -> a -> b -> c -> d (hint: shorten the chain, or raise `limits.param_links` in strata.yaml (or STRATA_LIMITS_PARAM_LINKS))"
    );
}

#[test]
fn a_cycle_is_an_error_naming_it() {
    let e = render(&json!({"a": "x{b}", "b": "{a}"})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at b 0..3: parameter cycle: a -> b -> a (hint: a parameter cannot refer to itself, directly or through others)"
    );
    let e = render(&json!({"a": ["{a}"]})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at a[0] 0..3: parameter cycle: a -> a (hint: a parameter cannot refer to itself, directly or through others)"
    );
}

#[test]
fn runtime_parameters_win_over_config_keys_which_win_over_caller_parameters() {
    let runtime: Map<String, Value> = [("tool_dir".to_string(), json!("/t"))]
        .into_iter()
        .collect();
    let caller: Map<String, Value> = [
        ("tool_dir".to_string(), json!("caller")),
        ("user".to_string(), json!("caller")),
        ("p".to_string(), json!("{user}")),
    ]
    .into_iter()
    .collect();
    let doc = json!({"tool_dir": "mine", "user": "ann", "cmd": "{tool_dir}/{user} {p} {nope}"});
    let out = render_with(&doc, &Limits::default(), &runtime, &caller).unwrap();
    // The caller's `{user}` is data: never scanned again.
    assert_eq!(out["cmd"], json!("/t/ann {user} {nope}"));
    // Without a map there are no config keys; the other sources still apply.
    let out = render_with(
        &json!("{tool_dir} {user}"),
        &Limits::default(),
        &runtime,
        &caller,
    );
    assert_eq!(out.unwrap(), json!("/t caller"));
}
