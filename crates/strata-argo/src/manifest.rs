//! The pieces every exported Workflow is made of: the options a user gives, the workflow
//! around the templates, a container running strata, the inputs a task takes from another
//! task's output (parameter, and artifact above the limit), and secrets from a Kubernetes
//! Secret.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use strata_core::{Error, ErrorKind};
use strata_tools::Scale;

use crate::names::{
    check_image, check_namespace, check_secret_name, check_workflow_name, generate_name,
};
use crate::transport::PARAMETER_LIMIT;
use crate::ARGO;

/// Where a task's files live in its pod.
pub const WORK_DIR: &str = "/tmp/strata";
/// The document (plan or graph) a task runs, in its pod.
pub const DOCUMENT_FILE: &str = "/tmp/strata/document";
/// Where a task finds its inputs (one file per input, see [`crate::transport`]).
pub const IN_DIR: &str = "/tmp/strata/in";
/// Where a task writes its outputs.
pub const OUT_DIR: &str = "/tmp/strata/out";
/// The workflow parameter holding the document, [`crate::transport::encode`]d.
pub const DOCUMENT_PARAMETER: &str = "strata-document";
/// The default project directory inside the image (the Dockerfile's `WORKDIR`).
pub const PROJECT_DIR: &str = "/project";

/// What the user chooses about the workflow.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The container image holding strata and the project.
    pub image: String,
    /// `metadata.name`; `None`: `generateName` from the file name.
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The Kubernetes Secret the tools' secret variables come from.
    pub secret: Option<String>,
    /// The project's directory inside the image.
    pub project_dir: String,
    /// Values longer than this (bytes of JSON) travel as artifacts.
    pub parameter_limit: usize,
    /// Defaults of the user values (`{{PLACEHOLDER_name}}`), by name.
    pub values: Map<String, Value>,
    /// The `resources` and `retries` of the tools the workflow calls, by id.
    pub tools: BTreeMap<String, Scale>,
    /// `spec.parallelism`: the most pods running at once; `None`: Argo's default (no bound).
    pub parallelism: Option<usize>,
}

impl Options {
    /// Options with the defaults for `image`.
    pub fn new(image: impl Into<String>) -> Options {
        Options {
            image: image.into(),
            name: None,
            namespace: None,
            secret: None,
            project_dir: PROJECT_DIR.to_string(),
            parameter_limit: PARAMETER_LIMIT,
            values: Map::new(),
            tools: BTreeMap::new(),
            parallelism: None,
        }
    }

    /// The `resources` and `retries` of tool `id` (nothing when it declares none).
    pub fn scale(&self, id: &str) -> Scale {
        self.tools.get(id).cloned().unwrap_or_default()
    }

    /// Checks the names and the image.
    pub fn check(&self) -> Result<(), Error> {
        check_image(&self.image)?;
        if let Some(name) = &self.name {
            check_workflow_name(name)?;
        }
        if let Some(ns) = &self.namespace {
            check_namespace(ns)?;
        }
        if let Some(secret) = &self.secret {
            check_secret_name(secret)?;
        }
        if !self.project_dir.starts_with('/') {
            return Err(Error::new(
                ARGO,
                ErrorKind::Invalid,
                format!(
                    "the project directory `{}` must be an absolute path inside the image",
                    self.project_dir
                ),
            ));
        }
        if self.project_dir.contains("{{") {
            return Err(no_tags(format!(
                "the project directory `{}` holds `{{{{`, which Argo would replace",
                self.project_dir
            ))
            .with_hint(
                "Argo replaces every `{{…}}` in a manifest and has no escape: choose a directory without `{{`",
            ));
        }
        if self.parallelism == Some(0) {
            return Err(Error::new(
                ARGO,
                ErrorKind::Invalid,
                "the parallelism must be at least 1",
            ));
        }
        if self.parameter_limit == 0 {
            return Err(Error::new(
                ARGO,
                ErrorKind::Invalid,
                "the parameter limit must be at least one byte",
            ));
        }
        Ok(())
    }
}

/// An error about text Argo would replace (`{{…}}`) where no task can decode it.
pub fn no_tags(message: String) -> Error {
    Error::new(ARGO, ErrorKind::Invalid, message)
}

/// The document being exported: its name in messages and its text.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The name the project shows it by (`plans/diamond.yaml`).
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// What the export knows of the project's secrets: the variables its tasks read from the
/// Kubernetes Secret. (That no secret value reaches a manifest is the application layer's
/// rule, checked on the manifest the export returns.)
pub struct Secrets<'a> {
    /// The variable names a tool's chain declares secret (and the project's `.env` names).
    pub names: &'a dyn Fn(&str) -> Vec<String>,
}

/// A Workflow around `templates`, starting at `entry`, with `parameters` as workflow
/// parameters — and the document first, when `carried` (a plan, which the image does not
/// hold; a graph is a tool of the project, in the image).
pub fn workflow(
    source: &Source<'_>,
    options: &Options,
    entry: &str,
    carried: bool,
    parameters: Vec<Value>,
    templates: Vec<Value>,
) -> Value {
    let mut metadata = Map::new();
    match &options.name {
        Some(name) => metadata.insert("name".into(), json!(name)),
        None => metadata.insert("generateName".into(), json!(generate_name(source.name))),
    };
    if let Some(ns) = &options.namespace {
        metadata.insert("namespace".into(), json!(ns));
    }
    let mut params = Vec::new();
    if carried {
        params.push(json!({
            "name": DOCUMENT_PARAMETER,
            "value": crate::transport::encode(source.text),
        }));
    }
    params.extend(parameters);
    let mut spec = json!({
        "entrypoint": entry,
        "arguments": {"parameters": params},
    });
    if let Some(n) = options.parallelism {
        spec["parallelism"] = json!(n);
    }
    spec["templates"] = Value::Array(templates);
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": metadata,
        "spec": spec,
    })
}

/// The input artifact that puts the document at [`DOCUMENT_FILE`].
pub fn document_input() -> Value {
    json!({
        "name": "document",
        "path": DOCUMENT_FILE,
        "raw": {"data": format!("{{{{workflow.parameters.{DOCUMENT_PARAMETER}}}}}")},
    })
}

/// Where a task's `strata` command reads its inputs and writes its outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskFiles<'a> {
    /// Nowhere: the command runs on its own (a whole graph's `strata run`).
    None,
    /// The inputs in [`IN_DIR`], given with option `inputs` (`--walks`, `--records`); the
    /// outputs in [`OUT_DIR`] (`--output`), those over the parameter limit as artifacts
    /// (`--limit`).
    Dirs {
        /// The option naming the input directory.
        inputs: &'a str,
    },
}

/// The arguments of every task's `strata` container, plan step and graph node alike:
/// `command` (the subcommand and what it runs, `["walk", "graphs/g", "--node", "a"]`), then
/// `--project <dir>`, then (per `files`) `<inputs> IN_DIR --output OUT_DIR --limit <bytes>`,
/// then `extra`.
pub fn strata_args(
    options: &Options,
    command: &[&str],
    files: TaskFiles<'_>,
    extra: impl IntoIterator<Item = String>,
) -> Vec<String> {
    let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    args.extend(["--project".to_string(), options.project_dir.clone()]);
    if let TaskFiles::Dirs { inputs } = files {
        args.extend([
            inputs.to_string(),
            IN_DIR.to_string(),
            "--output".to_string(),
            OUT_DIR.to_string(),
            "--limit".to_string(),
            options.parameter_limit.to_string(),
            // The tasks of one workflow run share their secret markers' key, made from the
            // run's uid, which no one knows before the run exists.
            "--run-uid".to_string(),
            RUN_UID.to_string(),
        ]);
    }
    args.extend(extra);
    args
}

/// What every task of a workflow run is given as the run's uid.
pub const RUN_UID: &str = "{{workflow.uid}}";

/// A container running `strata` with `args` in the project directory, with `env`.
pub fn container(options: &Options, args: Vec<String>, env: Vec<Value>) -> Value {
    let mut c = json!({
        "image": options.image,
        "command": ["strata"],
        "args": args,
        "workingDir": options.project_dir,
    });
    if !env.is_empty() {
        c["env"] = Value::Array(env);
    }
    c
}

/// Environment variables `names`, each read from the user's Kubernetes Secret (a key it
/// lacks leaves the variable unset, as on a machine without it).
pub fn secret_env(options: &Options, names: &[String]) -> Vec<Value> {
    let Some(secret) = &options.secret else {
        return Vec::new();
    };
    names
        .iter()
        .map(|n| {
            json!({"name": n, "valueFrom": {"secretKeyRef": {"name": secret, "key": n, "optional": true}}})
        })
        .collect()
}

/// One input a task takes from output `output` of task `from`, saved as `<file>.json` in
/// [`IN_DIR`]: the template's input parameter and artifacts, and the task's arguments.
pub struct Input {
    /// The file name (without `.json`) in [`IN_DIR`].
    pub file: String,
    /// The producing task.
    pub from: String,
    /// The producer's output.
    pub output: String,
    /// The input parameter's default, for a producer that may not have run.
    pub default: Option<String>,
    /// True when a value above the limit may come as an artifact (not for the aggregated
    /// outputs of a fan-out, which Argo only gathers as parameters).
    pub artifact: bool,
}

impl Input {
    fn parameter(&self) -> String {
        format!("in-{}", self.file)
    }

    /// The template's `inputs.parameters` entry.
    pub fn template_parameter(&self) -> Value {
        let mut p = json!({"name": self.parameter()});
        if let Some(d) = &self.default {
            p["default"] = json!(d);
        }
        p
    }

    /// The template's `inputs.artifacts` entries: the parameter as a file, and the
    /// optional artifact of a value above the limit.
    pub fn template_artifacts(&self) -> Vec<Value> {
        let mut out = vec![json!({
            "name": self.parameter(),
            "path": format!("{IN_DIR}/{}.json", self.file),
            "raw": {"data": format!("{{{{inputs.parameters.{}}}}}", self.parameter())},
        })];
        if self.artifact {
            out.push(json!({
                "name": format!("big-{}", self.file),
                "path": format!("{IN_DIR}/{}.artifact.json", self.file),
                "optional": true,
            }));
        }
        out
    }

    /// The task's `arguments.parameters` entry.
    pub fn task_parameter(&self) -> Value {
        json!({
            "name": self.parameter(),
            "value": format!("{{{{tasks.{}.outputs.parameters.{}}}}}", self.from, self.output),
        })
    }

    /// The task's `arguments.artifacts` entry, when the value may come as an artifact.
    pub fn task_artifact(&self) -> Option<Value> {
        self.artifact.then(|| {
            json!({
                "name": format!("big-{}", self.file),
                "from": format!("{{{{tasks.{}.outputs.artifacts.{}}}}}", self.from, self.output),
                "optional": true,
            })
        })
    }
}

/// A template's `outputs` for values `names` written to [`OUT_DIR`] (see
/// [`crate::transport`]); `defaults` give a parameter's value when its task did not run.
pub fn outputs(names: &[(&str, Option<&str>)]) -> Value {
    let parameters: Vec<Value> = names
        .iter()
        .map(|(n, default)| {
            let mut from = json!({"path": format!("{OUT_DIR}/{n}.json")});
            if let Some(d) = default {
                from["default"] = json!(d);
            }
            json!({"name": n, "valueFrom": from})
        })
        .collect();
    let artifacts: Vec<Value> = names
        .iter()
        .map(|(n, _)| {
            json!({
                "name": n,
                "path": format!("{OUT_DIR}/{n}.artifact.json"),
                "optional": true,
                "archive": {"none": {}},
            })
        })
        .collect();
    json!({"parameters": parameters, "artifacts": artifacts})
}

/// An output parameter read from the plain file `name` in [`OUT_DIR`] (a task name, a list
/// of indexes: text Argo itself reads), `default` when the task did not run.
pub fn plain_output(name: &str, default: &str) -> Value {
    json!({"name": name, "valueFrom": {"path": format!("{OUT_DIR}/{name}"), "default": default}})
}

/// A template's `inputs` from its parameters and artifacts (empty lists left out).
pub fn inputs(parameters: Vec<Value>, artifacts: Vec<Value>) -> Value {
    let mut out = Map::new();
    if !parameters.is_empty() {
        out.insert("parameters".into(), Value::Array(parameters));
    }
    if !artifacts.is_empty() {
        out.insert("artifacts".into(), Value::Array(artifacts));
    }
    Value::Object(out)
}

/// A task's `arguments` (empty lists left out); `None` when it has none.
pub fn arguments(parameters: Vec<Value>, artifacts: Vec<Value>) -> Option<Value> {
    let value = inputs(parameters, artifacts);
    (value.as_object().is_some_and(|m| !m.is_empty())).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_runs_strata_with_the_same_arguments_around_its_command() {
        let mut options = Options::new("strata:1");
        options.project_dir = "/work".into();
        options.parameter_limit = 100;
        assert_eq!(
            strata_args(
                &options,
                &["walk", "graphs/g", "--node", "a"],
                TaskFiles::Dirs { inputs: "--walks" },
                ["--part".to_string(), "items".to_string()],
            ),
            [
                "walk",
                "graphs/g",
                "--node",
                "a",
                "--project",
                "/work",
                "--walks",
                IN_DIR,
                "--output",
                OUT_DIR,
                "--limit",
                "100",
                "--run-uid",
                "{{workflow.uid}}",
                "--part",
                "items"
            ]
        );
        assert_eq!(
            strata_args(
                &options,
                &["run", "graphs/g"],
                TaskFiles::None,
                ["--run-id".to_string(), "r".to_string()],
            ),
            ["run", "graphs/g", "--project", "/work", "--run-id", "r"]
        );
    }
}
