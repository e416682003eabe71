//! What `strata run` runs — a tool, a directive or a graph — and the options that apply to
//! each: an option given to a target it does not apply to is an error with a hint, never
//! silently ignored.

use strata_core::{Error, ErrorKind, Layer};

use crate::run::RunArgs;

/// What `strata run` was pointed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
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
const QUIET: Applies = Applies {
    flag: "--quiet",
    to: &[Target::Directive, Target::Graph],
    hint: "a tool prints nothing but its own output (and a line when it fails)",
};

/// Refuses every option of `args` that does not apply to `target`.
pub fn refuse_options(args: &RunArgs, target: Target) -> Result<(), Error> {
    let given = [
        (PARAM, !args.params.is_empty()),
        (PARAMS_JSON, args.params_json.is_some()),
        (INPUT, !args.inputs.is_empty()),
        (DRY_RUN, args.dry_run),
        (EXPLAIN, args.explain),
        (RESUME, args.resume.is_some()),
        (RUN_ID, args.run_id.is_some()),
        (QUIET, args.quiet),
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
