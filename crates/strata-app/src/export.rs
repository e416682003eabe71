//! Exporting a plan or a graph as an Argo Workflow: loaded as a run would load it, refused
//! as a run would be refused (the gate over every tool it calls), with the project's secret
//! names given to the tasks and its secret values kept out of the manifest, then checked
//! offline ([`strata_argo::check`]) before anything is handed back.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Map, Value};
use strata_argo::check::{check_exported, Summary};
use strata_argo::{export_graph, export_plan, tools_of, Options, Secrets, Shape, Source};
use strata_check::Target;
use strata_core::{Error, ErrorKind, Layer};
use strata_doc::Document;
use strata_graph::is_graph_document;
use strata_plans::Plan;
use strata_project::ToolChain;
use strata_tools::Scale;

use crate::{App, Failure};

/// A plan or graph file to export.
pub struct ArgoExport<'a> {
    /// The file as read, and the path it was read from (a graph is named by its path).
    pub doc: &'a Document,
    /// The path the file was read from.
    pub path: &'a Path,
    /// The export's options; for a plan, `values` are the defaults of its user values.
    pub options: Options,
    /// A graph's inputs: typed values and `name=value` strings, typed by its declarations.
    pub inputs: (Map<String, Value>, Vec<(String, String)>),
}

/// A manifest exported and checked.
#[derive(Debug)]
pub struct Exported {
    /// The Workflow.
    pub manifest: Value,
    /// What the check counted in it.
    pub summary: Summary,
    /// What its tasks run, for the header of the file.
    pub what: String,
    /// What the user should know (a graph exported whole, secret variables the tasks lack).
    pub notes: Vec<String>,
}

impl App {
    /// Exports `request.doc` — a graph when it is one, else a plan — as an Argo Workflow,
    /// refused when the gate refuses what it would run.
    pub fn export_argo(&self, request: ArgoExport<'_>) -> Result<Exported, Failure> {
        let doc = request.doc;
        let mut options = request.options;
        options.check()?;
        let source = Source {
            name: &doc.name,
            text: &doc.text,
            value: &doc.value,
        };
        let (manifest, what, mut notes, used) = if is_graph_document(&doc.value) {
            let id = self.id_of_path(request.path)?;
            self.admit(Target::Tool(&id), &id)?;
            let graph = self.load_graph(&id)?;
            let (typed, strings) = &request.inputs;
            options.values = graph.bind_inputs(typed, strings)?;
            let used: Vec<String> = tools_of(&graph).into_iter().map(String::from).collect();
            options.tools = self.tool_scales(&used);
            let known = ProjectSecrets::read(self, &used)?;
            let names = |tool: &str| known.names(tool);
            let secrets = Secrets {
                names: &names,
                values: &known.values,
            };
            let (manifest, shape) =
                export_graph(&graph, &source, &options, &secrets).map_err(|e| located(doc, e))?;
            let (what, notes) = match &shape {
                Shape::Dag => (
                    format!(
                        "one task per node (three per foreach), each running `strata walk` in `{}`",
                        options.image
                    ),
                    Vec::new(),
                ),
                Shape::Whole(cycle) => (
                    format!("one task running `strata run {id}` in `{}`", options.image),
                    vec![format!(
                        "graph `{id}` has a loop ({}): it is exported as one task running `strata run` on the whole graph",
                        cycle.join(" -> ")
                    )],
                ),
            };
            (manifest, what, notes, known)
        } else {
            let plan =
                Plan::load_within(doc, &self.limits).map_err(|errors| Failure::Document {
                    errors,
                    doc: Box::new(doc.clone()),
                })?;
            self.admit_plan(&plan, &doc.name, Some(doc))?;
            let used = crate::called_tools(&plan);
            options.tools = self.tool_scales(&used);
            let known = ProjectSecrets::read(self, &used)?;
            let names = |tool: &str| known.names(tool);
            let secrets = Secrets {
                names: &names,
                values: &known.values,
            };
            let manifest =
                export_plan(&plan, &source, &options, &secrets).map_err(|e| located(doc, e))?;
            let what = format!(
                "one task per step, each running `strata plan step` in `{}`",
                options.image
            );
            (manifest, what, Vec::new(), known)
        };
        notes.extend(used.note(options.secret.is_none()));
        let summary = check_exported(&manifest).map_err(|errors| {
            let first = errors
                .into_iter()
                .next()
                .unwrap_or_else(|| {
                    Error::new(
                        Layer::REQUEST,
                        ErrorKind::Invalid,
                        "the manifest is invalid",
                    )
                })
                .map_message(|m| {
                    format!(
                        "the manifest exported from `{}` does not pass the check: {m}",
                        doc.name
                    )
                });
            first.with_hint("this is a bug in strata's export; please report it with the input")
        })?;
        Ok(Exported {
            manifest,
            summary,
            what,
            notes,
        })
    }
}

/// An error of the export, located in the document.
fn located(doc: &Document, e: Error) -> Failure {
    Failure::Document {
        errors: vec![doc.locate_error(e)],
        doc: Box::new(doc.clone()),
    }
}

impl App {
    /// The `resources` and `retries` of `tools`, by id.
    fn tool_scales(&self, tools: &[String]) -> BTreeMap<String, Scale> {
        let scale = |id: &String| (id.clone(), strata_project::tool_scale(self.project(), id));
        tools.iter().map(scale).collect()
    }
}

/// The project's secrets as the export needs them: the secret variable names of each tool
/// (its chain's `secrets` and every `.env` name) and the values that must never reach a
/// manifest (`.env` values, and the values of declared secrets in strata's environment).
struct ProjectSecrets {
    by_tool: HashMap<String, Vec<String>>,
    values: Vec<(String, String)>,
}

impl ProjectSecrets {
    fn read(app: &App, tools: &[String]) -> Result<ProjectSecrets, Error> {
        let dotenv = crate::secrets::dotenv_entries(app.project())?;
        let mut by_tool = HashMap::new();
        let mut declared: Vec<String> = Vec::new();
        for tool in tools {
            if by_tool.contains_key(tool) {
                continue;
            }
            let mut names = ToolChain::load(app.project(), tool)
                .map(|c| c.secrets())
                .unwrap_or_default();
            for n in &names {
                if !declared.contains(n) {
                    declared.push(n.clone());
                }
            }
            for (k, _) in &dotenv {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
            by_tool.insert(tool.clone(), names);
        }
        let mut values = dotenv;
        for name in declared {
            if let Ok(v) = std::env::var(&name) {
                values.push((name, v));
            }
        }
        Ok(ProjectSecrets { by_tool, values })
    }

    /// The secret variable names of `tool`.
    fn names(&self, tool: &str) -> Vec<String> {
        self.by_tool.get(tool).cloned().unwrap_or_default()
    }

    /// Which secret variables the tasks will lack without a Kubernetes Secret.
    fn note(&self, no_secret: bool) -> Option<String> {
        let mut all: Vec<&str> = Vec::new();
        for names in self.by_tool.values() {
            for n in names {
                if !all.contains(&n.as_str()) {
                    all.push(n);
                }
            }
        }
        all.sort_unstable();
        (no_secret && !all.is_empty()).then(|| {
            format!(
                "the tools read secret variables ({}); without --secret NAME the tasks run without them",
                all.join(", ")
            )
        })
    }
}
