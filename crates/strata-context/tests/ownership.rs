//! Which layer owns a `${…}` now that layer C has `c ? a : b` and unary `+` (SPEC §1,
//! docs/layers.md): an env name followed by `}` or a Compose operator is layer E's — so
//! `${DEBUG?a:b}` is layer E's `?` operator, never a conditional — and only a placeholder
//! layer C owns (a lower-case or `_` start that is no env name, or an expression start) is a
//! conditional.

mod common;
use common::*;
use serde_json::json;
use strata_core::Layer;

const C: [Layer; 1] = [Layer::CONTEXT];

fn full(env: &[(&str, &str)], s: &str) -> Result<(serde_json::Value, Vec<String>), String> {
    render(&FULL, env, s)
}

#[test]
fn an_env_name_with_an_operator_stays_layer_e() {
    let s = "${DEBUG?'a':'b'}";
    // Layer C leaves it alone…
    assert_eq!(render(&C, &[], s), Ok((json!(s), vec![])));
    // …and layer E reads `?` as "error when unset", with the message `'a':'b'`.
    assert_eq!(
        full(&[], s),
        Err("env error at $ 0..16: required variable `DEBUG` is unset: 'a':'b' (hint: set `DEBUG` in the environment)".into())
    );
    assert_eq!(full(&[("DEBUG", "1")], s), Ok((json!("1"), vec![])));
    // `_` is an env name too.
    assert_eq!(render(&C, &[], "${_?1:2}"), Ok((json!("${_?1:2}"), vec![])));
    assert_eq!(full(&[("_", "u")], "${_?1:2}"), Ok((json!("u"), vec![])));
    // Every Compose operator after a name, as before.
    for s in [
        "${DEBUG:?x}",
        "${DEBUG-x}",
        "${DEBUG:-x}",
        "${DEBUG+x}",
        "${DEBUG:+x}",
    ] {
        assert_eq!(render(&C, &[], s), Ok((json!(s), vec![])), "{s}");
    }
}

#[test]
fn an_upper_case_name_with_spaces_is_nobodys() {
    // Not an env name followed by `}` or an operator, and not a layer-C start: the text stays.
    for s in [
        "${DEBUG ? 'a' : 'b'}",
        "${ DEBUG ? 1 : 2 }",
        "${Debug ? 1 : 2}",
    ] {
        assert_eq!(render(&C, &[], s), Ok((json!(s), vec![])), "{s}");
        assert_eq!(full(&[("DEBUG", "1")], s), Ok((json!(s), vec![])), "{s}");
    }
}

#[test]
fn a_layer_c_placeholder_gets_the_conditional() {
    for (s, want) in [
        ("${state.on ? 'y' : 'n'}", json!("y")),
        ("${state.on?'y':'n'}", json!("y")),
        ("${ state.off ? 'y' : 'n' }", json!("n")),
        ("${(state.n > 2) ? 1 : 2}", json!(1)),
        ("${!state.on ? 1 : 2}", json!(2)),
        ("x${state.on ? 1 : 2}", json!("x1")),
    ] {
        assert_eq!(full(&[("DEBUG", "1")], s), Ok((want, vec![])), "{s}");
    }
    // `_x` is no env name (lower-case after `_`): layer C's, here a missing path.
    assert_eq!(
        full(&[], "${_x?1:2}"),
        Ok((
            json!(""),
            vec!["context warning at $ 0..9: context path `_x?1:2` not found".to_string()]
        ))
    );
    // A conditional inside a layer-E word: layer C (stage 2) runs first.
    let s = "${DEBUG:-${state.on ? 'y' : 'n'}}";
    assert_eq!(render(&C, &[], s), Ok((json!("${DEBUG:-y}"), vec![])));
    assert_eq!(full(&[], s), Ok((json!("y"), vec![])));
    assert_eq!(full(&[("DEBUG", "1")], s), Ok((json!("1"), vec![])));
}

#[test]
fn a_leading_plus_starts_a_layer_c_expression_as_a_minus_does() {
    assert_eq!(full(&[], "${+state.n}"), Ok((json!(3), vec![])));
    assert_eq!(full(&[], "${-state.n}"), Ok((json!(-3), vec![])));
    assert_eq!(full(&[], "${ +5 }"), Ok((json!(5), vec![])));
    // An upper-case name after the sign is no path, for `+` as for `-`.
    for s in ["${+HOME}", "${-HOME}"] {
        assert_eq!(
            full(&[("HOME", "/h")], s),
            Err("context error at $ 3..4: expected a context path or a value (hint: paths start with a lower-case letter or `_` (`state.x`))".into()),
            "{s}"
        );
    }
}
