//! The checkpoint of a run: where it stands (step, next node, status) and its data (state,
//! inputs, last error), written atomically after every step.
//!
//! The run directory, its lock and the atomic write are `strata-runs`' (shared with plan
//! runs): a write goes to `checkpoint.json.tmp`, is flushed to disk (`fsync`), renamed over
//! `checkpoint.json`, and the directory is synced: a reader (or a resume after `SIGKILL`)
//! sees either the previous checkpoint or the new one, never a torn file.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, FieldPath, Layer, Location, PathSeg};
use strata_runs::RunDir;

/// The format version written into every checkpoint.
pub const VERSION: u32 = 1;

/// How a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Started and not finished (or killed: resume it).
    Running,
    /// Ended normally (a return node, or a node with nowhere to go).
    Completed,
    /// Ended by an error (`on_error: fail`).
    Failed,
    /// Ended by `max_steps`.
    Limited,
    /// Its caller cancelled it (a tool call was cancelled): the step it stopped is not
    /// counted, and runs again when the run is resumed.
    Cancelled,
}

impl Status {
    /// The status as shown in logs and `strata runs`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Limited => "limited",
            Status::Cancelled => "cancelled",
        }
    }
}

/// Where a run stands, apart from its data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The run id.
    pub run_id: String,
    /// The graph's id.
    pub graph: String,
    /// The fingerprint of the graph file the run started with.
    pub fingerprint: String,
    /// How the run stands.
    pub status: Status,
    /// Steps completed.
    pub step: u64,
    /// The node the next step runs (`None` once finished).
    pub node: Option<String>,
    /// Steps allowed before the `limit` event (grows once when `on_error` handles a limit).
    pub budget: u64,
    /// True once a limit has been handled by going to the `on_error` node.
    pub limit_handled: bool,
    /// The graph's result, once completed.
    pub result: Option<Value>,
    /// Why the run failed, once failed.
    pub failure: Option<String>,
    /// Unix seconds when the run started.
    pub started: u64,
    /// Unix seconds of this checkpoint.
    pub updated: u64,
}

/// A checkpoint as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The format version.
    pub version: u32,
    /// Where the run stands.
    #[serde(flatten)]
    pub progress: Progress,
    /// The state.
    pub state: Map<String, Value>,
    /// The inputs.
    pub inputs: Map<String, Value>,
    /// The last error handled by `on_error` (what `${error…}` reads).
    pub error: Option<Value>,
}

impl Checkpoint {
    /// The checkpoint as JSON, as `checkpoint.json` holds it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a checkpoint from its JSON; `name` says where it came from in messages. A
    /// checkpoint that is not JSON, or not a checkpoint, is a `syntax` error at `name`'s line
    /// and column; one of another format version a `run_state` error about its `version`.
    pub fn from_json(bytes: &[u8], name: &str) -> Result<Checkpoint, Error> {
        let cp: Checkpoint = serde_json::from_slice(bytes).map_err(|e| {
            let (line, column) = (e.line(), e.column());
            let error = Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                format!("`{name}` is not a valid checkpoint: {e}"),
            )
            .with_source(e);
            match line {
                0 => error,
                line => error.at_location(Location {
                    file: name.to_string(),
                    line,
                    column: column.max(1),
                }),
            }
        })?;
        if cp.version != VERSION {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!(
                    "checkpoint version {} is not supported (expected {VERSION})",
                    cp.version
                ),
            )
            .at_path(&FieldPath(vec![PathSeg::Key("version".into())]))
            .with_hint("it was written by another version of strata: run it with that one"));
        }
        Ok(cp)
    }
}

#[derive(Serialize)]
struct Record<'a> {
    version: u32,
    #[serde(flatten)]
    progress: &'a Progress,
    state: &'a Value,
    inputs: &'a Value,
    error: Option<&'a Value>,
}

/// A graph run's checkpoint in its [`RunDir`].
pub trait Checkpoints {
    /// Writes a checkpoint atomically; `root` is the walker's context (`state`, `inputs`,
    /// `error`).
    fn save(&self, progress: &Progress, root: &Value) -> Result<(), Error>;

    /// Reads the checkpoint back.
    fn load(&self) -> Result<Checkpoint, Error>;
}

impl Checkpoints for RunDir {
    fn save(&self, progress: &Progress, root: &Value) -> Result<(), Error> {
        let empty = Value::Object(Map::new());
        let record = Record {
            version: VERSION,
            progress,
            state: root.get("state").unwrap_or(&empty),
            inputs: root.get("inputs").unwrap_or(&empty),
            error: root.get("error"),
        };
        let bytes = serde_json::to_vec(&record).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot encode checkpoint: {e}"),
            )
            .with_source(e)
        })?;
        self.write_checkpoint(&bytes)
    }

    fn load(&self) -> Result<Checkpoint, Error> {
        let file = self.file();
        let bytes = self.read_checkpoint()?;
        Checkpoint::from_json(&bytes, &file.display().to_string())
    }
}
