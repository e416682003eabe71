//! A manifest against Argo's JSON Schema (embedded, `schema/argo-workflow.schema.json`).
//!
//! The schema is generated from Argo's Go types and says what it says with eight keywords:
//! `$ref` (to `#/definitions/…`), `type`, `properties`, `additionalProperties` (a schema),
//! `items`, `required`, `const` and `enum` (the rest — `description`, `title`, `format`,
//! `x-kubernetes-*` — are annotations). One walk of the manifest beside the schema applies
//! them, as JSON Schema 2020-12 does, and words each failure as the `jsonschema` crate does
//! (the test `schema_verdicts_match_the_jsonschema_crate` holds the two to each other); the
//! same walk finds the keys the schema lets through unknown (its objects list their
//! `properties` but do not forbid others).

use std::sync::OnceLock;

use serde_json::{Map, Value};
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, PathSeg};

use crate::ARGO;

/// Argo Workflows' JSON Schema, v4.1.2 (see `schema/README.md`).
pub const SCHEMA: &str = include_str!("../../schema/argo-workflow.schema.json");

/// The definition of a Workflow in [`SCHEMA`].
pub const WORKFLOW: &str = "io.argoproj.workflow.v1alpha1.Workflow";

/// The schema's definitions, parsed once.
fn definitions() -> Result<&'static Map<String, Value>, Error> {
    static DOC: OnceLock<Result<Value, String>> = OnceLock::new();
    let doc = DOC.get_or_init(|| strata_doc::json_value(SCHEMA).map_err(|e| e.to_string()));
    let cannot = |why: &str| {
        Error::new(
            ARGO,
            ErrorKind::Invalid,
            format!("Argo's schema cannot be read: {why}"),
        )
    };
    match doc {
        Ok(doc) => doc
            .get("definitions")
            .and_then(Value::as_object)
            .filter(|defs| defs.contains_key(WORKFLOW))
            .ok_or_else(|| cannot("it has no Workflow definition")),
        Err(e) => Err(cannot(e)),
    }
}

/// What the walk finds: breaches of the schema, and keys it does not know.
#[derive(Default)]
struct Findings {
    /// Breaches of a keyword, in document order.
    breaches: Vec<Error>,
    /// Keys the schema does not have where its object lists its properties.
    unknown: Vec<Error>,
}

/// Every place `manifest` breaks Argo's schema, in document order, then every key the
/// schema does not know (with a did-you-mean).
pub fn schema_errors(manifest: &Value) -> Vec<Error> {
    let defs = match definitions() {
        Ok(defs) => defs,
        Err(e) => return vec![e],
    };
    let mut found = Findings::default();
    let workflow = Value::String(format!("#/definitions/{WORKFLOW}"));
    let root = Map::from_iter([("$ref".to_string(), workflow)]);
    walk(
        defs,
        &Value::Object(root),
        manifest,
        &FieldPath::root(),
        &mut found,
    );
    found.breaches.extend(found.unknown);
    found.breaches
}

/// Follows `$ref`s to the definition a schema stands for (its siblings are annotations).
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

/// True when `value` is of JSON Schema type `name` (an integer is a number without a
/// fraction, `1.0` included).
fn is_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// The breach of one keyword at `at`, worded as the `jsonschema` crate words it.
fn breach(kind: ErrorKind, at: &FieldPath, what: String) -> Error {
    Error::new(ARGO, kind, format!("Argo's schema: {what}")).at_path(at)
}

/// `enum`'s options as the `jsonschema` crate lists them: `a, b or c`.
fn options(values: &[Value]) -> String {
    let mut text = String::new();
    for (i, v) in values.iter().enumerate() {
        match i {
            0 => {}
            _ if i + 1 == values.len() => text.push_str(" or "),
            _ => text.push_str(", "),
        }
        text.push_str(&v.to_string());
    }
    text
}

/// Applies `schema` to `value` at `at`, and every subschema to the value it is for.
fn walk(
    defs: &Map<String, Value>,
    schema: &Value,
    value: &Value,
    at: &FieldPath,
    found: &mut Findings,
) {
    let schema = resolve(defs, schema);
    if let Some(want) = schema.get("type").and_then(Value::as_str) {
        if !is_type(value, want) {
            let what = format!("{value} is not of type \"{want}\"");
            found.breaches.push(breach(ErrorKind::Type, at, what));
        }
    }
    if let Some(expected) = schema.get("const") {
        if expected != value {
            found.breaches.push(breach(
                ErrorKind::Invalid,
                at,
                format!("{expected} was expected"),
            ));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            let what = format!("{value} is not one of {}", options(allowed));
            found.breaches.push(breach(ErrorKind::Invalid, at, what));
        }
    }
    match value {
        Value::Object(map) => object(defs, schema, map, at, found),
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(defs, sub, v, &at.child(PathSeg::Index(i)), found);
                }
            }
        }
        _ => {}
    }
}

/// `required`, `properties` and `additionalProperties` applied to an object.
fn object(
    defs: &Map<String, Value>,
    schema: &Value,
    map: &Map<String, Value>,
    at: &FieldPath,
    found: &mut Findings,
) {
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if name.as_str().is_some_and(|n| !map.contains_key(n)) {
            found.breaches.push(breach(
                ErrorKind::Invalid,
                at,
                format!("{name} is a required property"),
            ));
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let extra = schema.get("additionalProperties");
    for (k, v) in map {
        let here = at.child(PathSeg::Key(k.clone()));
        match (props.and_then(|p| p.get(k)), extra) {
            (Some(sub), _) => walk(defs, sub, v, &here, found),
            (None, Some(sub)) if sub.is_object() => walk(defs, sub, v, &here, found),
            (None, Some(Value::Bool(true))) => {}
            (None, _) => {
                if let Some(props) = props {
                    found.unknown.push(unknown_key(k, props, &here));
                }
            }
        }
    }
}

/// The error of key `k`, which the schema's `props` do not have.
fn unknown_key(k: &str, props: &Map<String, Value>, here: &FieldPath) -> Error {
    let e = Error::new(
        ARGO,
        ErrorKind::UnknownField,
        format!("unknown key `{k}`: Argo's schema does not have it here"),
    )
    .at_path(here);
    match did_you_mean(k, props.keys().map(String::as_str)) {
        Some(best) => e.with_hint(format!("did you mean `{best}`?")),
        None => e.with_hint(format!(
            "the keys here are {}",
            props.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Argo's nine examples and every manifest strata's tests export (`tests/fixtures/argo`).
    fn corpus() -> Vec<Value> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/argo");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| {
                strata_doc::Document::yaml_value(&std::fs::read_to_string(p).unwrap()).unwrap()
            })
            .collect()
    }

    /// Every value under `v` with its JSON pointer, in document order.
    fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, sub) in map {
                    pointers(
                        sub,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            Value::Array(items) => {
                for (i, sub) in items.iter().enumerate() {
                    pointers(sub, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
        out.push(at);
    }

    /// The manifest with the value at `pointer` replaced by `by`, or the key removed.
    fn mutants(manifest: &Value) -> Vec<Value> {
        let mut at = Vec::new();
        pointers(manifest, String::new(), &mut at);
        let mut out = vec![manifest.clone()];
        for pointer in at.iter().filter(|p| !p.is_empty()) {
            let current = manifest.pointer(pointer).unwrap();
            let others = [
                json!("x"),
                json!(7),
                json!(1.5),
                json!(true),
                json!(null),
                json!([1]),
                json!({"k": 1}),
            ];
            for by in others
                .iter()
                .filter(|o| std::mem::discriminant(*o) != std::mem::discriminant(current))
            {
                let mut m = manifest.clone();
                *m.pointer_mut(pointer).unwrap() = by.clone();
                out.push(m);
            }
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            let mut m = manifest.clone();
            if let Some(map) = m.pointer_mut(parent).and_then(Value::as_object_mut) {
                map.shift_remove(&key.replace("~1", "/").replace("~0", "~"));
                out.push(m);
            }
        }
        out
    }

    /// The `jsonschema` crate's verdict on `manifest` against the Workflow definition: each
    /// failure as its JSON pointer and message, sorted.
    fn reference(validator: &jsonschema::Validator, manifest: &Value) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = validator
            .iter_errors(manifest)
            .map(|e| (e.instance_path.to_string(), format!("Argo's schema: {e}")))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// strata's verdict, in the same form.
    fn ours(manifest: &Value) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = schema_errors(manifest)
            .into_iter()
            .filter(|e| e.kind() != ErrorKind::UnknownField)
            .map(|e| (pointer_of(e.path()), e.message().to_string()))
            .collect();
        out.sort();
        out
    }

    /// The JSON pointer of a field path.
    fn pointer_of(path: &FieldPath) -> String {
        path.0
            .iter()
            .map(|seg| match seg {
                PathSeg::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
                PathSeg::Index(i) => format!("/{i}"),
            })
            .collect()
    }

    #[test]
    fn schema_verdicts_match_the_jsonschema_crate() {
        let mut root = strata_doc::json_value(SCHEMA).unwrap();
        let map = root.as_object_mut().unwrap();
        map.remove("oneOf");
        map.remove("type");
        map.insert("$ref".into(), json!(format!("#/definitions/{WORKFLOW}")));
        let validator = jsonschema::draft202012::new(&root).unwrap();
        let mut compared = 0;
        let mut breached = 0;
        for manifest in corpus() {
            for m in mutants(&manifest) {
                let want = reference(&validator, &m);
                assert_eq!(ours(&m), want, "{m:#}");
                compared += 1;
                breached += usize::from(!want.is_empty());
            }
        }
        // Every example, and hundreds of mutants that break the schema in each way.
        assert!(
            compared > 2000 && breached > 1000,
            "{compared} compared, {breached} refused"
        );
    }

    #[test]
    fn breaches_are_worded_as_json_schema_tools_word_them() {
        let m = json!({"apiVersion": "v1", "kind": "Workflow", "metadata": {}, "spec": {"parallelism": "two", "templates": [{"name": 3}]}});
        let text: Vec<String> = schema_errors(&m)
            .iter()
            .map(|e| format!("{}: {e}", e.kind().name()))
            .collect();
        assert_eq!(
            text,
            [
                "invalid: argo error at apiVersion: Argo's schema: \"argoproj.io/v1alpha1\" was expected",
                "type: argo error at spec.parallelism: Argo's schema: \"two\" is not of type \"integer\"",
                "type: argo error at spec.templates[0].name: Argo's schema: 3 is not of type \"string\"",
            ]
        );
    }
}
