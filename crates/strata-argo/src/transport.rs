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
//! A document (a plan's text) is carried in a manifest as a JSON string whose `{` are written
//! `\u007b`, so that Argo, which replaces every `{{…}}` it finds, finds none: [`encode`] and
//! [`decode`].

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
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, &e))?;
    let text = serde_json::to_string(value).map_err(|e| {
        Error::new(
            ARGO,
            ErrorKind::Invalid,
            format!("cannot encode `{name}`: {e}"),
        )
    })?;
    let (parameter, artifact) = files(dir, name);
    let placed = if text.len() <= limit {
        std::fs::write(&parameter, &text).map_err(|e| Error::io("write", &parameter, &e))?;
        Placed::Parameter
    } else {
        std::fs::write(&artifact, &text).map_err(|e| Error::io("write", &artifact, &e))?;
        std::fs::write(&parameter, IN_ARTIFACT).map_err(|e| Error::io("write", &parameter, &e))?;
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
        Err(e) => return Err(Error::io("read", &parameter, &e)),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let (text, from) = if text.trim() == IN_ARTIFACT {
        let big = std::fs::read_to_string(&artifact).map_err(|e| {
            Error::io("read", &artifact, &e).with_hint(
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
    })
}

/// A document's text as a JSON string in which `{` is `\u007b`: no `{{` for Argo to replace.
pub fn encode(text: &str) -> String {
    Value::String(text.to_string())
        .to_string()
        .replace('{', "\\u007b")
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
        assert_eq!(e.kind, ErrorKind::Io);
        assert_eq!(
            e.message,
            format!(
                "cannot read `{}`: No such file or directory (os error 2)",
                dir.path().join("b.artifact.json").display()
            )
        );
        assert!(e
            .hint
            .as_deref()
            .unwrap_or("")
            .contains("artifact repository"));
    }
}
