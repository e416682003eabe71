//! Regression: the literal `-9223372036854775808` (i64::MIN) is an integer, so subtracting from
//! it is the overflow error docs/layers.md promises, never a float.

use serde_json::json;
use strata_context::{eval_value, parse_expr};

fn eval(src: &str) -> Result<serde_json::Value, String> {
    let expr = parse_expr(src, 0).map_err(|e| e.message().to_string())?;
    eval_value(&expr, &json!({})).map_err(|e| e.message().to_string())
}

#[test]
fn i64_min_literal_stays_an_integer() {
    assert_eq!(eval("-9223372036854775808"), Ok(json!(i64::MIN)));
    assert_eq!(eval("(-9223372036854775808)"), Ok(json!(i64::MIN)));
    assert_eq!(eval("-(9223372036854775808)"), Ok(json!(i64::MIN)));
    assert_eq!(eval("-9223372036854775808 + 1"), Ok(json!(i64::MIN + 1)));
}

#[test]
fn subtracting_from_i64_min_is_the_overflow_error() {
    assert_eq!(
        eval("(-9223372036854775808 - 1)"),
        Err("integer overflow".to_string())
    );
    assert_eq!(
        eval("-9223372036854775808 * -1"),
        Ok(json!(9223372036854775808u64))
    );
    assert_eq!(
        eval("-9223372036854775808 * 2"),
        Err("integer overflow".to_string())
    );
}
