//! The event log of a recorded run (`events.jsonl`, see `strata-runs`): every event a plan or
//! graph run reports — the objects its `--json` stream shows, with a plan step's resolved
//! arguments added — redacted (every secret value the run's tools and the project declare
//! becomes `***`, in keys and strings) before it is written, with its time in milliseconds.

use serde_json::{Map, Value};
use strata_core::Error;
use strata_runs::{now_ms, EventLog, RunDir};

use crate::App;

/// The event log a run appends to, and the secret values it keeps out of it.
pub(crate) struct RunEvents {
    log: EventLog,
    secrets: Vec<String>,
    /// The first write that failed (the run goes on; it is reported when the run ends).
    failed: Option<Error>,
    path: std::path::PathBuf,
}

impl RunEvents {
    /// Opens the event log of the run in `dir`, which calls `tools`.
    pub(crate) fn open(app: &App, dir: &RunDir, tools: &[&str]) -> Result<RunEvents, Error> {
        let secrets = crate::secrets::secret_values(Some(app.project()), tools, &[]);
        Ok(RunEvents {
            log: EventLog::open(dir)?,
            secrets,
            failed: None,
            path: dir.events_file(),
        })
    }

    /// Appends `event`, redacted, stamped with the time now.
    pub(crate) fn write(&mut self, mut event: Value) {
        if self.failed.is_some() {
            return;
        }
        if !self.secrets.is_empty() {
            redact(&mut event, &self.secrets);
        }
        if let Err(e) = self.log.append(now_ms(), &event) {
            self.failed = Some(Error::io("write", &self.path, e));
        }
    }

    /// Appends `event` (which serializes as a JSON object), redacted, stamped with the time
    /// now: written straight from its serialization when there is no secret to redact.
    pub(crate) fn write_object<T: serde::Serialize>(&mut self, event: &T) {
        if !self.secrets.is_empty() {
            return self.write(serde_json::to_value(event).unwrap_or(Value::Null));
        }
        if self.failed.is_some() {
            return;
        }
        if let Err(e) = self.log.append_object(now_ms(), event) {
            self.failed = Some(Error::io("write", &self.path, e));
        }
    }

    /// Redacts `value` as events are before they are written.
    pub(crate) fn redact(&self, value: &mut Value) {
        if !self.secrets.is_empty() {
            redact(value, &self.secrets);
        }
    }

    /// The first write that failed, if any.
    pub(crate) fn finish(self) -> Result<(), Error> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// Replaces every occurrence of each secret in the strings and keys of `value` with `***`.
pub fn redact(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(s) => redact_text(s, secrets),
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, secrets)),
        Value::Object(fields) => {
            if fields
                .keys()
                .any(|k| secrets.iter().any(|s| k.contains(s.as_str())))
            {
                let old = std::mem::take(fields);
                *fields = old
                    .into_iter()
                    .map(|(mut k, v)| {
                        redact_text(&mut k, secrets);
                        (k, v)
                    })
                    .collect::<Map<String, Value>>();
            }
            fields.values_mut().for_each(|v| redact(v, secrets));
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn redact_text(text: &mut String, secrets: &[String]) {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if text.contains(secret.as_str()) {
            *text = text.replace(secret.as_str(), "***");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_become_stars_in_strings_and_keys_at_any_depth() {
        let mut v = json!({
            "event": "step_finished",
            "record": {"result": ["a tok-123 b", {"tok-123": "x"}], "n": 1, "ok": true},
        });
        redact(&mut v, &["tok-123".to_string(), String::new()]);
        assert_eq!(
            v,
            json!({
                "event": "step_finished",
                "record": {"result": ["a *** b", {"***": "x"}], "n": 1, "ok": true},
            })
        );
    }
}
