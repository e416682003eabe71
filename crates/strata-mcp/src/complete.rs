//! `completion/complete`: the values an argument can take, by the argument's name — run ids
//! for `run_id`, exposed item names for `name` (a source's), `tool` and `id`, template names
//! for `key` and `prompt` — those that start with what the client typed, at most 100.

use serde_json::{json, Value};

use crate::server::Shared;

/// The most values one answer holds (MCP's limit).
const MOST: usize = 100;

/// The values of argument `name` that start with `typed`.
pub(crate) fn values(shared: &Shared, name: &str, typed: &str) -> Vec<String> {
    let all: Vec<String> = match name {
        "run_id" | "run" => crate::resources::run_ids(&shared.app),
        "name" | "tool" | "id" => shared
            .catalog()
            .items()
            .iter()
            .map(|i| i.name.clone())
            .collect(),
        "key" | "prompt" => crate::prompts::keys(&shared.app).unwrap_or_default(),
        _ => Vec::new(),
    };
    all.into_iter().filter(|v| v.starts_with(typed)).collect()
}

/// The answer for `values`: the first hundred, their total, and whether more were left out.
pub(crate) fn result(values: Vec<String>) -> Value {
    let total = values.len();
    let shown: Vec<String> = values.into_iter().take(MOST).collect();
    json!({"completion": {"values": shown, "total": total, "hasMore": total > MOST}})
}
