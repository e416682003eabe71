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

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::io::{self, Read, Write};
use std::rc::Rc;

use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Error, ErrorKind, Layer, Limits, RenderOptions, Scope, Warning};

use strata_doc::{Bounded, Budget, Document, Format, Line};

use crate::{Chain, Output, Template};

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
#[derive(Debug, Default)]
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

/// The fields of a request, in the order [`Request`] names them.
const FIELDS: [&str; 9] = [
    "id", "template", "layers", "env", "secrets", "params", "context", "inputs", "strict",
];

/// A request read in one pass: its id, its template as written, and its other parts.
struct Fast<'a> {
    id: Option<Value>,
    template: Option<&'a RawValue>,
    parts: Parts,
}

/// Reads a request line in one pass against `budget`: the same fields, types, limits and
/// refusals (duplicate keys, numbers that are not finite) as the general reading, whose
/// value it would have built; the template is kept as text. Any refusal — including those
/// the general reading accepts, such as a key written with escapes — only sends the line
/// to the general reading, which then answers it.
struct FastSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for FastSeed<'_> {
    type Value = Fast<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Fast<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FastSeed<'_> {
    type Value = Fast<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fast<'de>, A::Error> {
        use serde::de::Error as _;
        fn take<'de, T: Deserialize<'de>, E: serde::de::Error>(v: Value) -> Result<T, E> {
            T::deserialize(v).map_err(E::custom)
        }
        fn object<E: serde::de::Error>(v: Value) -> Result<Map<String, Value>, E> {
            match v {
                Value::Object(m) => Ok(m),
                _ => Err(E::custom("not an object")),
            }
        }
        let budget = self.0;
        budget.charge(1, 0)?;
        let mut fast = Fast {
            id: None,
            template: None,
            parts: Parts::default(),
        };
        let mut seen = [false; FIELDS.len()];
        while let Some(key) = map.next_key::<&'de str>()? {
            budget.charge(0, key.len())?;
            let Some(field) = FIELDS.iter().position(|f| *f == key) else {
                return Err(A::Error::unknown_field(key, &FIELDS));
            };
            if std::mem::replace(&mut seen[field], true) {
                return Err(A::Error::duplicate_field(FIELDS[field]));
            }
            if field == 1 {
                fast.template = Some(map.next_value()?);
                continue;
            }
            let value = map.next_value_seed(Bounded(budget))?;
            let parts = &mut fast.parts;
            match field {
                0 => fast.id = Some(value),
                2 => parts.layers = take(value)?,
                3 => parts.env = object(value)?,
                4 => parts.secrets = take(value)?,
                5 => parts.params = object(value)?,
                6 => parts.context = object(value)?,
                7 => parts.inputs = object(value)?,
                _ => parts.strict = take(value)?,
            }
        }
        Ok(fast)
    }
}

/// The id, compiled template and parts of a request line, read in one pass; `None` when
/// that pass does not accept the line (see [`FastSeed`]).
fn read_fast(
    line: &str,
    limits: &Limits,
    cache: &mut Cache,
) -> Option<(Option<Value>, Rc<Template>, Parts)> {
    let budget = Budget::of(limits);
    let mut de = serde_json::Deserializer::from_str(line);
    let fast = FastSeed(&budget).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let raw = fast.template?;
    let template = cache.get(raw, fast.parts.layers.as_deref(), &budget, limits)?;
    Some((fast.id, template, fast.parts))
}

/// Templates compiled for earlier requests, keyed by their layers and JSON text, with what
/// reading them counted against a request's budget. Bounded: when it holds
/// [`Cache::MAX_ENTRIES`] templates or [`Cache::MAX_BYTES`] bytes of their text, it is
/// emptied before the next one goes in.
///
/// Looked up by a hash of the layers and the text (foldhash: no allocation and no SipHash per
/// request), each entry holding its key to compare.
#[derive(Default)]
struct Cache {
    templates: HashMap<u64, Vec<Cached>, BuildHasherDefault<Identity>>,
    entries: usize,
    bytes: usize,
}

struct Cached {
    layers: Option<Vec<String>>,
    text: Box<str>,
    template: Rc<Template>,
    nodes: usize,
    bytes: usize,
}

/// The hasher of keys that are hashes already.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The hash of a template's layers and text.
fn key_hash(layers: Option<&[String]>, text: &str) -> u64 {
    use std::hash::BuildHasher;
    static SEED: std::sync::OnceLock<foldhash::fast::FixedState> = std::sync::OnceLock::new();
    let state = SEED.get_or_init(|| foldhash::fast::FixedState::with_seed(0x5eed));
    let mut h = state.build_hasher();
    layers.hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

impl Cache {
    const MAX_ENTRIES: usize = 1024;
    const MAX_BYTES: usize = 16 << 20;

    /// The template written as `raw`, compiled for `layers`: from the cache (its nodes and
    /// bytes charged to `budget`), or read against `budget` and compiled now. `None` when
    /// reading or compiling it fails (the general reading then reports why).
    fn get(
        &mut self,
        raw: &RawValue,
        layers: Option<&[String]>,
        budget: &Budget,
        limits: &Limits,
    ) -> Option<Rc<Template>> {
        let text = raw.get();
        let hash = key_hash(layers, text);
        let hit = self.templates.get(&hash).and_then(|entries| {
            entries
                .iter()
                .find(|c| c.text.as_ref() == text && c.layers.as_deref() == layers)
        });
        if let Some(hit) = hit {
            budget
                .charge::<serde_json::Error>(hit.nodes, hit.bytes)
                .ok()?;
            return Some(Rc::clone(&hit.template));
        }
        let before = budget.counted();
        let value = strata_doc::read_json(text, budget).ok()?;
        let after = budget.counted();
        let chain = chain_of(layers).ok()?;
        let template = Rc::new(Template::compile_owned(value, &chain, limits).ok()?);
        if self.entries >= Self::MAX_ENTRIES || self.bytes + text.len() > Self::MAX_BYTES {
            self.templates.clear();
            self.entries = 0;
            self.bytes = 0;
        }
        self.bytes += text.len();
        self.entries += 1;
        let cached = Cached {
            layers: layers.map(<[String]>::to_vec),
            text: text.into(),
            template: Rc::clone(&template),
            nodes: after.0 - before.0,
            bytes: after.1 - before.1,
        };
        self.templates.entry(hash).or_default().push(cached);
        Some(template)
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
pub fn serve(input: impl Read, output: impl Write, limits: &Limits) -> io::Result<()> {
    let mut cache = Cache::default();
    strata_doc::serve_lines(
        input,
        output,
        limits.document_bytes,
        |line, replies| match line {
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
        },
    )
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
        .and_then(|text| read_fast(text, limits, cache));
    let reply = match fast {
        Some((id, template, mut parts)) => {
            match env_of(&mut parts).and_then(|env| render_into(&template, &env, parts, &id, out)) {
                Ok(()) => return,
                Err(e) => error_reply(id, &e),
            }
        }
        None => handle_bytes(line, limits),
    };
    write_reply(out, &reply);
}

/// Renders a request and appends its reply line to `out` as [`render`] and [`with_id`] make
/// it, written straight from the rendered value (no reply object is built, nothing copied);
/// on an error nothing is appended.
fn render_into(
    template: &Template,
    env: &EnvMap,
    mut parts: Parts,
    id: &Option<Value>,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let context = Value::Object(std::mem::take(&mut parts.context));
    let rendered = render_parts(template, env, &parts, &context)?;
    // Writing JSON into a `Vec` cannot fail.
    out.push(b'{');
    if let Some(id) = id {
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

/// Renders `template` for a request's parts; `context` is their context, taken out of them
/// (the output may borrow it).
fn render_parts<'t>(
    template: &'t Template,
    env: &'t EnvMap,
    parts: &'t Parts,
    context: &'t Value,
) -> Result<Output<'t>, Error> {
    let scope = Scope {
        env,
        caller_params: &parts.params,
        context,
        inputs: &parts.inputs,
        ..Scope::default()
    };
    template.render(&scope, &RenderOptions::strict_if(parts.strict))
}

fn render(template: &Template, env: &EnvMap, mut parts: Parts) -> Result<Value, Error> {
    let context = Value::Object(std::mem::take(&mut parts.context));
    let out = render_parts(template, env, &parts, &context)?;
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
