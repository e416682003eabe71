//! `strata runs`: the graph runs of the project (`.strata/runs/`), oldest first, with status.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Value};
use strata_graph::{GraphRuns, RunStore, RunSummary};

use crate::run::open_project;

/// Options of `strata runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Print the runs as a JSON list (with start and update times, Unix seconds)
    #[arg(long)]
    pub json: bool,
    /// The project root (default: the nearest ancestor of the current directory with tools/)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

fn row(r: &RunSummary) -> [String; 5] {
    let graph = match &r.graph {
        Ok(g) => g.clone(),
        Err(why) => format!("(unreadable: {why})"),
    };
    [
        r.run_id.clone(),
        graph,
        r.shown_status().to_string(),
        r.steps.to_string(),
        r.node.clone().unwrap_or_else(|| "-".into()),
    ]
}

/// The table for people: run, graph, status (`running`, `interrupted`, `completed`, `failed`,
/// `limited`), steps, next node; columns aligned.
pub fn table(runs: &[RunSummary]) -> String {
    let mut rows = vec![["RUN", "GRAPH", "STATUS", "STEPS", "NEXT"].map(str::to_string)];
    rows.extend(runs.iter().map(row));
    let mut widths = [0usize; 5];
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn to_json(r: &RunSummary) -> Value {
    json!({
        "run_id": r.run_id,
        "graph": r.graph.as_ref().ok(),
        "error": r.graph.as_ref().err(),
        "status": r.shown_status(),
        "steps": r.steps,
        "next": r.node,
        "started": r.started,
        "updated": r.updated,
    })
}

/// Runs `strata runs`.
pub fn run(args: RunsArgs) -> ExitCode {
    let project = match open_project(args.project.as_deref(), None) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let runs = RunStore::new(&project.root).list();
    let text = if args.json {
        let list: Vec<Value> = runs.iter().map(to_json).collect();
        serde_json::to_string_pretty(&list).unwrap_or_default() + "\n"
    } else if runs.is_empty() {
        "no runs yet\n".to_string()
    } else {
        table(&runs)
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}
