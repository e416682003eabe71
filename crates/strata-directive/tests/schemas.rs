//! The committed editor schemas (`docs/schemas/`) are exactly what the Rust types generate.
//! After changing the types, regenerate them with `UPDATE_SCHEMAS=1 cargo test -p strata-directive`.

use std::path::Path;

use serde_json::Value;
use strata_directive::{front_matter_schema, hook_file_schema};

fn in_sync(file: &str, generated: Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas")
        .join(file);
    let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed, text,
        "{file} is out of date: run UPDATE_SCHEMAS=1 cargo test -p strata-directive"
    );
}

#[test]
fn directive_schema_is_generated_from_the_types() {
    in_sync("directive.schema.json", front_matter_schema());
}

#[test]
fn hook_schema_is_generated_from_the_types() {
    in_sync("hook.schema.json", hook_file_schema());
}

#[test]
fn the_directive_schema_names_every_front_matter_field() {
    let schema = front_matter_schema();
    let mut keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "actions",
            "description",
            "hooks",
            "inputs",
            "limits",
            "model",
            "name",
            "responses",
            "version"
        ]
    );
    assert_eq!(schema["additionalProperties"], Value::Bool(false));
}
