//! A manifest against Argo's JSON Schema (embedded, `schema/argo-workflow.schema.json`):
//! the `jsonschema` crate's verdict, plus the unknown keys the schema lets through (its
//! objects list their `properties` but do not forbid others).

use std::sync::OnceLock;

use serde_json::{json, Map, Value};
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, PathSeg};

use crate::ARGO;

/// Argo Workflows' JSON Schema, v4.1.2 (see `schema/README.md`).
pub const SCHEMA: &str = include_str!("../../schema/argo-workflow.schema.json");

/// The definition of a Workflow in [`SCHEMA`].
pub const WORKFLOW: &str = "io.argoproj.workflow.v1alpha1.Workflow";

/// The schema document, parsed once.
fn document() -> &'static Result<Value, String> {
    static DOC: OnceLock<Result<Value, String>> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(SCHEMA).map_err(|e| e.to_string()))
}

/// The validator of a Workflow, compiled once.
fn validator() -> Result<&'static jsonschema::Validator, Error> {
    static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();
    let built = VALIDATOR.get_or_init(|| {
        let mut root = document().clone()?;
        if let Value::Object(map) = &mut root {
            map.remove("oneOf");
            map.remove("type");
            map.insert("$ref".into(), json!(format!("#/definitions/{WORKFLOW}")));
        }
        jsonschema::draft202012::new(&root).map_err(|e| e.to_string())
    });
    built.as_ref().map_err(|e| {
        Error::new(
            ARGO,
            ErrorKind::Invalid,
            format!("Argo's schema cannot be compiled: {e}"),
        )
    })
}

/// The field path of a JSON pointer into `instance` (`/spec/templates/0` →
/// `spec.templates[0]`).
fn field_path(instance: &Value, pointer: &str) -> FieldPath {
    let mut path = FieldPath::root();
    let mut cur = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let seg = match (cur, token.parse::<usize>()) {
            (Some(Value::Array(items)), Ok(i)) => {
                cur = items.get(i);
                PathSeg::Index(i)
            }
            (c, _) => {
                cur = c.and_then(|v| v.get(&token));
                PathSeg::Key(token)
            }
        };
        path = path.child(seg);
    }
    path
}

/// Every place `manifest` breaks Argo's schema, in document order.
pub fn schema_errors(manifest: &Value) -> Vec<Error> {
    let validator = match validator() {
        Ok(v) => v,
        Err(e) => return vec![e],
    };
    let mut errors: Vec<Error> = validator
        .iter_errors(manifest)
        .map(|e| {
            let kind = match e.kind {
                jsonschema::error::ValidationErrorKind::Type { .. } => ErrorKind::Type,
                _ => ErrorKind::Invalid,
            };
            let pointer = e.instance_path.to_string();
            Error::new(ARGO, kind, format!("Argo's schema: {e}"))
                .at_path(&field_path(manifest, &pointer))
        })
        .collect();
    errors.dedup_by(|a, b| a.message() == b.message() && a.path() == b.path());
    errors
}

/// Follows `$ref`s to the definition a schema stands for.
fn resolve<'s>(defs: &'s Map<String, Value>, mut schema: &'s Value) -> &'s Value {
    for _ in 0..32 {
        let Some(target) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        match target
            .strip_prefix("#/definitions/")
            .and_then(|name| defs.get(name))
        {
            Some(next) => schema = next,
            None => break,
        }
    }
    schema
}

/// Every key of `manifest` that Argo's schema does not know (with a did-you-mean), where
/// the schema lists an object's properties and takes no others.
pub fn unknown_keys(manifest: &Value) -> Vec<Error> {
    let Ok(doc) = document() else {
        return Vec::new();
    };
    let Some(defs) = doc.get("definitions").and_then(Value::as_object) else {
        return Vec::new();
    };
    let Some(workflow) = defs.get(WORKFLOW) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    walk(defs, workflow, manifest, &FieldPath::root(), &mut errors);
    errors
}

fn walk(
    defs: &Map<String, Value>,
    schema: &Value,
    value: &Value,
    at: &FieldPath,
    errors: &mut Vec<Error>,
) {
    let schema = resolve(defs, schema);
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties");
            for (k, v) in map {
                let here = at.child(PathSeg::Key(k.clone()));
                match (props.and_then(|p| p.get(k)), extra) {
                    (Some(sub), _) => walk(defs, sub, v, &here, errors),
                    (None, Some(sub)) if sub.is_object() => walk(defs, sub, v, &here, errors),
                    (None, Some(Value::Bool(true))) => {}
                    (None, _) => {
                        let Some(props) = props else { continue };
                        let mut e = Error::new(
                            ARGO,
                            ErrorKind::UnknownField,
                            format!("unknown key `{k}`: Argo's schema does not have it here"),
                        )
                        .at_path(&here);
                        e = match did_you_mean(k, props.keys().map(String::as_str)) {
                            Some(best) => e.with_hint(format!("did you mean `{best}`?")),
                            None => e.with_hint(format!(
                                "the keys here are {}",
                                props.keys().cloned().collect::<Vec<_>>().join(", ")
                            )),
                        };
                        errors.push(e);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(defs, sub, v, &at.child(PathSeg::Index(i)), errors);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_become_field_paths() {
        let v = json!({"spec": {"templates": [{"name": "a"}], "x/y": 1}});
        assert_eq!(
            field_path(&v, "/spec/templates/0/name").to_string(),
            "spec.templates[0].name"
        );
        assert_eq!(field_path(&v, "").to_string(), "$");
    }
}
