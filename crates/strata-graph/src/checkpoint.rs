//! The checkpoint of a run: where it stands (step, next node, status) and its data (state,
//! inputs, last error), written atomically after every step.
//!
//! A write goes to `checkpoint.json.tmp`, is flushed to disk (`fsync`), renamed over
//! `checkpoint.json`, and the directory is synced: a reader (or a resume after `SIGKILL`)
//! sees either the previous checkpoint or the new one, never a torn file.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer};

/// The checkpoint file's name inside a run directory.
pub const FILE: &str = "checkpoint.json";

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
}

impl Status {
    /// The status as shown in logs and `strata runs`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Limited => "limited",
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
#[derive(Debug, Clone, PartialEq, Deserialize)]
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

#[derive(Serialize)]
struct Record<'a> {
    version: u32,
    #[serde(flatten)]
    progress: &'a Progress,
    state: &'a Value,
    inputs: &'a Value,
    error: Option<&'a Value>,
}

/// Unix seconds now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Io,
        format!("cannot {what} `{}`: {e}", path.display()),
    )
}

/// One run's directory (`.strata/runs/<run-id>/`).
#[derive(Debug, Clone)]
pub struct RunDir {
    /// The directory.
    pub path: PathBuf,
}

impl RunDir {
    /// The checkpoint file.
    pub fn file(&self) -> PathBuf {
        self.path.join(FILE)
    }

    /// Writes a checkpoint atomically; `root` is the walker's context (`state`, `inputs`,
    /// `error`).
    pub fn save(&self, progress: &Progress, root: &Value) -> Result<(), Error> {
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
        })?;
        write_atomic(&self.path, FILE, &bytes)
    }

    /// Reads the checkpoint back.
    pub fn load(&self) -> Result<Checkpoint, Error> {
        let file = self.file();
        let bytes = fs::read(&file).map_err(|e| io_error("read", &file, e))?;
        let cp: Checkpoint = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                format!("`{}` is not a valid checkpoint: {e}", file.display()),
            )
        })?;
        if cp.version != VERSION {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!(
                    "checkpoint version {} is not supported (expected {VERSION})",
                    cp.version
                ),
            ));
        }
        Ok(cp)
    }
}

/// Writes `bytes` to `dir/name` through a synced temporary file and a rename, then syncs
/// the directory.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let tmp = dir.join(format!("{name}.tmp"));
    let target = dir.join(name);
    let mut file = File::create(&tmp).map_err(|e| io_error("create", &tmp, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("write", &tmp, e))?;
    drop(file);
    fs::rename(&tmp, &target).map_err(|e| io_error("replace", &target, e))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("sync", dir, e))
}
