use std::fmt;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::{ErrorKind, FieldPath, Layer, Span};

/// A failure a person can act on: which layer, where (field path and span), what, and a hint.
///
/// Messages never contain substituted values; secrets can therefore never leak through them.
/// The details are private, read through accessors ([`Error::kind`], [`Error::message`], …)
/// and set through builder methods ([`Error::with_hint`], [`Error::at_path`], …); they live
/// behind one box so that results stay small on the hot path. An error built from another
/// one (an I/O failure, a parse error) keeps it as its [`source`](std::error::Error::source).
///
/// Two errors are equal when everything but their source is: the source is not compared
/// (`PartialEq` and `Eq` ignore it), and cloning an error shares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorInfo>);

/// The details of an [`Error`].
#[derive(Debug, Clone)]
struct ErrorInfo {
    layer: Layer,
    kind: ErrorKind,
    message: String,
    path: FieldPath,
    span: Option<Span>,
    hint: Option<String>,
    location: Option<Location>,
    data: Option<ErrorData>,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Everything but the source.
impl PartialEq for ErrorInfo {
    fn eq(&self, other: &ErrorInfo) -> bool {
        self.layer == other.layer
            && self.kind == other.kind
            && self.message == other.message
            && self.path == other.path
            && self.span == other.span
            && self.hint == other.hint
            && self.location == other.location
            && self.data == other.data
    }
}

impl Eq for ErrorInfo {}

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
            source: None,
        }))
    }

    /// The error for an I/O operation that failed: kind [`ErrorKind::Io`] in the request
    /// layer, message ``cannot <what> `<path>`: <err>`` (`what` a verb: `read`, `write`,
    /// `create`, …). It names the path and the system's reason, never the file's contents.
    /// Every front-end that reads or writes files reports failures through it, and `err` is
    /// kept as the error's source.
    pub fn io(what: &str, path: &std::path::Path, err: std::io::Error) -> Error {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Io,
            format!("cannot {what} `{}`: {err}", path.display()),
        )
        .with_source(err)
    }

    /// The layer (or the request, or the front-end) that failed.
    pub fn layer(&self) -> Layer {
        self.0.layer
    }

    /// What kind of failure it is: the stable name to match on.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// What went wrong, in one sentence.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The field holding the offending string (the root when the error is about no field).
    pub fn path(&self) -> &FieldPath {
        &self.0.path
    }

    /// The byte range inside that string, when the error is about part of it.
    pub fn span(&self) -> Option<Span> {
        self.0.span
    }

    /// A suggestion for the fix.
    pub fn hint(&self) -> Option<&str> {
        self.0.hint.as_deref()
    }

    /// The file and the line and column of the offending text, when it came from a file.
    pub fn location(&self) -> Option<&Location> {
        self.0.location.as_ref()
    }

    /// Typed facts for programs: the limit reached and its setting, the candidates tried.
    pub fn data(&self) -> Option<&ErrorData> {
        self.0.data.as_ref()
    }

    /// Sets the layer.
    pub fn with_layer(mut self, layer: Layer) -> Error {
        self.0.layer = layer;
        self
    }

    /// Sets the kind.
    pub fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.0.kind = kind;
        self
    }

    /// Replaces the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Error {
        self.0.message = message.into();
        self
    }

    /// Replaces the message with `f` of it (to put it in context: ``step `a`: …``).
    pub fn map_message(mut self, f: impl FnOnce(String) -> String) -> Error {
        self.0.message = f(std::mem::take(&mut self.0.message));
        self
    }

    /// Sets the span inside the string; `None` clears it.
    pub fn with_span(mut self, span: impl Into<Option<Span>>) -> Error {
        self.0.span = span.into();
        self
    }

    /// Marks the error as limit `key` (a field of [`crate::Limits`]) reached at `limit`: its
    /// typed data, and the hint "`lead` raise `limits.KEY` …" (see [`crate::raise_hint`]);
    /// `lead` ends the way the sentence goes on (`"split the string, or"`,
    /// `"if this is intended,"`).
    pub fn with_limit(mut self, key: &str, limit: usize, lead: &str) -> Error {
        self.0.hint = Some(format!("{lead} {}", crate::raise_hint(key)));
        self.with_data(ErrorData::Limit {
            setting: format!("limits.{key}"),
            limit,
        })
    }

    /// Sets the typed data.
    pub fn with_data(mut self, data: ErrorData) -> Error {
        self.0.data = Some(data);
        self
    }

    /// Sets the hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Error {
        self.0.hint = Some(hint.into());
        self
    }

    /// Removes the hint.
    pub fn without_hint(mut self) -> Error {
        self.0.hint = None;
        self
    }

    /// Replaces the hint, when there is one, with `f` of it.
    pub fn map_hint(mut self, f: impl FnOnce(String) -> String) -> Error {
        self.0.hint = self.0.hint.take().map(f);
        self
    }

    /// Sets the field path unless one is already set (the innermost path wins).
    pub fn at_path(mut self, path: &FieldPath) -> Error {
        if self.0.path.is_root() {
            self.0.path = path.clone();
        }
        self
    }

    /// Replaces the field path, whatever it was.
    pub fn with_path(mut self, path: FieldPath) -> Error {
        self.0.path = path;
        self
    }

    /// Replaces the field path with `f` of it (to put it under a prefix: `p.under(&at)`).
    pub fn map_path(mut self, f: impl FnOnce(FieldPath) -> FieldPath) -> Error {
        self.0.path = f(std::mem::take(&mut self.0.path));
        self
    }

    /// Sets the file position; `None` clears it.
    pub fn at_location(mut self, location: impl Into<Option<Location>>) -> Error {
        self.0.location = location.into();
        self
    }

    /// Keeps `source`, the error this one was built from, as its
    /// [`source`](std::error::Error::source). It takes no part in the message, the JSON form or
    /// equality.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.0.source = Some(Arc::new(source));
        self
    }

    /// The JSON form used by every machine interface (`--json`, `--batch`, the bindings):
    /// `{kind, layer, message, path, span, hint?, file?, line?, column?}`, `span` being
    /// `[start, end]` or null. Like the message, it never holds a substituted value.
    pub fn to_json(&self) -> Value {
        let mut obj = json!({
            "kind": self.0.kind.name(),
            "layer": self.0.layer.name(),
            "message": self.0.message,
            "path": self.0.path.to_string(),
            "span": self.0.span.map(|s| json!([s.start, s.end])),
        });
        if let Some(hint) = &self.0.hint {
            obj["hint"] = json!(hint);
        }
        if let Some(loc) = &self.0.location {
            obj["file"] = json!(loc.file);
            obj["line"] = json!(loc.line);
            obj["column"] = json!(loc.column);
        }
        if let Some(data) = &self.0.data {
            obj["data"] = data.to_json();
        }
        obj
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.0.location {
            write!(f, "{}:{}:{}: ", loc.file, loc.line, loc.column)?;
        }
        write!(f, "{} error at {}", self.0.layer, self.0.path)?;
        if let Some(span) = self.0.span {
            write!(f, " {}..{}", span.start, span.end)?;
        }
        write!(f, ": {}", self.0.message)?;
        if let Some(hint) = &self.0.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let source: &(dyn std::error::Error + 'static) = self.0.source.as_deref()?;
        Some(source)
    }
}

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
        let e = Error::io("read", std::path::Path::new("dir/a.yaml"), err);
        assert_eq!(e.kind(), ErrorKind::Io);
        assert_eq!(e.layer(), Layer::REQUEST);
        assert_eq!(e.message(), "cannot read `dir/a.yaml`: No such file");
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
            e.hint(),
            Some("shorten the chain, or raise `limits.param_links` in strata.yaml (or STRATA_LIMITS_PARAM_LINKS)")
        );
        assert_eq!(
            e.data(),
            Some(&ErrorData::Limit {
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

    #[test]
    fn an_error_built_from_another_keeps_it_as_its_source() {
        use std::error::Error as _;
        let err = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = Error::io("read", std::path::Path::new("a.yaml"), err);
        let source = e.source().expect("an I/O error keeps its source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("the source is the io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(io.to_string(), "No such file");

        // A chain: an error built from that error, which goes on to the io::Error.
        let outer = Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            "cannot load the project",
        )
        .with_source(e.clone());
        let first = outer.source().expect("with_source sets the source");
        assert_eq!(first.downcast_ref::<Error>(), Some(&e));
        let second = first.source().expect("the chain goes on");
        assert!(second.is::<std::io::Error>());
        assert!(second.source().is_none());

        assert!(Error::new(Layer::REQUEST, ErrorKind::Io, "x")
            .source()
            .is_none());
    }

    #[test]
    fn equality_and_clones_ignore_the_source() {
        let plain = Error::new(Layer::PARAMS, ErrorKind::Limit, "too long").with_hint("shorten it");
        let sourced = plain.clone().with_source(std::io::Error::other("inner"));
        assert_eq!(plain, sourced);
        let copy = sourced.clone();
        assert_eq!(copy, sourced);
        assert!(std::error::Error::source(&copy).is_some());
        assert_ne!(plain, sourced.with_message("too short"));
    }
}
