//! `strata run directives/<name>.md`: a directive's inputs, prompt, actions and hooks.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{Map, Value};
use strata_app::{App, DirectiveCall};
use strata_core::RenderOptions;
use strata_directive::{ActionOutcome, Report, Status, Watch};
use strata_tools::{StepRecord, StepStatus};

use crate::outcome::{open_project_as, print_error, report};
use crate::progress::Mode;
use crate::run_args::RunArgs;
use crate::run_args::{refuse_options, Target};
use crate::scope_args::split_pair;
use strata_app::Failure;

/// Exit code of a directive stopped by a limit.
const LIMITED: u8 = 3;

/// What `strata run` was asked to do with a directive.
pub(crate) struct DirectiveRequest<'a> {
    /// The directive file.
    pub(crate) path: &'a Path,
    /// `--input K=V` pairs.
    pub(crate) inputs: &'a [String],
    /// `--json`.
    pub(crate) json: bool,
    /// `--dry-run`.
    pub(crate) dry_run: bool,
    /// `--strict`.
    pub(crate) strict: bool,
    /// How progress is shown (`--json`, `--quiet`).
    pub(crate) progress: Mode,
}

/// `strata run <file>.md`: finds the project, runs the directive, prints errors.
pub(crate) fn run_cli(args: &RunArgs) -> ExitCode {
    let path = Path::new(&args.tool);
    let project = match open_project_as(None, Some(path), args.shared.json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Err(e) = refuse_options(args, Target::Directive) {
        return report(Failure::Error(e), Some(&project), args.shared.json);
    }
    let req = DirectiveRequest {
        path,
        inputs: &args.inputs,
        json: args.shared.json,
        dry_run: args.dry_run,
        strict: project.settings.strict_over(args.shared.strict()),
        progress: Mode::of(args.shared.json, args.shared.quiet),
    };
    run(&project, &req).unwrap_or_else(|f| report(f, Some(&project), args.shared.json))
}

/// Runs a directive through the application layer and prints its report; errors are
/// returned for the caller to print.
pub(crate) fn run(project: &App, req: &DirectiveRequest<'_>) -> Result<ExitCode, Failure> {
    let mut given = Map::new();
    for pair in req.inputs {
        let (k, v) = split_pair(pair, "--input")?;
        given.insert(k.to_string(), Value::String(v.to_string()));
    }
    let report = project.run_directive(DirectiveCall {
        path: req.path,
        inputs: &given,
        dry_run: req.dry_run,
        options: strata_app::ExecOptions {
            render: RenderOptions::strict_if(req.strict),
            base_env: None,
            cancel: None,
        },
        watch: Watch(Some(&req.progress)),
    })?;
    if req.json {
        crate::output::print_json(&report.to_json());
    } else {
        crate::output::print(human(&report));
    }
    for w in &report.warnings {
        eprintln!("warning[{}]: {} ({})", w.layer, w.message, w.path);
    }
    if let Some(Err(e)) = &report.response {
        print_error(e, Some(project));
        return Ok(ExitCode::FAILURE);
    }
    Ok(match report.status {
        Status::Completed | Status::DryRun => ExitCode::SUCCESS,
        Status::Failed => ExitCode::FAILURE,
        Status::Limited => ExitCode::from(LIMITED),
    })
}

/// What an action returned, as text: its result's text form (compact JSON for data).
fn output_of(outcome: &ActionOutcome) -> String {
    outcome
        .record
        .as_ref()
        .map(|r| strata_core::value_to_text(&r.result))
        .unwrap_or_default()
}

/// The report for people: prompt, each action's outcome with its output, hooks that fired.
/// Tool text (outputs, stderr tails, messages) is shown with its control characters escaped
/// ([`strata_core::escaped`]), as every printer of tool text shows it.
pub(crate) fn human(report: &Report) -> String {
    use strata_core::escaped;
    let mut out = format!("directive {}: {}\n", report.directive, report.status.name());
    if let Some(why) = &report.stopped {
        out.push_str(&format!("stopped: {}\n", escaped(why)));
    }
    out.push_str("\n--- prompt ---\n");
    out.push_str(&report.prompt);
    if !report.prompt.is_empty() && !report.prompt.ends_with('\n') {
        out.push('\n');
    }
    if !report.actions.is_empty() {
        out.push_str("\n--- actions ---\n");
    }
    for a in &report.actions {
        out.push_str(&format!("[{}] {} ({})", a.status, a.id, a.tool));
        if let Some(e) = a.error() {
            out.push_str(&format!(": {}", escaped(e)));
        }
        out.push('\n');
        if a.status == "dry run" {
            out.push_str(&format!("    params: {}\n", a.params));
        }
        for line in output_of(a).lines() {
            out.push_str(&format!("    | {}\n", escaped(line)));
        }
        let tail = a.record.as_ref().filter(|r| r.status == StepStatus::Failed);
        for line in tail
            .and_then(StepRecord::stderr_tail)
            .iter()
            .flat_map(|t| t.lines())
        {
            out.push_str(&format!("    ! {}\n", escaped(line)));
        }
    }
    if !report.hooks.is_empty() {
        out.push_str("\n--- hooks ---\n");
    }
    for h in &report.hooks {
        out.push_str(&format!(
            "[{}] {} on {} ({})",
            h.status, h.id, h.event, h.tool
        ));
        if let Some(e) = &h.error {
            out.push_str(&format!(": {}", escaped(&e.to_string())));
        }
        out.push('\n');
    }
    if let Some(Ok(chosen)) = &report.response {
        out.push_str(&format!(
            "\n--- reply ({}) ---\n{}",
            chosen.name(),
            chosen.reply.text
        ));
        if !chosen.reply.text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}
