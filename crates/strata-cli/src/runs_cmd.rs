//! `strata runs`: the graph and plan runs of the project (`.strata/runs/`), oldest first,
//! with status; `strata runs show` and `strata runs prune` are their own modules.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::Value;
use strata_graph::RunStore;

use crate::outcome::open_project_as;
use crate::runs_table::{rows, table};
use crate::shared_args::SharedArgs;

/// Options of `strata runs`.
#[derive(Debug, Args)]
pub(crate) struct RunsArgs {
    /// Show one run, or remove finished ones (without: list every run)
    #[command(subcommand)]
    pub(crate) action: Option<RunsAction>,
    /// The global options; `--json` prints the runs as a JSON list (with start and update
    /// times, Unix seconds), a run (`show`) as its checkpoint, what `prune` removed
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// `strata runs show` and `strata runs prune`.
#[derive(Debug, Subcommand)]
pub(crate) enum RunsAction {
    /// Show one run: its status, inputs, state, result and errors, or its steps (plans)
    Show(crate::runs_show::ShowArgs),
    /// Remove finished runs (completed, failed, limited), or those of --status, older than
    /// --older-than
    Prune(crate::runs_prune::PruneArgs),
}

/// Runs `strata runs`.
pub(crate) fn run(args: RunsArgs) -> ExitCode {
    let json = args.shared.json;
    let project = match open_project_as(None, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let store = RunStore::new(&project.root);
    match args.action {
        Some(RunsAction::Show(show)) => {
            return crate::runs_show::run(&project, &store, &show, json)
        }
        Some(RunsAction::Prune(prune)) => return crate::runs_prune::run(&store, &prune, json),
        None => {}
    }
    let rows = rows(&store);
    let text = if json {
        let list: Vec<&Value> = rows.iter().map(|r| &r.json).collect();
        serde_json::to_string_pretty(&list).unwrap_or_default() + "\n"
    } else if rows.is_empty() {
        "no runs yet\n".to_string()
    } else {
        table(&rows)
    };
    crate::output::print(&text);
    ExitCode::SUCCESS
}
