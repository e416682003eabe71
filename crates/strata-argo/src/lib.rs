//! Argo Workflows: plans and graphs exported as Workflow manifests whose tasks run strata
//! itself, one step (or node) per task, and the offline check of any Workflow manifest.
//!
//! [`check::check`] validates a manifest against Argo's JSON Schema (embedded) and the rules
//! the schema cannot say. [`names`] maps step and node ids to Argo names and checks the
//! names a user gives.

pub mod check;
pub mod names;

use strata_core::Layer;

/// The layer the export's errors name.
pub const ARGO: Layer = Layer::new("argo");
