//! The plan document: a list of steps, or `{steps: [...]}`; each step
//! `{id?, tool, arguments | parameters, depends_on?, intent?, resources?, retries?}`.

use std::collections::HashMap;

use serde_json::Value;
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, Limits, PathSeg};
use strata_doc::{Document, Format};
use strata_tools::Scale;

use crate::compile::Args;
use crate::syntax::{is_step_id, Target};
use crate::PLAN;

/// The keys a step may have.
pub const STEP_KEYS: [&str; 8] = [
    "id",
    "tool",
    "arguments",
    "parameters",
    "depends_on",
    "intent",
    "resources",
    "retries",
];

/// One step of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The id (`step<n>` for a numeric id or none).
    pub id: String,
    /// 1-based position in the plan.
    pub position: usize,
    /// The tool id.
    pub tool: String,
    /// The arguments, compiled.
    pub args: Args,
    /// `arguments` or `parameters`, as written.
    pub args_key: &'static str,
    /// Extra ordering without data flow (`depends_on`), as ids.
    pub depends_on: Vec<String>,
    /// Free text shown in reports.
    pub intent: Option<String>,
    /// The step's own `resources` and `retries`, which override its tool's key by key.
    pub scale: Scale,
    /// Where the step stands in its document (`[2]`, `steps[2]`).
    pub at: FieldPath,
    /// True when the step has an `id` key (errors about its id point there).
    pub id_written: bool,
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

fn invalid(message: impl Into<String>, path: FieldPath) -> Error {
    Error::new(PLAN, ErrorKind::Invalid, message).at_path(&path)
}

/// The id a step's `id` value (or `depends_on` entry) stands for: a string id as is, a
/// positive integer `n` as `step<n>`.
fn id_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if is_step_id(s) => Some(s.clone()),
        Value::Number(n) => n.as_u64().filter(|n| *n > 0).map(|n| format!("step{n}")),
        _ => None,
    }
}

/// The hint for arguments that are not a map.
const ARGS_RULE: &str = "give the tool's parameters as a map `{name: value, ...}`, or as one whole-value reference to a map (`\"$step1\"`, `\"{{a.result}}\"`)";

/// The one message for a step's arguments that are not a map — literal arguments when the
/// plan loads, or the value a whole-value reference yields when the step is resolved.
pub fn arguments_not_a_map(id: &str, value: &Value) -> String {
    format!(
        "the arguments of step `{id}` must be a map, not {}",
        crate::resolve::json_type(value)
    )
}

const ID_RULE: &str = "an id is `[A-Za-z_][A-Za-z0-9_-]*` or a positive integer `n` (`step<n>`)";

impl Step {
    /// Reads the step at `position` (1-based) from `value`, standing at `at` in its
    /// document. Every problem is returned, with its field path.
    pub fn parse(value: &Value, position: usize, at: &FieldPath) -> Result<Step, Vec<Error>> {
        let Value::Object(map) = value else {
            return Err(vec![invalid(
                format!(
                    "step {position} must be a map `{{id?, tool, arguments, depends_on?, intent?}}`"
                ),
                at.clone(),
            )]);
        };
        let mut errors = Vec::new();
        // One pass over the keys (no lookup by name).
        let mut given: [Option<&Value>; 8] = [None; 8];
        for (k, v) in map {
            match STEP_KEYS.iter().position(|s| s == k) {
                Some(slot) => given[slot] = Some(v),
                None => {
                    let e = invalid(
                        format!("unknown key `{k}` in step {position}"),
                        at.child(key(k)),
                    )
                    .with_kind(ErrorKind::UnknownName);
                    let hint = match did_you_mean(k, STEP_KEYS) {
                        Some(best) => format!("did you mean `{best}`?"),
                        None => format!("a step has {}", STEP_KEYS.join(", ")),
                    };
                    errors.push(e.with_hint(hint));
                }
            }
        }
        let [id_value, tool_value, arguments, parameters, depends, intent_value, resources, retries] =
            given;
        let id = match id_value {
            None => format!("step{position}"),
            Some(v) => id_of(v).unwrap_or_else(|| {
                errors.push(
                    invalid(
                        format!("invalid id {v} in step {position}"),
                        at.child(key("id")),
                    )
                    .with_hint(ID_RULE),
                );
                format!("step{position}")
            }),
        };
        let tool = match tool_value {
            Some(Value::String(t)) if !t.is_empty() => t.clone(),
            Some(_) => {
                errors.push(invalid(
                    format!("`tool` of step `{id}` must be a tool id (a string)"),
                    at.child(key("tool")),
                ));
                String::new()
            }
            None => {
                errors.push(invalid(format!("step `{id}` has no `tool`"), at.clone()));
                String::new()
            }
        };
        let (args_key, args_value) = match (arguments, parameters) {
            (Some(a), None) => ("arguments", a),
            (None, Some(p)) => ("parameters", p),
            (Some(_), Some(_)) => {
                errors.push(
                    invalid(
                        format!("step `{id}` has both `arguments` and `parameters`"),
                        at.child(key("parameters")),
                    )
                    .with_hint("give exactly one of them"),
                );
                ("arguments", &Value::Null)
            }
            (None, None) => {
                errors.push(
                    invalid(
                        format!("step `{id}` has neither `arguments` nor `parameters`"),
                        at.clone(),
                    )
                    .with_hint(
                        "give the tool's parameters as `arguments: {...}` (or `parameters`)",
                    ),
                );
                ("arguments", &Value::Null)
            }
        };
        let mut arg_errors = Vec::new();
        let args = Args::compile(args_value, &mut arg_errors);
        let given_once = arguments.is_some() != parameters.is_some();
        if given_once && arg_errors.is_empty() && !args.may_be_a_map() {
            errors.push(
                invalid(
                    arguments_not_a_map(&id, args_value),
                    at.child(key(args_key)),
                )
                .with_hint(ARGS_RULE),
            );
        }
        if !arg_errors.is_empty() {
            let args_at = at.child(key(args_key));
            errors.extend(
                arg_errors
                    .into_iter()
                    .map(|e| e.map_path(|p| p.under(&args_at))),
            );
        }
        let depends_on = depends_on(depends, &id, at, &mut errors);
        let intent = match intent_value {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                errors.push(invalid(
                    format!("`intent` of step `{id}` must be text"),
                    at.child(key("intent")),
                ));
                None
            }
        };
        let scale = Scale::read(resources, retries, PLAN).unwrap_or_else(|e| {
            errors.push(e.map_path(|p| p.under(at)));
            Scale::default()
        });
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Step {
            id,
            position,
            tool,
            args,
            args_key,
            depends_on,
            intent,
            scale,
            at: at.clone(),
            id_written: id_value.is_some(),
        })
    }

    /// Every step id this step depends on (its references, then `depends_on`), each once.
    pub fn uses(&self) -> Vec<&str> {
        crate::compile::first_uses(
            self.args
                .step_ids()
                .into_iter()
                .chain(self.depends_on.iter().map(String::as_str)),
        )
    }

    /// The field and span of the first place this step names `id` (a reference, or a
    /// `depends_on` entry).
    pub fn site_of(&self, id: &str) -> (FieldPath, Option<strata_core::Span>) {
        for site in &self.args.refs {
            if matches!(&site.r.target, Target::Step { id: t, .. } if t == id) {
                let base = self.at.child(key(self.args_key));
                return (site.field.under(&base), Some(site.r.span));
            }
        }
        let k = self.depends_on.iter().position(|d| d == id).unwrap_or(0);
        (
            self.at.child(key("depends_on")).child(PathSeg::Index(k)),
            None,
        )
    }
}

fn depends_on(
    value: Option<&Value>,
    id: &str,
    at: &FieldPath,
    errors: &mut Vec<Error>,
) -> Vec<String> {
    let items: Vec<(FieldPath, &Value)> = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => {
            let path = at.child(key("depends_on"));
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (path.child(PathSeg::Index(i)), v))
                .collect()
        }
        Some(v @ (Value::String(_) | Value::Number(_))) => {
            vec![(at.child(key("depends_on")), v)]
        }
        Some(_) => {
            errors.push(invalid(
                format!("`depends_on` of step `{id}` must be a list of step ids"),
                at.child(key("depends_on")),
            ));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    let mut seen: std::collections::HashSet<String, foldhash::fast::RandomState> =
        Default::default();
    for (p, v) in items {
        match id_of(v) {
            Some(d) if !seen.contains(&d) => {
                seen.insert(d.clone());
                out.push(d);
            }
            Some(_) => {}
            None => errors.push(
                invalid(
                    format!("invalid step id {v} in `depends_on` of step `{id}`"),
                    p,
                )
                .with_hint(ID_RULE),
            ),
        }
    }
    out
}

/// The format of a plan's text: JSON when it is named `.json` or starts with `[` or `{`,
/// YAML otherwise.
fn format_of(name: &str, text: &[u8]) -> Format {
    let first = text.iter().find(|b| !b.is_ascii_whitespace());
    if name.ends_with(".json") || matches!(first, Some(b'[' | b'{')) {
        Format::Json
    } else {
        Format::Yaml
    }
}

/// Parses the text of a plan document named `name` (errors name it with a line and column),
/// as JSON when it is named `.json` or starts with `[` or `{`, as YAML otherwise; read the
/// plan from it with [`Plan::load`].
pub fn parse_document(name: &str, bytes: Vec<u8>, limits: &Limits) -> Result<Document, Error> {
    let format = format_of(name, &bytes);
    Document::parse(name, bytes, format, limits)
}

/// A plan: its steps in plan order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The steps, in plan order.
    pub steps: Vec<Step>,
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    /// `deps[i]`: the indexes of the steps step `i` depends on (filled by [`Plan::link`]).
    pub deps: Vec<Vec<usize>>,
    /// The limits its steps' arguments resolve within (the output limits count what
    /// references yield); the defaults unless the caller sets the project's.
    pub limits: Limits,
}

impl Plan {
    /// Reads a plan from a parsed document; every error is located in the file.
    pub fn load(doc: &Document) -> Result<Plan, Vec<Error>> {
        Plan::from_value(&doc.value, &FieldPath::root())
            .map_err(|errors| errors.into_iter().map(|e| doc.locate_error(e)).collect())
    }

    /// [`Plan::load`], the plan's references then held to `limits` (a project's).
    pub fn load_within(doc: &Document, limits: &Limits) -> Result<Plan, Vec<Error>> {
        let mut plan = Plan::load(doc)?;
        plan.limits = limits.clone();
        Ok(plan)
    }

    /// Reads a plan from `value`, which stands at `base` (errors name fields under it):
    /// structure, ids, references, dependencies and cycles are all checked.
    pub fn from_value(value: &Value, base: &FieldPath) -> Result<Plan, Vec<Error>> {
        let (items, at) = match value {
            Value::Array(items) => (items, base.clone()),
            Value::Object(map) => {
                let mut errors = Vec::new();
                for k in map.keys().filter(|k| *k != "steps") {
                    errors.push(
                        invalid(format!("unknown top-level key `{k}`"), base.child(key(k)))
                            .with_hint("a plan object has only `steps`"),
                    );
                }
                match map.get("steps") {
                    Some(Value::Array(items)) if errors.is_empty() => {
                        (items, base.child(key("steps")))
                    }
                    Some(Value::Array(_)) => return Err(errors),
                    _ => {
                        errors.push(invalid(
                            "a plan object needs `steps`: a list of steps",
                            base.clone(),
                        ));
                        return Err(errors);
                    }
                }
            }
            _ => {
                return Err(vec![invalid(
                    "a plan is a list of steps, or a map `{steps: [...]}`",
                    base.clone(),
                )])
            }
        };
        let mut plan = Plan::default();
        let mut errors = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match Step::parse(item, i + 1, &at.child(PathSeg::Index(i))) {
                Ok(step) => {
                    if let Err(e) = plan.add(step) {
                        errors.push(e);
                    }
                }
                Err(es) => errors.extend(es),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let errors = plan.link();
        if errors.is_empty() {
            Ok(plan)
        } else {
            Err(errors)
        }
    }

    /// Adds a step at the end; a duplicate id is an error naming both positions.
    pub fn add(&mut self, step: Step) -> Result<usize, Error> {
        if let Some(&first) = self.index.get(&step.id) {
            let path = if step.id_written {
                step.at.child(key("id"))
            } else {
                step.at.clone()
            };
            return Err(Error::new(
                PLAN,
                ErrorKind::DuplicateId,
                format!(
                    "duplicate step id `{}`: steps {} and {}",
                    step.id, self.steps[first].position, step.position
                ),
            )
            .at_path(&path)
            .with_hint("every step needs its own id"));
        }
        let i = self.steps.len();
        self.index.insert(step.id.clone(), i);
        self.steps.push(step);
        self.deps.push(Vec::new());
        Ok(i)
    }

    /// The index of step `id`.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The step ids, in plan order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().map(|s| s.id.as_str())
    }

    /// The error for a reference from step `from` to `id`, which the plan does not have.
    pub fn unknown_step(&self, from: &Step, id: &str) -> Error {
        let (path, span) = from.site_of(id);
        let e = Error::new(
            PLAN,
            ErrorKind::UnknownStep,
            format!("step `{}` refers to unknown step `{id}`", from.id),
        )
        .at_path(&path)
        .with_span(span);
        let others = || self.ids().filter(|s| *s != from.id);
        match did_you_mean(id, others()) {
            Some(best) => e.with_hint(format!("did you mean `{best}`?")),
            None if others().next().is_some() => {
                e.with_hint(format!("the other steps are {}", list(others())))
            }
            None => e,
        }
    }

    /// The errors for the references from step `from` to the steps `ids`, which the plan does
    /// not have: one walk of the step's references finds where each is first named, and
    /// did-you-mean hints (a walk of every id each) are given for the first ten only, so
    /// that many unknown references cost time linear in the plan.
    fn unknown_steps(&self, from: &Step, ids: &[&str]) -> Vec<Error> {
        if ids.len() == 1 {
            return vec![self.unknown_step(from, ids[0])];
        }
        let mut first: HashMap<&str, usize, foldhash::fast::RandomState> = HashMap::default();
        for (k, site) in from.args.refs.iter().enumerate() {
            if let Target::Step { id, .. } = &site.r.target {
                first.entry(id.as_str()).or_insert(k);
            }
        }
        let base = from.at.child(key(from.args_key));
        ids.iter()
            .enumerate()
            .map(|(n, id)| {
                if n < LISTED {
                    return self.unknown_step(from, id);
                }
                let (path, span) = match first.get(id) {
                    Some(&k) => {
                        let site = &from.args.refs[k];
                        (site.field.under(&base), Some(site.r.span))
                    }
                    None => from.site_of(id),
                };
                Error::new(
                    PLAN,
                    ErrorKind::UnknownStep,
                    format!("step `{}` refers to unknown step `{id}`", from.id),
                )
                .at_path(&path)
                .with_span(span)
            })
            .collect()
    }

    /// Links every step to the steps it uses (filling [`Plan::deps`]) and checks for
    /// unknown steps and cycles; returns the errors, in plan order.
    pub fn link(&mut self) -> Vec<Error> {
        let mut errors = Vec::new();
        let mut deps = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let mut ds = Vec::new();
            let mut unknown = Vec::new();
            for id in step.uses() {
                match self.find(id) {
                    Some(d) => ds.push(d),
                    None => unknown.push(id),
                }
            }
            if !unknown.is_empty() {
                errors.extend(self.unknown_steps(step, &unknown));
            }
            deps.push(ds);
        }
        self.deps = deps;
        if errors.is_empty() {
            if let Err(cycle) = crate::graph::levels(&self.deps) {
                errors.push(self.cycle_error(&cycle));
            }
        }
        errors
    }

    /// The error for a cycle of step indexes (`a -> b -> a`), at the first step's reference
    /// to the last.
    pub fn cycle_error(&self, cycle: &[usize]) -> Error {
        let names: Vec<&str> = cycle.iter().map(|&i| self.steps[i].id.as_str()).collect();
        let first = &self.steps[cycle[0]];
        let before = cycle.len().checked_sub(2).map_or(cycle[0], |k| cycle[k]);
        let (path, span) = first.site_of(&self.steps[before].id);
        Error::new(
            PLAN,
            ErrorKind::Cycle,
            format!("circular dependency: {}", names.join(" -> ")),
        )
        .at_path(&path)
        .with_hint("a step cannot depend on itself, directly or through others")
        .with_span(span)
    }

    /// The levels of the plan (see [`crate::graph::levels`]), as step indexes. Call after a
    /// successful [`Plan::link`].
    pub fn levels(&self) -> Vec<Vec<usize>> {
        crate::graph::levels(&self.deps).unwrap_or_default()
    }

    /// The levels as step ids.
    pub fn level_ids(&self) -> Vec<Vec<String>> {
        self.levels()
            .into_iter()
            .map(|l| l.into_iter().map(|i| self.steps[i].id.clone()).collect())
            .collect()
    }

    /// Every user value the plan uses, in plan order, each once.
    pub fn value_names(&self) -> Vec<&str> {
        crate::compile::first_uses(self.steps.iter().flat_map(|s| s.args.value_names()))
    }
}

/// The most names a message lists.
const LISTED: usize = 10;

/// `` `a`, `b`, `c` `` for messages (the first ten, then `…`).
pub(crate) fn list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names = names.into_iter();
    let mut out: Vec<String> = names
        .by_ref()
        .take(LISTED)
        .map(|n| format!("`{n}`"))
        .collect();
    if names.next().is_some() {
        out.push("…".into());
    }
    out.join(", ")
}
