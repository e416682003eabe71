//! Prompt templates with hierarchical fallback (SPEC §6, seed 002's TemplateManager).
//!
//! Templates live in a project's `prompts/` tree (`prompts/<root space>/…/<type>/<name>
//! [.<version>].<ext>`, or YAML/JSON dicts of the same nesting), are compiled once with
//! minijinja the strata way ([`strata_jinja`]), and are chosen by key: `R/T/K.V, R/T/K,
//! R/T/D.V, R/T/D`, then each ancestor of the root space `R`, then `T/…`, then `D.V, D`,
//! then the configured default template. A render merges predefined variables, the feed
//! and knowledge, sees its namespace's components (rendered with the same feed), yields
//! every variant of its versioned components, and reports undefined variables.
//!
//! ```
//! use serde_json::json;
//! use strata_prompts::{Call, Overrides, PromptManager};
//!
//! let templates = json!({
//!     "main": {
//!         "default": "You are a helpful assistant.\n\nUser: {{ user_input }}",
//!         "BrowseLink": "You navigated to {{ context }}.\n\nUser: {{ user_input }}",
//!     },
//!     "reflection": {"default": "Review your previous actions.\n{{ user_input }}"},
//! });
//! let prompts = PromptManager::builder().dict(&templates, "templates").build()?;
//! let feed = json!({"user_input": "Hi", "context": "example.org"});
//! let feed = feed.as_object().unwrap();
//!
//! let out = prompts.render(&Call::key("BrowseLink").feed(feed))?;
//! assert_eq!(out.template, "main/BrowseLink");
//! assert_eq!(out.text(), Some("You navigated to example.org.\n\nUser: Hi"));
//!
//! // `switch` returns a new manager; `prompts` keeps its settings.
//! let reflect = prompts.switch(&Overrides {
//!     type_: Some("reflection".into()),
//!     ..Overrides::default()
//! })?;
//! let out = reflect.render(&Call::key("BrowseLink").feed(feed))?;
//! assert_eq!(out.template, "reflection/default");
//! assert_eq!(prompts.resolve(Some("BrowseLink"))?, Some("main/BrowseLink"));
//! # Ok::<(), strata_core::Error>(())
//! ```

mod context;
mod explain;
mod feed;
mod load;
mod lookup;
mod manager;
mod names;
mod place;
mod render;
mod scan;
mod store;

pub use explain::{Candidate, Explain, UnknownKey, Variable};
pub use feed::{feed_name, Merge};
pub use load::{COMPONENTS, DICT_EXTENSIONS, TEMPLATE_EXTENSIONS};
pub use lookup::{Overrides, Settings};
pub use manager::{Builder, Loaded, Namespace, PromptManager, TemplateInfo, PROMPTS_DIR};
pub use place::Place;
pub use render::{Call, Rendered, Variant};
pub use store::PromptLimits;

/// The layer prompt errors and warnings name.
pub const LAYER: strata_core::Layer = strata_core::Layer::new("prompt");
