//! `strata tools`: the tools of the project with their descriptions.

use std::process::ExitCode;

use clap::Args;

use serde_json::{json, Value};

use crate::outcome::open_project_as;
use crate::shared_args::SharedArgs;

/// Options of `strata tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata tools`: one line per tool, `id  description` (with `--json`, `{"ok", "tools":
/// [{"id", "graph", "description"} or {"id", "error"}…]}`); exits 1 when a file is invalid.
pub(crate) fn run(args: ToolsArgs) -> ExitCode {
    let json = args.shared.json;
    let project = match open_project_as(None, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let entries = project.list();
    if json {
        let tools: Vec<Value> = entries
            .iter()
            .map(|e| match &e.description {
                Ok(d) => json!({"id": e.id, "graph": project.is_graph(&e.id), "description": d}),
                Err(why) => json!({"id": e.id, "error": why}),
            })
            .collect();
        let ok = entries.iter().all(|e| e.description.is_ok());
        crate::output::print_json(&json!({"ok": ok, "tools": tools}));
        return if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let width = entries.iter().map(|e| e.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    let mut invalid = false;
    for e in &entries {
        let text = match &e.description {
            Ok(d) => d.clone(),
            Err(why) => {
                invalid = true;
                format!("(invalid: {why})")
            }
        };
        out.push_str(format!("{:<width$}  {text}", e.id).trim_end());
        out.push('\n');
    }
    crate::output::print(&out);
    if invalid {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
