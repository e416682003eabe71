//! The one type vocabulary of strata's messages: JSON Schema's (`array`, `object`,
//! `integer`, `number`, `string`, `boolean`, `null`), so that an error about a value's type
//! names it as the tool's parameter schema would.

use serde_json::Value;

/// The JSON Schema type name of a value: `null`, `boolean`, `integer` (a whole number,
/// `3` or `3.0`), `number`, `string`, `array` or `object`.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A type name with its article: `an integer`, `a string`, `an array`.
pub fn a_or_an(t: &str) -> String {
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {t}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_json_schema_types() {
        let cases = [
            (json!(null), "null"),
            (json!(true), "boolean"),
            (json!(3), "integer"),
            (json!(-3), "integer"),
            (json!(3.0), "integer"),
            (json!(0.5), "number"),
            (json!("x"), "string"),
            (json!([1]), "array"),
            (json!({"a": 1}), "object"),
        ];
        for (value, want) in cases {
            assert_eq!(type_name(&value), want, "{value}");
        }
    }

    #[test]
    fn articles_follow_the_sound() {
        assert_eq!(a_or_an("integer"), "an integer");
        assert_eq!(a_or_an("array"), "an array");
        assert_eq!(a_or_an("object"), "an object");
        assert_eq!(a_or_an("string"), "a string");
        assert_eq!(a_or_an("null"), "a null");
    }
}
