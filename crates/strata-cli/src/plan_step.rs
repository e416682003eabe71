//! `strata plan step`: one step of a plan, given the records of the steps it depends on —
//! what each task of a workflow exported by `strata export argo` runs. The application layer
//! checks and runs the step exactly as `strata run` would run its tool; the step's record is
//! printed, and written for the orchestrator with `--output`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::Map;
use strata_app::{App, Failure, StepPlan, StepRequest, EXIT_FAILED, EXIT_WAITING};
use strata_argo::transport::{decode, read_input, uncarry, write_output, PARAMETER_LIMIT};
use strata_argo::RECORD;
use strata_core::{Error, ErrorKind, Layer, RenderOptions};
use strata_doc::Document;
use strata_tools::{StepRecord, StepStatus};

use crate::outcome::open_project;
use crate::plan_input::user_values;
use crate::shared_args::SharedArgs;
use strata_app::progress;

/// Options of `strata plan step`.
#[derive(Debug, Args)]
pub(crate) struct StepArgs {
    /// The plan file: its text, or its text as a JSON string (as an exported workflow
    /// carries it)
    pub(crate) plan: PathBuf,
    /// The id of the step to run
    #[arg(long, value_name = "ID")]
    pub(crate) step: String,
    /// The name of the plan in messages (default: the path given)
    #[arg(long = "as", value_name = "NAME")]
    pub(crate) shown: Option<String>,
    /// The directory holding the record of every step it depends on, `<id>.json` each
    #[arg(long, value_name = "DIR")]
    pub(crate) records: Option<PathBuf>,
    /// A user value for `{{PLACEHOLDER_NAME}}`, as text (repeatable)
    #[arg(long = "value", value_name = "NAME=TEXT")]
    pub(crate) values: Vec<String>,
    /// A user value as JSON (repeatable)
    #[arg(long = "value-json", value_name = "NAME=JSON")]
    pub(crate) value_jsons: Vec<String>,
    /// Also write the record into this directory, as `record.json` (or, above --limit,
    /// `record.artifact.json` with `record.json` pointing at it)
    #[arg(long, value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,
    /// Records longer than this many bytes of JSON go to the artifact file
    #[arg(long, value_name = "BYTES", default_value_t = PARAMETER_LIMIT)]
    pub(crate) limit: usize,
    /// The uid of the workflow run the step belongs to (an exported workflow gives
    /// `{{workflow.uid}}`): its steps mint and restore secret markers under a key made from
    /// it. Without it, under a key this user's strata keeps for the plan
    #[arg(long, value_name = "UID")]
    pub(crate) run_uid: Option<String>,
    /// `--strict` treats missing environment variables in tool configs as errors; `--json`
    /// prints a failure to run the step as `{"ok": false, "error": …}` on stdout
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata plan step`.
pub(crate) fn run(args: StepArgs) -> ExitCode {
    let project = match open_project(Some(&args.plan)) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match step(&args, &project) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => crate::outcome::report(failure, Some(&project), args.shared.json),
    }
}

fn read_plan(args: &StepArgs, project: &App) -> Result<Document, Error> {
    // An exported workflow carries the name encoded when it holds a `{` (Argo's `{{…}}`).
    let shown = args
        .shown
        .as_deref()
        .map(uncarry)
        .unwrap_or_else(|| args.plan.display().to_string());
    let text = strata_doc::read_text(&args.plan, &shown, &project.limits)?;
    let text = decode(&text).unwrap_or(text).into_bytes();
    strata_plans::parse_document(&shown, text, &project.limits)
}

/// The record of step `dep`, which step `step` depends on, read from `dir`.
fn read_record(dir: Option<&Path>, step: &str, dep: &str) -> Result<StepRecord, Error> {
    let missing = |where_: String| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            format!("no record of step `{dep}`, which step `{step}` depends on, {where_}"),
        )
        .with_hint(
            "give the records of the steps it depends on with --records DIR (`<id>.json` each)",
        )
    };
    let Some(dir) = dir else {
        return Err(missing("and no --records".into()));
    };
    let value = read_input(dir, dep)?.ok_or_else(|| missing(format!("in `{}`", dir.display())))?;
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
}

fn step(args: &StepArgs, project: &App) -> Result<u8, Failure> {
    let doc = read_plan(args, project)?;
    let mut values = Map::new();
    user_values(&args.values, &args.value_jsons, &mut values)?;
    let request = StepRequest {
        plan: StepPlan::Document(&doc),
        step: &args.step,
        values: &values,
        options: strata_app::ExecOptions {
            render: RenderOptions::strict_if(project.settings.strict_over(args.shared.strict())),
            base_env: None,
            cancel: None,
        },
        call: Default::default(),
        marks: match &args.run_uid {
            Some(uid) => strata_app::marks::seeded(uid),
            None => strata_app::marks::local(&[b"plan step", doc.text.as_bytes()]),
        },
    };
    let records = args.records.as_deref();
    let outcome = project.plan_step(&request, &|dep| read_record(records, &args.step, dep))?;
    let head = format!("{} ({})", args.step, outcome.tool);
    let record = match outcome.state {
        Err(missing) => {
            eprintln!(
                "{}",
                progress::waiting_line(&args.step, &outcome.tool, &missing)
            );
            return Ok(EXIT_WAITING);
        }
        Ok(record) => record,
    };
    match record.status {
        StepStatus::Completed => eprintln!("end {head}: completed"),
        StepStatus::Skipped => eprintln!(
            "skip {head}: {}",
            strata_core::escaped(record.message().unwrap_or_default())
        ),
        StepStatus::Failed => {
            eprintln!(
                "end {head}: failed: {}",
                strata_core::escaped(record.message().unwrap_or_default())
            );
            for line in progress::tail_lines(&record) {
                eprintln!("{line}");
            }
        }
    }
    let json = record.to_json();
    if let Some(dir) = &args.output {
        write_output(dir, RECORD, &json, args.limit)?;
    }
    crate::output::print_json(&json);
    Ok(match record.status {
        StepStatus::Completed => 0,
        _ => EXIT_FAILED,
    })
}
