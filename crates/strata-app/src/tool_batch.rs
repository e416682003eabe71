//! The resident form of `strata run`: `strata run --batch` reads JSON Lines requests to run
//! tools (`{"tool": …, "params": {…}}`) and answers each with the step record of its run, so
//! a caller that runs many tools (a hook, a walker in another language) starts strata once.
//!
//! Each request runs as `strata run` runs the tool: through the gate (what `strata check`
//! rejects does not run), the project's limits, stages 3–6 and a real process, with secrets
//! kept out of the reply as every [`crate::Runner`] keeps them. The compiled tools and the gate's
//! verdicts stay in memory between requests: a tool whose files have not changed is neither
//! read, compiled nor checked again. Signals are those of `strata run`: SIGINT, SIGTERM,
//! SIGHUP or SIGQUIT kills the process group of the tool running and ends strata with the
//! signal. See docs/batch.md.

use std::io::{self, BufReader, Read, Write};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer, RenderOptions};
use strata_doc::{Document, Format};
use strata_project::ExecOptions;
use strata_tools::{CallOptions, StepRecord};

use crate::{App, Failure};

/// One request: the tool to run and how.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    /// Echoed in the reply.
    #[serde(default)]
    #[allow(dead_code)] // read from the line before the request is typed
    id: Value,
    /// The tool id.
    tool: String,
    /// The caller's parameters, typed (as `--params-json`).
    #[serde(default)]
    params: Map<String, Value>,
    /// Missing variables and parameters are errors (the project's setting when absent).
    #[serde(default)]
    strict: Option<bool>,
    /// Seconds: caps the tool's own timeout.
    #[serde(default)]
    timeout: Option<f64>,
}

const HINT: &str =
    "a request is one JSON object: {\"tool\": …, \"params\": {…}, \"id\", \"strict\", \"timeout\"}";

fn bad(message: String) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Request, message).with_hint(HINT)
}

/// Serves requests from `input` until it ends, one reply line per request line (an empty
/// line has none), each written and flushed as soon as its run is over. `strict` is the
/// strictness of a request that does not set its own (the command line's and the
/// project's). Fails only when reading the input or writing a reply fails.
pub fn serve(app: &App, input: impl Read, mut output: impl Write, strict: bool) -> io::Result<()> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    let mut reply = Vec::new();
    let cap = app.limits.document_bytes;
    while let Some(fits) = strata_lines::read_line(&mut input, cap, &mut line)? {
        if fits && line.is_empty() {
            continue;
        }
        let value = if fits {
            answer(app, &line, strict)
        } else {
            let err = Error::new(
                Layer::REQUEST,
                ErrorKind::Limit,
                format!("request line exceeds the limit of {cap} bytes"),
            );
            with_id(None, Failure::Error(err).to_json())
        };
        reply.clear();
        // Writing a `Value` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut reply, &value);
        reply.push(b'\n');
        output.write_all(&reply)?;
        output.flush()?;
    }
    Ok(())
}

/// The reply to one request line: `{"id"?, "ok": true, "record": …}` for a tool that ran
/// (whether it succeeded or not: the record says), `{"id"?, "ok": false, "error": …}` for
/// a request that ran nothing.
pub fn answer(app: &App, line: &[u8], strict: bool) -> Value {
    let value = match request_value(app, line) {
        Ok(value) => value,
        Err(failure) => {
            let id = strata_doc::request_id(line, &app.limits);
            return with_id(id, failure.to_json());
        }
    };
    let id = value.get("id").cloned();
    let outcome = serde_json::from_value::<Request>(value)
        .map_err(|e| Failure::Error(bad(format!("malformed request: {e}")).with_source(e)))
        .and_then(|request| run(app, &request, strict));
    match outcome {
        Ok(record) => {
            let mut reply = Map::new();
            reply.insert("ok".into(), Value::Bool(true));
            reply.insert("record".into(), record.to_json());
            with_id(id, Value::Object(reply))
        }
        Err(failure) => with_id(id, failure.to_json()),
    }
}

/// The line as a JSON object, read like every document (UTF-8, no duplicate keys, within
/// the limits).
fn request_value(app: &App, line: &[u8]) -> Result<Value, Failure> {
    let text = std::str::from_utf8(line).map_err(|e| {
        bad(format!(
            "malformed request: not valid UTF-8 (byte {})",
            e.valid_up_to()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(bad("empty request".to_string()).into());
    }
    let doc =
        Document::parse("<request>", line.to_vec(), Format::Json, &app.limits).map_err(|e| {
            let (message, limit) = strata_doc::malformed_request(&e);
            let err = bad(message);
            if limit {
                err.with_kind(ErrorKind::Limit)
            } else {
                err
            }
        })?;
    if !doc.value.is_object() {
        return Err(bad("a request must be a JSON object".to_string()).into());
    }
    Ok(doc.value)
}

/// Runs the tool of `request`: the gate first (a refusal carries the check's diagnostics),
/// then the run through the project's [`Runner`].
fn run(app: &App, request: &Request, strict: bool) -> Result<StepRecord, Failure> {
    let timeout = match request.timeout {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(
            Duration::try_from_secs_f64(s)
                .map_err(|_| bad(format!("timeout {s} is out of range")))?,
        ),
        Some(s) => {
            return Err(bad(format!(
                "timeout must be a positive number of seconds, not {s}"
            ))
            .into())
        }
    };
    let options = ExecOptions {
        render: RenderOptions::strict_if(request.strict.unwrap_or(strict)),
        base_env: None,
        cancel: None,
    };
    app.call_tool(
        &request.tool,
        &request.params,
        options,
        &CallOptions { timeout },
    )
}

/// `reply` with `"id": id` as its first field, when there is an id.
fn with_id(id: Option<Value>, reply: Value) -> Value {
    let Some(id) = id else {
        return reply;
    };
    let mut out = Map::new();
    out.insert("id".into(), id);
    if let Value::Object(fields) = reply {
        out.extend(fields);
    }
    Value::Object(out)
}
