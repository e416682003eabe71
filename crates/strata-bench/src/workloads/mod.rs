//! The workloads, one module each, and the registry `main` runs them from.

pub mod batch;
pub mod check;
pub mod config;
pub mod context;
pub mod env_text;
pub mod event_log;
pub mod exec;
pub mod gate;
pub mod graph;
pub mod linear;
pub mod locate;
pub mod lsp;
pub mod mcp;
pub mod memory;
pub mod plans;
pub mod prompts;
pub mod responses;
pub mod scaling;
pub mod text;
pub mod throughput;

use crate::harness::Settings;
use crate::report::Report;

/// A workload group: its name (for `--only`) and the function that measures it.
pub type Group = (&'static str, fn(&Settings, &mut Report));

/// Every group, in the order they run.
pub const GROUPS: &[Group] = &[
    ("config_compile", config::run_compile),
    ("config_render", config::run_render),
    ("context", context::run),
    ("throughput", throughput::run),
    ("scaling", scaling::run),
    ("exec_run", exec::run_chain),
    ("exec_step", exec::run_step_prepare),
    ("exec_tree", exec::run_tree),
    ("cli_run", exec::run_cli),
    ("batch", batch::run),
    ("mcp", mcp::run),
    ("check", check::run),
    ("graph", graph::run),
    ("gate", gate::run),
    ("prompts", prompts::run),
    ("responses", responses::run),
    ("plan_resolve", plans::run_resolve),
    ("plan_load", plans::run_load),
    ("plan_fan_in", plans::run_fan_in),
    ("plan_fanout", plans::run_fanout),
    ("linear", linear::run),
    ("locate", locate::run),
    ("memory", memory::run),
    ("env_text", env_text::run),
    ("event_log", event_log::run),
    ("lsp", lsp::run),
];
