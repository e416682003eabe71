//! `strata graph <id> --format mermaid|dot`: a graph tool drawn.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use strata_app::App;
use strata_core::{Error, ErrorKind, Layer};
use strata_graph::draw::draw;

use crate::graphs::DrawFormat;
use crate::outcome::{open_project, print_error, STRATA_FAILED};
use crate::shared_args::SharedArgs;

/// Options of `strata graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Graph id (`graphs/retry`, or `retry` for a graph under tools/graphs/) or graph file
    pub graph: String,
    /// The drawing format
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: DrawFormat,
    #[command(flatten)]
    pub shared: SharedArgs,
}

/// The id of the graph named on the command line: a file, an id, or an id under `graphs/`.
fn graph_id(project: &App, name: &str) -> Result<String, Error> {
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        return project.id_of_path(Path::new(name));
    }
    let nested = format!("graphs/{name}");
    if project.tool_path(name).is_none() && project.tool_path(&nested).is_some() {
        return Ok(nested);
    }
    Ok(name.to_string())
}

/// Runs `strata graph`: draws the graph on stdout.
pub fn draw_cmd(args: GraphArgs) -> ExitCode {
    let project = match open_project(args.shared.project(), None) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let drawn = graph_id(&project, &args.graph).and_then(|id| {
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
            let _ = std::io::stdout()
                .lock()
                .write_all(draw(&graph, args.format.into()).as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            print_error(&e, Some(&project));
            ExitCode::from(STRATA_FAILED)
        }
    }
}
