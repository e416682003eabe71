//! SPEC §1, layer I: the four reference forms, defaults, type preservation, the escape,
//! missing inputs and malformed references.

mod common;
use common::*;
use serde_json::json;

fn inputs() -> Case {
    case()
        .input("name", json!("Ann"))
        .input("n", json!(5))
        .input("list", json!(["a", "b"]))
        .input("empty", json!(""))
}

#[test]
fn required_form() {
    let c = inputs();
    assert_eq!(c.one(&[I], "hi {input:name}!"), json!("hi Ann!"));
    assert_eq!(c.one(&[I], "{input:n}"), json!(5));
    assert_eq!(c.one(&[I], "{input:list}"), json!(["a", "b"]));
    assert_eq!(
        c.one(&[I], "n={input:n} l={input:list}"),
        json!(r#"n=5 l=["a","b"]"#)
    );
}

#[test]
fn missing_required_is_kept_literally_with_a_warning() {
    let c = inputs();
    assert_eq!(c.one(&[I], "x {input:who} y"), json!("x {input:who} y"));
    assert_eq!(
        c.warnings(&[I], "x {input:who} y"),
        ["inputs warning at $ 2..13: input `who` is not set; the reference is kept as written"]
    );
    assert_eq!(
        inputs().strict().err(&[I], "{input:who}"),
        "inputs error at $ 0..11: input `who` is not set; the reference is kept as written (hint: strict mode turns missing values into errors)"
    );
}

#[test]
fn optional_form_is_empty_when_missing() {
    let c = inputs();
    assert_eq!(c.one(&[I], "[{input:who?}]"), json!("[]"));
    assert_eq!(c.one(&[I], "{input:who?}"), json!(""));
    assert_eq!(c.one(&[I], "{input:name?}"), json!("Ann"));
    assert!(c.warnings(&[I], "{input:who?}").is_empty());
}

#[test]
fn default_forms() {
    let c = inputs();
    assert_eq!(c.one(&[I], "{input:who:World}"), json!("World"));
    assert_eq!(c.one(&[I], "{input:who|World}"), json!("World"));
    assert_eq!(c.one(&[I], "{input:name:World}"), json!("Ann"));
    assert_eq!(c.one(&[I], "{input:empty:World}"), json!(""));
    assert_eq!(
        c.one(&[I], "{input:url:http://h:8080/a|b}"),
        json!("http://h:8080/a|b")
    );
    assert_eq!(
        c.one(&[I], r#"{input:cfg:{"a":{"b":1}}}!"#),
        json!(r#"{"a":{"b":1}}!"#)
    );
    assert_eq!(c.one(&[I], "{input:who:}"), json!(""));
    assert_eq!(c.one(&[I], "{input:who:{input:name}}"), json!("Ann"));
    assert_eq!(c.one(&[I], "{input:n:7}"), json!(5));
}

#[test]
fn double_braces_yield_the_literal_reference() {
    let c = inputs();
    assert_eq!(
        c.one(&[I], "{{input:name}} is {input:name}"),
        json!("{input:name} is Ann")
    );
    assert_eq!(c.one(&[I], "{{input:name?}}"), json!("{input:name?}"));
}

#[test]
fn ignores_what_it_does_not_own() {
    let c = inputs();
    for s in [
        "{name}",
        "${inputs.name}",
        "{ input:name }",
        "{inputs:name}",
        "{}",
    ] {
        assert_eq!(c.one(&[I], s), json!(s), "{s}");
    }
}

#[test]
fn malformed_references_fail_with_position() {
    let c = inputs();
    assert_eq!(
        c.err(&[I], "hello {input:name"),
        "inputs error at $ 6..17: unclosed `{input:`: no matching `}` (hint: write `{input:key}`, `{input:key?}`, `{input:key:default}` or `{input:key|default}`; keys are letters, digits and `_`)"
    );
    assert_eq!(
        c.err(&[I], "{input:"),
        "inputs error at $ 0..7: unclosed `{input:`: no matching `}` (hint: write `{input:key}`, `{input:key?}`, `{input:key:default}` or `{input:key|default}`; keys are letters, digits and `_`)"
    );
    assert_eq!(
        c.err(&[I], "{input:}"),
        "inputs error at $ 0..8: `{input:` needs a key (hint: write `{input:key}`, `{input:key?}`, `{input:key:default}` or `{input:key|default}`; keys are letters, digits and `_`)"
    );
    assert_eq!(
        c.err(&[I], "{input:a-b}"),
        "inputs error at $ 0..9: malformed input reference (hint: write `{input:key}`, `{input:key?}`, `{input:key:default}` or `{input:key|default}`; keys are letters, digits and `_`)"
    );
    assert_eq!(
        c.err(&[I], "{input:x:{y}"),
        "inputs error at $ 0..12: unclosed `{input:`: no matching `}` (hint: write `{input:key}`, `{input:key?}`, `{input:key:default}` or `{input:key|default}`; keys are letters, digits and `_`)"
    );
}

#[test]
fn inputs_reach_layer_c_as_the_inputs_namespace() {
    let c = inputs();
    assert_eq!(
        c.one(&FULL, "{input:name} ${inputs.name}"),
        json!("Ann Ann")
    );
    assert_eq!(c.one(&FULL, "${inputs.n}"), json!(5));
    assert_eq!(c.one(&FULL, "${inputs.list[-1]}"), json!("b"));
    assert_eq!(
        c.one(&FULL, "${inputs}"),
        json!({"name": "Ann", "n": 5, "list": ["a", "b"], "empty": ""})
    );
    assert_eq!(
        c.warnings(&FULL, "${inputs.nme}"),
        ["context warning at $ 0..13: context path `inputs.nme` not found; did you mean `inputs.name`?"]
    );
    // A context that has its own `inputs` namespace wins.
    let own = inputs().ctx("inputs", json!({"name": "Bo"}));
    assert_eq!(own.one(&FULL, "${inputs.name}"), json!("Bo"));
}
