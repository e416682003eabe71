//! Prompt nodes: render a prompt template of the project's `prompts/` by key into the node's
//! `result` (`{template, text}`, or `{template, variants}` for versioned components). The
//! key, the version, the feed and the knowledge are layer-C templates over `state` and
//! `inputs`, so a graph chooses its prompt from its state (`key: "${state.last_action}"`).

use serde_json::{json, Map, Value};
use strata_core::{ContextSource, Error, ErrorKind, FieldPath, Warning};
use strata_prompts::{Call, Merge, Overrides};

use crate::exec::{Exec, Failure, Work};
use crate::fields::{key, names, Reader};
use crate::model::{Assign, Body, Graph, Node};
use crate::nodes::parse_assign;

/// The keys of a prompt node.
pub(crate) const PROMPT_KEYS: [&str; 13] = [
    "kind",
    "description",
    "key",
    "version",
    "type",
    "root_space",
    "feed",
    "knowledge",
    "merge",
    "pin",
    "hash",
    "assign",
    "next",
];

/// A prompt node.
#[derive(Debug)]
pub struct PromptNode {
    /// The key: renders to a string, or null for the default name.
    pub key: strata_pipeline::Template,
    /// The key as written (a constant key can be checked before anything runs).
    pub key_source: Value,
    /// The version, when set.
    pub version: Option<strata_pipeline::Template>,
    /// The version as written.
    pub version_source: Option<Value>,
    /// The type namespace, when not the manager's.
    pub type_: Option<String>,
    /// The root space, when set.
    pub root_space: Option<String>,
    /// The feed: renders to a map of variables.
    pub feed: strata_pipeline::Template,
    /// The feed's variable names, when `feed` is written as a map.
    pub feed_keys: Option<Vec<String>>,
    /// Knowledge merged into the feed.
    pub knowledge: Option<strata_pipeline::Template>,
    /// The knowledge's variable names, when `knowledge` is written as a map.
    pub knowledge_keys: Option<Vec<String>>,
    /// How knowledge merges into the feed.
    pub merge: Merge,
    /// Component versions: `(component, version)`.
    pub pins: Vec<(String, String)>,
    /// The content hash the template must have.
    pub hash: Option<String>,
    /// Assignments over `state`, `inputs` and `result`.
    pub assign: Assign,
}

/// True when the graph has a prompt node (and needs the project's prompts to run).
pub fn uses_prompts(graph: &Graph) -> bool {
    fn any(nodes: &[Node]) -> bool {
        nodes.iter().any(|n| match &n.body {
            Body::Prompt(_) => true,
            Body::Foreach(f) => any(&f.body),
            _ => false,
        })
    }
    any(&graph.nodes)
}

fn map_keys(value: Option<&Value>) -> Option<Vec<String>> {
    value
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
}

/// Parses the fields of a prompt node.
pub(crate) fn parse(
    r: &Reader<'_>,
    map: &Map<String, Value>,
    path: &FieldPath,
) -> Result<PromptNode, Error> {
    let template = |k: &str| -> Result<Option<strata_pipeline::Template>, Error> {
        match map.get(k) {
            Some(v) => r.template(v, &key(path, k)).map(Some),
            None => Ok(None),
        }
    };
    let key_source = map.get("key").cloned().unwrap_or(Value::Null);
    if !(key_source.is_string() || key_source.is_null()) {
        return Err(r.err(
            &key(path, "key"),
            "`key` must be a string (or null for the default name)",
        ));
    }
    let feed = map.get("feed").cloned().unwrap_or_else(|| json!({}));
    if !(feed.is_object() || feed.is_string()) {
        return Err(r.err(
            &key(path, "feed"),
            "`feed` must be a map of variables (or one reference to a map)",
        ));
    }
    let merge = match r.opt_str(map, path, "merge")? {
        None => Merge::default(),
        Some(name) => Merge::parse(name).ok_or_else(|| {
            r.err_hint(
                &key(path, "merge"),
                format!("unknown merge strategy `{name}`"),
                &format!("the strategies are {}", names(&Merge::NAMES)),
            )
        })?,
    };
    let mut pins = Vec::new();
    if let Some(v) = map.get("pin") {
        let at = key(path, "pin");
        for (c, version) in r.map(v, &at, "`pin`")? {
            let Some(version) = version.as_str() else {
                return Err(r.err(&key(&at, c), "a pinned version must be a string"));
            };
            pins.push((c.clone(), version.to_string()));
        }
    }
    Ok(PromptNode {
        key: r.template(&key_source, &key(path, "key"))?,
        version: template("version")?,
        version_source: map.get("version").cloned(),
        type_: r.opt_str(map, path, "type")?.map(str::to_string),
        root_space: r.opt_str(map, path, "root_space")?.map(str::to_string),
        feed_keys: map_keys(Some(&feed)),
        feed: r.template(&feed, &key(path, "feed"))?,
        knowledge_keys: map_keys(map.get("knowledge")),
        knowledge: template("knowledge")?,
        merge,
        pins,
        hash: r.opt_str(map, path, "hash")?.map(str::to_string),
        assign: parse_assign(r, map, path)?,
        key_source,
    })
}

/// Renders the node's prompt against `root`.
pub(crate) fn run(
    exec: &Exec<'_>,
    node: &Node,
    p: &PromptNode,
    root: &dyn ContextSource,
    warnings: &mut Vec<Warning>,
) -> Result<Work, Failure> {
    let Some(manager) = exec.prompts else {
        return Err(Failure::of(
            ErrorKind::TemplateNotFound,
            "no prompt templates are loaded: the project needs a prompts/ directory",
        )
        .at(&node.path));
    };
    let at = |k: &str| key(&node.path, k);
    let failed = |k: &'static str| move |m: String| Failure::new(m).at(&at(k));
    let key_text =
        text(exec.render(&p.key, root, &at("key"), warnings)?, "key").map_err(failed("key"))?;
    let version = match &p.version {
        Some(t) => text(exec.render(t, root, &at("version"), warnings)?, "version")
            .map_err(failed("version"))?,
        None => None,
    };
    let feed = object(exec.render(&p.feed, root, &at("feed"), warnings)?, "feed")
        .map_err(failed("feed"))?;
    let knowledge = match &p.knowledge {
        Some(t) => Some(
            object(
                exec.render(t, root, &at("knowledge"), warnings)?,
                "knowledge",
            )
            .map_err(failed("knowledge"))?,
        ),
        None => None,
    };
    let call = Call {
        key: key_text.as_deref(),
        feed: Some(&feed),
        knowledge: knowledge.as_ref(),
        merge: p.merge,
        overrides: Overrides {
            root_space: p.root_space.clone().map(Some),
            type_: p.type_.clone(),
            version: p.version.as_ref().map(|_| version.clone()),
            ..Overrides::default()
        },
        pins: p.pins.clone(),
        hash: p.hash.clone(),
        undefined: exec.options.undefined,
        ..Call::default()
    };
    // The prompts crate's error as it is (`template_not_found` naming every candidate
    // tried, a template's syntax error at its file:line:col), about the node's `key`.
    let out = manager
        .render(&call)
        .map_err(|e| Failure::from(e).at(&at("key")))?;
    warnings.extend(out.warnings.iter().map(|w| Warning {
        path: node.path.clone(),
        ..w.clone()
    }));
    let mut result = out.to_json();
    if let Value::Object(m) = &mut result {
        m.retain(|k, _| matches!(k.as_str(), "template" | "text" | "variants"));
    }
    Ok(Work {
        result,
        run: None,
        inputs: None,
    })
}

/// A rendered key or version: a string, or null.
fn text(v: Value, what: &str) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        other => Err(format!(
            "`{what}` must render to a string or null, not {}",
            strata_tools::type_name(&other)
        )),
    }
}

/// A rendered feed or knowledge: a map.
fn object(v: Value, what: &str) -> Result<Map<String, Value>, String> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(format!(
            "`{what}` must render to a map, not {}",
            strata_tools::type_name(&other)
        )),
    }
}
