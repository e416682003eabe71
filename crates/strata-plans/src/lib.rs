//! Plans: what an LLM planner emits — an ordered list of steps, each calling one tool with
//! arguments that may refer to earlier steps' results (SPEC §5).
//!
//! [`Plan`] reads the document (JSON or YAML, a list or `{steps: [...]}`) and checks it before
//! anything runs: ids, duplicate ids, the three reference forms and the user-value form
//! ([`syntax`]), unknown steps and record fields with a did-you-mean, cycles named in plan
//! order. Each step's arguments are compiled once ([`Args`]) into a tree of constants and
//! references over the shared path type, so that resolving them ([`resolve`]) is a walk; the
//! values it copies in are data and are never scanned again. [`assess`] is the partial
//! resolution of SPEC §5.7 (states, levels, missing values) behind `strata plan resolve`;
//! [`Scheduler`] runs a plan over a [`strata_tools::ToolRunner`], each step as soon as its
//! dependencies completed, at most `jobs` at once — from a whole document or from steps that
//! arrive one by one.

pub mod checkpoint;
pub mod compile;
pub mod draw;
mod fast;
pub mod graph;
mod outline;
mod plan;
pub mod request;
mod resolve;
mod schedule;
mod state;
pub mod stream;
pub mod syntax;
mod tools;

pub use compile::Args;
pub use plan::{parse_document, Plan, Step, STEP_KEYS};
pub use request::{
    answer_line, answer_line_within, error_reply, progress, resolution, Request, Resolver,
};
pub use resolve::{
    resolve, resolve_parameters, resolve_parameters_within, resolve_within, RecordMap, Records,
    Sources,
};
pub use schedule::{Event, Observer, Outcome, Scheduler, Silent, StepPool};
pub use state::{assess, skip_reason, Assessed, Assessment, State};
pub use tools::{check_arguments, check_tools};

use strata_core::Layer;

/// The layer plan errors name.
pub const PLAN: Layer = Layer::new("plan");
