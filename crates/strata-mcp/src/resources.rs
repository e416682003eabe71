//! Read-only resources: each run record under `.strata/runs/` (`strata://runs/{run_id}`,
//! its checkpoint as `strata runs show --json` reads it: markers, never secret values) and
//! each exposed item's source file (`strata://source/{name}`).

use serde_json::{json, Value};
use strata_app::App;
use strata_core::{Error, ErrorKind};
use strata_runs::RunStore;

use crate::catalog::Catalog;

/// The URI of run `id`.
const RUNS: &str = "strata://runs/";
/// The URI of item `name`'s source.
const SOURCES: &str = "strata://source/";

/// Every resource: the runs, newest id last, then the items' sources.
pub(crate) fn list(app: &App, catalog: &Catalog) -> Vec<Value> {
    let mut out: Vec<Value> = run_ids(app)
        .into_iter()
        .map(|id| {
            json!({
                "uri": format!("{RUNS}{id}"),
                "name": id,
                "title": format!("Run {id}"),
                "description": "A plan or graph run's record: its status and every finished step's record",
                "mimeType": "application/json",
            })
        })
        .collect();
    for item in catalog.items() {
        let Some(source) = &item.source else {
            continue;
        };
        out.push(json!({
            "uri": format!("{SOURCES}{}", item.name),
            "name": item.id,
            "title": format!("Source of {}", item.id),
            "mimeType": mime(source),
        }));
    }
    out
}

/// The resource templates: a run by id, an item's source by name.
pub(crate) fn templates() -> Vec<Value> {
    vec![
        json!({
            "uriTemplate": format!("{RUNS}{{run_id}}"),
            "name": "run",
            "title": "A run record",
            "description": "The record of the plan or graph run with this id",
            "mimeType": "application/json",
        }),
        json!({
            "uriTemplate": format!("{SOURCES}{{name}}"),
            "name": "source",
            "title": "An item's source file",
            "description": "The file of the tool, graph, directive or plan with this MCP name",
        }),
    ]
}

/// The ids of the project's runs, sorted.
pub(crate) fn run_ids(app: &App) -> Vec<String> {
    let mut ids: Vec<String> = RunStore::new(&app.root)
        .runs()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.sort();
    ids
}

/// The contents of the resource at `uri`, or why it cannot be read.
pub(crate) fn read(app: &App, catalog: &Catalog, uri: &str) -> Result<Value, Error> {
    let (text, mime_type) = if let Some(id) = uri.strip_prefix(RUNS) {
        let dir = RunStore::new(&app.root).open(id)?;
        let bytes = dir.read_checkpoint()?;
        (
            String::from_utf8_lossy(&bytes).into_owned(),
            "application/json",
        )
    } else if let Some(name) = uri.strip_prefix(SOURCES) {
        let source = catalog
            .get(name)
            .and_then(|item| item.source.as_ref())
            .ok_or_else(|| unknown(uri))?;
        (app.read_text(source)?, mime(source))
    } else {
        return Err(unknown(uri));
    };
    Ok(json!({"contents": [{"uri": uri, "mimeType": mime_type, "text": text}]}))
}

fn unknown(uri: &str) -> Error {
    crate::request_error(
        ErrorKind::UnknownName,
        format!("no resource `{}`", strata_core::shown(uri)),
        "resources/list lists them: strata://runs/{run_id} and strata://source/{name}",
    )
}

fn mime(path: &std::path::Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        _ => "application/yaml",
    }
}
