//! `strata plan run`: a plan's steps with the project's real tools — each step as soon as
//! the steps it depends on completed, at most `--jobs` at once — with a progress line per
//! step, user values, a dry run, a JSON report, and runs recorded under `.strata/runs/` that
//! resume after a kill.

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Map, Value};
use strata_app::App;
use strata_app::ExecOptions;
use strata_core::{Error, ErrorKind, Layer, RenderOptions};
use strata_doc::Document;
use strata_plans::checkpoint::{begin, load_plan, Checkpoint, RunStatus, Writer};
use strata_plans::request::ok_reply;
use strata_plans::stream::StepLines;
use strata_plans::{assess, Event, Observer, Outcome, Plan, Scheduler, State};
use strata_runs::{fingerprint, new_run_id, now, RunDir, RunStore};
use strata_tools::{validate, StepRecord, StepStatus, ToolRunner};

use crate::outcome::{open_project, print_errors};
use crate::plan_input::{
    read_document, read_stdin, shown_name, ticked, user_values, StdinPlan, STDIN,
};
use crate::shared_args::SharedArgs;
use strata_app::Failure;
use strata_app::Runner;

/// Exit code of a run in which a step failed or was skipped.
const FAILED: u8 = 1;
/// Exit code of a run that waits for user values.
const WAITING: u8 = 3;

/// Options of `strata plan run`.
#[derive(Debug, Args)]
pub struct PlanRunArgs {
    /// The plan: a JSON or YAML file, or `-` for standard input (a whole plan, or steps as
    /// JSON Lines that start as they arrive); optional with --resume
    pub plan: Option<String>,
    /// The most steps running at once, from 1 to 256 (default: `jobs` in strata.yaml,
    /// STRATA_JOBS, or 4)
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<u64>,
    /// A user value for `{{PLACEHOLDER_NAME}}`, as text (repeatable)
    #[arg(long = "value", value_name = "NAME=TEXT")]
    pub values: Vec<String>,
    /// A user value as JSON (repeatable)
    #[arg(long = "value-json", value_name = "NAME=JSON")]
    pub value_jsons: Vec<String>,
    /// Print the final report (every step record, levels, missing values) as JSON
    #[arg(long)]
    pub json: bool,
    /// Resolve and validate everything that can be without running anything
    #[arg(long)]
    pub dry_run: bool,
    /// No progress lines
    #[arg(long)]
    pub quiet: bool,
    /// Missing environment variables in tool configs are errors (also `strict: true` in
    /// strata.yaml, or STRATA_STRICT=1)
    #[arg(long)]
    pub strict: bool,
    /// The id of the new run (default: date, time and a random suffix)
    #[arg(long, value_name = "RUN_ID")]
    pub run_id: Option<String>,
    /// Continue the run with this id: its finished steps are not run again
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub shared: SharedArgs,
}

/// Runs `strata plan run`.
pub fn run(args: PlanRunArgs) -> ExitCode {
    let file = args
        .plan
        .as_deref()
        .filter(|p| *p != "-")
        .map(std::path::Path::new);
    let project = match open_project(args.shared.project(), file) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match run_in(&args, &project) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => crate::outcome::report(failure, Some(&project), args.json),
    }
}

fn refuse(message: &str, hint: &str) -> Failure {
    Failure::Error(Error::new(Layer::REQUEST, ErrorKind::Invalid, message).with_hint(hint))
}

/// What runs: a whole plan (from its document, or kept by the run being resumed), or steps
/// streamed on standard input.
enum Source {
    Whole {
        plan: Box<Plan>,
        value: Value,
        name: String,
        fingerprint: String,
        doc: Option<Box<Document>>,
    },
    Stream((usize, String), std::io::BufReader<std::io::Stdin>),
}

fn run_in(args: &PlanRunArgs, project: &App) -> Result<u8, Failure> {
    if let Some(n) = args.jobs {
        strata_app::settings::jobs_from(n, "--jobs").map_err(Failure::Error)?;
    }
    if args.resume.is_some() && args.run_id.is_some() {
        return Err(refuse("--run-id with --resume", "--resume names the run"));
    }
    if args.resume.is_some() && args.dry_run {
        return Err(refuse(
            "--dry-run with --resume",
            "a dry run records nothing to resume",
        ));
    }
    let tools = project.runner(ExecOptions {
        render: RenderOptions::strict_if(project.settings.strict_with(args.strict)),
        base_env: None,
    });
    let mut values = Map::new();
    if let Some(run_id) = &args.resume {
        return resume(args, project, &tools, run_id);
    }
    user_values(&args.values, &args.value_jsons, &mut values)?;
    let Some(path) = args.plan.as_deref() else {
        return Err(refuse(
            "no plan given",
            "name a plan file, `-` for standard input, or --resume a run",
        ));
    };
    let source = read_source(path, project)?;
    let source = match source {
        Source::Stream(first, rest) if args.dry_run => whole_from_stream(first, rest, project)?,
        other => other,
    };
    if let Source::Whole { plan, doc, .. } = &source {
        let shown = shown_name(project, path);
        project.admit_plan(plan, &shown, doc.as_deref())?;
        if args.dry_run {
            return Ok(dry_run(args, plan, &tools, &values));
        }
    }
    let store = RunStore::new(&project.root);
    let run_id = args.run_id.clone().unwrap_or_else(new_run_id);
    let (dir, _lock) = store.create_locked(&run_id)?;
    let started = now();
    let (name, print_fp, streamed, steps, plan_value) = match &source {
        Source::Whole {
            plan,
            value,
            name,
            fingerprint,
            ..
        } => (
            name.clone(),
            fingerprint.clone(),
            false,
            plan.steps.len(),
            Some(value.clone()),
        ),
        Source::Stream(..) => (STDIN.to_string(), String::new(), true, 0, None),
    };
    let checkpoint = Checkpoint {
        run_id: run_id.clone(),
        plan: name,
        fingerprint: print_fp,
        streamed,
        status: RunStatus::Running,
        steps,
        values: values.clone(),
        records: Vec::new(),
        started,
        updated: started,
    };
    // Durable before the first step starts: the plan and this first checkpoint are on disk
    // (synced) before anything is scheduled, so a run killed at any moment resumes.
    begin(&dir, plan_value.as_ref(), &checkpoint)?;
    execute(
        args,
        project,
        &tools,
        source,
        Record {
            checkpoint,
            plan: None,
        },
        &dir,
        Vec::new(),
    )
}

/// Reads the plan named on the command line.
fn read_source(path: &str, project: &App) -> Result<Source, Failure> {
    let shown = shown_name(project, path);
    let doc = if path == "-" {
        match read_stdin(&project.limits)? {
            StdinPlan::Stream(first, rest) => return Ok(Source::Stream(first, rest)),
            StdinPlan::Document(doc) => doc,
        }
    } else {
        read_document(path, &shown, &project.limits)?
    };
    match Plan::load(&doc) {
        Ok(mut plan) => Ok(Source::Whole {
            plan: {
                plan.limits = project.limits.clone();
                Box::new(plan)
            },
            value: doc.value.clone(),
            fingerprint: fingerprint(&doc.text),
            name: doc.name.clone(),
            doc: Some(Box::new(doc)),
        }),
        Err(errors) => Err(Failure::Document {
            errors,
            doc: Box::new(doc),
        }),
    }
}

/// A dry run of streamed steps: every line read, then the steps checked as one plan.
fn whole_from_stream(
    first: (usize, String),
    rest: std::io::BufReader<std::io::Stdin>,
    project: &App,
) -> Result<Source, Failure> {
    let mut plan = Plan::default();
    plan.limits = project.limits.clone();
    let mut errors = Vec::new();
    let mut steps = Vec::new();
    for item in StepLines::new(STDIN, Some(first), rest, project.limits.clone()) {
        match item {
            Ok(arrival) => {
                steps.push(arrival.line.doc.value.clone());
                if let Err(e) = plan.add(arrival.step) {
                    errors.push(arrival.line.locate(e));
                }
            }
            Err(es) => errors.extend(es),
        }
    }
    errors.extend(plan.link());
    if let Some(e) = errors.into_iter().next() {
        return Err(Failure::Error(e));
    }
    Ok(Source::Whole {
        plan: Box::new(plan),
        value: Value::Array(steps),
        name: STDIN.to_string(),
        fingerprint: String::new(),
        doc: None,
    })
}

/// `--resume`: the run's plan and records, and the values it had (new ones added).
fn resume(
    args: &PlanRunArgs,
    project: &App,
    tools: &Runner<'_>,
    run_id: &str,
) -> Result<u8, Failure> {
    let store = RunStore::new(&project.root);
    if store.unstarted(run_id) {
        return Err(Failure::Error(
            Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!("run `{run_id}` never started: it was stopped before its first step"),
            )
            .with_hint(format!(
                "start it again with `strata plan run <plan> --run-id {run_id}`"
            )),
        ));
    }
    let dir = store.open(run_id)?;
    let _lock = dir.lock()?;
    let mut checkpoint = Checkpoint::load(&dir)?;
    if checkpoint.streamed {
        return Err(Failure::Error(
            Error::new(
                Layer::REQUEST,
                ErrorKind::RunState,
                format!(
                    "run `{run_id}` ran steps streamed on standard input; it cannot be resumed"
                ),
            )
            .with_hint("start a new run with the whole plan; finished steps are in its checkpoint"),
        ));
    }
    if matches!(checkpoint.status, RunStatus::Completed | RunStatus::Failed) {
        return Err(Failure::Error(Error::new(
            Layer::REQUEST,
            ErrorKind::RunState,
            format!(
                "run `{run_id}` has already ended ({})",
                checkpoint.status.name()
            ),
        )));
    }
    if let Some(path) = args.plan.as_deref() {
        let shown = shown_name(project, path);
        let doc = read_document(path, &shown, &project.limits)?;
        if fingerprint(&doc.text) != checkpoint.fingerprint {
            return Err(Failure::Error(
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::RunState,
                    format!("`{shown}` changed since run `{run_id}` started"),
                )
                .with_hint("resume without naming the plan to use the plan the run started with"),
            ));
        }
    }
    let value = load_plan(&dir)?;
    let mut plan = Plan::from_value(&value, &strata_core::FieldPath::root()).map_err(|errors| {
        Failure::Error(
            errors
                .into_iter()
                .next()
                .unwrap_or_else(|| Error::new(Layer::REQUEST, ErrorKind::Invalid, "invalid plan")),
        )
    })?;
    plan.limits = project.limits.clone();
    user_values(&args.values, &args.value_jsons, &mut checkpoint.values)?;
    let done = checkpoint.records.clone();
    checkpoint.status = RunStatus::Running;
    let source = Source::Whole {
        plan: Box::new(plan),
        value,
        name: checkpoint.plan.clone(),
        fingerprint: checkpoint.fingerprint.clone(),
        doc: None,
    };
    let record = Record {
        checkpoint,
        plan: None,
    };
    execute(args, project, tools, source, record, &dir, done)
}

/// What a run writes to its directory: the checkpoint, and the plan it started with (written
/// once, with the first checkpoint).
struct Record {
    checkpoint: Checkpoint,
    plan: Option<Value>,
}

/// Runs the source, printing progress and keeping the checkpoint; prints the outcome.
fn execute(
    args: &PlanRunArgs,
    project: &App,
    tools: &Runner<'_>,
    source: Source,
    record: Record,
    dir: &RunDir,
    done: Vec<StepRecord>,
) -> Result<u8, Failure> {
    let _ = strata_app::install_interrupt_handler();
    let values = record.checkpoint.values.clone();
    let run_id = record.checkpoint.run_id.clone();
    let mut progress = Progress {
        quiet: args.quiet,
        checkpoint: record.checkpoint,
        plan: record.plan,
        dirty: true,
        writer: Some(Writer::start(dir.clone())),
        save_error: None,
    };
    let jobs = match args.jobs {
        Some(n) => strata_app::settings::jobs_from(n, "--jobs")?,
        None => project.settings.jobs.value,
    };
    let outcome = match source {
        Source::Whole {
            plan, doc, name, ..
        } => {
            let levels = plan.levels().len();
            if args.resume.is_none() {
                progress.say(&format!(
                    "run {run_id}: {name}, {} steps in {levels} levels, at most {jobs} at once",
                    plan.steps.len()
                ));
            } else {
                progress.say(&format!(
                    "run {run_id}: resuming {name}, {} of {} steps finished, at most {jobs} at once",
                    done.len(),
                    plan.steps.len()
                ));
            }
            let scheduler = Scheduler {
                limits: &project.limits,
                runner: tools,
                jobs,
                values: &values,
                call: Default::default(),
                doc: doc.as_deref(),
            };
            scheduler.run(&plan, done, &mut progress)
        }
        Source::Stream(first, rest) => {
            progress.say(&format!(
                "run {run_id}: steps from {STDIN} as they arrive, at most {jobs} at once"
            ));
            let scheduler = Scheduler {
                limits: &project.limits,
                runner: tools,
                jobs,
                values: &values,
                call: Default::default(),
                doc: None,
            };
            let lines = StepLines::new(STDIN, Some(first), rest, project.limits.clone());
            scheduler.run_stream(lines, &mut progress)
        }
    };
    let status = outcome.status();
    progress.checkpoint.status = status;
    progress.checkpoint.steps = outcome.plan.steps.len();
    progress.save();
    progress.say(&format!(
        "run {run_id}: {} ({})",
        status.name(),
        counts(&outcome)
    ));
    if let Some(e) = progress.save_error.take() {
        return Err(Failure::Error(e));
    }
    let stdout = if args.json {
        serde_json::to_string_pretty(&report(
            &run_id,
            &progress.checkpoint.plan,
            status,
            &outcome,
        ))
        .unwrap_or_default()
            + "\n"
    } else {
        serde_json::to_string_pretty(&sinks(&outcome)).unwrap_or_default() + "\n"
    };
    let _ = std::io::stdout().lock().write_all(stdout.as_bytes());
    if !outcome.missing_values.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "waiting for values: {}",
            ticked(&outcome.missing_values)
        );
        let _ = writeln!(
            err,
            "  resume with: strata plan run --resume {run_id} {}",
            outcome
                .missing_values
                .iter()
                .map(|n| format!("--value {n}=…"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    Ok(match status {
        RunStatus::Completed => 0,
        RunStatus::Waiting => WAITING,
        RunStatus::Failed | RunStatus::Running => FAILED,
    })
}

/// `2 completed, 1 failed, 1 skipped, 1 waiting` (the counts that are not zero).
fn counts(outcome: &Outcome) -> String {
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

/// The results of the completed steps no other step depends on, by id.
fn sinks(outcome: &Outcome) -> Value {
    let plan = &outcome.plan;
    let mut used = vec![false; plan.steps.len()];
    for deps in &plan.deps {
        for &d in deps {
            used[d] = true;
        }
    }
    let mut out = Map::new();
    for (i, step) in plan.steps.iter().enumerate() {
        if let Some(r) = outcome.records.get(&step.id) {
            if !used[i] && r.status == StepStatus::Completed {
                out.insert(step.id.clone(), r.result.clone());
            }
        }
    }
    Value::Object(out)
}

/// The `--json` report: the run, its status, the levels, every step's record (waiting steps
/// with `status: waiting` and `waiting_for`), the missing values and rejected input.
fn report(run_id: &str, name: &str, status: RunStatus, outcome: &Outcome) -> Value {
    json!({
        "run_id": run_id,
        "plan": name,
        "status": status.name(),
        "levels": outcome.plan.level_ids(),
        "steps": outcome.step_records(),
        "missing_values": outcome.missing_values,
        "rejected": outcome.rejected.iter().map(Error::to_json).collect::<Vec<_>>(),
    })
}

/// Progress lines on standard error, and the checkpoint whenever steps finished (written when
/// the scheduler waits, so that steps that finish together cost one write).
struct Progress {
    quiet: bool,
    checkpoint: Checkpoint,
    /// The plan, until it is written.
    plan: Option<Value>,
    /// True when the checkpoint on disk is behind.
    dirty: bool,
    /// Writes checkpoints while the run goes on (until it ends).
    writer: Option<Writer>,
    save_error: Option<Error>,
}

impl Progress {
    fn say(&self, line: &str) {
        if !self.quiet {
            anstream::eprintln!("{line}");
        }
    }

    /// Writes the final checkpoint (in place of one still queued) and waits until it is on
    /// disk.
    fn save(&mut self) {
        self.checkpoint.updated = now();
        if let Some(writer) = self.writer.take() {
            writer.write(self.plan.take().as_ref(), &self.checkpoint);
            if let Err(e) = writer.finish() {
                self.save_error.get_or_insert(e);
            }
        }
    }
}

impl Observer for Progress {
    fn on(&mut self, event: Event<'_>) {
        match event {
            Event::Started { step, .. } => {
                self.say(&crate::progress::start_line(&step.id, &step.tool));
            }
            Event::Finished {
                step,
                record,
                elapsed,
            } => {
                let line = crate::progress::end_line(&step.id, &step.tool, record, elapsed);
                self.say(&line);
                if record.status == StepStatus::Failed && !self.quiet {
                    for l in record.stderr_tail().iter().flat_map(|t| t.lines()) {
                        eprintln!("    ! {}", strata_core::escaped(l));
                    }
                }
                self.checkpoint.records.push(record.clone());
                self.dirty = true;
            }
            Event::Waiting { step, names } => {
                self.say(&format!(
                    "wait {} ({}): needs {}",
                    step.id,
                    step.tool,
                    ticked(names)
                ));
            }
            Event::Rejected { errors } => print_errors(errors, None),
        }
    }

    fn idle(&mut self) {
        if let (true, Some(writer)) = (self.dirty, &self.writer) {
            self.checkpoint.updated = now();
            writer.write(self.plan.take().as_ref(), &self.checkpoint);
            self.dirty = false;
        }
    }
}

/// `--dry-run`: every step's state with nothing run; ready steps resolved and validated
/// against their tools' schemas.
fn dry_run(args: &PlanRunArgs, plan: &Plan, tools: &Runner<'_>, values: &Map<String, Value>) -> u8 {
    let mut assessment = assess(plan, &HashMap::new(), values);
    for (step, a) in plan.steps.iter().zip(assessment.steps.iter_mut()) {
        let Some(Value::Object(given)) = &a.arguments else {
            continue;
        };
        if let Err(e) = validate(&step.tool, tools.parameters(&step.tool).as_ref(), given) {
            a.state = State::Failed;
            a.arguments = None;
            a.error = Some(e);
        }
    }
    let status = if assessment.steps.iter().any(|a| a.state == State::Failed) {
        FAILED
    } else if !assessment.missing_values.is_empty() {
        WAITING
    } else {
        0
    };
    let text = if args.json {
        serde_json::to_string_pretty(&Value::Object(ok_reply(plan, assessment))).unwrap_or_default()
            + "\n"
    } else {
        let levels = plan.levels();
        let mut level_of = vec![0; plan.steps.len()];
        for (k, l) in levels.iter().enumerate() {
            for &i in l {
                level_of[i] = k;
            }
        }
        let mut out = format!(
            "dry run: {} steps in {} levels, nothing runs\n",
            plan.steps.len(),
            levels.len()
        );
        for (i, (step, a)) in plan.steps.iter().zip(&assessment.steps).enumerate() {
            out.push_str(&format!(
                "{} ({}), level {}: {}",
                step.id,
                step.tool,
                level_of[i],
                a.state.name()
            ));
            match a.state {
                State::Ready => {
                    let args = a
                        .arguments
                        .as_ref()
                        .map(Value::to_string)
                        .unwrap_or_default();
                    out.push_str(&format!(" {args}"));
                }
                State::Blocked => {
                    out.push_str(&format!(" until {} completed", a.waiting_for.join(", ")))
                }
                State::Waiting => out.push_str(&format!(" for {}", ticked(&a.waiting_for))),
                _ => {
                    if let Some(e) = &a.error {
                        out.push_str(&format!(": {}", e.message));
                    }
                }
            }
            out.push('\n');
        }
        if !assessment.missing_values.is_empty() {
            out.push_str(&format!(
                "missing values: {}\n",
                ticked(&assessment.missing_values)
            ));
        }
        out
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    status
}
