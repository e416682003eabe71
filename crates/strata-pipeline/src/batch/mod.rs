//! The JSON Lines protocol of `strata render --batch`: one request per line, one reply per
//! line, in order. Every line that is not empty gets a reply: a malformed one (not JSON, not
//! UTF-8, blank, longer than the document limit) an error reply, and the next lines are
//! still served. A request may carry an `id`, which its reply echoes.
//!
//! A request is read in one pass, straight into its parts (its template kept as the JSON text
//! it was written as); a template already compiled for an earlier request with the same text
//! and layers is taken from a bounded cache. A request that pass does not accept is read
//! again the general way, which gives every malformed request its exact error. Replies are
//! buffered and written out whenever no further request is already waiting in the input.

mod cache;
mod fast;
mod named;

use std::io::{self, Read, Write};

use serde::Deserialize;
use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Error, ErrorKind, Layer, Limits, RenderOptions, Scope, Warning};
use strata_doc::{Document, Format};
use strata_lines::Line;

use self::cache::Cache;
use crate::{Chain, Template};

/// One request line, as the general reading takes it.
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

/// Everything of a request but its template and id.
#[derive(Debug)]
struct Parts {
    layers: Option<Vec<String>>,
    env: Map<String, Value>,
    secrets: Vec<String>,
    params: Map<String, Value>,
    context: Map<String, Value>,
    inputs: Map<String, Value>,
    strict: bool,
}

impl Request {
    fn into_parts(self) -> (Value, Parts) {
        let parts = Parts {
            layers: self.layers,
            env: self.env,
            secrets: self.secrets,
            params: self.params,
            context: self.context,
            inputs: self.inputs,
            strict: self.strict,
        };
        (self.template, parts)
    }
}

/// Serves requests from `input` until it ends, writing one reply line per line that is not
/// empty (a line of zero bytes, or a lone `\r`, is skipped). Fails only when reading or
/// writing fails.
///
/// A line longer than `limits.document_bytes` is answered with an error without being kept
/// in memory; the bytes of a line need not be UTF-8 (a line that is not gets an error reply).
/// Replies are written out (flushed) each time the requests read so far are all answered:
/// a client that sends one line and waits gets its reply at once, and a stream of requests
/// costs one write per read, not one per reply.
///
/// Requests already waiting in the input are answered on as many threads as the process may
/// use at once ([`strata_lines::serving_threads`]), each with its own cache of compiled
/// templates; replies keep the order of the requests.
pub fn serve(input: impl Read, output: impl Write, limits: &Limits) -> io::Result<()> {
    let workers = strata_lines::serving_threads();
    strata_lines::serve_lines_parallel(input, output, limits.document_bytes, workers, || {
        let mut cache = Cache::one_of(workers);
        move |line: Line<'_>, replies: &mut Vec<u8>| match line {
            Line::Bytes(line) => reply_to(line, limits, &mut cache, replies),
            Line::TooLong => {
                let err = Error::new(
                    Layer::REQUEST,
                    ErrorKind::Limit,
                    format!(
                        "request line exceeds the limit of {} bytes",
                        limits.document_bytes
                    ),
                )
                .with_hint("pass large values in several requests");
                write_reply(replies, &error_reply(None, &err));
            }
        }
    })
}

fn write_reply(out: &mut Vec<u8>, reply: &Value) {
    // Writing a `Value` into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, reply);
    out.push(b'\n');
}

/// Appends the reply to one request line to `out`: from the one-pass reading when it
/// accepts the line, else from [`handle_bytes`].
fn reply_to(line: &[u8], limits: &Limits, cache: &mut Cache, out: &mut Vec<u8>) {
    let fast = std::str::from_utf8(line)
        .ok()
        .and_then(|text| fast::read(text, limits, cache));
    let reply = match fast {
        Some((request, template)) => match render_into(&template, &request, out) {
            Ok(()) => return,
            Err(e) => error_reply(request.id, &e),
        },
        None => handle_bytes(line, limits),
    };
    write_reply(out, &reply);
}

/// Renders a request and appends its reply line to `out` as [`render`] and [`with_id`] make
/// it, written straight from the rendered value (no reply object is built, nothing copied);
/// on an error nothing is appended.
fn render_into(
    template: &Template,
    request: &fast::Request<'_>,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let (scope, options) = request.scope();
    let rendered = template.render(&scope, &options)?;
    // Writing JSON into a `Vec` cannot fail.
    out.push(b'{');
    if let Some(id) = &request.id {
        out.extend_from_slice(b"\"id\":");
        let _ = serde_json::to_writer(&mut *out, id);
        out.push(b',');
    }
    out.extend_from_slice(b"\"ok\":true,\"value\":");
    let _ = serde_json::to_writer(&mut *out, &rendered.value);
    out.extend_from_slice(b",\"warnings\":[");
    for (i, w) in rendered.warnings.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, &w.to_json());
    }
    out.extend_from_slice(b"]}\n");
    Ok(())
}

/// The reply to one request line given as bytes (which need not be UTF-8).
pub fn handle_bytes(line: &[u8], limits: &Limits) -> Value {
    match std::str::from_utf8(line) {
        Ok(text) => handle_line(text, limits),
        Err(e) => {
            // The id, if one can be read from what is valid, still goes back.
            let id = strata_doc::request_id(line, limits);
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
        Err(e) => return error_reply(strata_doc::request_id(line.as_bytes(), limits), &e),
    };
    let id = value.get("id").cloned();
    // Layers, then the environment, then the template: the order errors are reported in.
    let rendered = parse_request(value).and_then(|request| {
        let (template, mut parts) = request.into_parts();
        let chain = chain_of(parts.layers.as_deref())?;
        let env = env_of(&mut parts)?;
        let template = Template::compile_owned(template, &chain, limits)?;
        render(&template, &env, parts)
    });
    match rendered {
        Ok(reply) => with_id(id, reply),
        Err(e) => error_reply(id, &e),
    }
}

/// The chain of a request's `layers` (all four when it names none).
fn chain_of(layers: Option<&[String]>) -> Result<Chain, Error> {
    match layers {
        Some(names) => Chain::from_names(names),
        None => Ok(Chain::full()),
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
            let (message, limit) = strata_doc::malformed_request(&e);
            let mut err = bad(message);
            if limit {
                err = err.with_kind(ErrorKind::Limit);
            }
            Err(err)
        }
    }
}

fn parse_request(value: Value) -> Result<Request, Error> {
    if !value.is_object() {
        return Err(bad("a request must be a JSON object".to_string()));
    }
    serde_json::from_value(value).map_err(|e| bad(format!("malformed request: {e}")).with_source(e))
}

/// The environment of a request: its `env` (every value a string) with its `secrets` marked.
fn env_of(parts: &mut Parts) -> Result<EnvMap, Error> {
    let mut env = EnvMap::default();
    for (name, value) in std::mem::take(&mut parts.env) {
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
    for name in &parts.secrets {
        env.mark_secret(name);
    }
    Ok(env)
}

fn render(template: &Template, env: &EnvMap, parts: Parts) -> Result<Value, Error> {
    let context = Value::Object(parts.context);
    let scope = Scope {
        env,
        caller_params: &parts.params,
        context: &context,
        inputs: &parts.inputs,
        ..Scope::default()
    };
    let out = template.render(&scope, &RenderOptions::strict_if(parts.strict))?;
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
