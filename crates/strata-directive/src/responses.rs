//! A directive's canned responses (SPEC §7): the `responses:` section checked and compiled at
//! load, and the reply chosen after the actions — the first candidate whose condition holds
//! and whose fields can all be filled.

use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};
use strata_context::{When, WhenError};
use strata_core::{ContextSource, Error, ErrorKind, FieldPath, Limits, Location, PathSeg};
use strata_doc::Document;
use strata_pipeline::Template;
use strata_responses::names::name_problem;
use strata_responses::{
    Field, Generate, Generator, JinjaLimits, Place, Reply, Response, Sources, ToolResult, RESPONSE,
};
use strata_tools::{CallOptions, StepStatus, ToolRunner};

use crate::front_matter::FrontMatter;
use crate::hooks::under;
use crate::load::{stages, Directive};
use crate::run::ActionOutcome;

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

fn at(keys: &[&str]) -> FieldPath {
    FieldPath(keys.iter().map(|k| key(k)).collect())
}

/// The field path of candidate `index`.
fn candidate_path(index: usize) -> FieldPath {
    at(&["responses", "candidates"]).child(PathSeg::Index(index))
}

/// A compiled candidate of `responses.candidates`.
#[derive(Debug)]
pub struct Candidate {
    /// Its position in `responses.candidates`.
    pub index: usize,
    /// Its id, when it has one.
    pub id: Option<String>,
    /// When it applies.
    pub when: Option<When>,
    /// The compiled template.
    pub response: Response,
}

impl Candidate {
    /// Its id, or `candidates[<index>]`.
    pub fn name(&self) -> String {
        self.id
            .clone()
            .unwrap_or_else(|| format!("candidates[{}]", self.index))
    }

    /// The field path of its template (`responses.candidates[0].template`).
    pub fn template_path(&self) -> FieldPath {
        candidate_path(self.index).child(key("template"))
    }
}

/// The compiled `responses:` section.
#[derive(Debug)]
pub(crate) struct Responses {
    /// `responses.std` as a stages 1–2 template.
    pub std: Template,
    /// The generator tool.
    pub generator: Option<String>,
    /// The candidates, in order.
    pub candidates: Vec<Candidate>,
}

/// Checks and compiles the `responses:` section of `front` (none when absent).
pub(crate) fn compile(
    front: &FrontMatter,
    doc: &Document,
    tools: &dyn ToolRunner,
    limits: &Limits,
) -> Result<Option<Responses>, Error> {
    let Some(spec) = &front.responses else {
        return Ok(None);
    };
    let invalid = |path: FieldPath, message: String| {
        doc.locate_error(Error::new(RESPONSE, ErrorKind::Invalid, message).at_path(&path))
    };
    if spec.candidates.is_empty() {
        return Err(invalid(
            at(&["responses", "candidates"]),
            "`responses` needs at least one candidate".into(),
        ));
    }
    if let Some(tool) = &spec.generator {
        if !tools.has_tool(tool) {
            let e = tools.unknown_tool(tool);
            return Err(doc.locate_error(e.at_path(&at(&["responses", "generator"]))));
        }
    }
    for name in spec.std.variables.keys() {
        if let Some(problem) = name_problem(&format!("std.variables.{name}")) {
            return Err(invalid(
                at(&["responses", "std", "variables", name]),
                problem,
            ));
        }
    }
    let std_path = at(&["responses", "std"]);
    let std_source = std_path.lookup(&doc.value).cloned().unwrap_or(json!({}));
    let std = Template::compile(&std_source, &stages(), limits)
        .map_err(|e| doc.locate_error(under(e, &std_path)))?;
    let mut candidates: Vec<Candidate> = Vec::new();
    for (index, c) in spec.candidates.iter().enumerate() {
        let path = candidate_path(index);
        if let Some(id) = &c.id {
            if candidates.iter().any(|o| o.id.as_ref() == Some(id)) {
                return Err(invalid(
                    path.child(key("id")),
                    format!("candidate id `{id}` is used twice"),
                ));
            }
        }
        let when = match &c.condition {
            Some(v) => Some(When::parse(v).map_err(|e| match e {
                WhenError::Expr(e) => doc.locate_error(under(e, &path.child(key("condition")))),
                WhenError::Structured(m) => {
                    invalid(path.child(key("condition")), format!("bad condition: {m}"))
                }
            })?),
            None => None,
        };
        let template_path = path.child(key("template"));
        let response = Response::compile(c.template.as_str(), None, JinjaLimits::default())
            .map_err(|e| doc.locate_error(under(e, &template_path)))?;
        candidates.push(Candidate {
            index,
            id: c.id.clone(),
            when,
            response,
        });
    }
    Ok(Some(Responses {
        std,
        generator: spec.generator.clone(),
        candidates,
    }))
}

/// The reply of a directive: the candidate chosen and its rendered response.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// The candidate's position in `responses.candidates`.
    pub index: usize,
    /// The candidate's id, when it has one.
    pub id: Option<String>,
    /// The rendered text and every field with its source.
    pub reply: Reply,
}

impl Chosen {
    /// The candidate's id, or `candidates[<index>]`.
    pub fn name(&self) -> String {
        self.id
            .clone()
            .unwrap_or_else(|| format!("candidates[{}]", self.index))
    }

    /// `{reply, candidate: {index, id}, fields: [{field, source, from?, value}]}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The JSON form of a [`Chosen`]: a derived form rather than the struct itself, because the
/// reply's text and fields stand around the candidate.
#[derive(Serialize)]
struct ChosenForm<'a> {
    reply: &'a str,
    candidate: CandidateRef<'a>,
    fields: &'a [Field],
}

#[derive(Serialize)]
struct CandidateRef<'a> {
    index: usize,
    id: Option<&'a str>,
}

impl Serialize for Chosen {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ChosenForm {
            reply: &self.reply.text,
            candidate: CandidateRef {
                index: self.index,
                id: self.id.as_deref(),
            },
            fields: &self.reply.fields,
        }
        .serialize(s)
    }
}

/// What a run hands to [`reply`].
pub(crate) struct Turn<'a> {
    /// The rendered `responses.std`.
    pub std: Value,
    /// The namespaces conditions see (`steps`, `inputs`, `directive`, …).
    pub context: &'a dyn ContextSource,
    /// Every action, in run order.
    pub actions: &'a [ActionOutcome],
    /// The runner of the generator (and the source of parameter schemas).
    pub tools: &'a dyn ToolRunner,
    /// Values that are secret.
    pub secrets: &'a [String],
}

impl Directive {
    /// The file position of a field of this directive.
    fn location(&self, path: &FieldPath, offset: Option<usize>) -> Location {
        let (line, column) = self.locate(path, offset);
        Location {
            file: self.file.clone(),
            line,
            column,
        }
    }

    /// Gives an error from the template at `path` its field path and file position, unless
    /// it already points into a source.
    fn located(&self, e: Error, path: &FieldPath) -> Error {
        if e.location().is_some() {
            return e;
        }
        let e = e.map_path(|p| p.under(path));
        let location = self.location(e.path(), e.span().map(|s| s.start));
        e.at_location(location)
    }
}

/// The parameters the actions that did not complete lacked: required by their tool's
/// parameter schema, and absent or null in the rendered parameters.
fn missing_params(actions: &[ActionOutcome], tools: &dyn ToolRunner) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for a in actions {
        let failed = a
            .record
            .as_ref()
            .is_some_and(|r| r.status == StepStatus::Failed);
        let Some(schema) = tools.parameters(&a.tool).filter(|_| failed) else {
            continue;
        };
        let required = schema.get("required").and_then(Value::as_array);
        for name in required.into_iter().flatten().filter_map(Value::as_str) {
            let given = a.params.get(name).is_some_and(|v| !v.is_null());
            if !given && !out.iter().any(|o| o == name) {
                out.push(json!(name));
            }
        }
    }
    out
}

/// Chooses and renders the reply: the first candidate whose condition holds and whose
/// fields can all be filled; no such candidate is an error listing, per candidate, why.
pub(crate) fn reply(d: &Directive, r: &Responses, turn: Turn<'_>) -> Result<Chosen, Error> {
    let mut std = match turn.std {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    std.insert(
        "missing_params".into(),
        Value::Array(missing_params(turn.actions, turn.tools)),
    );
    let std = Value::Object(std);
    let std_path = at(&["responses", "std"]);
    let std_at = match std_path.lookup(d.front_value()) {
        Some(_) => d.location(&std_path, None),
        None => d.location(&at(&["responses"]), None),
    };
    let action_at: Vec<Location> = (0..turn.actions.len())
        .map(|i| d.location(&at(&["actions"]).child(PathSeg::Index(i)), None))
        .collect();
    let mut results = Vec::new();
    for (a, loc) in turn.actions.iter().zip(&action_at) {
        let Some(record) = a
            .record
            .as_ref()
            .filter(|r| r.status == StepStatus::Completed)
        else {
            continue;
        };
        let label = format!("step `{}` ({})", a.id, a.tool);
        results.extend(ToolResult::of(label, &record.result, Place::At(loc))?);
    }
    let generator_at = d.location(&at(&["responses", "generator"]), None);
    let generator = r.generator.as_deref().map(|tool| Generator {
        tool,
        runner: turn.tools,
        call: CallOptions::default(),
        place: Place::At(&generator_at),
    });
    let sources = Sources {
        std: &std,
        std_place: Place::At(&std_at),
        tools: &results,
        generator: generator.as_ref().map(|g| g as &dyn Generate),
        secrets: turn.secrets,
    };
    let mut why = Vec::new();
    for c in &r.candidates {
        if let Some(when) = &c.when {
            let holds = when.eval(turn.context).map_err(|m| {
                let e = Error::new(
                    RESPONSE,
                    m.kind(),
                    format!("condition of candidate `{}`: {}", c.name(), m.message()),
                );
                d.located(e, &candidate_path(c.index).child(key("condition")))
            })?;
            if !holds {
                why.push(format!(
                    "`{}`: condition `{}` is false",
                    c.name(),
                    when.source()
                ));
                continue;
            }
        }
        let extraction = c.response.extract(&sources);
        if !extraction.is_complete() {
            let missing: Vec<String> = extraction.missing.iter().map(|m| m.describe()).collect();
            why.push(format!("`{}`: missing {}", c.name(), missing.join(", ")));
            continue;
        }
        let path = c.template_path();
        let fields = extraction
            .complete(&c.response, &sources)
            .map_err(|e| d.located(e, &path))?;
        let text = c
            .response
            .render(&fields)
            .map_err(|e| d.located(e, &path))?;
        return Ok(Chosen {
            index: c.index,
            id: c.id.clone(),
            reply: Reply { text, fields },
        });
    }
    let e = Error::new(
        RESPONSE,
        ErrorKind::MissingFields,
        format!(
            "no response candidate can be rendered: {}",
            why.join("; ")
        ),
    )
    .with_hint("a tool provides a field in the `canned_response_fields` object of its result; `std.*` come from `responses.std`, `generative.*` from `responses.generator`");
    Err(d.located(e, &at(&["responses", "candidates"])))
}

impl Directive {
    /// The candidates of `responses:` (none without the section).
    pub fn candidates(&self) -> &[Candidate] {
        self.responses.as_ref().map_or(&[], |r| &r.candidates)
    }

    /// The generator of `responses:`, when one is configured.
    pub fn generator(&self) -> Option<&str> {
        self.responses.as_ref().and_then(|r| r.generator.as_deref())
    }
}
