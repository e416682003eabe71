//! `strata respond`: renders a canned response outside a directive, from standard fields,
//! tool results saved as files and a generator tool (SPEC §7), through the application
//! layer's [`strata_app::respond`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Value};
use strata_app::{respond, App, Reply, RespondRequest};
use strata_responses::Field;

use crate::outcome::{open_project, print_error, STRATA_FAILED};
use crate::shared_args::SharedArgs;

/// Options of `strata respond`.
#[derive(Debug, Args)]
pub(crate) struct RespondArgs {
    /// The template file (Jinja)
    pub(crate) template: PathBuf,
    /// The standard fields as a JSON object: {customer: {name}, agent: {name}, variables: {…}, missing_params: […]}
    #[arg(long, value_name = "JSON")]
    pub(crate) std_json: Option<String>,
    /// A tool result as the tool printed it (JSON, or YAML unless the name ends in .json), in the order the tools ran (repeatable)
    #[arg(long = "tool-result", value_name = "FILE")]
    pub(crate) tool_results: Vec<PathBuf>,
    /// The tool of the project that fills `generative.*` fields
    #[arg(long, value_name = "TOOL", add = crate::complete::tools())]
    pub(crate) generator: Option<String>,
    /// An environment variable whose value is secret: a field holding it is refused (repeatable)
    #[arg(long, value_name = "NAME")]
    pub(crate) secret: Vec<String>,
    /// The global options; `--json` prints the reply and each field with its source as JSON
    /// (errors too)
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata respond`: the reply on stdout; exit 2 when it cannot be rendered (missing
/// fields, a secret, the generator, the template) or the input is bad.
pub(crate) fn run(args: RespondArgs) -> ExitCode {
    let project = match &args.generator {
        None => App::open(None, None).ok(),
        Some(_) => match open_project(None) {
            Ok(p) => Some(p),
            Err(code) => return code,
        },
    };
    let request = RespondRequest {
        template: args.template.clone(),
        std_json: args.std_json.clone(),
        tool_results: args.tool_results.clone(),
        generator: args.generator.clone(),
        secrets: args.secret.clone(),
    };
    match respond(project.as_ref(), &request) {
        Ok(Reply { text, fields }) => {
            let out = if args.shared.json {
                let fields: Vec<Value> = fields.iter().map(Field::to_json).collect();
                let doc = json!({"reply": text, "fields": fields});
                serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
            } else if text.ends_with('\n') {
                text
            } else {
                text + "\n"
            };
            crate::output::print(&out);
            ExitCode::SUCCESS
        }
        Err(f) => {
            if args.shared.json {
                let fields: Vec<Value> = f.fields.iter().map(Field::to_json).collect();
                let doc = json!({"ok": false, "error": strata_app::error_json(&f.error), "fields": fields});
                let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
                crate::output::print(&text);
            } else {
                print_error(&f.error, None);
            }
            ExitCode::from(STRATA_FAILED)
        }
    }
}
