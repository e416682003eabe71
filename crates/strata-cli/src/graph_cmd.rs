//! `strata run tools/graphs/<id>.yaml` (a graph tool, with checkpoints and `--resume`) and
//! `strata graph <id> --format mermaid|dot`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{Map, Value};
use strata_core::{drawing, Error, ErrorKind, Layer, RenderOptions};
use strata_doc::{Document, Format};
use strata_exec::{ExecOptions, Project};
use strata_graph::draw::draw;
use strata_graph::{
    is_graph_document, new_run_id, Checkpoints, Graph, LogEvent, Observer, RunStore, Status, Walker,
};

use crate::exec_runner::ExecRunner;
use crate::run::{open_project, print_error, RunArgs, STRATA_FAILED};
use crate::run_target::{refuse_options, Target};
use crate::scope_args::split_pair;
use crate::style::{paint, ERROR, OK};

/// Exit code of a run that failed.
pub const FAILED: u8 = 1;
/// Exit code of a run stopped by `max_steps`.
pub const LIMITED: u8 = 3;

/// True when tool `id` of `project` is a file of `kind: graph`.
pub fn is_graph(project: &Project, id: &str) -> bool {
    let Some(path) = project.tool_path(id) else {
        return false;
    };
    let Ok(bytes) = project.read(&path) else {
        return false;
    };
    Document::parse(id, bytes, Format::Yaml, &project.limits)
        .is_ok_and(|doc| is_graph_document(&doc.value))
}

/// Loads graph `id` of `project`, checking it against the project's tools.
pub fn load(project: &Project, id: &str, tools: &ExecRunner<'_>) -> Result<Graph, Error> {
    let path = project.require_tool(id)?;
    let name = project.display_name(&path);
    Graph::load_file(&path, &name, id, tools, &project.limits)
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One line per event on stderr.
    Human,
    /// One JSON object per event on stdout.
    Json,
    /// Nothing but the result.
    Quiet,
}

/// Shows a run's events as `Mode` says.
pub struct Printer(pub Mode);

impl Observer for Printer {
    fn on(&mut self, event: LogEvent) {
        match self.0 {
            Mode::Human => anstream::eprintln!("{}", styled_line(&event)),
            Mode::Json => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", event.to_json());
                let _ = out.flush();
            }
            Mode::Quiet => {}
        }
    }
}

/// A progress line as printed for people: the word that says how a step or the run ended in
/// its colour (stripped on the way out when colour is off), as directives and plans show it.
fn styled_line(event: &LogEvent) -> String {
    let line = event.human();
    let (word, style) = match event {
        LogEvent::Error { .. } => (" failed: ", ERROR),
        LogEvent::Limit { .. } => ("limit: ", ERROR),
        LogEvent::Finished { status, .. } => match status {
            Status::Completed => (": completed after", OK),
            Status::Failed => (": failed after", ERROR),
            Status::Limited => (": limited after", ERROR),
            Status::Running => return line,
        },
        _ => return line,
    };
    let bare = word.trim_matches(|c: char| c == ' ' || c == ':');
    let bare = bare.strip_suffix(" after").unwrap_or(bare);
    let painted = word.replacen(bare, &paint(style, bare), 1);
    line.replacen(word, &painted, 1)
}

/// Refuses the `strata run` options that do not apply to graphs, and those that do not go
/// with `--resume`.
fn check_options(args: &RunArgs) -> Result<(), Error> {
    refuse_options(args, Target::Graph)?;
    let bad = |flag: &str, hint: &str| {
        Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            format!("{flag} does not go with --resume"),
        )
        .with_hint(hint))
    };
    if args.resume.is_some() && !(args.inputs.is_empty() && args.params_json.is_none()) {
        return bad("--input", "a resumed run keeps the inputs it started with");
    }
    if args.resume.is_some() && args.run_id.is_some() {
        return bad("--run-id", "--resume names the run");
    }
    Ok(())
}

/// The typed inputs `--params-json` gives (none without it).
pub fn typed_inputs(params_json: Option<&str>) -> Result<Map<String, Value>, Error> {
    match params_json {
        None => Ok(Map::new()),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                "--params-json must be a JSON object",
            )),
        },
    }
}

/// Runs graph `id` of `project` as `strata run` asked.
pub fn run(args: &RunArgs, project: &Project, id: &str) -> ExitCode {
    match run_in(args, project, id) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            print_error(&e, Some(project));
            ExitCode::from(STRATA_FAILED)
        }
    }
}

fn run_in(args: &RunArgs, project: &Project, id: &str) -> Result<u8, Error> {
    check_options(args)?;
    let strict = project.settings.strict_with(args.strict);
    let tools = ExecRunner {
        project,
        options: ExecOptions {
            render: RenderOptions::strict_if(strict),
            base_env: None,
        },
    };
    let graph = load(project, id, &tools)?;
    if crate::check_cmd::refuse_run(project, strata_check::Target::Tool(id), id) {
        return Ok(STRATA_FAILED);
    }
    let prompts = prompts_for(project, &graph)?;
    let every = project
        .settings
        .checkpoint_every_with(args.checkpoint_every);
    let walker = |dir| {
        let w = Walker::new(&graph, &tools, Some(dir), RenderOptions::strict_if(strict))
            .checkpoint_every(every);
        match &prompts {
            Some(p) => w.with_prompts(p),
            None => w,
        }
    };
    let store = RunStore::new(&project.root);
    let mode = if args.json {
        Mode::Json
    } else if args.quiet {
        Mode::Quiet
    } else {
        Mode::Human
    };
    let mut printer = Printer(mode);
    let outcome = match &args.resume {
        Some(run_id) => {
            let dir = store.open(run_id)?;
            let _lock = dir.lock()?;
            let checkpoint = dir.load()?;
            walker(dir).resume(checkpoint, &mut printer)?
        }
        None => {
            let strings = args
                .inputs
                .iter()
                .map(|p| split_pair(p, "--input").map(|(k, v)| (k.to_string(), v.to_string())))
                .collect::<Result<Vec<_>, _>>()?;
            let inputs =
                graph.bind_inputs(&typed_inputs(args.params_json.as_deref())?, &strings)?;
            let run_id = args.run_id.clone().unwrap_or_else(new_run_id);
            let dir = store.create(&run_id)?;
            let _lock = dir.lock()?;
            walker(dir).start(&run_id, inputs, &mut printer)?
        }
    };
    if mode != Mode::Json {
        if outcome.status == Status::Completed {
            let text = serde_json::to_string_pretty(&outcome.result).unwrap_or_default();
            let _ = writeln!(std::io::stdout().lock(), "{text}");
        } else if let (Mode::Quiet, Some(why)) = (mode, &outcome.failure) {
            eprintln!(
                "strata: run {} {}: {why}",
                outcome.run_id,
                outcome.status.name()
            );
        }
    }
    Ok(match outcome.status {
        Status::Completed => 0,
        Status::Limited => LIMITED,
        Status::Failed | Status::Running => FAILED,
    })
}

/// A drawing format on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DrawFormat {
    /// A Mermaid flowchart
    Mermaid,
    /// A Graphviz digraph
    Dot,
}

impl From<DrawFormat> for drawing::Format {
    fn from(format: DrawFormat) -> drawing::Format {
        match format {
            DrawFormat::Mermaid => drawing::Format::Mermaid,
            DrawFormat::Dot => drawing::Format::Dot,
        }
    }
}

/// Options of `strata graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Graph id (`graphs/retry`, or `retry` for a graph under tools/graphs/) or graph file
    pub graph: String,
    /// The drawing format
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: DrawFormat,
    /// The project root (default: the nearest ancestor of the current directory with tools/)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

/// The id of the graph named on the command line: a file, an id, or an id under `graphs/`.
fn graph_id(project: &Project, name: &str) -> Result<String, Error> {
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
    let project = match open_project(args.project.as_deref(), None) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let tools = ExecRunner {
        project: &project,
        options: ExecOptions::default(),
    };
    let drawn = graph_id(&project, &args.graph).and_then(|id| {
        if project.tool_path(&id).is_some() && !is_graph(&project, &id) {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!("`{id}` is not a graph"),
            )
            .with_hint("graphs are tool files with `kind: graph`"));
        }
        load(&project, &id, &tools)
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

/// The project's prompt templates, loaded when graph `graph` has a prompt node.
pub fn prompts_for(
    project: &Project,
    graph: &Graph,
) -> Result<Option<strata_prompts::PromptManager>, Error> {
    if !strata_graph::uses_prompts(graph) {
        return Ok(None);
    }
    strata_prompts::PromptManager::load(&project.root, &project.limits).map(Some)
}
