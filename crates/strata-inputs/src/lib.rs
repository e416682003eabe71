//! Layer I: `{input:key}` directive input references.
//!
//! `{input:key}` (required: kept literally, with a warning, when missing), `{input:key?}`
//! (empty when missing), `{input:key:default}` and `{input:key|default}` (the default is
//! authored text, ends at the first balanced `}` and may hold `:` and `|`). Keys match
//! `[A-Za-z0-9_]+`. `{{input:key}}` yields the literal text `{input:key}`. A reference that is
//! the whole string keeps its value's type.

mod hole;
mod syntax;

pub use syntax::InputSyntax;
