//! Layer C: `${path}` context interpolation.
//!
//! Paths walk JSON data only: dotted keys, `[n]` and `.n` indexes (negative from the end),
//! quoted keys (`["a b"]`), and `??` fallbacks to another path or a JSON literal. Whitespace
//! inside the braces is ignored. A placeholder that is the whole string keeps its value's type.
//! Inside the braces a small typed expression language is accepted: literals, `c ? a : b`,
//! `??`, `== != < <= > >=`, `&& || !`, `+ - * / %` and prefix `- +` (integer arithmetic
//! stays integer, overflow is an error), `+` on strings, `in`, parentheses and the functions
//! of [`Func`]. Types are strict; what can be known at compile time is checked then.
//! `${NAME}` with an upper-case name belongs to layer E and is left alone.

pub mod condition;
mod eval;
mod expr;
mod functions;
mod hole;
mod lexer;
mod syntax;
mod typing;
mod when;

pub use eval::{eval_bool, eval_value};
pub use expr::{parse_expr, BinOp, Expr, Path, Seg, UnOp};
pub use functions::{Func, MAX_JOIN_BYTES, MAX_PATTERN_BYTES, REGEX_SIZE_LIMIT};
pub use strata_core::walk::{resolve, Miss};
pub use syntax::ContextSyntax;
pub use when::{When, WhenError};
