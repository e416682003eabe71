//! Layer E: `${NAME}` environment expansion with Docker Compose's operators.
//!
//! `${NAME}`, `${NAME:-word}`, `${NAME-word}`, `${NAME:?msg}`, `${NAME?msg}`, `${NAME:+word}`
//! and `${NAME+word}`. Names match `[A-Z_][A-Z0-9_]*`; anything else inside `${…}` belongs to
//! another layer and is left alone. Operator words are authored templates, evaluated only when
//! used, and end at the first balanced `}`. `$${` yields the literal text `${`.

mod hole;
mod syntax;

pub use syntax::EnvSyntax;
