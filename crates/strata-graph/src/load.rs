//! Loading a graph file: the top-level fields, the nodes, the hooks, then the checks of
//! [`crate::validate`], every error located at file:line:col before anything runs.

use std::path::Path;

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, FieldPath, Layer, Limits};
use strata_doc::{Document, Format};

use crate::fields::{key, names, Reader};
use crate::hooks::parse_hooks;
use crate::model::{Graph, OnError, DEFAULT_MAX_STEPS};
use crate::nodes::{parse_node, Place};
use strata_context::{When, WhenError};
use strata_core::did_you_mean;
use strata_tools::ToolRunner;

/// The top-level keys of a graph file.
pub const GRAPH_KEYS: [&str; 10] = [
    "kind",
    "description",
    "version",
    "parameters",
    "state",
    "start",
    "max_steps",
    "on_error",
    "hooks",
    "nodes",
];

/// Parses a `when:` (or hook `condition:`) value found at `path`.
pub(crate) fn parse_when(r: &Reader<'_>, value: &Value, path: &FieldPath) -> Result<When, Error> {
    When::parse(value).map_err(|e| match e {
        WhenError::Expr(e) => r.locate(e.at_path(path)),
        WhenError::Structured(m) => r.err(path, format!("bad condition: {m}")),
    })
}

/// True when the document declares `kind: graph`.
pub fn is_graph_document(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("graph")
}

impl Graph {
    /// Reads and loads the graph file at `path` (within the document limit), shown as
    /// `name`, with id `id`. The caller has confined `path` to the project.
    pub fn load_file(
        path: &Path,
        name: &str,
        id: &str,
        tools: &dyn ToolRunner,
        limits: &Limits,
    ) -> Result<Graph, Error> {
        let bytes = strata_doc::read_file(path, name, limits)?;
        let doc = Document::parse(name, bytes, Format::Yaml, limits)?;
        Graph::load(&doc, id, tools, limits)
    }

    /// Loads and checks the graph in `doc`.
    pub fn load(
        doc: &Document,
        id: &str,
        tools: &dyn ToolRunner,
        limits: &Limits,
    ) -> Result<Graph, Error> {
        let r = Reader { doc, limits };
        let root = FieldPath::root();
        let top = r.map(&doc.value, &root, "a graph file")?;
        if !is_graph_document(&doc.value) {
            return Err(r.err_hint(
                &key(&root, "kind"),
                "a graph file needs `kind: graph`",
                "graphs are YAML files of kind `graph` under tools/",
            ));
        }
        r.known_keys(top, &root, &GRAPH_KEYS, "a graph")?;
        let parameters = top.get("parameters").cloned();
        if let Some(schema) = &parameters {
            strata_tools::check_schema(schema).map_err(|e| {
                let mut err = Error::new(Layer::REQUEST, ErrorKind::Invalid, e.message)
                    .with_hint("parameters use the JSON Schema subset of tools (docs/tools.md)");
                err.path = e.path.under(&key(&root, "parameters"));
                r.locate(err)
            })?;
        }
        let state = match top.get("state") {
            None => Map::new(),
            Some(v) => r.map(v, &key(&root, "state"), "`state`")?.clone(),
        };
        let nodes_path = key(&root, "nodes");
        let node_map = match top.get("nodes") {
            Some(v) => r.map(v, &nodes_path, "`nodes`")?,
            None => return Err(r.err(&root, "a graph needs `nodes`")),
        };
        if node_map.is_empty() {
            return Err(r.err(&nodes_path, "a graph needs at least one node"));
        }
        let ids: Vec<String> = node_map.keys().cloned().collect();
        let mut nodes = Vec::with_capacity(ids.len());
        for (id, value) in node_map {
            let place = Place::Top(&ids);
            nodes.push(parse_node(
                &r,
                id,
                value,
                &key(&nodes_path, id),
                &place,
                tools,
            )?);
        }
        let find = |field: &str| -> Result<Option<usize>, Error> {
            let Some(name) = r.opt_str(top, &root, field)? else {
                return Ok(None);
            };
            match ids.iter().position(|i| i == name) {
                Some(i) => Ok(Some(i)),
                None => {
                    let cands: Vec<&str> = ids.iter().map(String::as_str).collect();
                    let hint = match did_you_mean(name, cands.iter().copied()) {
                        Some(best) => format!("did you mean `{best}`?"),
                        None => format!("the nodes are {}", names(&cands)),
                    };
                    Err(r.err_hint(&key(&root, field), format!("unknown node `{name}`"), &hint))
                }
            }
        };
        let start = find("start")?.unwrap_or(0);
        let on_error = match r.opt_str(top, &root, "on_error")? {
            None | Some("fail") => OnError::Fail,
            Some("continue") => OnError::Continue,
            Some(_) => OnError::Goto(find("on_error")?.unwrap_or(0)),
        };
        let max_steps = r
            .opt_count(top, &root, "max_steps")?
            .unwrap_or(DEFAULT_MAX_STEPS);
        let graph = Graph {
            id: id.to_string(),
            file: doc.name.clone(),
            fingerprint: strata_runs::fingerprint(&doc.text),
            description: r.opt_str(top, &root, "description")?.map(str::to_string),
            parameters,
            state,
            start,
            max_steps,
            on_error,
            hooks: parse_hooks(&r, top.get("hooks"), tools)?,
            nodes,
        };
        crate::validate::check(&r, &graph)?;
        Ok(graph)
    }
}
