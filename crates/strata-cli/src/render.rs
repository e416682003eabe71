//! `strata render`: a YAML or JSON document through the layers, or the batch protocol.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::Value;
use strata_core::{string_leaves, Error, FieldPath, Limits, RenderOptions, Scope};
use strata_doc::{Document, Format};
use strata_pipeline::{batch, explain, Chain, Template};

use crate::report::{format_error, format_warning};
use crate::scope_args::{build_context, build_env, build_inputs, build_params, read_file};

/// Output syntax of `strata render`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OutFormat {
    /// Pretty-printed JSON.
    Json,
    /// YAML.
    Yaml,
}

/// Options of `strata render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// YAML or JSON document (`.json` is read as JSON, anything else as YAML); `-` or nothing
    /// reads standard input
    pub file: Option<PathBuf>,
    /// Set an environment variable (repeatable)
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Read environment variables from a .env file; its values are secret (repeatable)
    #[arg(long, value_name = "FILE")]
    pub env_file: Vec<PathBuf>,
    /// Mark an environment variable as secret: shown as *** in traces and errors (repeatable)
    #[arg(long, value_name = "NAME")]
    pub secret: Vec<String>,
    /// Start from an empty environment instead of the process environment
    #[arg(long)]
    pub clean_env: bool,
    /// Set a caller parameter to a string (repeatable)
    #[arg(long = "param", short = 'p', value_name = "K=V")]
    pub params: Vec<String>,
    /// Caller parameters as a JSON object (typed); --param entries are added after it
    #[arg(long, value_name = "JSON")]
    pub params_json: Option<String>,
    /// Context for layer C: a JSON object, or @file (JSON or YAML)
    #[arg(long, value_name = "JSON|@FILE")]
    pub context: Option<String>,
    /// Set a directive input to a string (repeatable)
    #[arg(long = "input", value_name = "K=V")]
    pub inputs: Vec<String>,
    /// A layer to run, in order (repeatable; default: inputs, context, env, params)
    #[arg(long = "layer", value_name = "LAYER", value_parser = ["inputs", "context", "env", "params"])]
    pub layers: Vec<String>,
    /// Treat missing variables, paths and inputs as errors
    #[arg(long)]
    pub strict: bool,
    /// Output syntax
    #[arg(long, value_enum, default_value = "json")]
    pub format: OutFormat,
    /// Print each templated field's value after every stage (secrets as ***)
    #[arg(long)]
    pub explain: bool,
    /// Serve JSON Lines requests on standard input (see docs/batch.md)
    #[arg(long, conflicts_with_all = ["file", "explain"])]
    pub batch: bool,
}

/// Runs `strata render`.
pub fn run(mut args: RenderArgs) -> ExitCode {
    let settings = match strata_app::ambient_settings() {
        Ok(s) => s,
        Err(e) => {
            crate::outcome::print_error(&e, None);
            return ExitCode::FAILURE;
        }
    };
    args.strict = settings.strict_with(args.strict);
    // One redaction rule: the project's declared secrets count as `--secret` does.
    args.secret = strata_app::secrets::declared(&settings, &args.secret);
    let limits = settings.limits;
    if args.batch {
        return match batch::serve(io::stdin().lock(), io::stdout().lock(), &limits) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: batch i/o failed: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut doc = match load(args.file.as_ref(), &limits) {
        Ok(doc) => doc,
        Err(e) => {
            anstream::eprint!("{}", format_error(&e, None));
            return ExitCode::FAILURE;
        }
    };
    match render(&args, &mut doc, &limits) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            anstream::eprint!("{}", format_error(&doc.locate_error(e), Some(&doc)));
            ExitCode::FAILURE
        }
    }
}

fn load(file: Option<&PathBuf>, limits: &Limits) -> Result<Document, Error> {
    match file.filter(|f| f.as_os_str() != "-") {
        Some(path) => {
            let name = path.display().to_string();
            let bytes = read_file(path, limits)?;
            Document::parse(&name, bytes, Format::from_name(&name), limits)
        }
        None => {
            let bytes = strata_doc::read_bounded(io::stdin().lock(), "<stdin>", limits)?;
            let format = if serde_json::from_slice::<Value>(&bytes).is_ok() {
                Format::Json
            } else {
                Format::Yaml
            };
            Document::parse("<stdin>", bytes, format, limits)
        }
    }
}

fn render(args: &RenderArgs, doc: &mut Document, limits: &Limits) -> Result<(), Error> {
    let chain = if args.layers.is_empty() {
        Chain::full()
    } else {
        Chain::from_names(&args.layers)?
    };
    let env = build_env(
        args.clean_env,
        &args.env_file,
        &args.env,
        &args.secret,
        limits,
    )?;
    let params = build_params(args.params_json.as_deref(), &args.params)?;
    let inputs = build_inputs(&args.inputs)?;
    let context = build_context(args.context.as_deref(), limits)?;
    let scope = Scope {
        env: &env,
        caller_params: &params,
        context: &context,
        inputs: &inputs,
        ..Scope::default()
    };
    if args.explain {
        let text = explain_text(
            doc,
            &chain,
            limits,
            &scope,
            &RenderOptions::strict_if(args.strict),
        )?;
        let _ = io::stdout().lock().write_all(text.as_bytes());
        return Ok(());
    }
    // The document's value is handed over: its constants become the template's without a
    // copy (its text stays, to locate warnings and errors).
    let template = Template::compile_owned(std::mem::take(&mut doc.value), &chain, limits)?;
    let out = template.render(&scope, &RenderOptions::strict_if(args.strict))?;
    let warnings: String = out
        .warnings
        .iter()
        .map(|w| format_warning(w, Some(doc)))
        .collect();
    crate::style::eprint_all(&warnings);
    let value = out.value.into_json();
    drop(template);
    // Written as it is serialised, not gathered into one more copy of the document.
    let mut stdout = io::BufWriter::new(io::stdout().lock());
    let _ = match args.format {
        OutFormat::Json => serde_json::to_writer_pretty(&mut stdout, &value)
            .map_err(io::Error::from)
            .and_then(|()| stdout.write_all(b"\n")),
        OutFormat::Yaml => serde_yaml::to_writer(&mut stdout, &value).map_err(io::Error::other),
    }
    .and_then(|()| stdout.flush());
    Ok(())
}

fn explain_text(
    doc: &Document,
    chain: &Chain,
    limits: &Limits,
    scope: &Scope<'_>,
    options: &RenderOptions,
) -> Result<String, Error> {
    let stages = explain(&doc.value, chain, limits, scope, options)?;
    let mut leaves = Vec::new();
    for (path, s) in string_leaves(&doc.value, &FieldPath::root()) {
        if s.contains(['$', '{']) {
            leaves.push((path, s.to_string()));
        }
    }
    let width = chain.layers().map(|l| l.name().len()).max().unwrap_or(0) + 2;
    let mut out = String::new();
    for (path, source) in leaves {
        out.push_str(&format!("{path}\n"));
        out.push_str(&format!(
            "  {:<width$}  {}\n",
            "source",
            Value::String(source)
        ));
        for stage in &stages {
            let redacted = stage.value.to_redacted_json();
            let shown = path.lookup(&redacted).cloned().unwrap_or(Value::Null);
            let label = format!("{} {}", stage.stage, stage.layer);
            out.push_str(&format!("  {label:<width$}  {shown}\n"));
        }
    }
    Ok(out)
}
