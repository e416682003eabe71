//! SPEC §1, layer P: `{name}`, the `{{name}}` escape, literal braces, unknown names, type
//! preservation, the three sources and their precedence, and the fixpoint with its limits.

mod common;
use common::*;
use serde_json::json;

#[test]
fn substitutes_names_and_leaves_other_braces_alone() {
    let c = case().param("user", json!("ann")).param("_x1", json!("y"));
    assert_eq!(c.one(&[P], "hi {user}{_x1}"), json!("hi anny"));
    for s in [
        "{}",
        "{ user }",
        "{a.b}",
        r#"{"json": 1}"#,
        "{input:k}",
        "{tool-path}",
        "{1x}",
        "${user}",
        "$${user}",
    ] {
        assert_eq!(c.one(&[P], s), json!(s), "{s}");
    }
}

#[test]
fn double_braces_yield_the_literal_placeholder() {
    let c = case().param("user", json!("ann"));
    assert_eq!(c.one(&[P], "{{user}} is {user}"), json!("{user} is ann"));
    assert_eq!(c.one(&[P], "{{unknown}}"), json!("{unknown}"));
    assert_eq!(c.one(&[P], "{{user}"), json!("{ann"));
}

#[test]
fn unknown_names_are_left_unchanged_without_warning() {
    let c = case();
    assert_eq!(c.one(&[P], "a {nope} b"), json!("a {nope} b"));
    assert!(c.warnings(&[P], "a {nope} b").is_empty());
    assert_eq!(c.one(&[P], "{nope}"), json!("{nope}"));
}

#[test]
fn whole_value_keeps_the_type() {
    let c = case()
        .param("items", json!([1, 2]))
        .param("n", json!(10000000))
        .param("obj", json!({"a": null}))
        .param("flag", json!(false));
    assert_eq!(c.one(&[P], "{items}"), json!([1, 2]));
    assert_eq!(c.one(&[P], "{n}"), json!(10000000));
    assert_eq!(c.one(&[P], "{obj}"), json!({"a": null}));
    assert_eq!(c.one(&[P], "{flag}"), json!(false));
    assert_eq!(c.one(&[P], " {n}"), json!(" 10000000"));
    assert_eq!(c.one(&[P], "{items} "), json!("[1,2] "));
    assert_eq!(c.one(&[P], "{obj}{flag}"), json!("{\"a\":null}false"));
}

#[test]
fn config_keys_are_parameters_resolved_through_the_chain() {
    let c = case().env("USER", "bob");
    let out = c
        .render(
            &[E, P],
            &json!({"greeting": "Hello {user}", "user": "${USER}", "n": 3, "count": "{n}"}),
        )
        .unwrap();
    assert_eq!(
        out.value,
        json!({"greeting": "Hello bob", "user": "bob", "n": 3, "count": 3})
    );
}

#[test]
fn runtime_params_beat_config_keys_which_beat_caller_params() {
    let c = case()
        .runtime("tool_dir", json!("/tools"))
        .param("tool_dir", json!("/evil"))
        .param("command", json!("rm"))
        .param("extra", json!("data"));
    let out = c
        .render(
            &[P],
            &json!({"command": "python", "tool_dir": "/mine", "args": ["{command}", "{tool_dir}", "{extra}"]}),
        )
        .unwrap();
    assert_eq!(
        out.value,
        json!({"command": "python", "tool_dir": "/mine", "args": ["python", "/tools", "data"]})
    );
}

#[test]
fn a_chain_of_three_links_resolves() {
    let doc = json!({"a": "{b}", "b": "{c}", "c": "{d}", "d": "end"});
    let out = case().render(&[P], &doc).unwrap();
    assert_eq!(
        out.value,
        json!({"a": "end", "b": "end", "c": "end", "d": "end"})
    );
}

#[test]
fn a_longer_chain_is_an_error_naming_it() {
    let doc = json!({"a": "{b}", "b": "{c}", "c": "{d}", "d": "{e}", "e": "end"});
    let e = case().render(&[P], &doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at d 0..3: parameter chain is longer than 3 links: a -> b -> c -> d -> e (hint: shorten the chain, or raise `limits.param_links` in strata.yaml (or STRATA_LIMITS_PARAM_LINKS))"
    );
    let out = case()
        .limits(|l| l.param_links = 4)
        .render(&[P], &doc)
        .unwrap();
    assert_eq!(out.value["a"], json!("end"));
}

#[test]
fn the_link_limit_holds_whatever_the_render_order() {
    // `x` refers to `a` after `a` was rendered (and memoised) on its own.
    let doc = json!({"a": "{b}", "b": "{c}", "c": "{d}", "d": "end", "x": "{a}"});
    let e = case().render(&[P], &doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at x 0..3: parameter chain is longer than 3 links: x -> a -> b -> c -> d (hint: shorten the chain, or raise `limits.param_links` in strata.yaml (or STRATA_LIMITS_PARAM_LINKS))"
    );
}

#[test]
fn cycles_are_errors_naming_the_chain() {
    let e = case()
        .render(&[P], &json!({"a": "x{b}", "b": "{a}"}))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at b 0..3: parameter cycle: a -> b -> a (hint: a parameter cannot refer to itself, directly or through others)"
    );
    let e = case().render(&[P], &json!({"a": ["{a}"]})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at a[0] 0..3: parameter cycle: a -> a (hint: a parameter cannot refer to itself, directly or through others)"
    );
}

#[test]
fn caller_params_are_data_never_rescanned() {
    let c = case().param("p", json!("{q}")).param("q", json!("boom"));
    assert_eq!(c.one(&[P], "{p}"), json!("{q}"));
    assert_eq!(c.one(&[P], "x{p}"), json!("x{q}"));
}

#[test]
fn dollar_before_the_brace_is_not_a_parameter() {
    let c = case().param("x", json!("v"));
    assert_eq!(c.one(&[P], "${x} {x}"), json!("${x} v"));
}
