//! The shared vocabulary of strata's interpolation layers.
//!
//! A string leaf of a config is compiled into a [`syntax::Seq`]: authored literal runs,
//! constant data produced by escapes, and [`syntax::Hole`]s that layers install for their
//! placeholders. Each layer's compile pass ([`syntax::Syntax`], run by
//! [`syntax::Seq::compile`]) scans only authored runs, so text a layer substitutes is never
//! scanned again. Rendering a compiled [`Node`] tree against a [`Scope`] yields a [`Rendered`]
//! tree whose text remembers the [`Origin`] of every byte.
//!
//! Layer P's placeholders find their parameters through a [`syntax::ParamLookup`] the render
//! is given: its fixpoint over the document's own keys lives in the layer's crate.

mod chunked;
mod constant;
mod diagnostic;
pub mod drawing;
mod duration;
mod env_names;
mod field_path;
pub mod hex;
mod kind;
mod layer;
mod leaves;
mod limits;
mod node;
mod numbers;
mod origin;
mod pass;
mod render;
mod scope;
mod seconds;
pub mod secret_marks;
mod seq;
mod shown;
mod suggest;
mod text;
mod type_names;
mod value_text;
pub mod walk;

pub mod syntax {
    //! What a layer (or another front-end with a placeholder syntax) implements and uses: the
    //! compile pass over authored runs ([`Syntax`], compiling a word with [`take_word`]), the
    //! placeholder trait ([`Hole`]), the render context ([`RenderCx`]) and the lookup layer P's
    //! placeholders go through ([`ParamLookup`]). Callers that only compile and render
    //! documents need none of it.

    pub use crate::env_names::{env_name_len, env_operator_len, env_owns};
    pub use crate::pass::{lit_at, take_word, CompileCx, Found, Pos, Syntax, Word};
    pub use crate::render::{Param, ParamLookup, RenderCx};
    pub use crate::seq::{CloneHole, Hole, Lit, Part, Seq};
}

pub use chunked::Chunked;
pub use constant::Const;
pub use diagnostic::{Error, ErrorData, Location, Warning};
pub use duration::{duration_text, parse_duration, DURATION_FORMS};
pub use env_names::is_env_name;
pub use field_path::{FieldPath, PathSeg};
pub use kind::ErrorKind;
pub use layer::Layer;
pub use leaves::{for_each_leaf, string_leaves};
pub use limits::{
    limit_cap, raise_hint, work_thread, Limits, MAX_BYTES_LIMIT, MAX_COUNT_LIMIT,
    MAX_DEFAULT_DEPTH, MAX_PARAM_LINKS, SMALL_STACK_BYTES, STACK_BYTES,
};
pub use node::{Node, Rendered};
pub use numbers::{
    is_big_integer, is_integer, number_from_text, number_text_len, push_number, NUMBER_TOKEN,
};
pub use origin::Origin;
pub(crate) use render::RenderCx;
pub use scope::{
    map_get, ContextSource, Entry, EnvMap, EnvSource, EnvVar, Layers, RenderOptions, Scope,
    Undefined,
};
pub use seconds::{seconds, MAX_SECONDS};
pub(crate) use seq::{Hole, Lit, Part, Seq};
pub use seq::{Reference, Span};
pub use shown::{escaped, shown, SHOWN_CHARS};
pub use suggest::did_you_mean;
pub use text::{Mark, Text, INLINE_MARKS};
pub use type_names::{a_or_an, type_name};
pub use value_text::{json_len, push_value_text, value_text_len, value_to_text, AsText, TextForm};
