//! Structured conditions: every operator, the combinators, typed comparisons and load-time
//! errors.

use serde_json::{json, Value};
use strata_context::condition::Condition;

fn ctx() -> Value {
    json!({
        "result": {"exit_code": 0, "stdout": "ok: 3 files", "data": {"n": 3, "tags": ["a", "b"]}},
        "limits": {"turns": 4},
        "model": {"tier": "fast"},
        "directive": "demo",
        "nothing": null
    })
}

fn check(cond: Value) -> Result<bool, String> {
    Condition::parse(&cond)
        .and_then(|c| c.eval(&ctx()))
        .map_err(|e| e.message().to_string())
}

#[test]
fn every_operator() {
    let cases = [
        (
            json!({"path": "result.exit_code", "op": "eq", "value": 0}),
            true,
        ),
        (
            json!({"path": "result.exit_code", "op": "eq", "value": 0.0}),
            true,
        ),
        (
            json!({"path": "model.tier", "op": "ne", "value": "slow"}),
            true,
        ),
        (
            json!({"path": "result.data.n", "op": "gt", "value": 2}),
            true,
        ),
        (
            json!({"path": "result.data.n", "op": "gte", "value": 3}),
            true,
        ),
        (
            json!({"path": "result.data.n", "op": "lt", "value": 3}),
            false,
        ),
        (
            json!({"path": "result.data.n", "op": "lte", "value": 3.5}),
            true,
        ),
        (
            json!({"path": "model.tier", "op": "gt", "value": "a"}),
            true,
        ),
        (
            json!({"path": "model.tier", "op": "in", "value": ["fast", "slow"]}),
            true,
        ),
        (
            json!({"path": "result.data.n", "op": "in", "value": [1, 2]}),
            false,
        ),
        (
            json!({"path": "result.stdout", "op": "contains", "value": "3 files"}),
            true,
        ),
        (
            json!({"path": "result.data.tags", "op": "contains", "value": "b"}),
            true,
        ),
        (
            json!({"path": "result.data", "op": "contains", "value": "tags"}),
            true,
        ),
        (
            json!({"path": "result.stdout", "op": "regex", "value": "^ok: \\d+"}),
            true,
        ),
        (
            json!({"path": "result.data.tags[-1]", "op": "eq", "value": "b"}),
            true,
        ),
        (json!({"path": "result.exit_code", "op": "exists"}), true),
        (json!({"path": "result.missing", "op": "exists"}), false),
        (
            json!({"path": "result.missing", "op": "exists", "value": false}),
            true,
        ),
        (json!({"path": "nothing", "op": "exists"}), true),
        (json!({"path": "nothing", "op": "eq", "value": null}), true),
        (
            json!({"path": "result.missing", "op": "eq", "value": 1}),
            false,
        ),
        (
            json!({"path": "result.missing", "op": "ne", "value": 1}),
            true,
        ),
    ];
    for (cond, want) in cases {
        assert_eq!(check(cond.clone()), Ok(want), "{cond}");
    }
}

#[test]
fn combinators() {
    let t = json!({"path": "directive", "op": "eq", "value": "demo"});
    let f = json!({"path": "directive", "op": "eq", "value": "other"});
    assert_eq!(check(json!({"any": [f, t]})), Ok(true));
    assert_eq!(check(json!({"all": [t, f]})), Ok(false));
    assert_eq!(check(json!({"all": [t, t]})), Ok(true));
    assert_eq!(check(json!({"not": f})), Ok(true));
    assert_eq!(check(json!({"any": []})), Ok(false));
    assert_eq!(check(json!({"all": []})), Ok(true));
    assert_eq!(check(json!({"not": {"any": [f, {"not": t}]}})), Ok(true));
}

#[test]
fn ordering_different_types_is_an_error_not_false() {
    assert_eq!(
        check(json!({"path": "result.data.n", "op": "gt", "value": "3"})),
        Err("`result.data.n`: cannot order an integer and a string".to_string())
    );
    assert_eq!(
        check(json!({"path": "result.exit_code", "op": "contains", "value": 0})),
        Err(
            "`result.exit_code`: `contains` needs a string, an array or an object, found an integer"
                .to_string()
        )
    );
    assert_eq!(
        check(json!({"path": "result.data.n", "op": "regex", "value": "3"})),
        Err("`result.data.n`: `regex` needs a string, found an integer".to_string())
    );
}

#[test]
fn malformed_conditions_fail_when_parsed() {
    let cases = [
        (json!({"path": "a", "op": "equals", "value": 1}), "unknown operator `equals`; the operators are eq, ne, gt, gte, lt, lte, in, contains, regex, exists"),
        (json!({"path": "a", "op": "regex", "value": "("}), "bad regex `(`: regex parse error:\n    (\n    ^\nerror: unclosed group"),
        (json!({"path": "a", "op": "in", "value": 1}), "`in` takes an array `value`"),
        (json!({"path": "a", "op": "eq"}), "`eq` needs a `value`"),
        (json!({"op": "eq", "value": 1}), "a comparison needs `path` (a string such as `result.exit_code`)"),
        (json!({"path": "a", "value": 1}), "a comparison needs `op`"),
        (json!({"path": "a", "op": "eq", "value": 1, "when": 2}), "unknown condition key `when`; a comparison has `path`, `op` and `value`"),
        (json!({"any": {"path": "a"}}), "`any` takes an array of conditions"),
        (json!({"not": {"path": "a", "op": "eq", "value": 1}, "path": "b"}), "`not` must be the only key of its condition, found `not`, `path`"),
        (json!("a > 1"), "a condition is a map: {path, op, value}, {any: [...]}, {all: [...]} or {not: ...}"),
        (json!({"path": "a..b", "op": "eq", "value": 1}), "bad path `a..b`: expected a key or an index after `.`"),
        (json!({"path": "a", "op": "exists", "value": "yes"}), "`exists` takes `value: true` or `value: false`"),
        (json!({"all": [{"path": "a", "op": "nope", "value": 1}]}), "unknown operator `nope`; the operators are eq, ne, gt, gte, lt, lte, in, contains, regex, exists"),
    ];
    for (cond, message) in cases {
        assert_eq!(
            Condition::parse(&cond)
                .err()
                .map(|e| e.message().to_string())
                .as_deref(),
            Some(message),
            "{cond}"
        );
    }
}

#[test]
fn a_regex_is_bounded_as_matches_is() {
    let e =
        Condition::parse(&json!({"path": "a", "op": "regex", "value": "\\w{1000}"})).unwrap_err();
    assert_eq!(
        e.message(),
        "bad regex `\\w{1000}`: Compiled regex exceeds size limit of 1048576 bytes."
    );
    assert_eq!(
        check(json!({"path": "result.stdout", "op": "regex", "value": "^\\w+: \\d+"})),
        Ok(true)
    );
}
