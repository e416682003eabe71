//! A walk in parts, for an engine that runs each node somewhere else (a workflow exported
//! by `strata export argo`): [`Walker::begin`] makes a run's first checkpoint,
//! [`Walker::advance`] takes a checkpoint one step further, and a foreach's elements can run
//! apart ([`Walker::foreach_items`], [`Walker::foreach_element`]) and come back to
//! [`Walker::advance`] as its work, collected by [`collect`]. The checkpoints are the ones a
//! run writes, so a walk in parts ends as the whole walk would.

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer, Warning};

use crate::checkpoint::{Checkpoint, VERSION};
use crate::events::Observer;
use crate::exec::Failure;
use crate::model::{Body, Foreach, Node};
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
        let mut run = self.run_of(cp)?;
        self.turn(&mut run, work, obs);
        Ok(checkpoint_of(run))
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
    /// against the checkpoint's state. `Err` holds the node's failure.
    pub fn foreach_items(
        &self,
        cp: &Checkpoint,
        warnings: &mut Vec<Warning>,
    ) -> Result<Result<Vec<Value>, Failure>, Error> {
        let (node, f) = self.foreach_at(cp)?;
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
    /// `item`: the element's output, or its failure.
    pub fn foreach_element(
        &self,
        cp: &Checkpoint,
        index: usize,
        item: Value,
        warnings: &mut Vec<Warning>,
    ) -> Result<Result<Value, Failure>, Error> {
        let (node, f) = self.foreach_at(cp)?;
        let root = root_of(cp);
        let (result, mut met) = crate::foreach::element(&self.exec(), node, f, &root, index, item);
        warnings.append(&mut met);
        Ok(result)
    }
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
