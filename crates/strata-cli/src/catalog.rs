//! The project's directives and plans as `strata tools --all` lists them (and completion
//! reads a directive's inputs from): each file with what it says of itself, or why it
//! cannot be read.

use serde_json::Value;
use strata_app::App;
use strata_doc::{Document, Format};

/// One directive or plan file.
pub(crate) struct Entry {
    /// Its path from the project root (`directives/greet.md`, `plans/diamond.yaml`).
    pub(crate) path: String,
    /// Its description (a directive's `description`, else its name; a plan's step count),
    /// or why it cannot be read.
    pub(crate) description: Result<String, String>,
}

/// The front matter of the directive file `path` (under the project), as a value.
pub(crate) fn front_matter(app: &App, path: &std::path::Path) -> Result<Value, String> {
    let name = app.display_name(path);
    let text = app.read_text(path).map_err(|e| e.message().to_string())?;
    let source =
        strata_directive::Source::split(&name, &text).map_err(|e| e.message().to_string())?;
    Document::parse(&name, source.front.into_bytes(), Format::Yaml, &app.limits)
        .map(|doc| doc.value)
        .map_err(|e| e.message().to_string())
}

/// Every directive under `directives/`, sorted.
pub(crate) fn directives(app: &App) -> Vec<Entry> {
    strata_doc::walk(&app.root.join("directives"), &["md"])
        .into_iter()
        .map(|path| {
            let description = front_matter(app, &path).map(|front| {
                front["description"]
                    .as_str()
                    .or(front["name"].as_str())
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string()
            });
            Entry {
                path: app.display_name(&path),
                description,
            }
        })
        .collect()
}

/// Every plan under `plans/`, sorted.
pub(crate) fn plans(app: &App) -> Vec<Entry> {
    strata_doc::walk(&app.root.join("plans"), &["yaml", "yml", "json"])
        .into_iter()
        .map(|path| {
            let name = app.display_name(&path);
            let description = app
                .read(&path)
                .and_then(|bytes| {
                    Document::parse(&name, bytes, Format::from_name(&name), &app.limits)
                })
                .map_err(|e| e.message().to_string())
                .and_then(|doc| {
                    strata_plans::Plan::load(&doc).map_err(|errors| {
                        errors
                            .first()
                            .map(|e| e.message().to_string())
                            .unwrap_or_default()
                    })
                })
                .map(|plan| match plan.steps.len() {
                    1 => "a plan of 1 step".to_string(),
                    n => format!("a plan of {n} steps"),
                });
            Entry {
                path: name,
                description,
            }
        })
        .collect()
}
