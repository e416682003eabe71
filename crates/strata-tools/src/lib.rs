//! The tool model every strata front-end shares.
//!
//! Directives, graphs, plans and canned responses all call tools; they do it through one
//! [`ToolRunner`] (the CLI backs it with real subprocesses, tests with fakes), get one
//! [`RunResult`] back, and remember each call as one [`StepRecord`] —
//! `{id, status, result, error, run}` — so that `${steps.count.result.words}` in a directive,
//! `result.words` in a graph and `{{count.result.words}}` in a plan name the same value.
//! Tool parameters are checked against the JSON Schema subset of [`params`].

mod fake;
mod hooks;
pub mod params;
mod record;
pub mod response_fields;
mod result;
mod runner;
pub mod scale;
pub mod ser;

pub use fake::FakeTools;
pub use hooks::{
    fire, params_path, parse_hook, parse_hooks, Firing, Hook, HookCall, HookEvent, HookFormat,
    HookSource, HOOK_ACTION_KEYS, HOOK_KEYS,
};
pub use params::{
    check, check_known, check_schema, check_schema_of, coerce, coerce_given, parse_as, summary,
    validate, Given, SchemaError,
};
pub use record::{stderr_tail, StepError, StepRecord, StepStatus, RECORD_FIELDS};
pub use result::RunResult;
pub use runner::{wait_to_retry, CallOptions, ToolRunner, CANCEL_POLL};
pub use scale::{Resources, Retries, Scale};
/// The type vocabulary of messages lives in `strata_core` (JSON Schema's names); re-exported
/// for the front-ends that reach it through the tool model.
pub use strata_core::{a_or_an, type_name};
