//! The JSON Lines protocol of `strata render --batch`: one request per line, one reply per
//! line, in order. Every line that is not empty gets a reply: a malformed one (not JSON, not
//! UTF-8, blank, longer than the document limit) an error reply, and the next lines are
//! still served. A request may carry an `id`, which its reply echoes.

use std::io::{self, BufRead, Write};

use serde::Deserialize;
use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Error, ErrorKind, Layer, Limits, RenderOptions, Scope, Warning};

use strata_doc::{Document, Format};

use crate::{Chain, Template};

/// One request line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    /// Echoed in the reply; read before the rest of the request.
    #[serde(default, rename = "id")]
    _id: Option<Value>,
    template: Value,
    #[serde(default)]
    layers: Option<Vec<String>>,
    #[serde(default)]
    env: Map<String, Value>,
    #[serde(default)]
    secrets: Vec<String>,
    #[serde(default)]
    params: Map<String, Value>,
    #[serde(default)]
    context: Map<String, Value>,
    #[serde(default)]
    inputs: Map<String, Value>,
    #[serde(default)]
    strict: bool,
}

/// Serves requests from `input` until it ends, writing one reply line per line that is not
/// empty (a line of zero bytes, or a lone `\r`, is skipped). Fails only when reading or
/// writing fails.
///
/// A line longer than `limits.document_bytes` is answered with an error without being kept
/// in memory; the bytes of a line need not be UTF-8 (a line that is not gets an error reply).
pub fn serve(mut input: impl BufRead, mut output: impl Write, limits: &Limits) -> io::Result<()> {
    let mut line = Vec::new();
    while let Some(fits) = strata_doc::read_line(&mut input, limits.document_bytes, &mut line)? {
        if fits && line.is_empty() {
            continue;
        }
        let reply = if fits {
            handle_bytes(&line, limits)
        } else {
            error_reply(
                None,
                &Error::new(
                    Layer::REQUEST,
                    ErrorKind::Limit,
                    format!(
                        "request line exceeds the limit of {} bytes",
                        limits.document_bytes
                    ),
                )
                .with_hint("pass large values in several requests"),
            )
        };
        serde_json::to_writer(&mut output, &reply)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

/// The reply to one request line given as bytes (which need not be UTF-8).
pub fn handle_bytes(line: &[u8], limits: &Limits) -> Value {
    match std::str::from_utf8(line) {
        Ok(text) => handle_line(text, limits),
        Err(e) => {
            // The id, if one can be read from what is valid, still goes back.
            let id = id_of(&String::from_utf8_lossy(line), limits);
            let err = Error::new(
                Layer::REQUEST,
                ErrorKind::Request,
                format!(
                    "malformed request: not valid UTF-8 (byte {})",
                    e.valid_up_to()
                ),
            )
            .with_hint("a request is one line of UTF-8 JSON");
            error_reply(id, &err)
        }
    }
}

/// The reply to one request line.
pub fn handle_line(line: &str, limits: &Limits) -> Value {
    let value = match parse_value(line, limits) {
        Ok(value) => value,
        Err(e) => return error_reply(None, &e),
    };
    let id = value.get("id").cloned();
    match parse_request(value).and_then(|request| render(request, limits)) {
        Ok(reply) => with_id(id, reply),
        Err(e) => error_reply(id, &e),
    }
}

const HINT: &str = "a request is one JSON object: {\"template\": …, \"layers\", \"env\", \"secrets\", \"params\", \"context\", \"inputs\", \"strict\"}";

fn bad(message: String) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Request, message).with_hint(HINT)
}

/// The request line as JSON, read like every document (no duplicate keys, within the
/// limits).
fn parse_value(line: &str, limits: &Limits) -> Result<Value, Error> {
    if line.trim().is_empty() {
        return Err(bad("empty request".to_string()));
    }
    match Document::parse("<request>", line.as_bytes().to_vec(), Format::Json, limits) {
        Ok(doc) => Ok(doc.value),
        Err(e) => {
            let message = e
                .message
                .strip_prefix("JSON syntax error: ")
                .unwrap_or(&e.message);
            let at = e
                .location
                .as_ref()
                .map(|l| format!(" at line {} column {}", l.line, l.column))
                .unwrap_or_default();
            let mut err = bad(format!("malformed request: {message}{at}"));
            if e.kind == ErrorKind::Limit {
                err.kind = ErrorKind::Limit;
            }
            Err(err)
        }
    }
}

/// The `id` of a request line, when the line is a JSON object that has one.
fn id_of(line: &str, limits: &Limits) -> Option<Value> {
    parse_value(line, limits).ok()?.get("id").cloned()
}

fn parse_request(value: Value) -> Result<Request, Error> {
    if !value.is_object() {
        return Err(bad("a request must be a JSON object".to_string()));
    }
    serde_json::from_value(value).map_err(|e| bad(format!("malformed request: {e}")))
}

fn render(request: Request, limits: &Limits) -> Result<Value, Error> {
    let chain = match &request.layers {
        Some(names) => Chain::from_names(names)?,
        None => Chain::full(),
    };
    let mut env = EnvMap::default();
    for (name, value) in request.env {
        let Value::String(value) = value else {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Request,
                format!(
                    "env value of `{}` must be a string",
                    strata_core::shown(&name)
                ),
            ));
        };
        env.set(name, value, false);
    }
    for name in &request.secrets {
        env.mark_secret(name);
    }
    let context = Value::Object(request.context);
    let scope = Scope {
        env: &env,
        caller_params: &request.params,
        context: &context,
        inputs: &request.inputs,
        ..Scope::default()
    };
    let template = Template::compile_owned(request.template, &chain, limits)?;
    let out = template.render(&scope, &RenderOptions::strict_if(request.strict))?;
    let warnings: Vec<Value> = out.warnings.iter().map(Warning::to_json).collect();
    Ok(json!({"ok": true, "value": out.value.into_json(), "warnings": warnings}))
}

/// `reply` with `"id"` first, when the request had one.
fn with_id(id: Option<Value>, reply: Value) -> Value {
    let (Some(id), Value::Object(fields)) = (id, &reply) else {
        return reply;
    };
    let mut out = Map::with_capacity(fields.len() + 1);
    out.insert("id".to_string(), id);
    out.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
    Value::Object(out)
}

fn error_reply(id: Option<Value>, e: &Error) -> Value {
    with_id(id, json!({"ok": false, "error": e.to_json()}))
}
