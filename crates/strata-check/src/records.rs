//! The step record's old spellings: before `{id, status, result, error, run}`, a tool's
//! `result` was the process outcome (`result.success`, `result.exit_code`, `result.stdout`)
//! and its parsed output sat under `result.data`. Such paths still resolve when a tool's own
//! output happens to have those keys, so they are notes, each with the new spelling —
//! unless the step's tool declares its `outputs`: then a read is exact, a declared field
//! is fine, an old spelling it does not declare is a warning, and any other field it does
//! not declare is R013.

use serde_json::Value;
use strata_core::did_you_mean;
use strata_core::walk::{write_segs, Path, Seg};

use crate::diagnostic::{Code, Severity};

/// What is wrong with a read of a step record: code, severity, message, help.
pub type RecordProblem = (Code, Severity, String, Option<String>);

/// A read of a step's `result` in `path` (its `result` at index `at`), knowing the step's
/// tool and its `outputs` schema (`None`: no tool is known, or it declares none).
pub fn result_read(
    path: &Path,
    at: usize,
    outputs: Option<(&str, &Value)>,
) -> Option<RecordProblem> {
    if path.segs.get(at) != Some(&Seg::Key("result".into())) {
        return None;
    }
    let Some(Seg::Key(field)) = path.segs.get(at + 1) else {
        return None;
    };
    if let Some((tool, schema)) = outputs {
        let names: Vec<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if names.contains(&field.as_str()) {
            return None;
        }
        let open = schema
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false));
        if !open {
            if let Some((message, help)) = old_spelling(path, at) {
                return Some((Code::OldRecord, Severity::Warning, message, Some(help)));
            }
            let mut written = String::new();
            let _ = write_segs(&mut written, &path.segs[..at + 2], true);
            let fields = if names.is_empty() {
                format!("`{tool}` declares no output fields")
            } else {
                format!("the output fields of `{tool}` are {}", names.join(", "))
            };
            let help = match did_you_mean(field, names.iter().copied()) {
                Some(best) => format!("did you mean `{best}`? {fields}"),
                None => fields,
            };
            return Some((
                Code::UnknownOutput,
                Code::UnknownOutput.severity(),
                format!("`{written}`: tool `{tool}` declares no output field `{field}`"),
                Some(help),
            ));
        }
    }
    let (message, help) = old_spelling(path, at)?;
    Some((
        Code::OldRecord,
        Code::OldRecord.severity(),
        message,
        Some(format!(
            "{help} (or declare the tool's `outputs` when it is a field of its own output)"
        )),
    ))
}

/// The process-outcome fields that moved from `result` to `run`.
const RUN_FIELDS: [&str; 8] = [
    "success",
    "exit_code",
    "signal",
    "stderr",
    "duration_ms",
    "truncated",
    "timed_out",
    "stdout",
];

/// When `path` reads a step record whose `result` step is at index `at` with an old
/// spelling: the message and the new spelling.
pub fn old_spelling(path: &Path, at: usize) -> Option<(String, String)> {
    let segs = &path.segs;
    if segs.get(at) != Some(&Seg::Key("result".into())) {
        return None;
    }
    let Some(Seg::Key(field)) = segs.get(at + 1) else {
        return None;
    };
    let prefix = &segs[..at];
    let rest = &segs[at + 2..];
    let fixed: Vec<Seg> = match field.as_str() {
        "data" | "stdout" => prefix
            .iter()
            .cloned()
            .chain([Seg::Key("result".into())])
            .chain(rest.iter().cloned())
            .collect(),
        f if RUN_FIELDS.contains(&f) => prefix
            .iter()
            .cloned()
            .chain([Seg::Key("run".into()), Seg::Key(f.into())])
            .chain(rest.iter().cloned())
            .collect(),
        _ => return None,
    };
    let meaning = match field.as_str() {
        "data" => "a step's `result` is now its parsed output itself",
        "stdout" => "a step's `result` is now its output (parsed as JSON, else the text)",
        _ => "the process outcome of a step is now under `run`",
    };
    let mut written = String::new();
    let _ = write_segs(&mut written, &path.segs, true);
    let mut new = String::new();
    let _ = write_segs(&mut new, &fixed, true);
    Some((
        format!("`{written}` is the old step-record spelling: {meaning}"),
        format!("did you mean `{new}`?"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint(path: &str, at: usize) -> Option<String> {
        old_spelling(&Path::parse(path).unwrap(), at).map(|(_, help)| help)
    }

    fn read(path: &str, outputs: Option<Value>) -> Option<(Code, Severity)> {
        let path = Path::parse(path).unwrap();
        result_read(&path, 0, outputs.as_ref().map(|s| ("t/x", s))).map(|(c, s, _, _)| (c, s))
    }

    #[test]
    fn declared_outputs_make_reads_exact() {
        let schema = serde_json::json!({"type": "object", "properties": {"stdout": {}, "n": {}}});
        assert_eq!(read("result.stdout", Some(schema.clone())), None);
        assert_eq!(read("result.n.deep", Some(schema.clone())), None);
        assert_eq!(
            read("result.success", Some(schema.clone())),
            Some((Code::OldRecord, Severity::Warning))
        );
        assert_eq!(
            read("result.m", Some(schema.clone())),
            Some((Code::UnknownOutput, Severity::Warning))
        );
        let open = serde_json::json!({"type": "object", "additionalProperties": true});
        assert_eq!(read("result.m", Some(open.clone())), None);
        assert_eq!(
            read("result.stdout", Some(open)),
            Some((Code::OldRecord, Severity::Note))
        );
        assert_eq!(
            read("result.stdout", None),
            Some((Code::OldRecord, Severity::Note))
        );
        assert_eq!(read("result.words", None), None);
    }

    #[test]
    fn old_spellings_get_the_new_one() {
        assert_eq!(
            lint("steps.count.result.data.words", 2).as_deref(),
            Some("did you mean `steps.count.result.words`?")
        );
        assert_eq!(
            lint("result.success", 0).as_deref(),
            Some("did you mean `run.success`?")
        );
        assert_eq!(
            lint("steps.a.result.stdout", 2).as_deref(),
            Some("did you mean `steps.a.result`?")
        );
        assert_eq!(lint("result.words", 0), None);
        assert_eq!(lint("steps.a.run.success", 2), None);
    }
}
