//! `strata explain`: each field of a tool or directive after every stage of SPEC §2, with the
//! provenance of every segment (authored, data, secret — secrets as `***`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Map, Value};
use strata_app::{as_literal, ExecOptions, Invocation};
use strata_app::{App, Failure};
use strata_core::{
    did_you_mean, for_each_leaf, Error, ErrorKind, FieldPath, Layer, Origin, PathSeg,
    RenderOptions, Rendered, Scope,
};
use strata_directive::Directive;
use strata_pipeline::{explain, Chain, StageOutput};

use crate::outcome::{open_project_as, report};
use crate::run_args::{caller_params_from, looks_like_path};
use crate::scope_args::split_pair;
use crate::shared_args::SharedArgs;

/// Options of `strata explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// A tool id (`examples/echo`) or file (`tools/examples/echo.yaml`), or a directive
    /// (`directives/greet.md`)
    #[arg(add = crate::complete::runnables())]
    pub(crate) file: PathBuf,
    /// Only this field and the fields inside it (`config.args[1]`, `body`)
    #[arg(long, value_name = "PATH")]
    pub(crate) field: Option<String>,
    /// A tool's caller parameter (repeatable)
    #[arg(long = "param", short = 'p', value_name = "K=V")]
    pub(crate) params: Vec<String>,
    /// A tool's caller parameters as a JSON object
    #[arg(long, value_name = "JSON")]
    pub(crate) params_json: Option<String>,
    /// A directive input (repeatable)
    #[arg(long = "input", value_name = "K=V")]
    pub(crate) inputs: Vec<String>,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata explain`.
pub(crate) fn run(args: ExplainArgs) -> ExitCode {
    let is_path = args.file.extension().is_some_and(|e| e == "md")
        || looks_like_path(&args.file.to_string_lossy());
    let file = is_path.then_some(args.file.as_path());
    let json = args.shared.json;
    let project = match open_project_as(None, file, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut fields = Vec::new();
    let text = if args.file.extension().is_some_and(|e| e == "md") {
        directive_text(&args, &project, &mut fields)
    } else {
        tool_text(&args, &project, &mut fields)
    };
    match text {
        Ok((kind, name, text)) => {
            let text = if json {
                let doc = json!({"ok": true, "kind": kind, "name": name, "fields": fields});
                serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
            } else {
                text
            };
            crate::output::print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => report(Failure::Error(e), Some(&project), json),
    }
}

/// The segments of a field after a stage as JSON: `[{"origin", "text"}…]` (a typed value
/// as `{"origin", "value"}`; a secret's text as `***`), or null when the field is absent.
fn segments_json(found: Option<Found<'_>>) -> Value {
    let typed = |v: &Value, o: Origin| match o {
        Origin::Secret => json!({"origin": o.name(), "text": "***"}),
        _ => json!({"origin": o.name(), "value": v}),
    };
    match found {
        None => Value::Null,
        Some(Found::Node(Rendered::Text(t))) => t
            .segments()
            .into_iter()
            .map(|(o, s)| json!({"origin": o.name(), "text": s}))
            .collect(),
        Some(Found::Node(Rendered::Value(v, o))) => json!([typed(v, *o)]),
        Some(Found::Node(Rendered::Str(text))) => json!([typed(&json!(text), Origin::Authored)]),
        Some(Found::Json(v, o)) => json!([typed(v, o)]),
        Some(Found::Node(other)) => {
            json!([{"origin": other.origin().name(), "value": other.to_redacted_json()}])
        }
    }
}

/// A value found at a path of a rendered tree: a rendered node, or part of a typed value.
enum Found<'r> {
    Node(&'r Rendered<'r>),
    Json(&'r Value, Origin),
}

fn find<'r>(root: &'r Rendered<'r>, path: &FieldPath) -> Option<Found<'r>> {
    let mut cur = root;
    for (i, seg) in path.0.iter().enumerate() {
        cur = match (cur, seg) {
            (Rendered::Array(items), PathSeg::Index(n)) => items.get(*n)?,
            (Rendered::Object(entries), PathSeg::Key(k)) => {
                &entries.iter().find(|(key, _)| **key == **k)?.1
            }
            (Rendered::Value(v, origin), _) => {
                return FieldPath(path.0[i..].to_vec())
                    .lookup(v)
                    .map(|v| Found::Json(v, *origin));
            }
            _ => return None,
        };
    }
    Some(Found::Node(cur))
}

fn shown(v: &Value, origin: Origin) -> String {
    match origin {
        Origin::Secret => "***".into(),
        _ => strata_core::value_to_text(v),
    }
}

/// `origin:"text"` for every segment (a typed value keeps its JSON form).
fn segments(found: Option<Found<'_>>) -> String {
    let parts: Vec<(Origin, String, bool)> = match found {
        None => return "(absent)".into(),
        Some(Found::Node(Rendered::Text(t))) => t
            .segments()
            .into_iter()
            .map(|(o, s)| (o, s, true))
            .collect(),
        Some(Found::Node(Rendered::Value(v, o))) => vec![(*o, shown(v, *o), v.is_string())],
        Some(Found::Node(Rendered::Str(text))) => vec![(Origin::Authored, text.to_string(), true)],
        Some(Found::Json(v, o)) => vec![(o, shown(v, o), v.is_string())],
        Some(Found::Node(other)) => {
            vec![(other.origin(), other.to_redacted_json().to_string(), false)]
        }
    };
    if parts.is_empty() {
        return "authored:\"\"".into();
    }
    parts
        .into_iter()
        .map(|(o, s, quoted)| {
            if quoted || o == Origin::Secret {
                format!("{}:{}", o.name(), json!(s))
            } else {
                format!("{}:{s}", o.name())
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The leaves of `source` in order; a `{literal: …}` map is one leaf.
fn leaves(source: &Value) -> Vec<(FieldPath, &Value)> {
    let mut out: Vec<(FieldPath, &Value)> = Vec::new();
    for_each_leaf(source, &FieldPath::root(), &mut |path, value| {
        let parent = FieldPath(path.0[..path.0.len().saturating_sub(1)].to_vec());
        match (path.0.last(), parent.lookup(source)) {
            (Some(PathSeg::Key(k)), Some(lit)) if k == "literal" && as_literal(lit).is_some() => {
                out.push((parent, lit))
            }
            _ => out.push((path.clone(), value)),
        }
    });
    out
}

fn wanted(path: &str, field: Option<&str>) -> bool {
    match field {
        None => true,
        Some(f) => {
            path == f || path.starts_with(&format!("{f}.")) || path.starts_with(&format!("{f}["))
        }
    }
}

/// Each field of `source` (under `prefix`) after every stage; only `field` and the fields
/// inside it when given, which must exist.
fn table(
    out: &mut String,
    fields: &mut Vec<Value>,
    source: &Value,
    prefix: &FieldPath,
    stages: &[StageOutput],
    field: Option<&str>,
) -> Result<(), Error> {
    let leaves = leaves(source);
    let names: Vec<String> = leaves
        .iter()
        .map(|(path, _)| path.under(prefix).to_string())
        .collect();
    if let Some(f) = field.filter(|f| !names.iter().any(|n| wanted(n, Some(f)))) {
        return Err(unknown_field(f, &names));
    }
    for ((path, value), full) in leaves.into_iter().zip(&names) {
        if !wanted(full, field) {
            continue;
        }
        let _ = writeln!(out, "{full}");
        let source = match as_literal(value) {
            Some(text) => format!("literal:{text}"),
            None => format!("authored:{value}"),
        };
        let _ = writeln!(out, "  {:<10} {source}", "source");
        let mut shown = Vec::new();
        for s in stages {
            let label = format!("{} {}", s.stage, s.layer);
            let _ = writeln!(out, "  {label:<10} {}", segments(find(&s.value, &path)));
            shown.push(json!({
                "stage": s.stage,
                "layer": s.layer.name(),
                "segments": segments_json(find(&s.value, &path)),
            }));
        }
        fields.push(json!({"field": full, "source": source, "stages": shown}));
    }
    Ok(())
}

/// `--field` names no field: the nearest field (or a field holding fields) in the hint.
fn unknown_field(field: &str, names: &[String]) -> Error {
    let mut candidates: Vec<&str> = Vec::new();
    for name in names {
        for (k, c) in name.char_indices() {
            if c == '.' || c == '[' {
                candidates.push(&name[..k]);
            }
        }
        candidates.push(name);
    }
    let hint = match did_you_mean(field, candidates.iter().copied()) {
        Some(near) => format!("did you mean `{near}`?"),
        None => "without --field, every field is shown".to_string(),
    };
    Error::new(
        Layer::REQUEST,
        ErrorKind::UnknownField,
        format!("there is no field `{}`", strata_core::shown(field)),
    )
    .with_hint(hint)
}

/// What `strata explain` shows: the kind (`tool`, `directive`), its name and the text for
/// people (the fields as JSON go into the caller's list).
type Explained = (&'static str, String, String);

fn tool_text(
    args: &ExplainArgs,
    project: &App,
    fields: &mut Vec<Value>,
) -> Result<Explained, Error> {
    let name = args.file.to_string_lossy();
    let id = crate::names::tool_id(project, &name)?;
    let caller = caller_params_from(args.params_json.as_deref(), &args.params)?;
    let call = Invocation::new(project, &id, &caller, &ExecOptions::default())?;
    let stages = call.explain()?;
    let mut out = format!(
        "tool {id}: stages 1-2 (inputs, context) run before dispatch, on directives and graphs; the config enters at stage 3\n\n"
    );
    let mut source = call.config().clone();
    for l in call.literals() {
        if let Some(slot) = pointer_mut(&mut source, &l.path) {
            *slot = json!({"literal": l.text});
        }
    }
    table(
        &mut out,
        fields,
        &source,
        &FieldPath(vec![PathSeg::Key("config".into())]),
        &stages,
        args.field.as_deref(),
    )?;
    Ok(("tool", id, out))
}

fn pointer_mut<'v>(v: &'v mut Value, path: &FieldPath) -> Option<&'v mut Value> {
    path.0.iter().try_fold(v, |cur, seg| match seg {
        PathSeg::Key(k) => cur.get_mut(k.as_str()),
        PathSeg::Index(i) => cur.get_mut(*i),
    })
}

fn directive_text(
    args: &ExplainArgs,
    project: &App,
    fields: &mut Vec<Value>,
) -> Result<Explained, Error> {
    let absolute = std::path::absolute(&args.file).unwrap_or_else(|_| args.file.clone());
    let name = project.display_name(&absolute);
    let text = project.read_text(&absolute)?;
    let runner = project.runner(ExecOptions::default());
    let directive = Directive::load(&name, &text, &runner, &[], &project.limits)?;
    let mut given = Map::new();
    for pair in &args.inputs {
        let (k, v) = split_pair(pair, "--input")?;
        given.insert(k.to_string(), Value::String(v.to_string()));
    }
    let inputs = directive.bind_inputs(&given)?;
    let front = directive.front_value();
    let mut source = Map::new();
    source.insert(
        "body".into(),
        Value::String(directive.body_text().to_string()),
    );
    if let Some(d) = front.get("description") {
        source.insert("description".into(), d.clone());
    }
    let actions: Vec<Value> = front
        .get("actions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| json!({"params": x.get("params").cloned().unwrap_or_else(|| json!({}))}))
                .collect()
        })
        .unwrap_or_default();
    source.insert("actions".into(), Value::Array(actions));
    if let Some(std) = front.get("responses").and_then(|r| r.get("std")) {
        source.insert("responses".into(), json!({ "std": std }));
    }
    let limits = &directive.front.limits;
    let context = json!({
        "directive": directive.name(),
        "model": directive.front.model.clone().unwrap_or_else(|| json!({})),
        "limits": {"turns": limits.turns, "timeout": limits.timeout},
        "inputs": inputs,
        "steps": {},
    });
    let scope = Scope {
        context: &context,
        inputs: &inputs,
        ..Scope::default()
    };
    let source = Value::Object(source);
    let stages = explain(
        &source,
        &Chain::of(&[Layer::INPUTS, Layer::CONTEXT]),
        &project.limits,
        &scope,
        &RenderOptions::default(),
    )?;
    let mut out = format!(
        "directive {}: stages 3-6 run inside each action's tool (strata explain tools/<tool>.yaml); `${{steps…}}` are empty before a run\n\n",
        directive.name()
    );
    table(
        &mut out,
        fields,
        &source,
        &FieldPath::root(),
        &stages,
        args.field.as_deref(),
    )?;
    if args.field.is_none() {
        responses_text(&mut out, &directive, project);
    }
    Ok(("directive", name, out))
}

/// The candidates of `responses:`, each field with the source that will fill it.
fn responses_text(out: &mut String, directive: &Directive, project: &App) {
    let origins = directive.field_origins(&|tool| project.response_fields(tool));
    if origins.is_empty() {
        return;
    }
    let generator = directive
        .generator()
        .map_or_else(|| "none".to_string(), |g| format!("`{g}`"));
    let _ = writeln!(out, "\nresponses (generator: {generator})");
    for (candidate, fields) in origins {
        let when = candidate
            .when
            .as_ref()
            .map_or_else(String::new, |w| format!(" when {}", w.source()));
        let _ = writeln!(out, "  {}{when}", candidate.name());
        let width = fields.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, origin) in fields {
            let _ = writeln!(out, "    {name:<width$}  {}", origin.describe());
        }
    }
}
