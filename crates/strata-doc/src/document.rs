use std::sync::{Arc, OnceLock};

use serde_json::Value;
use strata_core::{Error, ErrorData, ErrorKind, FieldPath, Layer, Limits, Location};

/// The syntax of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON.
    Json,
    /// YAML (JSON documents are read as YAML too).
    Yaml,
}

impl Format {
    /// The format a file name suggests: `.json` is JSON, anything else YAML.
    pub fn from_name(name: &str) -> Format {
        if name.ends_with(".json") {
            Format::Json
        } else {
            Format::Yaml
        }
    }
}

/// A document read from a file or standard input.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file name as given (`<stdin>` for standard input).
    pub name: String,
    /// The text, kept to locate fields for errors (shared with a template read from it,
    /// whose constant strings point into it: see [`Build::source`]).
    pub text: Arc<String>,
    /// The parsed value.
    pub value: Value,
    /// Where every field of the text stands, read once, when a second lookup needs it.
    positions: OnceLock<Arc<Positions>>,
    /// Set by the first lookup, which reads the text only as far as its field.
    looked: OnceLock<()>,
}

pub(crate) fn utf8_error(name: &str, bytes: &[u8], e: std::str::Utf8Error) -> Error {
    let valid = &bytes[..e.valid_up_to()];
    let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
    let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = 1 + String::from_utf8_lossy(&valid[line_start..])
        .chars()
        .count();
    Error::new(
        Layer::REQUEST,
        ErrorKind::Syntax,
        format!("not valid UTF-8 (byte {})", e.valid_up_to()),
    )
    .with_hint("save the file as UTF-8")
    .at_location(Location {
        file: name.to_string(),
        line,
        column,
    })
}

impl Document {
    /// Parses `bytes` named `name` as `format`.
    ///
    /// Refused with a located error: text that is not UTF-8 or starts with a byte-order
    /// mark, a document larger than `limits.document_bytes` as written or once its YAML
    /// aliases are expanded (or of more than `limits.yaml_nodes` nodes), numbers that are not
    /// finite, and keys repeated in one map.
    pub fn parse(
        name: &str,
        bytes: Vec<u8>,
        format: Format,
        limits: &Limits,
    ) -> Result<Document, Error> {
        let text = checked_text(name, bytes, limits)?;
        let value = read_node(format, name, &text, limits, &mut Values).map_err(|e| {
            let (Refused::Read(e) | Refused::Built(e)) = e;
            e
        })?;
        Ok(Document {
            value,
            ..Document::unparsed(name, text)
        })
    }

    /// Parses `bytes` as [`Document::parse`] does, straight into what `build` makes of the
    /// nodes as they are read. The document returned keeps the text only (its value is
    /// null), to locate and show errors, with the builder's node or its error: an error of
    /// the builder stops the read at its scalar, located there in YAML (in JSON it carries
    /// the field path, for [`Document::locate_error`]). The outer error is the reader's: the
    /// text is not a document.
    pub fn parse_into<B: Build>(
        name: &str,
        bytes: Vec<u8>,
        format: Format,
        limits: &Limits,
        build: &mut B,
    ) -> Result<(Document, Result<B::Node, Error>), Error> {
        let text = Arc::new(checked_text(name, bytes, limits)?);
        build.source(&text);
        let node = match read_node(format, name, &text, limits, build) {
            Ok(node) => Ok(node),
            Err(Refused::Built(e)) => Err(e),
            Err(Refused::Read(e)) => return Err(e),
        };
        Ok((Document::unparsed(name, text), node))
    }

    /// YAML (or JSON) text read under the default limits: for text that is not from a file,
    /// such as a manifest or a fixture read back.
    pub fn yaml_value(text: &str) -> Result<Value, Error> {
        let limits = Limits::default();
        Document::parse("<text>", text.as_bytes().to_vec(), Format::Yaml, &limits).map(|d| d.value)
    }

    /// A text named `name` kept only to locate fields in it (its value is null): for
    /// messages about a file read elsewhere.
    pub fn unparsed(name: &str, text: impl Into<Arc<String>>) -> Document {
        Document {
            name: name.to_string(),
            text: text.into(),
            value: Value::Null,
            positions: OnceLock::new(),
            looked: OnceLock::new(),
        }
    }

    pub(crate) fn positions(&self) -> &Positions {
        self.positions
            .get_or_init(|| Arc::new(Positions::of(&self.text)))
    }

    /// Attaches this document's name and the line and column of the error's field (errors
    /// about no field, such as bad options, are returned as they are).
    pub fn locate_error(&self, mut err: Error) -> Error {
        let about_a_field = !err.path().is_root() || err.span().is_some();
        if err.location().is_none() && about_a_field {
            let (line, column) = self
                .locate(err.path(), err.span().map(|s| s.start))
                .unwrap_or((1, 1));
            err = err.at_location(Location {
                file: self.name.clone(),
                line,
                column,
            });
        }
        err
    }

    /// The line and column of a field (and of a byte offset inside its string). The first
    /// call reads the text only as far as the field (one error in a large file); later calls
    /// share positions read once for the whole text (many warnings).
    pub fn locate(&self, path: &FieldPath, offset: Option<usize>) -> Option<(usize, usize)> {
        if self.positions.get().is_none() && self.looked.set(()).is_ok() {
            return crate::locate::find(&self.text, path, offset);
        }
        self.positions().locate(&self.text, path, offset)
    }
}

/// The text of a document's bytes: within the size limit, UTF-8, without a byte-order mark.
fn checked_text(name: &str, bytes: Vec<u8>, limits: &Limits) -> Result<String, Error> {
    if bytes.len() > limits.document_bytes {
        return Err(crate::files::too_large(name, bytes.len(), limits));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => return Err(utf8_error(name, e.as_bytes(), e.utf8_error())),
    };
    if text.starts_with('\u{feff}') {
        return Err(located(
            name,
            (1, 1),
            Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                "the file starts with a byte-order mark (U+FEFF)",
            )
            .with_hint("save the file as UTF-8 without a byte-order mark"),
        ));
    }
    Ok(text)
}

/// Why a document was not built: the text is not one, or the builder refused a node.
enum Refused {
    Read(Error),
    Built(Error),
}

/// What `build` makes of `text` (named `name`, in `format`), read against `limits`. A
/// builder's error is located at its scalar (and the byte of the string it names) in YAML;
/// in JSON it carries the field path of its scalar.
fn read_node<B: Build>(
    format: Format,
    name: &str,
    text: &str,
    limits: &Limits,
    build: &mut B,
) -> Result<B::Node, Refused> {
    let budget = Budget::of(limits);
    if format == Format::Json {
        return match read_json_into(text, &budget, build) {
            Ok(built) => built.map_err(Refused::Built),
            Err(e) => {
                let at = Some((e.line(), e.column()));
                Err(Refused::Read(match budget.stop() {
                    Some(stop) => over_budget(name, text, stop, at, limits),
                    None => syntax_error(name, "JSON", &e.to_string(), at).with_source(e),
                }))
            }
        };
    }
    if let Some(at) = crate::depth::flow_too_deep(text, MAX_DEPTH) {
        return Err(Refused::Read(too_deep(
            name,
            Lines::through(text, at).position(text, at),
        )));
    }
    read_yaml(text, &budget, MAX_DEPTH, build).map_err(|fail| match fail {
        YamlFail::Build(e, start) => {
            let at = crate::locate::at_start(text, start, e.span().map(|s| s.start));
            Refused::Built(located(name, at.unwrap_or((1, 1)), *e))
        }
        YamlFail::Stop(stop, at) => Refused::Read(over_budget(name, text, stop, Some(at), limits)),
        YamlFail::Syntax(message, at) => Refused::Read(yaml_syntax_error(name, text, &message, at)),
        YamlFail::Scan(e) => {
            let at = crate::yaml_read::at(e.marker());
            Refused::Read(yaml_syntax_error(name, text, e.info(), at).with_source(e))
        }
    })
}

/// The error for `text` (named `name`) that is not YAML, `message` at `at`: placed at the
/// line a dedented key breaks, when that is the cause.
fn yaml_syntax_error(name: &str, text: &str, message: &str, at: (usize, usize)) -> Error {
    match crate::indent::dedented_before(text, message, at.0) {
        Some((line, column, hint)) => {
            syntax_error(name, "YAML", message, Some((line, column))).with_hint(hint)
        }
        None => syntax_error(name, "YAML", message, Some(at)),
    }
}

use crate::bounded::{Budget, Stop};
use crate::build::{Build, Values};
use crate::json_read::read_json_into;
use crate::locate::{Lines, Positions};
use crate::yaml_read::{read_yaml, YamlFail, REPETITION};

/// The deepest nesting of collections the parsers accept (`serde_json`'s recursion limit,
/// and the YAML reader's).
const MAX_DEPTH: usize = 128;

/// The error for collections nested past [`MAX_DEPTH`], at the opener past the limit.
fn too_deep(name: &str, (line, column): (usize, usize)) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Limit,
        format!("YAML nests collections more than {MAX_DEPTH} levels deep"),
    )
    .with_hint("flatten the document")
    .at_location(Location {
        file: name.to_string(),
        line,
        column,
    })
}

fn syntax_error(name: &str, kind: &str, message: &str, at: Option<(usize, usize)>) -> Error {
    let message = message.split(" at line ").next().unwrap_or(message);
    Error::new(
        Layer::REQUEST,
        ErrorKind::Syntax,
        format!("{kind} syntax error: {message}"),
    )
    .at_location(Location {
        file: name.to_string(),
        line: at.map_or(1, |a| a.0),
        column: at.map_or(1, |a| a.1),
    })
}

/// `err` at `line:column` of `name`.
fn located(name: &str, (line, column): (usize, usize), err: Error) -> Error {
    err.at_location(Location {
        file: name.to_string(),
        line,
        column,
    })
}

/// The error for a read that its budget stopped, at the node where it stopped.
fn over_budget(
    name: &str,
    text: &str,
    stop: Stop,
    at: Option<(usize, usize)>,
    limits: &Limits,
) -> Error {
    const ALIASES: &str = "YAML aliases may repeat large parts of a document; reduce them";
    let err = match stop {
        Stop::Nodes => Error::new(
            Layer::REQUEST,
            ErrorKind::Limit,
            format!("document expands to more than {} nodes", limits.yaml_nodes),
        )
        .with_hint(ALIASES)
        .with_data(ErrorData::Limit {
            setting: "limits.yaml_nodes".into(),
            limit: limits.yaml_nodes,
        }),
        Stop::Bytes => Error::new(
            Layer::REQUEST,
            ErrorKind::Limit,
            format!(
                "document expands to more than {} bytes",
                limits.document_bytes
            ),
        )
        .with_hint(ALIASES)
        .with_data(ErrorData::Limit {
            setting: "limits.document_bytes".into(),
            limit: limits.document_bytes,
        }),
        Stop::NotFinite => {
            let shown = at.map_or("", |(line, column)| token_at(text, line, column));
            Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!("`{shown}` is not a finite number"),
            )
            .with_hint(
                "numbers must be finite (JSON has no NaN or infinity); quote it to mean text",
            )
        }
        Stop::TooDeep => return too_deep(name, at.unwrap_or((1, 1))),
        Stop::Repetition => Error::new(
            Layer::REQUEST,
            ErrorKind::Limit,
            format!("YAML aliases repeat the document more than {REPETITION} times over"),
        )
        .with_hint(ALIASES),
        Stop::DuplicateKey(key) => Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            format!("duplicate key `{key}`"),
        )
        .with_hint("each key may appear once in a map"),
    };
    located(name, at.unwrap_or((1, 1)), err)
}

/// The plain scalar starting at 1-based `line:column` of `text` (up to a space, `,`, `]`,
/// `}` or `#`), at most 40 characters.
fn token_at(text: &str, line: usize, column: usize) -> &str {
    let Some(line_text) = text.lines().nth(line.saturating_sub(1)) else {
        return "";
    };
    let start = line_text
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line_text.len(), |(i, _)| i);
    let rest = &line_text[start..];
    let end = rest
        .find([' ', '\t', ',', ']', '}', '#'])
        .unwrap_or(rest.len());
    let token = &rest[..end];
    match token.char_indices().nth(40) {
        Some((i, _)) => &token[..i],
        None => token,
    }
}

/// The message of a request line (a batch protocol's JSON object) that does not parse as a
/// document: `malformed request: <what>` with its line and column, and whether it broke a
/// limit (the reply then keeps kind `limit`).
pub fn malformed_request(error: &Error) -> (String, bool) {
    let message = error
        .message()
        .strip_prefix("JSON syntax error: ")
        .unwrap_or(error.message());
    let at = error
        .location()
        .map(|l| format!(" at line {} column {}", l.line, l.column))
        .unwrap_or_default();
    (
        format!("malformed request: {message}{at}"),
        error.kind() == ErrorKind::Limit,
    )
}
