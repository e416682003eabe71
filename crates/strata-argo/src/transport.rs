//! How values travel between the tasks of an exported workflow, and how a document travels
//! in a manifest.
//!
//! A task writes each output `name` as JSON into `<dir>/<name>.json`, which Argo reads as an
//! output parameter. A value longer than the parameter limit goes into
//! `<dir>/<name>.artifact.json` instead (an optional output artifact), and the parameter
//! holds [`IN_ARTIFACT`]. The next task gets the parameter as a file (a raw input artifact)
//! and the artifact, when there is one, beside it: [`read_input`] reads whichever holds the
//! value. Values are JSON from end to end: their types survive, and Argo never sees inside
//! them.
//!
//! Argo replaces every `{{…}}` it finds in a template text or a parameter value, with no
//! escape — in the values a task hands on too. So nothing that is not strata's own tag
//! reaches Argo as written: every JSON value strata writes for Argo (outputs, workflow
//! parameters) is [`to_json`], whose strings write `{` as `\u007b` (the same JSON to any
//! parser, with no `{{` for Argo); a document (a plan's text) is carried as such a JSON
//! string ([`encode`], [`decode`]); a name is [`carry`]d the same way when it holds a `{`
//! (and [`uncarry`] gives it back).

use std::path::{Path, PathBuf};

use serde_json::Value;
use strata_core::{Error, ErrorKind};

use crate::ARGO;

/// Argo keeps at most 256 KiB of a task's output (`outputs.result`; its node status lives
/// in a Kubernetes object): the default size above which a value goes to an artifact.
pub const PARAMETER_LIMIT: usize = 256 * 1024;

/// What a parameter holds when its value went to the artifact beside it (a JSON string,
/// which no record or walk ever is).
pub const IN_ARTIFACT: &str = "\"artifact\"";

/// Where an output went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// Into the output parameter.
    Parameter,
    /// Into the output artifact (it was longer than the limit).
    Artifact,
}

/// The file of output or input `name` in `dir`, and the artifact file beside it.
pub fn files(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{name}.json")),
        dir.join(format!("{name}.artifact.json")),
    )
}

/// Writes output `name` into `dir` (created if needed): into the parameter file when its
/// JSON is at most `limit` bytes, else into the artifact file.
pub fn write_output(dir: &Path, name: &str, value: &Value, limit: usize) -> Result<Placed, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let text = to_json(value);
    let (parameter, artifact) = files(dir, name);
    let placed = if text.len() <= limit {
        std::fs::write(&parameter, &text).map_err(|e| Error::io("write", &parameter, e))?;
        Placed::Parameter
    } else {
        std::fs::write(&artifact, &text).map_err(|e| Error::io("write", &artifact, e))?;
        std::fs::write(&parameter, IN_ARTIFACT).map_err(|e| Error::io("write", &parameter, e))?;
        Placed::Artifact
    };
    Ok(placed)
}

/// Reads input `name` from `dir`: the parameter file's JSON, or the artifact's when the
/// parameter says the value is there. `None` when there is no parameter file, or it is
/// empty (what Argo gives for the output of a task that did not run).
pub fn read_input(dir: &Path, name: &str) -> Result<Option<Value>, Error> {
    let (parameter, artifact) = files(dir, name);
    let text = match std::fs::read_to_string(&parameter) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", &parameter, e)),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let (text, from) = if text.trim() == IN_ARTIFACT {
        let big = std::fs::read_to_string(&artifact).map_err(|e| {
            Error::io("read", &artifact, e).with_hint(
                "the value was larger than the parameter limit and went to an artifact: the cluster needs an artifact repository",
            )
        })?;
        (big, artifact)
    } else {
        (text, parameter)
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::new(
            ARGO,
            ErrorKind::Syntax,
            format!("`{}` is not JSON: {e}", from.display()),
        )
        .with_source(e)
    })
}

/// `value` as compact JSON whose strings (keys too) write `{` as `\u007b`: the same value
/// to any JSON parser, and no `{{` for Argo to replace (a JSON object never starts with
/// another, so its own braces never make one).
pub fn to_json(value: &Value) -> String {
    let json = value.to_string();
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (true, false, '{') => {
                out.push_str("\\u007b");
                continue;
            }
            (false, _, '"') => in_string = true,
            _ => {}
        }
        out.push(c);
    }
    out
}

/// A document's text as a JSON string in which `{` is `\u007b`: no `{{` for Argo to replace.
pub fn encode(text: &str) -> String {
    to_json(&Value::String(text.to_string()))
}

/// A name (a file's, as messages show it) as it can go into a manifest: [`encode`]d when it
/// holds a `{` or could be taken for an encoded one (it starts with `"`), else as it is.
pub fn carry(name: &str) -> String {
    match name.contains('{') || name.trim_start().starts_with('"') {
        true => encode(name),
        false => name.to_string(),
    }
}

/// The name [`carry`] carried.
pub fn uncarry(carried: &str) -> String {
    decode(carried).unwrap_or_else(|| carried.to_string())
}

/// The text of a document [`encode`]d, or `None` when `carried` is not a JSON string (the
/// document itself, as written).
pub fn decode(carried: &str) -> Option<String> {
    if !carried.trim_start().starts_with('"') {
        return None;
    }
    match serde_json::from_str(carried) {
        Ok(Value::String(text)) => Some(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn documents_cross_argo_without_braces() {
        let text = "- {id: a, tool: t, arguments: {x: '{{b.result.y}} \"q\" \\\\ é'}}\n";
        let carried = encode(text);
        assert!(!carried.contains('{'));
        assert_eq!(decode(&carried).as_deref(), Some(text));
        assert_eq!(decode("[1]"), None);
    }

    #[test]
    fn json_for_argo_holds_no_double_brace_and_parses_as_it_was() {
        let value =
            json!({"{{k}}": {"a": ["{{workflow.name}}", "\\{{x}}\"{", {"b": {}}]}, "n": [1, {}]});
        let text = to_json(&value);
        assert!(!text.contains("{{"), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
        assert_eq!(to_json(&json!({"a": "{"})), r#"{"a":"\u007b"}"#);
        for name in [
            "plans/x.yaml",
            "plans/{{workflow.name}}.yaml",
            "\"q\"",
            " \"",
            "{",
        ] {
            let carried = carry(name);
            assert!(!carried.contains('{'), "{carried}");
            assert_eq!(uncarry(&carried), name);
        }
        assert_eq!(carry("plans/x.yaml"), "plans/x.yaml");
    }

    #[test]
    fn large_values_go_to_the_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let small = json!({"id": "a", "result": "x"});
        assert_eq!(
            write_output(dir.path(), "a", &small, 100).unwrap(),
            Placed::Parameter
        );
        assert_eq!(read_input(dir.path(), "a").unwrap(), Some(small));
        let big = json!({"id": "b", "result": "y".repeat(200)});
        assert_eq!(
            write_output(dir.path(), "b", &big, 100).unwrap(),
            Placed::Artifact
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b.json")).unwrap(),
            IN_ARTIFACT
        );
        assert_eq!(read_input(dir.path(), "b").unwrap(), Some(big));
        assert_eq!(read_input(dir.path(), "c").unwrap(), None);
        std::fs::remove_file(dir.path().join("b.artifact.json")).unwrap();
        let e = read_input(dir.path(), "b").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io);
        assert_eq!(
            e.message(),
            format!(
                "cannot read `{}`: No such file or directory (os error 2)",
                dir.path().join("b.artifact.json").display()
            )
        );
        assert!(e.hint().unwrap_or("").contains("artifact repository"));
    }
}
