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

/// The value `found` holds, or `or` with its error pushed on `errors`.
fn kept<T>(errors: &mut Vec<Error>, found: Result<T, Error>, or: T) -> T {
    found.unwrap_or_else(|e| {
        errors.push(e);
        or
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

    /// Loads and checks the graph in `doc`; the first error of [`Graph::load_all`].
    pub fn load(
        doc: &Document,
        id: &str,
        tools: &dyn ToolRunner,
        limits: &Limits,
    ) -> Result<Graph, Error> {
        Graph::load_all(doc, id, tools, limits).map_err(|mut errors| errors.swap_remove(0))
    }

    /// Loads and checks the graph in `doc`, with every error found, in file order (at least
    /// one): the errors of each node and of the top-level fields; when they all load, those
    /// of the checks across nodes (reachability, names, expressions), each node's. A file
    /// that is not a graph at all (no map, no nodes) has one.
    pub fn load_all(
        doc: &Document,
        id: &str,
        tools: &dyn ToolRunner,
        limits: &Limits,
    ) -> Result<Graph, Vec<Error>> {
        let r = Reader { doc, limits };
        let mut errors = Vec::new();
        let graph = Graph::read(&r, id, tools, &mut errors);
        if let Some(graph) = graph.filter(|_| errors.is_empty()) {
            crate::validate::check(&r, &graph, &mut errors);
            if errors.is_empty() {
                return Ok(graph);
            }
        }
        if errors.is_empty() {
            errors.push(r.err(&FieldPath::root(), "the graph does not load"));
        }
        errors.sort_by_key(|e| e.location().map(|l| (l.line, l.column)));
        errors.dedup_by(|a, b| a.message() == b.message() && a.location() == b.location());
        Err(errors)
    }

    /// The graph of `r`'s document, its errors pushed on `errors` (none when it has some).
    fn read(
        r: &Reader<'_>,
        id: &str,
        tools: &dyn ToolRunner,
        errors: &mut Vec<Error>,
    ) -> Option<Graph> {
        match Graph::read_top(r, id, tools, errors) {
            Ok(graph) => graph,
            Err(e) => {
                errors.push(e);
                None
            }
        }
    }

    /// [`Graph::read`]: an error that stops the reading is returned; the others are pushed.
    fn read_top(
        r: &Reader<'_>,
        id: &str,
        tools: &dyn ToolRunner,
        errors: &mut Vec<Error>,
    ) -> Result<Option<Graph>, Error> {
        let doc = r.doc;
        let root = FieldPath::root();
        let top = r.map(&doc.value, &root, "a graph file")?;
        if !is_graph_document(&doc.value) {
            return Err(r.err_hint(
                &key(&root, "kind"),
                "a graph file needs `kind: graph`",
                "graphs are YAML files of kind `graph` under tools/",
            ));
        }
        if let Err(e) = r.known_keys(top, &root, &GRAPH_KEYS, "a graph") {
            errors.push(e);
        }
        let parameters = top.get("parameters").cloned();
        if let Some(schema) = &parameters {
            if let Err(e) = strata_tools::check_schema(schema) {
                let err = Error::new(Layer::REQUEST, ErrorKind::Invalid, e.message)
                    .with_hint("parameters use the JSON Schema subset of tools (docs/tools.md)")
                    .with_path(e.path.under(&key(&root, "parameters")));
                errors.push(r.locate(err));
            }
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
            match parse_node(r, id, value, &key(&nodes_path, id), &place, tools) {
                Ok(node) => nodes.push(node),
                Err(e) => errors.push(e),
            }
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
        let start = kept(errors, find("start"), None).unwrap_or(0);
        let on_error = match kept(errors, r.opt_str(top, &root, "on_error"), None) {
            None | Some("fail") => OnError::Fail,
            Some("continue") => OnError::Continue,
            Some(_) => OnError::Goto(kept(errors, find("on_error"), None).unwrap_or(0)),
        };
        let max_steps =
            kept(errors, r.opt_count(top, &root, "max_steps"), None).unwrap_or(DEFAULT_MAX_STEPS);
        let description =
            kept(errors, r.opt_str(top, &root, "description"), None).map(str::to_string);
        let hooks = kept(errors, parse_hooks(r, top.get("hooks"), tools), Vec::new());
        if !errors.is_empty() {
            return Ok(None);
        }
        Ok(Some(Graph {
            id: id.to_string(),
            file: doc.name.clone(),
            fingerprint: strata_runs::fingerprint(&doc.text),
            description,
            parameters,
            state,
            start,
            max_steps,
            on_error,
            hooks,
            nodes,
        }))
    }
}
