//! The options of `strata run` (a tool, a directive or a graph), which of them apply to
//! each kind of target, and caller parameters from `-p`/`--params-json`.

use std::path::Path;

use clap::Args;
use strata_app::CallerParams;
use strata_core::{Error, ErrorKind, Layer};
use strata_runs::CheckpointEvery;

use crate::scope_args::{params_json, split_pair};
use crate::shared_args::SharedArgs;

/// What `strata run` was pointed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A tool (a subprocess).
    Tool,
    /// A directive (`.md`).
    Directive,
    /// A graph tool.
    Graph,
}

impl Target {
    /// The plural name in messages.
    fn plural(self) -> &'static str {
        match self {
            Target::Tool => "tools",
            Target::Directive => "directives",
            Target::Graph => "graphs",
        }
    }
}

/// One option of `strata run`: its flag, the targets it applies to, and what to do instead.
struct Applies {
    flag: &'static str,
    to: &'static [Target],
    hint: &'static str,
}

const PARAM: Applies = Applies {
    flag: "--param",
    to: &[Target::Tool],
    hint: "-p K=V sets a tool's parameters; directives and graphs take --input K=V",
};
const PARAMS_JSON: Applies = Applies {
    flag: "--params-json",
    to: &[Target::Tool, Target::Graph],
    hint: "--params-json sets a tool's parameters or a graph's typed inputs; directives take --input K=V",
};
const INPUT: Applies = Applies {
    flag: "--input",
    to: &[Target::Directive, Target::Graph],
    hint: "--input sets the inputs of a directive or a graph; a tool takes -p K=V",
};
const DRY_RUN: Applies = Applies {
    flag: "--dry-run",
    to: &[Target::Tool, Target::Directive],
    hint: "`strata graph <id>` draws a graph without running it",
};
const EXPLAIN: Applies = Applies {
    flag: "--explain",
    to: &[Target::Tool],
    hint: "`strata explain <file>` shows a tool or a directive after every stage; `strata graph <id>` draws a graph",
};
const RESUME: Applies = Applies {
    flag: "--resume",
    to: &[Target::Graph],
    hint: "only graph runs keep checkpoints here; `strata plan run --resume` continues a plan",
};
const RUN_ID: Applies = Applies {
    flag: "--run-id",
    to: &[Target::Graph],
    hint: "only graph runs are stored here; `strata plan run --run-id` names a plan's run",
};

/// Refuses every option of `args` that does not apply to `target`.
pub(crate) fn refuse_options(args: &RunArgs, target: Target) -> Result<(), Error> {
    let given = [
        (PARAM, !args.params.is_empty()),
        (PARAMS_JSON, args.params_json.is_some()),
        (INPUT, !args.inputs.is_empty()),
        (DRY_RUN, args.dry_run),
        (EXPLAIN, args.explain),
        (RESUME, args.resume.is_some()),
        (RUN_ID, args.run_id.is_some()),
    ];
    match given
        .iter()
        .find(|(option, set)| *set && !option.to.contains(&target))
    {
        Some((option, _)) => Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            format!("{} does not apply to {}", option.flag, target.plural()),
        )
        .with_hint(option.hint)),
        None => Ok(()),
    }
}

/// Options of `strata run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Tool id (`examples/echo`) or tool file (`tools/examples/echo.yaml`), graph id
    /// (`graphs/words`, or `words`) or directive (`directives/greet.md`)
    #[arg(add = crate::complete::runnables(), required_unless_present = "batch", default_value = "", hide_default_value = true)]
    pub(crate) tool: String,
    /// Set a caller parameter; typed by the tool's parameter schema (repeatable)
    #[arg(long = "param", short = 'p', value_name = "K=V", add = crate::complete::param_names())]
    pub(crate) params: Vec<String>,
    /// Caller parameters as a JSON object; -p entries win over it
    #[arg(long, value_name = "JSON")]
    pub(crate) params_json: Option<String>,
    /// Print the fully resolved spawn spec (secrets as ***) without running the tool
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Print every config field after each of stages 3–6 and the spawn spec; does not run
    #[arg(long)]
    pub(crate) explain: bool,
    /// Set a directive or graph input, typed by its declaration (repeatable)
    #[arg(long = "input", value_name = "K=V", add = crate::complete::input_names())]
    pub(crate) inputs: Vec<String>,
    /// Graphs: continue the run with this id from its last checkpoint
    #[arg(long, value_name = "RUN_ID", add = crate::complete::run_ids())]
    pub(crate) resume: Option<String>,
    /// Graphs: the id of the new run (default: date, time and a random suffix)
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) run_id: Option<String>,
    /// Graphs: write the synced checkpoint every N steps (a bare number: 1000) or every
    /// duration (greater than 0, at most a week: a number and a unit, ms, s, m, h, d or w —
    /// 500ms, 2s, 1.5s, 5m, 1h) instead of after every step; a killed run then resumes from the
    /// last one written
    #[arg(long, value_name = "N|DURATION", value_parser = CheckpointEvery::parse)]
    pub(crate) checkpoint_every: Option<CheckpointEvery>,
    /// Run tools for JSON Lines requests on standard input (`{"tool": …, "params": {…}}`),
    /// one reply line per request with the step record of its run (see docs/batch.md)
    #[arg(long, conflicts_with_all = ["tool", "params", "params_json", "dry_run", "explain", "inputs", "resume", "run_id", "checkpoint_every"])]
    pub(crate) batch: bool,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// True when `arg` names a tool file rather than a tool id.
pub(crate) fn looks_like_path(arg: &str) -> bool {
    arg.ends_with(".yaml") || arg.ends_with(".yml") || Path::new(arg).is_file()
}

/// Caller parameters from `--params-json` and `-p K=V` pairs (the pairs win).
pub(crate) fn caller_params_from(
    json: Option<&str>,
    pairs: &[String],
) -> Result<CallerParams, Error> {
    let typed = params_json(json)?;
    let strings = pairs
        .iter()
        .map(|p| split_pair(p, "--param").map(|(k, v)| (k.to_string(), v.to_string())))
        .collect::<Result<_, _>>()?;
    Ok(CallerParams { typed, strings })
}
