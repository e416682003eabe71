//! SPEC §1, layer C: paths, indexes, quoted keys, whitespace, `??`, type preservation,
//! missing paths, ownership of `${…}`, and syntax errors with positions.

mod common;
use common::*;
use serde_json::json;

fn state() -> Case {
    case()
        .ctx(
            "state",
            json!({
                "count": 3,
                "items": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
                "a b": "spaced",
                "nil": null,
                "big": 10000000,
                "pi": 3.25,
                "on": true,
                "obj": {"k": [1, "x"]},
                "7": "seven"
            }),
        )
        .ctx("_now", json!("noon"))
        .ctx("model", json!("m1"))
}

#[test]
fn dotted_paths_and_indexes() {
    let c = state();
    assert_eq!(c.one(&[C], "n=${state.count}"), json!("n=3"));
    assert_eq!(c.one(&[C], "${state.items[1].name}"), json!("b"));
    assert_eq!(c.one(&[C], "${state.items.2.name}"), json!("c"));
    assert_eq!(c.one(&[C], "${state.items[-1].name}"), json!("c"));
    assert_eq!(c.one(&[C], "${state.items.-3.name}"), json!("a"));
    assert_eq!(c.one(&[C], "${state.7}"), json!("seven"));
    assert_eq!(c.one(&[C], "${_now} ${model}"), json!("noon m1"));
}

#[test]
fn dotted_indexes_follow_one_another() {
    let c = case().ctx("state", json!({"m": [[1, 2], [3, 4]]}));
    assert_eq!(c.one(&[C], "${state.m.0.0}"), json!(1));
    assert_eq!(c.one(&[C], "${state.m.1.0}"), json!(3));
    assert_eq!(c.one(&[C], "${state.m.-1.0} ${state.m.0.-1}"), json!("3 2"));
    assert_eq!(c.one(&[C], "${state.m.-1.-1}"), json!(4));
    assert_eq!(
        c.one(&[C], "${state.m.1.0}"),
        c.one(&[C], "${state.m.1[0]}")
    );
    // The full parser (spaces, operators) reads the same paths.
    assert_eq!(c.one(&[C], "${ state.m.1.0 }"), json!(3));
    assert_eq!(c.one(&[C], "${state.m.1.1 + state.m.-1.0}"), json!(7));
    assert_eq!(c.one(&[C], "${state.m.5.0 ?? 'none'}"), json!("none"));
    assert_eq!(c.one(&[C], "${ state.m.-2.1 }"), json!(2));
}

#[test]
fn quoted_keys_and_whitespace() {
    let c = state();
    assert_eq!(c.one(&[C], r#"${state["a b"]}"#), json!("spaced"));
    assert_eq!(c.one(&[C], "${state['a b']}"), json!("spaced"));
    assert_eq!(c.one(&[C], "${ state.count }"), json!(3));
    assert_eq!(c.one(&[C], "${state . items [ 0 ] . name}"), json!("a"));
}

#[test]
fn whole_value_keeps_the_type_and_anything_else_is_text() {
    let c = state();
    assert_eq!(c.one(&[C], "${state.count}"), json!(3));
    assert_eq!(c.one(&[C], "${state.obj}"), json!({"k": [1, "x"]}));
    assert_eq!(c.one(&[C], "${state.nil}"), json!(null));
    assert_eq!(c.one(&[C], "${state.on}"), json!(true));
    assert_eq!(c.one(&[C], " ${state.count}"), json!(" 3"));
    assert_eq!(c.one(&[C], "${state.count}\n"), json!("3\n"));
}

#[test]
fn values_render_to_text_by_type() {
    let c = state();
    assert_eq!(c.one(&[C], "[${state.big}]"), json!("[10000000]"));
    assert_eq!(c.one(&[C], "[${state.pi}]"), json!("[3.25]"));
    assert_eq!(c.one(&[C], "[${state.on}]"), json!("[true]"));
    assert_eq!(c.one(&[C], "[${state.nil}]"), json!("[]"));
    assert_eq!(c.one(&[C], "[${state.obj}]"), json!(r#"[{"k":[1,"x"]}]"#));
    assert_eq!(
        c.one(&[C], "[${state.items[0]}]"),
        json!(r#"[{"name":"a"}]"#)
    );
}

#[test]
fn integers_never_pass_through_floats() {
    let c = case().ctx(
        "n",
        json!({"big": 9007199254740993_i64, "neg": -42, "u": u64::MAX, "f": 0.1}),
    );
    assert_eq!(
        c.one(&[C], "${n.big} ${n.neg} ${n.u} ${n.f}"),
        json!("9007199254740993 -42 18446744073709551615 0.1")
    );
    assert_eq!(c.one(&[C], "${n.big}"), json!(9007199254740993_i64));
}

#[test]
fn fallback_when_missing_or_null() {
    let c = state();
    assert_eq!(c.one(&[C], "${state.missing ?? state.count}"), json!(3));
    assert_eq!(c.one(&[C], "${state.nil ?? 'none'}"), json!("none"));
    assert_eq!(c.one(&[C], r#"${state.missing ?? "x}y"}"#), json!("x}y"));
    assert_eq!(c.one(&[C], "${state.missing ?? 5}"), json!(5));
    assert_eq!(
        c.one(&[C], "${state.missing ?? [1, {\"a\": 2}]}"),
        json!([1, {"a": 2}])
    );
    assert_eq!(c.one(&[C], "${state.count ?? 5}"), json!(3));
    assert_eq!(c.one(&[C], "${state.x ?? state.y ?? null}"), json!(null));
    assert_eq!(c.one(&[C], "${state.x??true}"), json!(true));
    assert!(c.warnings(&[C], "${state.missing ?? 1}").is_empty());
}

#[test]
fn missing_paths_render_empty_with_a_warning() {
    let c = state();
    assert_eq!(c.one(&[C], "a${state.nope}b"), json!("ab"));
    assert_eq!(c.one(&[C], "${state.nope}"), json!(""));
    assert_eq!(
        c.warnings(&[C], "a${state.nope}b"),
        ["context warning at $ 1..14: context path `state.nope` not found"]
    );
    assert_eq!(
        c.warnings(&[C], "${state.cuont}"),
        ["context warning at $ 0..14: context path `state.cuont` not found; did you mean `state.count`?"]
    );
    assert_eq!(
        c.warnings(&[C], "${state.items[9]}"),
        ["context warning at $ 0..17: context path `state.items[9]` not found"]
    );
    assert_eq!(
        state().strict().err(&[C], "${state.nope}"),
        "context error at $ 0..13: context path `state.nope` not found (hint: strict mode turns missing values into errors)"
    );
}

#[test]
fn paths_walk_json_data_only() {
    let c = state();
    assert_eq!(c.one(&[C], "${state.count.len}"), json!(""));
    assert_eq!(c.one(&[C], "${state.items.name}"), json!(""));
}

#[test]
fn env_names_belong_to_layer_e() {
    let c = state();
    for s in [
        "${HOME}", "${_X1}", "${A:-x}", "${A-x}", "${A:?x}", "${A+x}", "${A",
    ] {
        assert_eq!(c.one(&[C], s), json!(s), "{s}");
    }
    assert_eq!(c.one(&[C], "${PY:-${model}}"), json!("${PY:-m1}"));
}

#[test]
fn dollar_dollar_brace_is_a_literal() {
    assert_eq!(
        state().one(&[C], "$${state.count} ${state.count}"),
        json!("${state.count} 3")
    );
}

#[test]
fn syntax_errors_have_positions() {
    let c = state();
    assert_eq!(
        c.err(&[C], "a ${}"),
        "context error at $ 4..5: empty placeholder `${}` (hint: write a context path such as `${state.name}`)"
    );
    assert_eq!(
        c.err(&[C], "${ }"),
        "context error at $ 3..4: empty placeholder `${}` (hint: write a context path such as `${state.name}`)"
    );
    assert_eq!(
        c.err(&[C], "x ${state.count"),
        "context error at $ 2..15: unclosed `${`: no matching `}` (hint: close the placeholder with `}`, or write `$${` for a literal `${`)"
    );
    assert_eq!(
        c.err(&[C], "${state..x}"),
        "context error at $ 8..9: expected a key or an index after `.` (hint: write `a.b`, `a.0` or `a[\"b c\"]`)"
    );
    assert_eq!(
        c.err(&[C], "${state.x y}"),
        "context error at $ 10..11: unexpected `y` in context placeholder (hint: a placeholder holds a path such as `state.items[0].name`, optionally `?? fallback`, or an expression)"
    );
    assert_eq!(
        c.err(&[C], "${state[0}"),
        "context error at $ 9..10: expected `]` (hint: close the index with `]`)"
    );
}

#[test]
fn leaves_other_dollar_text_alone() {
    let c = state();
    for s in ["$", "$state", "${9x}", "${Foo}", "price: $5", "${ HOME }"] {
        assert_eq!(c.one(&[C], s), json!(s), "{s}");
    }
}
