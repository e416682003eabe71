//! Parsing one node of each kind, its `assign` and its `next` edges.

use serde_json::{Map, Value};
use strata_core::{Error, FieldPath};

use crate::fields::{index, key, names, Reader};
use crate::load::parse_when;
use crate::model::{Action, Assign, Body, Edge, Foreach, Node, DEFAULT_CONCURRENCY};
use strata_core::did_you_mean;
use strata_tools::ToolRunner;

/// The node kinds.
pub const KINDS: [&str; 5] = ["action", "gate", "foreach", "return", "prompt"];

const ACTION_KEYS: [&str; 7] = [
    "kind",
    "description",
    "tool",
    "params",
    "allow_failure",
    "assign",
    "next",
];
const GATE_KEYS: [&str; 4] = ["kind", "description", "assign", "next"];
const FOREACH_KEYS: [&str; 11] = [
    "kind",
    "description",
    "over",
    "as",
    "do",
    "parallel",
    "max_concurrency",
    "collect",
    "output",
    "assign",
    "next",
];
const RETURN_KEYS: [&str; 3] = ["kind", "description", "output"];

/// Where a node stands: at the top level (with the ids `next` may name) or in a foreach body.
pub(crate) enum Place<'a> {
    /// A top-level node; the slice holds every node id.
    Top(&'a [String]),
    /// A node of a foreach body.
    Body,
}

/// The keys of an edge.
pub const EDGE_KEYS: [&str; 2] = ["to", "when"];

/// The keys a node of `kind` may have, at the top level or (`body`) in a foreach body.
pub fn node_keys(kind: &str, body: bool) -> Vec<&'static str> {
    let keys: &[&str] = match kind {
        "action" => &ACTION_KEYS,
        "gate" => &GATE_KEYS,
        "foreach" => &FOREACH_KEYS,
        "prompt" => &crate::prompt::PROMPT_KEYS,
        _ => &RETURN_KEYS,
    };
    let mut keys: Vec<&str> = keys.to_vec();
    if body {
        keys.retain(|k| *k != "next");
        keys.push("id");
    }
    keys
}

/// Parses the node `id` declared at `path`.
pub(crate) fn parse_node(
    r: &Reader<'_>,
    id: &str,
    value: &Value,
    path: &FieldPath,
    place: &Place<'_>,
    tools: &dyn ToolRunner,
) -> Result<Node, Error> {
    let map = r.map(value, path, &format!("node `{id}`"))?;
    let kind = match map.get("kind") {
        Some(Value::String(k)) if KINDS.contains(&k.as_str()) => k.as_str(),
        Some(Value::String(k)) => {
            let hint = match did_you_mean(k, KINDS.iter().copied()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("the kinds are {}", names(&KINDS)),
            };
            return Err(r.err_hint(
                &key(path, "kind"),
                format!("unknown node kind `{k}`"),
                &hint,
            ));
        }
        _ => {
            return Err(r.err_at_key(
                path,
                format!("node `{id}` needs a `kind`"),
                &format!("the kinds are {}", names(&KINDS)),
            ))
        }
    };
    let body_place = matches!(place, Place::Body);
    if body_place && kind == "return" {
        return Err(r.err(
            &key(path, "kind"),
            "a foreach body cannot hold a `return` node",
        ));
    }
    if kind == "return" && map.contains_key("next") {
        return Err(r.err(
            &key(path, "next"),
            "a return node ends the graph; it has no `next`",
        ));
    }
    let keys = node_keys(kind, body_place);
    r.known_keys(map, path, &keys, &format!("{} {kind} node", article(kind)))?;
    let body = match kind {
        "action" => Body::Action(Box::new(parse_action(r, map, path, tools)?)),
        "gate" => Body::Gate(parse_assign(r, map, path)?),
        "foreach" => Body::Foreach(Box::new(parse_foreach(r, id, map, path, tools)?)),
        "prompt" => Body::Prompt(Box::new(crate::prompt::parse(r, map, path)?)),
        _ => {
            let output = map
                .get("output")
                .ok_or_else(|| r.err(path, format!("return node `{id}` needs an `output`")))?;
            Body::Return(r.template(output, &key(path, "output"))?)
        }
    };
    let next = match place {
        Place::Top(ids) => parse_next(r, map.get("next"), &key(path, "next"), ids)?,
        Place::Body => Vec::new(),
    };
    Ok(Node {
        id: id.to_string(),
        path: path.clone(),
        body,
        next,
    })
}

fn parse_action(
    r: &Reader<'_>,
    map: &Map<String, Value>,
    path: &FieldPath,
    tools: &dyn ToolRunner,
) -> Result<Action, Error> {
    let tool = r
        .opt_str(map, path, "tool")?
        .ok_or_else(|| r.err(path, "an action node needs a `tool`"))?;
    tools
        .callable(tool)
        .map_err(|e| r.locate(e.at_path(&key(path, "tool"))))?;
    let params = map
        .get("params")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let params_path = key(path, "params");
    r.map(&params, &params_path, "`params`")?;
    Ok(Action {
        tool: tool.to_string(),
        params: r.template(&params, &params_path)?,
        allow_failure: r.flag(map, path, "allow_failure")?,
        assign: parse_assign(r, map, path)?,
    })
}

/// Parses the node's `assign` map (empty when absent).
pub(crate) fn parse_assign(
    r: &Reader<'_>,
    map: &Map<String, Value>,
    path: &FieldPath,
) -> Result<Assign, Error> {
    let Some(value) = map.get("assign") else {
        return Ok(Assign::empty());
    };
    let at = key(path, "assign");
    let entries = r.map(value, &at, "`assign`")?;
    if entries.is_empty() {
        return Ok(Assign::empty());
    }
    if let Some(k) = entries.keys().find(|k| k.is_empty()) {
        return Err(r.err(&key(&at, k), "state keys cannot be empty"));
    }
    Ok(Assign {
        keys: entries.keys().cloned().collect(),
        template: Some(r.template(value, &at)?),
    })
}

fn parse_foreach(
    r: &Reader<'_>,
    id: &str,
    map: &Map<String, Value>,
    path: &FieldPath,
    tools: &dyn ToolRunner,
) -> Result<Foreach, Error> {
    let over_path = key(path, "over");
    let over = match map.get("over") {
        None => return Err(r.err(path, "a foreach node needs `over` (a list)")),
        Some(v @ Value::Array(_)) => v.clone(),
        Some(Value::String(s)) if is_whole_reference(s) => Value::String(s.clone()),
        Some(_) => {
            return Err(r.err_hint(
                &over_path,
                "`over` must be a whole-value reference such as \"${state.items}\", or a list",
                "write the reference alone in the string, with no text around it",
            ))
        }
    };
    let item = r.opt_str(map, path, "as")?.unwrap_or("item");
    if !is_ident(item) || crate::validate::RESERVED.contains(&item) {
        return Err(r.err_hint(
            &key(path, "as"),
            format!("`{item}` cannot name the element"),
            "use a lower-case name such as `item` (not state, inputs, result or error)",
        ));
    }
    let do_path = key(path, "do");
    let items: Vec<(FieldPath, &Value)> = match map.get("do") {
        None => {
            return Err(r.err(
                path,
                "a foreach node needs `do` (a node or a list of nodes)",
            ))
        }
        Some(Value::Array(list)) if !list.is_empty() => list
            .iter()
            .enumerate()
            .map(|(i, v)| (index(&do_path, i), v))
            .collect(),
        Some(v @ Value::Object(_)) => vec![(do_path.clone(), v)],
        Some(_) => return Err(r.err(&do_path, "`do` must be a node or a non-empty list of nodes")),
    };
    let mut body = Vec::new();
    for (i, (at, v)) in items.into_iter().enumerate() {
        let sub_id = v
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("{id}.do[{i}]"), str::to_string);
        body.push(parse_node(r, &sub_id, v, &at, &Place::Body, tools)?);
    }
    let collect = r.opt_str(map, path, "collect")?.map(str::to_string);
    let assign = parse_assign(r, map, path)?;
    if let Some(c) = &collect {
        if assign.keys.contains(c) {
            return Err(r.err(
                &key(&key(path, "assign"), c),
                format!("`{c}` is both collected and assigned"),
            ));
        }
    }
    let max_concurrency = r
        .opt_count(map, path, "max_concurrency")?
        .map_or(DEFAULT_CONCURRENCY, |n| n.min(256) as usize);
    Ok(Foreach {
        over: r.template(&over, &over_path)?,
        item: item.to_string(),
        body,
        parallel: r.flag(map, path, "parallel")?,
        max_concurrency,
        collect,
        output: match map.get("output") {
            Some(v) => Some(r.template(v, &key(path, "output"))?),
            None => None,
        },
        assign,
    })
}

/// True when `s` is exactly one `${…}` placeholder.
fn is_whole_reference(s: &str) -> bool {
    s.starts_with("${") && s.ends_with('}') && !s[2..].contains("${")
}

/// True for `[a-z_][A-Za-z0-9_]*`.
pub(crate) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_next(
    r: &Reader<'_>,
    value: Option<&Value>,
    path: &FieldPath,
    ids: &[String],
) -> Result<Vec<Edge>, Error> {
    let target = |name: &str, at: &FieldPath| -> Result<usize, Error> {
        ids.iter().position(|i| i == name).ok_or_else(|| {
            let cands: Vec<&str> = ids.iter().map(String::as_str).collect();
            let hint = match did_you_mean(name, cands.iter().copied()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("the nodes are {}", names(&cands)),
            };
            r.err_hint(at, format!("unknown target node `{name}`"), &hint)
        })
    };
    match value {
        None => Ok(Vec::new()),
        Some(Value::String(name)) => Ok(vec![Edge {
            to: target(name, path)?,
            target: name.clone(),
            when: None,
        }]),
        Some(Value::Array(items)) => {
            let mut edges = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let at = index(path, i);
                let map = match item {
                    Value::String(name) => {
                        let hint = format!("write `- to: {name}` (and `when:` under it), or `next: {name}` for a single edge");
                        return Err(r.err_hint(
                            &at,
                            "an edge must be a map `{to, when?}`, not a string",
                            &hint,
                        ));
                    }
                    item => r.map(item, &at, "an edge `{to, when?}`")?,
                };
                r.known_keys(map, &at, &EDGE_KEYS, "an edge")?;
                let name = r
                    .opt_str(map, &at, "to")?
                    .ok_or_else(|| r.err(&at, "an edge needs `to` (a node id)"))?;
                let when = match map.get("when") {
                    Some(w) => Some(parse_when(r, w, &key(&at, "when"))?),
                    None if i + 1 < items.len() => {
                        return Err(r.err_hint(
                            &key(&at, "to"),
                            "only the last edge of `next` may have no `when`",
                            "edges are tried in order; an edge without `when` always matches, so the edges after it could never be taken",
                        ))
                    }
                    None => None,
                };
                edges.push(Edge {
                    to: target(name, &key(&at, "to"))?,
                    target: name.to_string(),
                    when,
                });
            }
            Ok(edges)
        }
        Some(_) => Err(r.err(
            path,
            "`next` must be a node id or a list of {to, when} edges",
        )),
    }
}

/// `an` before a vowel sound (`an action node`), `a` otherwise (`a gate node`).
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}
