//! SPEC §1, layer E: every Compose operator, lazy nested words, balanced braces, escapes,
//! what the layer ignores, missing variables and unclosed placeholders.

mod common;
use common::*;
use serde_json::json;

fn env() -> Case {
    case()
        .env("SET", "value")
        .env("EMPTY", "")
        .env("HOME", "/users/u")
}

#[test]
fn plain_variable() {
    assert_eq!(env().one(&[E], "${SET}"), json!("value"));
    assert_eq!(
        env().one(&[E], "a ${HOME}/b ${SET}"),
        json!("a /users/u/b value")
    );
    assert_eq!(env().one(&[E], "${EMPTY}"), json!(""));
}

#[test]
fn colon_dash_uses_word_when_unset_or_empty() {
    let c = env();
    assert_eq!(c.one(&[E], "${SET:-w}"), json!("value"));
    assert_eq!(c.one(&[E], "${EMPTY:-w}"), json!("w"));
    assert_eq!(c.one(&[E], "${UNSET:-w}"), json!("w"));
}

#[test]
fn dash_uses_word_only_when_unset() {
    let c = env();
    assert_eq!(c.one(&[E], "${SET-w}"), json!("value"));
    assert_eq!(c.one(&[E], "${EMPTY-w}"), json!(""));
    assert_eq!(c.one(&[E], "${UNSET-w}"), json!("w"));
}

#[test]
fn plus_operators_use_word_when_set() {
    let c = env();
    assert_eq!(c.one(&[E], "${SET:+w}"), json!("w"));
    assert_eq!(c.one(&[E], "${EMPTY:+w}"), json!(""));
    assert_eq!(c.one(&[E], "${UNSET:+w}"), json!(""));
    assert_eq!(c.one(&[E], "${SET+w}"), json!("w"));
    assert_eq!(c.one(&[E], "${EMPTY+w}"), json!("w"));
    assert_eq!(c.one(&[E], "${UNSET+w}"), json!(""));
}

#[test]
fn question_operators_fail_naming_the_variable() {
    let c = env();
    assert_eq!(c.one(&[E], "${SET:?needed}"), json!("value"));
    assert_eq!(c.one(&[E], "${EMPTY?needed}"), json!(""));
    assert_eq!(
        c.err(&[E], "x ${EMPTY:?set it first}"),
        "env error at $ 2..24: required variable `EMPTY` is unset or empty: set it first (hint: set `EMPTY` in the environment)"
    );
    assert_eq!(
        c.err(&[E], "${UNSET?}"),
        "env error at $ 0..9: required variable `UNSET` is unset (hint: set `UNSET` in the environment)"
    );
}

#[test]
fn words_are_lazy_nested_templates() {
    let c = env();
    assert_eq!(c.one(&[E], "${UNSET:-${SET}}"), json!("value"));
    assert_eq!(
        c.one(&[E], "${UNSET:-${ALSO:-deep ${HOME}}}"),
        json!("deep /users/u")
    );
    // The word of an unused operator is never evaluated: its error cannot fire.
    assert_eq!(c.one(&[E], "${SET:-${UNSET:?boom}}"), json!("value"));
    assert_eq!(c.one(&[E], "${UNSET:+${UNSET:?boom}}"), json!(""));
}

#[test]
fn words_end_at_the_first_balanced_brace() {
    let c = env();
    assert_eq!(c.one(&[E], r#"${J:-{"a":1}}"#), json!(r#"{"a":1}"#));
    assert_eq!(
        c.one(&[E], r#"${J:-{"a":{"b":[1]}}} tail"#),
        json!(r#"{"a":{"b":[1]}} tail"#)
    );
    assert_eq!(c.one(&[E], "${J:-a}b}"), json!("ab}"));
}

#[test]
fn earliest_operator_spelling_wins() {
    let c = env();
    assert_eq!(c.one(&[E], "${UNSET-a:-b}"), json!("a:-b"));
    assert_eq!(c.one(&[E], "${UNSET:-a-b}"), json!("a-b"));
    assert_eq!(c.one(&[E], "${SET:+x:?y}"), json!("x:?y"));
}

#[test]
fn dollar_dollar_brace_is_a_literal() {
    let c = env();
    assert_eq!(c.one(&[E], "$${HOME}"), json!("${HOME}"));
    assert_eq!(
        c.one(&[E], "cost: $${X:-1} and ${SET}"),
        json!("cost: ${X:-1} and value")
    );
}

#[test]
fn ignores_what_it_does_not_own() {
    let c = env();
    for s in [
        "${lower}",
        "${a.b}",
        "$HOME",
        "${}",
        "${9X}",
        "${Mixed}",
        "${ HOME }",
        "{HOME}",
        "$",
        "${HOME.x}",
    ] {
        assert_eq!(c.one(&[E], s), json!(s), "{s}");
        assert!(c.warnings(&[E], s).is_empty(), "{s}");
    }
}

#[test]
fn underscore_names_are_env_names() {
    let c = case().env("_X1", "one").env("_", "u");
    assert_eq!(c.one(&[E], "${_X1}${_}"), json!("oneu"));
}

#[test]
fn result_is_always_a_string() {
    let c = case().env("N", "5");
    assert_eq!(c.one(&[E], "${N}"), json!("5"));
}

#[test]
fn unset_variable_warns_without_its_value_and_strict_fails() {
    let c = env();
    assert_eq!(c.one(&[E], "a${UNSET}b"), json!("ab"));
    assert_eq!(
        c.warnings(&[E], "a${UNSET}b"),
        ["env warning at $ 1..9: environment variable `UNSET` is not set"]
    );
    assert_eq!(
        env().strict().err(&[E], "a${UNSET}b"),
        "env error at $ 1..9: environment variable `UNSET` is not set (hint: strict mode turns missing values into errors)"
    );
}

#[test]
fn unclosed_placeholders_fail_with_position() {
    let c = env();
    assert_eq!(
        c.err(&[E], "run ${NAME"),
        "env error at $ 4..10: unclosed `${NAME`: no matching `}` (hint: close it as `${NAME}`, or write `$${` for a literal `${`)"
    );
    assert_eq!(
        c.err(&[E], "run ${NAME:-x"),
        "env error at $ 4..13: unclosed `${NAME`: no matching `}` (hint: close it as `${NAME}`, or write `$${` for a literal `${`)"
    );
    assert_eq!(
        c.err(&[E], "${A:-{b}"),
        "env error at $ 0..8: unclosed `${A`: no matching `}` (hint: close it as `${A}`, or write `$${` for a literal `${`)"
    );
}

#[test]
fn secret_values_are_redacted_in_the_redacted_view() {
    let c = case().secret("TOKEN", "s3cr3t");
    let out = c
        .render(&[E], &json!({"auth": "Bearer ${TOKEN}", "t": "${TOKEN}"}))
        .unwrap();
    assert_eq!(out.value, json!({"auth": "Bearer s3cr3t", "t": "s3cr3t"}));
    assert_eq!(out.redacted, json!({"auth": "Bearer ***", "t": "***"}));
}

#[test]
fn a_secret_in_an_error_message_word_is_redacted() {
    let c = case().secret("TOKEN", "s3cr3t");
    let e = c.err(&[E], "${MISSING:?token was ${TOKEN}}");
    assert_eq!(
        e,
        "env error at $ 0..30: required variable `MISSING` is unset or empty: token was *** (hint: set `MISSING` in the environment)"
    );
}
