//! Layer P: `{name}` runtime parameters.
//!
//! Names match `[A-Za-z_][A-Za-z0-9_]*` and must not follow a `$`. `{{name}}` yields the
//! literal text `{name}`; everything else in braces (`{}`, `{ x }`, `{a.b}`, `{input:k}`) is
//! literal text. Parameters come from runtime parameters, the document's own top-level keys
//! (followed to a fixpoint, see [`Fixpoint`]) and the caller's parameters. An unknown name is
//! left as it is.
//!
//! The layer whole: [`ParamSyntax`] compiles `{name}` into placeholders; [`Fixpoint`] renders
//! a compiled document, giving those placeholders their parameters (through
//! [`strata_core::syntax::ParamLookup`]) and following config keys to a fixpoint.

mod fixpoint;
mod hole;
mod syntax;

pub use fixpoint::{Compiled, EachEntry, Fixpoint};
pub use syntax::ParamSyntax;

/// The length of the parameter name at the start of `bytes` (0 when none).
pub fn name_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(&b) if b.is_ascii_alphabetic() || b == b'_' => {
            1 + bytes[1..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count()
        }
        _ => 0,
    }
}
