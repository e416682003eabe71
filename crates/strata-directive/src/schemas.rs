//! JSON Schemas for editors, generated from the types the loader reads.

use serde_json::{json, Value};

use crate::front_matter::{FrontMatter, HookSpec};

/// The schema of a directive's front matter.
pub fn front_matter_schema() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(FrontMatter)).unwrap_or_default();
    schema["title"] = json!("strata directive front matter");
    schema
}

/// The schema of a project hook file (`hooks/*.yaml`): one hook or a list of hooks.
pub fn hook_file_schema() -> Value {
    let mut hook = serde_json::to_value(schemars::schema_for!(HookSpec)).unwrap_or_default();
    let defs = hook
        .as_object_mut()
        .and_then(|o| o.remove("$defs"))
        .unwrap_or_else(|| json!({}));
    if let Some(o) = hook.as_object_mut() {
        o.remove("$schema");
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "strata hook file",
        "anyOf": [hook, {"type": "array", "items": {"$ref": "#/anyOf/0"}}],
        "$defs": defs,
    })
}
