//! Layer C's expression language: operators, functions, strict types at run time and at
//! compile time, and the API used for `when:` conditions.

mod common;
use common::*;
use serde_json::json;
use strata_context::{eval_bool, eval_value, parse_expr};

fn state() -> Case {
    case().ctx(
        "state",
        json!({"count": 5, "price": 2.5, "name": "Ann", "tags": ["a", "b"], "obj": {"k": 1, "j": 2}, "flag": true, "raw": "[1,2]", "num": "42", "nil": null}),
    )
}

#[test]
fn arithmetic_keeps_integers_integer() {
    let c = state();
    assert_eq!(c.one(&[C], "${state.count + 1}"), json!(6));
    assert_eq!(c.one(&[C], "${state.count * 3 - 1}"), json!(14));
    assert_eq!(c.one(&[C], "${state.count / 2}"), json!(2));
    assert_eq!(c.one(&[C], "${state.count % 2}"), json!(1));
    assert_eq!(c.one(&[C], "${-state.count}"), json!(-5));
    assert_eq!(c.one(&[C], "${state.count * state.price}"), json!(12.5));
    assert_eq!(c.one(&[C], "${(state.count + 1) * 2}"), json!(12));
    assert_eq!(c.one(&[C], "${state.count + 1 * 2}"), json!(7));
    assert_eq!(c.one(&[C], "n=${state.count + 1}"), json!("n=6"));
}

#[test]
fn strings_comparisons_and_logic() {
    let c = state();
    assert_eq!(c.one(&[C], "${'Dr. ' + state.name}"), json!("Dr. Ann"));
    assert_eq!(c.one(&[C], "${state.count > 3}"), json!(true));
    assert_eq!(
        c.one(&[C], "${state.count >= 5 && state.count < 6}"),
        json!(true)
    );
    assert_eq!(
        c.one(&[C], "${state.name == 'Ann' || state.missing}"),
        json!(true)
    );
    assert_eq!(c.one(&[C], "${state.flag == false}"), json!(false));
    assert_eq!(c.one(&[C], "${state.count != 5.0}"), json!(false));
    assert_eq!(c.one(&[C], "${'b' in state.tags}"), json!(true));
    assert_eq!(c.one(&[C], "${'k' in state.obj}"), json!(true));
    assert_eq!(c.one(&[C], "${'nn' in state.name}"), json!(true));
    assert_eq!(c.one(&[C], "${'a' < 'b'}"), json!(true));
    assert_eq!(
        c.one(&[C], "${[state.count, 'x', {\"k\": state.flag}]}"),
        json!([5, "x", {"k": true}])
    );
}

#[test]
fn every_function() {
    let c = state();
    assert_eq!(c.one(&[C], "${length(state.tags)}"), json!(2));
    assert_eq!(c.one(&[C], "${length(state.name)}"), json!(3));
    assert_eq!(c.one(&[C], "${length(state.obj)}"), json!(2));
    assert_eq!(c.one(&[C], "${exists(state.count)}"), json!(true));
    assert_eq!(c.one(&[C], "${exists(state.nope.deeper)}"), json!(false));
    assert!(c.warnings(&[C], "${exists(state.nope)}").is_empty());
    assert_eq!(c.one(&[C], "${contains(state.tags, 'a')}"), json!(true));
    assert_eq!(c.one(&[C], "${keys(state.obj)}"), json!(["k", "j"]));
    assert_eq!(
        c.one(&[C], "${lower(state.name)}${upper(state.name)}"),
        json!("annANN")
    );
    assert_eq!(c.one(&[C], "${json(state.tags)}"), json!("[\"a\",\"b\"]"));
    assert_eq!(c.one(&[C], "${from_json(state.raw)}"), json!([1, 2]));
    assert_eq!(c.one(&[C], "${number(state.num) + 1}"), json!(43));
    assert_eq!(c.one(&[C], "${string(state.count) + '!'}"), json!("5!"));
    assert_eq!(c.one(&[C], "${length(state.nil ?? [])}"), json!(0));
}

#[test]
fn type_errors_at_run_time_are_errors_not_guesses() {
    let c = state();
    assert_eq!(
        c.err(&[C], "${state.count > state.num}"),
        "context error at $ 0..26: `state.count > state.num`: `>`: cannot order an integer and a string (hint: types are strict: convert with number(…) or string(…))"
    );
    assert_eq!(
        c.err(&[C], "${state.name + state.count}"),
        "context error at $ 0..27: `state.name + state.count`: `+` cannot combine a string and an integer (hint: types are strict: convert with number(…) or string(…))"
    );
    assert_eq!(
        c.err(&[C], "${state.count / (state.count - 5)}"),
        "context error at $ 0..34: `state.count / (state.count - 5)`: division by zero (hint: types are strict: convert with number(…) or string(…))"
    );
    assert_eq!(
        c.err(&[C], "${state.count && true}"),
        "context error at $ 0..22: `state.count && true`: && needs a boolean, got an integer (hint: types are strict: convert with number(…) or string(…))"
    );
    assert_eq!(
        c.err(&[C], "${number(state.name)}"),
        "context error at $ 0..21: `number(state.name)`: `number`: `Ann` is not a number (hint: types are strict: convert with number(…) or string(…))"
    );
}

#[test]
fn type_errors_visible_in_the_text_fail_at_compile_time() {
    let cases = [
        ("${'1' + 2}", "context error at $ 6..7: `+` cannot combine a string and a number (hint: types are strict: convert with number(…) or string(…))"),
        ("${(5 > '3')}", "context error at $ 5..6: `>` cannot combine a number and a string (hint: types are strict: convert with number(…) or string(…))"),
        ("${length(5)}", "context error at $ 2..3: `length` needs a string, an array or an object, got a number (hint: types are strict: convert with number(…) or string(…))"),
        ("${!state.count + 1}", "context error at $ 15..16: `+` cannot combine a boolean and a number (hint: types are strict: convert with number(…) or string(…))"),
        ("${!(state.count + 1)}", "context error at $ 2..3: `!` needs a boolean, got a number (hint: types are strict: convert with number(…) or string(…))"),
        ("${state.a && 'yes'}", "context error at $ 10..11: `&&` cannot combine a value and a string (hint: types are strict: convert with number(…) or string(…))"),
        ("${lower(state.a) - 1}", "context error at $ 17..18: `-` cannot combine a string and a number (hint: types are strict: convert with number(…) or string(…))"),
        ("${size(state.a)}", "context error at $ 2..3: unknown function `size`; did you mean `length`? (hint: the functions are length, exists, contains, keys, lower, upper, json, from_json, number, string, type, matches, sum, min, max, join)"),
        ("${contains(state.a)}", "context error at $ 2..3: `contains` takes 2 arguments, got 1 (hint: see docs/layers.md)"),
        ("${exists('x')}", "context error at $ 2..3: `exists` takes a path (hint: see docs/layers.md)"),
        ("${state.a +}", "context error at $ 11..12: expected a context path or a value (hint: a placeholder holds a path such as `state.items[0].name`, optionally `?? fallback`, or an expression)"),
        ("${(state.a}", "context error at $ 10..11: expected `)` (hint: close the group with `)`)"),
    ];
    for (template, want) in cases {
        assert_eq!(state().err(&[C], template), want, "{template}");
    }
}

#[test]
fn missing_paths_in_expressions_warn_and_render_empty() {
    let c = state();
    assert_eq!(c.one(&[C], "${state.nope + 1}"), json!(""));
    assert_eq!(
        c.warnings(&[C], "${state.nope + 1}"),
        ["context warning at $ 0..17: context path `state.nope + 1` not found"]
    );
    assert_eq!(c.one(&[C], "${(state.nope ?? 0) + 1}"), json!(1));
}

#[test]
fn when_conditions_use_the_same_language() {
    let root = json!({"state": {"count": 2, "status": "ok"}, "result": {"exit_code": 0}});
    let t = |s: &str| {
        eval_bool(&parse_expr(s, 0).unwrap(), &root)
            .map_err(|e| (e.kind().name(), e.message().to_string()))
    };
    assert_eq!(t("state.count > 0"), Ok(true));
    assert_eq!(t("state.status == 'ok' && result.exit_code == 0"), Ok(true));
    assert_eq!(t("!(state.count > 5)"), Ok(true));
    assert_eq!(
        t("state.count"),
        Err((
            "type",
            "a condition must be a boolean, got an integer".to_string()
        ))
    );
    assert_eq!(
        t("state.gone > 1"),
        Err((
            "undefined",
            "context path `state.gone` not found".to_string()
        ))
    );
    assert_eq!(t("exists(state.gone)"), Ok(false));
    assert_eq!(
        eval_value(&parse_expr("state.count * 10", 0).unwrap(), &root),
        Ok(json!(20))
    );
    assert_eq!(
        parse_expr("'1' + 2", 0).unwrap_err().message(),
        "`+` cannot combine a string and a number"
    );
}
