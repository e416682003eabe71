//! The names a graph's `${state.…}`, a plan's step references and a graph prompt node's
//! `key` accept, and where state keys and step ids are declared, read from the file's
//! document rather than from the loaded graph or plan: a reference half typed in an editor
//! stops the graph or plan from loading, not its YAML or JSON from parsing.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use strata_core::{FieldPath, PathSeg};
use strata_doc::{Document, Format};
use strata_project::Project;

use crate::names::{Known, Shown};

fn key(at: &FieldPath, k: &str) -> FieldPath {
    at.child(PathSeg::Key(k.to_string()))
}

fn origin(doc: &Document, at: &FieldPath) -> Option<(String, usize, usize)> {
    doc.locate(at, None)
        .map(|(line, column)| (doc.name.clone(), line, column))
}

/// The state keys `${state.key}` accepts in the graph `text` (named `file`, a path of the
/// project), in name order: the keys initialised under `state:` (with their nested keys,
/// as `key.inner`, where the initial value is a map) and those a node assigns or a foreach
/// node collects. A key's origin is the first node that assigns it, else its `state:`
/// entry. Empty when the text is not a graph's YAML.
pub fn graph_state(project: &Project, file: &Path, text: &str) -> Vec<Known> {
    let Some(doc) = graph_doc(project, file, text) else {
        return Vec::new();
    };
    let root = FieldPath(Vec::new());
    let mut found: BTreeMap<String, Known> = BTreeMap::new();
    let nodes = doc.value.get("nodes").and_then(Value::as_object);
    for (id, node) in nodes.into_iter().flatten() {
        let at = key(&key(&root, "nodes"), id);
        let assigned = node.get("assign").and_then(Value::as_object);
        let mut writes: Vec<(String, FieldPath, &str)> = assigned
            .into_iter()
            .flatten()
            .map(|(k, _)| (k.clone(), key(&key(&at, "assign"), k), "assigned"))
            .collect();
        if let Some(c) = node.get("collect").and_then(Value::as_str) {
            writes.push((c.to_string(), key(&at, "collect"), "collected"));
        }
        for (k, place, how) in writes {
            found.entry(k.clone()).or_insert_with(|| Known {
                name: k,
                what: format!("state key, {how} by node `{id}`"),
                value: Shown::Unknown("runtime state: set as the graph runs".into()),
                default: None,
                origin: origin(&doc, &place),
            });
        }
    }
    if let Some(state) = doc.value.get("state").and_then(Value::as_object) {
        initial(&doc, state, &key(&root, "state"), "", &mut found);
    }
    found.into_values().collect()
}

/// Adds the keys of the initial state `map` (at `at`, its names prefixed by `prefix`),
/// nested maps' keys too.
fn initial(
    doc: &Document,
    map: &serde_json::Map<String, Value>,
    at: &FieldPath,
    prefix: &str,
    found: &mut BTreeMap<String, Known>,
) {
    for (k, v) in map {
        let name = format!("{prefix}{k}");
        let place = key(at, k);
        let entry = found.entry(name.clone()).or_insert_with(|| Known {
            name: name.clone(),
            what: "state key, initialised under `state:`".into(),
            value: Shown::Unknown("runtime state: set as the graph runs".into()),
            default: None,
            origin: origin(doc, &place),
        });
        entry.default = Some(v.to_string());
        if let Value::Object(inner) = v {
            initial(doc, inner, &place, &format!("{name}."), found);
        }
    }
}

/// The step entries of plan document `doc`: each one's value and field path.
fn step_entries(doc: &Document) -> Vec<(&Value, FieldPath)> {
    let root = FieldPath(Vec::new());
    let (items, at) = match &doc.value {
        Value::Array(items) => (items, root),
        Value::Object(map) => match map.get("steps") {
            Some(Value::Array(items)) => (items, key(&root, "steps")),
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let entries = items.iter().enumerate();
    entries
        .map(|(i, step)| (step, at.child(PathSeg::Index(i))))
        .collect()
}

/// The graph `text` (named `file`, a path of the project) parsed as YAML.
fn graph_doc(project: &Project, file: &Path, text: &str) -> Option<Document> {
    let name = project.display_name(file);
    Document::parse(
        &name,
        text.as_bytes().to_vec(),
        Format::Yaml,
        &project.limits,
    )
    .ok()
}

fn plan_doc(project: &Project, file: &Path, text: &str) -> Option<Document> {
    let name = project.display_name(file);
    strata_plans::parse_document(&name, text.as_bytes().to_vec(), &project.limits).ok()
}

/// The steps of the plan `text` (named `file`, a path of the project), in plan order, each
/// with the line of its entry as origin: what `{{id.result…}}` and `$stepN` name. Empty
/// when the text is not a plan's document.
pub fn plan_steps(project: &Project, file: &Path, text: &str) -> Vec<Known> {
    let Some(doc) = plan_doc(project, file, text) else {
        return Vec::new();
    };
    let steps = step_entries(&doc).into_iter().enumerate();
    let known = steps.filter_map(|(i, (step, place))| {
        let id = step.get("id")?.as_str()?;
        let tool = step.get("tool").and_then(Value::as_str).unwrap_or("?");
        Some(Known {
            name: id.to_string(),
            what: format!("step {} (calls `{tool}`)", i + 1),
            value: Shown::Unknown("its record is known once the step has run".into()),
            default: None,
            origin: origin(&doc, &place),
        })
    });
    known.collect()
}

/// For each step of the plan `text`, in plan order, the indices of the steps its arguments
/// refer to (`{{id…}}`, `$stepN`): what it waits for. A reference that does not parse (a
/// half-typed one) refers to nothing. Empty when the text is not a plan's document.
pub fn plan_step_waits(project: &Project, file: &Path, text: &str) -> Vec<Vec<usize>> {
    let Some(doc) = plan_doc(project, file, text) else {
        return Vec::new();
    };
    let steps = step_entries(&doc);
    let index: BTreeMap<&str, usize> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, (step, _))| Some((step.get("id")?.as_str()?, i)))
        .collect();
    steps
        .iter()
        .map(|(step, _)| {
            let arguments = step.get("arguments").or_else(|| step.get("parameters"));
            let args =
                strata_plans::Args::compile(arguments.unwrap_or(&Value::Null), &mut Vec::new());
            let ids = args.step_ids();
            ids.iter().filter_map(|id| index.get(id).copied()).collect()
        })
        .collect()
}

/// The paths `{{id.result.…}}` is known to read for step `id` of the plan `text`: the
/// fields (nested ones as `field.inner`) of the `outputs` its tool declares. Empty when
/// the step is not found or its tool declares no `outputs`.
pub fn step_result_paths(project: &Project, file: &Path, text: &str, id: &str) -> Vec<Known> {
    let Some(doc) = plan_doc(project, file, text) else {
        return Vec::new();
    };
    let tool = step_entries(&doc).into_iter().find_map(|(step, _)| {
        (step.get("id")?.as_str()? == id).then(|| step.get("tool")?.as_str().map(str::to_string))?
    });
    let Some(schema) = tool.and_then(|t| strata_project::tool_outputs(project, &t).map(|s| (t, s)))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    output_fields(&schema.1, &schema.0, "", &mut out);
    out
}

/// Adds the fields of the output schema `schema` of `tool`, prefixed by `prefix`.
fn output_fields(schema: &Value, tool: &str, prefix: &str, out: &mut Vec<Known>) {
    let properties = schema.get("properties").and_then(Value::as_object);
    for (k, field) in properties.into_iter().flatten() {
        let name = format!("{prefix}{k}");
        let of_type = field.get("type").and_then(Value::as_str).unwrap_or("any");
        out.push(Known {
            name: name.clone(),
            what: format!("output field of `{tool}` ({of_type})"),
            value: Shown::Unknown("known once the step has run".into()),
            default: None,
            origin: None,
        });
        output_fields(field, tool, &format!("{name}."), out);
    }
}

/// The keys the `key:` written on line `line` (1-based) of the graph `text` (named `file`)
/// can name, when that line is a prompt node's `key`: every template name of `prompts/`,
/// each with the template the fallback picks for it under the node's `type`, `version` and
/// `root_space` (`PromptManager::fallback_chain`), whose place is its origin. `None` when
/// the line is no prompt node's key.
pub fn prompt_keys_at(
    project: &Project,
    file: &Path,
    text: &str,
    line: usize,
) -> Option<Vec<Known>> {
    let doc = graph_doc(project, file, text)?;
    let nodes = key(&FieldPath(Vec::new()), "nodes");
    let written = text.lines().nth(line.checked_sub(1)?)?;
    if !written.trim_start().starts_with("key:") {
        return None;
    }
    // The node whose entry starts last before the line holds it (an empty `key:` is null,
    // which has no place of its own).
    let (_, node) = doc
        .value
        .get("nodes")?
        .as_object()?
        .iter()
        .filter_map(|(id, node)| {
            let start = doc.locate(&key(&nodes, id), None)?.0;
            (start <= line).then_some((start, node))
        })
        .max_by_key(|(start, _)| *start)?;
    if node.get("kind").and_then(Value::as_str) != Some("prompt") {
        return None;
    }
    let text_of = |k: &str| node.get(k).and_then(Value::as_str).map(str::to_string);
    let overrides = strata_prompts::Overrides {
        root_space: text_of("root_space").map(Some),
        type_: text_of("type"),
        version: text_of("version").filter(|v| !v.contains("${")).map(Some),
        ..strata_prompts::Overrides::default()
    };
    let m = prompt_store(project)?.switch(&overrides).ok()?;
    let templates = m.templates();
    let keys = m.keys().into_iter().filter_map(|k| {
        let chain = m.fallback_chain(Some(&k)).ok()?;
        let picked = m.resolve(Some(&k)).ok()??.to_string();
        let place = templates.iter().find(|t| t.id == picked).map(|t| &t.place);
        Some(Known {
            what: format!(
                "prompt key, picks `{picked}` (fallback: {})",
                chain.join(" → ")
            ),
            value: Shown::Value(picked),
            default: None,
            origin: place.map(|p| (p.file.clone(), p.line, p.column)),
            name: k,
        })
    });
    Some(keys.collect())
}

/// Where the graph `text` (named `file`) declares state key `name`: its `state:` entry's
/// key, each node's `assign` key of that name and each `collect:` naming it, as 1-based
/// (line, column) of the name, in file order.
pub fn state_key_sites(
    project: &Project,
    file: &Path,
    text: &str,
    name: &str,
) -> Vec<(usize, usize)> {
    let Some(doc) = graph_doc(project, file, text) else {
        return Vec::new();
    };
    let positions = strata_doc::Positions::of(text);
    let root = FieldPath(Vec::new());
    let mut out: Vec<(usize, usize)> = positions
        .locate_key(&key(&key(&root, "state"), name))
        .into_iter()
        .collect();
    let nodes = doc.value.get("nodes").and_then(Value::as_object);
    for (id, node) in nodes.into_iter().flatten() {
        let at = key(&key(&root, "nodes"), id);
        out.extend(positions.locate_key(&key(&key(&at, "assign"), name)));
        if node.get("collect").and_then(Value::as_str) == Some(name) {
            out.extend(value_name_at(&doc, &key(&at, "collect"), name));
        }
    }
    out.sort_unstable();
    out
}

/// Where plan `text` (named `file`) declares step `id`: the 1-based (line, column) of the
/// id in its entry's `id:`.
pub fn step_id_site(
    project: &Project,
    file: &Path,
    text: &str,
    id: &str,
) -> Option<(usize, usize)> {
    let doc = plan_doc(project, file, text)?;
    let place = step_entries(&doc)
        .into_iter()
        .find(|(step, _)| step.get("id").and_then(Value::as_str) == Some(id))?
        .1;
    value_name_at(&doc, &key(&place, "id"), id)
}

/// The position of the string value `name` at `at` (after its opening quote, if quoted).
fn value_name_at(doc: &Document, at: &FieldPath, name: &str) -> Option<(usize, usize)> {
    let (line, column) = doc.locate(at, None)?;
    let written = doc.text.lines().nth(line - 1)?;
    let from = written
        .char_indices()
        .nth(column - 1)
        .map_or(written.len(), |(i, _)| i);
    let shift = usize::from(!written[from..].starts_with(name));
    Some((line, column + shift))
}

/// The project's prompt store (`prompts/`), `None` when it does not load.
fn prompt_store(project: &Project) -> Option<strata_prompts::PromptManager> {
    let loaded = strata_prompts::PromptManager::builder()
        .limits(strata_prompts::PromptLimits::from_limits(&project.limits))
        .dir(
            &project.root.join(strata_prompts::PROMPTS_DIR),
            strata_prompts::PROMPTS_DIR,
        )
        .build_all()
        .ok()?;
    Some(loaded.manager)
}

/// A prompt node's `key:` as written in a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptKeyUse {
    /// The node's id.
    pub node: String,
    /// The key as written (`Search`, `main/Search`, `${state.k}`).
    pub written: String,
    /// The 1-based line and column of the written key (after its opening quote).
    pub at: (usize, usize),
}

/// The `key:` of every prompt node of the graph `text` (named `file`), in node order.
/// Empty when the text is not a graph's YAML.
pub fn prompt_key_uses(project: &Project, file: &Path, text: &str) -> Vec<PromptKeyUse> {
    let Some(doc) = graph_doc(project, file, text) else {
        return Vec::new();
    };
    let nodes_at = key(&FieldPath(Vec::new()), "nodes");
    let nodes = doc.value.get("nodes").and_then(Value::as_object);
    let uses = nodes.into_iter().flatten().filter_map(|(id, node)| {
        if node.get("kind").and_then(Value::as_str) != Some("prompt") {
            return None;
        }
        let written = node.get("key")?.as_str()?;
        let at = value_name_at(&doc, &key(&key(&nodes_at, id), "key"), written)?;
        Some(PromptKeyUse {
            node: id.clone(),
            written: written.to_string(),
            at,
        })
    });
    uses.collect()
}

/// A template of the prompt store that defines a key (or one of its fallback variants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptKeySite {
    /// Its file, relative to the project (`prompts/main/Search.j2`).
    pub file: String,
    /// Its stem: the key with its variant's suffix (`BrowseLink.enterprise`).
    pub stem: String,
    /// For an entry of a dict file, the 1-based line and column of its stem; `None` for a
    /// template file, whose file name holds the stem.
    pub at: Option<(usize, usize)>,
}

/// Every template of the project's prompt store named `name` (each variant of it, in
/// every namespace; components aside), in id order.
pub fn prompt_key_sites(project: &Project, name: &str) -> Vec<PromptKeySite> {
    let Some(store) = prompt_store(project) else {
        return Vec::new();
    };
    let mut templates = store.templates();
    templates.retain(|t| !t.component && t.name == name);
    templates.sort_by(|a, b| a.id.cmp(&b.id));
    let sites = templates.into_iter().map(|t| {
        let stem = t.id.rsplit('/').next().unwrap_or(&t.id).to_string();
        let dict = Path::new(&t.place.file)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| strata_prompts::DICT_EXTENSIONS.contains(&e));
        let at = dict
            .then(|| dict_entry(project, &t.place.file, &t.namespace, &stem))
            .flatten();
        PromptKeySite {
            file: t.place.file,
            stem,
            at,
        }
    });
    sites.collect()
}

/// Where the dict file `file` (relative to the project) writes the entry `stem` of
/// namespace `namespace`: its nesting starts at the file's directory under `prompts/`.
fn dict_entry(
    project: &Project,
    file: &str,
    namespace: &str,
    stem: &str,
) -> Option<(usize, usize)> {
    let text = std::fs::read_to_string(project.root.join(file)).ok()?;
    let dir = Path::new(file).parent()?;
    let within = dir.strip_prefix(strata_prompts::PROMPTS_DIR).ok()?;
    let mut segments: Vec<&str> = namespace.split('/').filter(|s| !s.is_empty()).collect();
    let depth = within.components().count();
    if segments.len() < depth {
        return None;
    }
    segments.drain(..depth);
    let mut at = FieldPath(Vec::new());
    for s in segments.into_iter().chain([stem]) {
        at = key(&at, s);
    }
    strata_doc::Positions::of(&text).locate_key(&at)
}
