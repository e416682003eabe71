//! `strata plan run`: a plan's steps with the project's real tools — each step as soon as
//! the steps it depends on completed, at most `--jobs` at once — with a progress line per
//! step, user values, a dry run, a JSON report, and runs recorded under `.strata/runs/` that
//! resume after a kill.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Map, Value};
use strata_app::progress::{self, ticked};
use strata_app::App;
use strata_app::ExecOptions;
use strata_app::{PlanExecution, PlanSource, RecordedPlanRun, WholePlan};
use strata_core::{Error, ErrorKind, Layer, RenderOptions};
use strata_doc::Document;
use strata_plans::request::ok_reply;
use strata_plans::stream::StepLines;
use strata_plans::{Assessment, Event, Observer, Plan, State};
use strata_runs::fingerprint;

use crate::outcome::{open_project, print_errors};
use crate::plan_input::{read_document, read_stdin, shown_name, user_values, StdinPlan, STDIN};
use crate::shared_args::SharedArgs;
use strata_app::Failure;

/// Exit code of a run in which a step failed or was skipped.
const FAILED: u8 = strata_app::EXIT_FAILED;
/// Exit code of a run that waits for user values.
const WAITING: u8 = strata_app::EXIT_WAITING;

/// Options of `strata plan run`.
#[derive(Debug, Args)]
pub(crate) struct PlanRunArgs {
    /// The plan: a JSON or YAML file, or `-` for standard input (a whole plan, or steps as
    /// JSON Lines that start as they arrive); optional with --resume
    #[arg(add = crate::complete::plans())]
    pub(crate) plan: Option<String>,
    /// The most steps running at once, from 1 to 256 (default: `jobs` in strata.yaml,
    /// STRATA_JOBS, or 4)
    #[arg(long, short = 'j', value_name = "N")]
    pub(crate) jobs: Option<u64>,
    /// A user value for `{{PLACEHOLDER_NAME}}`, as text (repeatable)
    #[arg(long = "value", value_name = "NAME=TEXT")]
    pub(crate) values: Vec<String>,
    /// A user value as JSON (repeatable)
    #[arg(long = "value-json", value_name = "NAME=JSON")]
    pub(crate) value_jsons: Vec<String>,
    /// `--json` (a global option, copied from `shared`): print the final report (every step
    /// record, levels, missing values) as JSON
    #[arg(skip)]
    pub(crate) json: bool,
    /// Resolve and validate everything that can be without running anything
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// `-q/--quiet` (a global option, copied from `shared`): no progress lines
    #[arg(skip)]
    pub(crate) quiet: bool,
    /// `--strict/--no-strict` (global options, copied from `shared`): whether missing
    /// environment variables in tool configs are errors, over the settings
    #[arg(skip)]
    pub(crate) strict: Option<bool>,
    /// The id of the new run (default: date, time and a random suffix)
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) run_id: Option<String>,
    /// Continue the run with this id: its finished steps are not run again
    #[arg(long, value_name = "RUN_ID", add = crate::complete::run_ids())]
    pub(crate) resume: Option<String>,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata plan run`.
pub(crate) fn run(mut args: PlanRunArgs) -> ExitCode {
    args.json = args.shared.json;
    args.quiet = args.shared.quiet;
    args.strict = args.shared.strict();
    let file = args
        .plan
        .as_deref()
        .filter(|p| *p != "-")
        .map(std::path::Path::new);
    let project = match open_project(file) {
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
    let mut values = Map::new();
    if let Some(run_id) = &args.resume {
        return resume(args, project, run_id);
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
    if let (Source::Whole { plan, doc, .. }, true) = (&source, args.dry_run) {
        let shown = shown_name(project, path);
        let assessment = project.dry_run_plan(plan, &shown, doc.as_deref(), &values)?;
        return Ok(dry_run(args, plan, assessment));
    }
    // The run's directory, its plan and first checkpoint (synced) before anything runs.
    let run = project.start_plan_run(plan_source(source, project), args.run_id.clone(), values)?;
    execute(args, project, run)
}

/// The source as the application layer records it: a whole plan, or the steps read from
/// standard input as they arrive.
fn plan_source(source: Source, project: &App) -> PlanSource {
    match source {
        Source::Whole {
            plan,
            value,
            name,
            fingerprint,
            doc,
        } => PlanSource::Whole(Box::new(WholePlan {
            plan: *plan,
            value,
            name,
            fingerprint,
            doc: doc.map(|d| *d),
        })),
        Source::Stream(first, rest) => PlanSource::Stream(Box::new(StepLines::new(
            STDIN,
            Some(first),
            rest,
            project.limits.clone(),
        ))),
    }
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
    match project.load_plan(&doc) {
        Ok(plan) => Ok(Source::Whole {
            plan: Box::new(plan),
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
    let mut plan = project.new_plan();
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

/// `--resume`: the run's plan and records, and the values it had (new ones added); the
/// application layer refuses a run that cannot continue.
fn resume(args: &PlanRunArgs, project: &App, run_id: &str) -> Result<u8, Failure> {
    let mut values = Map::new();
    user_values(&args.values, &args.value_jsons, &mut values)?;
    let named = args.plan.as_deref().map(|path| {
        move || -> Result<Document, Failure> {
            let shown = shown_name(project, path);
            Ok(read_document(path, &shown, &project.limits)?)
        }
    });
    let named = named
        .as_ref()
        .map(|read| read as &dyn Fn() -> Result<Document, Failure>);
    let run = project.resume_plan_run(run_id, named, values)?;
    execute(args, project, run)
}

/// Runs the recorded run, printing progress; prints the outcome.
fn execute(args: &PlanRunArgs, project: &App, run: RecordedPlanRun) -> Result<u8, Failure> {
    let _ = strata_app::install_interrupt_handler();
    let run_id = run.run_id().to_string();
    if run.plan().is_some() && !args.quiet {
        strata_app::on_interrupt(Some(format!(
            "strata: run {run_id} interrupted: resume it with `strata plan run --resume {run_id}`"
        )));
    }
    let progress = Progress {
        quiet: args.quiet,
        json: args.json,
    };
    let jobs = match args.jobs {
        Some(n) => strata_app::settings::jobs_from(n, "--jobs")?,
        None => project.settings.jobs.value,
    };
    match run.plan() {
        Some(plan) if !run.resumed() => progress.say(&format!(
            "run {run_id}: {}, {} steps in {} levels, at most {jobs} at once",
            run.plan_name(),
            plan.steps.len(),
            plan.levels().len()
        )),
        Some(plan) => progress.say(&format!(
            "run {run_id}: resuming {}, {} of {} steps finished, at most {jobs} at once",
            run.plan_name(),
            run.finished(),
            plan.steps.len()
        )),
        None => progress.say(&format!(
            "run {run_id}: steps from {STDIN} as they arrive, at most {jobs} at once"
        )),
    }
    let exec = PlanExecution {
        options: ExecOptions {
            render: RenderOptions::strict_if(project.settings.strict_over(args.strict)),
            base_env: None,
            cancel: None,
        },
        remote: None,
        steps: None,
        jobs,
        call: Default::default(),
    };
    let mut printer = Progress {
        quiet: args.quiet,
        json: args.json,
    };
    let report = run.execute(project, &exec, &mut printer)?;
    progress.say(&format!(
        "run {run_id}: {} ({})",
        report.status.name(),
        report.counts()
    ));
    let shown = if args.json {
        report.to_json()
    } else {
        report.sinks()
    };
    let stdout = serde_json::to_string_pretty(&shown).unwrap_or_default() + "\n";
    crate::output::print(&stdout);
    let missing = &report.outcome.missing_values;
    if !missing.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "waiting for values: {}", ticked(missing));
        let _ = writeln!(
            err,
            "  resume with: strata plan run --resume {run_id} {}",
            missing
                .iter()
                .map(|n| format!("--value {n}=…"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    Ok(report.exit_code())
}

/// Progress lines on standard error (the application layer keeps the checkpoint).
/// A plan run's progress on stderr: lines for people, or with `--json` one JSON object per
/// event (`step_started`, `step_retrying`, `step_finished`, `step_waiting`), as directives' and graphs'
/// events go (docs/cli.md, "One stream for events").
struct Progress {
    quiet: bool,
    json: bool,
}

impl Progress {
    fn say(&self, line: &str) {
        if !self.quiet && !self.json {
            anstream::eprintln!("{line}");
        }
    }

    /// With `--json`: `event` as one JSON line on stderr (true when it was).
    fn event_json(&self, event: &Event<'_>) -> bool {
        if !self.json {
            return false;
        }
        if self.quiet {
            return true;
        }
        let Some(line) = event.to_json() else {
            return false;
        };
        eprintln!("{line}");
        true
    }
}

impl Observer for Progress {
    fn on(&mut self, event: Event<'_>) {
        if self.event_json(&event) {
            return;
        }
        match event {
            Event::Started { step, .. } => {
                self.say(&progress::start_line(&step.id, &step.tool));
            }
            Event::Finished {
                step,
                record,
                elapsed,
            } => {
                let status = crate::progress::painted(record);
                for line in progress::finished_lines(&step.id, &step.tool, record, elapsed, &status)
                {
                    self.say(&line);
                }
            }
            Event::Retrying {
                step,
                record,
                attempt,
                attempts,
                delay,
            } => {
                for line in
                    progress::retry_lines(&step.id, &step.tool, record, attempt, attempts, delay)
                {
                    self.say(&line);
                }
            }
            Event::Waiting { step, names } => {
                self.say(&progress::waiting_line(&step.id, &step.tool, names));
            }
            Event::Rejected { errors } => print_errors(errors, None),
        }
    }
}

/// `--dry-run`: every step's state with nothing run; ready steps resolved and validated
/// against their tools' schemas.
fn dry_run(args: &PlanRunArgs, plan: &Plan, assessment: Assessment) -> u8 {
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
                        out.push_str(&format!(": {}", e.message()));
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
    crate::output::print(&text);
    status
}
