//! The items a server exposes as MCP tools, read from the project once and again whenever
//! its files change: every tool and graph under `tools/` (not the runtimes), every directive
//! under `directives/`, every plan under `plans/`, and `run_plan`. Each has its MCP name, its
//! schemas, whether it is read-only, and its source file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Map, Value};
use strata_app::{App, ExecOptions};
use strata_directive::{Directive, FrontMatter};
use strata_doc::{Document, Format};

use crate::names::mcp_name;
use crate::schema;
use crate::select::Select;

/// The name of the tool that runs a plan the agent writes.
pub(crate) const PLAN_WRITER: &str = "run_plan";

/// What an item runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A tool, by id.
    Tool(String),
    /// A graph, by id.
    Graph(String),
    /// A directive file.
    Directive(PathBuf),
    /// A plan file.
    PlanFile(PathBuf),
    /// A plan the caller writes.
    PlanWriter,
}

impl Kind {
    /// What the item is, in its title.
    fn noun(&self) -> &'static str {
        match self {
            Kind::Tool(_) => "Tool",
            Kind::Graph(_) => "Graph",
            Kind::Directive(_) => "Directive",
            Kind::PlanFile(_) => "Plan",
            Kind::PlanWriter => "Plan",
        }
    }
}

/// One exposed item.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    /// Its MCP tool name.
    pub(crate) name: String,
    /// Its strata name: the tool id, or the file relative to the project.
    pub(crate) id: String,
    /// What it runs.
    pub(crate) kind: Kind,
    /// What it does.
    pub(crate) description: String,
    /// What it takes.
    pub(crate) input: Map<String, Value>,
    /// What it returns, when declared.
    pub(crate) output: Option<Map<String, Value>>,
    /// Running it changes nothing.
    pub(crate) read_only: bool,
    /// Its file.
    pub(crate) source: Option<PathBuf>,
}

impl Item {
    /// The item as an MCP tool.
    pub(crate) fn to_tool(&self) -> Value {
        let title = match self.kind {
            Kind::PlanWriter => "Run a plan you write".to_string(),
            _ => format!("{} {}", self.kind.noun(), self.id),
        };
        let mut tool = json!({
            "name": self.name,
            "title": title,
            "description": self.description,
            "inputSchema": self.input,
            "annotations": {
                "title": title,
                "readOnlyHint": self.read_only,
                "destructiveHint": !self.read_only,
                "openWorldHint": false,
            },
        });
        if let Some(output) = &self.output {
            tool["outputSchema"] = Value::Object(output.clone());
        }
        tool
    }
}

/// The exposed items, by MCP name, and what was left out and why.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    items: Vec<Arc<Item>>,
    by_name: HashMap<String, usize>,
    /// One line per item left out for a reason other than the user's selection.
    pub(crate) notes: Vec<String>,
}

impl Catalog {
    /// Reads the project's items and keeps those `select` exposes.
    pub(crate) fn build(app: &App, select: &Select) -> Catalog {
        let mut catalog = Catalog::default();
        catalog.add(
            select,
            Item {
                name: PLAN_WRITER.into(),
                id: PLAN_WRITER.into(),
                kind: Kind::PlanWriter,
                description: "Runs a plan you write, as `strata plan run` does: each step calls one of the project's tools (by strata id) with arguments that may refer to earlier steps' results; a step starts as soon as the steps it refers to completed, and the run is recorded under .strata/runs/. The result is the run's report: every step's record, and the values the plan still waits for.".into(),
                input: schema::of_plan_writer(),
                output: None,
                read_only: false,
                source: None,
            },
        );
        for entry in app.project().list() {
            if entry.id.starts_with("runtimes/") {
                continue;
            }
            let description = match entry.description {
                Ok(d) => d,
                Err(why) => {
                    catalog
                        .notes
                        .push(format!("`{}` is not exposed: {why}", entry.id));
                    continue;
                }
            };
            let item = if app.is_graph(&entry.id) {
                graph_item(app, &entry.id, description)
            } else {
                Some(Item {
                    name: String::new(),
                    id: entry.id.clone(),
                    kind: Kind::Tool(entry.id.clone()),
                    description,
                    input: schema::of_parameters(
                        strata_app::tool_parameters(app.project(), &entry.id).as_ref(),
                    ),
                    output: schema::of_outputs(
                        strata_app::tool_outputs(app.project(), &entry.id).as_ref(),
                    ),
                    read_only: app.tool_read_only(&entry.id),
                    source: app.tool_path(&entry.id),
                })
            };
            match item {
                Some(item) => catalog.add_named(select, item, &entry.id),
                None => catalog.notes.push(format!(
                    "`{}` is not exposed: the graph does not load",
                    entry.id
                )),
            }
        }
        for path in files(app, "directives", &["md"]) {
            let id = app.display_name(&path);
            match directive_item(app, &path, &id) {
                Ok(item) => catalog.add_named(select, item, &id),
                Err(why) => catalog.notes.push(format!("`{id}` is not exposed: {why}")),
            }
        }
        for path in files(app, "plans", &["yaml", "yml", "json"]) {
            let id = app.display_name(&path);
            match plan_item(app, &path, &id) {
                Ok(item) => catalog.add_named(select, item, &id),
                Err(why) => catalog.notes.push(format!("`{id}` is not exposed: {why}")),
            }
        }
        catalog
    }

    /// The item called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Item>> {
        self.by_name.get(name).map(|&i| &self.items[i])
    }

    /// Every item, in listing order.
    pub(crate) fn items(&self) -> &[Arc<Item>] {
        &self.items
    }

    /// Adds `item` named after `path`, unless its name is taken or too long.
    fn add_named(&mut self, select: &Select, mut item: Item, path: &str) {
        let Some(name) = mcp_name(path) else {
            self.notes.push(format!(
                "`{}` is not exposed: its name is longer than {} characters",
                item.id,
                crate::names::MAX_NAME
            ));
            return;
        };
        item.name = name;
        self.add(select, item);
    }

    fn add(&mut self, select: &Select, item: Item) {
        if !select.keeps(&item.name, &item.id, item.read_only) {
            return;
        }
        if let Some(&other) = self.by_name.get(&item.name) {
            self.notes.push(format!(
                "`{}` is not exposed: its name `{}` is already `{}`'s",
                item.id, item.name, self.items[other].id
            ));
            return;
        }
        self.by_name.insert(item.name.clone(), self.items.len());
        self.items.push(Arc::new(item));
    }
}

fn graph_item(app: &App, id: &str, description: String) -> Option<Item> {
    let graph = app.load_graph(id).ok()?;
    Some(Item {
        name: String::new(),
        id: id.to_string(),
        kind: Kind::Graph(id.to_string()),
        description,
        input: schema::of_parameters(graph.parameters.as_ref()),
        output: None,
        read_only: app.graph_read_only(&graph),
        source: app.tool_path(id),
    })
}

fn directive_item(app: &App, path: &Path, id: &str) -> Result<Item, String> {
    let text = app.read_text(path).map_err(|e| e.message().to_string())?;
    // What it calls comes from the whole directive, hooks included; one that does not load
    // is listed from its front matter (a call then says what is wrong) and is not read-only.
    let runner = app.runner(ExecOptions::default());
    let loaded = strata_directive::load_project_hooks(&app.root, &runner, &app.limits)
        .and_then(|hooks| Directive::load(id, &text, &runner, &hooks, &app.limits));
    let (front, read_only): (FrontMatter, bool) = match loaded {
        Ok(directive) => {
            let read_only = app.directive_read_only(&directive);
            (directive.front, read_only)
        }
        Err(_) => (
            Directive::front_matter(id, &text, &app.limits).map_err(|e| e.message().to_string())?,
            false,
        ),
    };
    Ok(Item {
        name: String::new(),
        id: id.to_string(),
        kind: Kind::Directive(path.to_path_buf()),
        description: front
            .description
            .unwrap_or_else(|| format!("Runs directive {}", front.name)),
        input: schema::of_inputs(&front.inputs),
        output: None,
        read_only,
        source: Some(path.to_path_buf()),
    })
}

fn plan_item(app: &App, path: &Path, id: &str) -> Result<Item, String> {
    let doc = plan_document(app, path, id).map_err(|e| e.message().to_string())?;
    let plan = app
        .load_plan(&doc)
        .map_err(|errors| errors[0].message().to_string())?;
    let levels: Vec<String> = plan
        .level_ids()
        .iter()
        .map(|level| format!("[{}]", level.join(", ")))
        .collect();
    Ok(Item {
        name: String::new(),
        id: id.to_string(),
        kind: Kind::PlanFile(path.to_path_buf()),
        description: format!(
            "Runs plan {id}, as `strata plan run` does: {} step{} in levels {}",
            plan.steps.len(),
            if plan.steps.len() == 1 { "" } else { "s" },
            levels.join(" ")
        ),
        input: schema::of_plan_file(),
        output: None,
        read_only: app.plan_read_only(&plan),
        source: Some(path.to_path_buf()),
    })
}

/// The plan file at `path`, read as JSON or YAML by its extension.
pub(crate) fn plan_document(
    app: &App,
    path: &Path,
    shown: &str,
) -> Result<Document, strata_core::Error> {
    let bytes = app.read(path)?;
    let format = if path.extension().is_some_and(|e| e == "json") {
        Format::Json
    } else {
        Format::Yaml
    };
    Document::parse(shown, bytes, format, &app.limits)
}

/// The files under the project's `dir` with one of `exts`, sorted.
fn files(app: &App, dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    let mut found = strata_doc::walk(&app.root.join(dir), exts);
    found.sort();
    found
}
