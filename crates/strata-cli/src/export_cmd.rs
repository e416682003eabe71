//! `strata export argo`: a plan or a graph as an Argo Workflows manifest whose tasks run
//! strata in a container, checked offline before it is written; `--check` on a manifest
//! checks it (docs/scale-out.md).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use strata_app::{App, ArgoExport, Exported};
use strata_argo::check::{check, Summary};
use strata_argo::transport::PARAMETER_LIMIT;
use strata_argo::Options;
use strata_core::{Error, ErrorKind, Layer};
use strata_doc::Document;
use strata_graph::is_graph_document;

use crate::outcome::print_errors;
use crate::plan_input::{read_document, shown_name, user_values};
use crate::scope_args::split_pair;
use crate::shared_args::SharedArgs;
use strata_app::Failure;

/// Options of `strata export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    #[command(subcommand)]
    pub(crate) target: Target,
}

/// The engines strata exports to.
#[derive(Debug, Subcommand)]
pub(crate) enum Target {
    /// An Argo Workflows manifest: one task per plan step (or graph node), each running strata
    Argo(ArgoArgs),
}

/// Options of `strata export argo`.
#[derive(Debug, Args)]
pub(crate) struct ArgoArgs {
    /// The plan or graph to export — a file, a graph's id (`graphs/words`) or a plan's name
    /// (`plans/one`); with --check, a Workflow manifest to check
    #[arg(add = crate::complete::exportables())]
    pub(crate) input: PathBuf,
    /// The container image holding strata and the project (docs/scale-out.md)
    #[arg(long, value_name = "IMAGE")]
    pub(crate) image: Option<String>,
    /// The workflow's name (default: `generateName` from the file name)
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// The workflow's namespace
    #[arg(long, value_name = "NS")]
    pub(crate) namespace: Option<String>,
    /// Write the manifest to this file instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Print the check's verdict instead of the manifest (a Workflow manifest given as the
    /// input is only checked)
    #[arg(long)]
    pub(crate) check: bool,
    /// The Kubernetes Secret the tools' secret variables come from
    #[arg(long, value_name = "NAME")]
    pub(crate) secret: Option<String>,
    /// A default for a plan's user value `{{PLACEHOLDER_NAME}}`, as text (repeatable; for a
    /// graph the same as --input)
    #[arg(long = "value", value_name = "NAME=TEXT")]
    pub(crate) values: Vec<String>,
    /// A default for a plan's user value, as JSON (repeatable; for a graph an input, as JSON)
    #[arg(long = "value-json", value_name = "NAME=JSON")]
    pub(crate) value_jsons: Vec<String>,
    /// A default for a graph's input, typed by its declaration as `strata run --input` types
    /// it (repeatable)
    #[arg(long = "input", value_name = "K=V")]
    pub(crate) inputs: Vec<String>,
    /// Defaults for a graph's inputs as a JSON object (typed), as `strata run --params-json`
    #[arg(long, value_name = "JSON")]
    pub(crate) params_json: Option<String>,
    /// The project's directory inside the image
    #[arg(long, value_name = "DIR", default_value = strata_argo::manifest::PROJECT_DIR)]
    pub(crate) project_dir: String,
    /// At most N pods of the workflow at once (`spec.parallelism`), as `plan run --jobs`
    /// bounds the steps running at once; default: no bound
    #[arg(long, value_name = "N")]
    pub(crate) jobs: Option<usize>,
    /// Values longer than this many bytes of JSON travel as artifacts, not parameters
    #[arg(long, value_name = "BYTES", default_value_t = PARAMETER_LIMIT)]
    pub(crate) parameter_limit: usize,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// The schema's release, as messages name it.
const SCHEMA_RELEASE: &str = "Argo's schema v4.1.2";

/// Runs `strata export`.
pub(crate) fn run(args: ExportArgs) -> ExitCode {
    match args.target {
        Target::Argo(a) => argo(a),
    }
}

fn argo(mut args: ArgoArgs) -> ExitCode {
    let json = args.shared.json;
    let project = match App::open(None, Some(&args.input)) {
        Ok(app) => crate::outcome::opened(app),
        // Checking a manifest needs no project.
        Err(e) => {
            return match args.check.then(|| manifest_alone(&args)).flatten() {
                Some(code) => code,
                None => crate::outcome::report(Failure::Error(e), None, json),
            }
        }
    };
    args.input = crate::names::export_input(&project, &args.input);
    match export(&args, &project) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => crate::outcome::report(failure, Some(&project), json),
    }
}

/// `--check` of a Workflow manifest outside any project: its verdict, or `None` when the
/// input cannot be read or is not a Workflow (the missing project is then the error).
fn manifest_alone(args: &ArgoArgs) -> Option<ExitCode> {
    let input = args.input.to_string_lossy();
    let doc = read_document(&input, &input, &strata_core::Limits::default()).ok()?;
    if doc.value.get("kind").and_then(Value::as_str) != Some("Workflow") {
        return None;
    }
    Some(match check_manifest(args, &doc) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => crate::outcome::report(failure, None, args.shared.json),
    })
}

/// `a Workflow with 5 templates and 4 tasks`.
fn describe(s: &Summary) -> String {
    let plural = |n: usize, what: &str| match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    };
    format!(
        "a Workflow with {} and {}",
        plural(s.templates, "template"),
        plural(s.tasks, "task")
    )
}

fn export(args: &ArgoArgs, project: &App) -> Result<u8, Failure> {
    let input = args.input.to_string_lossy();
    let shown = shown_name(project, &input);
    let doc = read_document(&input, &shown, &project.limits)?;
    if doc.value.get("kind").and_then(Value::as_str) == Some("Workflow") {
        return check_manifest(args, &doc);
    }
    let Some(image) = args.image.clone() else {
        return Err(Error::new(Layer::REQUEST, ErrorKind::Request, "no --image given")
            .with_hint("name the container image holding strata and the project: --image registry/strata:tag (docs/scale-out.md)")
            .into());
    };
    let is_graph = is_graph_document(&doc.value);
    let graph_inputs = !args.inputs.is_empty() || args.params_json.is_some();
    if !is_graph && graph_inputs {
        let flag = if args.inputs.is_empty() {
            "--params-json"
        } else {
            "--input"
        };
        return Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            format!("{flag} does not apply to plans"),
        )
        .with_hint("--input and --params-json set a graph's inputs; a plan's user values are --value NAME=TEXT and --value-json NAME=JSON")
        .into());
    }
    let mut values = Map::new();
    let mut inputs = (Map::new(), Vec::new());
    if is_graph {
        // The graph's inputs, typed by its parameters as `strata run --input` types them.
        // `--value`/`--value-json` are the plans' spelling, kept for graphs too.
        let mut typed = crate::graphs::typed_inputs(args.params_json.as_deref())?;
        user_values(&[], &args.value_jsons, &mut typed)?;
        let strings = args
            .values
            .iter()
            .map(|p| split_pair(p, "--value"))
            .chain(args.inputs.iter().map(|p| split_pair(p, "--input")))
            .map(|pair| pair.map(|(k, v)| (k.to_string(), v.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        inputs = (typed, strings);
    } else {
        user_values(&args.values, &args.value_jsons, &mut values)?;
    }
    let options = Options {
        image,
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        secret: args.secret.clone(),
        project_dir: args.project_dir.clone(),
        parameter_limit: args.parameter_limit,
        values,
        tools: Default::default(),
        parallelism: args.jobs,
    };
    let exported = project.export_argo(ArgoExport {
        doc: &doc,
        path: &args.input,
        options,
        inputs,
    })?;
    for note in &exported.notes {
        eprintln!("note: {note}");
    }
    write(args, &doc.name, &exported)
}

/// Writes the exported manifest (or the verdict, with `--check`).
fn write(args: &ArgoArgs, from: &str, exported: &Exported) -> Result<u8, Failure> {
    let (manifest, summary, what) = (&exported.manifest, &exported.summary, &exported.what);
    let yaml = strata_doc::to_yaml(manifest);
    // The header is a comment: a file name's line breaks stay inside it.
    let header: String = from
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let text = format!(
        "# Exported by `strata export argo` from {header}: {what}.\n\
         # Checked offline against {SCHEMA_RELEASE} and strata's checks; submit with `argo submit`.\n\
         # See docs/scale-out.md.\n{yaml}"
    );
    let verdict = format!(
        "{from}: exported and checked: {} ({SCHEMA_RELEASE} and strata's checks)",
        describe(summary)
    );
    let json = args.shared.json;
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::Io,
                    format!("cannot write `{}`: {e}", path.display()),
                )
                .with_source(e)
            })?;
            if !args.check && !json {
                eprintln!("wrote {}: {}", path.display(), describe(summary));
            }
        }
        None if json => {}
        None if !args.check => {
            crate::output::print(&text);
        }
        None => {}
    }
    if json {
        // The manifest itself when it is not written to a file nor only checked.
        let mut doc = summary_json(from, summary);
        if let Some(path) = &args.output {
            doc["output"] = Value::String(path.display().to_string());
        } else if !args.check {
            doc["manifest"] = manifest.clone();
        }
        crate::output::print_json(&doc);
    } else if args.check {
        crate::output::print(format!("{verdict}\n"));
    }
    Ok(0)
}

/// `{"ok": true, "file", "templates", "tasks"}`: what `--json` says of a manifest that
/// passes the check (docs/schemas/export.schema.json).
fn summary_json(file: &str, s: &Summary) -> Value {
    json!({"ok": true, "file": file, "templates": s.templates, "tasks": s.tasks})
}

/// `--check` of a Workflow manifest: the verdict, or every problem with its line.
fn check_manifest(args: &ArgoArgs, doc: &Document) -> Result<u8, Failure> {
    if !args.check {
        return Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            format!("`{}` is already an Argo Workflow", doc.name),
        )
        .with_hint("check it with `strata export argo --check FILE`; export plans and graphs")
        .into());
    }
    match check(&doc.value) {
        Ok(summary) if args.shared.json => {
            crate::output::print_json(&summary_json(&doc.name, &summary));
            Ok(0)
        }
        Err(errors) if args.shared.json => {
            let errors: Vec<Error> = errors.into_iter().map(|e| doc.locate_error(e)).collect();
            let failure = Failure::Document {
                errors,
                doc: Box::new(doc.clone()),
            };
            crate::output::print_json(&failure.to_json());
            Ok(1)
        }
        Ok(summary) => {
            crate::output::print(format!(
                "{}: valid: {} ({SCHEMA_RELEASE} and strata's checks)\n",
                doc.name,
                describe(&summary)
            ));
            Ok(0)
        }
        Err(errors) => {
            let located: Vec<Error> = errors.into_iter().map(|e| doc.locate_error(e)).collect();
            print_errors(&located, Some(doc));
            let n = located.len();
            eprintln!("{}: {n} problem{}", doc.name, if n == 1 { "" } else { "s" });
            Ok(1)
        }
    }
}
