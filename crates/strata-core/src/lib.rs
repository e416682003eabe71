//! The shared vocabulary of strata's interpolation layers.
//!
//! A string leaf of a config is compiled into a [`Seq`]: authored literal runs ([`Lit`]),
//! constant data produced by escapes, and [`Hole`]s that layers install for their
//! placeholders. Each layer's compile pass ([`run_pass`]) scans only authored runs, so text a
//! layer substitutes is never scanned again. Rendering a compiled [`Node`] tree against a
//! [`Scope`] yields a [`Rendered`] tree whose text remembers the [`Origin`] of every byte.

mod diagnostic;
mod env_names;
mod field_path;
mod kind;
mod layer;
mod leaves;
mod limits;
mod node;
mod origin;
mod pass;
mod render;
mod scope;
mod seq;
mod suggest;
mod text;
mod value_text;
pub mod walk;

pub use diagnostic::{Error, ErrorInfo, Location, Warning};
pub use env_names::{env_name_len, env_operator_len, env_owns};
pub use field_path::{FieldPath, PathSeg};
pub use kind::ErrorKind;
pub use layer::Layer;
pub use leaves::{for_each_leaf, string_leaves};
pub use limits::Limits;
pub use node::{Node, Rendered};
pub use origin::Origin;
pub use pass::{balanced_close, run_pass, take_range, CompileCx, Found, Pos, Syntax};
pub use render::{Param, RenderCx};
pub use scope::{
    map_get, ContextSource, Entry, EnvMap, EnvSource, EnvVar, Layers, OwnedScope, RenderOptions,
    Scope, Undefined,
};
pub use seq::{Hole, Lit, Part, Reference, Seq, Span};
pub use suggest::did_you_mean;
pub use text::{Mark, Text, INLINE_MARKS};
pub use value_text::{push_value_text, value_to_text};
