//! Exporting a plan or a graph as an Argo Workflow: loaded as a run would load it, refused
//! as a run would be refused (the gate over every tool it calls), with the project's secret
//! names given to the tasks and its secret values kept out of the manifest, then checked
//! offline ([`strata_argo::check`]) before anything is handed back.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};
use strata_argo::check::{check_exported, Summary};
use strata_argo::{export_graph, export_plan, tools_of, Options, Secrets, Shape, Source, ARGO};
use strata_check::Target;
use strata_core::{Error, ErrorKind, Layer};
use strata_doc::Document;
use strata_graph::is_graph_document;
use strata_plans::Plan;
use strata_tools::Scale;

use crate::{App, Failure, RunSecrets};

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
        };
        let (manifest, what, mut notes, used) = if is_graph_document(&doc.value) {
            let id = self.id_of_path(request.path)?;
            self.admit(Target::Tool(&id), &id)?;
            let graph = self.load_graph(&id)?;
            let (typed, strings) = &request.inputs;
            options.values = graph.bind_inputs(typed, strings)?;
            let used: Vec<String> = tools_of(&graph).into_iter().map(String::from).collect();
            options.tools = self.tool_scales(&used);
            let known = RunSecrets::read(self, &used)?;
            let names = |tool: &str| known.names(tool);
            let secrets = Secrets { names: &names };
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
            let known = RunSecrets::read(self, &used)?;
            let names = |tool: &str| known.names(tool);
            let secrets = Secrets { names: &names };
            let manifest =
                export_plan(&plan, &source, &options, &secrets).map_err(|e| located(doc, e))?;
            let what = format!(
                "one task per step, each running `strata plan step` in `{}`",
                options.image
            );
            (manifest, what, Vec::new(), known)
        };
        refuse_secrets(doc, &manifest, &used).map_err(|e| located(doc, e))?;
        notes.extend(secrets_note(&used, options.secret.is_none()));
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

/// Refuses a manifest that would hold a secret value: in the document exported (its text, or
/// its values as parsed, so that an escape hides nothing) or anywhere in the manifest (the
/// user values, a graph's inputs). The message names the variable, never the value.
fn refuse_secrets(doc: &Document, manifest: &Value, secrets: &RunSecrets) -> Result<(), Error> {
    let refuse = |name: &str, place: String| {
        Err(Error::new(
            ARGO,
            ErrorKind::Forbidden,
            format!("the manifest would hold the value of secret `{name}` ({place})"),
        )
        .with_hint("a manifest never holds a secret: keep it in the Kubernetes Secret named with --secret, and let the tool read its variable"))
    };
    let text = Value::String(doc.text.to_string());
    if let Some((name, _)) = secrets
        .found_in(&text)
        .or_else(|| secrets.found_in(&doc.value))
    {
        return refuse(name, format!("`{}` holds it", doc.name));
    }
    match secrets.found_in(manifest) {
        Some((name, path)) => refuse(name, format!("at {path}")),
        None => Ok(()),
    }
}

/// Which secret variables the tasks will lack without a Kubernetes Secret.
fn secrets_note(secrets: &RunSecrets, no_secret: bool) -> Option<String> {
    let all = secrets.tool_names();
    (no_secret && !all.is_empty()).then(|| {
        format!(
            "the tools read secret variables ({}); without --secret NAME the tasks run without them",
            all.join(", ")
        )
    })
}
