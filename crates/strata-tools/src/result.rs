//! The outcome of one run, and its JSON form.

use std::time::Duration;

use serde_json::{json, Value};

/// What happened when a tool ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// Exit code 0 and not timed out.
    pub success: bool,
    /// The exit code; `None` when the child was killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed the child, if one did.
    pub signal: Option<i32>,
    /// Captured standard output (at most the cap).
    pub stdout: Vec<u8>,
    /// Captured standard error (at most the cap).
    pub stderr: Vec<u8>,
    /// True when stdout went past the cap (the rest was read and dropped).
    pub stdout_truncated: bool,
    /// True when stderr went past the cap.
    pub stderr_truncated: bool,
    /// True when the timeout killed the child's process group.
    pub timed_out: bool,
    /// From spawn to exit.
    pub duration: Duration,
}

impl RunResult {
    /// Stdout parsed as JSON, when it is complete and is JSON; else null.
    pub fn data(&self) -> Value {
        if self.stdout_truncated {
            return Value::Null;
        }
        std::str::from_utf8(&self.stdout)
            .ok()
            .and_then(|text| strata_doc::json_value(text).ok())
            .unwrap_or(Value::Null)
    }

    /// What the tool returned, as a step record's `result`: stdout parsed as JSON, or else the
    /// text with one trailing newline removed (empty output is null). Bytes that are not
    /// UTF-8 show as U+FFFD.
    pub fn result(&self) -> Value {
        if !self.stdout_truncated {
            // Read as every document is read (strata_doc): numbers in one form, a repeated
            // key or a number that is not finite refused (the output is then text).
            if let Some(v) = std::str::from_utf8(&self.stdout)
                .ok()
                .and_then(|text| strata_doc::json_value(text).ok())
            {
                return v;
            }
        }
        let text = String::from_utf8_lossy(&self.stdout);
        let text = text
            .strip_suffix("\r\n")
            .or_else(|| text.strip_suffix('\n'))
            .unwrap_or(&text);
        if text.is_empty() {
            Value::Null
        } else {
            Value::String(text.to_string())
        }
    }

    /// The process outcome, as a step record's `run`: `success`, `exit_code`, `signal`,
    /// `stderr`, `duration_ms`, `truncated`, `timed_out`.
    // Hand-written: a computed view (stderr bytes shown as text, milliseconds, both caps as
    // one `truncated`), not the struct's fields.
    pub fn outcome_json(&self) -> Value {
        json!({
            "success": self.success,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "stderr": String::from_utf8_lossy(&self.stderr),
            "duration_ms": self.duration.as_millis() as u64,
            "truncated": self.truncated(),
            "timed_out": self.timed_out,
        })
    }

    /// Why the run counts as a failure, naming `tool`: ``tool `x` exited with code 3``,
    /// ``tool `x` timed out``, ``tool `x` was killed by signal 9``.
    pub fn failure_message(&self, tool: &str) -> String {
        if self.timed_out {
            return format!("tool `{tool}` timed out");
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => format!("tool `{tool}` exited with code {code}"),
            (None, Some(sig)) => format!("tool `{tool}` was killed by signal {sig}"),
            (None, None) => format!("tool `{tool}` failed"),
        }
    }

    /// Replaces every occurrence of each secret (non-empty) in stderr with `***`, so that what
    /// a tool printed about its secrets never reaches a trace, a report or a checkpoint.
    pub fn redact_stderr<'s>(&mut self, secrets: impl IntoIterator<Item = &'s str>) {
        for secret in secrets.into_iter().filter(|s| !s.is_empty()) {
            let needle = secret.as_bytes();
            if !self.stderr.windows(needle.len()).any(|w| w == needle) {
                continue;
            }
            let mut out = Vec::with_capacity(self.stderr.len());
            let mut rest = self.stderr.as_slice();
            while let Some(i) = rest.windows(needle.len()).position(|w| w == needle) {
                out.extend_from_slice(&rest[..i]);
                out.extend_from_slice(b"***");
                rest = &rest[i + needle.len()..];
            }
            out.extend_from_slice(rest);
            self.stderr = out;
        }
    }

    /// A successful run that printed `stdout` (for fakes and tests).
    pub fn ok(stdout: impl Into<Vec<u8>>) -> RunResult {
        RunResult::exited(0, stdout, Vec::new())
    }

    /// A run that exited with `code` after printing `stdout` and `stderr` (for fakes and
    /// tests).
    pub fn exited(code: i32, stdout: impl Into<Vec<u8>>, stderr: impl Into<Vec<u8>>) -> RunResult {
        RunResult {
            success: code == 0,
            exit_code: Some(code),
            signal: None,
            stdout: stdout.into(),
            stderr: stderr.into(),
            stdout_truncated: false,
            stderr_truncated: false,
            timed_out: false,
            duration: Duration::ZERO,
        }
    }

    /// True when either stream went past the cap.
    pub fn truncated(&self) -> bool {
        self.stdout_truncated || self.stderr_truncated
    }

    /// The result object: `success`, `exit_code`, `stdout`, `stderr`, `data`, `duration_ms`,
    /// `truncated`, `timed_out` (output that is not UTF-8 is shown with U+FFFD).
    // Hand-written: a computed view (output bytes shown as text, `data` parsed from stdout,
    // milliseconds, both caps as one `truncated`), not the struct's fields.
    pub fn to_json(&self) -> Value {
        json!({
            "success": self.success,
            "exit_code": self.exit_code,
            "stdout": String::from_utf8_lossy(&self.stdout),
            "stderr": String::from_utf8_lossy(&self.stderr),
            "data": self.data(),
            "duration_ms": self.duration.as_millis() as u64,
            "truncated": self.truncated(),
            "timed_out": self.timed_out,
        })
    }

    /// The exit code `strata run` passes on: 0 on success, the tool's own code when it
    /// failed, 124 after a timeout, 128 + N when signal N killed it.
    pub fn process_exit_code(&self) -> u8 {
        if self.timed_out {
            return 124;
        }
        match (self.exit_code, self.signal) {
            (Some(0), _) if self.success => 0,
            (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1).max(1),
            (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(255),
            (None, None) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(stdout: &[u8]) -> RunResult {
        RunResult {
            success: true,
            exit_code: Some(0),
            signal: None,
            stdout: stdout.to_vec(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            timed_out: false,
            duration: Duration::from_millis(12),
        }
    }

    #[test]
    fn json_stdout_becomes_data() {
        let r = result(b"{\"a\": [1, 2]}\n");
        assert_eq!(
            r.to_json(),
            json!({"success": true, "exit_code": 0, "stdout": "{\"a\": [1, 2]}\n", "stderr": "",
                   "data": {"a": [1, 2]}, "duration_ms": 12, "truncated": false, "timed_out": false})
        );
        assert_eq!(result(b"plain").data(), Value::Null);
    }

    #[test]
    fn output_is_read_as_documents_are() {
        assert_eq!(result(b"{\"a\": 1.50}").result(), json!({"a": 1.5}));
        // A repeated key or a number out of range is no JSON: the output stays text.
        assert_eq!(result(b"{\"a\": 1, \"a\": 2}").data(), Value::Null);
        assert_eq!(result(b"{\"a\": 1e400}").result(), json!("{\"a\": 1e400}"));
    }

    #[test]
    fn exit_codes_follow_the_outcome() {
        let mut r = result(b"");
        assert_eq!(r.process_exit_code(), 0);
        r.success = false;
        r.exit_code = Some(3);
        assert_eq!(r.process_exit_code(), 3);
        r.exit_code = None;
        r.signal = Some(9);
        assert_eq!(r.process_exit_code(), 137);
        r.timed_out = true;
        assert_eq!(r.process_exit_code(), 124);
    }
}
