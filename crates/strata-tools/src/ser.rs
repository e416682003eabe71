//! `serialize_with` helpers for the report types that derive `Serialize` but hold a
//! `strata_core` type (which has its own JSON form and no `Serialize`): an error kind by its
//! name, an [`Error`] and a [`Warning`] by their `to_json`.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use strata_core::{Error, ErrorKind, Warning};

/// An error kind as its name (`tool_failed`).
pub fn kind<S: Serializer>(kind: &ErrorKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(kind.name())
}

/// An error as [`Error::to_json`] has it.
pub fn error<S: Serializer>(error: &Error, s: S) -> Result<S::Ok, S::Error> {
    error.to_json().serialize(s)
}

/// An optional error as [`Error::to_json`] has it, or null.
pub fn option_error<S: Serializer>(error: &Option<Error>, s: S) -> Result<S::Ok, S::Error> {
    error.as_ref().map(Error::to_json).serialize(s)
}

/// A warning as [`Warning::to_json`] has it.
pub fn warning<S: Serializer>(warning: &Warning, s: S) -> Result<S::Ok, S::Error> {
    warning.to_json().serialize(s)
}

/// Warnings as a list of [`Warning::to_json`]'s form.
pub fn warnings<S: Serializer>(warnings: &[Warning], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(warnings.len()))?;
    for w in warnings {
        seq.serialize_element(&w.to_json())?;
    }
    seq.end()
}
