//! Layer C: `${path}` context interpolation.
//!
//! Paths walk JSON data only: dotted keys, `[n]` and `.n` indexes (negative from the end),
//! quoted keys (`["a b"]`), and `??` fallbacks to another path or a JSON literal. Whitespace
//! inside the braces is ignored. A placeholder that is the whole string keeps its value's type.
//! `${NAME}` with an upper-case name belongs to layer E and is left alone.

pub mod condition;
mod eval;
mod expr;
mod hole;
mod syntax;

pub use eval::{resolve, Miss};
pub use expr::{parse_expr, Expr, Path, Seg};
pub use syntax::ContextSyntax;
