//! A walk in parts, for an engine that runs each node somewhere else (a workflow exported
//! by `strata export argo`): [`Walker::begin`] makes a run's first checkpoint,
//! [`Walker::advance`] takes a checkpoint one step further, and a foreach's elements can run
//! apart ([`Walker::foreach_items`], [`Walker::foreach_element`]) and come back to
//! [`Walker::advance`] as its work, collected by [`collect`]. The checkpoints are the ones a
//! run writes, so a walk in parts ends as the whole walk would.
//!
//! [`Walker::walk_in_parts`] drives such a walk from one place with every part run by a
//! [`Parts`] (each call a task on another engine: `strata.ray`'s Ray tasks), the checkpoint
//! after each step handed back to the caller to keep.

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer, Warning};

use crate::checkpoint::{Checkpoint, Status, VERSION};
use crate::events::{Elements, Observer};
use crate::exec::{Exec, Failure};
use crate::foreach::fan_out;
use crate::model::{Body, Foreach, Graph, Node};
use crate::walker::{Run, Walker};

pub use crate::foreach::collect;

/// The checkpoint of a run as it stands.
fn checkpoint_of(run: Run) -> Checkpoint {
    let Value::Object(mut root) = run.root else {
        return Checkpoint {
            version: VERSION,
            progress: run.progress,
            state: Map::new(),
            inputs: Map::new(),
            error: None,
        };
    };
    let object = |v: Option<Value>| match v {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    Checkpoint {
        version: VERSION,
        progress: run.progress,
        state: object(root.remove("state")),
        inputs: object(root.remove("inputs")),
        error: root.remove("error"),
    }
}

/// A checkpoint taken one step further, with the error that ended the run at that step
/// (`None` while it goes on, or when it completed).
#[derive(Debug, Clone)]
pub struct Advanced {
    /// The new checkpoint.
    pub checkpoint: Checkpoint,
    /// The error that ended the run, in full (the checkpoint keeps only its text).
    pub failure: Option<Error>,
}

/// Where the parts of a walk run: each call one task on another engine, given the
/// checkpoint the walk stands at. [`Walker`] runs them here.
pub trait Parts: Sync {
    /// [`Walker::begin`]: the first checkpoint of a new run.
    fn begin(
        &self,
        run_id: &str,
        inputs: &Map<String, Value>,
        started: u64,
    ) -> Result<Checkpoint, Error>;

    /// [`Walker::advance_to`]: `cp` one step further, with `work` a foreach's collected
    /// outputs.
    fn advance(
        &self,
        cp: &Checkpoint,
        work: Option<Result<Value, Failure>>,
    ) -> Result<Advanced, Error>;

    /// [`Walker::foreach_items`]: the list of the foreach `cp` is about to run.
    fn items(&self, cp: &Checkpoint) -> Result<Result<Vec<Value>, Failure>, Error>;

    /// [`Walker::foreach_element`]: element `index`, `item`, of that foreach (a part that
    /// could not run is the element's failure).
    fn element(&self, cp: &Checkpoint, index: usize, item: Value) -> Result<Value, Failure>;
}

impl Parts for Walker<'_> {
    fn begin(
        &self,
        run_id: &str,
        inputs: &Map<String, Value>,
        started: u64,
    ) -> Result<Checkpoint, Error> {
        Ok(Walker::begin(
            self,
            run_id,
            inputs.clone(),
            started,
            &mut crate::Silent,
        ))
    }

    fn advance(
        &self,
        cp: &Checkpoint,
        work: Option<Result<Value, Failure>>,
    ) -> Result<Advanced, Error> {
        self.advance_to(cp.clone(), work, &mut crate::Silent)
    }

    fn items(&self, cp: &Checkpoint) -> Result<Result<Vec<Value>, Failure>, Error> {
        self.foreach_items(cp, &mut Vec::new())
    }

    fn element(&self, cp: &Checkpoint, index: usize, item: Value) -> Result<Value, Failure> {
        self.foreach_element(cp, index, item, &mut Vec::new(), None)
            .unwrap_or_else(|e| Err(e.into()))
    }
}

impl Walker<'_> {
    /// The first checkpoint of run `run_id` with bound `inputs` (the run is reported started
    /// and the `graph_started` hooks fire): the next step runs the start node.
    pub fn begin(
        &self,
        run_id: &str,
        inputs: Map<String, Value>,
        started: u64,
        obs: &mut dyn Observer,
    ) -> Checkpoint {
        let run = Run::new(self.graph, run_id, inputs, started);
        self.open(&run, true, obs);
        checkpoint_of(run)
    }

    /// Takes a running checkpoint one step further — the node it names runs (or the step
    /// limit is handled) — and, when the run ends there, finishes it (`graph_completed`
    /// fires), exactly as a step of the whole walk does. `work` is the node's work when it
    /// was done elsewhere: a foreach's collected outputs.
    pub fn advance(
        &self,
        cp: Checkpoint,
        work: Option<Result<Value, Failure>>,
        obs: &mut dyn Observer,
    ) -> Result<Checkpoint, Error> {
        self.advance_to(cp, work, obs).map(|a| a.checkpoint)
    }

    /// [`Walker::advance`], with the error that ended the run at this step.
    pub fn advance_to(
        &self,
        cp: Checkpoint,
        work: Option<Result<Value, Failure>>,
        obs: &mut dyn Observer,
    ) -> Result<Advanced, Error> {
        let mut run = self.run_of(cp)?;
        self.turn(&mut run, work, obs);
        let failure = run.failure.take();
        Ok(Advanced {
            checkpoint: checkpoint_of(run),
            failure,
        })
    }

    /// Walks run `cp` to its end with every part run by `parts`: each step one
    /// [`Parts::advance`]; a foreach's list, its elements (in parallel, up to its
    /// `max_concurrency`, when it is `parallel`, else one by one; after a failure no new
    /// element starts, as in the whole walk) and then the step that takes their collected
    /// outputs. `keep` receives every checkpoint as the walk goes. A part that answers an
    /// error of kind `cancelled` ends the run as `cancelled` at the node it stood at (a
    /// resume runs that node again). A checkpoint of a resumed run (`fresh` false) is checked
    /// first as [`Walker::resume`] checks it.
    pub fn walk_in_parts(
        &self,
        mut cp: Checkpoint,
        fresh: bool,
        parts: &dyn Parts,
        keep: &mut dyn FnMut(&mut Checkpoint) -> Result<(), Error>,
    ) -> Result<Advanced, Error> {
        if !fresh {
            // Checked as a resume checks it; a cancelled run goes on from where it stopped.
            cp = checkpoint_of(self.run_of(cp)?);
        }
        let mut failure = None;
        while cp.progress.status == Status::Running {
            let step = foreach_next(self.graph, &cp)
                .map(|f| foreach_work(parts, f, &cp))
                .transpose()
                .and_then(|work| parts.advance(&cp, work));
            let advanced = match step {
                Err(e) if e.kind() == ErrorKind::Cancelled => {
                    // The part was cancelled: the run stops at its node, as a cancelled
                    // step of the whole walk stops it, and a resume runs the node again.
                    cp.progress.status = Status::Cancelled;
                    cp.progress.failure = Some(crate::errors::error_line(&e));
                    keep(&mut cp)?;
                    return Ok(Advanced {
                        checkpoint: cp,
                        failure: Some(e),
                    });
                }
                step => step?,
            };
            (cp, failure) = (advanced.checkpoint, advanced.failure);
            keep(&mut cp)?;
        }
        Ok(Advanced {
            checkpoint: cp,
            failure,
        })
    }

    /// The foreach node a checkpoint is about to run.
    fn foreach_at(&self, cp: &Checkpoint) -> Result<(&Node, &Foreach), Error> {
        let node = cp
            .progress
            .node
            .as_deref()
            .and_then(|id| self.graph.index_of(id))
            .map(|i| &self.graph.nodes[i]);
        match node {
            Some(
                n @ Node {
                    body: Body::Foreach(f),
                    ..
                },
            ) => Ok((n, f)),
            _ => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!(
                    "the checkpoint's next node `{}` is not a foreach",
                    cp.progress.node.as_deref().unwrap_or("")
                ),
            )),
        }
    }

    /// The elements of the foreach node a checkpoint is about to run: its `over`, rendered
    /// against the checkpoint's state. `Err` holds the node's failure. At the step limit
    /// the node does not run: no element starts (the list is empty), and
    /// [`Walker::advance`] handles the limit.
    pub fn foreach_items(
        &self,
        cp: &Checkpoint,
        warnings: &mut Vec<Warning>,
    ) -> Result<Result<Vec<Value>, Failure>, Error> {
        let (node, f) = self.foreach_at(cp)?;
        if cp.progress.step >= cp.progress.budget {
            return Ok(Ok(Vec::new()));
        }
        let root = root_of(cp);
        Ok(crate::foreach::items(
            &self.exec(),
            node,
            f,
            &root,
            warnings,
        ))
    }

    /// Runs the body of the foreach node a checkpoint is about to run for element `index`,
    /// `item`: the element's output, or its failure. The retries of its actions' tools are
    /// reported to `events`, when given, as the whole walk reports them.
    pub fn foreach_element(
        &self,
        cp: &Checkpoint,
        index: usize,
        item: Value,
        warnings: &mut Vec<Warning>,
        events: Option<&dyn Elements>,
    ) -> Result<Result<Value, Failure>, Error> {
        let (node, f) = self.foreach_at(cp)?;
        let root = root_of(cp);
        let exec = Exec {
            elements: events.map(|sink| (sink, cp.progress.step + 1)),
            ..self.exec()
        };
        let (result, mut met) = crate::foreach::element(&exec, node, f, &root, index, item);
        warnings.append(&mut met);
        Ok(result)
    }
}

/// The foreach a running checkpoint runs next, when its node is one and the step limit is not
/// reached (at the limit the step handles the limit: no element runs).
fn foreach_next<'g>(graph: &'g Graph, cp: &Checkpoint) -> Option<&'g Foreach> {
    if cp.progress.step >= cp.progress.budget {
        return None;
    }
    let i = graph.index_of(cp.progress.node.as_deref()?)?;
    match &graph.nodes[i].body {
        Body::Foreach(f) => Some(f),
        _ => None,
    }
}

/// A foreach's work with its parts run by `parts`: its list, its elements, their outputs
/// collected (or the list's failure).
fn foreach_work(
    parts: &dyn Parts,
    f: &Foreach,
    cp: &Checkpoint,
) -> Result<Result<Value, Failure>, Error> {
    let items = match parts.items(cp)? {
        Ok(items) => items,
        Err(failure) => return Ok(Err(failure)),
    };
    let outcomes = fan_out(f, &items, |i, item| {
        (parts.element(cp, i, item), Vec::new())
    });
    Ok(collect(
        outcomes.into_iter().map(|o| o.map(|(r, _)| r)).collect(),
    ))
}

/// The context a checkpoint holds: `state`, `inputs` and `error`.
fn root_of(cp: &Checkpoint) -> Value {
    let mut root = Map::new();
    root.insert("state".into(), Value::Object(cp.state.clone()));
    root.insert("inputs".into(), Value::Object(cp.inputs.clone()));
    if let Some(e) = &cp.error {
        root.insert("error".into(), e.clone());
    }
    Value::Object(root)
}
