//! Graphs: YAML tools of kind `graph` that walk a state machine of tool calls.
//!
//! [`Graph::load`] parses and checks a graph file before anything runs (unknown keys, unknown
//! or unreachable nodes, edge order, state keys never initialised nor assigned, undeclared
//! inputs, expression errors), each error at file:line:col. [`Walker`] runs it step by step:
//! action nodes call tools through a [`strata_tools::ToolRunner`], `assign` renders layer-C templates against
//! the state as it was before the node, `next` edges are chosen by their `when` conditions,
//! foreach nodes fan out (optionally in parallel), return nodes end the run with a result.
//! Every step (or every n steps, or every interval: [`CheckpointEvery`]) is checkpointed
//! atomically into a [`RunDir`], so a killed run resumes where it stopped. Hooks fire on the run's events; [`LogEvent`]s report each step; [`draw`] renders
//! the graph as Mermaid or Graphviz.

mod checkpoint;
pub mod draw;
mod errors;
mod events;
mod exec;
mod fields;
mod foreach;
mod handling;
mod hooks;
mod inputs;
mod load;
mod model;
mod nodes;
pub mod parts;
mod prompt;
mod runs;
mod validate;
mod walker;

pub use checkpoint::{Checkpoint, Checkpoints, Progress, Status};
pub use errors::{error_line, GRAPH};
pub use events::{
    short, Change, ElementEvent, Elements, LogEvent, Observer, Recorder, Silent, Taken, Why,
};
pub use exec::{Failure, Work};
pub use hooks::{Event, CONTEXT_NAMES, EVENTS, HOOK_ACTION_KEYS, HOOK_KEYS};
pub use load::{is_graph_document, GRAPH_KEYS};
pub use model::{
    Action, Assign, Body, Edge, Foreach, Graph, Node, OnError, DEFAULT_CONCURRENCY,
    DEFAULT_MAX_STEPS,
};
pub use nodes::{node_keys, EDGE_KEYS, KINDS};
pub use prompt::{uses_prompts, PromptNode};
pub use runs::{summary, GraphRuns, RunSummary};
pub use strata_runs::{
    check_run_id, fingerprint, new_run_id, write_atomic, CheckpointEvery, RunDir, RunLock,
    RunStore, LOCK_FILE, RUNS_DIR,
};
pub use walker::{Outcome, Walker};
