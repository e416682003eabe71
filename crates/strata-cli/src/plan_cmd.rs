//! `strata plan`: run, resolve, show and draw plans (SPEC §5, docs/plans.md).

use std::process::ExitCode;

use clap::{Args, Subcommand};
use strata_core::Limits;
use strata_doc::Document;
use strata_plans::draw::draw;
use strata_plans::Plan;

use crate::graphs::DrawFormat;
use crate::outcome::report;
use crate::plan_input::{read_document, STDIN};
use crate::shared_args::SharedArgs;
use strata_app::Failure;

/// Options of `strata plan`.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    #[command(subcommand)]
    pub(crate) command: PlanCommand,
}

/// The `strata plan` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum PlanCommand {
    /// Run a plan's steps with the project's tools, independent steps in parallel
    Run(crate::plan_run::PlanRunArgs),
    /// Resolve a plan against the results known so far (JSON reply; --batch: JSON Lines)
    Resolve(crate::plan_resolve::ResolveArgs),
    /// Print a plan's steps, their dependencies and levels
    Show(ShowArgs),
    /// Draw a plan's dependency graph as Mermaid or Graphviz
    Graph(PlanGraphArgs),
    /// Run one step given the records of the steps it depends on (what an exported workflow's task runs)
    Step(crate::plan_step::StepArgs),
}

/// Runs `strata plan`.
pub(crate) fn run(args: PlanArgs) -> ExitCode {
    match args.command {
        PlanCommand::Run(a) => crate::plan_run::run(a),
        PlanCommand::Resolve(a) => crate::plan_resolve::run(a),
        PlanCommand::Show(a) => show(a),
        PlanCommand::Graph(a) => graph(a),
        PlanCommand::Step(a) => crate::plan_step::run(a),
    }
}

/// Reads and loads a plan for the commands that need no project (show, graph); errors are
/// printed (as JSON with `json`).
fn load_plan(path: &str, json: bool) -> Result<(Document, Plan), ExitCode> {
    let shown = if path == "-" { STDIN } else { path };
    let doc = read_document(path, shown, &Limits::default())
        .map_err(|e| report(Failure::Error(e), None, json))?;
    match Plan::load(&doc) {
        Ok(plan) => Ok((doc, plan)),
        Err(errors) => Err(report(
            Failure::Document {
                errors,
                doc: Box::new(doc),
            },
            None,
            json,
        )),
    }
}

/// Options of `strata plan show`.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The plan: a JSON or YAML file, or `-` for standard input
    #[arg(add = crate::complete::plans())]
    pub(crate) plan: String,
    /// `--json` prints the steps, levels and user values as JSON
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// The plan for people: per level, each step with its tool, what it waits for, its intent;
/// then the user values it needs.
pub(crate) fn outline(name: &str, plan: &Plan) -> String {
    let levels = plan.levels();
    let mut out = format!(
        "{name}: {} steps in {} levels\n",
        plan.steps.len(),
        levels.len()
    );
    for (k, level) in levels.iter().enumerate() {
        out.push_str(&format!("level {k}\n"));
        for &i in level {
            let step = &plan.steps[i];
            out.push_str(&format!("  {} ({})", step.id, step.tool));
            if !plan.deps[i].is_empty() {
                let deps: Vec<&str> = plan.deps[i]
                    .iter()
                    .map(|&d| plan.steps[d].id.as_str())
                    .collect();
                out.push_str(&format!(" after {}", deps.join(", ")));
            }
            out.push('\n');
            if let Some(intent) = &step.intent {
                out.push_str(&format!("    intent: {intent}\n"));
            }
        }
    }
    let values = plan.value_names();
    if !values.is_empty() {
        out.push_str(&format!("user values: {}\n", values.join(", ")));
    }
    out
}

fn show(args: ShowArgs) -> ExitCode {
    let (doc, plan) = match load_plan(&args.plan, args.shared.json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let text = if args.shared.json {
        serde_json::to_string_pretty(&plan.outline()).unwrap_or_default() + "\n"
    } else {
        outline(&doc.name, &plan)
    };
    crate::output::print(&text);
    ExitCode::SUCCESS
}

/// Options of `strata plan graph`.
#[derive(Debug, Args)]
pub(crate) struct PlanGraphArgs {
    /// The plan: a JSON or YAML file, or `-` for standard input
    #[arg(add = crate::complete::plans())]
    pub(crate) plan: String,
    /// The drawing format
    #[arg(long, value_enum, default_value = "mermaid")]
    pub(crate) format: DrawFormat,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

fn graph(args: PlanGraphArgs) -> ExitCode {
    let (_, plan) = match load_plan(&args.plan, args.shared.json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let drawn = draw(&plan, args.format.into());
    crate::graph_cmd::print_drawing(drawn, args.format, args.shared.json);
    ExitCode::SUCCESS
}
