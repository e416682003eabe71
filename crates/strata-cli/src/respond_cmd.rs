//! `strata respond`: renders a canned response outside a directive, from standard fields,
//! tool results saved as files and a generator tool (SPEC §7).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Value};
use strata_app::App;
use strata_core::{Error, ErrorKind, Layer, Limits, RenderOptions};
use strata_doc::{Document, Format};
use strata_responses::{
    check_std, Field, Generate, Generator, JinjaLimits, Place, Response, Sources, ToolResult,
};
use strata_tools::CallOptions;

use crate::outcome::{open_project, print_error, STRATA_FAILED};
use crate::scope_args::read_file;
use crate::shared_args::SharedArgs;
use strata_app::secrets::secret_values;

/// Options of `strata respond`.
#[derive(Debug, Args)]
pub struct RespondArgs {
    /// The template file (Jinja)
    pub template: PathBuf,
    /// The standard fields as a JSON object: {customer: {name}, agent: {name}, variables: {…}, missing_params: […]}
    #[arg(long, value_name = "JSON")]
    pub std_json: Option<String>,
    /// A tool result as the tool printed it (JSON, or YAML unless the name ends in .json), in the order the tools ran (repeatable)
    #[arg(long = "tool-result", value_name = "FILE")]
    pub tool_results: Vec<PathBuf>,
    /// The tool of the project that fills `generative.*` fields
    #[arg(long, value_name = "TOOL", add = crate::complete::tools())]
    pub generator: Option<String>,
    /// An environment variable whose value is secret: a field holding it is refused (repeatable)
    #[arg(long, value_name = "NAME")]
    pub secret: Vec<String>,
    /// The global options; `--json` prints the reply and each field with its source as JSON
    /// (errors too)
    #[command(flatten)]
    pub shared: SharedArgs,
}

/// What went wrong, and the fields found before it (for `--json`).
struct Failure {
    error: Error,
    fields: Vec<Field>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure {
            error,
            fields: Vec::new(),
        }
    }
}

/// Runs `strata respond`: the reply on stdout; exit 2 when it cannot be rendered (missing
/// fields, a secret, the generator, the template) or the input is bad.
pub fn run(args: RespondArgs) -> ExitCode {
    let project = match (&args.generator, &args.shared.project) {
        (None, None) => App::open(None, None).ok(),
        _ => match open_project(args.shared.project(), None) {
            Ok(p) => Some(p),
            Err(code) => return code,
        },
    };
    match respond(&args, project.as_ref()) {
        Ok((text, fields)) => {
            let out = if args.shared.json {
                let fields: Vec<Value> = fields.iter().map(Field::to_json).collect();
                let doc = json!({"reply": text, "fields": fields});
                serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
            } else if text.ends_with('\n') {
                text
            } else {
                text + "\n"
            };
            let _ = std::io::stdout().lock().write_all(out.as_bytes());
            ExitCode::SUCCESS
        }
        Err(f) => {
            if args.shared.json {
                let fields: Vec<Value> = f.fields.iter().map(Field::to_json).collect();
                let doc = json!({"ok": false, "error": strata_app::error_json(&f.error), "fields": fields});
                let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
                let _ = std::io::stdout().lock().write_all(text.as_bytes());
            } else {
                print_error(&f.error, None);
            }
            ExitCode::from(STRATA_FAILED)
        }
    }
}

fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|_| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Syntax,
            format!("`{}` is not valid UTF-8", path.display()),
        )
    })
}

fn respond(args: &RespondArgs, project: Option<&App>) -> Result<(String, Vec<Field>), Failure> {
    let limits = project.map_or_else(Limits::default, |p| p.limits.clone());
    let name = args.template.display().to_string();
    let source = utf8(&args.template, read_file(&args.template, &limits)?)?;
    let response = Response::compile(source, Some(&name), JinjaLimits::from_limits(&limits))?;
    let std = match &args.std_json {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                format!("--std-json is not JSON: {e}"),
            )
        })?,
        None => json!({}),
    };
    check_std(&std, Place::Nowhere)?;
    let mut docs = Vec::new();
    for path in &args.tool_results {
        let name = path.display().to_string();
        docs.push(Document::parse(
            &name,
            read_file(path, &limits)?,
            Format::from_name(&name),
            &limits,
        )?);
    }
    let mut results = Vec::new();
    for doc in &docs {
        let label = format!("`{}`", doc.name);
        results.extend(ToolResult::of(label, &doc.value, Place::Doc(doc))?);
    }
    let runner = project.map(|project| {
        project.runner(strata_app::ExecOptions {
            render: RenderOptions::default(),
            base_env: None,
            die_with_parent: false,
        })
    });
    let generator = match (&args.generator, &runner) {
        (Some(tool), Some(runner)) => {
            if !strata_tools::ToolRunner::has_tool(runner, tool) {
                return Err(strata_tools::ToolRunner::unknown_tool(runner, tool).into());
            }
            Some(Generator {
                tool,
                runner,
                call: CallOptions::default(),
                place: Place::Nowhere,
            })
        }
        _ => None,
    };
    let tools: Vec<&str> = args.generator.iter().map(String::as_str).collect();
    let secrets = secret_values(project.map(App::project), &tools, &args.secret);
    let sources = Sources {
        std: &std,
        std_place: Place::Nowhere,
        tools: &results,
        generator: generator.as_ref().map(|g| g as &dyn Generate),
        secrets: &secrets,
    };
    let extraction = response.extract(&sources);
    let found = extraction.found.clone();
    let fields = extraction
        .complete(&response, &sources)
        .map_err(|error| Failure {
            error,
            fields: found,
        })?;
    match response.render(&fields) {
        Ok(text) => Ok((text, fields)),
        Err(error) => Err(Failure { error, fields }),
    }
}
