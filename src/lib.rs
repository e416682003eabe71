//! strata: layered interpolation of tool-execution configs.
//!
//! This facade re-exports the layer crates and the pipeline; the `strata` binary is built
//! from the same package.

pub use strata_context as context;
pub use strata_core as core;
pub use strata_env as env;
pub use strata_inputs as inputs;
pub use strata_params as params;
pub use strata_pipeline as pipeline;
