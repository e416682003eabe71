use serde_json::{Map, Value};
use strata_core::{did_you_mean, Error, ErrorKind, Layer};
use strata_tools::{a_or_an, parse_as};

use crate::front_matter::{InputSpec, InputType};

fn matches_type(ty: InputType, v: &Value) -> bool {
    match ty {
        InputType::String => v.is_string(),
        InputType::Integer => v.is_i64() || v.is_u64(),
        InputType::Number => v.is_number(),
        InputType::Boolean => v.is_boolean(),
        InputType::Array => v.is_array(),
        InputType::Object => v.is_object(),
    }
}

/// Types a value given for `spec`: strings from the command line are parsed as the declared
/// type; other values must already have it.
pub fn coerce(spec: &InputSpec, value: &Value) -> Result<Value, Error> {
    let bad = |shown: &str| {
        Error::new(
            Layer::INPUTS,
            ErrorKind::Invalid,
            format!(
                "input `{}` must be {}, got `{}`",
                spec.name,
                a_or_an(spec.ty.name()),
                strata_core::shown(shown)
            ),
        )
    };
    if matches_type(spec.ty, value) {
        return Ok(value.clone());
    }
    let Value::String(raw) = value else {
        return Err(bad(&value.to_string()));
    };
    parse_as(spec.ty.name(), raw)
        .filter(|v| matches_type(spec.ty, v))
        .ok_or_else(|| bad(raw))
}

fn names(specs: &[InputSpec]) -> String {
    specs
        .iter()
        .map(|s| format!("`{}`", s.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Validates the caller's inputs against the declarations: unknown names (with a
/// did-you-mean), missing required inputs (all named at once) and types; applies defaults.
pub fn bind(specs: &[InputSpec], given: &Map<String, Value>) -> Result<Map<String, Value>, Error> {
    for name in given.keys() {
        if !specs.iter().any(|s| &s.name == name) {
            let mut message = format!("unknown input `{}`", strata_core::shown(name));
            if let Some(suggestion) = did_you_mean(name, specs.iter().map(|s| s.name.as_str())) {
                message.push_str(&format!("; did you mean `{suggestion}`?"));
            }
            let hint = if specs.is_empty() {
                "this directive declares no inputs".to_string()
            } else {
                format!("the inputs are {}", names(specs))
            };
            return Err(Error::new(Layer::INPUTS, ErrorKind::Invalid, message).with_hint(hint));
        }
    }
    let missing: Vec<&InputSpec> = specs
        .iter()
        .filter(|s| s.required && s.default.is_none() && !given.contains_key(&s.name))
        .collect();
    if !missing.is_empty() {
        let plural = if missing.len() > 1 { "s" } else { "" };
        return Err(Error::new(
            Layer::INPUTS,
            ErrorKind::Invalid,
            format!(
                "missing required input{plural} {}",
                names(&missing.into_iter().cloned().collect::<Vec<_>>())
            ),
        )
        .with_hint("give each as --input NAME=VALUE"));
    }
    let mut out = Map::new();
    for spec in specs {
        match (given.get(&spec.name), &spec.default) {
            (Some(v), _) => {
                out.insert(spec.name.clone(), coerce(spec, v)?);
            }
            (None, Some(d)) => {
                out.insert(spec.name.clone(), d.clone());
            }
            (None, None) => {}
        }
    }
    Ok(out)
}
