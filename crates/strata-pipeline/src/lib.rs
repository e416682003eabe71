//! The pipeline: chains the four layers in the order of SPEC §2 over a compiled JSON/YAML tree.
//!
//! A document is compiled once per [`Chain`] into a [`Template`] (every string leaf parsed
//! by every layer of the chain, each scanning only authored text) and rendered many times
//! against different [`strata_core::Scope`]s. [`explain`] renders after every stage;
//! [`batch`] serves the JSON Lines protocol of `strata render --batch`.

pub mod batch;
mod chain;
mod entries;
pub mod env_text;
mod explain;
mod template;

pub use chain::Chain;
pub use explain::{explain, StageOutput};
pub use template::{Output, Template};
