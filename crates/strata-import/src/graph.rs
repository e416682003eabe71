//! Graphs (MAPPING §3): a Python-era `tool_type: graph` file becomes `tools/<id>.yaml` of kind
//! `graph`, with generated tools for what strata cannot run: a failing stub
//! `tools/ryeos-unmapped/<item>.yaml` for each LLM thread a node starts, a failing stub at
//! the id of each tool found in no space, and a wrapper `tools/ryeos-nested/graphs/<X>.yaml`
//! for each nested graph.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use strata_core::shown;

use crate::model::{Catalog, FileImport};
use crate::position::yaml_key_position;
use crate::schema;
use crate::util::{compact, named_list, string, text_of, writable_id};

/// The RyeOS tool that runs a directive on an LLM thread.
const THREAD_DIRECTIVE: &str = "rye/agent/threads/thread_directive";

/// Parameters RyeOS's executor consumed when a node ran another graph (the child thread's
/// capabilities and depth); they are no inputs of the graph run.
const EXECUTION_PARAMS: [&str; 3] = ["capabilities", "depth", "parent_thread_id"];

/// Converts the RyeOS graph `value` (parsed from `text`, at `source`; tool id `id`).
pub fn import_graph(
    source: &str,
    id: &str,
    value: &Value,
    text: &str,
    catalog: &Catalog,
) -> FileImport {
    let mut out = FileImport::imported(source);
    let Value::Object(map) = value else {
        return out.refuse("IMP-G-yaml", "the graph file is not a YAML map");
    };
    let mut g = Graph {
        out: &mut out,
        text,
        catalog,
        targets: BTreeMap::new(),
        callers: 0,
        stubs: BTreeMap::new(),
        rewrites: Rewrites::default(),
    };
    let converted = g.convert(id, map);
    let Graph {
        targets,
        stubs,
        rewrites,
        ..
    } = g;
    let body = match converted {
        Ok(body) => body,
        Err((code, message)) => return out.refuse(code, message),
    };
    report_targets(&mut out, text, &targets);
    out.warnings.sort_by_key(|w| (w.line, w.column));
    rewrites.record(&mut out);
    out.write(
        format!("tools/{id}.yaml"),
        crate::util::yaml_file(source, &Value::Object(body)),
    );
    for (path, contents) in stubs {
        out.write(path, contents);
    }
    out
}

type Refused = (&'static str, String);

/// A node calling a target: its name, its place among the nodes read (the file's order) and
/// the path of its action in the RyeOS file, located only for a warning listed.
#[derive(Clone, Debug)]
struct Caller {
    node: String,
    order: usize,
    action: Vec<String>,
}

impl Caller {
    /// The position of the node's action in the RyeOS file `text`.
    fn position(&self, text: &str) -> (usize, usize) {
        let path: Vec<&str> = self.action.iter().map(String::as_str).collect();
        yaml_key_position(text, 0, &path)
    }
}

/// What a node's action runs in strata.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    /// A tool of the catalog, unchanged.
    Tool(String),
    /// An LLM thread (`thread_directive` or a `directive:` item): a failing stub.
    Llm { item: String, stub: String },
    /// Another graph: the nested wrapper.
    Nested { graph: String, wrapper: String },
    /// A tool in no space: a failing stub at its id.
    Missing(String),
}

#[derive(Default)]
struct Rewrites {
    state_inputs: usize,
    item_ids: usize,
    returns_without_output: usize,
}

impl Rewrites {
    fn record(&self, out: &mut FileImport) {
        out.rewrite(
            "tool_type: graph → kind: graph; executor_id (the state-graph runtime) dropped",
        );
        out.rewrite("config.{start, max_steps, on_error, state, nodes} → top level");
        if self.item_ids > 0 {
            out.rewrite(format!(
                "{} node action(s) `{{primary: execute, item_id}}` → `kind: action, tool`",
                self.item_ids
            ));
        }
        if self.returns_without_output > 0 {
            out.rewrite(format!(
                "{} `type: return` without output → `kind: return, output: {{}}` (RyeOS returned {{}})",
                self.returns_without_output
            ));
        }
        if self.state_inputs > 0 {
            out.rewrite(format!(
                "{} `${{state.inputs.x}}` → `${{inputs.x}}` (RyeOS kept the inputs in the state)",
                self.state_inputs
            ));
        }
    }
}

struct Graph<'a> {
    out: &'a mut FileImport,
    text: &'a str,
    catalog: &'a Catalog,
    /// Each target with the nodes calling it, in the file's order.
    targets: BTreeMap<Target, Vec<Caller>>,
    /// How many nodes calling a target were read.
    callers: usize,
    /// Generated files by path.
    stubs: BTreeMap<String, String>,
    rewrites: Rewrites,
}

impl Graph<'_> {
    /// A warning at the key `path` of the RyeOS file (located only when listed).
    fn warn_at(&mut self, code: &str, message: String, path: &[&str]) {
        let text = self.text;
        self.out
            .warn_with(code, message, || yaml_key_position(text, 0, path));
    }

    fn convert(
        &mut self,
        id: &str,
        map: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Refused> {
        let mut body = Map::new();
        body.insert("kind".into(), string("graph"));
        let stem = id.rsplit('/').next().unwrap_or(id);
        let mut config: Option<&Map<String, Value>> = None;
        let mut parameters: Option<Value> = None;
        let mut version = None;
        let mut description = None;
        for (key, v) in map {
            let key = key.as_str();
            match key {
                "tool_type" | "executor_id" | "category" => {}
                "version" => version = Some(Value::String(text_of(v))),
                "description" => description = Some(Value::String(text_of(v))),
                "tool_id" => {
                    let t = text_of(v);
                    if t != stem {
                        self.warn_at(
                            "IMP-tool_id",
                            format!("`tool_id: {}` differs from the file stem `{stem}`: the strata id is the path, `{id}`", shown(&t)),
                            &["tool_id"],
                        );
                    }
                }
                "permissions" => {
                    let what = compact(v);
                    self.warn_at(
                        "IMP-permissions",
                        format!("`permissions: {what}` dropped: strata enforces no capabilities"),
                        &["permissions"],
                    );
                }
                "config_schema" | "input_schema" => {
                    let converted = schema::convert(v);
                    for d in &converted.dropped {
                        self.warn_at(
                            "IMP-schema-keyword",
                            format!("schema keyword `{}` at {} dropped: strata's parameters do not have it, the constraint is lost", shown(&d.keyword), shown(&d.at)),
                            &[key],
                        );
                    }
                    if converted.dollar_schema {
                        self.out.rewrite(format!("{key}.$schema dropped"));
                    }
                    self.out.rewrite(format!("{key} → parameters"));
                    parameters = Some(converted.schema);
                }
                "config" => match v {
                    Value::Object(m) => config = Some(m),
                    _ => return Err(("IMP-G-yaml", "`config` of the graph is not a map".into())),
                },
                other => self.warn_at(
                    "IMP-G-key",
                    format!(
                        "`{}` of the graph has no strata equivalent: dropped",
                        shown(other)
                    ),
                    &[other],
                ),
            }
        }
        if let Some(d) = description {
            body.insert("description".into(), d);
        }
        if let Some(v) = version {
            body.insert("version".into(), v);
        }
        if let Some(p) = parameters {
            body.insert("parameters".into(), p);
        }
        let Some(config) = config else {
            return Err(("IMP-G-yaml", "the graph has no `config` (no nodes)".into()));
        };
        let mut nodes_out = Map::new();
        let mut top = Map::new();
        for (key, v) in config {
            let key = key.as_str();
            match key {
                "state" => {
                    top.insert(
                        "state".into(),
                        self.templates(v.clone(), &["config", "state"]),
                    );
                }
                "start" | "max_steps" | "on_error" => {
                    top.insert(key.into(), v.clone());
                }
                "nodes" => {
                    let Value::Object(nodes) = v else {
                        return Err(("IMP-G-yaml", "`config.nodes` is not a map".into()));
                    };
                    for (name, node) in nodes {
                        let converted = self.node(name, node)?;
                        nodes_out.insert(name.clone(), Value::Object(converted));
                    }
                }
                other => self.warn_at(
                    "IMP-G-key",
                    format!(
                        "`config.{}` of the graph has no strata equivalent: dropped",
                        shown(other)
                    ),
                    &["config", other],
                ),
            }
        }
        // strata's order: state, start, max_steps, on_error, then the nodes.
        for key in ["state", "start", "max_steps", "on_error"] {
            if let Some(v) = top.get(key) {
                body.insert(key.into(), v.clone());
            }
        }
        if nodes_out.is_empty() {
            return Err(("IMP-G-yaml", "the graph has no nodes".into()));
        }
        body.insert("nodes".into(), Value::Object(nodes_out));
        Ok(body)
    }

    fn node(&mut self, name: &str, node: &Value) -> Result<Map<String, Value>, Refused> {
        let path = ["config", "nodes", name];
        let Value::Object(node) = node else {
            return Err(("IMP-G-yaml", format!("node `{}` is not a map", shown(name))));
        };
        let ty = node.get("type").map(text_of);
        let mut outn = Map::new();
        let kind = match ty.as_deref() {
            Some("return") => "return",
            Some("foreach") => "foreach",
            Some("gate") => "gate",
            Some(other) => {
                self.warn_at(
                    "IMP-G-node",
                    format!(
                        "node `{}` has `type: {}`, which strata does not know: imported as {}",
                        shown(name),
                        shown(other),
                        if node.contains_key("action") {
                            "an action"
                        } else {
                            "a gate"
                        }
                    ),
                    &[&path[..], &["type"]].concat(),
                );
                if node.contains_key("action") {
                    "action"
                } else {
                    "gate"
                }
            }
            None if node.contains_key("action") => "action",
            None => "gate",
        };
        outn.insert("kind".into(), string(kind));
        let mut on_error_node: Option<String> = None;
        let mut next: Option<Value> = None;
        for (key, v) in node {
            let key = key.as_str();
            let here = [&path[..], &[key]].concat();
            match key {
                "type" => {}
                "description" => {
                    outn.insert("description".into(), v.clone());
                }
                "action" => {
                    let (tool, params) = self.action(name, v, &here)?;
                    if kind == "foreach" {
                        let mut body = Map::new();
                        body.insert("kind".into(), string("action"));
                        body.insert("tool".into(), Value::String(tool));
                        body.insert("params".into(), params);
                        outn.insert("do".into(), Value::Object(body));
                    } else {
                        outn.insert("tool".into(), Value::String(tool));
                        outn.insert("params".into(), params);
                    }
                }
                "assign" | "over" => {
                    let v = self.templates(v.clone(), &here);
                    outn.insert(key.into(), v);
                }
                "output" if kind == "return" || kind == "foreach" => {
                    let v = self.templates(v.clone(), &here);
                    outn.insert("output".into(), v);
                }
                "as" | "collect" | "parallel" | "max_concurrency" if kind == "foreach" => {
                    outn.insert(key.into(), v.clone());
                }
                "next" if kind != "return" => next = Some(self.templates(v.clone(), &here)),
                "on_error" if kind == "action" => on_error_node = Some(text_of(v)),
                "cache" | "cache_result" => self.warn_at(
                    "IMP-G-cache_result",
                    format!("node `{}`: `{key}: {}` dropped: strata does not cache node results (the node runs every time)", shown(name), compact(v)),
                    &here,
                ),
                other => self.warn_at(
                    "IMP-G-key",
                    format!("node `{}`: `{}` has no strata equivalent here: dropped", shown(name), shown(other)),
                    &here,
                ),
            }
        }
        if kind == "return" && !outn.contains_key("output") {
            outn.insert("output".into(), Value::Object(Map::new()));
            self.rewrites.returns_without_output += 1;
        }
        if let Some(handler) = on_error_node {
            outn.insert("allow_failure".into(), Value::Bool(true));
            let edge = failure_edge(&handler);
            let mut edges = vec![edge];
            match next.take() {
                Some(Value::Array(list)) => edges.extend(list),
                Some(Value::Null) | None => {}
                Some(other) => {
                    let mut m = Map::new();
                    m.insert("to".into(), other);
                    edges.push(Value::Object(m));
                }
            }
            next = Some(Value::Array(edges));
            self.warn_at(
                "IMP-G-node-on_error",
                format!("node `{}`: `on_error: {handler}` became `allow_failure: true` and a first edge to `{handler}` when the tool fails (`run.success` or its JSON `success` false); the node's `assign` now also runs on the failed result", shown(name), handler = shown(&handler)),
                &[&path[..], &["on_error"]].concat(),
            );
        }
        if let Some(n) = next {
            outn.insert("next".into(), n);
        }
        Ok(outn)
    }

    /// A node's `action:` → (tool id, params).
    fn action(&mut self, node: &str, v: &Value, here: &[&str]) -> Result<(String, Value), Refused> {
        let Value::Object(a) = v else {
            return Err((
                "IMP-G-yaml",
                format!("the action of node `{}` is not a map", shown(node)),
            ));
        };
        let primary = a
            .get("primary")
            .map(text_of)
            .unwrap_or_else(|| "execute".into());
        let item_id = a.get("item_id").map(text_of).unwrap_or_default();
        let item_type = a.get("item_type").map(text_of);
        let (kind, item) = match item_id.split_once(':') {
            Some((kind, rest)) if item_type.is_none() => (kind.to_owned(), rest.to_owned()),
            _ => (item_type.unwrap_or_else(|| "tool".into()), item_id.clone()),
        };
        if item.is_empty() {
            return Err((
                "IMP-G-yaml",
                format!("the action of node `{}` has no `item_id`", shown(node)),
            ));
        }
        self.rewrites.item_ids += 1;
        for key in a.keys() {
            let key = key.as_str();
            if !matches!(key, "primary" | "item_id" | "item_type" | "params") {
                self.warn_at(
                    "IMP-G-key",
                    format!(
                        "node `{}`: `action.{}` has no strata equivalent: dropped",
                        shown(node),
                        shown(key)
                    ),
                    &[here, &[key]].concat(),
                );
            }
        }
        let mut params = a
            .get("params")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        if matches!(params, Value::Null) {
            params = Value::Object(Map::new());
        }
        let target = if primary != "execute" {
            Target::Llm {
                stub: format!("ryeos-unmapped/{primary}/{kind}/{item}"),
                item: format!("{primary} {kind}:{item}"),
            }
        } else if kind == "directive" {
            Target::Llm {
                stub: format!("ryeos-unmapped/directive/{item}"),
                item: format!("directive:{item}"),
            }
        } else if kind != "tool" {
            Target::Llm {
                stub: format!("ryeos-unmapped/{kind}/{item}"),
                item: format!("{kind}:{item}"),
            }
        } else if item == THREAD_DIRECTIVE {
            Target::Llm {
                stub: format!("ryeos-unmapped/{item}"),
                item: format!("tool:{item}"),
            }
        } else if self.catalog.graphs.contains(&item) {
            Target::Nested {
                wrapper: format!("ryeos-nested/{item}"),
                graph: item.clone(),
            }
        } else if self.catalog.has_tool(&item) {
            Target::Tool(item.clone())
        } else {
            Target::Missing(item.clone())
        };
        let tool = match &target {
            Target::Tool(t) | Target::Missing(t) => t.clone(),
            Target::Llm { stub, .. } => stub.clone(),
            Target::Nested { wrapper, .. } => wrapper.clone(),
        };
        // A generated tool is written at its id.
        if !matches!(target, Target::Tool(_)) && !writable_id(&tool) {
            return Err((
                "IMP-G-tool-id",
                format!(
                    "node `{}` calls `{}`: no tool can have that id (an id is a path of names under `tools/`: no `.` or `..`, no leading `/`, no empty name, no control character, no name over 250 bytes): the graph is not imported",
                    shown(node),
                    shown(&item_id)
                ),
            ));
        }
        if let Target::Nested { graph, .. } = &target {
            if let Value::Object(p) = &mut params {
                let mut dropped = Vec::new();
                for name in EXECUTION_PARAMS {
                    if p.shift_remove(name).is_some() {
                        dropped.push(format!("`{name}`"));
                    }
                }
                if !dropped.is_empty() {
                    let at = [here, &["params"]].concat();
                    self.warn_at(
                        "IMP-G-nested-params",
                        format!("node `{}`: params {} dropped: RyeOS's executor consumed them to run the child graph `{graph}`; they are no inputs of it", shown(node), dropped.join(", ")),
                        &at,
                    );
                }
            }
        }
        self.generate(&target);
        self.targets.entry(target).or_default().push(Caller {
            node: node.to_owned(),
            order: self.callers,
            action: here.iter().map(|key| (*key).to_owned()).collect(),
        });
        self.callers += 1;
        let params = self.templates(params, &[here, &["params"]].concat());
        Ok((tool, params))
    }

    /// Writes the generated tool a target needs.
    fn generate(&mut self, target: &Target) {
        let (path, contents) = match target {
            Target::Tool(_) => return,
            Target::Llm { item, stub } => (
                format!("tools/{stub}.yaml"),
                failing_stub(
                    &format!("RyeOS `{item}` runs a directive on an LLM thread; strata runs no LLM"),
                    &format!("stub for RyeOS `{item}`, which runs a directive on an LLM thread: strata runs no LLM (exits 127; replace it with a tool that does the work)"),
                ),
            ),
            Target::Missing(tool) => (
                format!("tools/{tool}.yaml"),
                failing_stub(
                    &format!("RyeOS tool `{tool}` is in no space of the imported project (the graph was broken in RyeOS too)"),
                    &format!("stub for RyeOS tool `{tool}`, found in no space of the imported project (exits 127; provide the tool here)"),
                ),
            ),
            Target::Nested { graph, wrapper } => {
                (format!("tools/{wrapper}.yaml"), nested_wrapper(graph))
            }
        };
        self.stubs.insert(path, contents);
    }

    /// Rewrites the templates of a value: `${state.inputs.x}` → `${inputs.x}` (and the same
    /// in condition paths), `${_now}` / `${_timestamp}` → "".
    fn templates(&mut self, v: Value, here: &[&str]) -> Value {
        match v {
            Value::String(t) => Value::String(self.template(&t, here)),
            Value::Array(list) => {
                Value::Array(list.into_iter().map(|x| self.templates(x, here)).collect())
            }
            Value::Object(m) => {
                let mut outm = Map::new();
                for (key, val) in m {
                    let mut sub: Vec<&str> = here.to_vec();
                    sub.push(&key);
                    let val = match val {
                        // A condition's path (`when: {path: state.inputs.x, …}`).
                        Value::String(p) if key == "path" && p.starts_with("state.inputs.") => {
                            self.rewrites.state_inputs += 1;
                            Value::String(p["state.".len()..].to_owned())
                        }
                        other => self.templates(other, &sub),
                    };
                    outm.insert(key, val);
                }
                Value::Object(outm)
            }
            other => other,
        }
    }

    fn template(&mut self, t: &str, here: &[&str]) -> String {
        let mut out = String::with_capacity(t.len());
        let mut rest = t;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            let inner_start = tail[2..].len() - tail[2..].trim_start().len();
            let inner = &tail[2 + inner_start..];
            if let Some(after) = inner.strip_prefix("state.inputs.") {
                self.rewrites.state_inputs += 1;
                out.push_str("${inputs.");
                rest = after;
                continue;
            }
            let builtin = ["_now", "_timestamp"].into_iter().find(|b| {
                inner
                    .strip_prefix(b)
                    .is_some_and(|a| a.trim_start().starts_with('}'))
            });
            if let Some(b) = builtin {
                let end = tail.find('}').map_or(tail.len(), |e| e + 1);
                self.warn_at(
                    "IMP-G-builtins",
                    format!("`${{{b}}}` (RyeOS's {} builtin) has no strata equivalent: replaced by \"\"", if b == "_now" { "current time" } else { "timestamp" }),
                    here,
                );
                rest = &tail[end..];
                continue;
            }
            out.push_str("${");
            rest = &tail[2..];
        }
        out.push_str(rest);
        out
    }
}

/// The first edge of a node with a node-level `on_error`: taken when the tool failed, by its
/// exit (`run.success`) or by its JSON (`result.success`, as RyeOS's walker read it).
fn failure_edge(handler: &str) -> Value {
    let cond = |path: &str| {
        let mut m = Map::new();
        m.insert("path".into(), string(path));
        m.insert("op".into(), string("eq"));
        m.insert("value".into(), Value::Bool(false));
        Value::Object(m)
    };
    let mut any = Map::new();
    any.insert(
        "any".into(),
        Value::Array(vec![cond("run.success"), cond("result.success")]),
    );
    let mut edge = Map::new();
    edge.insert("to".into(), string(handler));
    edge.insert("when".into(), Value::Object(any));
    Value::Object(edge)
}

/// One warning per target that is not a plain tool, naming the nodes that call it, at the
/// first; and `IMP-G-success-flag` when nodes call real tools, whose `success: false` RyeOS
/// honoured. In the file's order.
fn report_targets(out: &mut FileImport, text: &str, targets: &BTreeMap<Target, Vec<Caller>>) {
    let mut warnings: Vec<(&Caller, &str, String)> = Vec::new();
    let mut real: Vec<&Caller> = Vec::new();
    for (target, nodes) in targets {
        let names = node_names(nodes);
        let first = &nodes[0];
        match target {
            Target::Tool(_) => real.extend(nodes),
            Target::Llm { item, stub } => warnings.push((
                first,
                "IMP-G-llm",
                format!("node(s) {names} run `{}`, an LLM thread: strata runs no LLM; they now call the generated stub `{}`, which exits 127 with the reason (the graph still loads)", shown(item), shown(stub)),
            )),
            Target::Missing(tool) => warnings.push((
                first,
                "IMP-missing-tool",
                format!("node(s) {names} call `{tool}`, a tool in no space of the imported project (broken in RyeOS too): a failing stub was written at `tools/{tool}.yaml`", tool = shown(tool)),
            )),
            Target::Nested { graph, wrapper } => warnings.push((
                first,
                "IMP-G-nested",
                format!("node(s) {names} run the graph `{graph}`: they now call the generated wrapper `{wrapper}`, which runs `strata run {graph} --json` and prints RyeOS's envelope {{success, status, output, steps}}"),
            )),
        }
    }
    real.sort_by_key(|c| c.order);
    if let Some(first) = real.first() {
        let names = node_names(real.iter().copied());
        warnings.push((
            first,
            "IMP-G-success-flag",
            format!("node(s) {names}: RyeOS failed a node whose tool printed JSON with `success: false`; strata fails a node only when its tool exits non-zero"),
        ));
    }
    warnings.sort_by_key(|w| w.0.order);
    for (first, code, message) in warnings {
        out.warn_with(code, message, || first.position(text));
    }
}

/// The nodes of a list, for a message: `` `a`, `b` `` (see [`named_list`]).
fn node_names<'a>(nodes: impl IntoIterator<Item = &'a Caller>) -> String {
    named_list(nodes.into_iter().map(|c| format!("`{}`", shown(&c.node))))
}

/// A generated tool that prints `reason` to stderr and exits 127 (command not found).
///
/// It runs `sh -c 'printf "%s\n" "$0" >&2; exit 127' <reason>`: strata spawns `sh` with that
/// argv (no shell string is ever built by strata), the script is a constant, and the reason
/// reaches it as `$0`, a `{literal: …}` no stage renders — so no text of the RyeOS file is
/// ever interpreted by the shell. `sh` is the one program every POSIX system has that can
/// print an argument to stderr and exit with a chosen status.
fn failing_stub(reason: &str, description: &str) -> String {
    let mut config = Map::new();
    config.insert("command".into(), string("sh"));
    let mut literal = Map::new();
    literal.insert("literal".into(), string(reason));
    config.insert(
        "args".into(),
        Value::Array(vec![
            string("-c"),
            string("printf '%s\\n' \"$0\" >&2; exit 127"),
            Value::Object(literal),
        ]),
    );
    let mut tool = Map::new();
    tool.insert("description".into(), string(description));
    tool.insert("version".into(), string("1.0.0"));
    tool.insert("executor".into(), string("runtimes/subprocess"));
    tool.insert("parameters".into(), schema::permissive());
    tool.insert("config".into(), Value::Object(config));
    format!(
        "# Generated by `strata import ryeos`: a failing stub (see IMPORT-REPORT.md).\n# `sh` gets a constant script and the reason as `$0` (argv, never a shell string).\n{}",
        strata_doc::to_yaml(&Value::Object(tool))
    )
}

/// The Python program of a nested-graph wrapper: runs `strata run <graph> --json
/// --params-json <params>` in the project and prints RyeOS's envelope.
const NESTED_PROGRAM: &str = r#"import json, os, subprocess, sys
graph, params = sys.argv[1], sys.argv[2]
exe = os.environ.get("STRATA_BIN") or "strata"
ran = subprocess.run([exe, "run", graph, "--json", "--params-json", params],
                     capture_output=True, text=True)
try:
    finished = json.loads(ran.stdout)  # what the run came to (its events are on stderr)
except ValueError:
    finished = None
if not isinstance(finished, dict) or "status" not in finished:
    sys.stderr.write(ran.stderr)
    sys.exit(ran.returncode or 1)
status = finished.get("status")
print(json.dumps({"success": status == "completed", "status": status,
                  "output": finished.get("result"), "steps": finished.get("steps")}))
sys.exit(0 if status == "completed" else 1)
"#;

/// The wrapper `ryeos-nested/<graph>`: a tool running the graph through `strata run`.
fn nested_wrapper(graph: &str) -> String {
    let mut literal = Map::new();
    literal.insert("literal".into(), string(NESTED_PROGRAM));
    let mut config = Map::new();
    config.insert("command".into(), string("python3"));
    config.insert(
        "args".into(),
        Value::Array(vec![
            string("-c"),
            Value::Object(literal),
            string(graph),
            string("{params_json}"),
        ]),
    );
    config.insert("timeout".into(), Value::Number(3600.into()));
    let mut tool = Map::new();
    tool.insert(
        "description".into(),
        Value::String(format!("RyeOS nested graph `{graph}`: runs `strata run {graph} --json` (the binary named by STRATA_BIN, else `strata` on PATH) and prints RyeOS's envelope {{success, status, output, steps}}")),
    );
    tool.insert("version".into(), string("1.0.0"));
    tool.insert("executor".into(), string("runtimes/subprocess"));
    tool.insert("parameters".into(), schema::permissive());
    // The child sees only declared variables: STRATA_BIN is passed through, else `strata`.
    let mut env = Map::new();
    env.insert("STRATA_BIN".into(), string("${STRATA_BIN:-strata}"));
    let mut env_config = Map::new();
    env_config.insert("env".into(), Value::Object(env));
    tool.insert("env_config".into(), Value::Object(env_config));
    tool.insert("config".into(), Value::Object(config));
    format!(
        "# Generated by `strata import ryeos`: a nested-graph wrapper (see IMPORT-REPORT.md).\n{}",
        strata_doc::to_yaml(&Value::Object(tool))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Outcome;

    const GRAPH: &str = r#"# rye:signed:2026-04-09T00:59:52Z:abc:def:0123
version: "1.0.0"
tool_type: graph
executor_id: rye/core/runtimes/state-graph/runtime
category: graphs
tool_id: other
description: "Demo"
permissions:
  - rye.execute.tool.*
config_schema:
  $schema: "http://json-schema.org/draft-07/schema#"
  type: object
  properties:
    dir:
      type: string
      default: "out"
      pattern: "^[a-z]+$"
  required: []
config:
  start: setup
  max_steps: 10
  on_error: continue
  state:
    items: []
  nodes:
    setup:
      cache: true
      action:
        primary: execute
        item_id: tool:rye/bash
        params:
          command: "mkdir -p ${inputs.dir} ${state.inputs.dir}"
      assign:
        at: "${_now}"
        out: "${result.stdout}"
      next: fan
    fan:
      type: foreach
      over: "${state.items}"
      as: item
      action:
        primary: execute
        item_id: tool:rye/agent/threads/thread_directive
        params:
          directive_id: x
          inputs:
            text: "${item.text}"
      collect: results
      next: route
    route:
      assign:
        seen: true
      next:
        - to: nested
          when:
            path: state.inputs.dir
            op: eq
            value: "out"
        - to: done
    nested:
      cache_result: true
      action:
        primary: execute
        item_id: tool:graphs/child
        params:
          dir: "${inputs.dir}"
          capabilities: ["a"]
          depth: 5
      assign:
        ok: "${result.success}"
      on_error: recover
      next: done
    recover:
      action:
        primary: execute
        item_type: tool
        item_id: rye/file-system/write
        params:
          path: "${state.inputs.dir}/x"
      next: reply
    reply:
      action:
        primary: execute
        item_id: directive:rye/email/draft
      next: done
    done:
      type: return
"#;

    fn catalog() -> Catalog {
        let mut c = Catalog::default();
        c.tools.insert("graphs/child".into());
        c.graphs.insert("graphs/child".into());
        c.tools.insert("rye/file-system/write".into());
        c
    }

    fn convert(text: &str) -> FileImport {
        let value = crate::yaml::read_yaml(text).expect("YAML");
        import_graph(
            ".ai/tools/graphs/demo.yaml",
            "graphs/demo",
            &value,
            text,
            &catalog(),
        )
    }

    fn file<'a>(f: &'a FileImport, path: &str) -> &'a str {
        &f.written
            .iter()
            .find(|w| w.path == path)
            .unwrap_or_else(|| panic!("{path} not written: {:?}", f.written))
            .contents
    }

    // G-config-nesting, G-params, G-action (both spellings), G-gate, G-return, G-foreach,
    // G-next, G-graph-on_error, G-node-on_error, G-result, G-inputs, G-state-inputs,
    // G-builtins, G-cache_result, G-llm, G-nested (+ params), G-missing-tool,
    // G-success-flag, T-permissions, T-tool_id, T-schema-extra.
    #[test]
    fn a_graph_becomes_a_strata_graph() {
        let f = convert(GRAPH);
        assert_eq!(f.outcome, Outcome::Imported);
        assert_eq!(
            file(&f, "tools/graphs/demo.yaml"),
            "# Imported from RyeOS `.ai/tools/graphs/demo.yaml` by `strata import ryeos` (see IMPORT-REPORT.md).
kind: graph
description: Demo
version: 1.0.0
parameters:
  type: object
  properties:
    dir:
      type: string
      default: out
  required: []
state:
  items: []
start: setup
max_steps: 10
on_error: continue
nodes:
  setup:
    kind: action
    tool: rye/bash
    params:
      command: mkdir -p ${inputs.dir} ${inputs.dir}
    assign:
      at: ''
      out: ${result.stdout}
    next: fan
  fan:
    kind: foreach
    over: ${state.items}
    as: item
    do:
      kind: action
      tool: ryeos-unmapped/rye/agent/threads/thread_directive
      params:
        directive_id: x
        inputs:
          text: ${item.text}
    collect: results
    next: route
  route:
    kind: gate
    assign:
      seen: true
    next:
    - to: nested
      when:
        path: inputs.dir
        op: eq
        value: out
    - to: done
  nested:
    kind: action
    tool: ryeos-nested/graphs/child
    params:
      dir: ${inputs.dir}
    assign:
      ok: ${result.success}
    allow_failure: true
    next:
    - to: recover
      when:
        any:
        - path: run.success
          op: eq
          value: false
        - path: result.success
          op: eq
          value: false
    - to: done
  recover:
    kind: action
    tool: rye/file-system/write
    params:
      path: ${inputs.dir}/x
    next: reply
  reply:
    kind: action
    tool: ryeos-unmapped/directive/rye/email/draft
    params: {}
    next: done
  done:
    kind: return
    output: {}
"
        );
        let warnings: Vec<String> = f
            .warnings
            .iter()
            .map(|w| format!("{} {}:{} {}", w.code, w.line, w.column, w.message))
            .collect();
        assert_eq!(
            warnings,
            [
                "IMP-tool_id 6:1 `tool_id: other` differs from the file stem `demo`: the strata id is the path, `graphs/demo`",
                "IMP-permissions 8:1 `permissions: [\"rye.execute.tool.*\"]` dropped: strata enforces no capabilities",
                "IMP-schema-keyword 10:1 schema keyword `pattern` at parameters.properties.dir dropped: strata's parameters do not have it, the constraint is lost",
                "IMP-G-cache_result 27:7 node `setup`: `cache: true` dropped: strata does not cache node results (the node runs every time)",
                "IMP-missing-tool 28:7 node(s) `setup` call `rye/bash`, a tool in no space of the imported project (broken in RyeOS too): a failing stub was written at `tools/rye/bash.yaml`",
                "IMP-G-builtins 34:9 `${_now}` (RyeOS's current time builtin) has no strata equivalent: replaced by \"\"",
                "IMP-G-llm 41:7 node(s) `fan` run `tool:rye/agent/threads/thread_directive`, an LLM thread: strata runs no LLM; they now call the generated stub `ryeos-unmapped/rye/agent/threads/thread_directive`, which exits 127 with the reason (the graph still loads)",
                "IMP-G-cache_result 61:7 node `nested`: `cache_result: true` dropped: strata does not cache node results (the node runs every time)",
                "IMP-G-nested 62:7 node(s) `nested` run the graph `graphs/child`: they now call the generated wrapper `ryeos-nested/graphs/child`, which runs `strata run graphs/child --json` and prints RyeOS's envelope {success, status, output, steps}",
                "IMP-G-nested-params 65:9 node `nested`: params `capabilities`, `depth` dropped: RyeOS's executor consumed them to run the child graph `graphs/child`; they are no inputs of it",
                "IMP-G-node-on_error 71:7 node `nested`: `on_error: recover` became `allow_failure: true` and a first edge to `recover` when the tool fails (`run.success` or its JSON `success` false); the node's `assign` now also runs on the failed result",
                "IMP-G-success-flag 74:7 node(s) `recover`: RyeOS failed a node whose tool printed JSON with `success: false`; strata fails a node only when its tool exits non-zero",
                "IMP-G-llm 82:7 node(s) `reply` run `directive:rye/email/draft`, an LLM thread: strata runs no LLM; they now call the generated stub `ryeos-unmapped/directive/rye/email/draft`, which exits 127 with the reason (the graph still loads)",
            ]
        );
        assert_eq!(
            f.rewrites,
            [
                "config_schema.$schema dropped",
                "config_schema → parameters",
                "tool_type: graph → kind: graph; executor_id (the state-graph runtime) dropped",
                "config.{start, max_steps, on_error, state, nodes} → top level",
                "5 node action(s) `{primary: execute, item_id}` → `kind: action, tool`",
                "1 `type: return` without output → `kind: return, output: {}` (RyeOS returned {})",
                "3 `${state.inputs.x}` → `${inputs.x}` (RyeOS kept the inputs in the state)",
            ]
        );
        let paths: Vec<&str> = f.written.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "tools/graphs/demo.yaml",
                "tools/rye/bash.yaml",
                "tools/ryeos-nested/graphs/child.yaml",
                "tools/ryeos-unmapped/directive/rye/email/draft.yaml",
                "tools/ryeos-unmapped/rye/agent/threads/thread_directive.yaml",
            ]
        );
    }

    // The generated tools: failing stubs (argv `sh -c <constant> <reason>`) and the nested
    // wrapper.
    #[test]
    fn generated_stubs_exit_127_with_the_reason() {
        let f = convert(GRAPH);
        assert_eq!(
            file(&f, "tools/rye/bash.yaml"),
            "# Generated by `strata import ryeos`: a failing stub (see IMPORT-REPORT.md).
# `sh` gets a constant script and the reason as `$0` (argv, never a shell string).
description: stub for RyeOS tool `rye/bash`, found in no space of the imported project (exits 127; provide the tool here)
version: 1.0.0
executor: runtimes/subprocess
parameters:
  type: object
  additionalProperties: true
config:
  command: sh
  args:
  - -c
  - printf '%s\\n' \"$0\" >&2; exit 127
  - literal: RyeOS tool `rye/bash` is in no space of the imported project (the graph was broken in RyeOS too)
"
        );
        assert!(file(&f, "tools/ryeos-unmapped/directive/rye/email/draft.yaml").contains(
            "  - literal: RyeOS `directive:rye/email/draft` runs a directive on an LLM thread; strata runs no LLM\n"
        ));
        let wrapper = file(&f, "tools/ryeos-nested/graphs/child.yaml");
        assert!(
            wrapper.contains("env_config:\n  env:\n    STRATA_BIN: ${STRATA_BIN:-strata}\n"),
            "{wrapper}"
        );
        assert!(wrapper.contains("  command: python3\n"), "{wrapper}");
        assert!(
            wrapper.contains("  - graphs/child\n  - '{params_json}'\n  timeout: 3600\n"),
            "{wrapper}"
        );
        assert!(wrapper.contains("[exe, \"run\", graph, \"--json\", \"--params-json\", params]"));
    }

    #[test]
    fn a_node_on_error_with_a_single_next_keeps_it_as_the_fallback() {
        let text = "tool_type: graph\nconfig:\n  nodes:\n    a:\n      action: {primary: execute, item_id: \"tool:rye/file-system/write\"}\n      on_error: b\n      next: c\n    b: {type: return}\n    c: {type: return, output: {x: \"${state.inputs.y}\"}}\n";
        let f = convert(text);
        let g = file(&f, "tools/graphs/demo.yaml");
        assert!(g.contains("    - to: b\n"), "{g}");
        assert!(g.ends_with("    - to: c\n  b:\n    kind: return\n    output: {}\n  c:\n    kind: return\n    output:\n      x: ${inputs.y}\n"), "{g}");
    }

    #[test]
    fn a_node_without_an_item_or_a_graph_without_nodes_is_refused() {
        let f = convert(
            "tool_type: graph\nconfig:\n  nodes:\n    a:\n      action: {primary: execute}\n",
        );
        assert_eq!(f.outcome, Outcome::Refused);
        let r = f.reason.expect("refused");
        assert_eq!(
            (r.code.as_str(), r.message.as_str()),
            ("IMP-G-yaml", "the action of node `a` has no `item_id`")
        );
        let f = convert("tool_type: graph\ndescription: x\n");
        assert_eq!(
            f.reason.expect("refused").message,
            "the graph has no `config` (no nodes)"
        );
        let value = Value::String("x".into());
        let f = import_graph("s", "g", &value, "x", &catalog());
        assert_eq!(f.reason.expect("refused").code, "IMP-G-yaml");
    }

    #[test]
    fn unknown_keys_and_node_types_are_reported() {
        let f = convert("tool_type: graph\nextra: 1\nconfig:\n  hooks: []\n  nodes:\n    a:\n      type: loop\n      retries: 2\n      next: b\n    b: {type: return}\n");
        let messages: Vec<&str> = f.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`extra` of the graph has no strata equivalent: dropped",
                "`config.hooks` of the graph has no strata equivalent: dropped",
                "node `a` has `type: loop`, which strata does not know: imported as a gate",
                "node `a`: `retries` has no strata equivalent here: dropped",
            ]
        );
    }
}
