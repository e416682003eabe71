//! The tool pipeline behind directives, graphs, plans and their hooks: strata-exec's
//! [`ExecRunner`], shared with the language bindings.

pub use strata_exec::ExecRunner;
