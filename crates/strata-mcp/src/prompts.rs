//! The project's prompt templates as MCP prompts: one per template name (the keys `strata
//! prompt render` takes), described with the template it resolves to and the fallback chain
//! it resolves through (SPEC §6); its arguments are the feed variables the template needs,
//! and `prompts/get` renders it with the arguments as the feed.

use serde_json::{json, Map, Value};
use strata_app::App;
use strata_core::{Error, Undefined};
use strata_prompts::{Call, PromptManager};

/// The project's templates, or none when it has no `prompts/`.
fn manager(app: &App) -> Result<Option<PromptManager>, Error> {
    if !app.root.join("prompts").is_dir() {
        return Ok(None);
    }
    PromptManager::load(&app.root, &app.limits).map(Some)
}

/// Every template name of the project, sorted.
pub(crate) fn keys(app: &App) -> Result<Vec<String>, Error> {
    let Some(manager) = manager(app)? else {
        return Ok(Vec::new());
    };
    Ok(manager.keys())
}

/// The MCP prompts of the project.
pub(crate) fn list(app: &App) -> Result<Vec<Value>, Error> {
    let Some(manager) = manager(app)? else {
        return Ok(Vec::new());
    };
    let mut prompts = Vec::new();
    for key in manager.keys() {
        let chain = manager.fallback_chain(Some(&key))?;
        let Some(template) = manager.resolve(Some(&key))?.map(str::to_string) else {
            continue;
        };
        let arguments: Vec<Value> = manager
            .needs(&template)
            .into_iter()
            .map(|name| json!({"name": name, "description": "a feed variable", "required": false}))
            .collect();
        prompts.push(json!({
            "name": key,
            "title": format!("Prompt {key}"),
            "description": format!(
                "Renders template {template}, looked up through {}",
                chain.join(" → ")
            ),
            "arguments": arguments,
        }));
    }
    Ok(prompts)
}

/// `prompts/get`: the template `name` resolves to, rendered with `arguments` as the feed
/// (a missing variable is an error when `strict`); `None` when the project has no such
/// template name.
pub(crate) fn get(
    app: &App,
    name: &str,
    arguments: &Map<String, Value>,
    strict: bool,
) -> Result<Option<Value>, Error> {
    let Some(manager) = manager(app)? else {
        return Ok(None);
    };
    if !manager.keys().iter().any(|k| k == name) {
        return Ok(None);
    }
    let call = Call {
        feed: Some(arguments),
        undefined: if strict {
            Undefined::Strict
        } else {
            Undefined::Warn
        },
        ..Call::key(name)
    };
    let rendered = manager.render(&call)?;
    let text = rendered
        .variants
        .first()
        .map(|v| v.text.clone())
        .unwrap_or_default();
    Ok(Some(json!({
        "description": format!("Template {} ({})", rendered.template, rendered.file),
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    })))
}
