//! The application layer: the one place that holds strata's rules, which every front-end
//! (the command line, the Python module, the task commands of an exported workflow, the
//! importer) calls, so each refuses, limits, redacts and reports exactly alike.
//!
//! * [`App`] is an opened project: its root, its settings with their sources, its limits and
//!   its cache of compiled tools.
//! * The **gate** ([`App::admit`]) refuses to run what `strata check` rejects; it runs before
//!   every tool call, whoever makes it, and costs one `stat` per file of the tool's chain on a
//!   hit.
//! * [`Runner`] is the only [`ToolRunner`](strata_tools::ToolRunner) that starts real
//!   processes: directives, graphs, plans, hooks and the bindings all run tools through it.
//! * Operations ([`App::run_tool`], [`App::prepare_tool`], [`App::plan_step`],
//!   [`App::run_plan`], …) return typed results and a typed [`Failure`].
//!
//! A new front-end is one crate that parses its input, calls these operations and prints
//! what they return.

mod app;
mod failure;
mod gate;
mod graph;
mod plan;
mod runner;
pub mod secrets;
mod tool;

pub use app::{ambient_settings, App};
pub use failure::{error_json, Failure, Refusal, EXIT_FAILED, EXIT_STRATA, EXIT_WAITING};
pub use graph::{GraphRun, GraphStart};
pub use plan::{called_tools, PlanRun, StepOutcome, StepRequest};
pub use runner::Runner;
pub use tool::ToolRun;

pub use strata_check::{Code, Diagnostic, Report, Severity, Target};
pub use strata_exec::{install_interrupt_handler, install_interrupt_handler_on_spawn, SpawnSpec};
pub use strata_project::{
    as_literal, dry_run_json, settings, CacheStats, CallerParams, ExecOptions, Invocation,
    Prepared, Project, Settings, ToolChain, ToolEntry,
};
