//! `strata plan resolve`: partial resolution for orchestrators that run the tools themselves
//! (SPEC §5.7) — one plan on the command line, or JSON Lines requests with `--batch`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer, Limits};
use strata_plans::request::error_reply;
use strata_plans::{Plan, Request};

use crate::outcome::print_errors;
use crate::outcome::STRATA_FAILED;
use crate::plan_input::{read_document, user_values, STDIN};

/// Options of `strata plan resolve`.
#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// The plan: a JSON or YAML file, or `-` for standard input (not with --batch)
    #[arg(add = crate::complete::plans())]
    pub(crate) plan: Option<String>,
    /// The results known so far, as a JSON object of step id to result
    #[arg(long, value_name = "JSON")]
    pub(crate) results: Option<String>,
    /// A step that failed (repeatable)
    #[arg(long = "failed", value_name = "STEP")]
    pub(crate) failed: Vec<String>,
    /// A user value for `{{PLACEHOLDER_NAME}}`, as text (repeatable)
    #[arg(long = "value", value_name = "NAME=TEXT")]
    pub(crate) values: Vec<String>,
    /// A user value as JSON (repeatable)
    #[arg(long = "value-json", value_name = "NAME=JSON")]
    pub(crate) value_jsons: Vec<String>,
    /// Read JSON Lines requests on standard input, answer one JSON line each
    #[arg(long)]
    pub(crate) batch: bool,
    /// The global options (the reply is always JSON; `-C` names the project whose limits
    /// apply)
    #[command(flatten)]
    pub(crate) shared: crate::shared_args::SharedArgs,
}

/// Runs `strata plan resolve`.
pub(crate) fn run(args: ResolveArgs) -> ExitCode {
    let limits = match strata_app::ambient_settings() {
        Ok(settings) => settings.limits,
        Err(e) => {
            print_errors(&[e], None);
            return ExitCode::from(STRATA_FAILED);
        }
    };
    if args.batch {
        return batch(&args, &limits);
    }
    let Some(path) = args.plan.as_deref() else {
        let e = Error::new(Layer::REQUEST, ErrorKind::Request, "no plan given")
            .with_hint("name a plan file, `-` for standard input, or use --batch");
        print_errors(&[e], None);
        return ExitCode::from(STRATA_FAILED);
    };
    let shown = if path == "-" { STDIN } else { path };
    let doc = match read_document(path, shown, &limits) {
        Ok(doc) => doc,
        Err(e) => return fail(&e, None),
    };
    let plan = match Plan::load_within(&doc, &limits) {
        Ok(plan) => plan,
        Err(errors) => {
            let first = errors.first().cloned();
            print_errors(&errors, Some(&doc));
            return match first {
                Some(e) => reply_error(&e),
                None => ExitCode::from(STRATA_FAILED),
            };
        }
    };
    let request = parse_options(&args).and_then(|(results, failed, values)| {
        Request::with_plan(None, plan, results, Some(failed), Some(values))
    });
    match request {
        Ok(request) => {
            let text = serde_json::to_string_pretty(&request.reply()).unwrap_or_default() + "\n";
            crate::output::print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e, None),
    }
}

/// `--results`, `--failed` and the user values, as the JSON request has them.
fn parse_options(args: &ResolveArgs) -> Result<(Option<Value>, Value, Value), Error> {
    let results = match &args.results {
        None => None,
        Some(text) => Some(strata_doc::json_value(text).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                format!("--results is not JSON: {e}"),
            )
            .with_source(e)
        })?),
    };
    let failed = Value::Array(args.failed.iter().cloned().map(Value::String).collect());
    let mut values = Map::new();
    user_values(&args.values, &args.value_jsons, &mut values)?;
    Ok((results, failed, Value::Object(values)))
}

/// Prints an error for people and its reply on standard output.
fn fail(e: &Error, doc: Option<&strata_doc::Document>) -> ExitCode {
    print_errors(std::slice::from_ref(e), doc);
    reply_error(e)
}

fn reply_error(e: &Error) -> ExitCode {
    let text = serde_json::to_string_pretty(&error_reply(None, e)).unwrap_or_default() + "\n";
    crate::output::print(&text);
    ExitCode::from(STRATA_FAILED)
}

/// `--batch`: one reply line per non-blank request line, written out each time the requests
/// read so far are all answered (a caller waiting for its reply gets it at once); a line that
/// is not a request is answered with an error and the next lines are still served.
fn batch(args: &ResolveArgs, limits: &Limits) -> ExitCode {
    if args.plan.is_some()
        || args.results.is_some()
        || !args.failed.is_empty()
        || !args.values.is_empty()
        || !args.value_jsons.is_empty()
    {
        let e = Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            "--batch takes its requests on standard input only",
        )
        .with_hint("put the plan, results, failed steps and values in each request line");
        print_errors(&[e], None);
        return ExitCode::from(STRATA_FAILED);
    }
    let (stdin, stdout) = (std::io::stdin().lock(), crate::output::stdout());
    if let Err(e) = strata_plans::Resolver::serve(limits, stdin, stdout) {
        // Standard output that failed is said when the command ends (`output::finish`).
        if !crate::output::failed() {
            print_errors(
                &[Error::new(
                    Layer::REQUEST,
                    ErrorKind::Io,
                    format!("batch i/o failed: {e}"),
                )
                .with_source(e)],
                None,
            );
            return ExitCode::from(STRATA_FAILED);
        }
    }
    ExitCode::SUCCESS
}
