//! The `strata` command line. Each command lives in its own module; `report` renders
//! diagnostics for people. Only the binary uses this crate: it exports [`main`] alone.
#![deny(unreachable_pub)]

mod catalog;
mod check_cmd;
mod complete;
mod completions_cmd;
mod config_cmd;
mod examples;
mod explain_cmd;
mod export_cmd;
mod graph_cmd;
mod graphs;
mod help_cmd;
mod import_cmd;
mod init_cmd;
mod man_cmd;
#[cfg(feature = "mcp")]
mod mcp_cmd;
mod names;
mod outcome;
mod output;
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
mod topics;
mod usage;
mod walk_cmd;

use std::process::ExitCode;

use clap::error::ContextValue;
use clap::{CommandFactory, Parser, Subcommand};

/// strata: layered interpolation of tool-execution configs.
#[derive(Debug, Parser)]
#[command(
    name = "strata",
    version = env!("STRATA_VERSION"),
    about = "Layered interpolation of tool-execution configs, and the tools, directives, graphs and plans they describe",
    long_about = None,
    disable_help_subcommand = true,
    max_term_width = 100
)]
struct Cli {
    /// The global options (docs/settings.md, "Global options"), also flattened into each
    /// command's own options
    #[command(flatten)]
    shared: shared_args::SharedArgs,
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
    /// Import another system's project into a new strata project (`strata import ryeos SRC DST`)
    Import(import_cmd::ImportArgs),
    /// Show the project's settings (strata.yaml, STRATA_* variables) and where each came from
    Config(config_cmd::ConfigArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell): commands,
    /// options and the project's tools, directives, graphs, plans, prompt keys and run ids
    Completions(completions_cmd::CompletionsArgs),
    /// Print the manual page of strata or of a command, or install every page (--install DIR)
    Man(man_cmd::ManArgs),
    /// Serve the project to LLM agents over the Model Context Protocol (stdio, or HTTP with --http)
    #[cfg(feature = "mcp")]
    Mcp(mcp_cmd::McpCmd),
    /// Print the help of strata or of a command, or a topic: exit-codes, environment, settings
    Help(help_cmd::HelpArgs),
    /// Watch the project's plan and graph runs, live, in the browser (a page on 127.0.0.1)
    #[cfg(feature = "view")]
    View(strata_view::ViewArgs),
    /// Serve the Language Server Protocol over standard input and output (docs/lsp.md)
    #[cfg(feature = "lsp")]
    Lsp,
}

/// `strata run …` parsed with only the `run` command built (with the global options, as
/// [`Cli`] defines both): building every command's options is a good part of what strata
/// does before it runs a tool. `None` — and the whole command line is parsed as usual — for
/// any other command, for a line that asks for help or the version, and for a line that does
/// not parse (so that every message comes from the whole command line).
fn parse_run() -> Option<Cli> {
    use clap::{Args, FromArgMatches};
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).and_then(|a| a.to_str()) != Some("run") {
        return None;
    }
    let asks = |a: &std::ffi::OsString| {
        matches!(
            a.to_str(),
            Some("-h" | "--help" | "-V" | "--version" | "help")
        )
    };
    if args.iter().skip(2).any(asks) {
        return None;
    }
    let run = run_args::RunArgs::augment_args(clap::Command::new("run"));
    let cli = shared_args::SharedArgs::augment_args(clap::Command::new("strata"))
        .subcommand(run)
        .subcommand_required(true);
    let matches = cli.try_get_matches_from(&args).ok()?;
    Cli::from_arg_matches(&matches).ok()
}

/// The whole command line as clap defines it, with the examples of every command and the
/// list of topics: what parsing, completion, man pages and `--help` are made from.
pub(crate) fn command() -> clap::Command {
    let cmd = examples::add(Cli::command(), "");
    let after = cmd
        .get_after_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    cmd.after_help(format!("{after}\n\n{}", topics::list()))
}

/// The whole command line parsed (see [`command`]).
fn parse() -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    Cli::from_arg_matches(&command().try_get_matches()?)
}

/// Runs the command line and returns the process exit code.
///
/// The process is strata's own (`strata_app::own_process`): every command that starts a tool
/// has the interrupt handler installed before the first one starts (on SIGINT, SIGTERM,
/// SIGHUP or SIGQUIT the process group of every tool strata started is killed and reaped,
/// then strata dies of that signal), and strata reaps its orphaned descendants. Whatever the
/// command, a failed write of standard output is its outcome (`output::finish`).
pub fn main() -> ExitCode {
    complete::answer_and_exit();
    strata_app::own_process();
    let code = match parse_run().map_or_else(parse, Ok) {
        Ok(cli) => dispatch(cli),
        Err(e) => not_run(e),
    };
    output::finish(code)
}

/// A command line that runs no command: the help or the version, printed on standard output,
/// or a usage error on standard error (as JSON on standard output with `--json`), the
/// caller's words in it as every message quotes them (`strata_core::shown`), coloured as
/// the line's `--color` says; its exit code.
fn not_run(mut e: clap::Error) -> ExitCode {
    let asked = usage::Asked::of(&std::env::args_os().collect::<Vec<_>>());
    asked.color.apply();
    if e.use_stderr() {
        let quoted: Vec<_> = e
            .context()
            .filter_map(|(kind, value)| match value {
                ContextValue::String(s) => {
                    Some((kind, ContextValue::String(strata_core::shown(s))))
                }
                ContextValue::Strings(all) => Some((
                    kind,
                    ContextValue::Strings(all.iter().map(|s| strata_core::shown(s)).collect()),
                )),
                _ => None,
            })
            .collect();
        for (kind, value) in quoted {
            e.insert(kind, value);
        }
        if asked.json {
            output::print_json(&strata_app::Failure::Error(usage::as_error(&e)).to_json());
        } else {
            style::eprint_all(&e.render().ansi().to_string());
        }
    } else {
        output::print_styled(&e.render().ansi().to_string());
    }
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(outcome::STRATA_FAILED))
}

/// Runs the command of `cli`.
fn dispatch(cli: Cli) -> ExitCode {
    cli.shared.color.apply();
    outcome::set_verbose(cli.shared.verbose());
    if let Err(e) = cli.shared.enter() {
        return outcome::report(strata_app::Failure::Error(e), None, cli.shared.json);
    }
    match cli.command {
        Command::Init(args) => init_cmd::run(args),
        Command::Completions(args) => completions_cmd::run(args),
        Command::Man(args) => man_cmd::run(args),
        Command::Help(args) => help_cmd::run(args),
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
        Command::Import(args) => import_cmd::run(args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => mcp_cmd::run(args),
        #[cfg(feature = "view")]
        Command::View(args) => strata_view::run(args),
        #[cfg(feature = "lsp")]
        Command::Lsp => strata_lsp::main(),
    }
}
