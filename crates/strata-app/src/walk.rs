//! Graphs walked in parts: one part of a walk — a run's start, one step, a foreach's list or
//! one of its elements — run from the checkpoint it is given, as each task of a workflow
//! exported by `strata export argo` (`strata walk`) and each Ray task of `strata.ray` runs it;
//! and a whole recorded run driven from here with every part run elsewhere.
//!
//! A part travels as JSON: the walk writes each [`Parts`] call as a request and hands it to
//! a transport; on the other side [`App::walk_part`] runs it with a [`Walker`] and writes the
//! answer. Every request also carries `marks`, the run's marker key (64 hex digits), so the
//! other side restores and mints the run's secret markers as the run does:
//!
//! | `part` | request | answer |
//! |---|---|---|
//! | `begin` | `run_id`, `inputs` (bound), `started` (Unix seconds) | `walk`, `events` |
//! | `advance` | `walk`, `work` (`null`, `{"output"}` or `{"error"}`) | `walk`, `failure` (an error or `null`), `events` |
//! | `items` | `walk` | `{"items"}` or `{"error"}` |
//! | `element` | `walk`, `index`, `item` | `{"output"}` or `{"error"}`, `events` |
//!
//! `walk` is a checkpoint as `checkpoint.json` holds it; `{"error"}` a node's failure as
//! `strata_graph::Failure::to_json` writes it; `events` the events the part reported, as a
//! whole walk reports them (`started`, `step`, `error`, `hook`, `finished`…, and the
//! `action_retrying` of each retry of a tool, which the part makes where it runs), which the
//! run driven from here writes to its event log as they come back. A part at an action node,
//! or at a foreach whose actions call one tool, carries that tool's `resources`.

use serde_json::{json, Map, Value};
use strata_check::Target;
use strata_core::{Error, ErrorKind, Layer, RenderOptions};
use strata_graph::parts::{Advanced, Parts};
use strata_graph::{
    Checkpoint, ElementEvent, Elements, Failure as NodeFailure, Graph, LogEvent, Observer, Outcome,
    RunDir, Status, Walker,
};
use strata_project::ExecOptions;
use strata_prompts::PromptManager;
use strata_runs::{now, Cadence};
use strata_tools::ToolRunner;

use std::sync::Mutex;

use crate::event_log::RunEvents;
use crate::graph::Opening;
use crate::{App, Failure, GraphRun};

/// A graph loaded to be walked in parts, with its prompt templates.
pub struct GraphWalk {
    /// The graph.
    pub graph: Graph,
    prompts: Option<PromptManager>,
}

impl GraphWalk {
    /// A walker of the graph calling `tools`, rendering with `render`; it writes no
    /// checkpoint (the checkpoints travel with the parts).
    pub fn walker<'a>(&'a self, tools: &'a dyn ToolRunner, render: RenderOptions) -> Walker<'a> {
        let walker = Walker::new(&self.graph, tools, None, render);
        match &self.prompts {
            Some(p) => walker.with_prompts(p),
            None => walker,
        }
    }
}

impl App {
    /// Graph `id` to walk in parts, admitted by the gate: loaded and checked against the
    /// project's tools, with its prompt templates; refused when `fingerprint` is given and is
    /// not the graph file's (the one a workflow was exported from).
    pub fn graph_walk(&self, id: &str, fingerprint: Option<&str>) -> Result<GraphWalk, Failure> {
        self.admit(Target::Tool(id), id)?;
        let graph = self.load_graph(id)?;
        if fingerprint.is_some_and(|fp| fp != graph.fingerprint) {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::HashMismatch,
                format!(
                    "graph `{}` is not the one the workflow was exported from",
                    graph.id
                ),
            )
            .with_hint("rebuild the image from the project the workflow was exported from")
            .into());
        }
        let prompts = self.prompts_for(&graph)?;
        Ok(GraphWalk { graph, prompts })
    }

    /// Runs the part of a walk of graph `id` that `request` asks for (see the module's
    /// table), admitted by the gate, its tool calls made with `options` and the run's marker
    /// key the request carries; the answer.
    pub fn walk_part(
        &self,
        id: &str,
        request: &Value,
        options: ExecOptions,
    ) -> Result<Value, Failure> {
        let walk = self.graph_walk(id, None)?;
        let marks = match request.get("marks") {
            Some(Value::String(hex)) => crate::marks::carried(hex)?,
            _ => return Err(malformed("a part request without `marks`").into()),
        };
        let render = options.render;
        let tools = self.runner(options).with_marks(marks);
        let walker = walk.walker(&tools, render);
        Ok(answer_part(&walker, request)?)
    }

    /// Runs a graph as [`App::run_graph`] does — loaded, admitted by the gate, a new run or a
    /// resumed one under its lock, recorded under `.strata/runs/` — on the walk in parts:
    /// every part (the run's start, each step, a foreach's list and elements) is run by
    /// `parts`, on another engine, and the checkpoint after each step (or as often as
    /// `run.every` says; the first and the last always) is written here.
    pub fn run_graph_in_parts<T>(&self, run: &GraphRun, transport: T) -> Result<Outcome, Failure>
    where
        T: Fn(&Value) -> Result<Value, Error> + Sync,
    {
        self.admit(Target::Tool(&run.id), &run.id)?;
        let graph = self.load_graph_all(&run.id)?;
        let opened = self.open_graph_run(&graph, &run.start)?;
        let called = crate::graph::graph_tools(&graph.nodes);
        let over = PartsOver {
            transport,
            marks: opened.marks.to_hex(),
            graph: &graph,
            app: self,
            events: Mutex::new(RunEvents::open(self, &opened.dir, &called)?),
        };
        let parts = &over;
        let dir = &opened.dir;
        let (checkpoint, fresh) = match opened.at {
            Opening::Resume(checkpoint) => {
                let p = &checkpoint.progress;
                let resumed = LogEvent::Started {
                    run_id: p.run_id.clone(),
                    graph: p.graph.clone(),
                    node: p.node.clone().unwrap_or_default(),
                    step: p.step,
                    resumed: true,
                };
                parts.log([serde_json::to_value(&resumed).unwrap_or(Value::Null)]);
                (*checkpoint, false)
            }
            Opening::New { run_id, inputs } => {
                let mut first = parts.begin(&run_id, &inputs, now())?;
                save(dir, &mut first)?;
                (first, true)
            }
        };
        // The walker here only checks a resumed checkpoint: the parts run elsewhere.
        let tools = self
            .runner(ExecOptions::default())
            .with_marks(opened.marks.clone());
        let walker = Walker::new(&graph, &tools, None, run.options.render);
        let mut cadence = Cadence::new(run.every);
        let mut keep = |cp: &mut Checkpoint| -> Result<(), Error> {
            if cadence.step() || cp.progress.status != Status::Running {
                save(dir, cp)?;
                cadence.saved();
            }
            Ok(())
        };
        let last = walker.walk_in_parts(checkpoint, fresh, parts, &mut keep);
        let logged = over
            .events
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .finish();
        let last = last?;
        logged?;
        let p = last.checkpoint.progress;
        Ok(Outcome {
            run_id: p.run_id,
            status: p.status,
            steps: p.step,
            result: p.result.unwrap_or(Value::Null),
            failure: last.failure,
        })
    }
}

/// Writes `cp` as the run's checkpoint (atomically, synced), stamped now, as a whole walk
/// writes its own.
fn save(dir: &RunDir, cp: &mut Checkpoint) -> Result<(), Error> {
    cp.progress.updated = now();
    let bytes = serde_json::to_vec(&cp).map_err(|e| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Io,
            format!("cannot encode checkpoint: {e}"),
        )
        .with_source(e)
    })?;
    dir.write_checkpoint(&bytes)
}

/// [`Parts`] whose every call is a JSON request (see the module's table), carrying the run's
/// marker key, that the transport hands to another engine and answers; a transport error
/// aborts the walk, but for an element, where it is the element's failure.
struct PartsOver<'a, T> {
    transport: T,
    marks: String,
    /// The graph and the application, for the `resources` of the tool a part runs.
    graph: &'a Graph,
    app: &'a App,
    /// The run's event log, which the events each answer carries are written to.
    events: Mutex<RunEvents>,
}

impl<T> PartsOver<'_, T>
where
    T: Fn(&Value) -> Result<Value, Error> + Sync,
{
    /// The answer to `request`, a JSON object.
    fn ask(&self, mut request: Value) -> Result<Map<String, Value>, Error> {
        request["marks"] = Value::String(self.marks.clone());
        match (self.transport)(&request)? {
            Value::Object(mut answer) => {
                if let Some(Value::Array(events)) = answer.remove("events") {
                    self.log(events);
                }
                Ok(answer)
            }
            _ => Err(malformed("an answer is not a JSON object")),
        }
    }

    /// Writes `events` to the run's event log.
    fn log(&self, events: impl IntoIterator<Item = Value>) {
        let mut log = self.events.lock().unwrap_or_else(|e| e.into_inner());
        for event in events {
            log.write(event);
        }
    }
}

impl<T> PartsOver<'_, T> {
    /// `request` with the `resources` (when declared) of the tool the part at `cp` runs: the
    /// action node it stands at (`advance`), or the one tool the actions of the foreach's
    /// body call (`element`). Not its `retries`: the part retries the tool where it runs.
    fn with_scale(&self, mut request: Value, cp: &Checkpoint, element: bool) -> Value {
        let node = cp.progress.node.as_deref();
        let node = node.and_then(|id| self.graph.index_of(id));
        let tool = node.and_then(|i| self.graph.nodes[i].part_tool(element));
        if let (Some(tool), Some(map)) = (tool, request.as_object_mut()) {
            let resources = strata_project::tool_scale(self.app.project(), tool).resources;
            if !resources.is_empty() {
                map.insert("resources".into(), resources.to_request());
            }
        }
        request
    }
}

impl<T> Parts for PartsOver<'_, T>
where
    T: Fn(&Value) -> Result<Value, Error> + Sync,
{
    fn begin(
        &self,
        run_id: &str,
        inputs: &Map<String, Value>,
        started: u64,
    ) -> Result<Checkpoint, Error> {
        let request =
            json!({"part": "begin", "run_id": run_id, "inputs": inputs, "started": started});
        walk_of(&self.ask(request)?)
    }

    fn advance(
        &self,
        cp: &Checkpoint,
        work: Option<Result<Value, NodeFailure>>,
    ) -> Result<Advanced, Error> {
        let work = work.map_or(Value::Null, |w| Value::Object(outcome_json(w, "output")));
        let request = json!({"part": "advance", "walk": cp, "work": work});
        let answer = self.ask(self.with_scale(request, cp, false))?;
        let failure = match answer.get("failure") {
            None | Some(Value::Null) => None,
            Some(e) => Some(error_of(e)?),
        };
        Ok(Advanced {
            checkpoint: walk_of(&answer)?,
            failure,
        })
    }

    fn items(&self, cp: &Checkpoint) -> Result<Result<Vec<Value>, NodeFailure>, Error> {
        let answer = self.ask(json!({"part": "items", "walk": cp}))?;
        Ok(match outcome_of(answer, "items")? {
            Ok(Value::Array(items)) => Ok(items),
            Ok(_) => return Err(malformed("`items` is not a list")),
            Err(f) => Err(f),
        })
    }

    fn element(&self, cp: &Checkpoint, index: usize, item: Value) -> Result<Value, NodeFailure> {
        let request = json!({"part": "element", "walk": cp, "index": index, "item": item});
        self.ask(self.with_scale(request, cp, true))
            .and_then(|answer| outcome_of(answer, "output"))
            .unwrap_or_else(|error| Err(NodeFailure { error, work: None }))
    }
}

/// Runs the part `request` asks for (see the module's table) with `walker`, and its answer.
fn answer_part(walker: &Walker<'_>, request: &Value) -> Result<Value, Error> {
    let field = |name: &str| {
        request
            .get(name)
            .ok_or_else(|| malformed(&format!("a part request without `{name}`")))
    };
    let part = field("part")?.as_str().unwrap_or_default();
    if part == "begin" {
        let run_id = field("run_id")?.as_str().unwrap_or_default();
        let inputs = field("inputs")?.as_object().cloned().unwrap_or_default();
        let started = field("started")?.as_u64().unwrap_or_default();
        let mut events = Collected::default();
        let cp = walker.begin(run_id, inputs, started, &mut events);
        return Ok(json!({"walk": cp, "events": events.0}));
    }
    let cp = checkpoint_of(field("walk")?)?;
    Ok(match part {
        "advance" => {
            let work = match field("work")? {
                Value::Null => None,
                Value::Object(w) => Some(outcome_of(w.clone(), "output")?),
                _ => return Err(malformed("`work` is not an object")),
            };
            let mut events = Collected::default();
            let advanced = walker.advance_to(cp, work, &mut events)?;
            json!({"walk": advanced.checkpoint, "failure": advanced.failure.as_ref().map(Error::to_json),
                   "events": events.into_inner()})
        }
        "items" => Value::Object(outcome_json(
            Parts::items(walker, &cp)?.map(Value::from),
            "items",
        )),
        "element" => {
            let index = field("index")?.as_u64().unwrap_or_default() as usize;
            let item = field("item")?.clone();
            let events = Collected::default();
            let outcome = walker
                .foreach_element(&cp, index, item, &mut Vec::new(), Some(&events))
                .unwrap_or_else(|e| Err(e.into()));
            let mut answer = outcome_json(outcome, "output");
            answer.insert("events".into(), Value::Array(events.into_inner()));
            Value::Object(answer)
        }
        other => return Err(malformed(&format!("no part `{other}`"))),
    })
}

/// The events a part reports, as JSON objects: the walk's, and those its work reports from
/// the threads that run it (an action's retries).
#[derive(Default)]
struct Collected(Mutex<Vec<Value>>);

impl Collected {
    /// The events, in the order they were reported.
    fn into_inner(self) -> Vec<Value> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl Observer for Collected {
    fn on(&mut self, event: LogEvent) {
        let events = self.0.get_mut().unwrap_or_else(|e| e.into_inner());
        events.push(crate::graph::logged_json(&event));
    }

    fn elements(&mut self) -> Option<&dyn Elements> {
        Some(self)
    }
}

impl Elements for Collected {
    fn element(&self, event: ElementEvent) {
        let value = serde_json::to_value(&event).unwrap_or(Value::Null);
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(value);
    }
}

/// `{key: value}` or `{"error": failure}`.
fn outcome_json(outcome: Result<Value, NodeFailure>, key: &str) -> Map<String, Value> {
    let mut out = Map::new();
    match outcome {
        Ok(v) => out.insert(key.into(), v),
        Err(f) => out.insert("error".into(), f.to_json()),
    };
    out
}

/// Reads `{key: value}` or `{"error": failure}` back.
fn outcome_of(
    mut answer: Map<String, Value>,
    key: &str,
) -> Result<Result<Value, NodeFailure>, Error> {
    if let Some(e) = answer.remove("error") {
        return NodeFailure::from_json(&e)
            .map(Err)
            .ok_or_else(|| malformed("a failure that is not a strata error"));
    }
    answer
        .remove(key)
        .map(Ok)
        .ok_or_else(|| malformed(&format!("an answer without `{key}`")))
}

/// The checkpoint an answer carries as `walk`.
fn walk_of(answer: &Map<String, Value>) -> Result<Checkpoint, Error> {
    checkpoint_of(
        answer
            .get("walk")
            .ok_or_else(|| malformed("an answer without `walk`"))?,
    )
}

/// A checkpoint from its JSON.
fn checkpoint_of(value: &Value) -> Result<Checkpoint, Error> {
    Checkpoint::from_json(value.to_string().as_bytes(), "walk")
}

/// An error from its JSON form.
fn error_of(value: &Value) -> Result<Error, Error> {
    NodeFailure::from_json(value)
        .map(|f| f.error)
        .ok_or_else(|| malformed("a failure that is not a strata error"))
}

/// The error for a part request or answer that is not what the walk in parts writes.
fn malformed(what: &str) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Request,
        format!("malformed walk part: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use serde_json::json;
    use strata_graph::Silent;

    use super::*;
    use crate::GraphStart;

    const SAY: &str = "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    word: {type: string}\nconfig: {command: printf, args: [\"%s\", \"{word}\"]}\n";

    const GRAPH: &str = "kind: graph\nstate: {said: []}\nnodes:\n  each:\n    kind: foreach\n    over: [a, bb]\n    parallel: true\n    do: {kind: action, tool: say, params: {word: \"${item}\"}}\n    collect: said\n    next: done\n  done: {kind: return, output: \"${state.said}\"}\n";

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools");
        fs::create_dir_all(tools.join("runtimes")).unwrap();
        fs::create_dir_all(tools.join("graphs")).unwrap();
        fs::write(
            tools.join("runtimes/subprocess.yaml"),
            "config: {args: []}\n",
        )
        .unwrap();
        fs::write(tools.join("say.yaml"), SAY).unwrap();
        fs::write(tools.join("graphs/each.yaml"), GRAPH).unwrap();
        dir
    }

    fn run(run_id: &str) -> GraphRun {
        GraphRun {
            id: "graphs/each".into(),
            start: GraphStart::New {
                run_id: run_id.into(),
                typed: Default::default(),
                strings: Vec::new(),
            },
            options: ExecOptions::default(),
            every: Default::default(),
        }
    }

    /// The run's checkpoint without its id and times.
    fn checkpoint(root: &Path, run_id: &str) -> Value {
        let text = fs::read_to_string(
            root.join(".strata/runs")
                .join(run_id)
                .join("checkpoint.json"),
        );
        let mut cp: Value = serde_json::from_str(&text.unwrap()).unwrap();
        for key in ["run_id", "started", "updated"] {
            cp.as_object_mut().unwrap().remove(key);
        }
        cp
    }

    #[test]
    fn a_run_in_parts_through_json_ends_as_the_whole_run() {
        let dir = project();
        let app = App::at(dir.path()).unwrap();
        let asked = Mutex::new(Vec::new());
        let parts = |request: &Value| {
            asked.lock().unwrap().push(request["part"].clone());
            app.walk_part("graphs/each", request, ExecOptions::default())
                .map_err(Failure::into_error)
        };
        let far = app.run_graph_in_parts(&run("far"), parts).unwrap();
        let near = app.run_graph(&run("near"), &mut Silent).unwrap();
        assert_eq!(
            (far.status, far.steps, &far.result),
            (near.status, near.steps, &near.result)
        );
        assert_eq!(far.result, json!(["a", "bb"]));
        assert_eq!(
            checkpoint(dir.path(), "far"),
            checkpoint(dir.path(), "near")
        );
        assert_eq!(
            asked.into_inner().unwrap(),
            ["begin", "items", "element", "element", "advance", "advance"]
        );
        // The run in parts logs the events the whole walk logs, but for its foreach's
        // element events (its elements run elsewhere, unobserved).
        let (elements, near): (Vec<Value>, Vec<Value>) =
            logged(dir.path(), "near").into_iter().partition(|e| {
                e["event"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("element_") || n == "foreach_started")
            });
        assert_eq!(near.len(), 4);
        assert_eq!(elements.len(), 5);
        assert_eq!(logged(dir.path(), "far"), near);
    }

    /// The events of run `run_id`'s log, each without its time, `far` and `near` as `ID`.
    fn logged(root: &Path, run_id: &str) -> Vec<Value> {
        let text = fs::read_to_string(root.join(".strata/runs").join(run_id).join("events.jsonl"))
            .unwrap();
        text.lines()
            .map(|line| {
                let mut event: Value = serde_json::from_str(line).unwrap();
                event.as_object_mut().unwrap().remove("ts");
                if event.get("run_id").is_some() {
                    event["run_id"] = json!("ID");
                }
                event
            })
            .collect()
    }

    #[test]
    fn a_run_in_parts_whose_element_is_cancelled_is_cancelled_and_resumes() {
        let dir = project();
        let app = App::at(dir.path()).unwrap();
        let parts = |request: &Value| {
            app.walk_part("graphs/each", request, ExecOptions::default())
                .map_err(Failure::into_error)
        };
        let cancelling = |request: &Value| match (request["part"].as_str(), &request["index"]) {
            (Some("element"), index) if *index == json!(1) => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Cancelled,
                "the call was cancelled",
            )),
            _ => parts(request),
        };
        let stopped = app.run_graph_in_parts(&run("c"), cancelling).unwrap();
        assert_eq!((stopped.status, stopped.steps), (Status::Cancelled, 0));
        assert_eq!(checkpoint(dir.path(), "c")["status"], json!("cancelled"));
        let again = GraphRun {
            start: GraphStart::Resume("c".into()),
            ..run("c")
        };
        let done = app.run_graph_in_parts(&again, parts).unwrap();
        assert_eq!(
            (done.status, done.steps, done.result),
            (Status::Completed, 2, json!(["a", "bb"]))
        );
    }

    #[test]
    fn a_resumed_run_in_parts_logs_that_it_resumed() {
        let dir = project();
        let app = App::at(dir.path()).unwrap();
        let parts = |request: &Value| {
            app.walk_part("graphs/each", request, ExecOptions::default())
                .map_err(Failure::into_error)
        };
        // The transport fails at the first step: the run stops after its start.
        let broken = |request: &Value| match request["part"].as_str() {
            Some("advance") => Err(malformed("the transport broke")),
            _ => parts(request),
        };
        let e = app.run_graph_in_parts(&run("r"), broken).unwrap_err();
        assert_eq!(
            e.into_error().message(),
            "malformed walk part: the transport broke"
        );
        let again = GraphRun {
            start: GraphStart::Resume("r".into()),
            ..run("r")
        };
        let done = app.run_graph_in_parts(&again, parts).unwrap();
        assert_eq!(done.result, json!(["a", "bb"]));
        let log: Vec<Value> = logged(dir.path(), "r")
            .into_iter()
            .map(|e| json!([e["event"], e["node"], e["resumed"]]))
            .collect();
        assert_eq!(
            log,
            [
                json!(["started", "each", false]),
                json!(["started", "each", true]),
                json!(["step", "each", null]),
                json!(["step", "done", null]),
                json!(["finished", null, null]),
            ]
        );
    }

    #[test]
    fn a_part_running_a_tool_carries_its_resources_and_no_other_part_does() {
        let dir = project();
        let declared = format!(
            "{SAY}resources: {{cpus: 0.5, memory: 1Ki, custom: {{example.com/ssd: 1}}}}\nretries: {{limit: 2, delay: 3s}}\n"
        );
        fs::write(dir.path().join("tools/say.yaml"), declared).unwrap();
        let app = App::at(dir.path()).unwrap();
        let asked = Mutex::new(Vec::new());
        let parts = |request: &Value| {
            asked.lock().unwrap().push(json!({
                "part": request["part"],
                "resources": request.get("resources"),
                "retries": request.get("retries"),
            }));
            app.walk_part("graphs/each", request, ExecOptions::default())
                .map_err(Failure::into_error)
        };
        app.run_graph_in_parts(&run("far"), parts).unwrap();
        // Not its retries: the walk retries the tool where it runs.
        let scaled = json!({
            "part": "element",
            "resources": {"num_cpus": 0.5, "memory": 1024, "custom": {"example.com/ssd": 1.0}},
            "retries": null,
        });
        let plain = |part: &str| json!({"part": part, "resources": null, "retries": null});
        assert_eq!(
            asked.into_inner().unwrap(),
            [
                plain("begin"),
                plain("items"),
                scaled.clone(),
                scaled,
                plain("advance"),
                plain("advance")
            ]
        );
        // An action node's own step carries them too.
        let one = "kind: graph\nnodes:\n  say: {kind: action, tool: say, params: {word: x}, next: done}\n  done: {kind: return, output: ok}\n";
        fs::write(dir.path().join("tools/graphs/one.yaml"), one).unwrap();
        let asked = Mutex::new(Vec::new());
        let parts = |request: &Value| {
            asked
                .lock()
                .unwrap()
                .push(request.get("resources").cloned());
            app.walk_part("graphs/one", request, ExecOptions::default())
                .map_err(Failure::into_error)
        };
        let mut one = run("one");
        one.id = "graphs/one".into();
        app.run_graph_in_parts(&one, parts).unwrap();
        let resources =
            json!({"num_cpus": 0.5, "memory": 1024, "custom": {"example.com/ssd": 1.0}});
        assert_eq!(asked.into_inner().unwrap(), [None, Some(resources), None]);
    }

    /// Fails until its third run for `name` (counted in `<dir>/count-<name>`), then prints
    /// the count; declares two retries.
    const FLAKY: &str = "executor: runtimes/subprocess\nretries: {limit: 2}\nparameters:\n  type: object\n  properties:\n    dir: {type: string}\n    name: {type: string}\nconfig: {command: sh, args: [\"-c\", \"f=$1/count-$2; n=$(cat $f 2>/dev/null || echo 0); n=$((n+1)); echo $n > $f; [ $n -ge 3 ] || exit 1; echo $n\", \"sh\", \"{dir}\", \"{name}\"]}\n";

    const FLAKY_GRAPH: &str = "kind: graph\nparameters: {type: object, properties: {dir: {type: string}}}\nnodes:\n  once: {kind: action, tool: flaky, params: {dir: \"${inputs.dir}\", name: once}, assign: {once: \"${result}\", attempts: \"${run.attempts}\"}, next: each}\n  each: {kind: foreach, over: [a, b], do: {kind: action, tool: flaky, params: {dir: \"${inputs.dir}\", name: \"${item}\"}}, collect: counts, next: done}\n  done: {kind: return, output: \"${state}\"}\n";

    #[test]
    fn a_run_in_parts_retries_a_failing_tool_as_the_whole_run_does() {
        let dir = project();
        fs::write(dir.path().join("tools/flaky.yaml"), FLAKY).unwrap();
        fs::write(dir.path().join("tools/graphs/flaky.yaml"), FLAKY_GRAPH).unwrap();
        let counts = dir.path().join("counts");
        fs::create_dir(&counts).unwrap();
        let app = App::at(dir.path()).unwrap();
        let flaky = |run_id: &str| GraphRun {
            id: "graphs/flaky".into(),
            start: GraphStart::New {
                run_id: run_id.into(),
                typed: json!({"dir": counts}).as_object().unwrap().clone(),
                strings: Vec::new(),
            },
            ..run(run_id)
        };
        let parts = |request: &Value| {
            app.walk_part("graphs/flaky", request, ExecOptions::default())
                .map_err(Failure::into_error)
        };
        let far = app.run_graph_in_parts(&flaky("far"), parts).unwrap();
        assert_eq!(
            far.result,
            json!({"once": 3, "attempts": 3, "counts": [3, 3]})
        );
        for name in ["once", "a", "b"] {
            fs::remove_file(counts.join(format!("count-{name}"))).unwrap();
        }
        let near = app.run_graph(&flaky("near"), &mut Silent).unwrap();
        assert_eq!(
            (far.status, far.steps, &far.result),
            (near.status, near.steps, &near.result)
        );
        assert_eq!(
            checkpoint(dir.path(), "far"),
            checkpoint(dir.path(), "near")
        );
        // Both logs have every retry, the run in parts those of its elements as each
        // element's answer brings them back.
        let near: Vec<Value> = logged(dir.path(), "near")
            .into_iter()
            .filter(|e| {
                !e["event"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("element_") || n == "foreach_started")
            })
            .collect();
        let far = logged(dir.path(), "far");
        assert_eq!(far, near);
        let retries: Vec<Value> = far
            .iter()
            .filter(|e| e["event"] == "action_retrying")
            .map(|e| json!([e["node"], e["index"], e["attempt"], e["attempts"]]))
            .collect();
        assert_eq!(
            retries,
            [
                json!(["once", null, 1, 3]),
                json!(["once", null, 2, 3]),
                json!(["each.do[0]", 0, 1, 3]),
                json!(["each.do[0]", 0, 2, 3]),
                json!(["each.do[0]", 1, 1, 3]),
                json!(["each.do[0]", 1, 2, 3]),
            ]
        );
    }

    #[test]
    fn a_graph_to_walk_in_parts_is_refused_for_another_fingerprint() {
        let dir = project();
        let app = App::at(dir.path()).unwrap();
        let e = app
            .graph_walk("graphs/each", Some("0000"))
            .err()
            .unwrap()
            .into_error();
        assert_eq!(e.kind(), ErrorKind::HashMismatch);
        assert_eq!(
            e.message(),
            "graph `graphs/each` is not the one the workflow was exported from"
        );
    }
}
