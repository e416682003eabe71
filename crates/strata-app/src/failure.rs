//! Why an operation did not do what was asked: one error, a refusal by the check, or the
//! errors of a document that does not load — with one JSON shape and one exit code.

use serde_json::{json, Map, Value};
use strata_check::{Diagnostic, Severity};
use strata_core::{Error, ErrorKind, Layer};
use strata_doc::Document;

/// Exit code of a command whose work ran and failed (a step, a tool, a graph; `check` with
/// errors).
pub const EXIT_FAILED: u8 = 1;
/// Exit code of a command that strata could not carry out: a bad request, a file that does
/// not load, a limit, a refusal by the check. Nothing ran.
pub const EXIT_STRATA: u8 = 2;
/// Exit code of a plan run or step that waits for user values.
pub const EXIT_WAITING: u8 = 3;

/// The layer of a refusal by the pre-run check.
pub const CHECK: Layer = Layer::new("check");

/// What the gate refused to run, and the errors the check found in it.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The headline: kind `check`, "`<target>` was not run: N errors found".
    pub error: Error,
    /// The check's errors (warnings are left to `strata check`), sorted by file and line.
    pub diagnostics: Vec<Diagnostic>,
}

impl Refusal {
    /// The refusal of `shown` (a tool id, a directive or plan file) for `diagnostics`; only
    /// its errors are kept.
    pub fn new(shown: &str, diagnostics: Vec<Diagnostic>) -> Refusal {
        let diagnostics: Vec<Diagnostic> = diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        let n = diagnostics.len();
        let error = Error::new(
            CHECK,
            ErrorKind::Check,
            format!(
                "`{shown}` was not run: {n} error{} found",
                if n == 1 { "" } else { "s" }
            ),
        )
        .with_hint("`strata check` lists every error and warning of the project");
        Refusal { error, diagnostics }
    }
}

/// Why an operation failed.
#[derive(Debug, Clone)]
pub enum Failure {
    /// One error.
    Error(Error),
    /// The check found errors in what was to run: nothing ran.
    Refused(Box<Refusal>),
    /// A document (a plan) with errors: every one of them, and the document they point into.
    Document {
        /// The errors, in document order.
        errors: Vec<Error>,
        /// The document.
        doc: Box<Document>,
    },
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Error(e)
    }
}

impl From<Refusal> for Failure {
    fn from(r: Refusal) -> Failure {
        Failure::Refused(Box::new(r))
    }
}

impl Failure {
    /// The headline error: the one error, the refusal, or the first error of the document.
    pub fn error(&self) -> &Error {
        match self {
            Failure::Error(e) => e,
            Failure::Refused(r) => &r.error,
            Failure::Document { errors, .. } => &errors[0],
        }
    }

    /// Every error, the headline last for a refusal (its diagnostics come first).
    pub fn into_error(self) -> Error {
        match self {
            Failure::Error(e) => e,
            Failure::Refused(r) => r.error,
            Failure::Document { mut errors, .. } => errors.swap_remove(0),
        }
    }

    /// The exit code of a command that failed this way (the same with and without `--json`).
    pub fn exit_code(&self) -> u8 {
        EXIT_STRATA
    }

    /// The failure as `{"ok": false, "error": {…}}`: the error's shape is SPEC §5.7's
    /// (`kind`, `message`, `path`?, `span`?, `hint`?, and `file`, `line`, `column` when it
    /// points into a file); a refusal adds the check's `diagnostics`, a document its other
    /// `errors`, each in the same shape.
    pub fn to_json(&self) -> Value {
        let mut error = error_json(self.error());
        match self {
            Failure::Error(_) => {}
            Failure::Refused(r) => {
                error["diagnostics"] =
                    Value::Array(r.diagnostics.iter().map(Diagnostic::to_json).collect());
            }
            Failure::Document { errors, .. } => {
                error["errors"] = Value::Array(errors.iter().map(error_json).collect());
            }
        }
        json!({"ok": false, "error": error})
    }
}

/// An error in SPEC §5.7's shape: `kind`, `message`, then `path` (when not the root),
/// `span`, `hint`, `file`, `line`, `column` and its typed `data` when known.
pub fn error_json(e: &Error) -> Value {
    let mut obj = Map::new();
    obj.insert("kind".into(), json!(e.kind().name()));
    obj.insert("message".into(), json!(e.message()));
    if !e.path().is_root() {
        obj.insert("path".into(), json!(e.path().to_string()));
    }
    if let Some(span) = e.span() {
        obj.insert("span".into(), json!([span.start, span.end]));
    }
    if let Some(hint) = e.hint() {
        obj.insert("hint".into(), json!(hint));
    }
    if let Some(loc) = e.location() {
        obj.insert("file".into(), json!(loc.file));
        obj.insert("line".into(), json!(loc.line));
        obj.insert("column".into(), json!(loc.column));
    }
    if let Some(data) = e.data() {
        obj.insert("data".into(), data.to_json());
    }
    Value::Object(obj)
}
