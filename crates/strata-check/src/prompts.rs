//! Checks of `prompts/` and of the graph nodes that render its templates: syntax, the tree's
//! shape, versions that shadow nothing, includes of unknown templates, and for each prompt
//! node its key, its pinned components and the variables its feed cannot provide.

use std::collections::BTreeSet;

use serde_json::Value;
use strata_core::{Error, ErrorKind, FieldPath, Location, PathSeg};
use strata_doc::{Document, Format};
use strata_graph::{Body, Graph, Node, PromptNode};
use strata_project::Project;
use strata_prompts::{Call, Overrides, PromptManager, PROMPTS_DIR};

use crate::catalog::Catalog;
use crate::diagnostic::{Code, Diagnostic};
use crate::Report;
use strata_core::did_you_mean;

/// A prompt node of a graph, with the graph's file to locate its fields in.
struct Site<'g> {
    doc: &'g Document,
    node: &'g Node,
    prompt: &'g PromptNode,
}

fn key(path: &FieldPath, k: &str) -> FieldPath {
    path.child(PathSeg::Key(k.to_string()))
}

fn at(loc: &Location) -> (usize, usize) {
    (loc.line, loc.column)
}

/// Checks `prompts/` and every graph prompt node of the project.
pub fn check(project: &Project, report: &mut Report) {
    let graphs = prompt_graphs(project);
    let dir = project.root.join(PROMPTS_DIR);
    if !dir.is_dir() {
        for (doc, graph) in &graphs {
            for site in sites(doc, &graph.nodes) {
                report.push(node_diagnostic(
                    &site,
                    Code::PromptKey,
                    &key(&site.node.path, "kind"),
                    format!(
                        "prompt node `{}` renders a template, but the project has no prompts/ directory",
                        site.node.id
                    ),
                    Some("add the templates under prompts/<type>/<name>.j2 (docs/prompts.md)".into()),
                ));
            }
        }
        return;
    }
    let loaded = match PromptManager::builder()
        .limits(strata_prompts::PromptLimits::from_limits(&project.limits))
        .dir(&dir, PROMPTS_DIR)
        .build_all()
    {
        Ok(l) => l,
        Err(e) => {
            report.push(Diagnostic::from_error(&e, PROMPTS_DIR).with_code(Code::PromptLoad));
            return;
        }
    };
    report.files += loaded.files;
    for e in &loaded.errors {
        let code = if e.kind() == ErrorKind::Syntax && e.message().starts_with("template `") {
            Code::PromptSyntax
        } else {
            Code::PromptLoad
        };
        report.push(Diagnostic::from_error(e, PROMPTS_DIR).with_code(code));
    }
    let m = &loaded.manager;
    shadows(m, report);
    for (from, name, loc) in m.unknown_includes() {
        report.push(
            Diagnostic::new(
                Code::PromptComponent,
                &loc.file,
                at(&loc),
                FieldPath::root(),
                format!("`{from}` includes `{name}`, which is not a template of prompts/"),
            )
            .help(Some(
                "name a template by its id, such as `main/components/header`".into(),
            )),
        );
    }
    for (doc, graph) in &graphs {
        for site in sites(doc, &graph.nodes) {
            check_site(m, &site, report);
        }
    }
}

/// Every graph of the project that has a prompt node, with its document (graphs that do
/// not load are reported by the graph check).
fn prompt_graphs(project: &Project) -> Vec<(Document, Graph)> {
    let mut out = Vec::new();
    for id in project.tool_ids() {
        let Some(path) = project.tool_path(&id) else {
            continue;
        };
        let Ok(bytes) = project.read(&path) else {
            continue;
        };
        let name = project.display_name(&path);
        let Ok(doc) = Document::parse(&name, bytes, Format::Yaml, &project.limits) else {
            continue;
        };
        if !strata_graph::is_graph_document(&doc.value) {
            continue;
        }
        if let Ok(graph) = Graph::load(&doc, &id, &Catalog(project), &project.limits) {
            if strata_graph::uses_prompts(&graph) {
                out.push((doc, graph));
            }
        }
    }
    out
}

fn sites<'g>(doc: &'g Document, nodes: &'g [Node]) -> Vec<Site<'g>> {
    let mut out = Vec::new();
    for node in nodes {
        match &node.body {
            Body::Prompt(prompt) => out.push(Site { doc, node, prompt }),
            Body::Foreach(f) => out.extend(sites(doc, &f.body)),
            _ => {}
        }
    }
    out
}

fn node_diagnostic(
    site: &Site<'_>,
    code: Code,
    field: &FieldPath,
    message: String,
    help: Option<String>,
) -> Diagnostic {
    let mut probe = field.clone();
    while !probe.is_root() && probe.lookup(&site.doc.value).is_none() {
        probe.0.pop();
    }
    let pos = site.doc.locate(&probe, None).unwrap_or((1, 1));
    Diagnostic::new(code, &site.doc.name, pos, field.clone(), message).help(help)
}

/// Versions whose base name exists nowhere a lookup through their namespace reaches.
fn shadows(m: &PromptManager, report: &mut Report) {
    let all = m.templates();
    for t in all.iter().filter(|t| !t.component) {
        let Some(version) = &t.version else {
            continue;
        };
        if m.shadows_something(&t.namespace, &t.name) {
            continue;
        }
        let siblings: BTreeSet<&str> = all
            .iter()
            .filter(|o| !o.component && o.namespace == t.namespace && o.version.is_none())
            .map(|o| o.name.as_str())
            .collect();
        let help = match did_you_mean(&t.name, siblings.iter().copied()) {
            Some(best) => format!("did you mean `{best}.{version}`?"),
            None => format!(
                "add `{}` (the template this version overrides), or drop the version",
                t.name
            ),
        };
        let loc = t.place.start();
        report.push(
            Diagnostic::new(
                Code::PromptShadow,
                &loc.file,
                at(&loc),
                FieldPath::root(),
                format!(
                    "`{}` is version `{version}` of `{}`, which no lookup through `{}` can fall back to",
                    t.id, t.name, t.namespace
                ),
            )
            .help(Some(help)),
        );
    }
}

/// The node's settings as overrides (a version written as a template is left out).
fn overrides(p: &PromptNode) -> Overrides {
    let version = p
        .version
        .as_ref()
        .filter(|t| t.is_const())
        .and(p.version_source.as_ref())
        .and_then(Value::as_str)
        .map(|v| Some(v.to_string()));
    Overrides {
        root_space: p.root_space.clone().map(Some),
        type_: p.type_.clone(),
        version,
        ..Overrides::default()
    }
}

fn check_site(m: &PromptManager, site: &Site<'_>, report: &mut Report) {
    let p = site.prompt;
    let node = site.node;
    let m = match m.switch(&overrides(p)) {
        Ok(m) => m,
        Err(e) => {
            report.push(node_diagnostic(
                site,
                Code::PromptKey,
                &node.path,
                e.message().to_string(),
                e.hint().map(str::to_string),
            ));
            return;
        }
    };
    let reachable: Vec<String> = if p.key.is_const() {
        let key = p.key_source.as_str();
        match m.resolve(key) {
            Ok(Some(id)) => {
                if let Some(u) = m.unknown_key(key) {
                    let mut d = node_diagnostic(
                        site,
                        Code::PromptKey,
                        &key_path(node),
                        format!(
                            "prompt node `{}`: key `{}` falls back to `{id}`: {}",
                            node.id,
                            key.unwrap_or_default(),
                            u.describe()
                        ),
                        Some(match &u.did_you_mean {
                            Some(best) => format!("did you mean `{best}`? (a key no template is named after is almost always a typo)"),
                            None => "add a template of that name, or use the default name when the fallback is meant".into(),
                        }),
                    );
                    d.severity = crate::diagnostic::Severity::Warning;
                    report.push(d);
                }
                vec![id.to_string()]
            }
            Ok(None) | Err(_) => {
                let e = m
                    .render(&Call {
                        key,
                        ..Call::default()
                    })
                    .err()
                    .unwrap_or_else(|| {
                        Error::new(
                            strata_prompts::LAYER,
                            ErrorKind::TemplateNotFound,
                            "no template",
                        )
                    });
                report.push(node_diagnostic(
                    site,
                    Code::PromptKey,
                    &key_path(node),
                    format!("prompt node `{}`: {}", node.id, e.message()),
                    e.hint().map(str::to_string),
                ));
                return;
            }
        }
    } else {
        m.reachable(None)
    };
    pins(&m, site, &reachable, report);
    let Some(provided) = p.feed_keys.clone() else {
        return;
    };
    // Keys written in braces (`{{ user_input }}`, seed 002's way) name the variable inside.
    let unbrace = |k: &String| strata_prompts::feed_name(k).unwrap_or(k).to_string();
    let mut provided: BTreeSet<String> = provided.iter().map(unbrace).collect();
    match (&p.knowledge, &p.knowledge_keys) {
        (None, _) => {}
        (Some(_), Some(keys)) => provided.extend(keys.iter().map(unbrace)),
        (Some(_), None) => return,
    }
    for id in &reachable {
        for name in m.needs(id) {
            if provided.contains(&name) {
                continue;
            }
            let Some(loc) = m.first_use(id, &name) else {
                continue;
            };
            report.push(
                Diagnostic::new(
                    Code::PromptFeed,
                    &loc.file,
                    at(&loc),
                    FieldPath::root(),
                    format!(
                        "`{name}` is read by `{id}`, but the feed of prompt node `{}` ({}) does not provide it",
                        node.id, site.doc.name
                    ),
                )
                .help(Some(format!(
                    "add `{name}` to the node's `feed`, or guard it with `{{% if {name} is defined %}}`"
                ))),
            );
        }
    }
}

fn key_path(node: &Node) -> FieldPath {
    key(&node.path, "key")
}

/// Pinned components each reachable template must see, with the pinned version.
fn pins(m: &PromptManager, site: &Site<'_>, reachable: &[String], report: &mut Report) {
    for (component, version) in &site.prompt.pins {
        let field = key(&key(&site.node.path, "pin"), component);
        let mut problem: Option<(String, Option<String>)> = None;
        for id in reachable {
            let seen = m.components_of(id);
            match seen.iter().find(|(name, _)| name == component) {
                None => {
                    let help = did_you_mean(component, seen.iter().map(|(n, _)| n.as_str()))
                        .map(|b| format!("did you mean `{b}`?"));
                    problem = Some((
                        format!("prompt node `{}` pins component `{component}`, which `{id}` does not see", site.node.id),
                        help,
                    ));
                }
                Some((_, versions)) if !versions.contains(version) => {
                    let help = if versions.is_empty() {
                        "the component has no versions".to_string()
                    } else {
                        format!("its versions are {}", versions.join(", "))
                    };
                    problem = Some((
                        format!("component `{component}` has no version `{version}`"),
                        Some(help),
                    ));
                }
                Some(_) => continue,
            }
            break;
        }
        if let Some((message, help)) = problem {
            report.push(node_diagnostic(
                site,
                Code::PromptComponent,
                &field,
                message,
                help,
            ));
        }
    }
}
