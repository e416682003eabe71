//! Checks of tool files (tools and runtimes), each through the executor chains it is part of.

use std::collections::{BTreeMap, HashMap, HashSet};

use indexmap::IndexMap;

use serde_json::Value;
use strata_context::parse_expr;
use strata_core::walk::Path;
use strata_core::{string_leaves, FieldPath, Layer, Limits, PathSeg, Reference, Span};
use strata_doc::{Document, Format};
use strata_exec::allowlisted;
use strata_pipeline::{Chain, Template};
use strata_project::{as_literal, check_schema, take_literals, Link, Project, ToolChain};

use crate::catalog::Catalog;
use crate::diagnostic::{Code, Diagnostic};
use crate::lints::{bare_dollars, foreign_steps, spaced, Lint};
use crate::names::{chain_env, known_params, RUNTIME_PARAMS};
use crate::records::result_read;
use crate::Report;
use strata_core::did_you_mean;

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

fn is_graph(project: &Project, id: &str) -> bool {
    project.tool_kind(id).as_deref() == Some("graph")
}

/// What every chain check needs to know of the project.
pub(crate) struct ProjectFacts {
    dotenv: Vec<String>,
    /// Ids of runtimes: files under `runtimes/` or named as an executor. Their parameters
    /// (`{script}`) come from the tools that use them.
    runtimes: HashSet<String>,
}

impl ProjectFacts {
    /// The facts of `project` with the runtimes `runtimes`.
    pub(crate) fn new(project: &Project, runtimes: HashSet<String>) -> ProjectFacts {
        ProjectFacts {
            dotenv: project_dotenv(project),
            runtimes,
        }
    }
}

/// Checks every tool of the project.
pub fn check(project: &Project, report: &mut Report) {
    check_ids(project, &project.tool_ids(), report);
}

/// Checks the tools `ids` (graphs by their loader, the others through their executor
/// chains); returns the graphs that loaded.
pub fn check_ids(
    project: &Project,
    ids: &[String],
    report: &mut Report,
) -> Vec<strata_graph::Graph> {
    let mut chains: Vec<Loaded> = Vec::new();
    let mut graphs = Vec::new();
    let mut runtimes = HashSet::new();
    if ids.is_empty() {
        return graphs;
    }
    for id in ids {
        if id.starts_with("runtimes/") {
            runtimes.insert(id.clone());
        }
        match load(project, id, report) {
            Unit::Chain(chain) => {
                runtimes.extend(executors(&chain));
                chains.push(chain);
            }
            Unit::Graph(graph) => graphs.extend(graph.map(|g| *g)),
            Unit::Failed => {}
        }
    }
    let facts = ProjectFacts::new(project, runtimes);
    let mut linted = HashSet::new();
    for chain in &chains {
        check_chain(chain, &project.limits, &facts, report, &mut linted);
    }
    graphs
}

/// One tool as the first pass of a check leaves it.
pub(crate) enum Unit {
    /// An executor chain, checked by [`check_chain`] in the second pass.
    Chain(Loaded),
    /// A graph, checked by its loader (`None`: it did not load).
    Graph(Option<Box<strata_graph::Graph>>),
    /// A tool whose chain did not load (reported).
    Failed,
}

/// The ids of the executors of `chain` (its links after the tool).
pub(crate) fn executors(chain: &ToolChain) -> impl Iterator<Item = String> + '_ {
    chain.links.iter().skip(1).map(|l| l.id.clone())
}

/// The first pass over tool `id`: its chain loaded (a graph checked by its loader, a chain
/// that does not load reported).
pub(crate) fn load(project: &Project, id: &str, report: &mut Report) -> Unit {
    report.files += 1;
    // A tool the project has compiled, and whose files have not changed since, is
    // checked on the chain it was compiled from: its files are not read again (the
    // gate checks the tool it has just compiled).
    if let Some(tool) = project.compiled_if_current(id) {
        return Unit::Chain(Loaded::Compiled(tool));
    }
    // The chain is loaded first: a tool's file is then read and parsed once (a graph,
    // which has no executor, is told by its `kind` either way).
    match ToolChain::load(project, id) {
        Ok(chain)
            if chain.links[0].doc.value.get("kind").and_then(Value::as_str) == Some("graph") =>
        {
            Unit::Graph(check_graph(project, id, report).map(Box::new))
        }
        Ok(chain) => Unit::Chain(Loaded::Own(chain)),
        Err(_) if is_graph(project, id) => {
            Unit::Graph(check_graph(project, id, report).map(Box::new))
        }
        Err(e) => {
            report.push(Diagnostic::from_error(&e, &format!("tools/{id}.yaml")));
            Unit::Failed
        }
    }
}

/// An executor chain to check: loaded for the check, or the one a compiled tool holds.
pub(crate) enum Loaded {
    Own(ToolChain),
    Compiled(std::sync::Arc<strata_project::CompiledTool>),
}

impl std::ops::Deref for Loaded {
    type Target = ToolChain;

    fn deref(&self) -> &ToolChain {
        match self {
            Loaded::Own(chain) => chain,
            Loaded::Compiled(tool) => &tool.chain,
        }
    }
}

/// A graph is checked by its own loader (nodes, edges, state keys, inputs, expressions);
/// then its step results are read for old spellings, and its actions' parameters against
/// their tools' schemas. Returns the graph when it loaded.
fn check_graph(project: &Project, id: &str, report: &mut Report) -> Option<strata_graph::Graph> {
    let path = project.tool_path(id)?;
    let name = project.display_name(&path);
    let loaded = project
        .read(&path)
        .and_then(|bytes| Document::parse(&name, bytes, Format::Yaml, &project.limits))
        .map_err(|e| vec![e])
        .and_then(|doc| {
            let graph =
                strata_graph::Graph::load_all(&doc, id, &Catalog(project), &project.limits)?;
            Ok((doc, graph))
        });
    match loaded {
        Ok((doc, graph)) => {
            lint_graph_results(project, &doc, &graph, report);
            crate::actions::check_graph(project, &doc, &graph, report);
            Some(graph)
        }
        Err(errors) => {
            for e in &errors {
                report.push(Diagnostic::from_error(e, &name).with_code(Code::Graph));
            }
            None
        }
    }
}

/// The action nodes of a graph (foreach bodies included): where each is declared, and the
/// tool it calls.
fn action_nodes<'g>(nodes: &'g [strata_graph::Node], out: &mut Vec<(&'g FieldPath, &'g str)>) {
    for node in nodes {
        match &node.body {
            strata_graph::Body::Action(a) => out.push((&node.path, a.tool.as_str())),
            strata_graph::Body::Foreach(f) => action_nodes(&f.body, out),
            _ => {}
        }
    }
}

/// Reads of `${result…}` in a loaded graph, in its templates and its `when`/`condition`
/// expressions: against the `outputs` of the tool the node calls when it declares them
/// (R013 for a field it does not declare), else old step-record spellings
/// (`result.success`, `result.data.x`) as notes (L006).
fn lint_graph_results(
    project: &Project,
    doc: &Document,
    graph: &strata_graph::Graph,
    report: &mut Report,
) {
    let mut actions = Vec::new();
    action_nodes(&graph.nodes, &mut actions);
    let mut outputs: HashMap<&str, Option<Value>> = HashMap::new();
    let chain = Chain::of(&[Layer::CONTEXT]);
    let limits = Limits::default();
    for (field, text) in string_leaves(&doc.value, &FieldPath::root()) {
        let condition =
            matches!(field.0.last(), Some(PathSeg::Key(k)) if k == "when" || k == "condition");
        let paths: Vec<(Path, Option<Span>)> = if condition {
            match parse_expr(text, 0) {
                Ok(expr) => expr
                    .paths()
                    .into_iter()
                    .map(|p| {
                        let shown = p.display();
                        let span = text.find(&shown).map(|i| Span::new(i, i + shown.len()));
                        (p.clone(), span)
                    })
                    .collect(),
                Err(_) => Vec::new(),
            }
        } else {
            match Template::compile(&Value::String(text.to_string()), &chain, &limits) {
                Ok(t) => t
                    .references()
                    .into_iter()
                    .map(|(_, r)| (r.path, Some(r.span)))
                    .collect(),
                Err(_) => Vec::new(),
            }
        };
        // The tool of the action node the field belongs to (the innermost one).
        let tool = actions
            .iter()
            .filter(|(node, _)| field.0.starts_with(&node.0))
            .max_by_key(|(node, _)| node.0.len())
            .map(|(_, tool)| *tool);
        let schema = tool.and_then(|t| {
            outputs
                .entry(t)
                .or_insert_with(|| strata_project::tool_outputs(project, t))
                .as_ref()
                .map(|s| (t, s))
        });
        for (path, span) in paths {
            if let Some((code, severity, message, help)) = result_read(&path, 0, schema) {
                let at = doc.locate(&field, span.map(|s| s.start)).unwrap_or((1, 1));
                report.push(
                    Diagnostic::new(code, &doc.name, at, field.clone(), message)
                        .span(span)
                        .help(help)
                        .severity(severity),
                );
            }
        }
    }
}

pub(crate) fn project_dotenv(project: &Project) -> Vec<String> {
    let Ok(Some(text)) = project.dotenv_text() else {
        return Vec::new();
    };
    strata_doc::parse_dotenv(".env", &text)
        .map(|pairs| pairs.into_iter().map(|(k, _)| k).collect())
        .unwrap_or_default()
}

/// The link whose file authored `path` (the one closest to the tool).
fn owner<'c>(chain: &'c ToolChain, path: &FieldPath) -> &'c Link {
    chain
        .links
        .iter()
        .find(|l| path.lookup(&l.doc.value).is_some())
        .unwrap_or(&chain.links[0])
}

pub(crate) fn declared_params(link: &Link) -> Vec<String> {
    link.file
        .parameters
        .as_ref()
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn env_set_by_chain(chain: &ToolChain, dotenv: &[String], name: &str) -> bool {
    allowlisted(name) || chain_env(chain, dotenv).iter().any(|e| e.name == name)
}

pub(crate) fn check_chain(
    chain: &ToolChain,
    limits: &Limits,
    facts: &ProjectFacts,
    report: &mut Report,
    linted: &mut HashSet<String>,
) {
    let tool = &chain.links[0];
    if let Some(schema) = &tool.file.parameters {
        if let Err(e) = check_schema(schema) {
            let path = e.path.under(&FieldPath(vec![key("parameters")]));
            let at = tool.doc.locate(&path, None).unwrap_or((1, 1));
            report.push(
                Diagnostic::new(Code::Load, &tool.doc.name, at, path, e.message).help(Some(
                    "see docs/tools.md for the supported schema subset".into(),
                )),
            );
        }
    }
    check_env_templates(chain, limits, report);
    let mut config = Value::Object(chain.merged_config());
    if let Err(e) = take_literals(&mut config) {
        let e = e.map_path(|p| p.under(&FieldPath(vec![key("config")])));
        let link = owner(chain, e.path());
        report.push(
            Diagnostic::from_error(&link.doc.locate_error(e), &link.doc.name).with_code(Code::Load),
        );
        return;
    }
    let config_path = FieldPath(vec![key("config")]);
    let known = known_params(chain, &config);
    let stages = Chain::of(&[Layer::ENV, Layer::PARAMS]);
    let template = match Template::compile(&config, &stages, limits) {
        Ok(t) => t,
        Err(e) => {
            let e = e.map_path(|p| p.under(&config_path));
            let link = owner(chain, e.path());
            report.push(Diagnostic::from_error(
                &link.doc.locate_error(e),
                &link.doc.name,
            ));
            return;
        }
    };
    let secrets = chain.secrets();
    let known_set: HashSet<&str> = known.iter().map(String::as_str).collect();
    let mut used = HashSet::new();
    for (field, r) in template.references() {
        match r.layer {
            Layer::PARAMS => {
                used.insert(r.name.clone());
                if known_set.contains(r.name.as_str()) {
                    continue;
                }
                let path = field.under(&config_path);
                let link = owner(chain, &path);
                let own = std::ptr::eq(link, tool);
                if own && facts.runtimes.contains(&tool.id) {
                    continue;
                }
                // Located only when reported: most references are fine.
                let at = link.doc.locate(&path, Some(r.span.start)).unwrap_or((1, 1));
                let message = if own {
                    format!("unknown parameter `{{{}}}`: it is left as written", r.name)
                } else {
                    format!("unknown parameter `{{{}}}` when `{}` runs on this file: it is left as written", r.name, tool.id)
                };
                let help = did_you_mean(&r.name, known.iter().map(String::as_str))
                    .map(|s| format!("did you mean `{{{s}}}`?"))
                    .unwrap_or_else(|| {
                        if own {
                            format!("the parameters here are {}", braces(&known))
                        } else {
                            format!("set `{}` in the config of `{}`", r.name, tool.id)
                        }
                    });
                report.push(
                    Diagnostic::new(
                        Code::UnknownParam,
                        &link.doc.name,
                        at,
                        path.clone(),
                        message,
                    )
                    .span(Some(r.span))
                    .help(Some(help)),
                );
            }
            Layer::ENV => {
                let path = field.under(&config_path);
                check_env(chain, &facts.dotenv, &r, &path, &secrets, report)
            }
            _ => {}
        }
    }
    unused_params(chain, &config, &used, report);
    shadowed_params(chain, &config, &used, report);
    let edges = param_edges(chain, &template, &config_path);
    param_cycles(chain, &edges, report);
    param_chains(chain, &edges, limits.param_links, report);
    let shell = runs_a_shell(chain);
    for link in &chain.links {
        if linted.insert(link.doc.name.clone()) {
            lint_file(link, limits, report);
        }
        lint_spaced(link, &known, report);
        lint_bare_dollars(link, shell, report);
    }
}

/// The programs whose script and arguments are shell syntax, where `$NAME` expands.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "fish"];

/// True when the chain's command is a shell (`bash`, `/bin/sh`, `${BASH_BIN}`, a
/// `*_SHELL`/`*BASH*` variable) or the chain runs through a shell runtime (`runtimes/bash`).
fn runs_a_shell(chain: &ToolChain) -> bool {
    let config = chain.merged_config();
    let command = config.get("command").and_then(Value::as_str).unwrap_or("");
    let base = command.rsplit('/').next().unwrap_or(command);
    let by_link = chain.links.iter().skip(1).any(|l| {
        let name = l.id.rsplit('/').next().unwrap_or(&l.id);
        SHELLS.contains(&name)
    });
    by_link || SHELLS.contains(&base) || command.contains("BASH") || command.contains("SHELL")
}

/// `$NAME` in the config strings of `link` where it is literal: everywhere but a shell's
/// `command`, `args` and `script` (`shell`: the chain runs one).
fn lint_bare_dollars(link: &Link, shell: bool, report: &mut Report) {
    for (path, text) in config_strings(link) {
        let shell_syntax = matches!(
            path.0.get(1),
            Some(PathSeg::Key(k)) if ["command", "args", "script"].contains(&k.as_str())
        );
        if shell && shell_syntax {
            continue;
        }
        for lint in bare_dollars(&text) {
            push_lint(link, &path, lint, report);
        }
    }
}

fn braces(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{{{n}}}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_env(
    chain: &ToolChain,
    dotenv: &[String],
    r: &Reference,
    path: &FieldPath,
    secrets: &[String],
    report: &mut Report,
) {
    let unset = !(r.optional || env_set_by_chain(chain, dotenv, &r.name));
    let in_args = path.0.get(1) == Some(&key("args"));
    let in_argv = in_args && secrets.contains(&r.name);
    if !unset && !in_argv {
        return;
    }
    // Located only when reported.
    let link = owner(chain, path);
    let at = link.doc.locate(path, Some(r.span.start)).unwrap_or((1, 1));
    if unset {
        let d = Diagnostic::new(Code::UnsetEnv, &link.doc.name, at, path.clone(), format!("`${{{}}}` has no default and nothing in the executor chain sets it", r.name))
            .span(Some(r.span))
            .help(Some(format!("write `${{{}:-default}}`, set it in `env_config.env`, or list it in `secrets` if the caller provides it", r.name)));
        report.push(d);
    }
    if in_argv {
        report.push(
            Diagnostic::new(
                Code::SecretInArgs,
                &link.doc.name,
                at,
                path.clone(),
                format!(
                    "secret `{}` is placed in argv, which every process on the machine can read",
                    r.name
                ),
            )
            .span(Some(r.span))
            .help(Some(
                "pass it through `config.env` (or stdin) instead".into(),
            )),
        );
    }
}

fn unused_params(chain: &ToolChain, config: &Value, used: &HashSet<String>, report: &mut Report) {
    let tool = &chain.links[0];
    let whole = used.contains("params_json") || config.get("params_env_prefix").is_some();
    if whole {
        return;
    }
    for name in declared_params(tool) {
        if used.contains(&name) {
            continue;
        }
        let path = FieldPath(vec![key("parameters"), key("properties"), key(&name)]);
        let at = tool.doc.locate(&path, None).unwrap_or((1, 1));
        report.push(
            Diagnostic::new(
                Code::UnusedParam,
                &tool.doc.name,
                at,
                path,
                format!("parameter `{name}` never reaches the tool"),
            )
            .help(Some(format!(
                "use `{{{name}}}` in the config, or `{{params_json}}` to pass every parameter"
            ))),
        );
    }
}

/// Declared parameters that a config key of the same name shadows where the config reads
/// them: layer P looks config keys up before caller parameters, so `{name}` always reads
/// the key. Reported at the parameter's declaration, naming where the key is set.
fn shadowed_params(chain: &ToolChain, config: &Value, used: &HashSet<String>, report: &mut Report) {
    let tool = &chain.links[0];
    for name in declared_params(tool) {
        if !used.contains(&name) || config.get(&name).is_none() {
            continue;
        }
        let path = FieldPath(vec![key("parameters"), key("properties"), key(&name)]);
        let at = tool.doc.locate(&path, None).unwrap_or((1, 1));
        let key_path = FieldPath(vec![key("config"), key(&name)]);
        let link = owner(chain, &key_path);
        let (line, column) = link.doc.locate(&key_path, None).unwrap_or((1, 1));
        report.push(
            Diagnostic::new(
                Code::ShadowedParam,
                &tool.doc.name,
                at,
                path,
                format!(
                    "parameter `{name}` is shadowed by the config key `{name}` ({}:{line}:{column}): `{{{name}}}` always reads the config key",
                    link.doc.name
                ),
            )
            .help(Some(
                "rename the parameter and use the new name in the config: a config key always wins over a caller parameter of the same name".into(),
            )),
        );
    }
}

/// Strings of one file's own `config`, with their paths (literal args left out).
/// The string leaves of a link's config, `{literal: …}` values left out (no stage reads them).
fn config_strings(link: &Link) -> Vec<(FieldPath, String)> {
    let Some(config) = link.doc.value.get("config") else {
        return Vec::new();
    };
    string_leaves(config, &FieldPath(vec![key("config")]))
        .into_iter()
        .filter(|(path, _)| !is_literal(&link.doc.value, path))
        .map(|(p, s)| (p, s.to_string()))
        .collect()
}

/// True for the text of a `{literal: …}` map.
fn is_literal(root: &Value, path: &FieldPath) -> bool {
    let Some((PathSeg::Key(last), parent)) = path.0.split_last() else {
        return false;
    };
    last == "literal"
        && FieldPath(parent.to_vec())
            .lookup(root)
            .and_then(as_literal)
            .is_some()
}

fn push_lint(link: &Link, path: &FieldPath, lint: Lint, report: &mut Report) {
    let at = link
        .doc
        .locate(path, Some(lint.span.start))
        .unwrap_or((1, 1));
    report.push(
        Diagnostic::new(lint.code, &link.doc.name, at, path.clone(), lint.message)
            .span(Some(lint.span))
            .help(lint.help),
    );
}

/// Layer I and layer C placeholders, and plan references, in a tool file: no stage of a
/// tool run reads them.
fn lint_file(link: &Link, limits: &Limits, report: &mut Report) {
    for (path, text) in config_strings(link) {
        for mut lint in foreign_steps(&text) {
            lint.help = Some("step references are resolved in plans (plans/) before the tool runs: pass the value as a parameter and use `{name}` here".into());
            push_lint(link, &path, lint, report);
        }
        for (layer, code, what) in [
            (
                Layer::INPUTS,
                Code::InputInTool,
                "a directive input reference",
            ),
            (Layer::CONTEXT, Code::ContextInTool, "a context placeholder"),
        ] {
            let Ok(t) =
                Template::compile(&Value::String(text.clone()), &Chain::of(&[layer]), limits)
            else {
                continue;
            };
            for (_, r) in t.references() {
                let source = &text[r.span.start..r.span.end];
                if layer == Layer::CONTEXT {
                    if let Some(name) = param_as_context(link, &r) {
                        let lint = Lint {
                            code: Code::ParamAsContext,
                            span: r.span,
                            message: format!("`{source}` is a context placeholder in a tool file, where layer C never runs: it would reach the process as written"),
                            help: Some(format!(
                                "the {} is `{{{name}}}` (layer P); write `$${{{name}}}` for the literal text",
                                if RUNTIME_PARAMS.contains(&name) { "runtime parameter" } else { "parameter" }
                            )),
                        };
                        push_lint(link, &path, lint, report);
                        continue;
                    }
                }
                let lint = Lint {
                    code,
                    span: r.span,
                    message: format!("`{source}` is {what} in a tool file, where layer {} never runs", layer_letter(layer)),
                    help: Some(match layer {
                        Layer::INPUTS => "pass the input as a tool parameter from the directive (`params: {x: \"{input:x}\"}`) and use `{x}` here".into(),
                        _ => "context is rendered before dispatch (graphs, hooks, directives): pass the value as a parameter and use `{name}` here".into(),
                    }),
                };
                push_lint(link, &path, lint, report);
            }
        }
    }
}

/// The parameter a context placeholder in a tool file names, when it is one bare name
/// that layer P knows in this file (a runtime parameter, a config key of the file, a
/// declared parameter): `${tool_dir}` meant `{tool_dir}`.
fn param_as_context<'r>(link: &Link, r: &'r Reference) -> Option<&'r str> {
    let [strata_core::walk::Seg::Key(name)] = r.path.segs.as_slice() else {
        return None;
    };
    let name = name.as_str();
    let own_key = link
        .doc
        .value
        .get("config")
        .and_then(|c| c.get(name))
        .is_some();
    (RUNTIME_PARAMS.contains(&name) || own_key || declared_params(link).iter().any(|p| p == name))
        .then_some(name)
}

fn layer_letter(layer: Layer) -> &'static str {
    match layer {
        Layer::INPUTS => "I",
        Layer::CONTEXT => "C",
        Layer::ENV => "E",
        _ => "P",
    }
}

fn lint_spaced(link: &Link, known: &[String], report: &mut Report) {
    for (path, text) in config_strings(link) {
        for lint in spaced(&text, |n| {
            known.iter().any(|k| k == n).then(|| format!("{{{n}}}"))
        }) {
            push_lint(link, &path, lint, report);
        }
    }
}

/// `env_config.env` values are layer-E templates: their syntax is checked too.
fn check_env_templates(chain: &ToolChain, limits: &Limits, report: &mut Report) {
    for link in &chain.links {
        let Some(env) = link.file.env_config.as_ref().map(|e| &e.env) else {
            continue;
        };
        for (name, value) in env {
            let path = FieldPath(vec![key("env_config"), key("env"), key(name)]);
            if let Err(e) = Template::compile(value, &Chain::of(&[Layer::ENV]), limits) {
                let e = e.with_path(path.clone());
                report.push(Diagnostic::from_error(
                    &link.doc.locate_error(e),
                    &link.doc.name,
                ));
            }
        }
    }
}

/// The references between config keys: `from -> to -> (the referencing field, the
/// reference)`, one edge per pair of keys (the first reference, where it is reported).
type Edges = BTreeMap<String, IndexMap<String, (FieldPath, Reference)>>;

/// The references from config fields to config keys, by the top-level field that holds them.
fn param_edges(chain: &ToolChain, template: &Template, config_path: &FieldPath) -> Edges {
    let config = chain.merged_config();
    let mut edges = Edges::new();
    for (field, r) in template.references() {
        let Some(PathSeg::Key(from)) = field.0.first() else {
            continue;
        };
        if r.layer != Layer::PARAMS
            || RUNTIME_PARAMS.contains(&r.name.as_str())
            || !config.contains_key(&r.name)
            || !config.contains_key(from)
        {
            continue;
        }
        let path = field.under(config_path);
        edges
            .entry(from.clone())
            .or_default()
            .entry(r.name.clone())
            .or_insert((path, r));
    }
    edges
}

/// Config keys that refer to each other in a cycle can never render.
///
/// For each key, a breadth-first search for the shortest way back to it through keys that
/// sort after it: each cycle is found once, from its smallest key, in time linear in the
/// references.
fn param_cycles(chain: &ToolChain, edges: &Edges, report: &mut Report) {
    for start in edges.keys() {
        let Some((cycle, (path, r))) = shortest_cycle(edges, start) else {
            continue;
        };
        let link = owner(chain, path);
        let at = link.doc.locate(path, Some(r.span.start)).unwrap_or((1, 1));
        report.push(
            Diagnostic::new(
                Code::ParamCycle,
                &link.doc.name,
                at,
                path.clone(),
                format!("parameter cycle: {}", cycle.join(" -> ")),
            )
            .span(Some(r.span))
            .help(Some(
                "a parameter cannot refer to itself, directly or through others".into(),
            )),
        );
    }
}

/// The shortest cycle through `start` that visits no key sorting before it (`start -> … ->
/// start`), with the reference closing it.
fn shortest_cycle<'e>(
    edges: &'e Edges,
    start: &'e str,
) -> Option<(Vec<&'e str>, &'e (FieldPath, Reference))> {
    let mut came_from: HashMap<&str, &str> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for (to, closing) in edges.get(node).into_iter().flatten() {
            let to = to.as_str();
            if to == start {
                let mut inner = Vec::new();
                let mut at = node;
                while at != start {
                    inner.push(at);
                    at = came_from[at];
                }
                inner.reverse();
                let mut cycle = vec![start];
                cycle.extend(inner);
                cycle.push(start);
                return Some((cycle, closing));
            }
            if to > start && !came_from.contains_key(to) {
                came_from.insert(to, node);
                queue.push_back(to);
            }
        }
    }
    None
}

/// A chain of parameter references longer than the limit fails when the tool renders: the
/// first such chain from a field of the config, in the config's order, is reported where
/// its link past the limit stands — as the render reports it.
fn param_chains(chain: &ToolChain, edges: &Edges, limit: usize, report: &mut Report) {
    let depths = depths(edges, limit + 1);
    let depth_of = |key: &str| depths.get(key).copied().unwrap_or(0);
    let config = chain.merged_config();
    for from in config.keys() {
        if depth_of(from) <= limit {
            continue;
        }
        // Follow the longest way until the link past the limit.
        let mut names = vec![from.as_str()];
        let mut at = from.as_str();
        let mut last = None;
        while names.len() <= limit + 1 {
            let Some((to, edge)) = edges
                .get(at)
                .and_then(|out| out.iter().max_by_key(|(to, _)| depth_of(to)))
            else {
                break;
            };
            names.push(to);
            at = to;
            last = Some(edge);
        }
        let Some((path, r)) = last else {
            return;
        };
        let link = owner(chain, path);
        let at = link.doc.locate(path, Some(r.span.start)).unwrap_or((1, 1));
        report.push(
            Diagnostic::new(
                Code::ParamChain,
                &link.doc.name,
                at,
                path.clone(),
                format!(
                    "parameter chain is longer than {limit} links: {}",
                    names.join(" -> ")
                ),
            )
            .span(Some(r.span))
            .help(Some(format!(
                "shorten the chain, or {}",
                strata_core::raise_hint("param_links")
            ))),
        );
        return;
    }
}

/// The most links a render follows from each key that refers to others, at most `cap`
/// (a reference back into the way being followed counts one link: cycles are left to
/// [`param_cycles`]). An explicit stack, so no config costs stack in proportion to its
/// chains.
fn depths(edges: &Edges, cap: usize) -> HashMap<&str, usize> {
    let mut done: HashMap<&str, usize> = HashMap::new();
    let mut on_way: HashSet<&str> = HashSet::new();
    for (start, out) in edges {
        if done.contains_key(start.as_str()) {
            continue;
        }
        let mut stack = vec![(start.as_str(), out.keys(), 0)];
        on_way.insert(start);
        while let Some((_, next, best)) = stack.last_mut() {
            if let Some(to) = next.next() {
                let to = to.as_str();
                if let Some(d) = done.get(to) {
                    *best = (*best).max((1 + d).min(cap));
                } else if let Some(out) = edges.get(to).filter(|_| !on_way.contains(to)) {
                    on_way.insert(to);
                    stack.push((to, out.keys(), 0));
                } else {
                    *best = (*best).max(1);
                }
                continue;
            }
            let Some((key, _, best)) = stack.pop() else {
                break;
            };
            on_way.remove(key);
            done.insert(key, best);
            if let Some((_, _, parent)) = stack.last_mut() {
                *parent = (*parent).max((1 + best).min(cap));
            }
        }
    }
    done
}
