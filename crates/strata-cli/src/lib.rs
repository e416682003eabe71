//! The `strata` command line. Each command lives in its own module; `report` renders
//! diagnostics for people.

mod check_cmd;
mod completions_cmd;
mod config_cmd;
mod explain_cmd;
mod export_cmd;
mod graph_cmd;
mod graphs;
mod init_cmd;
mod outcome;
mod plan_cmd;
mod plan_input;
mod plan_resolve;
mod plan_run;
mod plan_step;
mod progress;
mod prompt_cmd;
mod render;
mod report;
mod respond_cmd;
mod run;
mod run_args;
mod run_directive;
mod run_graph;
mod runs_cmd;
mod runs_prune;
mod runs_show;
mod runs_table;
mod scope_args;
mod shared_args;
mod style;
mod tools;
mod walk_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// strata: layered interpolation of tool-execution configs.
#[derive(Debug, Parser)]
#[command(
    name = "strata",
    version = env!("STRATA_VERSION"),
    about = "Layered interpolation of tool-execution configs, and the tools, directives, graphs and plans they describe",
    long_about = None
)]
struct Cli {
    /// When to colour diagnostics and progress (auto: when the output is a terminal and
    /// NO_COLOR is not set)
    #[arg(
        long,
        value_enum,
        global = true,
        value_name = "WHEN",
        default_value = "auto"
    )]
    color: style::ColorWhen,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a new project: runtimes, an example tool, a directive and a graph that run
    Init(init_cmd::InitArgs),
    /// Render a YAML or JSON document through the interpolation layers
    Render(render::RenderArgs),
    /// Check every tool, runtime, directive, hook and plan for mistakes
    Check(check_cmd::CheckArgs),
    /// Show each field of a tool or directive after every stage, with the origin of each segment
    Explain(explain_cmd::ExplainArgs),
    /// Run a tool (a real subprocess), a directive (`.md`) or a graph
    Run(run_args::RunArgs),
    /// List the project's tools with their descriptions
    Tools(tools::ToolsArgs),
    /// Draw a graph tool (nodes, and edges with their conditions) as Mermaid or Graphviz
    Graph(graph_cmd::GraphArgs),
    /// List the graph and plan runs of the project (.strata/runs/); show one; prune old ones
    Runs(runs_cmd::RunsArgs),
    /// Render and list the prompt templates of prompts/ (lookup with fallback by key)
    Prompt(prompt_cmd::PromptArgs),
    /// Render a canned response from standard fields, tool results and a generator tool
    Respond(respond_cmd::RespondArgs),
    /// Run, resolve, show or draw a plan: steps whose arguments refer to earlier results
    Plan(plan_cmd::PlanArgs),
    /// Export a plan or a graph to another engine (Argo Workflows), or check an Argo manifest
    Export(export_cmd::ExportArgs),
    /// Run one node of a graph from the checkpoint the node before it left (what an exported workflow's task runs)
    Walk(walk_cmd::WalkArgs),
    /// Show the project's settings (strata.yaml, STRATA_* variables) and where each came from
    Config(config_cmd::ConfigArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(completions_cmd::CompletionsArgs),
}

/// Runs the command line and returns the process exit code.
///
/// Every command that starts a tool has the interrupt handler installed before the first
/// one starts: on SIGINT, SIGTERM, SIGHUP or SIGQUIT the process group of every tool strata
/// started is killed and reaped, then strata dies of that signal (see
/// `strata_app::install_interrupt_handler_on_spawn`).
pub fn main() -> ExitCode {
    strata_app::install_interrupt_handler_on_spawn();
    let cli = Cli::parse();
    cli.color.apply();
    match cli.command {
        Command::Init(args) => init_cmd::run(args),
        Command::Completions(args) => completions_cmd::run(args),
        Command::Config(args) => config_cmd::run(args),
        Command::Render(args) => render::run(args),
        Command::Check(args) => check_cmd::run(args),
        Command::Explain(args) => explain_cmd::run(args),
        Command::Run(args) => run::run(args),
        Command::Tools(args) => tools::run(args),
        Command::Graph(args) => graph_cmd::draw_cmd(args),
        Command::Runs(args) => runs_cmd::run(args),
        Command::Prompt(args) => prompt_cmd::run(args),
        Command::Respond(args) => respond_cmd::run(args),
        Command::Plan(args) => plan_cmd::run(args),
        Command::Export(args) => export_cmd::run(args),
        Command::Walk(args) => walk_cmd::run(args),
    }
}
