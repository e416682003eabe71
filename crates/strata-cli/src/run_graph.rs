//! `strata run` of a graph tool (`tools/graphs/<id>.yaml`): checkpoints, `--resume`,
//! progress lines, through the application layer's gate and runner.

use std::process::ExitCode;

use strata_app::{App, ExecOptions, Failure, GraphRun, GraphStart};
use strata_core::{Error, ErrorKind, Layer, RenderOptions};
use strata_graph::{new_run_id, Status};

use crate::graphs::{typed_inputs, Mode, Printer, FAILED, LIMITED};
use crate::run_args::{refuse_options, RunArgs, Target};
use crate::scope_args::split_pair;

/// Refuses the `strata run` options that do not apply to graphs, and those that do not go
/// with `--resume`.
fn check_options(args: &RunArgs) -> Result<(), Error> {
    refuse_options(args, Target::Graph)?;
    let bad = |flag: &str, hint: &str| {
        Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            format!("{flag} does not go with --resume"),
        )
        .with_hint(hint))
    };
    if args.resume.is_some() && !(args.inputs.is_empty() && args.params_json.is_none()) {
        return bad("--input", "a resumed run keeps the inputs it started with");
    }
    if args.resume.is_some() && args.run_id.is_some() {
        return bad("--run-id", "--resume names the run");
    }
    Ok(())
}

/// Runs graph `id` of `project` as `strata run` asked.
pub(crate) fn run(args: &RunArgs, project: &App, id: &str) -> ExitCode {
    match run_in(args, project, id) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => crate::outcome::report(failure, Some(project), args.shared.json),
    }
}

fn run_in(args: &RunArgs, project: &App, id: &str) -> Result<u8, Failure> {
    check_options(args)?;
    let run_id = match &args.resume {
        Some(run_id) => run_id.clone(),
        None => args.run_id.clone().unwrap_or_else(new_run_id),
    };
    // How to go on after Ctrl-C (not with --quiet, which prints only the result).
    if !args.shared.quiet {
        strata_app::on_interrupt(Some(format!(
            "strata: run {run_id} interrupted: resume it with `strata run {id} --resume {run_id}`"
        )));
    }
    let start = match &args.resume {
        Some(_) => GraphStart::Resume(run_id),
        None => GraphStart::New {
            run_id,
            typed: typed_inputs(args.params_json.as_deref())?,
            strings: args
                .inputs
                .iter()
                .map(|p| split_pair(p, "--input").map(|(k, v)| (k.to_string(), v.to_string())))
                .collect::<Result<Vec<_>, _>>()?,
        },
    };
    let run = GraphRun {
        id: id.to_string(),
        start,
        options: ExecOptions {
            render: RenderOptions::strict_if(project.settings.strict_over(args.shared.strict())),
            base_env: None,
            cancel: None,
        },
        every: project
            .settings
            .checkpoint_every_with(args.checkpoint_every),
    };
    let json = args.shared.json;
    let mode = if args.shared.quiet {
        Mode::Quiet
    } else if json {
        Mode::Json
    } else {
        Mode::Human
    };
    let outcome = project.run_graph(&run, &mut Printer(mode))?;
    if json {
        // What the run came to: the `finished` event's fields (not `{"ok": false, …}`, which
        // says strata could not run it).
        let doc = serde_json::json!({
            "run_id": outcome.run_id,
            "status": outcome.status.name(),
            "steps": outcome.steps,
            "result": outcome.result,
            "failure": outcome.failure.as_ref().map(Error::to_json),
        });
        crate::output::print_json(&doc);
    } else {
        if outcome.status == Status::Completed {
            crate::output::print_json(&outcome.result);
        } else if let (Mode::Quiet, Some(why)) = (mode, &outcome.failure) {
            eprintln!(
                "strata: run {} {}: {}",
                outcome.run_id,
                outcome.status.name(),
                strata_graph::error_line(why)
            );
        }
    }
    Ok(match outcome.status {
        Status::Completed => 0,
        Status::Limited => LIMITED,
        Status::Failed | Status::Cancelled | Status::Running => FAILED,
    })
}
