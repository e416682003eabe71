//! The extraction chain of SPEC §7: each field of a response from the standard fields, then
//! the tool fields, then the generator — which runs last, only for the `generative.*` fields
//! the render needs, and only once no field the render needs is missing.

use std::borrow::Cow;

use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};
use strata_core::{for_each_leaf, value_to_text, Error, ErrorKind, FieldPath};

use crate::generator::Generate;
use crate::names::{is_generative, is_std};
use crate::sources::{std_field, tool_field, Place, ToolResult};
use crate::template::Response;
use crate::RESPONSE;

/// Everything a response's fields may be filled from.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    /// The caller's standard fields: `{customer, agent, variables, missing_params}`.
    pub std: &'a Value,
    /// Where the standard fields were declared.
    pub std_place: Place<'a>,
    /// The tool results with response fields, in the order the tools ran.
    pub tools: &'a [ToolResult<'a>],
    /// The generator of `generative.*` fields, when one is configured: a generator tool
    /// ([`crate::Generator`]) or any other [`Generate`].
    pub generator: Option<&'a dyn Generate>,
    /// Values that are secret (declared `secrets` of the tools involved): a field holding
    /// one is never rendered.
    pub secrets: &'a [String],
}

/// The source that filled a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldSource {
    /// The caller's standard fields.
    Std,
    /// The tool result at `index` (in run order), named `label`.
    Tool {
        /// Index of the result in [`Sources::tools`].
        index: usize,
        /// The result's label.
        label: String,
    },
    /// The generator.
    Generative {
        /// The generator's name ([`Generate::name`]): its tool id.
        tool: String,
    },
}

impl FieldSource {
    /// `std`, `tool` or `generative`.
    pub fn name(&self) -> &'static str {
        match self {
            FieldSource::Std => "std",
            FieldSource::Tool { .. } => "tool",
            FieldSource::Generative { .. } => "generative",
        }
    }

    /// The source for people: `std`, ``tool fields of step `balance` (bank/check_balance)``,
    /// ``generator `gen/phrases` ``.
    pub fn describe(&self) -> String {
        match self {
            FieldSource::Std => "std".into(),
            FieldSource::Tool { label, .. } => format!("tool fields of {label}"),
            FieldSource::Generative { tool } => format!("generator `{tool}`"),
        }
    }
}

/// A filled field.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The full dotted name.
    pub name: String,
    /// Its value (data).
    pub value: Value,
    /// Where it came from.
    pub source: FieldSource,
    /// True when the value holds a secret: it is shown as `***` and never rendered.
    pub secret: bool,
    /// An error naming the field's position in its source, for the refusal of a secret.
    located: Option<Error>,
}

impl Field {
    /// A field that holds no secret.
    pub fn new(name: impl Into<String>, value: Value, source: FieldSource) -> Field {
        Field {
            name: name.into(),
            value,
            source,
            secret: false,
            located: None,
        }
    }

    /// The field as JSON: `{field, source, from?, value}`, the value `***` when secret.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The value as traces show it: `***` when it holds a secret.
    pub fn shown(&self) -> Value {
        if self.secret {
            json!("***")
        } else {
            self.value.clone()
        }
    }

    /// The error refusing to render this field because it holds a secret.
    pub(crate) fn refusal(&self) -> Error {
        let err = Error::new(
            RESPONSE,
            ErrorKind::Forbidden,
            format!(
                "field `{}` from {} holds a secret value; a reply never shows secrets",
                self.name,
                self.source.describe()
            ),
        )
        .with_hint(
            "return a reference or a masked form (`****1234`) in the response fields instead",
        );
        match &self.located {
            Some(at) => err
                .with_path(at.path().clone())
                .at_location(at.location().cloned()),
            None => err,
        }
    }
}

/// A field no source provided, and the sources tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The full dotted name.
    pub name: String,
    /// The sources tried, in order, as people read them.
    pub tried: Vec<String>,
}

impl Missing {
    /// `` `account.type` (tried: tool fields of step `balance`) ``.
    pub fn describe(&self) -> String {
        format!("`{}` (tried: {})", self.name, self.tried.join("; "))
    }
}

/// What the first two sources found for a response, before any generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Extraction {
    /// Fields filled so far (standard and tool fields), in template order.
    pub found: Vec<Field>,
    /// `generative.*` fields the render needs, waiting for the generator, in the order the
    /// render reads them (once generated, their values may make the render need others).
    pub pending: Vec<String>,
    /// Fields the render needs and no source provides, in template order.
    pub missing: Vec<Missing>,
}

/// True when `value` holds one of `secrets`, or the marker of a secret a tool printed
/// (`%{secret:NAME:TAG}`, see [`strata_core::secret_marks`]; minted for any run).
fn holds_secret(value: &Value, secrets: &[String]) -> bool {
    if strata_core::secret_marks::holds_marker(value) {
        return true;
    }
    if secrets.iter().all(String::is_empty) {
        return false;
    }
    let mut found = false;
    for_each_leaf(value, &FieldPath::root(), &mut |_, leaf| {
        if !found && !leaf.is_null() {
            let text = value_to_text(leaf);
            found = secrets
                .iter()
                .any(|s| !s.is_empty() && text.contains(s.as_str()));
        }
    });
    found
}

/// Marks `field` secret when its value holds one of `secrets`, remembering where it was read
/// (`path` inside `place`).
fn mark_secret(
    mut field: Field,
    secrets: &[String],
    place: Place<'_>,
    path: impl FnOnce(&str) -> FieldPath,
) -> Field {
    if holds_secret(&field.value, secrets) {
        field.secret = true;
        let at = Error::new(RESPONSE, ErrorKind::Forbidden, "");
        field.located = Some(place.locate(at, &path(&field.name)));
    }
    field
}

fn tools_tried(tools: &[ToolResult<'_>]) -> String {
    if tools.is_empty() {
        return "tool fields (no tool result has any)".into();
    }
    let labels: Vec<&str> = tools.iter().map(|t| t.label.as_str()).collect();
    format!("tool fields of {}", labels.join(", "))
}

/// The sources tried for `name`, none of which has it, in order, as people read them.
fn tried(name: &str, sources: &Sources<'_>) -> Vec<String> {
    let mut tried = Vec::new();
    if is_std(name) {
        let rest = name.strip_prefix("std.").unwrap_or_default();
        tried.push(format!("std (no `{rest}`)"));
    }
    tried.push(tools_tried(sources.tools));
    if is_generative(name) && sources.generator.is_none() {
        tried.push("generator (none configured)".into());
    }
    tried
}

/// The `(name, value)` pairs of `fields`, for a trial render.
fn values(fields: &[Field]) -> Vec<(&str, &Value)> {
    fields.iter().map(|f| (f.name.as_str(), &f.value)).collect()
}

/// An empty text: what a field the render needs and no source has stands for in a trial
/// render, so that the trial goes on to find the other fields the render needs.
static STAND_IN: Value = Value::String(String::new());

impl Response {
    /// Fills every field it can from the standard fields and the tool results, then finds,
    /// by trial renders with those values, which missing fields the render *needs* (SPEC
    /// §7): a field read only in a branch not taken, or only tested with `is defined` /
    /// `is undefined` / `default(…)`, is optional. Lists the needed `generative.*` fields left
    /// for the generator and the needed fields no source provides. Nothing is generated here.
    pub fn extract(&self, sources: &Sources<'_>) -> Extraction {
        let mut out = Extraction {
            found: Vec::new(),
            pending: Vec::new(),
            missing: Vec::new(),
        };
        for name in self.fields() {
            if is_std(name) {
                if let Some(hit) = std_field(sources.std, name) {
                    let field = Field::new(name.clone(), hit.value.clone(), FieldSource::Std);
                    out.found.push(mark_secret(
                        field,
                        sources.secrets,
                        sources.std_place,
                        |n| hit.path(n),
                    ));
                    continue;
                }
            }
            if let Some((index, hit)) = tool_field(sources.tools, name) {
                let result = &sources.tools[index];
                let source = FieldSource::Tool {
                    index,
                    label: result.label.clone(),
                };
                let field = Field::new(name.clone(), hit.value.clone(), source);
                out.found
                    .push(mark_secret(field, sources.secrets, result.place, |n| {
                        hit.path(n)
                    }));
            }
        }
        for name in self.needs(&out.found) {
            if is_generative(&name) && sources.generator.is_some() {
                out.pending.push(name);
            } else {
                let tried = tried(&name, sources);
                out.missing.push(Missing { name, tried });
            }
        }
        let order = |name: &str| self.fields().iter().position(|n| n == name);
        out.missing.sort_by_key(|m| order(&m.name));
        out
    }

    /// The fields a render with `known` needs and `known` lacks, in the order the render
    /// reads them: trial renders, each missing field standing in as an empty text for the
    /// next trial.
    fn needs(&self, known: &[Field]) -> Vec<String> {
        let mut needs: Vec<String> = Vec::new();
        for _ in 0..=self.fields().len() {
            let mut with = values(known);
            with.extend(needs.iter().map(|n| (n.as_str(), &STAND_IN)));
            match self.trial(&with) {
                Err(Some(name)) if !with.iter().any(|(n, _)| *n == name) => needs.push(name),
                _ => break,
            }
        }
        needs
    }

    /// Extracts, generates and renders: the reply, or an error naming every missing field
    /// (kind `missing_fields`), a field holding a secret, a generator failure or a render
    /// error. Nothing half-filled is ever returned.
    pub fn respond(&self, sources: &Sources<'_>) -> Result<Reply, Error> {
        let fields = self.extract(sources).complete(self, sources)?;
        let text = self.render(&fields)?;
        Ok(Reply { text, fields })
    }
}

impl Extraction {
    /// True when no needed field is missing (generated fields may still be pending).
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty()
    }

    /// The error naming every missing field and the sources tried (kind `missing_fields`),
    /// pointed at the first missing field's use in the template.
    pub fn missing_error(&self, response: &Response) -> Option<Error> {
        let first = self.missing.first()?;
        let list: Vec<String> = self.missing.iter().map(Missing::describe).collect();
        let err = Error::new(
            RESPONSE,
            ErrorKind::MissingFields,
            format!("no source provides {}", list.join(", ")),
        )
        .with_hint(
            "`std.*` come from the caller, other fields from the `canned_response_fields` of tool results, `generative.*` from the generator",
        );
        Some(response.at_field(err, &first.name))
    }

    /// Finishes the extraction: an error when a needed field is missing or a field holds a
    /// secret, else the generator fills the `generative.*` fields the render needs, one by
    /// one in the order the render reads them (each sees the fields filled before it, each
    /// is asked at most once), the render being tried again after each, until it needs
    /// nothing more. Every field is returned in template order.
    pub fn complete(self, response: &Response, sources: &Sources<'_>) -> Result<Vec<Field>, Error> {
        if let Some(err) = self.missing_error(response) {
            return Err(err);
        }
        if let Some(secret) = self.found.iter().find(|f| f.secret) {
            return Err(response.refuse(secret));
        }
        let mut fields = self.found;
        if let (Some(generator), false) = (sources.generator, self.pending.is_empty()) {
            while let Err(Some(name)) = response.trial(&values(&fields)) {
                if !is_generative(&name) || fields.iter().any(|f| f.name == name) {
                    let missing = response
                        .needs(&fields)
                        .into_iter()
                        .map(|name| {
                            let tried = tried(&name, sources);
                            Missing { name, tried }
                        })
                        .collect();
                    let out = Extraction {
                        found: Vec::new(),
                        pending: Vec::new(),
                        missing,
                    };
                    if let Some(err) = out.missing_error(response) {
                        return Err(err);
                    }
                    break;
                }
                let context = json!({
                    "std": sources.std,
                    "fields": fields.iter().map(|f| (f.name.clone(), f.value.clone())).collect::<Map<String, Value>>(),
                });
                let value = generator
                    .generate(response.source(), &name, &context)
                    .map_err(|e| response.at_field(e, &name))?;
                let field = Field::new(
                    name.clone(),
                    value,
                    FieldSource::Generative {
                        tool: generator.name().to_string(),
                    },
                );
                let field = mark_secret(field, sources.secrets, generator.place(), |_| {
                    FieldPath::root()
                });
                if field.secret {
                    return Err(response.refuse(&field));
                }
                fields.push(field);
            }
        }
        let order: Vec<&String> = response.fields().iter().collect();
        fields.sort_by_key(|f| order.iter().position(|n| **n == f.name));
        Ok(fields)
    }
}

/// The JSON form of a [`Field`]: a derived form rather than the struct itself, because a
/// secret value is redacted to `***` and `from` exists only for tool and generator sources.
#[derive(Serialize)]
struct FieldForm<'a> {
    field: &'a str,
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'a str>,
    value: Cow<'a, Value>,
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FieldForm {
            field: &self.name,
            source: self.source.name(),
            from: match &self.source {
                FieldSource::Std => None,
                FieldSource::Tool { label, .. } => Some(label),
                FieldSource::Generative { tool } => Some(tool),
            },
            value: if self.secret {
                Cow::Owned(json!("***"))
            } else {
                Cow::Borrowed(&self.value)
            },
        }
        .serialize(s)
    }
}

/// A rendered canned response and the fields that filled it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reply {
    /// The rendered text.
    #[serde(rename = "reply")]
    pub text: String,
    /// Every field, in template order, with its source.
    pub fields: Vec<Field>,
}

impl Reply {
    /// `{reply, fields: [{field, source, from?, value}]}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
