//! `strata plan`: run, resolve, show and draw plans (SPEC §5, docs/plans.md).

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer, Limits};
use strata_doc::Document;
use strata_plans::draw::draw;
use strata_plans::{parse_document, Plan};

use crate::graph_cmd::DrawFormat;
use crate::report::format_error;
use crate::run::STRATA_FAILED;
use crate::scope_args::split_pair;

/// Options of `strata plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub command: PlanCommand,
}

/// The `strata plan` subcommands.
#[derive(Debug, Subcommand)]
pub enum PlanCommand {
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
pub fn run(args: PlanArgs) -> ExitCode {
    match args.command {
        PlanCommand::Run(a) => crate::plan_run::run(a),
        PlanCommand::Resolve(a) => crate::plan_resolve::run(a),
        PlanCommand::Show(a) => show(a),
        PlanCommand::Graph(a) => graph(a),
        PlanCommand::Step(a) => crate::plan_step::run(a),
    }
}

/// The name standard input has in messages.
pub const STDIN: &str = "<stdin>";

/// The error for line `number` of standard input being longer than a whole document may be.
fn too_long(number: usize, limits: &Limits) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Limit,
        format!(
            "line {number} of {STDIN} exceeds the limit of {} bytes",
            limits.document_bytes
        ),
    )
    .with_hint("split the plan, or pass large values as results")
}

fn read_error(name: &str, e: std::io::Error) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Io,
        format!("cannot read `{name}`: {e}"),
    )
}

/// Reads a plan document from a file, or from standard input for `-`; `shown` is the name
/// errors use (the path relative to the project when there is one).
pub fn read_document(path: &str, shown: &str, limits: &Limits) -> Result<Document, Error> {
    let bytes = if path == "-" {
        strata_doc::read_bounded(std::io::stdin().lock(), STDIN, limits)?
    } else {
        strata_doc::read_file(Path::new(path), shown, limits)?
    };
    parse_document(shown, bytes, limits)
}

/// A plan on standard input: a whole document, or steps as JSON Lines.
pub enum StdinPlan {
    /// A whole plan.
    Document(Document),
    /// Steps, one a line: the first non-blank line (with its number), and the rest.
    Stream((usize, String), BufReader<std::io::Stdin>),
}

/// Reads standard input far enough to tell a stream of steps (the first non-blank line is
/// a JSON object with a `tool`) from a whole plan (read to the end).
pub fn read_stdin(limits: &Limits) -> Result<StdinPlan, Error> {
    let mut reader = BufReader::new(std::io::stdin());
    let mut bytes = Vec::new();
    let mut number = 0;
    let mut line = Vec::new();
    while let Some(fits) = strata_doc::read_line(&mut reader, limits.document_bytes, &mut line)
        .map_err(|e| read_error(STDIN, e))?
    {
        number += 1;
        if !fits {
            return Err(too_long(number, limits));
        }
        if line.trim_ascii().is_empty() {
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
            continue;
        }
        let is_step = serde_json::from_slice::<Value>(&line)
            .is_ok_and(|v| v.as_object().is_some_and(|m| m.contains_key("tool")));
        if is_step {
            let text = String::from_utf8(std::mem::take(&mut line)).unwrap_or_default();
            return Ok(StdinPlan::Stream((number, text), reader));
        }
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
        break;
    }
    let rest = strata_doc::read_bounded(&mut reader, STDIN, limits)?;
    bytes.extend(rest);
    parse_document(STDIN, bytes, limits).map(StdinPlan::Document)
}

/// Prints errors rustc-style, with a snippet of `doc` when they point into it.
pub fn print_errors(errors: &[Error], doc: Option<&Document>) {
    let mut err = anstream::stderr().lock();
    for e in errors {
        let _ = err.write_all(format_error(e, doc).as_bytes());
    }
}

/// Reads and loads a plan for the commands that need no project (show, graph, resolve);
/// errors are printed.
fn load_plan(path: &str) -> Result<(Document, Plan), ExitCode> {
    let shown = if path == "-" { STDIN } else { path };
    let doc = read_document(path, shown, &Limits::default()).map_err(|e| {
        print_errors(&[e], None);
        ExitCode::from(STRATA_FAILED)
    })?;
    match Plan::load(&doc) {
        Ok(plan) => Ok((doc, plan)),
        Err(errors) => {
            print_errors(&errors, Some(&doc));
            Err(ExitCode::from(STRATA_FAILED))
        }
    }
}

/// User values from `--value NAME=TEXT` (strings) and `--value-json NAME=JSON`, added to
/// `values` (later ones win).
pub fn user_values(
    texts: &[String],
    jsons: &[String],
    values: &mut Map<String, Value>,
) -> Result<(), Error> {
    for pair in texts {
        let (k, v) = split_pair(pair, "--value")?;
        values.insert(k.to_string(), Value::String(v.to_string()));
    }
    for pair in jsons {
        let (k, v) = split_pair(pair, "--value-json")?;
        let parsed = serde_json::from_str(v).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                format!("--value-json `{k}` is not JSON: {e}"),
            )
        })?;
        values.insert(k.to_string(), parsed);
    }
    Ok(())
}

/// `` `a`, `b` `` for messages.
pub fn ticked(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Options of `strata plan show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The plan: a JSON or YAML file, or `-` for standard input
    pub plan: String,
    /// Print the steps, levels and user values as JSON
    #[arg(long)]
    pub json: bool,
}

/// The plan for people: per level, each step with its tool, what it waits for, its intent;
/// then the user values it needs.
pub fn outline(name: &str, plan: &Plan) -> String {
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
    let (doc, plan) = match load_plan(&args.plan) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let text = if args.json {
        serde_json::to_string_pretty(&plan.outline()).unwrap_or_default() + "\n"
    } else {
        outline(&doc.name, &plan)
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

/// Options of `strata plan graph`.
#[derive(Debug, Args)]
pub struct PlanGraphArgs {
    /// The plan: a JSON or YAML file, or `-` for standard input
    pub plan: String,
    /// The drawing format
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: DrawFormat,
}

fn graph(args: PlanGraphArgs) -> ExitCode {
    let (_, plan) = match load_plan(&args.plan) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let _ = std::io::stdout()
        .lock()
        .write_all(draw(&plan, args.format.into()).as_bytes());
    ExitCode::SUCCESS
}

/// The name of a plan file as the project shows it (`plans/x.yaml`; `<stdin>` for `-`).
pub fn shown_name(project: &strata_exec::Project, path: &str) -> String {
    if path == "-" {
        return STDIN.to_string();
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    project.display_name(&absolute)
}

/// Why a plan or export command stopped before it could report as it does: an error about
/// options, the project or the run, or the errors of a document (printed with its snippets).
pub enum Failure {
    /// One error.
    One(Error),
    /// The errors of a document.
    Plan(Vec<Error>, Box<Document>),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::One(e)
    }
}

impl Failure {
    /// Prints the failure (with a snippet of the file it points into) and returns the exit
    /// code of a command that failed.
    pub fn report(self, project: &strata_exec::Project) -> ExitCode {
        match self {
            Failure::One(e) => crate::run::print_error(&e, Some(project)),
            Failure::Plan(errors, doc) => print_errors(&errors, Some(&doc)),
        }
        ExitCode::from(STRATA_FAILED)
    }
}
