use serde_json::{Number, Value};

/// A JSON value as the text rule ([`push_value_text`]) tells its cases apart.
pub enum TextForm<'a> {
    /// A string: its text as it is.
    Str(&'a str),
    /// Null: nothing.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number: decimal for integers, the shortest round-trip form for floats.
    Number(&'a Number),
    /// A number known to be in that form already (as the readers of documents give every
    /// number, [`crate::number_from_text`]): written as it is, with no float parsed again.
    NumberText(&'a str),
    /// An integer a reader holds as a machine integer (building no JSON number): its digits.
    Integer(i128),
    /// An array or object: compact JSON.
    Json,
}

/// A JSON value the text rule applies to: [`Value`], or a value read without building one
/// (written as compact JSON by its `Serialize`).
pub trait AsText: serde::Serialize {
    /// Which case of the text rule the value is.
    fn text_form(&self) -> TextForm<'_>;
}

impl AsText for Value {
    fn text_form(&self) -> TextForm<'_> {
        match self {
            Value::String(s) => TextForm::Str(s),
            Value::Null => TextForm::Null,
            Value::Bool(b) => TextForm::Bool(*b),
            Value::Number(n) => TextForm::Number(n),
            Value::Array(_) | Value::Object(_) => TextForm::Json,
        }
    }
}

/// Appends the text form of a value: strings as they are, integers in decimal (never through a
/// float, whatever their size), floats in their shortest round-trip form, booleans as
/// `true`/`false`, null as nothing, arrays and objects as compact JSON.
pub fn push_value_text<T: AsText + ?Sized>(value: &T, out: &mut String) {
    match value.text_form() {
        TextForm::Str(s) => out.push_str(s),
        TextForm::Null => {}
        TextForm::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        TextForm::Number(n) => crate::push_number(n, out),
        TextForm::NumberText(text) => out.push_str(text),
        TextForm::Integer(n) => {
            use std::fmt::Write;
            let _ = write!(out, "{n}");
        }
        TextForm::Json => {
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

/// The length in bytes of the text form of `value` (see [`push_value_text`]), counted without
/// building it; `None` as soon as it passes `budget` (the count stops there, so a huge value
/// costs no more than the budget).
pub fn value_text_len<T: AsText + ?Sized>(value: &T, budget: usize) -> Option<usize> {
    let len = match value.text_form() {
        TextForm::Str(s) => s.len(),
        TextForm::Null => 0,
        TextForm::Bool(b) => 4 + usize::from(!b),
        TextForm::Number(n) => crate::number_text_len(n),
        TextForm::NumberText(text) => text.len(),
        TextForm::Integer(n) => digits(n),
        TextForm::Json => json_len(value, budget)?,
    };
    (len <= budget).then_some(len)
}

/// The length of `n` written in decimal.
fn digits(n: i128) -> usize {
    let sign = usize::from(n < 0);
    let mut magnitude = n.unsigned_abs();
    let mut len = 1;
    while magnitude >= 10 {
        magnitude /= 10;
        len += 1;
    }
    sign + len
}

/// The length in bytes of `value` written as compact JSON, counted without writing it;
/// `None` as soon as it passes `budget`.
pub fn json_len<T: serde::Serialize + ?Sized>(value: &T, budget: usize) -> Option<usize> {
    let mut counter = Counter { bytes: 0, budget };
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.bytes)
}

/// A writer that only counts, and fails once past its budget.
struct Counter {
    bytes: usize,
    budget: usize,
}

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len();
        if self.bytes > self.budget {
            return Err(std::io::Error::other("over the budget"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_integers_length_is_that_of_its_digits() {
        for n in [
            0,
            7,
            -7,
            10,
            -10,
            99,
            1 << 63,
            i128::from(i64::MIN),
            i128::from(u64::MAX),
        ] {
            assert_eq!(digits(n), n.to_string().len(), "{n}");
        }
    }

    #[test]
    fn lengths_are_those_of_the_text_form_and_stop_at_the_budget() {
        for v in [
            json!(null),
            json!(true),
            json!(false),
            json!(10000000),
            json!(0.38),
            serde_json::from_str("18446744073709551617").unwrap(),
            serde_json::from_str("1.50").unwrap(),
            json!("héllo"),
            json!([1, "a", {"k": null}]),
            json!({"a": [true]}),
        ] {
            let len = value_to_text(&v).len();
            assert_eq!(value_text_len(&v, len), Some(len), "{v}");
            if len > 0 {
                assert_eq!(value_text_len(&v, len - 1), None, "{v}");
            }
        }
    }
}
