use serde_json::Value;

/// Appends the text form of a value: strings as they are, integers in decimal (never through a
/// float), floats in their shortest round-trip form, booleans as `true`/`false`, null as
/// nothing, arrays and objects as compact JSON.
pub fn push_value_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            use std::fmt::Write;
            let _ = write!(out, "{n}");
        }
        Value::Array(_) | Value::Object(_) => {
            out.push_str(&serde_json::to_string(value).unwrap_or_default());
        }
    }
}

/// The text form of a value (see [`push_value_text`]).
pub fn value_to_text(value: &Value) -> String {
    let mut out = String::new();
    push_value_text(value, &mut out);
    out
}
