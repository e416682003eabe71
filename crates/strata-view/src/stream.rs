//! A run's events as server-sent events: its event log tailed from where the page asks
//! (`Last-Event-ID`, or `?from=`: a byte offset of the log, which is each message's id),
//! the events read at once sent as one message (a JSON array of at most [`BATCH`] events),
//! every event redacted again before it is sent, until the run has finished (then an `end` event)
//! or no process runs it and nothing more is written.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::Value;
use strata_runs::RunDir;

/// How often the log is read for new events.
pub const POLL: Duration = Duration::from_millis(50);

/// The most events one message carries (a message is a JSON array of events; its id is
/// the offset just past the last).
pub const BATCH: usize = 500;

/// How long a quiet stream goes without a comment line (which finds a page that left).
const HEARTBEAT: Duration = Duration::from_secs(10);

/// The response head of a stream.
const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";

/// The fields of an event the page loads only when a step is shown in detail (from
/// `/api/runs/<id>/event?at=…`): what makes a large run's stream heavy.
const DETAIL: [&str; 6] = [
    "record",
    "arguments",
    "changes",
    "result",
    "stderr",
    "inputs",
];

/// An event as streamed: `at`, the byte offset of its line (where its whole form is read),
/// its heavy fields left out (a step's exit code kept), an error (its own, or its record's)
/// reduced to its message.
pub fn slim(mut event: Value, at: u64) -> Value {
    let Value::Object(fields) = &mut event else {
        return event;
    };
    let exit = fields
        .get("record")
        .and_then(|r| r.get("run"))
        .and_then(|r| r.get("exit_code"))
        .cloned();
    let failure = fields
        .get("error")
        .or_else(|| fields.get("record")?.get("error"));
    let message = failure.and_then(|e| e.get("message")).cloned();
    for key in DETAIL {
        fields.remove(key);
    }
    if let Some(code) = exit {
        fields.insert("exit_code".into(), code);
    }
    if let Some(message) = message {
        fields.insert("error".into(), serde_json::json!({ "message": message }));
    }
    fields.insert("at".into(), at.into());
    event
}

/// True for the event that ends a run (`run_finished` of a plan, `finished` of a graph).
fn ends_run(event: &Value) -> bool {
    matches!(event["event"].as_str(), Some("run_finished" | "finished"))
}

/// Streams the events of the run in `dir` from byte `from` of its log to `out`, each
/// redacted of `secrets`; returns when the run has ended, or when the page has gone.
pub fn tail(out: &mut dyn Write, dir: &RunDir, mut from: u64, secrets: &[String]) {
    if out.write_all(HEAD).and_then(|()| out.flush()).is_err() {
        return;
    }
    let mut quiet_since = Instant::now();
    loop {
        let Ok(read) = dir.read_events(from) else {
            return;
        };
        let mut ended = false;
        let mut chunk = Vec::new();
        let mut at = from;
        for batch in read.events.chunks(BATCH) {
            let mut events = Vec::with_capacity(batch.len());
            for (end, event) in batch {
                ended |= ends_run(event);
                events.push(slim(event.clone(), at));
                at = *end;
            }
            let mut events = Value::Array(events);
            strata_app::redact_secrets(&mut events, secrets);
            chunk.extend_from_slice(format!("id: {at}\ndata: {events}\n\n").as_bytes());
        }
        let idle = chunk.is_empty() && read.end == from;
        from = read.end;
        // A run nobody runs that wrote nothing new has stopped (killed, or waiting).
        if ended || (idle && !dir.is_locked()) {
            chunk.extend_from_slice(b"event: end\ndata: {}\n\n");
            let _ = out.write_all(&chunk).and_then(|()| out.flush());
            return;
        }
        if !chunk.is_empty() || quiet_since.elapsed() > HEARTBEAT {
            if !chunk.is_empty() {
                quiet_since = Instant::now();
            } else {
                chunk.extend_from_slice(b": waiting\n\n");
                quiet_since = Instant::now();
            }
            if out.write_all(&chunk).and_then(|()| out.flush()).is_err() {
                return;
            }
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_runs::{EventLog, RunStore};

    #[test]
    fn a_streamed_event_leaves_its_detail_for_later() {
        let event = serde_json::json!({"ts": 5, "event": "step_finished", "id": "b",
            "record": {"result": [1], "run": {"exit_code": 3, "stderr": "x"},
                       "error": {"kind": "tool_failed", "message": "no", "path": "a.b"}}});
        assert_eq!(
            slim(event, 120),
            serde_json::json!({"ts": 5, "event": "step_finished", "id": "b",
                "error": {"message": "no"}, "exit_code": 3, "at": 120})
        );
    }

    #[test]
    fn a_finished_run_streams_from_the_offset_asked_then_ends() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunStore::new(tmp.path()).create("r").unwrap();
        let mut log = EventLog::open(&dir).unwrap();
        log.append(1, &serde_json::json!({"event": "started", "x": "k3y"}))
            .unwrap();
        log.append(2, &serde_json::json!({"event": "finished"}))
            .unwrap();
        let mut out = Vec::new();
        tail(&mut out, &dir, 0, &["k3y".to_string()]);
        let text = String::from_utf8(out).unwrap();
        let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
        assert_eq!(
            body,
            "id: 65\ndata: [{\"ts\":1,\"event\":\"started\",\"x\":\"***\",\"at\":0},\
             {\"ts\":2,\"event\":\"finished\",\"at\":37}]\n\n\
             event: end\ndata: {}\n\n"
        );
        let mut out = Vec::new();
        tail(&mut out, &dir, 37, &[]);
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with(
            "id: 65\ndata: [{\"ts\":2,\"event\":\"finished\",\"at\":37}]\n\nevent: end\ndata: {}\n\n"
        ));
        assert!(!text.contains("started"));
    }
}
