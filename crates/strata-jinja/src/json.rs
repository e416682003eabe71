//! JSON values as minijinja values, numbers exact, and minijinja values printed back as
//! compact JSON with those numbers as they were.

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Object, ObjectRepr, Value as JinjaValue, ValueKind};
use serde::ser::{Error as _, Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};

/// A JSON value as a minijinja value: null, booleans and strings as themselves; a number as
/// an integer when it is one of up to 128 bits (minijinja computes with those), as a float
/// when it is one, and otherwise (an integer past 128 bits, a float too large to be finite as
/// it was written) as its text (`Digits`); lists and maps item by item, in order.
pub fn value_of(v: &Value) -> JinjaValue {
    match v {
        Value::Null => JinjaValue::from(()),
        Value::Bool(b) => JinjaValue::from(*b),
        Value::String(s) => JinjaValue::from(s.as_str()),
        Value::Number(n) => number_of(n),
        Value::Array(items) => items.iter().map(value_of).collect(),
        Value::Object(map) => {
            JinjaValue::from_pairs(map.iter().map(|(k, v)| (k.as_str(), value_of(v))))
        }
    }
}

fn number_of(n: &Number) -> JinjaValue {
    if let Some(i) = n.as_i64() {
        return JinjaValue::from(i);
    }
    if let Some(u) = n.as_u64() {
        return JinjaValue::from(u);
    }
    if strata_core::is_integer(n) {
        if let Some(i) = n.as_i128() {
            return JinjaValue::from(i);
        }
    } else if let Some(f) = n.as_f64() {
        return JinjaValue::from(f);
    }
    JinjaValue::from_object(Digits(n.clone()))
}

/// A number minijinja has no type for (an integer past 128 bits, a float too large to be
/// finite as written): it prints as its text, alone and inside lists and maps ([`Printed`]).
#[derive(Debug)]
pub(crate) struct Digits(Number);

impl Object for Digits {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        strata_core::push_number(&self.0, &mut text);
        f.write_str(&text)
    }
}

/// A minijinja value serialised as minijinja serialises it, but for the numbers of
/// `Digits`, which a JSON serializer writes as numbers (minijinja would write their text
/// as a string).
pub(crate) struct Printed<'a>(pub &'a JinjaValue);

impl Serialize for Printed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if let Some(digits) = value.downcast_object_ref::<Digits>() {
            return digits.0.serialize(serializer);
        }
        match value.kind() {
            ValueKind::Seq | ValueKind::Iterable => {
                let mut seq = serializer.serialize_seq(None)?;
                for item in value.try_iter().map_err(S::Error::custom)?.checked() {
                    seq.serialize_element(&Printed(&item.map_err(S::Error::custom)?))?;
                }
                seq.end()
            }
            ValueKind::Map => {
                let mut map = serializer.serialize_map(None)?;
                for key in value.try_iter().map_err(S::Error::custom)?.checked() {
                    let key = key.map_err(S::Error::custom)?;
                    let item = value.get_item(&key).map_err(S::Error::custom)?;
                    map.serialize_entry(&Printed(&key), &Printed(&item))?;
                }
                map.end()
            }
            _ => value.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(v: &JinjaValue) -> String {
        serde_json::to_string(&Printed(v)).unwrap()
    }

    #[test]
    fn numbers_come_through_exact_and_print_as_they_were() {
        let text = r#"{"a":[18446744073709551617,-9223372036854775809,1234567890123456789012345678901234567890,1.5,7,-3],"b":{"c":null,"d":true,"e":"s"}}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let j = value_of(&v);
        assert_eq!(printed(&j), text);
        let a = j.get_attr("a").unwrap();
        assert_eq!(
            a.get_item_by_index(0).unwrap().to_string(),
            "18446744073709551617"
        );
        assert_eq!(
            a.get_item_by_index(1).unwrap().to_string(),
            "-9223372036854775809"
        );
        assert_eq!(
            a.get_item_by_index(2).unwrap().to_string(),
            "1234567890123456789012345678901234567890"
        );
        assert_eq!(a.get_item_by_index(4).unwrap().kind(), ValueKind::Number);
        // As minijinja serialises it, but for the numbers it has no type for.
        let plain = value_of(&serde_json::json!({"x": [1, "y", null, {"z": 2.5}]}));
        assert_eq!(printed(&plain), serde_json::to_string(&plain).unwrap());
    }
}
