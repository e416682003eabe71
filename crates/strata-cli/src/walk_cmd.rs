//! `strata walk`: one part of a graph's walk — a node, run from the checkpoint the node
//! before it left — what each task of a graph exported by `strata export argo` runs. A
//! foreach comes in three parts: its list (`--part items`), one element (`--part element`)
//! and the collection of the elements' outputs (`--part collect`), which takes the walk on.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use strata_app::App;
use strata_app::ExecOptions;
use strata_argo::names::task_name;
use strata_argo::transport::{read_input, to_json, write_output, PARAMETER_LIMIT};
use strata_core::{did_you_mean, Error, ErrorKind, Layer, RenderOptions, Warning};
use strata_graph::parts::collect;
use strata_graph::{new_run_id, Checkpoint, Failure, Graph, LogEvent, Observer, Status};
use strata_runs::now;

use crate::graphs::{typed_inputs, Mode, Printer, FAILED, LIMITED};
use crate::outcome::{open_project_as, report};
use crate::shared_args::SharedArgs;

/// The parts of a foreach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Part {
    /// Render the foreach's list: `items` and `indexes`
    Items,
    /// Run the body for one element (`--index`): `element`
    Element,
    /// Collect the elements' outputs and take the walk on: `walk` and `next`
    Collect,
}

/// Options of `strata walk`.
#[derive(Debug, Args)]
pub(crate) struct WalkArgs {
    /// The graph's id (`graphs/words`)
    #[arg(add = crate::complete::graphs())]
    pub(crate) graph: String,
    /// The node to run
    #[arg(long, value_name = "ID")]
    pub(crate) node: String,
    /// Start a new run at the start node (with --params-json as its inputs)
    #[arg(long)]
    pub(crate) start: bool,
    /// The inputs of a new run, a JSON object
    #[arg(long, value_name = "JSON")]
    pub(crate) params_json: Option<String>,
    /// The id of a new run
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) run_id: Option<String>,
    /// The directory holding the checkpoints the nodes before it left, `<name>.json` each
    #[arg(long, value_name = "DIR")]
    pub(crate) walks: Option<PathBuf>,
    /// Which part of a foreach node to run
    #[arg(long, value_enum)]
    pub(crate) part: Option<Part>,
    /// The element a `--part element` runs
    #[arg(long, value_name = "N")]
    pub(crate) index: Option<usize>,
    /// Write the outputs (`walk.json` and `next`, or the foreach part's) into this directory
    #[arg(long, value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,
    /// Checkpoints longer than this many bytes of JSON go to an artifact file
    #[arg(long, value_name = "BYTES", default_value_t = PARAMETER_LIMIT)]
    pub(crate) limit: usize,
    /// The fingerprint the graph file must have (the one the workflow was exported from)
    #[arg(long, value_name = "HASH")]
    pub(crate) fingerprint: Option<String>,
    /// The uid of the workflow run the part belongs to (an exported workflow gives
    /// `{{workflow.uid}}`): its parts mint and restore secret markers under a key made from
    /// it. Without it, under a key this user's strata keeps for the run
    #[arg(long, value_name = "UID")]
    pub(crate) run_uid: Option<String>,
    /// The global options: `--strict` makes a missing context path fail the step (and tools
    /// run strict; strata.yaml's `strict` does not apply: the workflow says); `--json` prints
    /// the events as JSON Lines on standard error and a failure as `{"ok": false, …}`
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata walk`.
pub(crate) fn run(args: WalkArgs) -> ExitCode {
    let json = args.shared.json;
    let project = match open_project_as(None, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match walk(&args, &project) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => report(failure, Some(&project), json),
    }
}

fn request(message: String) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Request, message)
}

fn walk(args: &WalkArgs, project: &App) -> Result<u8, strata_app::Failure> {
    // Every task of an exported workflow refuses what `strata run` of the graph refuses.
    let walk = project.graph_walk(&args.graph, args.fingerprint.as_deref())?;
    let graph = &walk.graph;
    if graph.index_of(&args.node).is_none() {
        let ids = graph.nodes.iter().map(|n| n.id.as_str());
        let e = request(format!(
            "graph `{}` has no node `{}`",
            graph.id,
            strata_core::shown(&args.node)
        ));
        return Err(match did_you_mean(&args.node, ids) {
            Some(best) => e.with_hint(format!("did you mean `{best}`?")),
            None => e,
        }
        .into());
    }
    if args.part == Some(Part::Element) && args.index.is_none() {
        return Err(request("--part element needs --index".into()).into());
    }
    let arrival = match args.part {
        None | Some(Part::Items) => arrival(args, graph)?,
        Some(Part::Element | Part::Collect) => Arrival::At(Box::new(given_walk(args)?)),
    };
    let run_id = match &arrival {
        Arrival::Start { run_id, .. } => run_id.clone(),
        Arrival::At(cp) => cp.progress.run_id.clone(),
    };
    let marks = match &args.run_uid {
        Some(uid) => strata_app::marks::seeded(uid),
        None => strata_app::marks::local(&[b"walk", graph.id.as_bytes(), run_id.as_bytes()]),
    };
    let tools = project
        .runner(ExecOptions {
            render: RenderOptions::strict_if(args.shared.strict() == Some(true)),
            base_env: None,
            cancel: None,
        })
        .with_marks(marks);
    Ok(walk_on(args, &walk, &tools, arrival)?)
}

/// Runs the part once the run it belongs to is known (`arrival`), its tool calls made by
/// `tools`.
fn walk_on(
    args: &WalkArgs,
    walk: &strata_app::GraphWalk,
    tools: &strata_app::Runner<'_>,
    arrival: Arrival,
) -> Result<u8, Error> {
    let walker = walk.walker(
        tools,
        RenderOptions::strict_if(args.shared.strict() == Some(true)),
    );
    let mut printer = Printer(match (args.shared.quiet, args.shared.json) {
        (true, _) => Mode::Quiet,
        (false, true) => Mode::Json,
        (false, false) => Mode::Human,
    });
    let out = Output {
        dir: args.output.as_deref(),
        limit: args.limit,
    };
    let arrive = |printer: &mut Printer| match arrival {
        Arrival::Start { run_id, inputs } => walker.begin(&run_id, inputs, now(), printer),
        Arrival::At(cp) => *cp,
    };
    match args.part {
        None => {
            let cp = arrive(&mut printer);
            let cp = walker.advance(cp, None, &mut printer)?;
            out.walk(&cp)
        }
        Some(Part::Items) => {
            let cp = arrive(&mut printer);
            let mut warnings = Vec::new();
            // At the step limit no element starts, and the collection handles the limit.
            let items = walker.foreach_items(&cp, &mut warnings)?;
            shown(&cp, warnings, &mut printer);
            let (envelope, indexes) = match items {
                Ok(items) => {
                    let n = items.len();
                    (json!({"items": items}), (0..n).collect::<Vec<_>>())
                }
                Err(f) => (json!({"error": f.to_json()}), Vec::new()),
            };
            out.value("walk", &cp.to_json())?;
            out.value("items", &envelope)?;
            out.plain("indexes", &json!(indexes).to_string())?;
            Ok(0)
        }
        Some(Part::Element) => {
            let i = args.index.unwrap_or_default();
            let cp = arrive(&mut printer);
            let items = given(args, "items")?;
            let item = items
                .get("items")
                .and_then(|l| l.get(i))
                .cloned()
                .ok_or_else(|| request(format!("the foreach's list has no element {i}")))?;
            let mut warnings = Vec::new();
            let outcome = walker.foreach_element(&cp, i, item, &mut warnings, None)?;
            shown(&cp, warnings, &mut printer);
            let mut envelope = match outcome {
                Ok(v) => json!({"index": i, "output": v}),
                Err(f) => json!({"index": i, "error": f.to_json()}),
            };
            let size = to_json(&envelope).len();
            if size > args.limit {
                let f = Failure::of(
                    ErrorKind::Limit,
                    format!(
                        "its output is {size} bytes of JSON, more than the parameter limit ({} bytes); a fan-out's outputs travel as parameters",
                        args.limit
                    ),
                );
                envelope = json!({"index": i, "error": f.to_json()});
            }
            // Argo hands the element on as a parameter: JSON with no `{{` for it to replace.
            out.plain("element", &to_json(&envelope))?;
            Ok(0)
        }
        Some(Part::Collect) => {
            let cp = arrive(&mut printer);
            let items = given(args, "items")?;
            let work = match items.get("error") {
                Some(e) => Err(Failure::from_json(e).ok_or_else(|| {
                    request("the foreach's list holds a malformed failure".into())
                })?),
                None => {
                    let n = items
                        .get("items")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    collect(elements(args, n)?)
                }
            };
            let cp = walker.advance(cp, Some(work), &mut printer)?;
            out.walk(&cp)
        }
    }
}

/// Shows the warnings met in a foreach part, as the step they belong to.
fn shown(cp: &Checkpoint, warnings: Vec<Warning>, printer: &mut Printer) {
    for warning in warnings {
        printer.on(LogEvent::Warning {
            step: cp.progress.step + 1,
            warning,
        });
    }
}

/// The input `name` given in `--walks` (the checkpoint, the list).
fn given(args: &WalkArgs, name: &str) -> Result<Value, Error> {
    let dir = walks_dir(args)?;
    read_input(dir, name)?
        .filter(|v| !v.is_null())
        .ok_or_else(|| request(format!("no `{name}.json` in `{}`", dir.display())))
}

fn walks_dir(args: &WalkArgs) -> Result<&Path, Error> {
    args.walks
        .as_deref()
        .ok_or_else(|| request("no --walks directory".into()))
}

/// The checkpoint the foreach's list task passed on (`walk.json`).
fn given_walk(args: &WalkArgs) -> Result<Checkpoint, Error> {
    let value = given(args, "walk")?;
    Checkpoint::from_json(value.to_string().as_bytes(), "walk.json")
}

/// The outcome of each element, by index, from `elements.json`: Argo gathers the elements'
/// outputs as a JSON list of their texts.
fn elements(args: &WalkArgs, n: usize) -> Result<Vec<Option<Result<Value, Failure>>>, Error> {
    let mut out: Vec<Option<Result<Value, Failure>>> = (0..n).map(|_| None).collect();
    let list = read_input(walks_dir(args)?, "elements")?.unwrap_or(Value::Array(Vec::new()));
    for entry in list.as_array().map_or(&[][..], Vec::as_slice) {
        let envelope: Value = match entry {
            Value::String(text) => serde_json::from_str(text).map_err(|e| {
                request(format!("an element's output is not JSON: {e}")).with_source(e)
            })?,
            other => other.clone(),
        };
        let Some(i) = envelope.get("index").and_then(Value::as_u64) else {
            continue;
        };
        let outcome = match (envelope.get("output"), envelope.get("error")) {
            (Some(v), _) => Ok(v.clone()),
            (None, Some(e)) => Err(Failure::from_json(e)
                .ok_or_else(|| request(format!("element {i} holds a malformed failure")))?),
            (None, None) => continue,
        };
        if let Some(slot) = out.get_mut(i as usize) {
            *slot = Some(outcome);
        }
    }
    Ok(out)
}

/// Where the walk arrives at `--node` from.
enum Arrival {
    /// A new run (`--start`), with its id and bound inputs.
    Start {
        run_id: String,
        inputs: serde_json::Map<String, Value>,
    },
    /// The checkpoint a part before it left.
    At(Box<Checkpoint>),
}

/// Where the walk arrives at `--node` from: a new run (with `--start`), or the checkpoint,
/// among those in `--walks`, whose next node is this one.
fn arrival(args: &WalkArgs, graph: &Graph) -> Result<Arrival, Error> {
    if args.start {
        let start = &graph.nodes[graph.start].id;
        if *start != args.node {
            return Err(request(format!(
                "a run of graph `{}` starts at `{start}`, not `{}`",
                graph.id, args.node
            )));
        }
        let typed = typed_inputs(args.params_json.as_deref())?;
        let inputs = graph.bind_inputs(&typed, &[])?;
        let run_id = args.run_id.clone().unwrap_or_else(new_run_id);
        return Ok(Arrival::Start { run_id, inputs });
    }
    let dir = walks_dir(args)?;
    let entries = std::fs::read_dir(dir)
        .map_err(|e| request(format!("cannot read `{}`: {e}", dir.display())).with_source(e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| {
            (!n.ends_with(".artifact.json"))
                .then(|| n.strip_suffix(".json").map(str::to_string))
                .flatten()
        })
        .collect();
    names.sort();
    let mut found = Vec::new();
    for name in names {
        let Some(value) = read_input(dir, &name)?.filter(|v| !v.is_null()) else {
            continue;
        };
        let cp = Checkpoint::from_json(value.to_string().as_bytes(), &format!("{name}.json"))?;
        if cp.progress.status == Status::Running && cp.progress.node.as_deref() == Some(&args.node)
        {
            found.push(cp);
        }
    }
    match found.len() {
        1 => Ok(Arrival::At(Box::new(found.remove(0)))),
        0 => Err(request(format!(
            "no walk in `{}` goes on to node `{}`",
            dir.display(),
            strata_core::shown(&args.node)
        ))),
        n => Err(request(format!(
            "{n} walks in `{}` go on to node `{}`; a run walks one path",
            dir.display(),
            strata_core::shown(&args.node)
        ))),
    }
}

/// Where the outputs go.
struct Output<'a> {
    dir: Option<&'a Path>,
    limit: usize,
}

impl Output<'_> {
    fn value(&self, name: &str, value: &Value) -> Result<(), Error> {
        if let Some(dir) = self.dir {
            write_output(dir, name, value, self.limit)?;
        }
        Ok(())
    }

    fn plain(&self, name: &str, text: &str) -> Result<(), Error> {
        let Some(dir) = self.dir else {
            return Ok(());
        };
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join(name), text))
            .map_err(|e| {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::Io,
                    format!("cannot write `{}`: {e}", dir.join(name).display()),
                )
                .with_source(e)
            })
    }

    /// The checkpoint and the task that runs next; the result on stdout when the run
    /// completed; the exit code of the run as it stands.
    fn walk(&self, cp: &Checkpoint) -> Result<u8, Error> {
        self.value("walk", &cp.to_json())?;
        let next = match (&cp.progress.status, &cp.progress.node) {
            (Status::Running, Some(node)) => task_name("node", node)?,
            _ => String::new(),
        };
        self.plain("next", &next)?;
        Ok(match cp.progress.status {
            Status::Running => 0,
            Status::Completed => {
                let result = cp.progress.result.clone().unwrap_or(Value::Null);
                crate::output::print_json(&result);
                0
            }
            Status::Limited => LIMITED,
            Status::Failed | Status::Cancelled => FAILED,
        })
    }
}
