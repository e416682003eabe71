//! Graphs through the application layer: load a graph with the project's tools (the gate
//! admitting each tool it calls), the gate over the graph itself, its prompt templates, and a
//! whole run — new or resumed — recorded under `.strata/runs/`.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use strata_check::Target;
use strata_core::secret_marks::MarkKey;
use strata_core::Error;
use strata_doc::{Document, Format};
use strata_graph::{
    is_graph_document, Body, Checkpoint, CheckpointEvery, Checkpoints, ElementEvent, Elements,
    Graph, LogEvent, Node, Observer, Outcome, RunDir, RunLock, RunStore, Walker,
};
use strata_project::ExecOptions;
use strata_prompts::PromptManager;
use strata_runs::write_atomic;

use crate::event_log::RunEvents;
use crate::{App, Failure, RemoteTools};

/// The copy of its graph's file a graph run keeps in its directory, as it was when the run
/// started.
pub const GRAPH_FILE: &str = "graph.yaml";

/// How a graph run starts.
#[derive(Debug, Clone)]
pub enum GraphStart {
    /// A new run with this id, from the caller's inputs: typed values, and `name=value`
    /// strings typed by the graph's input declarations (the strings win).
    New {
        /// The id of the new run.
        run_id: String,
        /// Typed inputs.
        typed: Map<String, Value>,
        /// `name=value` inputs.
        strings: Vec<(String, String)>,
    },
    /// The run with this id, continued from its last checkpoint.
    Resume(String),
}

/// A graph run to make.
#[derive(Debug, Clone)]
pub struct GraphRun {
    /// The graph's tool id.
    pub id: String,
    /// New or resumed.
    pub start: GraphStart,
    /// Strictness and environment of every render and tool call.
    pub options: ExecOptions,
    /// How often the synced checkpoint is written.
    pub every: CheckpointEvery,
}

impl App {
    /// The tool id `name` names, as every front-end takes it: a tool's id, or — when no tool
    /// has that id — a graph's name under `graphs/` (`words` for `graphs/words`). A name
    /// that is neither is returned as it is, for the lookup to call it unknown (with its
    /// did-you-mean).
    pub fn tool_named(&self, name: &str) -> String {
        let nested = format!("graphs/{name}");
        if self.tool_path(name).is_none() && self.tool_path(&nested).is_some() {
            return nested;
        }
        name.to_string()
    }

    /// True when tool `id` is a file of `kind: graph`.
    pub fn is_graph(&self, id: &str) -> bool {
        // A tool that compiles is told by the file it was compiled from, which the call that
        // follows then uses without reading it again.
        if let Ok(tool) = self.compiled(id) {
            return tool
                .chain
                .links
                .first()
                .is_some_and(|link| is_graph_document(&link.doc.value));
        }
        let Some(path) = self.tool_path(id) else {
            return false;
        };
        let Ok(bytes) = self.read(&path) else {
            return false;
        };
        Document::parse(id, bytes, Format::Yaml, &self.limits)
            .is_ok_and(|doc| is_graph_document(&doc.value))
    }

    /// Graph `id`, loaded and checked against the project's tools.
    pub fn load_graph(&self, id: &str) -> Result<Graph, Error> {
        let path = self.require_tool(id)?;
        let name = self.display_name(&path);
        let tools = self.runner(ExecOptions::default());
        Graph::load_file(&path, &name, id, &tools, &self.limits)
    }

    /// [`App::load_graph`] with every error of the file ([`Graph::load_all`]): a file that
    /// does not load is a [`Failure::Document`] listing them, in file order.
    pub fn load_graph_all(&self, id: &str) -> Result<Graph, Failure> {
        let path = self.require_tool(id)?;
        let name = self.display_name(&path);
        let tools = self.runner(ExecOptions::default());
        let doc = Document::parse(&name, self.read(&path)?, Format::Yaml, &self.limits)?;
        Graph::load_all(&doc, id, &tools, &self.limits).map_err(|errors| Failure::Document {
            errors,
            doc: Box::new(doc),
        })
    }

    /// The graph run `dir` (of graph `id`) started with: the copy of the graph's file the run
    /// keeps, loaded and checked against the project's tools; for a run that keeps none, the
    /// graph's file as it is now.
    pub fn run_graph_definition(&self, dir: &RunDir, id: &str) -> Result<Graph, Error> {
        let kept = dir.path.join(GRAPH_FILE);
        if !kept.exists() {
            return self.load_graph(id);
        }
        let name = self
            .tool_path(id)
            .map_or_else(|| id.to_string(), |path| self.display_name(&path));
        let tools = self.runner(ExecOptions::default());
        Graph::load_file(&kept, &name, id, &tools, &self.limits)
    }

    /// The project's prompt templates, when `graph` has a prompt node.
    pub fn prompts_for(&self, graph: &Graph) -> Result<Option<PromptManager>, Error> {
        if !strata_graph::uses_prompts(graph) {
            return Ok(None);
        }
        PromptManager::load(&self.root, &self.limits).map(Some)
    }

    /// Runs a graph: loads it (a file that does not load is its own error), has the gate
    /// admit it, and walks it from a new run or the checkpoint of a run being resumed, under
    /// the run's lock; events go to `observer`.
    pub fn run_graph(
        &self,
        run: &GraphRun,
        observer: &mut dyn Observer,
    ) -> Result<Outcome, Failure> {
        self.run_graph_on(run, None, observer)
    }

    /// [`App::run_graph`] with its tool calls sent to `remote` when given (each call run on
    /// another machine): the walk, its checks, its checkpoints and the run's records stay
    /// here.
    pub fn run_graph_on(
        &self,
        run: &GraphRun,
        remote: Option<&dyn RemoteTools>,
        observer: &mut dyn Observer,
    ) -> Result<Outcome, Failure> {
        self.admit(Target::Tool(&run.id), &run.id)?;
        let graph = self.load_graph_all(&run.id)?;
        let prompts = self.prompts_for(&graph)?;
        let opened = self.open_graph_run(&graph, &run.start)?;
        let tools = self
            .runner(run.options.clone())
            .with_marks(opened.marks.clone());
        let tools = match remote {
            Some(remote) => tools.remote(remote),
            None => tools,
        };
        let called = graph_tools(&graph.nodes);
        let events = RunEvents::open(self, &opened.dir, &called)?;
        let walker = Walker::new(&graph, &tools, Some(opened.dir), run.options.render)
            .checkpoint_every(run.every);
        let walker = match &prompts {
            Some(p) => walker.with_prompts(p),
            None => walker,
        };
        let live = observer.live_elements();
        let mut logged = Logged {
            events: SharedEvents(Mutex::new(events), live),
            inner: observer,
        };
        let outcome = match opened.at {
            Opening::Resume(checkpoint) => walker.resume(*checkpoint, &mut logged)?,
            Opening::New { run_id, inputs } => walker.start(&run_id, inputs, &mut logged)?,
        };
        logged.events.into_inner().finish()?;
        Ok(outcome)
    }

    /// The run a graph run starts from, under its lock: a resumed run's directory and last
    /// checkpoint (refused when its records hold a secret marker set nowhere), or a new
    /// run's directory and bound inputs.
    pub(crate) fn open_graph_run(
        &self,
        graph: &Graph,
        start: &GraphStart,
    ) -> Result<OpenedRun, Failure> {
        let store = RunStore::new(&self.root);
        match start {
            GraphStart::Resume(run_id) => {
                let dir = store.open(run_id)?;
                let lock = dir.lock()?;
                let checkpoint = dir.load()?;
                let (marks, durable) = crate::marks::of_run(&dir);
                let recorded = serde_json::to_value(&checkpoint).unwrap_or_default();
                crate::marks::require_restorable(self, &recorded, run_id, &marks, durable)?;
                Ok(OpenedRun {
                    dir,
                    _lock: lock,
                    marks,
                    at: Opening::Resume(Box::new(checkpoint)),
                })
            }
            GraphStart::New {
                run_id,
                typed,
                strings,
            } => {
                let inputs = graph.bind_inputs(typed, strings)?;
                let dir = store.create(run_id)?;
                let lock = dir.lock()?;
                // The graph as it was when the run started, for what shows the run later.
                let file = self.read(&self.require_tool(&graph.id)?)?;
                write_atomic(&dir.path, GRAPH_FILE, &file)?;
                let (marks, _) = crate::marks::of_run(&dir);
                Ok(OpenedRun {
                    dir,
                    _lock: lock,
                    marks,
                    at: Opening::New {
                        run_id: run_id.clone(),
                        inputs,
                    },
                })
            }
        }
    }
}

/// The tools the action nodes of `nodes` call (foreach bodies included), each once.
pub(crate) fn graph_tools(nodes: &[Node]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for node in nodes {
        let called = match &node.body {
            Body::Action(action) => vec![action.tool.as_str()],
            Body::Foreach(foreach) => graph_tools(&foreach.body),
            _ => Vec::new(),
        };
        for tool in called {
            if !out.contains(&tool) {
                out.push(tool);
            }
        }
    }
    out
}

/// Writes every event of a graph run to its event log, then passes it to the caller's
/// observer; a foreach's element events go to the event log, and to where the observer
/// shows them live, if anywhere.
struct Logged<'o> {
    events: SharedEvents,
    inner: &'o mut dyn Observer,
}

impl Observer for Logged<'_> {
    fn on(&mut self, event: LogEvent) {
        let events = self.events.get_mut();
        match event.inputs() {
            Some(_) => events.write(logged_json(&event)),
            None => events.write_object(&event),
        }
        self.inner.on(event);
    }

    fn elements(&mut self) -> Option<&dyn Elements> {
        Some(&self.events)
    }
}

/// A run's event log, written by the walk and, while a foreach runs, by its elements'
/// threads; and where the observer shows element events live.
struct SharedEvents(Mutex<RunEvents>, Option<Arc<dyn Elements + Send>>);

impl SharedEvents {
    /// The log, to the walk (no element runs then, so no lock is taken).
    fn get_mut(&mut self) -> &mut RunEvents {
        self.0.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// The log, once the walk is over.
    fn into_inner(self) -> RunEvents {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl Elements for SharedEvents {
    fn element(&self, event: ElementEvent) {
        let mut events = self.0.lock().unwrap_or_else(|e| e.into_inner());
        events.write_object(&event);
        if let Some(live) = &self.1 {
            live.element(event);
        }
    }
}

/// A graph event as its event log holds it: its JSON form with an action's rendered tool
/// parameters (`inputs`) added, which the `--json` stream leaves out.
pub(crate) fn logged_json(event: &LogEvent) -> Value {
    let mut json = serde_json::to_value(event).unwrap_or(Value::Null);
    if let (Some(inputs), Value::Object(fields)) = (event.inputs(), &mut json) {
        fields.insert("inputs".into(), inputs.clone());
    }
    json
}

/// A graph run opened to walk: its directory, its lock (held until the run ends), the key its
/// secret markers are minted under and where it starts.
pub(crate) struct OpenedRun {
    pub(crate) dir: RunDir,
    pub(crate) _lock: RunLock,
    pub(crate) marks: MarkKey,
    pub(crate) at: Opening,
}

/// Where an opened graph run starts.
pub(crate) enum Opening {
    /// From a resumed run's last checkpoint.
    Resume(Box<Checkpoint>),
    /// A new run, with its bound inputs.
    New {
        run_id: String,
        inputs: Map<String, Value>,
    },
}
