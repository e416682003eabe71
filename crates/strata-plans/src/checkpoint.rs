//! A plan run recorded under `.strata/runs/<run-id>/` (see `strata-runs`), like graph runs:
//! `checkpoint.json` (kind `plan`) holds the records of the steps finished so far and is
//! replaced atomically after every step, and `plan.json` keeps the plan the run started with,
//! so that a killed run resumes without running its finished steps again.

use std::sync::mpsc;

use serde::Serialize;
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer};
use strata_runs::{write_atomic, RunDir};
use strata_tools::StepRecord;

/// The checkpoint's `kind`.
pub const KIND: &str = "plan";

/// The file holding the plan a run started with.
pub const PLAN_FILE: &str = "plan.json";

/// The format version written into every plan checkpoint.
pub const VERSION: u64 = 1;

/// How a plan run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Started and not finished (or killed: resume it).
    Running,
    /// Every step completed.
    Completed,
    /// A step failed or was skipped (or input was not a step).
    Failed,
    /// Steps wait for user values (resume it with them).
    Waiting,
    /// Its caller cancelled it: the steps it stopped run again when it is resumed.
    Cancelled,
}

impl RunStatus {
    /// The status as shown and stored.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Waiting => "waiting",
            RunStatus::Cancelled => "cancelled",
        }
    }

    fn from_name(name: &str) -> Option<RunStatus> {
        [
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Waiting,
            RunStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

/// A plan run's checkpoint. It serializes as its fields; `checkpoint.json` puts the format's
/// `version` and `kind` before them ([`Checkpoint::to_json`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checkpoint {
    /// The run id.
    pub run_id: String,
    /// The plan as named when the run started (`plans/x.yaml`, `<stdin>`).
    pub plan: String,
    /// The fingerprint of the plan's text.
    pub fingerprint: String,
    /// True when the steps arrived as a stream (such a run cannot be resumed).
    pub streamed: bool,
    /// How the run stands.
    pub status: RunStatus,
    /// Steps in the plan (so far, for a stream).
    pub steps: usize,
    /// The user values given.
    pub values: Map<String, Value>,
    /// The records of the finished steps, in the order they finished.
    pub records: Vec<StepRecord>,
    /// Unix seconds when the run started.
    pub started: u64,
    /// Unix seconds of this checkpoint.
    pub updated: u64,
}

fn bad(dir: &RunDir, why: &str) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Syntax,
        format!(
            "`{}` is not a valid plan checkpoint: {why}",
            dir.file().display()
        ),
    )
}

impl Checkpoint {
    /// The JSON form written to `checkpoint.json`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.stored()).unwrap_or(Value::Null)
    }

    /// The checkpoint as `checkpoint.json` holds it: `version` and `kind`, then its fields.
    fn stored(&self) -> Stored<'_> {
        Stored {
            version: VERSION,
            kind: KIND,
            checkpoint: self,
        }
    }

    /// Reads a plan checkpoint back.
    pub fn load(dir: &RunDir) -> Result<Checkpoint, Error> {
        let bytes = dir.read_checkpoint()?;
        let v: Value =
            serde_json::from_slice(&bytes).map_err(|e| bad(dir, &e.to_string()).with_source(e))?;
        if v.get("kind").and_then(Value::as_str) != Some(KIND) {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!("run `{}` is not a plan run", dir.id()),
            )
            .with_hint("graph runs resume with `strata run <graph> --resume <run-id>`"));
        }
        if v.get("version").and_then(Value::as_u64) != Some(VERSION) {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!(
                    "plan checkpoint version {} is not supported (expected {VERSION})",
                    v["version"]
                ),
            ));
        }
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let num = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        let records = v
            .get("records")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(dir, "no `records`"))?
            .iter()
            .map(|r| StepRecord::from_json(r).ok_or_else(|| bad(dir, "a record is malformed")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Checkpoint {
            run_id: text("run_id").ok_or_else(|| bad(dir, "no `run_id`"))?,
            plan: text("plan").ok_or_else(|| bad(dir, "no `plan`"))?,
            fingerprint: text("fingerprint").unwrap_or_default(),
            streamed: v.get("streamed").and_then(Value::as_bool).unwrap_or(false),
            status: text("status")
                .as_deref()
                .and_then(RunStatus::from_name)
                .ok_or_else(|| bad(dir, "no valid `status`"))?,
            steps: num("steps") as usize,
            values: v
                .get("values")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            records,
            started: num("started"),
            updated: num("updated"),
        })
    }
}

/// `checkpoint.json`: the format's `version` and `kind`, then the checkpoint's fields.
#[derive(Serialize)]
struct Stored<'a> {
    version: u64,
    kind: &'static str,
    #[serde(flatten)]
    checkpoint: &'a Checkpoint,
}

/// What the writer thread is asked to write.
struct Job {
    plan: Option<Vec<u8>>,
    checkpoint: Vec<u8>,
}

/// Writes a run's checkpoints on a thread of its own, so that the scheduler never waits for
/// the disk; when checkpoints come faster than the disk takes them, only the latest is
/// written. The plan, when given, is written before the first checkpoint.
pub struct Writer {
    tx: Option<mpsc::Sender<Job>>,
    handle: Option<std::thread::JoinHandle<Result<(), Error>>>,
    /// Why the writer thread could not start (what [`Writer::finish`] returns).
    unstarted: Option<Error>,
}

impl Writer {
    /// A writer for `dir`.
    pub fn start(dir: RunDir) -> Writer {
        let (tx, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("strata-checkpoints".into())
            .stack_size(strata_core::SMALL_STACK_BYTES);
        let handle = thread.spawn(move || {
            let mut first_error = None;
            while let Ok(mut job) = rx.recv() {
                while let Ok(next) = rx.try_recv() {
                    job.plan = job.plan.or(next.plan);
                    job.checkpoint = next.checkpoint;
                }
                let written = match &job.plan {
                    Some(plan) => write_atomic(&dir.path, PLAN_FILE, plan),
                    None => Ok(()),
                }
                .and_then(|()| dir.write_checkpoint(&job.checkpoint));
                if let Err(e) = written {
                    first_error.get_or_insert(e);
                }
            }
            first_error.map_or(Ok(()), Err)
        });
        match handle {
            Ok(handle) => Writer {
                tx: Some(tx),
                handle: Some(handle),
                unstarted: None,
            },
            Err(e) => Writer {
                tx: None,
                handle: None,
                unstarted: Some(
                    Error::new(
                        Layer::REQUEST,
                        ErrorKind::Io,
                        format!("cannot start the checkpoint writer: {e}"),
                    )
                    .with_source(e),
                ),
            },
        }
    }

    /// Queues `checkpoint` (and `plan`, the first time) for writing.
    pub fn write(&self, plan: Option<&Value>, checkpoint: &Checkpoint) {
        let job = Job {
            plan: plan.map(|p| serde_json::to_vec(p).unwrap_or_default()),
            checkpoint: serde_json::to_vec(&checkpoint.stored()).unwrap_or_default(),
        };
        if let Some(tx) = &self.tx {
            let _ = tx.send(job);
        }
    }

    /// Waits until everything queued is written; the first error, if any.
    pub fn finish(mut self) -> Result<(), Error> {
        self.tx = None;
        if let Some(e) = self.unstarted.take() {
            return Err(e);
        }
        match self.handle.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                "the checkpoint writer stopped",
            )),
            None => Ok(()),
        }
    }
}

/// Makes a new run durable before its first step starts: writes the plan it starts with
/// (when given) and then its first checkpoint, each replaced atomically and synced, and
/// returns once both are on disk. The checkpoint is what makes the run exist (`--resume`
/// finds it; `--run-id` refuses it): a start killed before it leaves a directory without
/// one, in which no step ran.
pub fn begin(dir: &RunDir, plan: Option<&Value>, checkpoint: &Checkpoint) -> Result<(), Error> {
    if let Some(plan) = plan {
        write_atomic(
            &dir.path,
            PLAN_FILE,
            &serde_json::to_vec(plan).unwrap_or_default(),
        )?;
    }
    dir.write_checkpoint(&serde_json::to_vec(&checkpoint.stored()).unwrap_or_default())
}

/// The plan a run started with.
pub fn load_plan(dir: &RunDir) -> Result<Value, Error> {
    let path = dir.path.join(PLAN_FILE);
    let bytes = std::fs::read(&path).map_err(|e| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Io,
            format!("cannot read `{}`: {e}", path.display()),
        )
        .with_source(e)
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Syntax,
            format!("`{}` is not valid JSON: {e}", path.display()),
        )
        .with_source(e)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use strata_runs::RunStore;
    use strata_tools::RunResult;

    use super::*;

    #[test]
    fn a_checkpoint_round_trips_and_is_told_from_graph_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let store = RunStore::new(tmp.path());
        let dir = store.create("p1").unwrap();
        let cp = Checkpoint {
            run_id: "p1".into(),
            plan: "plans/x.yaml".into(),
            fingerprint: "f".into(),
            streamed: false,
            status: RunStatus::Running,
            steps: 3,
            values: json!({"n": 1}).as_object().cloned().unwrap(),
            records: vec![StepRecord::from_run("a", "t", &RunResult::ok("{\"x\": 1}"))],
            started: 10,
            updated: 11,
        };
        let writer = Writer::start(dir.clone());
        writer.write(Some(&json!([{"tool": "t", "arguments": {}}])), &cp);
        let mut later = cp.clone();
        for n in 0..20 {
            later.updated = n;
            writer.write(None, &later);
        }
        writer.finish().unwrap();
        assert_eq!(Checkpoint::load(&dir).unwrap(), later);
        assert_eq!(dir.kind().as_deref(), Some("plan"));
        assert_eq!(
            load_plan(&dir).unwrap(),
            json!([{"tool": "t", "arguments": {}}])
        );
        dir.write_checkpoint(b"{\"version\": 1}").unwrap();
        assert_eq!(
            Checkpoint::load(&dir).unwrap_err().message(),
            "run `p1` is not a plan run"
        );
    }
}
