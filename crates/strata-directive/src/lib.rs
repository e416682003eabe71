//! Directives: Markdown files with YAML front matter that declare inputs, call tools as
//! ordered actions and fire hooks on events.
//!
//! [`Directive::load`] parses and checks everything before anything runs (unknown tools,
//! unknown hook events, malformed conditions, `${steps…}` references to the action itself or a
//! later one, template syntax errors), each error with file:line:col. [`Directive::bind_inputs`]
//! validates and types the caller's inputs. [`Directive::run`] renders stage 1 (`{input:…}`)
//! and stage 2 (`${…}`) and runs the actions through a [`strata_tools::ToolRunner`], firing hooks;
//! then, when the directive has `responses:`, it renders the first canned response whose
//! condition holds and whose fields can all be filled as the directive's reply.

mod field_origins;
mod front_matter;
mod hooks;
mod inputs;
mod load;
mod progress;
mod responses;
mod run;
#[cfg(feature = "schemas")]
mod schemas;
mod source;

pub use field_origins::FieldOrigin;
pub use front_matter::{
    ActionSpec, CandidateSpec, FrontMatter, HookSpec, InputSpec, InputType, PersonSpec,
    ResponsesSpec, StdSpec,
};
pub use hooks::{load_project_hooks, Event, BASE_CONTEXT, EVENTS};
pub use load::{tool_from_inputs, Directive, Site};
pub use progress::{Observer, Progress, Watch};
pub use responses::{Candidate, Chosen};
pub use run::{ActionOutcome, Report, RunOptions, Status};
#[cfg(feature = "schemas")]
pub use schemas::{front_matter_schema, hook_file_schema};
pub use source::Source;
