//! `strata tools`: the tools of the project with their descriptions; with `--all`, its
//! directives and plans too.

use std::process::ExitCode;

use clap::Args;

use serde_json::{json, Value};

use crate::catalog;
use crate::outcome::open_project_as;
use crate::shared_args::SharedArgs;

/// Options of `strata tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Also list the directives (directives/) and the plans (plans/), each with its
    /// description
    #[arg(long)]
    pub(crate) all: bool,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata tools`: one line per tool, `id  description` (with `--json`, `{"ok", "tools":
/// [{"id", "graph", "description"} or {"id", "error"}…]}`), then with `--all` one per
/// directive and plan (`"directives"`, `"plans"`: `[{"path", "description"} or {"path",
/// "error"}…]`); exits 1 when a file is invalid.
pub(crate) fn run(args: ToolsArgs) -> ExitCode {
    let json = args.shared.json;
    let project = match open_project_as(None, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let entries = project.list();
    let (directives, plans) = match args.all {
        true => (catalog::directives(&project), catalog::plans(&project)),
        false => (Vec::new(), Vec::new()),
    };
    let ok = entries.iter().all(|e| e.description.is_ok())
        && directives
            .iter()
            .chain(&plans)
            .all(|e| e.description.is_ok());
    if json {
        let tools: Vec<Value> = entries
            .iter()
            .map(|e| match &e.description {
                Ok(d) => json!({"id": e.id, "graph": project.is_graph(&e.id), "description": d}),
                Err(why) => json!({"id": e.id, "error": why}),
            })
            .collect();
        let mut doc = json!({"ok": ok, "tools": tools});
        if args.all {
            doc["directives"] = files_json(&directives);
            doc["plans"] = files_json(&plans);
        }
        crate::output::print_json(&doc);
    } else {
        let rows: Vec<(&str, &Result<String, String>)> = entries
            .iter()
            .map(|e| (e.id.as_str(), &e.description))
            .chain(
                directives
                    .iter()
                    .chain(&plans)
                    .map(|e| (e.path.as_str(), &e.description)),
            )
            .collect();
        crate::output::print(table(&rows));
    }
    match ok {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}

/// Directive or plan entries as JSON.
fn files_json(entries: &[catalog::Entry]) -> Value {
    let all = entries.iter().map(|e| match &e.description {
        Ok(d) => json!({"path": e.path, "description": d}),
        Err(why) => json!({"path": e.path, "error": why}),
    });
    Value::Array(all.collect())
}

/// One line per row, `name  description` aligned (`(invalid: why)` for a file that cannot
/// be read).
fn table(rows: &[(&str, &Result<String, String>)]) -> String {
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (name, description) in rows {
        let text = match description {
            Ok(d) => d.clone(),
            Err(why) => format!("(invalid: {why})"),
        };
        out.push_str(format!("{name:<width$}  {text}").trim_end());
        out.push('\n');
    }
    out
}
