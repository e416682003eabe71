//! One `tools/call`, run on a thread of its own through the application layer: a tool, a
//! graph, a directive, a plan file, or a plan the caller wrote. What comes back is the
//! `--json` form of what ran — a tool's result, a graph's outcome, a directive's report, a
//! plan run's report — or, for a call that ran nothing, the `--json` error shape.

use serde_json::{json, Map, Value};
use strata_app::{
    App, Cancel, DirectiveCall, ExecOptions, Failure, GraphRun, GraphStart, PlanExecution,
    PlanSource, WholePlan,
};
use strata_core::{Error, ErrorKind, RenderOptions};
use strata_doc::{Document, Format};
use strata_tools::{CallOptions, StepStatus};

use crate::catalog::{Item, Kind};
use crate::progress::{GraphNotes, Notes};
use crate::Serving;

/// What a call came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    /// The text the caller reads.
    pub(crate) text: String,
    /// The structured result (a declared output, a report, the error shape).
    pub(crate) structured: Option<Value>,
    /// The call did not do what was asked.
    pub(crate) is_error: bool,
}

impl Answer {
    fn report(report: Value, ok: bool) -> Answer {
        Answer {
            text: report.to_string(),
            structured: Some(report),
            is_error: !ok,
        }
    }

    /// The answer of a call that ran nothing: the `--json` error shape.
    pub(crate) fn failure(failure: &Failure) -> Answer {
        Answer::report(failure.to_json(), false)
    }
}

/// A call to make.
pub(crate) struct Call<'a> {
    /// What it runs.
    pub(crate) item: &'a Item,
    /// The caller's arguments.
    pub(crate) args: Map<String, Value>,
    /// Stops the run when the caller cancels it.
    pub(crate) cancel: Cancel,
    /// Where its progress goes.
    pub(crate) notes: Notes,
}

/// Runs `call` in `app`; blocks until it is over.
pub(crate) fn run(app: &App, serving: &Serving, call: Call<'_>) -> Answer {
    let options = ExecOptions {
        render: RenderOptions::strict_if(serving.strict),
        base_env: None,
        cancel: Some(call.cancel.clone()),
    };
    let outcome = match &call.item.kind {
        Kind::Tool(id) => tool(app, id, call.item, &call.args, options),
        Kind::Graph(id) => graph(app, id, call.args, options, call.notes),
        Kind::Directive(path) => directive(app, path, &call.args, options, call.notes),
        Kind::PlanFile(path) => plan_arguments(&call.args, false, serving).and_then(|args| {
            let doc = crate::catalog::plan_document(app, path, &call.item.id)?;
            plan(app, doc, args, options, call.notes)
        }),
        Kind::PlanWriter => plan_arguments(&call.args, true, serving).and_then(|args| {
            let doc = written_plan(app, args.plan.as_ref())?;
            plan(app, doc, args, options, call.notes)
        }),
    };
    outcome.unwrap_or_else(|failure| Answer::failure(&failure))
}

fn tool(
    app: &App,
    id: &str,
    item: &Item,
    args: &Map<String, Value>,
    options: ExecOptions,
) -> Result<Answer, Failure> {
    let record = app.call_tool(id, args, options, &CallOptions::default())?;
    if record.status != StepStatus::Completed {
        let error = json!({
            "kind": record.error.as_ref().map_or("tool_failed", |e| e.kind.name()),
            "message": record.message().unwrap_or("the tool failed"),
        });
        return Ok(Answer::report(
            json!({"ok": false, "error": error, "record": record}),
            false,
        ));
    }
    let structured = match (&item.output, &record.result) {
        (Some(_), Value::Object(_)) => Some(record.result.clone()),
        _ => None,
    };
    let text = match &record.result {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Ok(Answer {
        text,
        structured,
        is_error: false,
    })
}

fn graph(
    app: &App,
    id: &str,
    args: Map<String, Value>,
    options: ExecOptions,
    notes: Notes,
) -> Result<Answer, Failure> {
    let run = GraphRun {
        id: id.to_string(),
        start: GraphStart::New {
            run_id: strata_runs::new_run_id(),
            typed: args,
            strings: Vec::new(),
        },
        options,
        every: app.settings.checkpoint_every_with(None),
    };
    let outcome = app.run_graph(&run, &mut GraphNotes::new(notes))?;
    let ok = outcome.status == strata_graph::Status::Completed;
    Ok(Answer::report(
        json!({
            "run_id": outcome.run_id,
            "status": outcome.status.name(),
            "steps": outcome.steps,
            "result": outcome.result,
            "failure": outcome.failure.as_ref().map(Error::to_json),
        }),
        ok,
    ))
}

fn directive(
    app: &App,
    path: &std::path::Path,
    args: &Map<String, Value>,
    options: ExecOptions,
    notes: Notes,
) -> Result<Answer, Failure> {
    let report = app.run_directive(DirectiveCall {
        path,
        inputs: args,
        dry_run: false,
        options,
        watch: strata_directive::Watch(Some(&notes)),
    })?;
    let ok = report.status == strata_directive::Status::Completed;
    Ok(Answer::report(report.to_json(), ok))
}

/// The arguments of a plan call.
struct PlanArgs {
    plan: Option<Value>,
    values: Map<String, Value>,
    jobs: usize,
}

fn plan_arguments(
    args: &Map<String, Value>,
    written: bool,
    serving: &Serving,
) -> Result<PlanArgs, Failure> {
    let known: &[&str] = if written {
        &["plan", "values", "jobs"]
    } else {
        &["values", "jobs"]
    };
    if let Some(other) = args.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(invalid(
            format!("unknown argument `{}`", strata_core::shown(other)),
            &format!("the arguments are {}", known.join(", ")),
        ));
    }
    let values = match args.get("values") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(values)) => values.clone(),
        Some(_) => {
            return Err(invalid(
                "`values` must be an object".into(),
                "user values by name: {\"PLACEHOLDER_name\": …}",
            ))
        }
    };
    let jobs = match args.get("jobs") {
        None | Some(Value::Null) => serving.jobs,
        Some(n) => {
            let n = n.as_u64().ok_or_else(|| {
                invalid(
                    "`jobs` must be a whole number".into(),
                    "from 1 to 256 steps at once",
                )
            })?;
            strata_app::settings::jobs_from(n, "`jobs`")?
        }
    };
    let plan = args.get("plan").cloned();
    if written && plan.is_none() {
        return Err(invalid(
            "no `plan` given".into(),
            "give the plan: {\"steps\": [{\"id\", \"tool\", \"arguments\"}]}",
        ));
    }
    Ok(PlanArgs { plan, values, jobs })
}

/// The plan the caller wrote, as a document: an object or a list of steps (JSON), or its
/// JSON or YAML text.
fn written_plan(app: &App, plan: Option<&Value>) -> Result<Document, Failure> {
    let (bytes, format) = match plan {
        Some(Value::String(text)) => {
            let json = text.trim_start().starts_with(['{', '[']);
            (
                text.clone().into_bytes(),
                if json { Format::Json } else { Format::Yaml },
            )
        }
        Some(value) => (value.to_string().into_bytes(), Format::Json),
        None => (Vec::new(), Format::Json),
    };
    Ok(Document::parse("<plan>", bytes, format, &app.limits)?)
}

fn plan(
    app: &App,
    doc: Document,
    args: PlanArgs,
    options: ExecOptions,
    mut notes: Notes,
) -> Result<Answer, Failure> {
    let plan = match app.load_plan(&doc) {
        Ok(plan) => plan,
        Err(errors) => {
            return Err(Failure::Document {
                errors,
                doc: Box::new(doc),
            })
        }
    };
    let run = app.start_plan_run(
        PlanSource::Whole(Box::new(WholePlan::from_document(plan, doc))),
        None,
        args.values,
    )?;
    let exec = PlanExecution {
        options,
        remote: None,
        steps: None,
        jobs: args.jobs,
        call: CallOptions::default(),
    };
    let report = run.execute(app, &exec, &mut notes)?;
    let ok = report.exit_code() == 0;
    Ok(Answer::report(report.to_json(), ok))
}

fn invalid(message: String, hint: &str) -> Failure {
    Failure::Error(crate::request_error(ErrorKind::Invalid, message, hint))
}
