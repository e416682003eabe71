//! The expression language of layer C as docs/layers.md ("Expressions") documents it: the
//! conditional `? :`, unary `+`, `type`, `matches`, the aggregates `sum`, `min`, `max` and
//! `join`, what RyeOS refuses and strata refuses too, insertion order, and the did-you-means
//! for other template languages' spellings. Every case has its exact value or message.

mod common;
use common::*;
use serde_json::json;
use strata_context::{eval_bool, parse_expr, When, MAX_PATTERN_BYTES};
use strata_core::Layer;

const C: [Layer; 1] = [Layer::CONTEXT];

fn ok(cases: &[(&str, serde_json::Value)]) {
    for (src, want) in cases {
        assert_eq!(ev(src), Ok(want.clone()), "{src}");
    }
}

fn errs(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        assert_eq!(ev(src), Err(want.to_string()), "{src}");
    }
}

fn compile_errs(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        assert_eq!(compile_err(src), *want, "{src}");
    }
}

#[test]
fn the_conditional_selects_a_branch() {
    ok(&[
        ("true ? 1 : 2", json!(1)),
        ("false ? 1 : 2", json!(2)),
        ("state.on ? 'y' : 'n'", json!("y")),
        ("state.n > 2 ? 'big' : 'small'", json!("big")),
        // Right-associative: `a ? b : (c ? d : e)`.
        ("false ? 1 : true ? 2 : 3", json!(2)),
        ("state.off ? 1 : state.off ? 2 : 3", json!(3)),
        // The middle branch may itself be a conditional.
        ("true ? false ? 1 : 2 : 3", json!(2)),
        // Loosest of all: `??`, `||`, comparisons and arithmetic bind tighter.
        ("state.nil ?? false ? 1 : 2", json!(2)),
        ("state.on || false ? 1 + 1 : 0", json!(2)),
        ("(true ? 1 : 2) + 1", json!(2)),
        (
            "[true ? 'a' : 'b', {\"k\": false ? 1 : 2}]",
            json!(["a", {"k": 2}]),
        ),
        ("length(state.on ? state.items : [])", json!(3)),
        // Only the branch taken is evaluated: a missing path elsewhere is no miss.
        ("state.n < 2 ? state.missing : 0", json!(0)),
        ("state.n > 2 ? 0 : 1 / 0", json!(0)),
        ("length(state.empty) > 0 ? max(state.empty) : 0", json!(0)),
    ]);
    errs(&[
        (
            "state.n > 2 ? state.missing : 0",
            "undefined: context path `state.missing` not found",
        ),
        (
            "state.n ? 1 : 2",
            "type: the condition of `? :` needs a boolean, got an integer",
        ),
        (
            "state.missing ? 1 : 2",
            "undefined: context path `state.missing` not found",
        ),
    ]);
}

#[test]
fn conditional_errors_visible_in_the_text_fail_at_compile_time() {
    compile_errs(&[
        ("true ? 1", "syntax at 8: expected `:`"),
        (
            "true ? 1 :",
            "syntax at 10: expected a context path or a value",
        ),
        (
            "1 ? 2 : 3",
            "type at 2: the condition of `? :` needs a boolean, got a number",
        ),
        (
            "state.a ? 1 : 'x' ? 2 : 3",
            "type at 18: the condition of `? :` needs a boolean, got a string",
        ),
        // The branches agree on a type: it is known.
        (
            "(true ? 1 : 2) + 'a'",
            "type at 15: `+` cannot combine a number and a string",
        ),
    ]);
    // Branches of different types: known only at run time.
    assert_eq!(ev("(true ? 1 : 'a') + 1"), Ok(json!(2)));
}

#[test]
fn conditions_of_graphs_use_the_conditional_too() {
    let root = json!({"state": {"n": 3, "fast": true}});
    let expr = parse_expr("state.fast ? state.n > 1 : state.n > 5", 0).unwrap();
    assert_eq!(eval_bool(&expr, &root), Ok(true));
    let when = When::parse(&json!("state.fast ? false : state.gone")).unwrap();
    assert_eq!(when.eval(&root), Ok(false));
    assert_eq!(when.paths().len(), 2);
}

#[test]
fn unary_plus_takes_a_number_unchanged() {
    ok(&[
        ("+state.n", json!(3)),
        ("+state.price", json!(2.5)),
        ("+5", json!(5)),
        ("+-5", json!(-5)),
        ("-+5", json!(-5)),
        ("1 + +2", json!(3)),
        ("+9223372036854775807", json!(i64::MAX)),
    ]);
    errs(&[("+state.name", "type: `+` needs a number, got a string")]);
    compile_errs(&[
        ("+'x'", "type at 0: `+` needs a number, got a string"),
        ("+true", "type at 0: `+` needs a number, got a boolean"),
    ]);
}

#[test]
fn type_names_values_as_json_schema_does() {
    ok(&[
        ("type(1)", json!("integer")),
        ("type(-3)", json!("integer")),
        // A whole number is an integer, written `1.0` or not (as every message of strata says).
        ("type(1.0)", json!("integer")),
        ("type(state.price)", json!("number")),
        ("type('x')", json!("string")),
        ("type(true)", json!("boolean")),
        ("type(null)", json!("null")),
        ("type(state.nil)", json!("null")),
        ("type(state.items)", json!("array")),
        ("type(state.obj)", json!("object")),
        ("type(state.gone ?? 0)", json!("integer")),
        ("type(state.n) == 'integer' ? 'int' : 'other'", json!("int")),
    ]);
    errs(&[(
        "type(state.gone)",
        "undefined: context path `state.gone` not found",
    )]);
    compile_errs(&[("type(1, 2)", "syntax at 0: `type` takes 1 argument, got 2")]);
}

#[test]
fn matches_searches_with_a_bounded_regular_expression() {
    ok(&[
        ("matches(state.text, state.pattern)", json!(true)),
        ("matches(state.text, '^[a-z]+\\\\d+$')", json!(true)),
        // A search, not a whole-string match: anchor with `^…$`.
        ("matches(state.text, 'c1')", json!(true)),
        ("matches(state.text, '^c1')", json!(false)),
        ("matches('Ünïcode', '^\\\\w+$')", json!(true)),
        ("matches('', '')", json!(true)),
    ]);
    errs(&[
        (
            "matches(state.text, state.bad)",
            "type: `matches`: invalid regular expression `(`: unclosed group",
        ),
        (
            "matches(state.n, 'x')",
            "type: `matches` needs a string, got an integer",
        ),
        (
            "matches('x', state.n)",
            "type: `matches` needs a string as its pattern, got an integer",
        ),
    ]);
    compile_errs(&[
        (
            "matches('x', '(')",
            "invalid at 0: `matches`: invalid regular expression `(`: unclosed group",
        ),
        (
            "matches('x', 'a{2,1}')",
            "invalid at 0: `matches`: invalid regular expression `a{2,1}`: invalid repetition count range, the start must be <= the end",
        ),
        (
            "matches('x', '(?=a)')",
            "invalid at 0: `matches`: invalid regular expression `(?=a)`: look-around, including look-ahead and look-behind, is not supported",
        ),
        (
            "matches('a', '\\\\w{1000}')",
            "invalid at 0: `matches`: the regular expression `\\w{1000}` is too big once compiled (the limit is 1048576 bytes)",
        ),
        (
            "matches(1, 'x')",
            "type at 0: `matches` needs a string, got a number",
        ),
        (
            "matches('x', 1)",
            "type at 0: `matches` needs a string as its pattern, got a number",
        ),
        (
            "matches('a')",
            "syntax at 0: `matches` takes 2 arguments, got 1",
        ),
    ]);
    let long = format!("matches('x', '{}')", "a".repeat(MAX_PATTERN_BYTES + 1));
    assert_eq!(
        compile_err(&long),
        "invalid at 0: `matches`: the pattern is 4097 bytes; at most 4096 are allowed"
    );
    let long = format!("matches('x', '{}')", "a".repeat(5000));
    assert_eq!(
        compile_err(&long),
        "invalid at 0: `matches`: the pattern is 5000 bytes; at most 4096 are allowed"
    );
    let e = parse_expr("matches('x', '(')", 2).unwrap_err();
    assert_eq!(
        e.hint(),
        Some("`matches` takes a regular expression of the Rust `regex` crate (no look-around, no backreferences)")
    );
    // The longest pattern allowed, from data, runs.
    let at_limit = format!("matches('x', '{}')", "x?".repeat(MAX_PATTERN_BYTES / 2));
    assert_eq!(ev(&at_limit), Ok(json!(true)));
}

#[test]
fn sum_adds_with_the_arithmetic_of_plus() {
    ok(&[
        ("sum(state.nums)", json!(6)),
        ("sum([])", json!(0)),
        ("sum(state.floats)", json!(3.5)),
        ("sum([0.5, 0.5])", json!(1.0)),
        // Integers stay integers through the whole JSON range, as `+` does.
        ("sum(state.big)", json!(9223372036854775808u64)),
        ("sum([-9223372036854775807, -1])", json!(i64::MIN)),
    ]);
    errs(&[
        (
            "sum([state.max_i, state.max_i, state.max_i])",
            "type: `sum`: integer overflow",
        ),
        // Checked at every step, as `-9223372036854775808 + -1 + 1` is.
        (
            "sum([-9223372036854775808, -1, 1])",
            "type: `sum`: integer overflow",
        ),
        (
            "sum([1e308, 1e308])",
            "type: `sum`: the total is not a finite number",
        ),
        (
            "sum(state.mixed)",
            "type: `sum` needs an array of numbers, got a string at [1]",
        ),
        (
            "sum([1, null])",
            "type: `sum` needs an array of numbers, got a null at [1]",
        ),
        ("sum(state.n)", "type: `sum` needs an array, got an integer"),
    ]);
    compile_errs(&[
        ("sum('x')", "type at 0: `sum` needs an array, got a string"),
        ("sum()", "syntax at 0: `sum` takes 1 argument, got 0"),
    ]);
}

#[test]
fn min_and_max_order_numbers_or_strings() {
    ok(&[
        ("min(state.nums)", json!(1)),
        ("max(state.nums)", json!(3)),
        ("min(state.floats)", json!(1.5)),
        ("max([1, 2.5, 2])", json!(2.5)),
        ("min(state.words)", json!("a")),
        ("max(state.words)", json!("c")),
        ("max(['B', 'a'])", json!("a")),
        // The first of equal items, as written.
        ("min([1, 1.0])", json!(1)),
        ("min([1.0, 1])", json!(1.0)),
        ("max([7])", json!(7)),
        // Numbers by value, exactly: 2^53 + 1 is greater than the float 2^53.
        (
            "max([9007199254740993, 9007199254740992.0])",
            json!(9007199254740993u64),
        ),
        (
            "min([9007199254740993, 9007199254740992.0])",
            json!(9007199254740992.0),
        ),
    ]);
    errs(&[
        ("min([])", "type: `min` of an empty array has no value"),
        (
            "max(state.empty)",
            "type: `max` of an empty array has no value",
        ),
        // An error, not a missing value: guard with `length(a) > 0 ? max(a) : 0`.
        (
            "max(state.empty) ?? 0",
            "type: `max` of an empty array has no value",
        ),
        (
            "max(state.mixed)",
            "type: `max`: cannot order a string and an integer at [1]",
        ),
        (
            "max([true])",
            "type: `max` needs an array of numbers or of strings, got a boolean at [0]",
        ),
        (
            "min([1, null])",
            "type: `min` needs an array of numbers or of strings, got a null at [1]",
        ),
        (
            "min(state.obj)",
            "type: `min` needs an array, got an object",
        ),
    ]);
    compile_errs(&[("min({})", "type at 0: `min` needs an array, got an object")]);
}

#[test]
fn join_joins_the_text_of_scalars() {
    ok(&[
        ("join(state.items, ', ')", json!("a, b, c")),
        ("join([], ',')", json!("")),
        ("join(['only'], ',')", json!("only")),
        (
            "join([1, true, 'x', 2.5, 10000000], '-')",
            json!("1-true-x-2.5-10000000"),
        ),
        ("join(state.words, '')", json!("bac")),
    ]);
    errs(&[
        (
            "join([null], ',')",
            "type: `join` needs an array of strings, numbers or booleans, got a null at [0]",
        ),
        (
            "join(state.nested, ',')",
            "type: `join` needs an array of strings, numbers or booleans, got an array at [0]",
        ),
        (
            "join(state.items, state.n)",
            "type: `join` needs a string as its separator, got an integer",
        ),
        (
            "join(state.name, ',')",
            "type: `join` needs an array, got a string",
        ),
    ]);
    compile_errs(&[
        (
            "join(state.a, 1)",
            "type at 0: `join` needs a string as its separator, got a number",
        ),
        (
            "join('x', ',')",
            "type at 0: `join` needs an array, got a string",
        ),
        ("join([])", "syntax at 0: `join` takes 2 arguments, got 1"),
    ]);
}

#[test]
fn join_refuses_text_beyond_its_limit() {
    // 2^12 items and a separator of 2^12 bytes: 16 MiB of separators alone.
    let src = format!(
        "join(from_json('[{}]'), '{}')",
        vec!["1"; 4097].join(","),
        "s".repeat(4096)
    );
    assert_eq!(
        ev(&src),
        Err("type: `join`: the text would be 16781313 bytes; at most 16777216 are allowed".into())
    );
}

#[test]
fn a_string_key_never_indexes_an_array() {
    ok(&[
        ("state.items[0]", json!("a")),
        ("state.items.0", json!("a")),
        ("state.items[-1]", json!("c")),
        // A key that is no index is missing, as before.
        ("state.items['x'] ?? 1", json!(1)),
    ]);
    errs(&[
        (
            "state.items['0']",
            "type: cannot index an array with the string \"0\": write `state.items[0]`",
        ),
        (
            "state.items[\"-1\"]",
            "type: cannot index an array with the string \"-1\": write `state.items[-1]`",
        ),
        (
            "state.nested[0]['0']",
            "type: cannot index an array with the string \"0\": write `state.nested[0][0]`",
        ),
        // Refused, not missing: `??` and `exists` do not hide it.
        (
            "state.items['0'] ?? 'x'",
            "type: cannot index an array with the string \"0\": write `state.items[0]`",
        ),
        (
            "exists(state.items['0'])",
            "type: cannot index an array with the string \"0\": write `state.items[0]`",
        ),
    ]);
    let root = json!({"inputs": {"list": [1, 2]}, "obj": {"0": "zero"}});
    let ev_in = |s: &str| {
        strata_context::eval_value(&parse_expr(s, 0).unwrap(), &root)
            .map_err(|e| e.message().to_string())
    };
    assert_eq!(ev_in("obj['0']"), Ok(json!("zero")));
    assert_eq!(ev_in("obj[0]"), Ok(json!("zero")));
    assert_eq!(
        ev_in("inputs.list['1']"),
        Err("cannot index an array with the string \"1\": write `inputs.list[1]`".into())
    );
}

#[test]
fn number_refuses_leading_zeros() {
    ok(&[
        ("number('0')", json!(0)),
        ("number('-0')", json!(0)),
        ("number('0.5')", json!(0.5)),
        ("number('0e3')", json!(0.0)),
        ("number('10')", json!(10)),
        ("number(' 7 ')", json!(7)),
        // Integers beyond i64 stay integers while u64 holds them.
        (
            "number('9223372036854775808')",
            json!(9223372036854775808u64),
        ),
    ]);
    errs(&[
        (
            "number('01')",
            "type: `number`: `01` is not a number (leading zeros are not allowed)",
        ),
        (
            "number('-007')",
            "type: `number`: `-007` is not a number (leading zeros are not allowed)",
        ),
        (
            "number('00.5')",
            "type: `number`: `00.5` is not a number (leading zeros are not allowed)",
        ),
        (
            "number(state.s01)",
            "type: `number`: `01` is not a number (leading zeros are not allowed)",
        ),
        ("number('1x')", "type: `number`: `1x` is not a number"),
    ]);
    // A literal with a leading zero was never a number.
    compile_errs(&[("01", "syntax at 0: malformed number")]);
}

#[test]
fn object_literals_refuse_duplicate_keys() {
    compile_errs(&[
        (
            "{'a': 1, 'a': 2}",
            "syntax at 9: duplicate key `a` in an object literal",
        ),
        (
            "{a: 1, b: {a: 2}, \"b\": 3}",
            "syntax at 18: duplicate key `b` in an object literal",
        ),
    ]);
    ok(&[("{a: 1, b: {a: 2}}", json!({"a": 1, "b": {"a": 2}}))]);
    let e = parse_expr("{a: 1, a: 2}", 0).unwrap_err();
    assert_eq!(e.hint(), Some("each key may appear once in `{…}`"));
}

#[test]
fn keys_json_and_string_keep_insertion_order() {
    // RyeOS sorts keys; strata keeps the order of the data (docs/layers.md).
    ok(&[
        ("keys(state.obj)", json!(["z", "a"])),
        ("json(state.obj)", json!("{\"z\":1,\"a\":2}")),
        ("string(state.obj)", json!("{\"z\":1,\"a\":2}")),
        (
            "json({z: 1, a: {y: 2, x: 3}})",
            json!("{\"z\":1,\"a\":{\"y\":2,\"x\":3}}"),
        ),
    ]);
}

#[test]
fn other_spellings_get_a_did_you_mean() {
    compile_errs(&[
        (
            "len(state.items)",
            "syntax at 0: unknown function `len`; did you mean `length`?",
        ),
        (
            "lenght(state.items)",
            "syntax at 0: unknown function `lenght`; did you mean `length`?",
        ),
        ("typeof(x)", "syntax at 0: unknown function `typeof`; did you mean `type`?"),
        ("int('1')", "syntax at 0: unknown function `int`; did you mean `number`?"),
        ("tojson(x)", "syntax at 0: unknown function `tojson`; did you mean `json`?"),
        ("joinn(x, ',')", "syntax at 0: unknown function `joinn`; did you mean `join`?"),
        (
            "default(a, 1)",
            "syntax at 0: unknown function `default`; did you mean the fallback `a ?? b`?",
        ),
        ("foo(1)", "syntax at 0: unknown function `foo`"),
        // `a || b` is RyeOS's and JavaScript's fallback.
        (
            "state.a || 'b'",
            "type at 8: `||` cannot combine a value and a string; did you mean `??`?",
        ),
        (
            "state.a && 'b'",
            "type at 8: `&&` cannot combine a value and a string",
        ),
        // Filters (`x | f`) become calls.
        (
            "state.name | upper",
            "syntax at 11: unexpected `|`: layer C has no filters; did you mean `upper(state.name)`?",
        ),
        (
            "x|length",
            "syntax at 1: unexpected `|`: layer C has no filters; did you mean `length(x)`?",
        ),
        (
            "x | tojson",
            "syntax at 2: unexpected `|`: layer C has no filters; did you mean `json(x)`?",
        ),
        (
            "state.items|join(', ')",
            "syntax at 11: unexpected `|`: layer C has no filters; did you mean `join(state.items, ', ')`?",
        ),
        (
            "state.x | default('d')",
            "syntax at 8: unexpected `|`: layer C has no filters; did you mean `state.x ?? 'd'`?",
        ),
        (
            "(state.x | upper)",
            "syntax at 9: unexpected `|`: layer C has no filters; did you mean `upper(state.x)`?",
        ),
        (
            "a ? b | lower : c",
            "syntax at 6: unexpected `|`: layer C has no filters; did you mean `lower(b)`?",
        ),
        (
            "state.x | bogus",
            "syntax at 8: unexpected `|`: layer C has no filters, and no function `bogus`",
        ),
        ("state.x | 'a'", "syntax at 8: unexpected `|` in context placeholder"),
    ]);
    let e = parse_expr("len(x)", 0).unwrap_err();
    assert_eq!(
        e.hint(),
        Some("the functions are length, exists, contains, keys, lower, upper, json, from_json, number, string, type, matches, sum, min, max, join")
    );
    // At run time, `||` on a value that is not a boolean.
    errs(&[(
        "state.name || true",
        "type: || needs a boolean, got a string; did you mean `??`?",
    )]);
}

#[test]
fn rendered_placeholders_use_the_new_forms() {
    let one = |s: &str| render(&C, &[], s).map(|(v, w)| (v, w.len()));
    assert_eq!(one("${state.on ? 1 : 2}"), Ok((json!(1), 0)));
    assert_eq!(one("n=${state.on ? state.n : 0}"), Ok((json!("n=3"), 0)));
    assert_eq!(
        one("${state.off ? [1] : {\"a\": state.n}}"),
        Ok((json!({"a": 3}), 0))
    );
    assert_eq!(one("${+state.n}"), Ok((json!(3), 0)));
    assert_eq!(one("${ +5 }"), Ok((json!(5), 0)));
    assert_eq!(one("${type(state.price)}"), Ok((json!("number"), 0)));
    assert_eq!(one("${join(state.items, '+')}"), Ok((json!("a+b+c"), 0)));
    assert_eq!(one("${sum(state.nums) / 2}"), Ok((json!(3), 0)));
    assert_eq!(
        render(&C, &[], "${state.items['0']}"),
        Err("context error at $ 0..19: `state.items['0']`: cannot index an array with the string \"0\": write `state.items[0]` (hint: types are strict: convert with number(…) or string(…))".into())
    );
    assert_eq!(
        render(&C, &[], "${state.name | upper}"),
        Err("context error at $ 13..14: unexpected `|`: layer C has no filters; did you mean `upper(state.name)`? (hint: layer C has no filters: call the function on the value, `f(x)`)".into())
    );
    assert_eq!(
        render(&C, &[], "${(-9223372036854775808 - 1)}"),
        Err("context error at $ 0..29: `(-9223372036854775808 - 1)`: integer overflow (hint: types are strict: convert with number(…) or string(…))".into())
    );
}

#[test]
fn a_javascript_length_gets_a_did_you_mean() {
    for (s, want) in [
        ("${state.items.length}", "context warning at $ 0..21: context path `state.items.length` not found; did you mean `length(state.items)`?"),
        ("${state.name.len}", "context warning at $ 0..17: context path `state.name.len` not found; did you mean `length(state.name)`?"),
        ("${state.obj.size}", "context warning at $ 0..17: context path `state.obj.size` not found; did you mean `length(state.obj)`?"),
        // A misspelt key is the likelier mistake.
        ("${state.objj.size}", "context warning at $ 0..18: context path `state.objj.size` not found; did you mean `state.obj`?"),
    ] {
        assert_eq!(render(&C, &[], s), Ok((json!(""), vec![want.to_string()])), "{s}");
    }
}

#[test]
fn the_examples_of_the_docs() {
    ok(&[
        ("state.x ?? false ? 1 : 2", json!(2)),
        ("state.n > 2 ? 'big' : 'small'", json!("big")),
        ("7 / 2", json!(3)),
        ("number('42')", json!(42)),
        ("number('-1.5')", json!(-1.5)),
        ("number('1e3')", json!(1000.0)),
        ("type(2.5)", json!("number")),
        ("join([1, true, 'x'], '-')", json!("1-true-x")),
        ("length(state.empty) > 0 ? min(state.empty) : 0", json!(0)),
        ("keys({z: 1, a: 2})", json!(["z", "a"])),
        ("json({z: 1, a: 2})", json!("{\"z\":1,\"a\":2}")),
        ("string({z: 1, a: 2})", json!("{\"z\":1,\"a\":2}")),
    ]);
    compile_errs(&[
        (
            "size(x)",
            "syntax at 0: unknown function `size`; did you mean `length`?",
        ),
        (
            "matches('aa', '(a)\\\\1')",
            "invalid at 0: `matches`: invalid regular expression `(a)\\1`: backreferences are not supported",
        ),
    ]);
    errs(&[(
        "state.n > '3'",
        "type: `>`: cannot order an integer and a string",
    )]);
    assert_eq!(
        render(&C, &[], "${ {'a': 1, 'a': 2} }"),
        Err("context error at $ 12..13: duplicate key `a` in an object literal (hint: each key may appear once in `{…}`)".into())
    );
    assert_eq!(
        render(&C, &[], "${matches(state.text, '(')}"),
        Err("context error at $ 2..3: `matches`: invalid regular expression `(`: unclosed group (hint: `matches` takes a regular expression of the Rust `regex` crate (no look-around, no backreferences))".into())
    );
    assert_eq!(
        render(&C, &[], "${state.items.count}"),
        Ok((
            json!(""),
            vec!["context warning at $ 0..20: context path `state.items.count` not found; did you mean `length(state.items)`?".to_string()]
        ))
    );
}
