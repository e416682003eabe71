//! A plan run recorded under `.strata/runs/<run-id>/` (see `strata-runs`), like graph runs:
//! `checkpoint.json` (kind `plan`) holds the records of the steps finished so far and is
//! replaced atomically as steps finish (at most every [`PACE`]), and `plan.json` keeps the plan the run started with,
//! so that a killed run resumes without running its finished steps again.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer};
use strata_runs::{now, write_atomic, RunDir};
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

/// The shortest time between two checkpoint writes while a run goes on, the write that
/// started it counted: steps that finish within it share one write (a synced write, with the
/// event log's sync before it, costs the machine about 0.8 ms of CPU, more than a tiny step's
/// own work; a run shorter than this writes only its start and its end), and a step finishing
/// after a quiet spell is written at once. A run killed meanwhile runs again the steps whose
/// end was not written, as the resume contract says: at most this long's worth of them.
pub const PACE: Duration = Duration::from_millis(100);

/// The checkpoint the writer thread writes, and what it was asked to do.
struct State {
    checkpoint: Checkpoint,
    /// True when the checkpoint changed since the last write and a write was asked for.
    asked: bool,
    /// True once the run ended: the thread writes what was asked, then stops.
    closed: bool,
}

/// What the scheduler's thread and the writer thread share.
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// How many times [`Writer::save`] woke the writer thread.
    #[cfg(test)]
    woken: std::sync::atomic::AtomicUsize,
    /// How many checkpoints the writer thread wrote.
    #[cfg(test)]
    written: std::sync::atomic::AtomicUsize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Writes a run's checkpoint on a thread of its own, so that the scheduler never waits for
/// the disk: the thread holds the checkpoint, the scheduler changes it ([`Writer::update`])
/// and asks for a write ([`Writer::save`]). Writes are at least [`PACE`] apart while the run
/// goes on, the first one [`PACE`] after the writer started (when the run's start was
/// written), each of the latest checkpoint (serialized on the writer's thread, so a long run
/// costs the scheduler nothing per write); the last one is written when the run ends.
pub struct Writer {
    shared: Arc<Shared>,
    handle: Option<std::thread::JoinHandle<Result<(), Error>>>,
    /// Why the writer thread could not start (what [`Writer::finish`] returns).
    unstarted: Option<Error>,
}

impl Writer {
    /// A writer of `checkpoint` to `dir` (written when [`Writer::save`] asks).
    pub fn start(dir: RunDir, checkpoint: Checkpoint) -> Writer {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                checkpoint,
                asked: false,
                closed: false,
            }),
            wake: Condvar::new(),
            #[cfg(test)]
            woken: std::sync::atomic::AtomicUsize::new(0),
            #[cfg(test)]
            written: std::sync::atomic::AtomicUsize::new(0),
        });
        let thread = std::thread::Builder::new()
            .name("strata-checkpoints".into())
            .stack_size(strata_core::SMALL_STACK_BYTES);
        let theirs = Arc::clone(&shared);
        match thread.spawn(move || write_until_closed(&dir, &theirs)) {
            Ok(handle) => Writer {
                shared,
                handle: Some(handle),
                unstarted: None,
            },
            Err(e) => Writer {
                shared,
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

    /// Changes the checkpoint (written at the next [`Writer::save`]).
    pub fn update(&self, change: impl FnOnce(&mut Checkpoint)) {
        change(&mut self.shared.lock().checkpoint);
    }

    /// Asks for the checkpoint to be written (at once, or [`PACE`] after the last write). The
    /// writer thread is woken only by the first ask since its last write: the steps that end
    /// while it waits out the pace cost it no wake-up each.
    pub fn save(&self) {
        let mut state = self.shared.lock();
        if !state.asked {
            state.asked = true;
            drop(state);
            #[cfg(test)]
            self.shared
                .woken
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.shared.wake.notify_one();
        }
    }

    /// Changes the checkpoint a last time, writes it and waits until it is on disk; the
    /// checkpoint, or the first error of any write.
    pub fn finish(mut self, change: impl FnOnce(&mut Checkpoint)) -> Result<Checkpoint, Error> {
        {
            let mut state = self.shared.lock();
            change(&mut state.checkpoint);
            state.asked = true;
            state.closed = true;
        }
        self.shared.wake.notify_one();
        if let Some(e) = self.unstarted.take() {
            return Err(e);
        }
        let written = match self.handle.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                "the checkpoint writer stopped",
            )),
            None => Ok(()),
        };
        written.map(|()| self.shared.lock().checkpoint.clone())
    }
}

impl Drop for Writer {
    /// A writer dropped without [`Writer::finish`] (the run's code unwound): its thread writes
    /// what was asked for and stops, rather than waiting for more.
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_one();
    }
}

/// The writer thread: writes the checkpoint whenever asked, at least [`PACE`] after the last
/// write (the run's start, when the thread starts) unless the run ended, until it ended; the
/// first error, if any.
fn write_until_closed(dir: &RunDir, shared: &Shared) -> Result<(), Error> {
    let mut first_error = None;
    let mut last = Instant::now();
    let mut state = shared.lock();
    loop {
        while !state.asked && !state.closed {
            state = shared
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if !state.asked {
            break;
        }
        loop {
            let left = PACE.saturating_sub(last.elapsed());
            if left.is_zero() || state.closed {
                break;
            }
            state = shared
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.asked = false;
        state.checkpoint.updated = now();
        let bytes = serde_json::to_vec(&state.checkpoint.stored()).unwrap_or_default();
        drop(state);
        if let Err(e) = dir.write_checkpoint(&bytes) {
            first_error.get_or_insert(e);
        }
        #[cfg(test)]
        shared
            .written
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        last = Instant::now();
        state = shared.lock();
    }
    first_error.map_or(Ok(()), Err)
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
        begin(&dir, Some(&json!([{"tool": "t", "arguments": {}}])), &cp).unwrap();
        let writer = Writer::start(dir.clone(), cp.clone());
        for n in 0..20 {
            writer.update(|c| c.steps = n);
            writer.save();
        }
        let later = writer.finish(|c| c.status = RunStatus::Completed).unwrap();
        assert_eq!((later.steps, later.status), (19, RunStatus::Completed));
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

    /// The first checkpoint of run `run_id`, of a plan of `steps` steps.
    fn started(run_id: &str, steps: usize) -> Checkpoint {
        Checkpoint {
            run_id: run_id.into(),
            plan: "plans/x.yaml".into(),
            fingerprint: "f".into(),
            streamed: false,
            status: RunStatus::Running,
            steps,
            values: Map::new(),
            records: Vec::new(),
            started: 10,
            updated: 10,
        }
    }

    /// A run `run_id` of `steps` steps started in `tmp` (its start written), with a writer
    /// asked to write step `a`'s record.
    fn a_step_ended(tmp: &tempfile::TempDir, run_id: &str, steps: usize) -> (RunDir, Writer) {
        let dir = RunStore::new(tmp.path()).create(run_id).unwrap();
        let cp = started(run_id, steps);
        begin(&dir, None, &cp).unwrap();
        let writer = Writer::start(dir.clone(), cp);
        writer.update(|c| {
            c.records
                .push(StepRecord::from_run("a", "t", &RunResult::ok("1")))
        });
        writer.save();
        (dir, writer)
    }

    /// Waits until `done()` holds, failing with `what` after 30 s (a deadline that only
    /// stops a broken writer from hanging the test).
    fn eventually(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_checkpoint_asked_for_is_written_while_the_run_goes_on() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, writer) = a_step_ended(&tmp, "p2", 3);
        // Written by the writer's thread, before the run ends.
        eventually("the checkpoint was never written", || {
            !Checkpoint::load(&dir).unwrap().records.is_empty()
        });
        writer.update(|c| c.steps = 4);
        let last = writer.finish(|c| c.status = RunStatus::Failed).unwrap();
        let stored = Checkpoint::load(&dir).unwrap();
        assert_eq!(stored, last);
        assert_eq!(
            (stored.steps, stored.status, stored.records.len()),
            (4, RunStatus::Failed, 1)
        );
    }

    #[test]
    fn only_the_first_ask_since_a_write_wakes_the_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, writer) = a_step_ended(&tmp, "p5", 60);
        let count =
            |n: &std::sync::atomic::AtomicUsize| n.load(std::sync::atomic::Ordering::Relaxed);
        let woken = || count(&writer.shared.woken);
        // Steps that end while the writer waits out the pace cost it no wake-up each: one
        // wake-up per write at most, and one for the write to come (a machine stalled past
        // the pace meanwhile lets a write through).
        for n in 0..50 {
            writer.update(|c| c.steps = n);
            writer.save();
        }
        assert!(
            woken() <= count(&writer.shared.written) + 1,
            "woken {} times for {} writes",
            woken(),
            count(&writer.shared.written)
        );
        eventually("the checkpoint was never written", || {
            !Checkpoint::load(&dir).unwrap().records.is_empty()
        });
        // Written: the next ask wakes it again.
        eventually("the ask was never taken", || !writer.shared.lock().asked);
        let before = woken();
        writer.save();
        assert_eq!(woken(), before + 1);
        let last = writer.finish(|c| c.status = RunStatus::Completed).unwrap();
        assert_eq!((last.steps, last.status), (49, RunStatus::Completed));
    }

    #[test]
    fn a_step_ending_within_the_pace_of_the_start_is_written_with_the_runs_end() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, writer) = a_step_ended(&tmp, "p4", 1);
        std::thread::sleep(PACE / 10);
        // Still the start's checkpoint: a short run writes its start and its end only.
        assert!(Checkpoint::load(&dir).unwrap().records.is_empty());
        let last = writer.finish(|c| c.status = RunStatus::Completed).unwrap();
        assert_eq!(Checkpoint::load(&dir).unwrap(), last);
        assert_eq!((last.records.len(), last.status), (1, RunStatus::Completed));
    }

    #[test]
    fn a_writer_dropped_without_finishing_writes_what_was_asked_for() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunStore::new(tmp.path()).create("p3").unwrap();
        let cp = started("p3", 1);
        begin(&dir, None, &cp).unwrap();
        {
            let writer = Writer::start(dir.clone(), cp);
            writer.update(|c| c.steps = 2);
            writer.save();
            writer.update(|c| c.steps = 3);
            writer.save();
        }
        eventually("the last checkpoint asked for was never written", || {
            Checkpoint::load(&dir).unwrap().steps == 3
        });
    }
}
