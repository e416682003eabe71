//! Resolution: a step's compiled arguments walked against the records of the steps it uses
//! and the user values. Resolved values are data: they are copied into the arguments as
//! values (or rendered into text by the one value-to-text rule), never scanned again, never
//! serialised and re-parsed.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};
use strata_core::walk::{resolve_segs, write_segs, Seg};
use strata_core::{push_value_text, value_text_len, Error, ErrorKind, FieldPath, Limits, PathSeg};
use strata_tools::{a_or_an, StepRecord};

use crate::compile::{slot, Fill, Part, Site};
use crate::plan::{arguments_not_a_map, list, Step};
use crate::syntax::Target;
use crate::PLAN;

/// The records of the steps that have finished, by id.
pub trait Records {
    /// The record of step `id`, when it has finished.
    fn record(&self, id: &str) -> Option<&StepRecord>;
}

/// Records by step id, with the fast hasher strata's maps use.
pub type RecordMap = HashMap<String, StepRecord, foldhash::fast::RandomState>;

impl<S: std::hash::BuildHasher> Records for HashMap<String, StepRecord, S> {
    fn record(&self, id: &str) -> Option<&StepRecord> {
        self.get(id)
    }
}

/// What a resolution reads: the finished steps' records and the user values.
pub struct Sources<'a> {
    /// The records.
    pub records: &'a dyn Records,
    /// The user values (`{{PLACEHOLDER_name}}`).
    pub values: &'a Map<String, Value>,
}

/// A field of a record as a value (borrowed where the record holds one).
fn field<'r>(record: &'r StepRecord, name: &str) -> Option<Cow<'r, Value>> {
    Some(match name {
        "result" => Cow::Borrowed(&record.result),
        "run" => match &record.run {
            Some(run) => Cow::Borrowed(run),
            None => Cow::Owned(Value::Null),
        },
        "id" => Cow::Owned(Value::String(record.id.clone())),
        "status" => Cow::Owned(Value::String(record.status.name().into())),
        "error" => Cow::Owned(match &record.error {
            Some(e) => serde_json::to_value(e).unwrap_or(Value::Null),
            None => Value::Null,
        }),
        _ => return None,
    })
}

/// The JSON Schema type of a value as written, for messages: a number written with a
/// fraction or an exponent (`2.0`, `-0.0`, `1e3`) is a `number`, one written without
/// (`2`, `-7`) an `integer`. The decision is serde_json's (`Number::is_f64`), not the
/// value's: unlike validation, where `2.0` satisfies `type: integer`, a message describes
/// what the result holds.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        other => strata_core::type_name(other),
    }
}

/// How a value looks where a path stopped, for messages.
fn describe(value: &Value) -> String {
    match value {
        Value::Object(map) if map.is_empty() => "is an empty map".into(),
        Value::Object(map) => format!("has {}", list(map.keys().map(String::as_str))),
        Value::Array(items) => format!("is a list of {} items", items.len()),
        other => format!("is {}", a_or_an(json_type(other))),
    }
}

fn segs_text(segs: &[Seg]) -> String {
    let mut out = String::new();
    let _ = write_segs(&mut out, segs, true);
    out
}

/// Resolves the arguments of `step` within the default [`Limits`] (see [`resolve_within`]).
pub fn resolve(step: &Step, sources: &Sources<'_>) -> Result<Value, Error> {
    resolve_within(step, sources, &Limits::default())
}

/// Resolves the arguments of `step`; `Err` is a resolution error (a path missing from a
/// result) with the field path inside the step's arguments and the reference's span.
///
/// Every value a reference yields counts against the output limits while the arguments
/// resolve, as in tools: its text form (`limits.output_bytes_per_config` for all the
/// references of the step together, `limits.output_bytes_per_string` for one string), so
/// that a large result referenced many times stops with a `limit` error before it is copied
/// past the limit.
pub fn resolve_within(step: &Step, sources: &Sources<'_>, limits: &Limits) -> Result<Value, Error> {
    let mut cx = Cx {
        step,
        sources,
        limits,
        total: 0,
    };
    cx.resolve()
}

/// Resolves the arguments of `step` into its tool's caller parameters: a map, or the error
/// (a path missing from a result, arguments that are not a map), relative to the step.
pub fn resolve_parameters(step: &Step, sources: &Sources<'_>) -> Result<Map<String, Value>, Error> {
    resolve_parameters_within(step, sources, &Limits::default())
}

/// [`resolve_parameters`] within `limits` (see [`resolve_within`]).
pub fn resolve_parameters_within(
    step: &Step,
    sources: &Sources<'_>,
    limits: &Limits,
) -> Result<Map<String, Value>, Error> {
    match resolve_within(step, sources, limits)? {
        Value::Object(map) => Ok(map),
        other => Err(not_a_map(step, &other)),
    }
}

/// The error for a step whose whole-value reference as its arguments yielded `value`, not a
/// map (SPEC §5.1: it fails that step), at the reference.
pub(crate) fn not_a_map(step: &Step, value: &Value) -> Error {
    Error::new(
        PLAN,
        ErrorKind::Invalid,
        arguments_not_a_map(&step.id, value),
    )
    .at_path(&FieldPath(vec![PathSeg::Key(step.args_key.into())]))
}

struct Cx<'a, 's> {
    step: &'a Step,
    sources: &'a Sources<'s>,
    limits: &'a Limits,
    /// Bytes the references yielded so far (their text forms).
    total: usize,
}

impl<'a, 's> Cx<'a, 's> {
    fn resolve(&mut self) -> Result<Value, Error> {
        let args = &self.step.args;
        let mut out = args.skeleton.clone();
        for hole in &args.holes {
            let value = match &hole.fill {
                Fill::Ref(i) => {
                    let budget = self.config_left();
                    let counted = self.value(*i, &mut |v| {
                        value_text_len(v, budget).map(|n| (n, v.clone()))
                    })?;
                    match counted {
                        Some((n, v)) => {
                            self.total += n;
                            v
                        }
                        None => return Err(self.too_large(*i, false)),
                    }
                }
                Fill::Text(parts) => {
                    let room = parts.iter().fold(0, |n, p| match p {
                        Part::Lit(t) => n + t.len(),
                        Part::Ref(_) => n + 16,
                    });
                    let mut text = String::with_capacity(room);
                    for p in parts {
                        match p {
                            Part::Lit(t) => text.push_str(t),
                            Part::Ref(i) => {
                                let config_left = self.config_left();
                                let string_left = self
                                    .limits
                                    .output_bytes_per_string
                                    .saturating_sub(text.len());
                                let budget = config_left.min(string_left);
                                let counted = self.value(*i, &mut |v| {
                                    let n = value_text_len(v, budget)?;
                                    push_value_text(v, &mut text);
                                    Some(n)
                                })?;
                                match counted {
                                    Some(n) => self.total += n,
                                    None => {
                                        return Err(self.too_large(*i, string_left < config_left))
                                    }
                                }
                            }
                        }
                    }
                    Value::String(text)
                }
            };
            if let Some(slot) = slot(&mut out, &hole.at) {
                *slot = value;
            }
        }
        Ok(out)
    }

    /// What is left of the per-document output limit.
    fn config_left(&self) -> usize {
        self.limits
            .output_bytes_per_config
            .saturating_sub(self.total)
    }

    /// The error for reference `i`, whose value would pass the per-string limit (`string`)
    /// or the limit of the step's arguments together.
    fn too_large(&self, i: usize, string: bool) -> Error {
        let site = &self.step.args.refs[i];
        let (key, limit, message) = if string {
            let n = self.limits.output_bytes_per_string;
            (
                "output_bytes_per_string",
                n,
                format!("a resolved string exceeds {n} bytes"),
            )
        } else {
            let n = self.limits.output_bytes_per_config;
            (
                "output_bytes_per_config",
                n,
                format!("resolved arguments exceed {n} bytes"),
            )
        };
        self.error(site, ErrorKind::Limit, message, None)
            .with_limit(key, limit, "if this is intended,")
    }

    /// Looks reference `i` up and hands its value to `use_value`.
    fn value<T>(&mut self, i: usize, use_value: &mut impl FnMut(&Value) -> T) -> Result<T, Error> {
        let site = &self.step.args.refs[i];
        match &site.r.target {
            Target::Value(name) => match self.sources.values.get(name) {
                Some(v) => Ok(use_value(v)),
                None => Err(self.error(
                    site,
                    ErrorKind::Undefined,
                    format!("no value was given for `{{{{PLACEHOLDER_{name}}}}}`"),
                    Some(format!("supply it with --value {name}=TEXT")),
                )),
            },
            Target::Step { id, path } => {
                let Some(record) = self.sources.records.record(id) else {
                    return Err(self.error(
                        site,
                        ErrorKind::UnknownStep,
                        format!("step `{id}` has not finished"),
                        None,
                    ));
                };
                let Some((Seg::Key(name), rest)) = path.segs.split_first() else {
                    return Err(self.error(
                        site,
                        ErrorKind::UnknownField,
                        "no record field".into(),
                        None,
                    ));
                };
                let Some(root) = field(record, name) else {
                    return Err(self.error(
                        site,
                        ErrorKind::UnknownField,
                        format!("`{name}` is not a field of a step record"),
                        None,
                    ));
                };
                match resolve_segs(rest, &root, 1) {
                    Ok(v) => Ok(use_value(v)),
                    Err(miss) => {
                        let at = miss.at.min(path.segs.len() - 1);
                        let container = resolve_segs(&path.segs[1..at], &root, 1)
                            .map_or_else(|_| "is missing".to_string(), describe);
                        let message = format!(
                            "`{}`: step `{id}` has no `{}`; `{}` {container}",
                            site.text,
                            segs_text(&path.segs[..=at]),
                            segs_text(&path.segs[..at]),
                        );
                        let hint = miss.suggestion.map(|s| {
                            let mut fixed = path.segs[..at].to_vec();
                            fixed.push(Seg::Key(s));
                            format!("did you mean `{}`?", segs_text(&fixed))
                        });
                        Err(self.error(site, ErrorKind::PathNotFound, message, hint))
                    }
                }
            }
        }
    }

    fn error(&self, site: &Site, kind: ErrorKind, message: String, hint: Option<String>) -> Error {
        let base = FieldPath(vec![PathSeg::Key(self.step.args_key.into())]);
        let e = Error::new(PLAN, kind, message)
            .at_path(&site.field.under(&base))
            .with_span(site.r.span);
        match hint {
            Some(hint) => e.with_hint(hint),
            None => e,
        }
    }
}
