//! The scheduler: runs a plan's steps over a [`ToolRunner`], each the moment every step it
//! depends on has completed, at most `jobs` at once, on worker threads. Not level-synchronous:
//! a slow step never holds back an unrelated one, and independent steps keep running after a
//! failure (only the failed step's dependents are skipped).
//!
//! A step runs here (its arguments resolved on this thread, its tool called through the
//! [`ToolRunner`]) or, with [`Scheduler::run_elsewhere`], whole on another machine through a
//! [`StepRunner`]: only the scheduling and the records stay here.
//!
//! Steps come from a whole plan or arrive one by one ([`crate::stream`]); a reference to a
//! step that has not arrived waits for it, and at the end of the input it is an
//! `unknown_step` error for the step that made it. Steps whose user values are missing wait,
//! and so do their dependents.

use std::collections::{BTreeSet, HashMap};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};
use strata_core::{Error, Limits};
use strata_doc::Document;
use strata_tools::{CallOptions, Retries, StepRecord, StepStatus, ToolRunner, CANCEL_POLL};

use crate::checkpoint::RunStatus;
use crate::plan::{Plan, Step};
use crate::resolve::{resolve_parameters_within, RecordMap, Sources};
use crate::state::{skip_reason, State};
use crate::stream::{Arrival, Line};

/// What the scheduler reports as it goes.
#[derive(Debug)]
pub enum Event<'e> {
    /// A step's tool started — for a step run elsewhere, the step was handed over with the
    /// records of every step it depends on (or, started ahead, their last one completed).
    Started {
        /// The step.
        step: &'e Step,
        /// Its resolved arguments: the tool's caller parameters (`None` for a step run
        /// elsewhere: they resolve there).
        arguments: Option<&'e Map<String, Value>>,
    },
    /// A step finished: completed, failed (its tool failed, or its arguments could not be
    /// resolved) or skipped.
    Finished {
        /// The step.
        step: &'e Step,
        /// Its record.
        record: &'e StepRecord,
        /// How long its tool ran (zero when it did not run).
        elapsed: Duration,
    },
    /// A step's tool failed and runs again (its `retries` allow it): `record` is the failed
    /// attempt's, `attempt` its number (1 for the first run), `delay` the wait before the next.
    Retrying {
        /// The step.
        step: &'e Step,
        /// The record of the attempt that failed.
        record: &'e StepRecord,
        /// The failed attempt's number (1-based).
        attempt: u32,
        /// The most attempts (the first and `limit` retries).
        attempts: u32,
        /// The wait before the next attempt.
        delay: Duration,
    },
    /// A step waits for user values (its own, or those of a step it depends on).
    Waiting {
        /// The step.
        step: &'e Step,
        /// The values it lacks.
        names: &'e [String],
    },
    /// Input that could not become a step (a line that is not a step, a duplicate id).
    Rejected {
        /// The errors, located.
        errors: &'e [Error],
    },
}

impl Event<'_> {
    /// The event as `--json` streams it: `step_started` (`id`, `tool`), `step_finished`
    /// (`id`, `tool`, `status`, `ms`, `record`), `step_retrying` (`id`, `tool`, `attempt`,
    /// `attempts`, `delay_ms`, `record`) or `step_waiting` (`id`, `tool`, `needs`);
    /// `None` for rejected input, which is reported as errors.
    pub fn to_json(&self) -> Option<Value> {
        Some(match self {
            Event::Started { step, .. } => {
                serde_json::json!({"event": "step_started", "id": step.id, "tool": step.tool})
            }
            Event::Finished {
                step,
                record,
                elapsed,
            } => serde_json::json!({
                "event": "step_finished",
                "id": step.id,
                "tool": step.tool,
                "status": record.status.name(),
                "ms": elapsed.as_millis() as u64,
                "record": record.to_json(),
            }),
            Event::Retrying {
                step,
                record,
                attempt,
                attempts,
                delay,
            } => serde_json::json!({
                "event": "step_retrying",
                "id": step.id,
                "tool": step.tool,
                "attempt": attempt,
                "attempts": attempts,
                "delay_ms": delay.as_millis() as u64,
                "record": record.to_json(),
            }),
            Event::Waiting { step, names } => {
                serde_json::json!({"event": "step_waiting", "id": step.id, "tool": step.tool, "needs": names})
            }
            Event::Rejected { .. } => return None,
        })
    }
}

/// Receives the scheduler's events, on the thread that called [`Scheduler::run`].
pub trait Observer {
    /// Called for each event, in order.
    fn on(&mut self, event: Event<'_>);

    /// Called when the scheduler has handled everything that happened so far, has started
    /// what can start, and is about to wait: the moment to persist what changed (steps that
    /// finish together are then written once).
    fn idle(&mut self) {}
}

/// Runs whole steps somewhere else — each resolving its arguments from the records of the
/// steps it depends on and calling its tool, as `strata plan step` does — many at once:
/// [`StepPool::start`] hands a step over and returns at once, [`StepPool::finished`] waits
/// for the steps that ended. The scheduler's one thread does both; no thread waits for a
/// step. Only a step whose dependencies all completed and whose user values are all given is
/// started; a step whose tool failed is started again (a new attempt) as its `retries` allow.
pub trait StepPool {
    /// Hands over `step` as ticket `ticket`, its attempt `attempt` (1 for its first run), with
    /// the records of the steps it depends on that finished (in the order of its
    /// dependencies) and the tickets of those still running (`after`: only when the pool
    /// runs steps [`StepPool::ahead`]). Every start ends in exactly one answer from
    /// [`StepPool::finished`], whatever happens there.
    fn start(
        &self,
        ticket: usize,
        step: &Step,
        records: &[StepRecord],
        after: &[usize],
        attempt: u32,
    );

    /// Waits until started steps ended, at most `timeout` (`None`: as long as it takes):
    /// each one's ticket and record — `None` for a step started ahead that did not run,
    /// because a step it waited for did not complete; empty when the time ran out first.
    fn finished(&self, timeout: Option<Duration>) -> Vec<(usize, Option<StepRecord>)>;

    /// True when the pool can start a step before the steps it depends on ended — it waits
    /// there for their records, and does not run when one did not complete — so that a
    /// chain of steps does not wait for this process between its steps. Only steps without
    /// declared `retries` are waited for that way, each step at most once.
    fn ahead(&self) -> bool {
        false
    }

    /// Told, each time before the scheduler waits for answers, whether it waits on one to go
    /// on (`true`: a step is still to start, once a step it depends on answers, or a running
    /// step may run again) or only for the run to end (`false`: every step left runs its
    /// last attempt). A pool may then gather answers rather than hand each over as it comes.
    /// By default, nothing.
    fn awaited(&self, _awaited: bool) {}
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {
    fn on(&mut self, _: Event<'_>) {}
}

/// How to run.
pub struct Scheduler<'a> {
    /// The tools.
    pub runner: &'a dyn ToolRunner,
    /// The most steps running at once (at least one).
    pub jobs: usize,
    /// The user values.
    pub values: &'a Map<String, Value>,
    /// Options of every tool call.
    pub call: CallOptions,
    /// The document a whole plan came from, to locate errors found while running.
    pub doc: Option<&'a Document>,
    /// The limits resolved arguments are held to (the project's): whole plans and streamed
    /// steps alike.
    pub limits: &'a Limits,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The plan as it ran (for a stream: the steps that arrived), dependencies linked.
    pub plan: Plan,
    /// The record of every step that finished, by id.
    pub records: RecordMap,
    /// For each step, the user values it waits for (empty when it does not wait).
    pub waiting_for: Vec<Vec<String>>,
    /// Every user value a waiting step lacks, in plan order, each once.
    pub missing_values: Vec<String>,
    /// Input that could not become a step.
    pub rejected: Vec<Error>,
}

impl Outcome {
    /// The final state of step `i`: completed, failed, skipped or waiting.
    pub fn state(&self, i: usize) -> State {
        match self.records.get(&self.plan.steps[i].id).map(|r| r.status) {
            Some(StepStatus::Completed) => State::Completed,
            Some(StepStatus::Failed) => State::Failed,
            Some(StepStatus::Skipped) => State::Skipped,
            None => State::Waiting,
        }
    }

    /// True when every step completed and all input was steps.
    pub fn success(&self) -> bool {
        self.rejected.is_empty()
            && (0..self.plan.steps.len()).all(|i| self.state(i) == State::Completed)
    }

    /// How the run ended: `Completed` when every step completed, `Failed` when a step failed
    /// or was skipped (or input was not a step), else `Waiting` (steps wait for user values).
    pub fn status(&self) -> RunStatus {
        if self.success() {
            RunStatus::Completed
        } else if !self.rejected.is_empty()
            || self
                .records
                .values()
                .any(|r| r.status != StepStatus::Completed)
        {
            RunStatus::Failed
        } else {
            RunStatus::Waiting
        }
    }

    /// Every step's record in plan order; a step that waits for user values as `{"id",
    /// "status": "waiting", "result": null, "error": null, "run": null, "waiting_for"}`.
    pub fn step_records(&self) -> Vec<Value> {
        self.plan
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| match self.records.get(&step.id) {
                Some(r) => r.to_json(),
                None => serde_json::to_value(WaitingRecord {
                    id: &step.id,
                    status: "waiting",
                    result: (),
                    error: (),
                    run: (),
                    waiting_for: &self.waiting_for[i],
                })
                .unwrap_or(Value::Null),
            })
            .collect()
    }
}

/// The record of a step that waits for user values (null where a finished step's record
/// has its outcome).
#[derive(Serialize)]
struct WaitingRecord<'a> {
    id: &'a str,
    status: &'static str,
    result: (),
    error: (),
    run: (),
    waiting_for: &'a [String],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Pending,
    Ready,
    Running,
    Waiting,
    Done,
}

/// What reaches the scheduler's thread: an attempt's record (from a worker thread or the
/// pool), a streamed step, rejected input, the end of the input.
enum Msg {
    Ran(usize, Option<Box<StepRecord>>),
    Arrived(Box<Arrival>),
    Rejected(Vec<Error>),
    End,
}

/// A tool call a worker thread makes for a step: one attempt.
struct Job {
    index: usize,
    id: String,
    tool: String,
    args: Map<String, Value>,
}

impl Job {
    /// Calls the tool through `runner`: the attempt's record.
    fn run(self, runner: &dyn ToolRunner, call: &CallOptions) -> StepRecord {
        match runner.run(&self.tool, &self.args, call) {
            Ok(run) => StepRecord::from_run(&self.id, &self.tool, &run),
            Err(e) => StepRecord::failed(&self.id, &e),
        }
    }
}

/// What the scheduler's thread does with a ready step's attempt: hand a call to a worker
/// thread, or the whole step to the pool.
enum Next {
    Call(Job),
    Elsewhere(usize),
}

/// True for the record of an attempt whose tool ran and failed (exit status, signal or
/// timeout): what declared retries run again. A step that could not run fails the same way
/// again.
fn tool_failed(record: &StepRecord) -> bool {
    record.status == StepStatus::Failed && record.run.is_some()
}

/// The state of every step while a plan runs.
struct Board<'s, 'o> {
    plan: Plan,
    slots: Vec<Slot>,
    /// For each step, how many of the ids it uses have not arrived.
    missing: Vec<usize>,
    dependents: Vec<Vec<usize>>,
    awaiting: HashMap<String, Vec<usize>>,
    waiting_for: Vec<Vec<String>>,
    lines: Vec<Option<Line>>,
    records: RecordMap,
    ready: BTreeSet<usize>,
    rejected: Vec<Error>,
    /// For each step, its current attempt (0 before its first) and when the first began.
    attempts: Vec<(u32, Option<Instant>)>,
    /// For each step, whether it was started ahead of a step it depends on (once at most).
    ahead: Vec<bool>,
    /// For each step run elsewhere, whether its start was reported.
    announced: Vec<bool>,
    /// No step before this index is still to start or may run again ([`Board::awaits`]).
    open_from: usize,
    /// Steps whose tool failed, to run again at the time given (their `retries` allow it).
    again: Vec<(Instant, usize)>,
    scheduler: &'s Scheduler<'s>,
    /// Where whole steps run, when not here.
    elsewhere: Option<&'s dyn StepPool>,
    observer: &'o mut dyn Observer,
}

impl<'s> Board<'s, '_> {
    /// Locates an error about step `i` (its path relative to the step) in the plan's file or
    /// the step's line.
    fn locate(&self, i: usize, err: Error) -> Error {
        let step = &self.plan.steps[i];
        let err = err.map_path(|p| p.under(&step.at));
        match (&self.lines[i], self.scheduler.doc) {
            (Some(line), _) => line.locate(err),
            (None, Some(doc)) => doc.locate_error(err),
            (None, None) => err,
        }
    }

    /// Adds a step that arrived (or a step of a whole plan) and links it. A step that
    /// finished in an earlier run (its record is there) is done at once.
    fn add(&mut self, step: Step, line: Option<Line>) {
        let i = match self.plan.add(step) {
            Ok(i) => i,
            Err(e) => {
                let e = match &line {
                    Some(line) => line.locate(e),
                    None => e,
                };
                self.reject(vec![e]);
                return;
            }
        };
        let own = self.plan.steps[i].id.clone();
        let done = self.records.contains_key(&own);
        self.slots
            .push(if done { Slot::Done } else { Slot::Pending });
        self.missing.push(0);
        self.attempts.push((0, None));
        self.ahead.push(false);
        self.announced.push(false);
        self.dependents.push(Vec::new());
        self.waiting_for.push(Vec::new());
        self.lines.push(line);
        let mut itself = false;
        let uses: Vec<String> = self.plan.steps[i]
            .uses()
            .into_iter()
            .map(String::from)
            .collect();
        for id in uses {
            if id == own {
                itself = true;
                continue;
            }
            match self.plan.find(&id) {
                Some(d) => {
                    self.plan.deps[i].push(d);
                    self.dependents[d].push(i);
                }
                None => {
                    self.awaiting.entry(id).or_default().push(i);
                    self.missing[i] += 1;
                }
            }
        }
        let arrived = self.awaiting.remove(&own).unwrap_or_default();
        for &j in &arrived {
            self.plan.deps[j].push(i);
            self.dependents[i].push(j);
            self.missing[j] -= 1;
        }
        if itself && !done {
            let e = self.locate_doc_path(i, self.plan.cycle_error(&[i, i]));
            self.finish(i, StepRecord::failed(&own, &e), Duration::ZERO);
            return;
        }
        self.settle(i);
        for j in arrived {
            self.settle(j);
        }
    }

    fn completed(&self, d: usize) -> bool {
        self.slots[d] == Slot::Done
            && self
                .records
                .get(&self.plan.steps[d].id)
                .is_some_and(|r| r.status == StepStatus::Completed)
    }

    /// Decides what a pending step is: skipped, waiting, ready, or still pending.
    fn settle(&mut self, i: usize) {
        if self.slots[i] != Slot::Pending {
            return;
        }
        let deps = self.plan.deps[i].clone();
        if let Some(&d) = deps
            .iter()
            .find(|&&d| self.slots[d] == Slot::Done && !self.completed(d))
        {
            let reason = self.reason(d);
            self.skip(i, reason);
            return;
        }
        let mut names: Vec<String> = Vec::new();
        for &d in deps.iter().filter(|&&d| self.slots[d] == Slot::Waiting) {
            union(&mut names, &self.waiting_for[d]);
        }
        let own: Vec<String> = self.plan.steps[i]
            .args
            .value_names()
            .into_iter()
            .filter(|n| !self.scheduler.values.contains_key(*n))
            .map(String::from)
            .collect();
        union(&mut names, &own);
        if !names.is_empty() {
            self.wait(i, names);
        } else if self.missing[i] == 0 && deps.iter().all(|&d| self.completed(d)) {
            self.slots[i] = Slot::Ready;
            self.ready.insert(i);
        } else if self.missing[i] == 0
            && !self.ahead[i]
            && self.elsewhere.is_some_and(|pool| pool.ahead())
            && deps.iter().all(|&d| self.completed(d) || self.waitable(d))
        {
            self.ahead[i] = true;
            self.slots[i] = Slot::Ready;
            self.ready.insert(i);
        }
    }

    /// True when a step may be started ahead of step `d`, which it depends on: `d` runs
    /// elsewhere, its first attempt, and declares no `retries` (its record is final).
    fn waitable(&self, d: usize) -> bool {
        self.slots[d] == Slot::Running && self.attempts[d].0 == 1 && self.retries(d).is_none()
    }

    fn reason(&self, d: usize) -> String {
        let state = match self.records.get(&self.plan.steps[d].id).map(|r| r.status) {
            Some(StepStatus::Failed) => State::Failed,
            _ => State::Skipped,
        };
        skip_reason(&self.plan.steps[d].id, state)
    }

    /// Step `i` waits for `names`, and so do its pending dependents.
    fn wait(&mut self, i: usize, names: Vec<String>) {
        let mut stack = vec![(i, names)];
        while let Some((i, names)) = stack.pop() {
            match self.slots[i] {
                Slot::Pending | Slot::Ready => {}
                Slot::Waiting => {
                    let before = self.waiting_for[i].len();
                    union(&mut self.waiting_for[i], &names);
                    if self.waiting_for[i].len() == before {
                        continue;
                    }
                }
                _ => continue,
            }
            self.slots[i] = Slot::Waiting;
            self.ready.remove(&i);
            union(&mut self.waiting_for[i], &names);
            self.observer.on(Event::Waiting {
                step: &self.plan.steps[i],
                names: &self.waiting_for[i],
            });
            for &j in &self.dependents[i] {
                stack.push((j, self.waiting_for[i].clone()));
            }
        }
    }

    /// Step `i` will not run because of `reason`; neither will its dependents.
    fn skip(&mut self, i: usize, reason: String) {
        let mut stack = vec![(i, reason)];
        while let Some((i, reason)) = stack.pop() {
            let started_ahead = self.slots[i] == Slot::Running && self.ahead[i];
            if !matches!(self.slots[i], Slot::Pending | Slot::Ready | Slot::Waiting)
                && !started_ahead
            {
                continue;
            }
            self.ready.remove(&i);
            self.slots[i] = Slot::Done;
            let id = self.plan.steps[i].id.clone();
            let record = StepRecord::skipped(&id, reason);
            self.observer.on(Event::Finished {
                step: &self.plan.steps[i],
                record: &record,
                elapsed: Duration::ZERO,
            });
            self.records.insert(id.clone(), record);
            let next = skip_reason(&id, State::Skipped);
            for &j in &self.dependents[i] {
                stack.push((j, next.clone()));
            }
        }
    }

    /// Step `i` finished with `record`.
    fn finish(&mut self, i: usize, record: StepRecord, elapsed: Duration) {
        self.ready.remove(&i);
        self.slots[i] = Slot::Done;
        self.observer.on(Event::Finished {
            step: &self.plan.steps[i],
            record: &record,
            elapsed,
        });
        let ok = record.status == StepStatus::Completed;
        self.records.insert(self.plan.steps[i].id.clone(), record);
        let dependents = self.dependents[i].clone();
        if ok {
            for j in dependents {
                if self.slots[j] == Slot::Running
                    && self.ahead[j]
                    && self.plan.deps[j].iter().all(|&d| self.completed(d))
                {
                    self.announce(j);
                }
                self.settle(j);
            }
        } else {
            let reason = self.reason(i);
            for j in dependents {
                self.skip(j, reason.clone());
            }
        }
    }

    /// Takes the next ready step and makes its first attempt (for a step run here, its
    /// arguments resolved): what to do, or `None` when the step failed to resolve (it is then
    /// finished) or nothing is ready.
    fn next_job(&mut self) -> Option<Option<Next>> {
        let i = self.ready.pop_first()?;
        self.slots[i] = Slot::Running;
        self.attempts[i] = (0, Some(Instant::now()));
        Some(self.attempt(i))
    }

    /// The next attempt of running step `i`: a call with its arguments resolved here (the
    /// first reported as started), or the whole step elsewhere; `None` when its arguments
    /// cannot be resolved (the step is then finished, failed).
    fn attempt(&mut self, i: usize) -> Option<Next> {
        self.attempts[i].0 += 1;
        if self.elsewhere.is_some() {
            return Some(Next::Elsewhere(i));
        }
        let step = &self.plan.steps[i];
        let sources = Sources {
            records: &self.records,
            values: self.scheduler.values,
        };
        match resolve_parameters_within(step, &sources, &self.plan.limits) {
            Ok(args) => {
                if self.attempts[i].0 == 1 {
                    self.observer.on(Event::Started {
                        step: &self.plan.steps[i],
                        arguments: Some(&args),
                    });
                }
                let step = &self.plan.steps[i];
                Some(Next::Call(Job {
                    index: i,
                    id: step.id.clone(),
                    tool: step.tool.clone(),
                    args,
                }))
            }
            Err(e) => {
                let e = self.locate(i, e);
                let record = StepRecord::failed(&self.plan.steps[i].id, &e);
                self.finish(i, record, Duration::ZERO);
                None
            }
        }
    }

    /// Hands step `i`'s attempt to `pool`, with the records of the steps it depends on that
    /// finished and the tickets of those still running; then the steps that depend on it may
    /// start ahead of it.
    fn start_elsewhere(&mut self, pool: &dyn StepPool, i: usize) {
        let mut records = Vec::new();
        let mut after = Vec::new();
        for &d in &self.plan.deps[i] {
            match self.records.get(&self.plan.steps[d].id) {
                Some(record) => records.push(record.clone()),
                None => after.push(d),
            }
        }
        pool.start(i, &self.plan.steps[i], &records, &after, self.attempts[i].0);
        if after.is_empty() {
            self.announce(i);
        }
        if pool.ahead() {
            for j in self.dependents[i].clone() {
                self.settle(j);
            }
        }
    }

    /// Reports step `i` run elsewhere as started, once: when it was handed over with every
    /// record it needs, or — started ahead — when the last step it waited for completed.
    fn announce(&mut self, i: usize) {
        if !std::mem::replace(&mut self.announced[i], true) {
            self.observer.on(Event::Started {
                step: &self.plan.steps[i],
                arguments: None,
            });
        }
    }

    /// Step `i`, started ahead, did not run (a step it waited for did not complete): it
    /// waits here for the steps it depends on, as any step does, and is not started ahead
    /// again.
    fn not_run(&mut self, i: usize) {
        self.slots[i] = Slot::Pending;
        self.open_from = self.open_from.min(i);
        self.attempts[i] = (0, None);
        self.settle(i);
    }

    /// True while an answer from where steps run may let the run go on: a step is still to
    /// start, or a running step may run again (it declares `retries`). Steps only ever move
    /// forward past `open_from`, except one started ahead that did not run (`not_run`), so
    /// the steps are looked at once each over a run.
    fn awaits(&mut self) -> bool {
        if !self.again.is_empty() {
            return true;
        }
        while let Some(slot) = self.slots.get(self.open_from) {
            let open = match slot {
                Slot::Done => false,
                Slot::Running => self.retries(self.open_from).is_some(),
                Slot::Pending | Slot::Ready | Slot::Waiting => true,
            };
            if open {
                return true;
            }
            self.open_from += 1;
        }
        false
    }

    /// The `retries` of step `i`: its own over its tool's, when either declares them.
    fn retries(&self, i: usize) -> Option<Retries> {
        let step = &self.plan.steps[i];
        step.scale
            .over(&self.scheduler.runner.scale(&step.tool))
            .retries
    }

    /// Step `i`'s attempt ended with `record`: the step finishes, or — its tool failed and its
    /// `retries` allow another attempt — the observer is told and the step runs again after
    /// the declared wait. With retries declared, the record's `run` says how many attempts
    /// the tool took and the policy.
    fn ran(&mut self, i: usize, mut record: StepRecord) {
        let (attempt, began) = self.attempts[i];
        if let Some(policy) = self.retries(i) {
            if let Some(Value::Object(run)) = &mut record.run {
                policy.note(run, attempt);
            }
            if let Some(delay) = policy.again(attempt).filter(|_| tool_failed(&record)) {
                self.observer.on(Event::Retrying {
                    step: &self.plan.steps[i],
                    record: &record,
                    attempt,
                    attempts: policy.limit + 1,
                    delay,
                });
                self.again.push((Instant::now() + delay, i));
                return;
            }
        }
        let elapsed = began.map(|b| b.elapsed()).unwrap_or_default();
        self.finish(i, record, elapsed);
    }

    /// The steps whose wait before another attempt is over — every one once the run was
    /// cancelled, so that they stop at once — taken; and how long to wait before looking
    /// again (`None` when no step waits to run again): until the next one's wait is over, at
    /// most [`CANCEL_POLL`].
    fn due(&mut self) -> (Vec<usize>, Option<Duration>) {
        let now = Instant::now();
        let cancelled = !self.again.is_empty() && self.scheduler.runner.cancelled();
        let mut due = Vec::new();
        self.again.retain(|&(at, i)| {
            let over = cancelled || at <= now;
            if over {
                due.push(i);
            }
            !over
        });
        let next = self.again.iter().map(|&(at, _)| at - now).min();
        (due, next.map(|wait| wait.min(CANCEL_POLL)))
    }

    fn reject(&mut self, errors: Vec<Error>) {
        self.observer.on(Event::Rejected { errors: &errors });
        self.rejected.extend(errors);
    }

    /// At the end of the input, with nothing running: steps still pending refer to steps
    /// that never arrived, or are in a cycle.
    fn fail_stuck(&mut self) {
        let mut unknown: Vec<(usize, String)> = self
            .awaiting
            .drain()
            .flat_map(|(id, steps)| steps.into_iter().map(move |i| (i, id.clone())))
            .collect();
        unknown.sort();
        for (i, id) in unknown {
            if matches!(self.slots[i], Slot::Pending | Slot::Waiting) {
                let e = self.plan.unknown_step(&self.plan.steps[i], &id);
                let e = self.locate_doc_path(i, e);
                let record = StepRecord::failed(&self.plan.steps[i].id, &e);
                self.finish(i, record, Duration::ZERO);
            }
        }
        // What is still pending waits on a cycle: among pending steps only, find one, fail
        // its steps (their dependents are skipped), until none is left.
        loop {
            let pending: Vec<Vec<usize>> = (0..self.slots.len())
                .map(|i| match self.slots[i] {
                    Slot::Pending => self.plan.deps[i]
                        .iter()
                        .copied()
                        .filter(|&d| self.slots[d] == Slot::Pending)
                        .collect(),
                    _ => Vec::new(),
                })
                .collect();
            let Err(cycle) = crate::graph::levels(&pending) else {
                break;
            };
            let e = self.plan.cycle_error(&cycle);
            let e = self.locate_doc_path(cycle[0], e);
            let members: BTreeSet<usize> = cycle.into_iter().collect();
            // Every step of the cycle fails (none is skipped because of another).
            for &i in &members {
                self.slots[i] = Slot::Done;
            }
            for &i in &members {
                let record = StepRecord::failed(&self.plan.steps[i].id, &e);
                self.finish(i, record, Duration::ZERO);
            }
        }
    }

    /// Locates an error whose path is already in document terms.
    fn locate_doc_path(&self, i: usize, err: Error) -> Error {
        match (&self.lines[i], self.scheduler.doc) {
            (Some(line), _) => line.locate(err),
            (None, Some(doc)) => doc.locate_error(err),
            (None, None) => err,
        }
    }
}

/// Adds `more` to `names`, keeping order and dropping repeats.
fn union(names: &mut Vec<String>, more: &[String]) {
    for n in more {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
}

impl Scheduler<'_> {
    /// Runs a whole, linked plan. `done` holds records of steps that finished in an earlier
    /// run (a resume): they are not run again.
    pub fn run(&self, plan: &Plan, done: Vec<StepRecord>, observer: &mut dyn Observer) -> Outcome {
        let no_input: Option<std::iter::Empty<Result<Arrival, Vec<Error>>>> = None;
        self.drive(plan.steps.clone(), done, no_input, None, observer)
    }

    /// [`Scheduler::run`] with every step run whole by `pool` (on other machines), up to
    /// `jobs` at once: the scheduling — each step as soon as its dependencies completed,
    /// skipped, waiting, run again as its `retries` allow — and the records stay here; the
    /// arguments resolve there, so no [`Event::Started`] is reported.
    pub fn run_elsewhere(
        &self,
        plan: &Plan,
        done: Vec<StepRecord>,
        pool: &dyn StepPool,
        observer: &mut dyn Observer,
    ) -> Outcome {
        let no_input: Option<std::iter::Empty<Result<Arrival, Vec<Error>>>> = None;
        self.drive(plan.steps.clone(), done, no_input, Some(pool), observer)
    }

    /// Runs steps as they arrive from `input` (each starting the moment its dependencies
    /// completed); the run ends when the input ends and nothing runs.
    pub fn run_stream(
        &self,
        input: impl Iterator<Item = Result<Arrival, Vec<Error>>> + Send,
        observer: &mut dyn Observer,
    ) -> Outcome {
        self.drive(Vec::new(), Vec::new(), Some(input), None, observer)
    }

    fn drive<I>(
        &self,
        steps: Vec<Step>,
        done: Vec<StepRecord>,
        input: Option<I>,
        elsewhere: Option<&dyn StepPool>,
        observer: &mut dyn Observer,
    ) -> Outcome
    where
        I: Iterator<Item = Result<Arrival, Vec<Error>>> + Send,
    {
        let mut plan = Plan::default();
        plan.limits = self.limits.clone();
        let mut board = Board {
            plan,
            slots: Vec::new(),
            missing: Vec::new(),
            dependents: Vec::new(),
            awaiting: HashMap::new(),
            waiting_for: Vec::new(),
            lines: Vec::new(),
            records: RecordMap::default(),
            ready: BTreeSet::new(),
            rejected: Vec::new(),
            attempts: Vec::new(),
            ahead: Vec::new(),
            announced: Vec::new(),
            open_from: 0,
            again: Vec::new(),
            scheduler: self,
            elsewhere,
            observer,
        };
        // Records of an earlier run are in place before any step is linked.
        for record in done {
            board.records.insert(record.id.clone(), record);
        }
        for step in steps {
            board.add(step, None);
        }
        let (to_board, from_workers) = mpsc::channel::<Msg>();
        let (to_workers, jobs) = mpsc::channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        std::thread::scope(|scope| {
            let (worker_jobs, worker_tx) = (Arc::clone(&jobs), to_board.clone());
            let spawn_worker = move || -> std::io::Result<()> {
                let jobs = Arc::clone(&worker_jobs);
                let back = worker_tx.clone();
                let runner = self.runner;
                let call = self.call;
                strata_core::work_thread("strata-step").spawn_scoped(scope, move || loop {
                    let job = match jobs.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    let index = job.index;
                    let record = job.run(runner, &call);
                    if back.send(Msg::Ran(index, Some(Box::new(record)))).is_err() {
                        return;
                    }
                })?;
                Ok(())
            };
            let mut input_done = input.is_none();
            if let Some(input) = input {
                let back = to_board.clone();
                let reader =
                    strata_core::work_thread("strata-steps-in").spawn_scoped(scope, move || {
                        for item in input {
                            let msg = match item {
                                Ok(arrival) => Msg::Arrived(Box::new(arrival)),
                                Err(errors) => Msg::Rejected(errors),
                            };
                            if back.send(msg).is_err() {
                                return;
                            }
                        }
                        let _ = back.send(Msg::End);
                    });
                if let Err(e) = reader {
                    input_done = true;
                    board.reject(vec![Error::new(
                        crate::PLAN,
                        strata_core::ErrorKind::Io,
                        format!("cannot start a thread to read the steps: {e}"),
                    )
                    .with_source(e)]);
                }
            }
            drop(to_board);
            // Steps started and not finished (those waiting to run again too), at most
            // `jobs`; tool calls handed to worker threads; worker threads started — each
            // only when a call is ready and every thread started so far is busy.
            let (mut running, mut busy, mut spawned) = (0usize, 0usize, 0usize);
            let mut workers = self.jobs.max(1);
            loop {
                let (due, next_due) = board.due();
                let mut starts: Vec<Next> = Vec::new();
                for i in due {
                    match board.attempt(i) {
                        Some(next) => starts.push(next),
                        None => running -= 1,
                    }
                }
                while running < workers {
                    match board.next_job() {
                        Some(Some(next)) => {
                            running += 1;
                            starts.push(next);
                        }
                        Some(None) => {}
                        None => break,
                    }
                }
                for next in starts {
                    match next {
                        Next::Elsewhere(i) => {
                            if let Some(pool) = elsewhere {
                                board.start_elsewhere(pool, i);
                            }
                        }
                        Next::Call(job) => {
                            if busy == spawned && spawned < workers {
                                match spawn_worker() {
                                    Ok(()) => spawned += 1,
                                    Err(e) if spawned == 0 => {
                                        let error = Error::new(
                                            crate::PLAN,
                                            strata_core::ErrorKind::Io,
                                            format!("cannot start a thread to run the step: {e}"),
                                        )
                                        .with_source(e);
                                        let record = StepRecord::failed(&job.id, &error);
                                        board.finish(job.index, record, Duration::ZERO);
                                        running -= 1;
                                        continue;
                                    }
                                    // The steps wait for the workers there are.
                                    Err(_) => workers = spawned,
                                }
                            }
                            busy += 1;
                            let _ = to_workers.send(job);
                        }
                    }
                }
                // Steps that became ready as others started (ahead of them) start now.
                if running < workers && !board.ready.is_empty() {
                    continue;
                }
                if running == 0 && board.ready.is_empty() && input_done {
                    board.fail_stuck();
                    break;
                }
                let poll = |timeout: Option<Duration>| -> Result<Vec<Msg>, ()> {
                    if let Some(pool) = elsewhere {
                        let ended = pool.finished(timeout);
                        return Ok(ended
                            .into_iter()
                            .map(|(i, record)| Msg::Ran(i, record.map(Box::new)))
                            .collect());
                    }
                    let got = match timeout {
                        Some(t) if t.is_zero() => from_workers
                            .try_recv()
                            .map_err(|e| matches!(e, mpsc::TryRecvError::Disconnected)),
                        Some(t) => from_workers
                            .recv_timeout(t)
                            .map_err(|e| matches!(e, mpsc::RecvTimeoutError::Disconnected)),
                        None => from_workers.recv().map_err(|_| true),
                    };
                    match got {
                        Ok(msg) => Ok(vec![msg]),
                        Err(false) => Ok(Vec::new()),
                        Err(true) => Err(()),
                    }
                };
                let mut msgs = match poll(Some(Duration::ZERO)) {
                    Ok(msgs) => msgs,
                    Err(()) => break,
                };
                if msgs.is_empty() {
                    board.observer.idle();
                    if let Some(pool) = elsewhere {
                        pool.awaited(!input_done || board.awaits());
                    }
                    msgs = match poll(next_due) {
                        Ok(msgs) => msgs,
                        Err(()) => break,
                    };
                }
                for msg in msgs {
                    match msg {
                        Msg::Ran(i, record) => {
                            if elsewhere.is_none() {
                                busy -= 1;
                            }
                            match record {
                                // Skipped while it ran ahead: its answer is moot.
                                _ if board.slots.get(i) != Some(&Slot::Running) => running -= 1,
                                Some(record) => {
                                    board.ran(i, *record);
                                    if board.slots[i] == Slot::Done {
                                        running -= 1;
                                    }
                                }
                                None => {
                                    board.not_run(i);
                                    running -= 1;
                                }
                            }
                        }
                        Msg::Arrived(arrival) => board.add(arrival.step, Some(arrival.line)),
                        Msg::Rejected(errors) => board.reject(errors),
                        Msg::End => input_done = true,
                    }
                }
            }
            drop(to_workers);
        });
        let mut missing_values = Vec::new();
        for (i, names) in board.waiting_for.iter().enumerate() {
            if board.slots[i] == Slot::Waiting {
                union(&mut missing_values, names);
            }
        }
        Outcome {
            plan: board.plan,
            records: board.records,
            waiting_for: board.waiting_for,
            missing_values,
            rejected: board.rejected,
        }
    }
}
