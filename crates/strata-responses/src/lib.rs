//! Canned responses (SPEC §7): authored Jinja templates whose fields are filled from three
//! sources in order, then rendered with minijinja (the shared [`strata_jinja`] setup:
//! values print as layer C prints them, no auto-escaping, fuel always on).
//!
//! 1. `std.*` — the caller's standard fields: `std.customer.name`, `std.agent.name`,
//!    `std.variables.<name>`, `std.missing_params`;
//! 2. tool fields — the `canned_response_fields` object of tool results, in the order the
//!    tools ran; a field is the whole dotted name as written, looked up first as a flat key
//!    (`{"account.balance": …}`) then as a nested path, the latest result winning;
//! 3. `generative.*` — a generator ([`Generate`]: a generator tool, [`Generator`], or a
//!    library caller's function), called last, only for the fields the render needs, and
//!    only once no other field the render needs is missing.
//!
//! The fields a response *may* read are found statically ([`Response::fields`], what
//! `strata check` lists). The fields a render *needs* are those it actually reads, found by
//! trial renders ([`Response::extract`]): a field read only in a branch not taken, or only
//! tested with `is defined` / `is undefined` / `default(…)`, is optional. A needed field that
//! no source provides is an error naming every such field and the sources tried
//! ([`strata_core::ErrorKind::MissingFields`]); nothing is rendered half-filled. Field values
//! are data: they are printed, never rendered again. A field whose value holds a secret is
//! refused, and traces show it as `***`.
//!
//! ```
//! use serde_json::json;
//! use strata_responses::{Place, Response, Sources, ToolResult};
//!
//! let response = Response::compile(
//!     "Your {{account.type}} account (ending in {{account.last_four}}) has a current balance of {{account.balance}}.",
//!     None,
//!     Default::default(),
//! ).unwrap();
//! let result = json!({"data": {"balance": 5432.10},
//!     "canned_response_fields": {"account.balance": "$5,432.10", "account.type": "Checking", "account.last_four": "1234"}});
//! let tools = [ToolResult::of("check_balance", &result, Place::Nowhere).unwrap().unwrap()];
//! let sources = Sources { std: &json!({}), std_place: Place::Nowhere, tools: &tools, generator: None, secrets: &[] };
//! let reply = response.respond(&sources).unwrap();
//! assert_eq!(reply.text, "Your Checking account (ending in 1234) has a current balance of $5,432.10.");
//! ```

mod extract;
mod generator;
pub mod names;
mod sources;
mod template;

pub use extract::{Extraction, Field, FieldSource, Missing, Reply, Sources};
pub use generator::{failed as generator_failed, Generate, Generator};
pub use sources::{check_std, std_field, tool_field, Hit, Place, ToolResult, FIELDS_KEY};
pub use strata_jinja::JinjaLimits;
pub use template::Response;

use strata_core::Layer;

/// The layer of canned-response errors.
pub const RESPONSE: Layer = Layer::new("response");
