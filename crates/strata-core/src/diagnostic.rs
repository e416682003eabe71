use std::fmt;

use serde_json::{json, Value};

use crate::{ErrorKind, FieldPath, Layer, Span};

/// A failure a person can act on: which layer, where (field path and span), what, and a hint.
///
/// Messages never contain substituted values; secrets can therefore never leak through them.
/// The details live behind one box ([`ErrorInfo`], reached through `Deref`) so that results
/// stay small on the hot path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorInfo>);

/// The details of an [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The layer (or the request, or the front-end) that failed.
    pub layer: Layer,
    /// What kind of failure it is: a stable name to match on.
    pub kind: ErrorKind,
    /// What went wrong, in one sentence.
    pub message: String,
    /// The field holding the offending string.
    pub path: FieldPath,
    /// The byte range inside that string, when the error is about part of it.
    pub span: Option<Span>,
    /// A suggestion for the fix.
    pub hint: Option<String>,
    /// The file and the line and column of the offending text, when it came from a file.
    pub location: Option<Location>,
}

/// A position in a file: 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl Error {
    /// A new error of `kind` in `layer` with `message` and no position yet.
    pub fn new(layer: Layer, kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(ErrorInfo {
            layer,
            kind,
            message: message.into(),
            path: FieldPath::root(),
            span: None,
            hint: None,
            location: None,
        }))
    }

    /// The error for an I/O operation that failed: kind [`ErrorKind::Io`] in the request
    /// layer, message ``cannot <what> `<path>`: <err>`` (`what` a verb: `read`, `write`,
    /// `create`, …). It names the path and the system's reason, never the file's contents.
    /// Every front-end that reads or writes files reports failures through it.
    pub fn io(what: &str, path: &std::path::Path, err: &std::io::Error) -> Error {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Io,
            format!("cannot {what} `{}`: {err}", path.display()),
        )
    }

    /// Sets the span inside the string.
    pub fn with_span(mut self, span: Span) -> Error {
        self.span = Some(span);
        self
    }

    /// Sets the hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the field path unless one is already set (the innermost path wins).
    pub fn at_path(mut self, path: &FieldPath) -> Error {
        if self.path.is_root() {
            self.path = path.clone();
        }
        self
    }

    /// Sets the file position.
    pub fn at_location(mut self, location: Location) -> Error {
        self.location = Some(location);
        self
    }

    /// The JSON form used by every machine interface (`--json`, `--batch`, the bindings):
    /// `{kind, layer, message, path, span, hint?, file?, line?, column?}`, `span` being
    /// `[start, end]` or null. Like the message, it never holds a substituted value.
    pub fn to_json(&self) -> Value {
        let mut obj = json!({
            "kind": self.kind.name(),
            "layer": self.layer.name(),
            "message": self.message,
            "path": self.path.to_string(),
            "span": self.span.map(|s| json!([s.start, s.end])),
        });
        if let Some(hint) = &self.hint {
            obj["hint"] = json!(hint);
        }
        if let Some(loc) = &self.location {
            obj["file"] = json!(loc.file);
            obj["line"] = json!(loc.line);
            obj["column"] = json!(loc.column);
        }
        obj
    }
}

impl std::ops::Deref for Error {
    type Target = ErrorInfo;

    fn deref(&self) -> &ErrorInfo {
        &self.0
    }
}

impl std::ops::DerefMut for Error {
    fn deref_mut(&mut self) -> &mut ErrorInfo {
        &mut self.0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{}:{}:{}: ", loc.file, loc.line, loc.column)?;
        }
        write!(f, "{} error at {}", self.layer, self.path)?;
        if let Some(span) = self.span {
            write!(f, " {}..{}", span.start, span.end)?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Something suspicious that did not stop rendering (a missing variable, path or input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The layer that noticed it.
    pub layer: Layer,
    /// What happened, naming the variable, path or input but never its value.
    pub message: String,
    /// The field holding the string.
    pub path: FieldPath,
    /// The placeholder's byte range inside the string.
    pub span: Option<Span>,
}

impl Warning {
    /// The JSON form: `{layer, message, path, span}`, `span` being `[start, end]` or null.
    pub fn to_json(&self) -> Value {
        json!({
            "layer": self.layer.name(),
            "message": self.message,
            "path": self.path.to_string(),
            "span": self.span.map(|s| json!([s.start, s.end])),
        })
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} warning at {}", self.layer, self.path)?;
        if let Some(span) = self.span {
            write!(f, " {}..{}", span.start, span.end)?;
        }
        write!(f, ": {}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_name_the_operation_the_path_and_the_reason() {
        let err = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = Error::io("read", std::path::Path::new("dir/a.yaml"), &err);
        assert_eq!(e.kind, ErrorKind::Io);
        assert_eq!(e.layer, Layer::REQUEST);
        assert_eq!(e.message, "cannot read `dir/a.yaml`: No such file");
        assert_eq!(
            e.to_string(),
            "request error at $: cannot read `dir/a.yaml`: No such file"
        );
    }
}
