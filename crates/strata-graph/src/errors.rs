//! The errors of a run as text and as JSON: the one place a run's [`Error`] becomes the text
//! of a progress line or a checkpoint's `failure`, and the reading back of an error's JSON
//! form ([`Error::to_json`]) when a failure travels between the tasks of a walk in parts.

use serde_json::Value;
use strata_core::{Error, ErrorKind, FieldPath, Layer, Location, PathSeg, Span};

/// The layer of the errors a graph's run makes itself (a tool that failed, a `params` or
/// `assign` that is not a map, the step limit); errors met on the way (a template, a tool
/// that cannot start, a prompt template) keep the layer they came from.
pub const GRAPH: Layer = Layer::new("graph");

/// The error as a run's progress lines, its [`crate::Outcome`] and its checkpoint's
/// `failure` show it: the message, then the file position when the error has one
/// (`… (prompts/main/t.j2:3:7)`). The layer and field path are left out (the line names
/// the step and the node); both stay in the error and its JSON form.
pub fn error_line(error: &Error) -> String {
    match error.location() {
        Some(l) => format!("{} ({}:{}:{})", error.message(), l.file, l.line, l.column),
        None => error.message().to_string(),
    }
}

/// The layers an error read back from JSON can name (a layer is a static name).
const LAYERS: [Layer; 11] = [
    Layer::ENV,
    Layer::PARAMS,
    Layer::CONTEXT,
    Layer::INPUTS,
    Layer::REQUEST,
    GRAPH,
    Layer::new("prompt"),
    Layer::new("plan"),
    Layer::new("argo"),
    Layer::new("response"),
    Layer::new("settings"),
];

/// Reads an error back from [`Error::to_json`]'s form: `kind` and `message` are required;
/// `layer` (a layer strata does not know reads as [`GRAPH`]), `path`, `span`, `hint` and
/// `file`/`line`/`column` are kept when present.
pub(crate) fn error_from_json(value: &Value) -> Option<Error> {
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .and_then(ErrorKind::from_name)?;
    let message = value.get("message")?.as_str()?;
    let layer = value
        .get("layer")
        .and_then(Value::as_str)
        .and_then(|name| LAYERS.into_iter().find(|l| l.name() == name))
        .unwrap_or(GRAPH);
    let mut error = Error::new(layer, kind, message);
    if let Some(path) = value
        .get("path")
        .and_then(Value::as_str)
        .and_then(field_path)
    {
        error = error.with_path(path);
    }
    if let Some([Some(start), Some(end)]) = value
        .get("span")
        .and_then(Value::as_array)
        .map(|s| [s.first(), s.get(1)].map(|n| n.and_then(Value::as_u64)))
    {
        error = error.with_span(Span::new(start as usize, end as usize));
    }
    if let Some(hint) = value.get("hint").and_then(Value::as_str) {
        error = error.with_hint(hint.to_string());
    }
    let at = |k: &str| value.get(k).and_then(Value::as_u64).map(|n| n as usize);
    if let (Some(file), Some(line), Some(column)) = (
        value.get("file").and_then(Value::as_str),
        at("line"),
        at("column"),
    ) {
        error = error.at_location(Location {
            file: file.to_string(),
            line,
            column,
        });
    }
    Some(error)
}

/// Reads a [`FieldPath`] back from its text (`$`, `nodes.a.do[0]`, `env["MY KEY"]`).
pub(crate) fn field_path(text: &str) -> Option<FieldPath> {
    if text == "$" {
        return Some(FieldPath::root());
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut segs = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            if after.starts_with('"') {
                // A JSON string, then `]`.
                let mut stream = serde_json::Deserializer::from_str(after).into_iter::<Value>();
                let key = match stream.next()? {
                    Ok(Value::String(k)) => k,
                    _ => return None,
                };
                rest = after[stream.byte_offset()..].strip_prefix(']')?;
                segs.push(PathSeg::Key(key));
            } else {
                let (n, tail) = after.split_once(']')?;
                segs.push(PathSeg::Index(n.parse().ok()?));
                rest = tail;
            }
            continue;
        }
        let body = match rest.strip_prefix('.') {
            Some(b) if !segs.is_empty() => b,
            None if segs.is_empty() => rest,
            _ => return None,
        };
        let end = body.find(|c: char| !plain(c)).unwrap_or(body.len());
        if end == 0 {
            return None;
        }
        segs.push(PathSeg::Key(body[..end].to_string()));
        rest = &body[end..];
    }
    Some(FieldPath(segs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_read_back_from_their_text() {
        let paths = [
            FieldPath::root(),
            FieldPath(vec![
                PathSeg::Key("nodes".into()),
                PathSeg::Key("a-b".into()),
            ]),
            FieldPath(vec![
                PathSeg::Key("nodes".into()),
                PathSeg::Key("c".into()),
                PathSeg::Key("do".into()),
                PathSeg::Index(0),
                PathSeg::Key("x y]\"".into()),
                PathSeg::Key("tool".into()),
            ]),
            FieldPath(vec![PathSeg::Key("9 lives".into()), PathSeg::Index(3)]),
        ];
        for p in paths {
            assert_eq!(field_path(&p.to_string()), Some(p));
        }
        assert_eq!(field_path("a..b"), None);
    }

    #[test]
    fn errors_read_back_from_their_json() {
        let e = Error::new(Layer::CONTEXT, ErrorKind::Type, "bad")
            .at_path(&field_path("nodes.a.params").unwrap())
            .with_span(Span::new(2, 9))
            .with_hint("fix it")
            .at_location(Location {
                file: "t.yaml".into(),
                line: 3,
                column: 4,
            });
        assert_eq!(error_from_json(&e.to_json()), Some(e.clone()));
        assert_eq!(error_line(&e), "bad (t.yaml:3:4)");
        let plain = Error::new(GRAPH, ErrorKind::ToolFailed, "no");
        assert_eq!(error_from_json(&plain.to_json()), Some(plain));
    }
}
