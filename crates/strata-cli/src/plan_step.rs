//! `strata plan step`: one step of a plan, given the records of the steps it depends on —
//! what each task of a workflow exported by `strata export argo` runs. The references are
//! resolved here, by the plan resolver, never by the orchestrator; the step's record is
//! printed, and written for the orchestrator with `--output`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::Map;
use strata_argo::transport::{decode, read_input, write_output, PARAMETER_LIMIT};
use strata_argo::RECORD;
use strata_core::{did_you_mean, Error, ErrorKind, Layer, RenderOptions};
use strata_doc::Document;
use strata_exec::{ExecOptions, ExecRunner, Project};
use strata_plans::{check_arguments, resolve_parameters, skip_reason, Plan, Sources, State};
use strata_tools::{CallOptions, StepRecord, StepStatus, ToolRunner};

use crate::plan_cmd::{ticked, user_values, Failure};
use crate::run::open_project;

/// Exit code of a step that failed or was skipped.
const FAILED: u8 = 1;
/// Exit code of a step that waits for user values.
const WAITING: u8 = 3;

/// Options of `strata plan step`.
#[derive(Debug, Args)]
pub struct StepArgs {
    /// The plan file: its text, or its text as a JSON string (as an exported workflow
    /// carries it)
    pub plan: PathBuf,
    /// The id of the step to run
    #[arg(long, value_name = "ID")]
    pub step: String,
    /// The name of the plan in messages (default: the path given)
    #[arg(long = "as", value_name = "NAME")]
    pub shown: Option<String>,
    /// The directory holding the record of every step it depends on, `<id>.json` each
    #[arg(long, value_name = "DIR")]
    pub records: Option<PathBuf>,
    /// A user value for `{{PLACEHOLDER_NAME}}`, as text (repeatable)
    #[arg(long = "value", value_name = "NAME=TEXT")]
    pub values: Vec<String>,
    /// A user value as JSON (repeatable)
    #[arg(long = "value-json", value_name = "NAME=JSON")]
    pub value_jsons: Vec<String>,
    /// Also write the record into this directory, as `record.json` (or, above --limit,
    /// `record.artifact.json` with `record.json` pointing at it)
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Records longer than this many bytes of JSON go to the artifact file
    #[arg(long, value_name = "BYTES", default_value_t = PARAMETER_LIMIT)]
    pub limit: usize,
    /// Treat missing environment variables in tool configs as errors
    #[arg(long)]
    pub strict: bool,
    /// The project root (default: the nearest ancestor of the plan's directory with tools/)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

/// Runs `strata plan step`.
pub fn run(args: StepArgs) -> ExitCode {
    let project = match open_project(args.project.as_deref(), Some(&args.plan)) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match step(&args, &project) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => failure.report(&project),
    }
}

fn read_plan(args: &StepArgs, project: &Project) -> Result<Document, Error> {
    let shown = args
        .shown
        .clone()
        .unwrap_or_else(|| args.plan.display().to_string());
    let text = strata_doc::read_text(&args.plan, &shown, &project.limits)?;
    let text = decode(&text).unwrap_or(text).into_bytes();
    strata_plans::parse_document(&shown, text, &project.limits)
}

/// The records of the steps `deps` (by id), read from `dir`.
fn records(dir: Option<&Path>, step: &str, deps: &[&str]) -> Result<Vec<StepRecord>, Error> {
    let missing = |dep: &str, where_: String| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            format!("no record of step `{dep}`, which step `{step}` depends on, {where_}"),
        )
        .with_hint(
            "give the records of the steps it depends on with --records DIR (`<id>.json` each)",
        )
    };
    deps.iter()
        .map(|&dep| {
            let Some(dir) = dir else {
                return Err(missing(dep, "and no --records".into()));
            };
            let value = read_input(dir, dep)?
                .ok_or_else(|| missing(dep, format!("in `{}`", dir.display())))?;
            StepRecord::from_json(&value)
                .filter(|r| r.id == dep)
                .ok_or_else(|| {
                    Error::new(
                        Layer::REQUEST,
                        ErrorKind::Request,
                        format!(
                            "`{}` is not the record of step `{dep}`",
                            dir.join(format!("{dep}.json")).display()
                        ),
                    )
                    .with_hint("a record is {id, status, result, error, run}")
                })
        })
        .collect()
}

fn step(args: &StepArgs, project: &Project) -> Result<u8, Failure> {
    let doc = read_plan(args, project)?;
    let plan = match Plan::load(&doc) {
        Ok(plan) => plan,
        Err(errors) => return Err(Failure::Plan(errors, Box::new(doc))),
    };
    let Some(i) = plan.find(&args.step) else {
        let mut e = Error::new(
            Layer::REQUEST,
            ErrorKind::UnknownStep,
            format!("`{}` has no step `{}`", doc.name, args.step),
        );
        e = match did_you_mean(&args.step, plan.ids()) {
            Some(best) => e.with_hint(format!("did you mean `{best}`?")),
            None => e.with_hint(format!(
                "its steps are {}",
                plan.ids().collect::<Vec<_>>().join(", ")
            )),
        };
        return Err(e.into());
    };
    let step = &plan.steps[i];
    let tools = ExecRunner {
        project,
        options: ExecOptions {
            render: RenderOptions::strict_if(args.strict),
            base_env: None,
        },
    };
    let checked = if tools.has_tool(&step.tool) {
        check_arguments(step, tools.parameters(&step.tool).as_ref())
    } else {
        let mut e = tools.unknown_tool(&step.tool);
        e.message = format!("step `{}` calls unknown tool `{}`", step.id, step.tool);
        e.path = step.at.child(strata_core::PathSeg::Key("tool".into()));
        Err(e)
    };
    if let Err(e) = checked {
        return Err(Failure::Plan(vec![doc.locate_error(e)], Box::new(doc)));
    }
    let deps: Vec<&str> = plan.deps[i]
        .iter()
        .map(|&d| plan.steps[d].id.as_str())
        .collect();
    let known = records(args.records.as_deref(), &step.id, &deps)?;
    let mut values = Map::new();
    user_values(&args.values, &args.value_jsons, &mut values)?;
    let record = match known.iter().find(|r| r.status != StepStatus::Completed) {
        Some(r) => {
            let state = match r.status {
                StepStatus::Failed => State::Failed,
                _ => State::Skipped,
            };
            StepRecord::skipped(&step.id, skip_reason(&r.id, state))
        }
        None => {
            let missing: Vec<String> = step
                .args
                .value_names()
                .into_iter()
                .filter(|n| !values.contains_key(*n))
                .map(String::from)
                .collect();
            if !missing.is_empty() {
                eprintln!(
                    "wait {} ({}): needs {}",
                    step.id,
                    step.tool,
                    ticked(&missing)
                );
                return Ok(WAITING);
            }
            let by_id: strata_plans::RecordMap =
                known.into_iter().map(|r| (r.id.clone(), r)).collect();
            let sources = Sources {
                records: &by_id,
                values: &values,
            };
            match resolve_parameters(step, &sources) {
                Ok(params) => match tools.run(&step.tool, &params, &CallOptions::default()) {
                    Ok(run) => StepRecord::from_run(&step.id, &step.tool, &run),
                    Err(e) => StepRecord::failed(&step.id, &e),
                },
                Err(mut e) => {
                    e.path = e.path.under(&step.at);
                    StepRecord::failed(&step.id, &doc.locate_error(e))
                }
            }
        }
    };
    let head = format!("{} ({})", step.id, step.tool);
    match record.status {
        StepStatus::Completed => eprintln!("end {head}: completed"),
        StepStatus::Skipped => eprintln!("skip {head}: {}", record.message().unwrap_or_default()),
        StepStatus::Failed => {
            eprintln!(
                "end {head}: failed: {}",
                record.message().unwrap_or_default()
            );
            for l in record.stderr_tail().iter().flat_map(|t| t.lines()) {
                eprintln!("    ! {l}");
            }
        }
    }
    let json = record.to_json();
    if let Some(dir) = &args.output {
        write_output(dir, RECORD, &json, args.limit)?;
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&json).unwrap_or_default()
    );
    Ok(match record.status {
        StepStatus::Completed => 0,
        _ => FAILED,
    })
}
