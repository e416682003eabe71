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
    /// Typed facts for programs: the limit reached and its setting, the candidates tried.
    pub data: Option<ErrorData>,
}

/// Typed facts about an error, for programs that act on it (`error.data` in JSON, `.data` in
/// Python) rather than read its message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorData {
    /// A limit was reached: the setting that raises it (`limits.template_bytes`, the key of
    /// `strata.yaml`; `STRATA_LIMITS_<KEY>` is its variable) and its value.
    Limit {
        /// The setting, as `strata.yaml` spells it.
        setting: String,
        /// Its value when the limit was reached.
        limit: usize,
    },
    /// What was tried, in order: the candidates of a lookup that found nothing.
    Candidates(Vec<String>),
}

impl ErrorData {
    /// The JSON form: `{"limit": {"setting", "limit"}}` or `{"candidates": [...]}`.
    pub fn to_json(&self) -> Value {
        match self {
            ErrorData::Limit { setting, limit } => {
                json!({"limit": {"setting": setting, "limit": limit}})
            }
            ErrorData::Candidates(names) => json!({ "candidates": names }),
        }
    }
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
            data: None,
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

    /// Marks the error as limit `key` (a field of [`crate::Limits`]) reached at `limit`: its
    /// typed data, and the hint "`lead` raise `limits.KEY` …" (see [`crate::raise_hint`]);
    /// `lead` ends the way the sentence goes on (`"split the string, or"`,
    /// `"if this is intended,"`).
    pub fn with_limit(mut self, key: &str, limit: usize, lead: &str) -> Error {
        self.hint = Some(format!("{lead} {}", crate::raise_hint(key)));
        self.with_data(ErrorData::Limit {
            setting: format!("limits.{key}"),
            limit,
        })
    }

    /// Sets the typed data.
    pub fn with_data(mut self, data: ErrorData) -> Error {
        self.data = Some(data);
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
        if let Some(data) = &self.data {
            obj["data"] = data.to_json();
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

    #[test]
    fn a_limit_carries_its_setting_and_value_and_says_how_to_raise_it() {
        let e = Error::new(Layer::PARAMS, ErrorKind::Limit, "too long").with_limit(
            "param_links",
            3,
            "shorten the chain, or",
        );
        assert_eq!(
            e.hint.as_deref(),
            Some("shorten the chain, or raise `limits.param_links` in strata.yaml (or STRATA_LIMITS_PARAM_LINKS)")
        );
        assert_eq!(
            e.data,
            Some(ErrorData::Limit {
                setting: "limits.param_links".into(),
                limit: 3
            })
        );
        assert_eq!(
            e.to_json()["data"],
            json!({"limit": {"setting": "limits.param_links", "limit": 3}})
        );
        let tried = Error::new(Layer::REQUEST, ErrorKind::TemplateNotFound, "none")
            .with_data(ErrorData::Candidates(vec!["a".into(), "b".into()]));
        assert_eq!(tried.to_json()["data"], json!({"candidates": ["a", "b"]}));
        let plain = Error::new(Layer::REQUEST, ErrorKind::Io, "x");
        assert!(plain.to_json().get("data").is_none());
    }
}
