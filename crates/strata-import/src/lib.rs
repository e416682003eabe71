//! `strata import ryeos`: reads a RyeOS project's `.ai/` tree (both eras, detected per file)
//! and writes a new strata project with an import report (`../shared/ryeos/MAPPING.md` of
//! the specification is mirrored in docs/import.md).
//!
//! Each converter is a pure function from one RyeOS file's text to a [`FileImport`]: what to
//! write, the rewrites made, the warnings with their codes and positions, or the reason of a
//! refusal. The driver walks the tree, resolves ids across spaces, writes the files and
//! checks the new project through the application layer.

mod code;
mod directive;
mod driver;
mod graph;
mod header;
mod hook;
mod model;
mod position;
mod pylit;
mod report;
mod schema;
mod sealed;
mod target;
mod tool;
mod util;
mod yaml;

pub use code::{executor_of, import_code};
pub use directive::import_directive;
pub use driver::{import_ryeos, Era, ImportOptions, ItemKind};
pub use graph::import_graph;
pub use hook::import_hooks;
pub use model::{Catalog, FileImport, Outcome, Refusal, Warning, Written};
pub use report::{CheckSummary, Entry, ImportReport, Notice};
pub use tool::{import_runtime_descriptor, import_tool, ToolContext};
