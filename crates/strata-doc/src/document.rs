use serde_json::Value;
use strata_core::{Error, ErrorKind, FieldPath, Layer, Limits, Location};

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
    /// The text, kept to locate fields for errors.
    pub text: String,
    /// The parsed value.
    pub value: Value,
}

fn utf8_error(name: &str, bytes: &[u8], e: std::str::Utf8Error) -> Error {
    let valid = &bytes[..e.valid_up_to()];
    let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
    let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = 1 + String::from_utf8_lossy(&valid[line_start..])
        .chars()
        .count();
    let mut err = Error::new(
        Layer::REQUEST,
        ErrorKind::Syntax,
        format!("not valid UTF-8 (byte {})", e.valid_up_to()),
    )
    .with_hint("save the file as UTF-8");
    err.location = Some(Location {
        file: name.to_string(),
        line,
        column,
    });
    err
}

impl Document {
    /// Parses `bytes` named `name` as `format`.
    pub fn parse(
        name: &str,
        bytes: Vec<u8>,
        format: Format,
        limits: &Limits,
    ) -> Result<Document, Error> {
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => return Err(utf8_error(name, e.as_bytes(), e.utf8_error())),
        };
        let value = match format {
            Format::Json => serde_json::from_str(&text).map_err(|e| {
                syntax_error(name, "JSON", &e.to_string(), Some((e.line(), e.column())))
            })?,
            Format::Yaml => {
                if let Some(at) = crate::depth::flow_too_deep(&text, MAX_DEPTH) {
                    return Err(too_deep(name, &text, at));
                }
                serde_yaml::from_str(&text).map_err(|e| {
                    let at = e.location().map(|l| (l.line(), l.column()));
                    syntax_error(name, "YAML", &e.to_string(), at)
                })?
            }
        };
        let nodes = count_nodes(&value, limits.yaml_nodes);
        if nodes > limits.yaml_nodes {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Limit,
                format!("document expands to more than {} nodes", limits.yaml_nodes),
            )
            .with_hint("YAML aliases may repeat large parts of a document; reduce them"));
        }
        Ok(Document {
            name: name.to_string(),
            text,
            value,
        })
    }

    /// Attaches this document's name and the line and column of the error's field (errors
    /// about no field, such as bad options, are returned as they are).
    pub fn locate_error(&self, mut err: Error) -> Error {
        let about_a_field = !err.path.is_root() || err.span.is_some();
        if err.location.is_none() && about_a_field {
            let (line, column) =
                locate(&self.text, &err.path, err.span.map(|s| s.start)).unwrap_or((1, 1));
            err.location = Some(Location {
                file: self.name.clone(),
                line,
                column,
            });
        }
        err
    }

    /// The line and column of a field (and of a byte offset inside its string).
    pub fn locate(&self, path: &FieldPath, offset: Option<usize>) -> Option<(usize, usize)> {
        locate(&self.text, path, offset)
    }
}

use crate::locate;

/// The deepest nesting of collections the parsers accept (`serde_json`'s and `serde_yaml`'s
/// recursion limit).
const MAX_DEPTH: usize = 128;

/// The error for flow collections nested past [`MAX_DEPTH`], at the opener past the limit.
fn too_deep(name: &str, text: &str, at: usize) -> Error {
    let before = &text[..at];
    let line = 1 + before.matches('\n').count();
    let column = 1 + before[before.rfind('\n').map_or(0, |k| k + 1)..]
        .chars()
        .count();
    let mut err = Error::new(
        Layer::REQUEST,
        ErrorKind::Limit,
        format!("YAML nests collections more than {MAX_DEPTH} levels deep"),
    )
    .with_hint("flatten the document");
    err.location = Some(Location {
        file: name.to_string(),
        line,
        column,
    });
    err
}

fn syntax_error(name: &str, kind: &str, message: &str, at: Option<(usize, usize)>) -> Error {
    let message = message.split(" at line ").next().unwrap_or(message);
    let mut err = Error::new(
        Layer::REQUEST,
        ErrorKind::Syntax,
        format!("{kind} syntax error: {message}"),
    );
    err.location = Some(Location {
        file: name.to_string(),
        line: at.map_or(1, |a| a.0),
        column: at.map_or(1, |a| a.1),
    });
    err
}

/// Counts nodes up to `cap` (stops early past it).
fn count_nodes(value: &Value, cap: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        if count > cap {
            break;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}
