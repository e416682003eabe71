//! Where field values come from: the caller's standard fields and the
//! `canned_response_fields` of tool results, each with the place it was read from.

use serde_json::{Map, Value};
use strata_core::walk::{resolve_segs, Path, Seg};
use strata_core::{map_get, Error, ErrorKind, FieldPath, Location, PathSeg};
use strata_doc::Document;

use crate::names::{STD, STD_FIELDS};
use crate::RESPONSE;

/// The key of a tool result that holds its response fields.
pub const FIELDS_KEY: &str = "canned_response_fields";

/// Where a source's values were read from, so that errors about them carry a file position.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// A document (a tool-result file): positions inside it are found by field path.
    Doc(&'a Document),
    /// One position for the whole source (a directive's action, its `responses.std`).
    At(&'a Location),
    /// Not a file (a command-line option).
    Nowhere,
}

impl Place<'_> {
    /// Gives `err` the field path `path` inside the source and, for a file, the matching
    /// position (a whole-source position says nothing of the path).
    pub fn locate(&self, err: Error, path: &FieldPath) -> Error {
        match self {
            Place::Doc(doc) => doc.locate_error(err.at_path(path)),
            Place::At(loc) => err.at_location((*loc).clone()),
            Place::Nowhere => err.at_path(path),
        }
    }
}

/// The response fields of one tool result, in the order the tools ran.
#[derive(Debug, Clone)]
pub struct ToolResult<'a> {
    /// How the result is named in messages (``step `balance` (bank/check_balance)``,
    /// `` `results/one.json` ``).
    pub label: String,
    /// Its `canned_response_fields` object.
    pub fields: &'a Map<String, Value>,
    /// Where it was read from.
    pub place: Place<'a>,
}

impl<'a> ToolResult<'a> {
    /// The response fields of `result` (what a tool returned): `None` when it is not an object
    /// or has no `canned_response_fields`; an error when that key holds anything but an object.
    pub fn of(
        label: impl Into<String>,
        result: &'a Value,
        place: Place<'a>,
    ) -> Result<Option<ToolResult<'a>>, Error> {
        let label = label.into();
        match result.get(FIELDS_KEY) {
            None => Ok(None),
            Some(Value::Object(fields)) => Ok(Some(ToolResult {
                label,
                fields,
                place,
            })),
            Some(other) => {
                let err = Error::new(
                    RESPONSE,
                    ErrorKind::Invalid,
                    format!(
                        "`{FIELDS_KEY}` of {label} is {} {}, not an object",
                        article(other),
                        strata_tools::type_name(other)
                    ),
                )
                .with_hint(
                    "a tool returns its response fields as an object: {\"data\": …, \"canned_response_fields\": {\"account.balance\": \"$5,432.10\"}}",
                );
                Err(place.locate(err, &FieldPath(vec![PathSeg::Key(FIELDS_KEY.into())])))
            }
        }
    }
}

fn article(v: &Value) -> &'static str {
    match v {
        Value::Array(_) | Value::Object(_) => "an",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an",
        _ => "a",
    }
}

/// A value found for a field.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'v> {
    /// The value.
    pub value: &'v Value,
    /// How it was found.
    how: How,
}

/// How a [`Hit`] was found, to name its place in its source only when that is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// A flat key of `canned_response_fields`.
    FlatKey,
    /// A nested path in `canned_response_fields`.
    ToolPath,
    /// A path in the standard fields, after `std.`.
    StdPath,
}

impl Hit<'_> {
    /// The field path of the value inside its source, for field `name`
    /// (`canned_response_fields["account.balance"]`, `customer.name`).
    pub fn path(&self, name: &str) -> FieldPath {
        let base = FieldPath(vec![PathSeg::Key(FIELDS_KEY.into())]);
        let keys = |base: FieldPath, parts: &mut dyn Iterator<Item = &str>| {
            parts.fold(base, |p, k| p.child(PathSeg::Key(k.to_string())))
        };
        match self.how {
            How::FlatKey => base.child(PathSeg::Key(name.to_string())),
            How::ToolPath => keys(base, &mut name.split('.')),
            How::StdPath => keys(FieldPath::root(), &mut name.split('.').skip(1)),
        }
    }
}

/// The value of tool field `name`: the latest result that has it wins; in each result the
/// whole dotted name is looked up first as a flat key (`{"account.balance": …}`), then as a
/// nested path (`{"account": {"balance": …}}`). Returns the index of the result too.
pub fn tool_field<'v>(results: &'v [ToolResult<'_>], name: &str) -> Option<(usize, Hit<'v>)> {
    let path = Path::parse(name).ok();
    results.iter().enumerate().rev().find_map(|(i, r)| {
        if let Some(value) = map_get(r.fields, name) {
            let how = How::FlatKey;
            return Some((i, Hit { value, how }));
        }
        let (Seg::Key(first), rest) = path.as_ref()?.segs.split_first()? else {
            return None;
        };
        let value = resolve_segs(rest, map_get(r.fields, first)?, 1).ok()?;
        let how = How::ToolPath;
        Some((i, Hit { value, how }))
    })
}

/// The value of standard field `name` (`std.customer.name`) in `std`, the caller's
/// `{customer, agent, variables, missing_params}`; `std` alone is all of them.
pub fn std_field<'v>(std: &'v Value, name: &str) -> Option<Hit<'v>> {
    let segs = Path::parse(name).ok()?.segs;
    match segs.split_first() {
        Some((Seg::Key(head), rest)) if head == STD => {
            let value = resolve_segs(rest, std, 1).ok()?;
            let how = How::StdPath;
            Some(Hit { value, how })
        }
        _ => None,
    }
}

/// Checks the caller's standard fields: an object with only `customer`, `agent`,
/// `variables` and `missing_params` (`customer` and `agent` objects, `variables` an object,
/// `missing_params` a list).
pub fn check_std(std: &Value, place: Place<'_>) -> Result<(), Error> {
    let Value::Object(map) = std else {
        let err = Error::new(
            RESPONSE,
            ErrorKind::Invalid,
            format!(
                "the standard fields must be an object, not {} {}",
                article(std),
                strata_tools::type_name(std)
            ),
        )
        .with_hint("e.g. {\"customer\": {\"name\": \"Ann\"}, \"agent\": {\"name\": \"Ada\"}}");
        return Err(place.locate(err, &FieldPath::root()));
    };
    for (key, value) in map {
        let at = FieldPath(vec![PathSeg::Key(key.clone())]);
        if !STD_FIELDS.contains(&key.as_str()) {
            let mut err = Error::new(
                RESPONSE,
                ErrorKind::UnknownField,
                format!("unknown standard field `{key}`"),
            );
            err = match strata_core::did_you_mean(key, STD_FIELDS) {
                Some(best) => err.with_hint(format!("did you mean `{best}`?")),
                None => err.with_hint(format!("the standard fields are {}", STD_FIELDS.join(", "))),
            };
            return Err(place.locate(err, &at));
        }
        let ok = match key.as_str() {
            "missing_params" => value.is_array(),
            _ => value.is_object(),
        };
        if !ok {
            let want = if key == "missing_params" {
                "a list of parameter names"
            } else {
                "an object"
            };
            let err = Error::new(
                RESPONSE,
                ErrorKind::Invalid,
                format!("standard field `{key}` must be {want}"),
            );
            return Err(place.locate(err, &at));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(v: &Value) -> ToolResult<'_> {
        ToolResult::of("r", v, Place::Nowhere).unwrap().unwrap()
    }

    #[test]
    fn a_flat_key_wins_over_a_nested_path_in_the_same_result() {
        let v = json!({"canned_response_fields": {"account.balance": "flat", "account": {"balance": "nested"}}});
        let results = [result(&v)];
        let (i, hit) = tool_field(&results, "account.balance").unwrap();
        assert_eq!((i, hit.value), (0, &json!("flat")));
        assert_eq!(
            hit.path("account.balance").to_string(),
            "canned_response_fields[\"account.balance\"]"
        );
    }

    #[test]
    fn the_latest_result_wins_whichever_form_it_uses() {
        let old = json!({"canned_response_fields": {"account.balance": "old"}});
        let new = json!({"canned_response_fields": {"account": {"balance": "new"}}});
        let results = [result(&old), result(&new)];
        let (i, hit) = tool_field(&results, "account.balance").unwrap();
        assert_eq!((i, hit.value), (1, &json!("new")));
        assert_eq!(
            hit.path("account.balance").to_string(),
            "canned_response_fields.account.balance"
        );
        assert_eq!(tool_field(&results, "account.type"), None);
    }

    #[test]
    fn results_without_fields_have_none_and_bad_fields_are_errors() {
        assert!(ToolResult::of("r", &json!("text"), Place::Nowhere)
            .unwrap()
            .is_none());
        assert!(ToolResult::of("r", &json!({"data": 1}), Place::Nowhere)
            .unwrap()
            .is_none());
        let e = ToolResult::of(
            "step `a`",
            &json!({"canned_response_fields": [1]}),
            Place::Nowhere,
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "`canned_response_fields` of step `a` is an array, not an object"
        );
    }

    #[test]
    fn standard_fields_are_walked_after_std() {
        let std = json!({"customer": {"name": "Ann"}, "variables": {"tier": "gold"}});
        assert_eq!(
            std_field(&std, "std.customer.name").map(|h| h.value),
            Some(&json!("Ann"))
        );
        assert_eq!(
            std_field(&std, "std.variables.tier")
                .unwrap()
                .path("std.variables.tier")
                .to_string(),
            "variables.tier"
        );
        assert_eq!(std_field(&std, "std.agent.name"), None);
        assert_eq!(std_field(&std, "customer.name"), None);
        assert_eq!(std_field(&std, "std").map(|h| h.value), Some(&std));
    }

    #[test]
    fn standard_fields_are_checked() {
        let e = check_std(&json!({"custmer": {}}), Place::Nowhere).unwrap_err();
        assert_eq!(e.message(), "unknown standard field `custmer`");
        assert_eq!(e.hint(), Some("did you mean `customer`?"));
        let e = check_std(&json!({"missing_params": "x"}), Place::Nowhere).unwrap_err();
        assert_eq!(
            e.message(),
            "standard field `missing_params` must be a list of parameter names"
        );
        let e = check_std(&json!([]), Place::Nowhere).unwrap_err();
        assert_eq!(
            e.message(),
            "the standard fields must be an object, not an array"
        );
        assert!(check_std(&json!({"agent": {"name": "Ada"}}), Place::Nowhere).is_ok());
    }
}
