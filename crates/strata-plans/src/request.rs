//! The machine interface of partial resolution (SPEC §5.7): a request
//! `{"id"?, "plan", "results"?, "failed"?, "values"?}` and its reply
//! `{"id"?, "ok": true, "levels", "steps", "missing_values"}` or
//! `{"id"?, "ok": false, "error": {kind, message, path, span}}`.

use std::collections::HashMap;
use std::io::{self, Read, Write};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, Layer, Limits, PathSeg};
use strata_lines::Line;
use strata_tools::{StepRecord, StepStatus};

use crate::fast::{self, FastPlan, Fields, Raw, Scratch};
use crate::plan::Plan;
use crate::resolve::RecordMap;
use crate::state::{assess, Assessment, State};

/// The keys of a request.
pub const REQUEST_KEYS: [&str; 5] = ["id", "plan", "results", "failed", "values"];

/// The error kinds a reply's `error.kind` may have; other kinds are reported as `request`.
pub const REPLY_KINDS: [ErrorKind; 7] = [
    ErrorKind::Cycle,
    ErrorKind::UnknownStep,
    ErrorKind::UnknownField,
    ErrorKind::Syntax,
    ErrorKind::DuplicateId,
    ErrorKind::Limit,
    ErrorKind::Request,
];

/// A request, read.
#[derive(Debug, Clone)]
pub struct Request {
    /// The caller's id for the request, echoed in the reply.
    pub id: Option<Value>,
    /// The plan.
    pub plan: Plan,
    /// The records of the steps that finished: completed with their results, or failed.
    pub records: RecordMap,
    /// The user values.
    pub values: Map<String, Value>,
}

fn request_error(message: impl Into<String>, path: FieldPath) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Request, message).at_path(&path)
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// The completed record of a step whose result an orchestrator reports.
pub fn completed(id: &str, result: Value) -> StepRecord {
    StepRecord {
        id: id.to_string(),
        status: StepStatus::Completed,
        result,
        error: None,
        run: None,
    }
}

/// The failed record of a step an orchestrator reports as failed.
pub fn failed(id: &str) -> StepRecord {
    StepRecord {
        id: id.to_string(),
        status: StepStatus::Failed,
        result: Value::Null,
        error: None,
        run: None,
    }
}

impl Request {
    /// Reads a request; the first problem is the error (plan errors name fields under
    /// `plan`).
    pub fn parse(value: &Value) -> Result<Request, Error> {
        let map = request_map(value)?;
        let plan = compile_plan(plan_of(map)?)?;
        Request::with_plan(
            map.get("id").cloned(),
            plan,
            map.get("results").cloned(),
            map.get("failed").cloned(),
            map.get("values").cloned(),
        )
    }

    /// A request for a plan already read: `results`, `failed` and `values` as in the JSON
    /// form (each may be absent or null; see [`progress`]).
    pub fn with_plan(
        id: Option<Value>,
        plan: Plan,
        results: Option<Value>,
        failed_ids: Option<Value>,
        values: Option<Value>,
    ) -> Result<Request, Error> {
        let (records, values) = progress(&plan, results, failed_ids, values)?;
        Ok(Request {
            id,
            plan,
            records,
            values,
        })
    }

    /// Assesses the plan and builds the reply.
    pub fn reply(&self) -> Value {
        let assessment = self.assess();
        with_id(self.id.as_ref(), ok_reply(&self.plan, assessment))
    }

    /// Assesses the plan against the request's records and values.
    pub fn assess(&self) -> Assessment {
        assess(&self.plan, &self.records, &self.values)
    }
}

/// What a request says of `plan`'s progress, in the JSON form: `results` (step id to
/// result) become completed records, `failed` (step ids) failed records, `values` (name to
/// value) the user values; each may be absent or null. Every id must be a step of the plan
/// (else `unknown_step` at `results.<id>` or `failed[i]`), and no step both completed and
/// failed.
pub fn progress(
    plan: &Plan,
    results: Option<Value>,
    failed_ids: Option<Value>,
    values: Option<Value>,
) -> Result<(RecordMap, Map<String, Value>), Error> {
    let mut records = RecordMap::default();
    match results {
        None | Some(Value::Null) => {}
        Some(Value::Object(results)) => {
            for (id, result) in results {
                known(plan, &id, FieldPath(vec![key("results"), key(&id)]))?;
                let record = completed(&id, result);
                records.insert(id, record);
            }
        }
        Some(_) => {
            return Err(request_error(
                "`results` must be an object of step id to result",
                FieldPath(vec![key("results")]),
            ))
        }
    }
    match failed_ids {
        None | Some(Value::Null) => {}
        Some(Value::Array(ids)) => {
            for (i, id) in ids.iter().enumerate() {
                let path = FieldPath(vec![key("failed"), PathSeg::Index(i)]);
                let Some(id) = id.as_str() else {
                    return Err(request_error("`failed` lists step ids (strings)", path));
                };
                known(plan, id, path.clone())?;
                if records.contains_key(id) {
                    return Err(request_error(
                        format!("step `{id}` is both in `results` and in `failed`"),
                        path,
                    ));
                }
                records.insert(id.to_string(), failed(id));
            }
        }
        Some(_) => {
            return Err(request_error(
                "`failed` must be a list of step ids",
                FieldPath(vec![key("failed")]),
            ))
        }
    }
    let values = match values {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(values)) => values,
        Some(_) => {
            return Err(request_error(
                "`values` must be an object of name to value",
                FieldPath(vec![key("values")]),
            ))
        }
    };
    Ok((records, values))
}

/// Step `id` must be a step of the plan.
fn known(plan: &Plan, id: &str, path: FieldPath) -> Result<(), Error> {
    if plan.find(id).is_some() {
        return Ok(());
    }
    let e = Error::new(
        Layer::REQUEST,
        ErrorKind::UnknownStep,
        format!("the plan has no step `{id}`"),
    )
    .at_path(&path);
    Err(match did_you_mean(id, plan.ids()) {
        Some(best) => e.with_hint(format!("did you mean `{best}`?")),
        None => e,
    })
}

/// A reply body with the request's id first, when it has one.
pub fn with_id(id: Option<&Value>, reply: Map<String, Value>) -> Value {
    let mut out = Map::with_capacity(reply.len() + 1);
    if let Some(id) = id {
        out.insert("id".into(), id.clone());
    }
    out.extend(reply);
    Value::Object(out)
}

/// The successful reply body: `ok`, then the [`resolution`].
pub fn ok_reply(plan: &Plan, assessment: Assessment) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("ok".into(), json!(true));
    out.extend(resolution(plan, assessment));
    out
}

/// A plan's partial resolution as the JSON form has it: `levels`, `steps` (plan order: `id`,
/// `depends_on`, `state`, and `arguments`, `waiting_for` and `error` where they apply) and
/// `missing_values`. The resolved arguments move into it.
// Hand-written: the resolved arguments move into the reply (a derived form would copy
// them), and the keys present depend on each step's state.
pub fn resolution(plan: &Plan, assessment: Assessment) -> Map<String, Value> {
    let steps: Vec<Value> = plan
        .steps
        .iter()
        .zip(assessment.steps)
        .enumerate()
        .map(|(i, (step, a))| {
            let mut s = Map::new();
            s.insert("id".into(), json!(step.id));
            let deps: Vec<&str> = plan.deps[i]
                .iter()
                .map(|&d| plan.steps[d].id.as_str())
                .collect();
            s.insert("depends_on".into(), json!(deps));
            s.insert("state".into(), json!(a.state.name()));
            if let Some(args) = a.arguments {
                s.insert("arguments".into(), args);
            }
            if matches!(a.state, State::Waiting | State::Blocked) {
                s.insert("waiting_for".into(), Value::from(a.waiting_for));
            }
            if let Some(e) = a.error {
                s.insert(
                    "error".into(),
                    json!({"kind": e.kind().name(), "message": e.message()}),
                );
            }
            Value::Object(s)
        })
        .collect();
    let mut out = Map::new();
    out.insert("levels".into(), json!(plan.level_ids()));
    out.insert("steps".into(), Value::Array(steps));
    out.insert(
        "missing_values".into(),
        Value::Array(
            assessment
                .missing_values
                .into_iter()
                .map(Value::String)
                .collect(),
        ),
    );
    out
}

/// The error reply: `{"id"?, "ok": false, "error": {kind, message, path, span}}`, the hint
/// (if any) appended to the message, a kind outside [`REPLY_KINDS`] reported as `request`.
pub fn error_reply(id: Option<&Value>, err: &Error) -> Value {
    let kind = if REPLY_KINDS.contains(&err.kind()) {
        err.kind()
    } else {
        ErrorKind::Request
    };
    let message = match err.hint() {
        Some(h) => format!("{}; {h}", err.message()),
        None => err.message().to_string(),
    };
    let error = ReplyError {
        kind: kind.name(),
        message,
        path: err.path().to_string(),
        span: err.span().map(|s| [s.start, s.end]),
    };
    let mut out = Map::new();
    out.insert("ok".into(), json!(false));
    out.insert(
        "error".into(),
        serde_json::to_value(error).unwrap_or(Value::Null),
    );
    with_id(id, out)
}

/// The `error` of an error reply.
#[derive(Serialize)]
struct ReplyError {
    kind: &'static str,
    message: String,
    path: String,
    span: Option<[usize; 2]>,
}

/// The request's fields: an object of the known keys, or the error.
fn request_map(value: &Value) -> Result<&Map<String, Value>, Error> {
    let Value::Object(map) = value else {
        return Err(request_error(
            "a request is a JSON object `{\"plan\": …, \"results\"?, \"failed\"?, \"values\"?}`",
            FieldPath::root(),
        ));
    };
    for k in map.keys() {
        if !REQUEST_KEYS.contains(&k.as_str()) {
            let e = request_error(
                format!("unknown request key `{k}`"),
                FieldPath(vec![key(k)]),
            );
            return Err(match did_you_mean(k, REQUEST_KEYS) {
                Some(best) => e.with_hint(format!("did you mean `{best}`?")),
                None => e.with_hint(format!("a request has {}", REQUEST_KEYS.join(", "))),
            });
        }
    }
    Ok(map)
}

/// The request's `plan`, or the error that it has none.
fn plan_of(map: &Map<String, Value>) -> Result<&Value, Error> {
    map.get("plan")
        .ok_or_else(|| request_error("a request needs a `plan`", FieldPath::root()))
}

/// A request's plan, compiled; its first error names fields under `plan`.
fn compile_plan(plan: &Value) -> Result<Plan, Error> {
    Plan::from_value(plan, &FieldPath(vec![key("plan")])).map_err(|errors| {
        errors
            .into_iter()
            .next()
            .unwrap_or_else(|| request_error("invalid plan", FieldPath::root()))
    })
}

/// Answers one line of `strata plan resolve --batch`: a request, or an error reply for a
/// line that is not one.
pub fn answer_line(line: &str) -> Value {
    answer_line_within(line, &Limits::default())
}

/// [`answer_line`], the plan's arguments resolving within `limits` (the project's).
pub fn answer_line_within(line: &str, limits: &Limits) -> Value {
    Resolver::new(limits).answer(line)
}

/// The fields of the request `line`, each as its JSON text, read in one pass; `None` when
/// it is no object, a key is not a request key, or a key is written twice (the line read
/// whole then reports it).
fn request_fields(line: &str) -> Option<HashMap<&str, &RawValue>> {
    /// Collects a map's entries, refusing a key that is not a request's or repeats.
    struct Fields;
    impl<'de> serde::de::Visitor<'de> for Fields {
        type Value = HashMap<&'de str, &'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a request object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut fields = HashMap::new();
            while let Some((k, v)) = map.next_entry::<&str, &RawValue>()? {
                if !REQUEST_KEYS.contains(&k) || fields.insert(k, v).is_some() {
                    return Err(serde::de::Error::custom("not read here"));
                }
            }
            Ok(fields)
        }
    }
    use serde::Deserializer as _;
    let mut de = serde_json::Deserializer::from_str(line);
    let fields = (&mut de).deserialize_map(Fields).ok()?;
    de.end().ok()?;
    Some(fields)
}

/// Answers the lines of `strata plan resolve --batch`, keeping the last request's plan
/// compiled: an orchestrator that sends the same plan with its growing results has it read
/// and compiled once, not once per request.
pub struct Resolver {
    limits: Limits,
    /// The last plan, as written in its request (JSON text), compiled, and the constant
    /// parts of its replies.
    last: Option<Cached>,
    /// Buffers the fast path keeps across requests.
    scratch: Scratch,
}

/// A plan kept between requests.
struct Cached {
    /// As written in its request (JSON text).
    written: String,
    plan: Plan,
    fast: FastPlan,
}

impl Resolver {
    /// A resolver whose plans' arguments resolve within `limits` (the project's).
    pub fn new(limits: &Limits) -> Resolver {
        Resolver {
            limits: limits.clone(),
            last: None,
            scratch: Scratch::default(),
        }
    }

    /// The reply to one request line (an error reply for a line that is not a request).
    pub fn answer(&mut self, line: &str) -> Value {
        if let Some(reply) = self.answer_read_borrowed(line) {
            return reply;
        }
        let value: Value = match strata_doc::json_value(line) {
            Ok(v) => v,
            Err(e) => {
                let err = Error::new(
                    Layer::REQUEST,
                    ErrorKind::Syntax,
                    format!("the line is not JSON: {e}"),
                )
                .with_source(e);
                let id = strata_doc::request_id(line.as_bytes(), &self.limits);
                return error_reply(id.as_ref(), &err);
            }
        };
        let id = value.get("id").cloned();
        match Request::parse(&value) {
            Ok(mut request) => {
                request.plan.limits = self.limits.clone();
                request.reply()
            }
            Err(e) => error_reply(id.as_ref(), &e),
        }
    }

    /// The reply to a well-formed request, its fields read as borrowed JSON text: its plan,
    /// when written as the last one was, is neither read nor compiled again. `None` for a
    /// line with anything to report (then read whole, for the same error as alone).
    fn answer_read_borrowed(&mut self, line: &str) -> Option<Value> {
        let fields = request_fields(line)?;
        let written = fields.get("plan")?.get();
        if !self.keep_plan(written) {
            return None;
        }
        let field = |k: &str| -> Option<Option<Value>> {
            match fields.get(k) {
                // Read twice to hold it to the depth the line read whole is held to.
                Some(raw) => Raw::parse(raw.get())
                    .and_then(|_| strata_doc::json_value(raw.get()).ok())
                    .map(Some),
                None => Some(None),
            }
        };
        let (id, results, failed_ids, values) = (
            field("id")?,
            field("results")?,
            field("failed")?,
            field("values")?,
        );
        let plan = &self.last.as_ref()?.plan;
        let (records, values) = progress(plan, results, failed_ids, values).ok()?;
        Some(with_id(
            id.as_ref(),
            ok_reply(plan, assess(plan, &records, &values)),
        ))
    }

    /// Keeps the plan written as `written` compiled (unless it is the last one already);
    /// false when it does not compile (or nests too deep to be read here).
    fn keep_plan(&mut self, written: &str) -> bool {
        if self.last.as_ref().is_some_and(|c| c.written == written) {
            return true;
        }
        if Raw::parse(written).is_none() {
            return false;
        }
        let Ok(value) = strata_doc::json_value(written) else {
            return false;
        };
        let Ok(mut plan) = compile_plan(&value) else {
            return false;
        };
        plan.limits = self.limits.clone();
        let fast = FastPlan::new(&plan);
        self.last = Some(Cached {
            written: written.to_string(),
            plan,
            fast,
        });
        true
    }

    /// Writes the reply to a well-formed request whose steps all resolve straight into
    /// `out` (with its newline), without building JSON values: the reply [`Resolver::answer`]
    /// gives, byte for byte. False, `out` unchanged, for any other line (answer it with
    /// [`Resolver::answer`]).
    pub fn answer_into(&mut self, line: &str, out: &mut Vec<u8>) -> bool {
        let last = self.last.as_ref().map(|c| c.written.as_str());
        let Some(fields) = Fields::parse(line, last) else {
            return false;
        };
        let Some(written) = fields.plan else {
            return false;
        };
        if !self.keep_plan(written) {
            return false;
        }
        let Some(c) = &self.last else {
            return false;
        };
        fast::answer(&c.plan, &c.fast, &fields, &mut self.scratch, out).is_some()
    }

    /// Serves request lines from `input` until it ends, one reply line each (see
    /// [`strata_lines::serve_lines_parallel`]: the lines waiting are shared among threads, each
    /// with a resolver of its own under `limits`, the replies in the order of the lines); a
    /// line longer than `limits.document_bytes` or not UTF-8 is answered with an error.
    pub fn serve(limits: &Limits, input: impl Read, output: impl Write) -> io::Result<()> {
        let workers = strata_lines::serving_threads();
        strata_lines::serve_lines_parallel(input, output, limits.document_bytes, workers, || {
            let mut resolver = Resolver::new(limits);
            move |line: Line<'_>, replies: &mut Vec<u8>| resolver.reply_to_line(line, replies)
        })
    }

    /// Appends the reply to one request line to `replies` (nothing for a blank line).
    fn reply_to_line(&mut self, line: Line<'_>, replies: &mut Vec<u8>) {
        let max = self.limits.document_bytes;
        let reply = match line {
            Line::Bytes(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) if text.trim().is_empty() => return,
                Ok(text) if self.answer_into(text, replies) => return,
                Ok(text) => self.answer(text),
                Err(_) => error_reply(
                    strata_doc::request_id(bytes, &self.limits).as_ref(),
                    &Error::new(
                        Layer::REQUEST,
                        ErrorKind::Syntax,
                        "the line is not valid UTF-8",
                    ),
                ),
            },
            Line::TooLong => error_reply(
                None,
                &Error::new(
                    Layer::REQUEST,
                    ErrorKind::Limit,
                    format!("request line exceeds the limit of {max} bytes"),
                )
                .with_hint("pass large results in several requests"),
            ),
        };
        // Writing a `Value` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *replies, &reply);
        replies.push(b'\n');
    }
}
