//! strata: layered interpolation of tool-execution configs.
//!
//! This facade re-exports the layer crates and the pipeline; the `strata` binary is built
//! from the same package.
//!
//! Compile a document once for a chain of layers, then render it against any number of
//! scopes. The result borrows the template's constants and the scope's whole values;
//! `into_json` (or `into_owned`) detaches it.
//!
//! ```
//! use serde_json::{json, Map, Value};
//! use strata::core::{EnvMap, Limits, RenderOptions, Scope};
//! use strata::pipeline::{Chain, Template};
//!
//! let config = json!({
//!     "command": "{python}",
//!     "python": "${PYTHON:-python3}",
//!     "args": ["-m", "ruff", "{input:target}"],
//!     "cwd": "${state.workspace}",
//! });
//! let template = Template::compile(&config, &Chain::full(), &Limits::default())?;
//!
//! let env: EnvMap = [("PYTHON", "/usr/bin/python3")].into_iter().collect();
//! let context = json!({"state": {"workspace": "/srv/app"}});
//! let inputs: Map<String, Value> = [("target".to_string(), json!("src/"))].into_iter().collect();
//! let scope = Scope { env: &env, context: &context, inputs: &inputs, ..Scope::default() };
//!
//! let out = template.render(&scope, &RenderOptions::STRICT)?;
//! assert!(out.warnings.is_empty());
//! assert_eq!(
//!     out.value.into_json(),
//!     json!({
//!         "command": "/usr/bin/python3",
//!         "python": "/usr/bin/python3",
//!         "args": ["-m", "ruff", "src/"],
//!         "cwd": "/srv/app",
//!     })
//! );
//! # Ok::<(), strata::core::Error>(())
//! ```

pub use strata_context as context;
pub use strata_core as core;
pub use strata_env as env;
pub use strata_inputs as inputs;
pub use strata_params as params;
pub use strata_pipeline as pipeline;
