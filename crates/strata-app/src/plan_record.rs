//! Recorded plan runs: what `strata plan run`, Python's `Project.run_plan` and `strata.ray`
//! share. A run gets an id and a directory under `.strata/runs/`; the plan and a first
//! checkpoint are on disk (synced) before the first step is scheduled; every finished step's
//! record is checkpointed as the run goes; a run killed at any moment, or waiting for user
//! values, resumes without running its finished steps again; and the run ends with one report.
//!
//! [`App::start_plan_run`] makes a new run and [`App::resume_plan_run`] reopens one (both under
//! the run's lock, held until the run ends); [`RecordedPlanRun::execute`] runs it through the
//! project's [`crate::Runner`] keyed with the run's marker key ([`crate::marks::of_run`]) —
//! each tool call here, or sent to another machine through [`RemoteTools`] — or with each
//! whole step run elsewhere through a [`StepPool`] (which runs it with [`App::plan_step`]
//! there, [`RecordedPlanRun::step_plan`] and [`RecordedPlanRun::marks`] telling it the plan
//! and the key), reporting progress to the caller's [`Observer`].

use serde_json::{json, Map, Value};
use strata_core::secret_marks::MarkKey;
use strata_core::{Error, ErrorKind, FieldPath, Layer};
use strata_doc::Document;
use strata_plans::checkpoint::{begin, load_plan, Checkpoint, RunStatus, Writer};
use strata_plans::stream::Arrival;
use strata_plans::{Event, Observer, Outcome, Plan, Scheduler, State, StepPool};
use strata_project::ExecOptions;
use strata_runs::{fingerprint, new_run_id, now, RunDir, RunLock, RunStore};
use strata_tools::{CallOptions, StepRecord, StepStatus};

use crate::event_log::RunEvents;
use crate::{App, Failure, RemoteTools, StepPlan};

/// The name a run of steps streamed on standard input records as its plan.
pub const STDIN_PLAN: &str = "<stdin>";

/// Steps that arrive one by one (JSON Lines on standard input), each as soon as it is read.
pub type StepInput = Box<dyn Iterator<Item = Result<Arrival, Vec<Error>>> + Send>;

/// A whole plan to record a run of.
pub struct WholePlan {
    /// The plan, linked, with the project's limits.
    pub plan: Plan,
    /// The plan document's value, kept in the run's `plan.json` for a resume.
    pub value: Value,
    /// The plan's name in messages and records (its file, relative to the project).
    pub name: String,
    /// The fingerprint of the plan's text (empty when it had none).
    pub fingerprint: String,
    /// The document the plan came from, to point errors into it.
    pub doc: Option<Document>,
}

impl WholePlan {
    /// A whole plan read from `doc` (the fingerprint is its text's).
    pub fn from_document(plan: Plan, doc: Document) -> WholePlan {
        WholePlan {
            plan,
            value: doc.value.clone(),
            name: doc.name.clone(),
            fingerprint: fingerprint(&doc.text),
            doc: Some(doc),
        }
    }
}

/// What a recorded run runs.
pub enum PlanSource {
    /// A whole plan, known before anything runs.
    Whole(Box<WholePlan>),
    /// Steps streamed as they arrive (such a run cannot be resumed).
    Stream(StepInput),
}

/// A plan run that has its directory and its first checkpoint, ready to run: made by
/// [`App::start_plan_run`] or [`App::resume_plan_run`], holding the run's lock until it ends.
pub struct RecordedPlanRun {
    checkpoint: Checkpoint,
    dir: RunDir,
    _lock: RunLock,
    source: PlanSource,
    done: Vec<StepRecord>,
    resumed: bool,
    marks: MarkKey,
}

/// How a recorded run's steps run.
pub struct PlanExecution<'a> {
    /// Strictness and environment of every tool call.
    pub options: ExecOptions,
    /// When given, every tool call runs there (the checks, the scheduling and the records
    /// stay here).
    pub remote: Option<&'a dyn RemoteTools>,
    /// When given, every step of a whole plan runs there, whole (its arguments resolved and
    /// its tool called through [`App::plan_step`] on another machine), and no tool is called
    /// here; streamed steps always run through the runner.
    pub steps: Option<&'a dyn StepPool>,
    /// The most steps running at once (at least one).
    pub jobs: usize,
    /// Options of every tool call (a timeout cap).
    pub call: CallOptions,
}

/// How a recorded run ended: its id, the plan's name, its status and the scheduler's
/// outcome (every record, what waits for which values).
#[derive(Debug)]
pub struct PlanRunReport {
    /// The run id.
    pub run_id: String,
    /// The plan's name as recorded.
    pub plan: String,
    /// Completed, failed or waiting.
    pub status: RunStatus,
    /// Every step's record, the missing values, rejected input.
    pub outcome: Outcome,
}

/// The fingerprint a recorded run keeps of its plan's text; a resume that names the plan
/// compares it.
pub fn plan_fingerprint(text: &str) -> String {
    fingerprint(text)
}

fn run_state(run_id: &str, message: String) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::RunState, message).with_hint(format!(
        "start it again with `strata plan run <plan> --run-id {run_id}`"
    ))
}

impl App {
    /// Starts a new recorded run of `source`: a whole plan is admitted first
    /// (`App::admit_plan`: its tools exist, constant arguments can match, the gate admits
    /// every tool), then the run's directory is made under its lock (`run_id`, or date, time
    /// and a random suffix) and the plan and the first checkpoint, holding `values`, are
    /// written and synced — before any step is scheduled.
    pub fn start_plan_run(
        &self,
        mut source: PlanSource,
        run_id: Option<String>,
        values: Map<String, Value>,
    ) -> Result<RecordedPlanRun, Failure> {
        if let PlanSource::Whole(whole) = &mut source {
            whole.plan.limits = self.limits.clone();
            self.admit_plan(&whole.plan, &whole.name, whole.doc.as_ref())?;
        }
        let store = RunStore::new(&self.root);
        let run_id = run_id.unwrap_or_else(new_run_id);
        let (dir, lock) = store.create_locked(&run_id)?;
        let (marks, _) = crate::marks::of_run(&dir);
        let started = now();
        let (name, print, streamed, steps, plan_value) = match &source {
            PlanSource::Whole(whole) => (
                whole.name.clone(),
                whole.fingerprint.clone(),
                false,
                whole.plan.steps.len(),
                Some(&whole.value),
            ),
            PlanSource::Stream(_) => (STDIN_PLAN.to_string(), String::new(), true, 0, None),
        };
        let checkpoint = Checkpoint {
            run_id,
            plan: name,
            fingerprint: print,
            streamed,
            status: RunStatus::Running,
            steps,
            values,
            records: Vec::new(),
            started,
            updated: started,
        };
        // Durable before the first step starts: the plan and this first checkpoint are on
        // disk (synced) before anything is scheduled, so a run killed at any moment resumes.
        begin(&dir, plan_value, &checkpoint)?;
        Ok(RecordedPlanRun {
            checkpoint,
            dir,
            _lock: lock,
            source,
            done: Vec::new(),
            resumed: false,
            marks,
        })
    }

    /// Reopens run `run_id` to continue it, under its lock: its plan and the records of its
    /// finished steps (which do not run again), its values with `values` added. Refused when
    /// the run never started, ran streamed steps, has already ended, when the plan `named`
    /// (read only after those checks) is not the one it started with, or when its records
    /// hold a secret marker whose variable is set nowhere.
    pub fn resume_plan_run(
        &self,
        run_id: &str,
        named: Option<&dyn Fn() -> Result<Document, Failure>>,
        values: Map<String, Value>,
    ) -> Result<RecordedPlanRun, Failure> {
        let store = RunStore::new(&self.root);
        if store.unstarted(run_id) {
            return Err(run_state(
                run_id,
                format!("run `{run_id}` never started: it was stopped before its first step"),
            )
            .into());
        }
        let dir = store.open(run_id)?;
        let lock = dir.lock()?;
        let mut checkpoint = Checkpoint::load(&dir)?;
        if checkpoint.streamed {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!(
                    "run `{run_id}` ran steps streamed on standard input; it cannot be resumed"
                ),
            )
            .with_hint("start a new run with the whole plan; finished steps are in its checkpoint")
            .into());
        }
        if matches!(checkpoint.status, RunStatus::Completed | RunStatus::Failed) {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!(
                    "run `{run_id}` has already ended ({})",
                    checkpoint.status.name()
                ),
            )
            .into());
        }
        if let Some(named) = named {
            let doc = named()?;
            if fingerprint(&doc.text) != checkpoint.fingerprint {
                return Err(Error::new(
                    Layer::REQUEST,
                    ErrorKind::RunState,
                    format!("`{}` changed since run `{run_id}` started", doc.name),
                )
                .with_hint("resume without naming the plan to use the plan the run started with")
                .into());
            }
        }
        let value = load_plan(&dir)?;
        let mut plan =
            Plan::from_value(&value, &FieldPath::root()).map_err(|errors| {
                Failure::Error(errors.into_iter().next().unwrap_or_else(|| {
                    Error::new(Layer::REQUEST, ErrorKind::Invalid, "invalid plan")
                }))
            })?;
        plan.limits = self.limits.clone();
        let (marks, durable) = crate::marks::of_run(&dir);
        let recorded = serde_json::to_value(&checkpoint.records).unwrap_or_default();
        crate::marks::require_restorable(self, &recorded, run_id, &marks, durable)?;
        crate::marks::refuse_carried_markers(&Value::Object(values.clone()), &marks, "the values")?;
        checkpoint.values.extend(values);
        let done = if checkpoint.status == RunStatus::Cancelled {
            // What the cancel stopped, and the steps skipped after it, run again.
            checkpoint.records.retain(|r| !stopped_by_cancel(r));
            checkpoint.records.clone()
        } else {
            checkpoint.records.clone()
        };
        checkpoint.status = RunStatus::Running;
        let whole = WholePlan {
            plan,
            value,
            name: checkpoint.plan.clone(),
            fingerprint: checkpoint.fingerprint.clone(),
            doc: None,
        };
        Ok(RecordedPlanRun {
            checkpoint,
            dir,
            _lock: lock,
            source: PlanSource::Whole(Box::new(whole)),
            done,
            resumed: true,
            marks,
        })
    }
}

impl RecordedPlanRun {
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.checkpoint.run_id
    }

    /// The plan's name as recorded (`plans/x.yaml`, `<stdin>`).
    pub fn plan_name(&self) -> &str {
        &self.checkpoint.plan
    }

    /// True for a run reopened by [`App::resume_plan_run`].
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// The whole plan (`None` for streamed steps).
    pub fn plan(&self) -> Option<&Plan> {
        match &self.source {
            PlanSource::Whole(whole) => Some(&whole.plan),
            PlanSource::Stream(_) => None,
        }
    }

    /// How many steps finished in earlier runs (a resume).
    pub fn finished(&self) -> usize {
        self.done.len()
    }

    /// The user values the run has (a resume's with the new ones added).
    pub fn values(&self) -> &Map<String, Value> {
        &self.checkpoint.values
    }

    /// The plan as [`App::plan_step`] takes it, for a step run elsewhere: its document when
    /// the run has one (errors located in it, as this run locates them), else its data
    /// (`None` for streamed steps).
    pub fn step_plan(&self) -> Option<StepPlan<'_>> {
        match &self.source {
            PlanSource::Whole(whole) => Some(match &whole.doc {
                Some(doc) => StepPlan::Document(doc),
                None => StepPlan::Data {
                    name: &whole.name,
                    value: &whole.value,
                },
            }),
            PlanSource::Stream(_) => None,
        }
    }

    /// The run's directory.
    pub fn dir(&self) -> &RunDir {
        &self.dir
    }

    /// The key the run's secret markers are minted under, for a step run elsewhere (its
    /// [`StepPool`] hands it to [`App::plan_step`] there).
    pub fn marks(&self) -> &MarkKey {
        &self.marks
    }

    /// Runs the steps that did not finish yet, each as soon as its dependencies completed, at
    /// most `exec.jobs` at once, through the project's runner keyed with the run's marker
    /// key (its calls sent to `exec.remote` when given); events go to `observer`. Every finished
    /// step is checkpointed (on a thread of its own; steps that finish together, or within
    /// [`PACE`](strata_plans::checkpoint::PACE) of the last write, in one write), and the final checkpoint, with the run's status, is on disk before this returns.
    pub fn execute(
        self,
        app: &App,
        exec: &PlanExecution<'_>,
        observer: &mut dyn Observer,
    ) -> Result<PlanRunReport, Failure> {
        let RecordedPlanRun {
            checkpoint,
            dir,
            _lock,
            source,
            done,
            marks,
            resumed,
        } = self;
        let mut events = open_events(app, &dir, &source)?;
        events.write(json!({
            "event": "run_started",
            "kind": "plan",
            "run_id": checkpoint.run_id,
            "plan": checkpoint.plan,
            "resumed": resumed,
            "finished": done.len(),
        }));
        let runner = app.runner(exec.options.clone()).with_marks(marks);
        let runner = match exec.remote {
            Some(remote) => runner.remote(remote),
            None => runner,
        };
        let values = checkpoint.values.clone();
        let run_id = checkpoint.run_id.clone();
        let mut recorder = Recorder {
            writer: Writer::start(dir, checkpoint),
            // A new run's start is on disk (`begin`); a resumed run's is written as it goes on.
            unsaved: resumed,
            events,
            inner: observer,
        };
        let scheduler = |doc| Scheduler {
            limits: &app.limits,
            runner: &runner,
            jobs: exec.jobs,
            values: &values,
            call: exec.call,
            doc,
        };
        let outcome = match source {
            PlanSource::Whole(whole) => {
                let scheduler = scheduler(whole.doc.as_ref());
                match exec.steps {
                    Some(steps) => scheduler.run_elsewhere(&whole.plan, done, steps, &mut recorder),
                    None => scheduler.run(&whole.plan, done, &mut recorder),
                }
            }
            PlanSource::Stream(input) => scheduler(None).run_stream(input, &mut recorder),
        };
        let cancelled = exec
            .options
            .cancel
            .as_ref()
            .is_some_and(strata_exec::Cancel::is_cancelled);
        let status = match outcome.status() {
            RunStatus::Completed => RunStatus::Completed,
            _ if cancelled => RunStatus::Cancelled,
            status => status,
        };
        let Recorder {
            writer, mut events, ..
        } = recorder;
        events.write(json!({
            "event": "run_finished",
            "run_id": run_id,
            "status": status.name(),
        }));
        let steps = outcome.plan.steps.len();
        let checkpoint = writer.finish(|c| {
            c.status = status;
            c.steps = steps;
        })?;
        events.finish()?;
        Ok(PlanRunReport {
            run_id: checkpoint.run_id,
            plan: checkpoint.plan,
            status,
            outcome,
        })
    }
}

/// True for the record of a step a cancel stopped, or skipped because an earlier step did
/// not complete: a resumed cancelled run runs it again.
fn stopped_by_cancel(record: &StepRecord) -> bool {
    match record.status {
        StepStatus::Completed => false,
        StepStatus::Skipped => true,
        _ => record
            .error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::Cancelled),
    }
}

/// The event log of a plan run in `dir`, redacting the secrets of the tools the plan calls
/// (of every tool of the project, for steps streamed in).
fn open_events(app: &App, dir: &RunDir, source: &PlanSource) -> Result<RunEvents, Failure> {
    let tools = match source {
        PlanSource::Whole(whole) => crate::called_tools(&whole.plan),
        PlanSource::Stream(_) => app.project().tool_ids(),
    };
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    Ok(RunEvents::open(app, dir, &tools)?)
}

/// Keeps the checkpoint while the run goes on, passing every event to the caller's observer.
struct Recorder<'o> {
    /// Holds the checkpoint and writes it on a thread of its own.
    writer: Writer,
    /// True when the checkpoint changed (a step finished, the run started or resumed) since
    /// the last write was asked for.
    unsaved: bool,
    /// The run's event log.
    events: RunEvents,
    inner: &'o mut dyn Observer,
}

impl Observer for Recorder<'_> {
    fn on(&mut self, event: Event<'_>) {
        if let Event::Finished { record, .. } = &event {
            self.writer.update(|c| c.records.push((*record).clone()));
            self.unsaved = true;
        }
        if let Some(mut logged) = event.to_json() {
            if let (
                Event::Started {
                    arguments: Some(arguments),
                    ..
                },
                Value::Object(fields),
            ) = (&event, &mut logged)
            {
                fields.insert("arguments".into(), Value::Object((*arguments).clone()));
            }
            self.events.write(logged);
        }
        self.inner.on(event);
    }

    fn idle(&mut self) {
        if std::mem::take(&mut self.unsaved) {
            self.writer.save();
        }
        self.inner.idle();
    }
}

impl PlanRunReport {
    /// The report of `strata plan run --json` (and Python's `run_plan`): `run_id`, `plan`,
    /// `status`, `levels`, every step's record in plan order (waiting steps with `status:
    /// waiting` and `waiting_for`), `missing_values` and `rejected` input.
    pub fn to_json(&self) -> Value {
        json!({
            "run_id": self.run_id,
            "plan": self.plan,
            "status": self.status.name(),
            "levels": self.outcome.plan.level_ids(),
            "steps": self.outcome.step_records(),
            "missing_values": self.outcome.missing_values,
            "rejected": self.outcome.rejected.iter().map(Error::to_json).collect::<Vec<_>>(),
        })
    }

    /// The results of the completed steps no other step depends on, by id.
    pub fn sinks(&self) -> Value {
        let plan = &self.outcome.plan;
        let mut used = vec![false; plan.steps.len()];
        for deps in &plan.deps {
            for &d in deps {
                used[d] = true;
            }
        }
        let mut out = Map::new();
        for (i, step) in plan.steps.iter().enumerate() {
            if let Some(r) = self.outcome.records.get(&step.id) {
                if !used[i] && r.status == StepStatus::Completed {
                    out.insert(step.id.clone(), r.result.clone());
                }
            }
        }
        Value::Object(out)
    }

    /// `2 completed, 1 failed, 1 skipped, 1 waiting` (the counts that are not zero).
    pub fn counts(&self) -> String {
        let outcome = &self.outcome;
        let mut n = [0usize; 4];
        for i in 0..outcome.plan.steps.len() {
            n[match outcome.state(i) {
                State::Completed => 0,
                State::Failed => 1,
                State::Skipped => 2,
                _ => 3,
            }] += 1;
        }
        let parts: Vec<String> = ["completed", "failed", "skipped", "waiting"]
            .iter()
            .zip(n)
            .filter(|(_, k)| *k > 0)
            .map(|(name, k)| format!("{k} {name}"))
            .collect();
        if parts.is_empty() {
            "no steps".into()
        } else {
            parts.join(", ")
        }
    }

    /// The exit code of `strata plan run`: 0 when completed, [`crate::EXIT_WAITING`] when
    /// steps wait for values, [`crate::EXIT_FAILED`] otherwise.
    pub fn exit_code(&self) -> u8 {
        match self.status {
            RunStatus::Completed => 0,
            RunStatus::Waiting => crate::EXIT_WAITING,
            RunStatus::Failed | RunStatus::Running | RunStatus::Cancelled => crate::EXIT_FAILED,
        }
    }
}
