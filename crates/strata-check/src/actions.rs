//! Checks of the parameters directive actions and graph action nodes pass to their tools,
//! as far as they are known before running: constant values must have the declared type,
//! every name must be declared, required ones given (R011). Templated values are left to
//! the run, but their names are checked too.

use serde_json::{Map, Value};
use strata_core::{FieldPath, PathSeg};
use strata_directive::Directive;
use strata_doc::Document;
use strata_graph::{Body, Graph, Node};
use strata_pipeline::Template;
use strata_project::Project;

use crate::diagnostic::{Code, Diagnostic};
use crate::Report;

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// What is wrong with a call of `tool` whose parameters are written as `raw` and compiled
/// as `template`; `None` when nothing known can fail.
struct Problem {
    message: String,
    help: Option<String>,
    /// The first parameter that is wrong by itself (a missing one is no parameter's fault).
    param: Option<String>,
}

fn problem(
    project: &Project,
    tool: &str,
    raw: Option<&Value>,
    template: &Template,
) -> Option<Problem> {
    project.tool_path(tool)?;
    let empty = Map::new();
    let map = match raw {
        None => &empty,
        Some(Value::Object(map)) => map,
        // A whole-value template, or not a map (the loader reports that).
        Some(_) => return None,
    };
    let mut pending: Vec<String> = Vec::new();
    for (path, _) in template.references() {
        match path.0.first() {
            Some(PathSeg::Key(k)) if !pending.contains(k) => pending.push(k.clone()),
            Some(_) => {}
            None => return None,
        }
    }
    let known: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !pending.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let schema = strata_project::tool_parameters(project, tool);
    let e = strata_tools::check_known(tool, schema.as_ref(), &known, &pending).err()?;
    // Each parameter alone, against the schema without `required`.
    let loose = schema.as_ref().map(|s| {
        let mut s = s.clone();
        if let Value::Object(m) = &mut s {
            m.remove("required");
        }
        s
    });
    let param = map.iter().find_map(|(k, v)| {
        let (one, later): (Map<String, Value>, Vec<String>) = if pending.contains(k) {
            (Map::new(), vec![k.clone()])
        } else {
            ([(k.clone(), v.clone())].into_iter().collect(), Vec::new())
        };
        strata_tools::check_known(tool, loose.as_ref(), &one, &later)
            .is_err()
            .then(|| k.clone())
    });
    Some(Problem {
        message: e.message().to_string(),
        help: e.hint().map(str::to_string),
        param,
    })
}

/// Where a problem stands: the parameter at fault, else the parameters, else the tool.
fn problem_path(base: &FieldPath, raw: Option<&Value>, p: &Problem) -> FieldPath {
    match (&p.param, raw) {
        (Some(k), _) => base.child(key("params")).child(key(k)),
        (None, Some(_)) => base.child(key("params")),
        (None, None) => base.child(key("tool")),
    }
}

/// The parameters of every action of a directive.
pub fn check_directive(project: &Project, d: &Directive, report: &mut Report) {
    let actions = d.front_value().get("actions").and_then(Value::as_array);
    for site in d.sites() {
        let Some(k) = site.action else {
            continue;
        };
        let Some(spec) = d.front.actions.get(k) else {
            continue;
        };
        let raw = actions.and_then(|a| a.get(k)).and_then(|a| a.get("params"));
        let Some(p) = problem(project, &spec.tool, raw, site.template) else {
            continue;
        };
        let base = FieldPath(vec![key("actions"), PathSeg::Index(k)]);
        let path = problem_path(&base, raw, &p);
        let at = d.locate(&path, None);
        report.push(
            Diagnostic::new(
                Code::ActionParams,
                &d.file,
                at,
                path,
                format!("action `{}`: {}", spec.id, p.message),
            )
            .help(p.help),
        );
    }
}

/// The parameters of every action node of a graph (foreach bodies included).
pub fn check_graph(project: &Project, doc: &Document, graph: &Graph, report: &mut Report) {
    for node in &graph.nodes {
        check_node(project, doc, node, report);
    }
}

fn check_node(project: &Project, doc: &Document, node: &Node, report: &mut Report) {
    match &node.body {
        Body::Action(a) => {
            let raw = node.path.child(key("params")).lookup(&doc.value);
            let Some(p) = problem(project, &a.tool, raw, &a.params) else {
                return;
            };
            let path = problem_path(&node.path, raw, &p);
            let at = doc.locate(&path, None).unwrap_or((1, 1));
            report.push(
                Diagnostic::new(
                    Code::ActionParams,
                    &doc.name,
                    at,
                    path,
                    format!("node `{}`: {}", node.id, p.message),
                )
                .help(p.help),
            );
        }
        Body::Foreach(f) => {
            for inner in &f.body {
                check_node(project, doc, inner, report);
            }
        }
        _ => {}
    }
}
