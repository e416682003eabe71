//! Numbers as strata reads and prints them.
//!
//! serde_json keeps a number it reads as the text it was written with (its
//! `arbitrary_precision` feature), so an integer of any size is exact: 2^64 + 1 renders as
//! `18446744073709551617`, never `1.8446744073709552e+19` (SPEC §1, "integer → decimal, no
//! float round trip"). The readers of documents and requests give every number one form
//! ([`number_from_text`]); the text rule prints any number ([`push_number`]).

use serde_json::Number;

/// The key under which serde_json's deserializer hands a visitor a number it keeps as text
/// (a float, or an integer past 64 bits): a map of one entry, this key and the number's
/// text. A visitor that reads values itself recognises it (serde_json's own `Value` does the
/// same), so a map whose first key is this text is read as a number.
pub const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The number written `text` (JSON's grammar; a YAML integer with its sign, its digits in
/// decimal) in the one form the readers give: an integer as its digits, exact whatever its
/// size (`-0` is the float `-0.0`, as JSON has always read it); a float in its shortest
/// round-trip form. `None` for a float that is not finite, and for text that is no number.
pub fn number_from_text(text: &str) -> Option<Number> {
    if text == "-0" {
        return Number::from_f64(-0.0);
    }
    if is_integer_text(text) {
        return text.parse().ok();
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// True for an integer's text: digits, after an optional `-`.
fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// True when `n` is an integer, of any size.
pub fn is_integer(n: &Number) -> bool {
    is_integer_text(n.as_str())
}

/// True when `n` is an integer past 64 bits (neither an `i64` nor a `u64`).
pub fn is_big_integer(n: &Number) -> bool {
    is_integer(n) && !n.is_i64() && !n.is_u64()
}

/// Appends `n` as text: an integer's digits; a float in its shortest round-trip form (one
/// read elsewhere than a document keeps the digits it was written with until it is printed
/// here: `1.50` prints `1.5`); a float too large to be finite as it was written.
pub fn push_number(n: &Number, out: &mut String) {
    let text = n.as_str();
    if is_integer_text(text) {
        return out.push_str(text);
    }
    match n.as_f64().and_then(Number::from_f64) {
        Some(shortest) => out.push_str(shortest.as_str()),
        None => out.push_str(text),
    }
}

/// The length of [`push_number`]'s text, counted without building it for an integer.
pub fn number_text_len(n: &Number) -> usize {
    let text = n.as_str();
    if is_integer_text(text) {
        return text.len();
    }
    n.as_f64()
        .and_then(Number::from_f64)
        .map_or(text.len(), |shortest| shortest.as_str().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Option<String> {
        number_from_text(text).map(|n| n.to_string())
    }

    #[test]
    fn readers_keep_integers_exact_and_floats_shortest() {
        for (text, form) in [
            ("0", "0"),
            ("-5", "-5"),
            ("18446744073709551617", "18446744073709551617"),
            ("-9223372036854775809", "-9223372036854775809"),
            (
                "1234567890123456789012345678901234567890",
                "1234567890123456789012345678901234567890",
            ),
            ("-0", "-0.0"),
            ("1.50", "1.5"),
            ("1e2", "100.0"),
            ("1E+2", "100.0"),
            ("-0.0", "-0.0"),
            ("0.38", "0.38"),
        ] {
            assert_eq!(shown(text).as_deref(), Some(form), "{text}");
        }
        assert_eq!(shown("1e400"), None);
        assert_eq!(shown("-1e400"), None);
        assert_eq!(shown("x"), None);
        let big = number_from_text("18446744073709551617").unwrap();
        assert!(is_big_integer(&big) && is_integer(&big));
        assert!(!is_big_integer(&Number::from(u64::MAX)));
        assert!(!is_integer(&Number::from_f64(1.0).unwrap()));
    }

    #[test]
    fn printing_gives_integers_digits_and_floats_their_shortest_form() {
        for (text, printed) in [
            ("18446744073709551617", "18446744073709551617"),
            ("1.50", "1.5"),
            ("1e+2", "100.0"),
            ("1e+400", "1e+400"),
            ("7", "7"),
        ] {
            let n: Number = serde_json::from_str(text).unwrap();
            let mut out = String::new();
            push_number(&n, &mut out);
            assert_eq!(out, printed, "{text}");
            assert_eq!(number_text_len(&n), printed.len(), "{text}");
        }
    }
}
