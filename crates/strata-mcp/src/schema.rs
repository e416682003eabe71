//! The JSON Schemas of the MCP tools: what each item takes (`inputSchema`) and, for a tool
//! that declares `outputs`, what it returns (`outputSchema`).

use serde_json::{json, Map, Value};
use strata_directive::InputSpec;

/// The input schema of a tool or graph from its `parameters` (a JSON Schema of an object);
/// an item that declares none takes an empty object.
pub(crate) fn of_parameters(parameters: Option<&Value>) -> Map<String, Value> {
    match parameters {
        Some(Value::Object(schema)) if schema.get("type") == Some(&json!("object")) => {
            schema.clone()
        }
        _ => empty(),
    }
}

/// The input schema of a directive from its declared inputs: each input a property of its
/// type, with its description and default; the required ones listed.
pub(crate) fn of_inputs(inputs: &[InputSpec]) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for input in inputs {
        let mut property = Map::new();
        property.insert("type".into(), json!(input.ty.name()));
        if let Some(d) = &input.description {
            property.insert("description".into(), json!(d));
        }
        if let Some(default) = &input.default {
            property.insert("default".into(), default.clone());
        }
        properties.insert(input.name.clone(), Value::Object(property));
        if input.required {
            required.push(json!(input.name));
        }
    }
    let mut schema = empty();
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema
}

/// What a plan file takes: user values for its `{{PLACEHOLDER_name}}` references, and how
/// many steps run at once.
pub(crate) fn of_plan_file() -> Map<String, Value> {
    object(json!({
        "values": values(),
        "jobs": jobs(),
    }))
}

/// What `run_plan` takes: the plan the agent writes, its user values and how many steps run
/// at once.
pub(crate) fn of_plan_writer() -> Map<String, Value> {
    let mut schema = object(json!({
        "plan": {
            "description": "The plan: {\"steps\": [{\"id\", \"tool\", \"arguments\", \"depends_on\"?}]} (or the list of steps, or its JSON or YAML text). `tool` is a strata tool id (`examples/echo`). An argument refers to an earlier step's result as \"$A.path\" (the whole value, typed), \"{$A.path}\" (inside text), or \"{{A.result.path}}\" (any field of A's record: result, status, error, run); \"{{PLACEHOLDER_name}}\" is a user value.",
            "type": ["object", "array", "string"],
        },
        "values": values(),
        "jobs": jobs(),
    }));
    schema.insert("required".into(), json!(["plan"]));
    schema
}

/// The output schema of a tool from its `outputs`, when it declares an object.
pub(crate) fn of_outputs(outputs: Option<&Value>) -> Option<Map<String, Value>> {
    match outputs {
        Some(Value::Object(schema)) if schema.get("type") == Some(&json!("object")) => {
            Some(schema.clone())
        }
        _ => None,
    }
}

fn values() -> Value {
    json!({
        "description": "User values for the plan's {{PLACEHOLDER_name}} references, by name",
        "type": "object",
        "additionalProperties": true,
    })
}

fn jobs() -> Value {
    json!({
        "description": "The most steps running at once (default: the server's --jobs)",
        "type": "integer",
        "minimum": 1,
        "maximum": 256,
    })
}

fn empty() -> Map<String, Value> {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema
}

fn object(properties: Value) -> Map<String, Value> {
    let mut schema = empty();
    schema.insert("properties".into(), properties);
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directive_s_inputs_become_properties_with_types_defaults_and_required() {
        let inputs: Vec<InputSpec> = serde_json::from_value(json!([
            {"name": "name", "type": "string", "required": true},
            {"name": "times", "type": "integer", "default": 1, "description": "How often"},
        ]))
        .unwrap();
        assert_eq!(
            Value::Object(of_inputs(&inputs)),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "times": {"type": "integer", "description": "How often", "default": 1},
                },
                "required": ["name"],
            })
        );
    }

    #[test]
    fn parameters_that_are_not_an_object_schema_take_an_empty_object() {
        assert_eq!(
            Value::Object(of_parameters(None)),
            json!({"type": "object"})
        );
        assert_eq!(
            Value::Object(of_parameters(Some(&json!({"type": "string"})))),
            json!({"type": "object"})
        );
        assert!(of_outputs(Some(&json!({"type": "array"}))).is_none());
    }
}
