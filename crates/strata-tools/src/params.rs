//! Caller parameters: a focused JSON Schema validator for the subset documented in
//! `docs/tools.md` (`type`, `properties`, `required`, `default`, `enum`,
//! `additionalProperties`, `items`, numeric and length bounds), defaults, and the typing of
//! `-p key=value` strings.

use serde_json::{Map, Number, Value};
use strata_core::{a_or_an, type_name, Error, ErrorKind, FieldPath, Layer, PathSeg};

use strata_core::did_you_mean;

/// The schema keywords the validator understands.
pub const KEYWORDS: [&str; 16] = [
    "type",
    "properties",
    "required",
    "default",
    "enum",
    "additionalProperties",
    "items",
    "description",
    "title",
    "examples",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

const TYPES: [&str; 7] = [
    "string", "integer", "number", "boolean", "array", "object", "null",
];

/// A schema problem: where inside `parameters`, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The field inside `parameters`.
    pub path: FieldPath,
    /// What is wrong.
    pub message: String,
}

fn schema_err(path: &FieldPath, message: impl Into<String>) -> SchemaError {
    SchemaError {
        path: path.clone(),
        message: message.into(),
    }
}

/// Checks that a `parameters` schema uses only the supported subset, consistently.
pub fn check_schema(schema: &Value) -> Result<(), SchemaError> {
    check_schema_of(schema, "parameters")
}

/// Checks that the schema of the tool file's field `what` (`parameters`, `outputs`) uses
/// only the supported subset, consistently, with an object at the top.
pub fn check_schema_of(schema: &Value, what: &str) -> Result<(), SchemaError> {
    let root = FieldPath::root();
    check_node(schema, &root)?;
    let types = types_of(schema);
    if !(types.is_empty() || types == ["object"]) {
        return Err(schema_err(
            &root.child(PathSeg::Key("type".into())),
            format!("the {what} schema must be of type `object`"),
        ));
    }
    Ok(())
}

fn check_node(schema: &Value, path: &FieldPath) -> Result<(), SchemaError> {
    let Value::Object(map) = schema else {
        return Err(schema_err(path, "a schema must be a map"));
    };
    for key in map.keys() {
        if !KEYWORDS.contains(&key.as_str()) && key != "$schema" {
            return Err(schema_err(
                &path.child(PathSeg::Key(key.clone())),
                format!(
                    "unsupported schema keyword `{key}`; supported: {}",
                    KEYWORDS.join(", ")
                ),
            ));
        }
    }
    let at = |k: &str| path.child(PathSeg::Key(k.into()));
    match map.get("type") {
        None => {}
        Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
        Some(Value::Array(ts))
            if !ts.is_empty()
                && ts
                    .iter()
                    .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))) => {}
        Some(_) => {
            return Err(schema_err(
                &at("type"),
                format!(
                    "`type` must be one of {} (or a list of them)",
                    TYPES.join(", ")
                ),
            ))
        }
    }
    let props = match map.get("properties") {
        None => None,
        Some(Value::Object(props)) => {
            for (name, sub) in props {
                check_node(sub, &at("properties").child(PathSeg::Key(name.clone())))?;
            }
            Some(props)
        }
        Some(_) => return Err(schema_err(&at("properties"), "`properties` must be a map")),
    };
    if let Some(req) = map.get("required") {
        let Value::Array(names) = req else {
            return Err(schema_err(
                &at("required"),
                "`required` must be a list of names",
            ));
        };
        for (i, name) in names.iter().enumerate() {
            let ok = name
                .as_str()
                .is_some_and(|n| props.is_some_and(|p| p.contains_key(n)));
            if !ok {
                return Err(schema_err(
                    &at("required").child(PathSeg::Index(i)),
                    format!("required name {name} is not one of `properties`"),
                ));
            }
        }
    }
    match map.get("additionalProperties") {
        None | Some(Value::Bool(_)) => {}
        Some(sub) => check_node(sub, &at("additionalProperties"))?,
    }
    if let Some(items) = map.get("items") {
        check_node(items, &at("items"))?;
    }
    if let Some(e) = map.get("enum") {
        if !e.is_array() {
            return Err(schema_err(&at("enum"), "`enum` must be a list of values"));
        }
    }
    for k in ["minimum", "maximum"] {
        if map.get(k).is_some_and(|v| !v.is_number()) {
            return Err(schema_err(&at(k), format!("`{k}` must be a number")));
        }
    }
    for k in ["minLength", "maxLength", "minItems", "maxItems"] {
        if map.get(k).is_some_and(|v| !v.is_u64()) {
            return Err(schema_err(&at(k), format!("`{k}` must be a whole number")));
        }
    }
    if let Some(default) = map.get("default") {
        let mut problems = Vec::new();
        check_value(schema, default, "the default", false, &mut problems);
        if let Some(p) = problems.first() {
            return Err(schema_err(&at("default"), format!("invalid default: {p}")));
        }
    }
    Ok(())
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn type_ok(want: &str, value: &Value) -> bool {
    let got = type_name(value);
    want == got || (want == "number" && got == "integer")
}

/// `raw`, a string from a command line, read as a value of JSON Schema type `ty`: integers
/// and numbers in decimal (an integer stays an integer, a number is finite), `true`/`false`,
/// `null`, lists and maps as JSON, strings as they are; `None` when it is not one.
pub fn parse_as(ty: &str, raw: &str) -> Option<Value> {
    match ty {
        "string" => Some(Value::String(raw.to_string())),
        "integer" => raw.trim().parse::<i64>().ok().map(Value::from),
        "number" => raw.trim().parse::<i64>().ok().map(Value::from).or_else(|| {
            raw.trim()
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
        }),
        "boolean" => match raw.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "null" => (raw.trim() == "null").then_some(Value::Null),
        _ => strata_doc::json_value(raw)
            .ok()
            .filter(|v| type_name(v) == ty),
    }
}

/// Checks `value` against `schema`, pushing problems that name `what`. With `top` set,
/// unknown object keys are rejected unless `additionalProperties` allows them.
fn check_value(schema: &Value, value: &Value, what: &str, top: bool, problems: &mut Vec<String>) {
    let types = types_of(schema);
    if !types.is_empty() && !types.iter().any(|t| type_ok(t, value)) {
        let want: Vec<String> = types.iter().map(|t| a_or_an(t)).collect();
        problems.push(format!(
            "{what} must be {}, not {}",
            want.join(" or "),
            a_or_an(type_name(value))
        ));
        return;
    }
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.contains(value) {
            let list: Vec<String> = options.iter().map(Value::to_string).collect();
            problems.push(format!("{what} must be one of {}", list.join(", ")));
        }
    }
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let count = |k: &str| schema.get(k).and_then(Value::as_u64);
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if num("minimum").is_some_and(|m| x < m) {
                problems.push(format!("{what} must be at least {}", schema["minimum"]));
            }
            if num("maximum").is_some_and(|m| x > m) {
                problems.push(format!("{what} must be at most {}", schema["maximum"]));
            }
        }
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if let Some(min) = count("minLength").filter(|m| len < *m) {
                problems.push(format!("{what} must be at least {min} characters long"));
            }
            if let Some(max) = count("maxLength").filter(|m| len > *m) {
                problems.push(format!("{what} must be at most {max} characters long"));
            }
        }
        Value::Array(items) => {
            let len = items.len() as u64;
            if let Some(min) = count("minItems").filter(|m| len < *m) {
                problems.push(format!("{what} must have at least {min} items"));
            }
            if let Some(max) = count("maxItems").filter(|m| len > *m) {
                problems.push(format!("{what} must have at most {max} items"));
            }
            if let Some(items_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_value(
                        items_schema,
                        item,
                        &sub_name(what, &format!("[{i}]")),
                        false,
                        problems,
                    );
                }
            }
        }
        Value::Object(map) => check_object(schema, map, what, top, problems),
        _ => {}
    }
}

/// `what` with `suffix` added inside its closing backtick: "parameter `a`" → "parameter `a.b`".
fn sub_name(what: &str, suffix: &str) -> String {
    match what.strip_suffix('`') {
        Some(inner) => format!("{inner}{suffix}`"),
        None => format!("{what}{suffix}"),
    }
}

/// The name of `key` under `parent`, for messages (the key may be a caller's: it is shown
/// capped and escaped).
fn child_name(parent: &str, key: &str) -> String {
    let key = strata_core::shown(key);
    if parent.is_empty() {
        format!("parameter `{key}`")
    } else {
        sub_name(parent, &format!(".{key}"))
    }
}

fn check_object(
    schema: &Value,
    map: &Map<String, Value>,
    what: &str,
    top: bool,
    problems: &mut Vec<String>,
) {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let extra = schema.get("additionalProperties");
    for (key, v) in map {
        let name = child_name(what, key);
        if let Some(sub) = props.get(key) {
            check_value(sub, v, &name, false, problems);
            continue;
        }
        match extra {
            Some(Value::Bool(false)) => problems.push(format!("unknown {name}")),
            None if top => problems.push(format!("unknown {name}")),
            Some(sub @ Value::Object(_)) => check_value(sub, v, &name, false, problems),
            _ => {}
        }
    }
    if let Some(Value::Array(req)) = schema.get("required") {
        for name in req.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) && props.get(name).and_then(|p| p.get("default")).is_none() {
                problems.push(format!("missing required {}", child_name(what, name)));
            }
        }
    }
}

/// `given` with the schema's defaults filled in (recursively, in `properties` order).
fn with_defaults(schema: &Value, given: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    for (name, sub) in props.into_iter().flatten() {
        let value = given
            .get(name)
            .cloned()
            .or_else(|| sub.get("default").cloned());
        if let Some(mut value) = value {
            if let Value::Object(inner) = &value {
                if sub.get("properties").is_some() {
                    value = Value::Object(with_defaults(sub, inner));
                }
            }
            out.insert(name.clone(), value);
        }
    }
    for (name, value) in given {
        if !out.contains_key(name) {
            out.insert(name.clone(), value.clone());
        }
    }
    out
}

/// A one-line summary of the parameters: `name (string, required), count (integer, default 1)`.
pub fn summary(schema: Option<&Value>) -> String {
    let Some(props) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty())
    else {
        return String::new();
    };
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    props
        .iter()
        .map(|(name, sub)| {
            let mut notes: Vec<String> = Vec::new();
            let types = types_of(sub);
            if !types.is_empty() {
                notes.push(types.join("|"));
            }
            if required.contains(&name.as_str()) {
                notes.push("required".into());
            }
            if let Some(d) = sub.get("default") {
                notes.push(format!("default {d}"));
            }
            if notes.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", notes.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Validates caller parameters against the tool's schema and applies defaults.
///
/// Every problem is reported in one error, whose hint lists the valid names (with a
/// did-you-mean for a misspelt one).
pub fn validate(
    tool: &str,
    schema: Option<&Value>,
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, Error> {
    check(tool, schema, given)?;
    let no_schema = Value::Object(Map::new());
    Ok(with_defaults(schema.unwrap_or(&no_schema), given))
}

/// Checks caller parameters against the tool's schema as [`validate`] does, without making
/// the parameters with defaults applied (for checks before anything runs).
pub fn check(tool: &str, schema: Option<&Value>, given: &Map<String, Value>) -> Result<(), Error> {
    let no_schema = Value::Object(Map::new());
    let schema = schema.unwrap_or(&no_schema);
    let mut problems = Vec::new();
    check_object(schema, given, "", true, &mut problems);
    if problems.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut hint = String::new();
    if let Some(best) = given
        .keys()
        .filter(|k| !names.contains(k))
        .find_map(|k| did_you_mean(k, names.iter().map(String::as_str)))
    {
        hint.push_str(&format!("did you mean `{best}`? "));
    }
    if names.is_empty() {
        hint.push_str(&format!("`{tool}` takes no parameters"));
    } else {
        hint.push_str(&format!("the parameters are: {}", summary(Some(schema))));
    }
    Err(Error::new(
        Layer::PARAMS,
        ErrorKind::Invalid,
        format!("invalid parameters for `{tool}`: {}", problems.join("; ")),
    )
    .with_hint(hint))
}

/// Checks what is known of a call's parameters before anything runs: `known` holds the
/// values written as constants, `pending` the names whose values are known only when running
/// (templates, references). A pending name the schema does not take still fails; a pending
/// name is not required yet. The hint lists the parameters as the tool declares them.
pub fn check_known(
    tool: &str,
    schema: Option<&Value>,
    known: &Map<String, Value>,
    pending: &[String],
) -> Result<(), Error> {
    let declared = |k: &str| {
        schema
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(k))
            .is_some()
    };
    // A schema that takes any other name: pending names cannot fail it by their names.
    let open = schema
        .and_then(|s| s.get("additionalProperties"))
        .is_some_and(|a| a != &Value::Bool(false));
    let mut probe = known.clone();
    let mut unknown = Vec::new();
    for k in pending {
        if !declared(k) && !open {
            probe.insert(k.clone(), Value::Null);
        } else {
            unknown.push(k.as_str());
        }
    }
    let requires = |s: &Value| {
        s.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| {
                r.iter()
                    .any(|n| n.as_str().is_some_and(|n| !unknown.contains(&n)))
            })
    };
    if probe.is_empty() && !schema.is_some_and(requires) {
        // Nothing known can fail: every name is pending and the schema takes it.
        return Ok(());
    }
    // Names whose values are known only when running are not required yet.
    let relaxed = schema.filter(|_| !unknown.is_empty()).map(|s| {
        let mut s = s.clone();
        if let Some(Value::Array(req)) = s.get_mut("required") {
            req.retain(|r| !r.as_str().is_some_and(|r| unknown.contains(&r)));
        }
        s
    });
    let relaxed = relaxed.as_ref().or(schema);
    check(tool, relaxed, &probe)
        .map_err(|e| e.map_hint(|hint| hint.replace(&summary(relaxed), &summary(schema))))
}

/// Types a `-p name=value` string by the declared type of `name`: strings stay strings;
/// integers, numbers, booleans, null, arrays and objects are parsed. Undeclared names and
/// untyped parameters stay strings (validation reports unknown names).
pub fn coerce(schema: Option<&Value>, name: &str, raw: &str) -> Result<Value, Error> {
    coerce_given(schema, name, raw, &Given::PARAM)
}

/// How a command line gives a value [`coerce_given`] types: the flag and the word its errors
/// use.
#[derive(Debug, Clone, Copy)]
pub struct Given {
    /// The flag, as a hint shows it (`-p`, `--input`).
    pub flag: &'static str,
    /// The word messages use (`parameter`, `input`).
    pub what: &'static str,
    /// The layer of the error.
    pub layer: Layer,
}

impl Given {
    /// A tool's parameter, `-p name=value`.
    pub const PARAM: Given = Given {
        flag: "-p",
        what: "parameter",
        layer: Layer::PARAMS,
    };
    /// A graph's input, `--input name=value`.
    pub const INPUT: Given = Given {
        flag: "--input",
        what: "input",
        layer: Layer::INPUTS,
    };
}

/// [`coerce`] for a value given as `given` says: its errors name the flag that gives it.
pub fn coerce_given(
    schema: Option<&Value>,
    name: &str,
    raw: &str,
    given: &Given,
) -> Result<Value, Error> {
    let prop = schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(name));
    let types = prop.map(types_of).unwrap_or_default();
    if types.is_empty() || types.contains(&"string") {
        return Ok(Value::String(raw.to_string()));
    }
    if let Some(v) = types.iter().find_map(|t| parse_as(t, raw)) {
        return Ok(v);
    }
    let want: Vec<String> = types.iter().map(|t| a_or_an(t)).collect();
    Err(Error::new(
        given.layer,
        ErrorKind::Invalid,
        format!(
            "{} `{}` must be {}, got `{}`",
            given.what,
            strata_core::shown(name),
            want.join(" or "),
            strata_core::shown(raw)
        ),
    )
    .with_hint(if types.iter().any(|t| *t == "array" || *t == "object") {
        format!(
            "arrays and objects are given as JSON, e.g. {} items='[1,2]'",
            given.flag
        )
    } else {
        format!("the {}s are: {}", given.what, summary(schema))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"type": "integer", "default": 1, "minimum": 1},
                "mode": {"enum": ["fast", "slow"], "default": "fast"},
                "opts": {"type": "object", "properties": {"deep": {"type": "boolean", "default": false}}}
            },
            "required": ["name"]
        })
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn defaults_fill_in_in_schema_order() {
        let s = schema();
        check_schema(&s).unwrap();
        let got = validate("t", Some(&s), &obj(json!({"opts": {}, "name": "x"}))).unwrap();
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            r#"{"name":"x","count":1,"mode":"fast","opts":{"deep":false}}"#
        );
    }

    #[test]
    fn every_problem_is_reported_with_the_valid_names() {
        let s = schema();
        let e = validate("t", Some(&s), &obj(json!({"nme": "x", "count": "3"}))).unwrap_err();
        assert_eq!(
            e.message(),
            "invalid parameters for `t`: unknown parameter `nme`; \
             parameter `count` must be an integer, not a string; missing required parameter `name`"
        );
        assert_eq!(
            e.hint(),
            Some(
                "did you mean `name`? the parameters are: name (string, required), \
                 count (integer, default 1), mode (default \"fast\"), opts (object)"
            )
        );
        let e = validate(
            "t",
            Some(&s),
            &obj(json!({"name": "x", "count": 0, "mode": "x", "opts": {"deep": 1}})),
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "invalid parameters for `t`: parameter `count` must be at least 1; \
             parameter `mode` must be one of \"fast\", \"slow\"; parameter `opts.deep` must be a boolean, not an integer"
        );
    }

    #[test]
    fn no_schema_takes_no_parameters() {
        let e = validate("t", None, &obj(json!({"x": 1}))).unwrap_err();
        assert_eq!(
            e.message(),
            "invalid parameters for `t`: unknown parameter `x`"
        );
        assert_eq!(e.hint(), Some("`t` takes no parameters"));
        assert!(validate("t", None, &Map::new()).unwrap().is_empty());
    }

    #[test]
    fn schemas_outside_the_subset_are_refused() {
        let e = check_schema(&json!({"type": "object", "properties": {"a": {"pattern": "x"}}}))
            .unwrap_err();
        assert_eq!(e.path.to_string(), "properties.a.pattern");
        let e = check_schema(&json!({"properties": {"a": {"type": "integer", "default": "x"}}}))
            .unwrap_err();
        assert_eq!(
            e.message,
            "invalid default: the default must be an integer, not a string"
        );
        let e = check_schema(&json!({"properties": {}, "required": ["b"]})).unwrap_err();
        assert_eq!(e.message, "required name \"b\" is not one of `properties`");
        let e = check_schema(&json!({"type": "string"})).unwrap_err();
        assert_eq!(e.message, "the parameters schema must be of type `object`");
    }

    #[test]
    fn cli_strings_are_typed_by_the_schema() {
        let s = schema();
        assert_eq!(coerce(Some(&s), "count", "3").unwrap(), json!(3));
        assert_eq!(coerce(Some(&s), "name", "3").unwrap(), json!("3"));
        assert_eq!(
            coerce(Some(&s), "opts", r#"{"deep":true}"#).unwrap(),
            json!({"deep": true})
        );
        assert_eq!(coerce(Some(&s), "nope", "1").unwrap(), json!("1"));
        let e = coerce(Some(&s), "count", "three").unwrap_err();
        assert_eq!(
            e.message(),
            "parameter `count` must be an integer, got `three`"
        );
    }
}
