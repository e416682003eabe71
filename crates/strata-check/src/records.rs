//! The step record's old spellings: before `{id, status, result, error, run}`, a tool's
//! `result` was the process outcome (`result.success`, `result.exit_code`, `result.stdout`)
//! and its parsed output sat under `result.data`. Such paths still resolve when a tool's own
//! output happens to have those keys, so they are warnings, each with the new spelling.

use strata_core::walk::{write_segs, Path, Seg};

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
