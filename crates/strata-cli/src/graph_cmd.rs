//! `strata graph <id> --format mermaid|dot`: a graph tool drawn.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use strata_app::Failure;
use strata_core::{Error, ErrorKind, Layer};
use strata_graph::draw::draw;

use crate::graphs::DrawFormat;
use crate::outcome::{open_project_as, report};
use crate::shared_args::SharedArgs;

/// Options of `strata graph`.
#[derive(Debug, Args)]
pub(crate) struct GraphArgs {
    /// Graph id (`graphs/retry`, or `retry` for a graph under tools/graphs/) or graph file
    #[arg(add = crate::complete::graphs())]
    pub(crate) graph: String,
    /// The drawing format
    #[arg(long, value_enum, default_value = "mermaid")]
    pub(crate) format: DrawFormat,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata graph`: draws the graph on stdout.
pub(crate) fn draw_cmd(args: GraphArgs) -> ExitCode {
    let json = args.shared.json;
    let project = match open_project_as(None, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let drawn = crate::names::tool_id(&project, &args.graph).and_then(|id| {
        if project.tool_path(&id).is_some() && !project.is_graph(&id) {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!("`{id}` is not a graph"),
            )
            .with_hint("graphs are tool files with `kind: graph`"));
        }
        project.load_graph(&id)
    });
    match drawn {
        Ok(graph) => {
            print_drawing(draw(&graph, args.format.into()), args.format, json);
            ExitCode::SUCCESS
        }
        Err(e) => report(Failure::Error(e), Some(&project), json),
    }
}

/// Prints a drawing on stdout: as it is, or with `json` as `{"ok": true, "format": …,
/// "drawing": …}` (docs/schemas/drawing.schema.json).
pub(crate) fn print_drawing(drawing: String, format: DrawFormat, json: bool) {
    let text = if json {
        let name = format
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        let value = serde_json::json!({"ok": true, "format": name, "drawing": drawing});
        serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
    } else {
        drawing
    };
    crate::output::print(&text);
}
