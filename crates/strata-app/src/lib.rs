//! The application layer: the one place that holds strata's rules, which every front-end
//! (the command line, the Python module, the task commands of an exported workflow, the
//! importer) calls, so each refuses, limits, redacts and reports exactly alike.
//!
//! * [`App`] is an opened project: its root, its settings with their sources, its limits and
//!   its cache of compiled tools.
//! * The **gate** refuses to run what `strata check` rejects, for every error it finds. Every
//!   operation that runs or exports something admits inside itself, so no front-end calls
//!   it or can forget it; it costs one `stat` per file of the tool's chain on a hit.
//! * [`Runner`] is the only [`ToolRunner`](strata_tools::ToolRunner) that starts real
//!   processes: directives, graphs, plans, hooks and the bindings all run tools through it.
//! * Operations ([`App::run_tool`], [`App::prepare_tool`], [`App::plan_step`],
//!   [`App::dry_run_plan`], [`App::start_plan_run`] and [`App::resume_plan_run`] for a
//!   recorded run, [`App::graph_walk`], [`App::walk_part`] and [`App::run_graph_in_parts`]
//!   for a walk in parts, [`App::export_argo`], [`respond`] for a canned response with or
//!   without a project, …) return typed results and a typed [`Failure`].
//! * What a run sends off this machine (Ray workers, an Argo workflow) holds no secret value,
//!   by one rule ([`RunSecrets`]); a run sent to Ray workers is checked by [`App::scale_out`],
//!   and has a working directory of its own on each node ([`RunSlots`]).
//! * Secrets a tool prints become markers minted under the run's key ([`marks`]), which only
//!   strata holds, derived from the user's key ([`keys`]): caller text is never a secret.
//!
//! A new front-end is one crate that parses its input, calls these operations and prints
//! what they return.

mod app;
mod directive;
mod directive_record;
mod event_log;
mod export;
mod failure;
mod gate;
pub mod gate_cache;
mod graph;
pub mod keys;
pub mod marks;
mod plan;
mod plan_record;
pub mod progress;
mod read_only;
mod respond;
mod run_slots;
mod runner;
mod scale_out;
pub use strata_core::secret_marks;
pub mod secrets;
mod tool;
pub mod tool_batch;
pub mod tree_copy;
mod walk;

pub use app::{ambient_settings, App};
pub use directive::DirectiveCall;
pub use directive_record::{DIRECTIVE_FILE, DIRECTIVE_KIND};
pub use event_log::redact as redact_secrets;
pub use export::{ArgoExport, Exported};
pub use failure::{error_json, Failure, Refusal, EXIT_FAILED, EXIT_STRATA, EXIT_WAITING};
pub use graph::{GraphRun, GraphStart, GRAPH_FILE};
pub use plan::{called_tools, AdmittedPlan, StepOutcome, StepPlan, StepRequest};
pub use plan_record::{
    plan_fingerprint, PlanExecution, PlanRunReport, PlanSource, RecordedPlanRun, StepInput,
    WholePlan, STDIN_PLAN,
};
pub use respond::{respond, Reply, RespondFailure, RespondRequest};
pub use run_slots::{LeftSlot, RunSlots, SPARES};
pub use runner::{RemoteTools, Runner};
pub use scale_out::{RunSecrets, ScaleOut, SHORTEST_SECRET};
pub use tool::ToolRun;
pub use walk::GraphWalk;

pub use strata_check::{
    directive_inputs, graph_state, plan_step_waits, plan_steps, prompt_key_sites, prompt_key_uses,
    prompt_keys_at, state_key_sites, step_id_site, step_result_paths, tool_names, Code, Diagnostic,
    Known, ProjectIndex, PromptKeySite, PromptKeyUse, Report, Severity, Shown, Target, ToolNames,
};
pub use strata_directive::{Event as DirectiveEvent, BASE_CONTEXT as DIRECTIVE_CONTEXT};
pub use strata_exec::Cancel;
pub use strata_exec::{install_interrupt_handler, on_interrupt, own_process, SpawnSpec};
pub use strata_project::{
    as_literal, dry_run_json, normal, settings, tool_outputs, tool_parameters, tool_scale,
    CacheStats, CallerParams, ExecOptions, Invocation, Prepared, Project, Settings, ToolChain,
    ToolEntry,
};
pub use strata_tools::params::KEYWORDS as PARAMETER_KEYWORDS;
