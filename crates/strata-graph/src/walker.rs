//! The walker: runs a graph step by step from a fresh start or a checkpoint, firing hooks,
//! handling errors and the step limit through `on_error`, and checkpointing after every step
//! (or as often as [`Walker::checkpoint_every`] says).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use strata_core::{Error, ErrorKind, FieldPath, Layer, Layers, RenderOptions, Warning};

use crate::checkpoint::{Checkpoint, Checkpoints, Progress, Status};
use crate::errors::error_line;
use crate::events::{Change, LogEvent, Observer, Taken};
use crate::exec::{apply, choose, rollback, Exec, Failure, Work};
use crate::fields::key;
use crate::hooks::{Event, EVENTS};
use crate::model::{Body, Graph, Node};
use strata_runs::{now, Cadence, CheckpointEvery, RunDir};
use strata_tools::{fire, HookCall, Retries, ToolRunner};

/// Runs graphs.
pub struct Walker<'a> {
    /// The graph being run.
    pub(crate) graph: &'a Graph,
    tools: &'a dyn ToolRunner,
    options: RenderOptions,
    run_dir: Option<RunDir>,
    every: CheckpointEvery,
    hooked: [bool; EVENTS.len()],
    prompts: Option<&'a strata_prompts::PromptManager>,
    /// The `retries` of each tool the graph's actions call that declares them, read once
    /// when the walker is made (not at every call).
    retries: BTreeMap<String, Retries>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The run id.
    pub run_id: String,
    /// How it ended.
    pub status: Status,
    /// Steps completed.
    pub steps: u64,
    /// The graph's result: the return node's output, or the state when the graph ended at a
    /// node with nowhere to go; null when the run failed or hit the limit.
    pub result: Value,
    /// Why it failed or stopped: the failed node's error (its message naming the node), or
    /// the `limit` error; [`crate::error_line`] gives the text progress lines show.
    pub failure: Option<Error>,
}

/// A run in memory: its progress, the context (`state`, `inputs`, `error`) and the next node.
pub(crate) struct Run {
    pub(crate) progress: Progress,
    pub(crate) root: Value,
    pub(crate) cur: Option<usize>,
    /// Why the run failed or stopped, once it has (`progress.failure` holds its text).
    pub(crate) failure: Option<Error>,
}

impl Run {
    /// A new run `run_id` of graph `g` with bound `inputs`, started at `started` (seconds),
    /// about to run the start node.
    pub(crate) fn new(g: &Graph, run_id: &str, inputs: Map<String, Value>, started: u64) -> Run {
        Run {
            progress: Progress {
                run_id: run_id.to_string(),
                graph: g.id.clone(),
                fingerprint: g.fingerprint.clone(),
                status: Status::Running,
                step: 0,
                node: Some(g.nodes[g.start].id.clone()),
                budget: g.max_steps,
                limit_handled: false,
                result: None,
                failure: None,
                started,
                updated: started,
            },
            root: json!({"state": g.state, "inputs": inputs}),
            cur: Some(g.start),
            failure: None,
        }
    }
}

/// What a successful step did.
enum Done {
    /// Assigned, and went along an edge (or nowhere).
    Next {
        to: Option<usize>,
        taken: Taken,
        changes: Vec<Change>,
        result: Option<Box<Work>>,
    },
    /// Returned the graph's result.
    Return(Value),
}

/// A node as hook contexts show it: `{id, kind}`.
pub(crate) fn node_json(node: &Node) -> Value {
    json!({"id": node.id, "kind": node.body.kind()})
}

fn event_index(event: Event) -> usize {
    EVENTS.iter().position(|e| *e == event).unwrap_or(0)
}

impl<'a> Walker<'a> {
    /// A walker for `graph` calling `tools`; with `run_dir`, every step is checkpointed
    /// there. `options` say what a missing context path does.
    pub fn new(
        graph: &'a Graph,
        tools: &'a dyn ToolRunner,
        run_dir: Option<RunDir>,
        options: RenderOptions,
    ) -> Walker<'a> {
        let mut hooked = [false; EVENTS.len()];
        for h in &graph.hooks {
            if let Some(event) = Event::parse(h.event) {
                hooked[event_index(event)] = true;
            }
        }
        let retries = graph
            .called_tools()
            .into_iter()
            .filter_map(|tool| {
                let declared = tools.scale(&tool).retries?;
                Some((tool, declared))
            })
            .collect();
        Walker {
            graph,
            tools,
            options,
            run_dir,
            every: CheckpointEvery::default(),
            hooked,
            prompts: None,
            retries,
        }
    }

    /// Checkpoints every `n` steps or every interval instead of after every step. The first
    /// checkpoint (before the first step) and the last (once the run has ended) are always
    /// written; a run killed in between resumes from the last one written and runs again
    /// the steps taken since.
    pub fn checkpoint_every(mut self, every: CheckpointEvery) -> Walker<'a> {
        self.every = every;
        self
    }

    /// Gives prompt nodes the project's prompt templates.
    pub fn with_prompts(mut self, prompts: &'a strata_prompts::PromptManager) -> Walker<'a> {
        self.prompts = Some(prompts);
        self
    }

    /// Starts run `run_id` with bound `inputs` (see [`Graph::bind_inputs`]).
    pub fn start(
        &self,
        run_id: &str,
        inputs: Map<String, Value>,
        observer: &mut dyn Observer,
    ) -> Result<Outcome, Error> {
        let run = Run::new(self.graph, run_id, inputs, now());
        self.walk(run, true, observer)
    }

    /// Continues a run from its checkpoint: the step that was interrupted runs again.
    pub fn resume(&self, cp: Checkpoint, observer: &mut dyn Observer) -> Result<Outcome, Error> {
        let run = self.run_of(cp)?;
        self.walk(run, false, observer)
    }

    /// The run a checkpoint stands for, once it is known to belong to this graph (the same
    /// file) and to be still running.
    pub(crate) fn run_of(&self, cp: Checkpoint) -> Result<Run, Error> {
        let p = &cp.progress;
        let refuse = |m: String, hint: &str| {
            Err(Error::new(Layer::REQUEST, ErrorKind::RunState, m).with_hint(hint))
        };
        if p.graph != self.graph.id {
            return refuse(
                format!(
                    "run `{}` belongs to graph `{}`, not `{}`",
                    p.run_id, p.graph, self.graph.id
                ),
                &format!(
                    "resume it with `strata run {} --resume {}`",
                    p.graph, p.run_id
                ),
            );
        }
        if p.fingerprint != self.graph.fingerprint {
            return refuse(
                format!(
                    "`{}` changed since run `{}` started",
                    self.graph.file, p.run_id
                ),
                "a run resumes only on the graph file it started with; start a new run",
            );
        }
        if !matches!(p.status, Status::Running | Status::Cancelled) {
            return refuse(
                format!("run `{}` has already ended ({})", p.run_id, p.status.name()),
                "`strata runs` shows every run and its status",
            );
        }
        let cur = match &p.node {
            Some(id) => Some(self.graph.index_of(id).ok_or_else(|| {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::RunState,
                    format!("the checkpoint names an unknown node `{id}`"),
                )
                .at_path(&key(&FieldPath::root(), "node"))
            })?),
            None => None,
        };
        let mut root = Map::new();
        root.insert("state".into(), Value::Object(cp.state));
        root.insert("inputs".into(), Value::Object(cp.inputs));
        if let Some(e) = cp.error {
            root.insert("error".into(), e);
        }
        // A cancelled run goes on from the step it stopped.
        let mut progress = cp.progress;
        if progress.status == Status::Cancelled {
            progress.status = Status::Running;
            progress.failure = None;
        }
        Ok(Run {
            progress,
            root: Value::Object(root),
            cur,
            failure: None,
        })
    }

    fn walk(&self, mut run: Run, fresh: bool, obs: &mut dyn Observer) -> Result<Outcome, Error> {
        self.open(&run, fresh, obs);
        if fresh {
            self.save(&mut run)?;
        }
        let mut cadence = Cadence::new(self.every);
        while run.progress.status == Status::Running {
            self.turn(&mut run, None, obs);
            if cadence.step() || run.progress.status != Status::Running {
                self.save(&mut run)?;
                cadence.saved();
            }
        }
        let p = run.progress;
        Ok(Outcome {
            run_id: p.run_id,
            status: p.status,
            steps: p.step,
            result: p.result.unwrap_or(Value::Null),
            failure: run.failure,
        })
    }

    /// Opens a run: reports it started (or resumed) and, when `fresh`, fires the
    /// `graph_started` hooks. The whole walk and the walk in parts ([`Walker::begin`]) both
    /// open a run here.
    pub(crate) fn open(&self, run: &Run, fresh: bool, obs: &mut dyn Observer) {
        obs.on(LogEvent::Started {
            run_id: run.progress.run_id.clone(),
            graph: self.graph.id.clone(),
            node: run.progress.node.clone().unwrap_or_default(),
            step: run.progress.step,
            resumed: !fresh,
        });
        if fresh {
            self.fire(Event::GraphStarted, run, Vec::new, obs);
        }
    }

    /// Takes a running run one step further — the next node runs (with `work`, its work
    /// when done elsewhere), or the step limit is handled, or a run with nowhere to go
    /// completes — and, when the run ends there, closes it (`graph_completed` fires, the run
    /// is reported finished). The whole walk ([`Walker::start`], [`Walker::resume`]) and the
    /// walk in parts ([`Walker::advance`]) both take every step here, so they cannot drift.
    pub(crate) fn turn(
        &self,
        run: &mut Run,
        work: Option<Result<Value, Failure>>,
        obs: &mut dyn Observer,
    ) {
        match run.cur {
            None => {
                let state = run.root.get("state").cloned().unwrap_or(Value::Null);
                self.finish(run, Status::Completed, state);
            }
            Some(cur) if run.progress.step >= run.progress.budget => self.limit(run, cur, obs),
            Some(cur) => self.step(run, cur, work, obs),
        }
        if run.progress.status != Status::Running {
            self.close(run, obs);
        }
    }

    /// Fires `graph_completed` and reports the run finished.
    fn close(&self, run: &Run, obs: &mut dyn Observer) {
        let p = &run.progress;
        let (status, output) = (p.status.name(), p.result.clone().unwrap_or(Value::Null));
        self.fire(
            Event::GraphCompleted,
            run,
            || vec![("status", Value::from(status)), ("output", output)],
            obs,
        );
        obs.on(LogEvent::Finished {
            run_id: p.run_id.clone(),
            status: p.status,
            steps: p.step,
            result: p.result.clone().unwrap_or(Value::Null),
            failure: run.failure.clone(),
        });
    }

    fn save(&self, run: &mut Run) -> Result<(), Error> {
        let Some(dir) = &self.run_dir else {
            return Ok(());
        };
        run.progress.updated = now();
        dir.save(&run.progress, &run.root)
    }

    /// Fires the hooks of `event` with the run's context plus `extra` (built only when a
    /// hook listens), reporting firings and warnings to `obs`.
    pub(crate) fn fire(
        &self,
        event: Event,
        run: &Run,
        extra: impl FnOnce() -> Vec<(&'static str, Value)>,
        obs: &mut dyn Observer,
    ) {
        if !self.hooked[event_index(event)] {
            return;
        }
        let mut ctx = Map::new();
        ctx.insert("graph".into(), Value::from(self.graph.id.as_str()));
        ctx.insert("run_id".into(), Value::from(run.progress.run_id.as_str()));
        ctx.insert("event".into(), Value::from(event.name()));
        ctx.insert("step".into(), Value::from(run.progress.step));
        for (k, v) in extra() {
            ctx.insert(k.into(), v);
        }
        let context = Layers(&[&ctx, &run.root]);
        let call = HookCall {
            tools: self.tools,
            render: self.options,
            dry_run: false,
        };
        let mut warnings: Vec<Warning> = Vec::new();
        let firings = fire(
            &self.graph.hooks,
            event.name(),
            &context,
            &Map::new(),
            &call,
            &mut warnings,
        );
        for f in firings {
            obs.on(LogEvent::Hook(Box::new(f)));
        }
        for warning in warnings {
            obs.on(LogEvent::Warning {
                step: run.progress.step,
                warning,
            });
        }
    }

    /// Ends the run with `status` because of `error`: the run's failure, and its text in
    /// the checkpoint.
    pub(crate) fn fail(&self, run: &mut Run, status: Status, error: Error) {
        run.progress.failure = Some(error_line(&error));
        run.failure = Some(error);
        self.finish(run, status, Value::Null);
    }

    /// Ends the run with `status` (the result is kept only when completed).
    pub(crate) fn finish(&self, run: &mut Run, status: Status, result: Value) {
        run.progress.status = status;
        run.progress.result = (status == Status::Completed).then_some(result);
        run.progress.node = None;
        run.cur = None;
    }

    /// Sets the node the next step runs (`None`: nowhere).
    pub(crate) fn go(&self, run: &mut Run, to: Option<usize>) {
        run.cur = to;
        run.progress.node = to.map(|i| self.graph.nodes[i].id.clone());
    }

    /// Runs node `cur`; `given` is its work when it was done elsewhere (a foreach's
    /// elements run by another engine).
    pub(crate) fn step(
        &self,
        run: &mut Run,
        cur: usize,
        given: Option<Result<Value, Failure>>,
        obs: &mut dyn Observer,
    ) {
        let node = &self.graph.nodes[cur];
        self.fire(
            Event::BeforeNode,
            run,
            || vec![("node", node_json(node))],
            obs,
        );
        let mut warnings = Vec::new();
        let elements = obs.elements().map(|sink| (sink, run.progress.step + 1));
        let exec = Exec {
            elements,
            ..self.exec()
        };
        let done = self.run_node(&exec, node, &mut run.root, given, &mut warnings);
        run.progress.step += 1;
        let step = run.progress.step;
        for warning in warnings {
            obs.on(LogEvent::Warning { step, warning });
        }
        let (to, taken, changes, result, output) = match done {
            Err(f) => return self.failed(run, cur, f, obs),
            Ok(Done::Return(v)) => (None, Taken::Return, Vec::new(), None, Some(v)),
            Ok(Done::Next {
                to,
                taken,
                mut changes,
                result,
            }) => {
                changes.retain(|c| c.from.as_ref() != Some(&c.to));
                (to, taken, changes, result, None)
            }
        };
        let after = self.hooked[event_index(Event::AfterNode)].then(|| {
            let mut changed = Map::new();
            for c in &changes {
                changed.insert(c.key.clone(), json!({"from": c.from, "to": c.to}));
            }
            let (result, run_json) = match (&output, &result) {
                (Some(v), _) => (v.clone(), Value::Null),
                (None, Some(w)) => (w.result.clone(), w.run.clone().unwrap_or(Value::Null)),
                (None, None) => (Value::Null, Value::Null),
            };
            vec![
                ("node", node_json(node)),
                ("result", result),
                ("run", run_json),
                ("changes", Value::Object(changed)),
            ]
        });
        let inputs = result.as_ref().and_then(|w| w.inputs.clone());
        obs.on(LogEvent::Step {
            step,
            node: node.id.clone(),
            kind: node.body.kind(),
            taken,
            changes,
            inputs,
        });
        if let Some(context) = after {
            self.fire(Event::AfterNode, run, || context, obs);
        }
        match output {
            Some(v) => self.finish(run, Status::Completed, v),
            None => {
                self.go(run, to);
                if to.is_none() {
                    let state = run.root.get("state").cloned().unwrap_or(Value::Null);
                    self.finish(run, Status::Completed, state);
                }
            }
        }
    }

    /// What node work needs, from this walker.
    pub(crate) fn exec(&self) -> Exec<'_> {
        Exec {
            tools: self.tools,
            options: self.options,
            prompts: self.prompts,
            retries: &self.retries,
            elements: None,
            index: None,
        }
    }

    /// Runs one node against the context; on failure the context is as it was.
    fn run_node(
        &self,
        exec: &Exec<'_>,
        node: &Node,
        root: &mut Value,
        given: Option<Result<Value, Failure>>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Done, Failure> {
        if let Body::Return(t) = &node.body {
            return exec
                .render(t, root, &key(&node.path, "output"), warnings)
                .map(Done::Return);
        }
        let work = match given {
            Some(result) => Some(Work {
                result: result?,
                run: None,
                inputs: None,
            }),
            None => exec.work(node, root, warnings)?,
        };
        set_work(root, work.as_ref());
        let outcome = exec.assignments(node, root, warnings).and_then(|values| {
            let changes = apply(root, values);
            match choose(node, root, false) {
                Ok((to, taken)) => Ok((to, taken, changes)),
                Err(f) => {
                    rollback(root, changes);
                    Err(f)
                }
            }
        });
        set_work(root, None);
        match outcome {
            Ok((to, taken, changes)) => Ok(Done::Next {
                to,
                taken,
                changes,
                result: work.map(Box::new),
            }),
            Err(mut f) => {
                f.work = f.work.or(work.map(Box::new));
                Err(f)
            }
        }
    }
}

/// Shows a node's work as `result` and `run` in the context (or, with `None`, removes both).
pub(crate) fn set_work(root: &mut Value, work: Option<&Work>) {
    let Value::Object(map) = root else {
        return;
    };
    match work {
        Some(w) => {
            map.insert("result".into(), w.result.clone());
            match &w.run {
                Some(run) => map.insert("run".into(), run.clone()),
                None => map.remove("run"),
            };
        }
        None => {
            map.remove("result");
            map.remove("run");
        }
    }
}

/// Sets (or, with `None`, leaves alone) a top-level name of the context.
pub(crate) fn set(root: &mut Value, name: &str, value: Option<Value>) {
    if let (Some(v), Value::Object(map)) = (value, root) {
        map.insert(name.to_string(), v);
    }
}
