//! `strata render`: a YAML or JSON document through the layers, or the batch protocol.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::Value;
use strata_core::{string_leaves, Error, ErrorKind, FieldPath, Limits, RenderOptions, Scope};
use strata_doc::{Document, Format};
use strata_pipeline::{batch, explain, Chain, Template};

use crate::report::{format_error, format_warning};
use crate::scope_args::{build_context, build_env, build_inputs, build_params, read_file};

/// Output syntax of `strata render`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum OutFormat {
    /// Pretty-printed JSON.
    Json,
    /// YAML.
    Yaml,
}

/// Options of `strata render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// YAML or JSON document (`.json` is read as JSON, anything else as YAML); `-` or nothing
    /// reads standard input
    pub(crate) file: Option<PathBuf>,
    /// Set an environment variable (repeatable)
    #[arg(long = "env", value_name = "K=V")]
    pub(crate) env: Vec<String>,
    /// Read environment variables from a .env file, over the project's own .env (read as
    /// `strata run` reads it); their values are secret (repeatable)
    #[arg(long, value_name = "FILE")]
    pub(crate) env_file: Vec<PathBuf>,
    /// Mark an environment variable as secret: shown as *** in traces and errors (repeatable)
    #[arg(long, value_name = "NAME")]
    pub(crate) secret: Vec<String>,
    /// Start from an empty environment instead of the process environment
    #[arg(long)]
    pub(crate) clean_env: bool,
    /// Set a caller parameter to a string (repeatable)
    #[arg(long = "param", short = 'p', value_name = "K=V")]
    pub(crate) params: Vec<String>,
    /// Caller parameters as a JSON object (typed); --param entries are added after it
    #[arg(long, value_name = "JSON")]
    pub(crate) params_json: Option<String>,
    /// Context for layer C: a JSON object, or @file (JSON or YAML)
    #[arg(long, value_name = "JSON|@FILE")]
    pub(crate) context: Option<String>,
    /// Set a directive input to a string (repeatable)
    #[arg(long = "input", value_name = "K=V")]
    pub(crate) inputs: Vec<String>,
    /// A layer to run, in order (repeatable; default: inputs, context, env, params)
    #[arg(long = "layer", value_name = "LAYER", value_parser = ["inputs", "context", "env", "params"])]
    pub(crate) layers: Vec<String>,
    /// Whether missing variables, paths and inputs are errors: `--strict`/`--no-strict`
    /// (global options) over the settings
    #[arg(skip)]
    pub(crate) strict: bool,
    /// Output syntax (`--json` is `--format json`)
    #[arg(long, value_enum, default_value = "json")]
    pub(crate) format: OutFormat,
    /// Print each templated field's value after every stage (secrets as ***)
    #[arg(long)]
    pub(crate) explain: bool,
    /// Serve JSON Lines requests on standard input (see docs/batch.md)
    #[arg(long, conflicts_with_all = ["file", "explain"])]
    pub(crate) batch: bool,
    /// Read the input as plain text and write text, as `envsubst` does, streamed a line at a
    /// time (only with `--layer env`; see docs/layers.md, "Plain text")
    #[arg(long, conflicts_with_all = ["batch", "explain", "format"])]
    pub(crate) text: bool,
    /// The global options: `--json` is `--format json`, and prints an error as
    /// `{"ok": false, "error": …}` on standard output
    #[command(flatten)]
    pub(crate) shared: crate::shared_args::SharedArgs,
}

/// Runs `strata render`.
pub(crate) fn run(mut args: RenderArgs) -> ExitCode {
    let settings = match strata_app::ambient_settings() {
        Ok(s) => s,
        Err(e) => {
            crate::outcome::print_error(&e, None);
            return ExitCode::from(crate::outcome::STRATA_FAILED);
        }
    };
    args.strict = settings.strict_over(args.shared.strict());
    if args.shared.json {
        args.format = OutFormat::Json;
    }
    // One redaction rule: the project's declared secrets count as `--secret` does.
    args.secret = strata_app::secrets::declared(&settings, &args.secret);
    let limits = settings.limits;
    if args.batch {
        return match batch::serve(io::stdin().lock(), crate::output::stdout(), &limits) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) if crate::output::failed() => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: batch i/o failed: {e}");
                ExitCode::from(crate::outcome::STRATA_FAILED)
            }
        };
    }
    if args.text {
        return render_text(&args, &limits);
    }
    let chain = match chain_of(&args) {
        Ok(chain) => chain,
        Err(e) => return failed(&args, e, None),
    };
    let read = load(args.file.as_ref(), &limits).and_then(|(name, bytes, format)| {
        if args.explain {
            Document::parse(&name, bytes, format, &limits).map(|doc| (doc, None))
        } else {
            Template::read(&name, bytes, format, &chain, &limits)
                .map(|(doc, template)| (doc, Some(template)))
        }
    });
    let (doc, template) = match read {
        Ok(read) => read,
        Err(e) => return failed(&args, e, None),
    };
    let template = match template.transpose() {
        Ok(template) => template,
        Err(e) => return failed(&args, doc.locate_error(e), Some(&doc)),
    };
    let mut more = Vec::new();
    match render(&args, &doc, template, &chain, &limits, &mut more) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if more.is_empty() => failed(&args, doc.locate_error(e), Some(&doc)),
        Err(_) => failed_all(&args, more, &doc),
    }
}

/// The layers `args` ask for, in order (all four by default).
fn chain_of(args: &RenderArgs) -> Result<Chain, Error> {
    if args.layers.is_empty() {
        Ok(Chain::full())
    } else {
        Chain::from_names(&args.layers)
    }
}

/// Warnings of a text render shown at most: a text with many missing variables (each line's
/// own) would otherwise print more than it renders.
const TEXT_WARNINGS_SHOWN: usize = 20;

/// `strata render --layer env --text`: the input streamed through layer E as plain text (see
/// [`strata_pipeline::env_text`]). On an error, what was written stays written, the error
/// names its line, and the exit code is 2.
fn render_text(args: &RenderArgs, limits: &Limits) -> ExitCode {
    use strata_pipeline::env_text::{self, TextError};
    if args.layers != ["env"] {
        let e = Error::new(
            strata_core::Layer::REQUEST,
            ErrorKind::Invalid,
            "--text renders with the env layer alone".to_string(),
        )
        .with_hint("pass `--layer env --text`");
        return failed(args, e, None);
    }
    let env = match env_of(args, limits) {
        Ok(env) => env,
        Err(e) => return failed(args, e, None),
    };
    let file = args.file.as_ref().filter(|f| f.as_os_str() != "-");
    let name = file.map_or("<stdin>".to_string(), |f| f.display().to_string());
    let input: Box<dyn io::Read> = match file {
        Some(path) => match std::fs::File::open(path) {
            Ok(f) => Box::new(f),
            Err(e) => return failed(args, Error::io("read", path, e), None),
        },
        None => Box::new(io::stdin().lock()),
    };
    let mut shown = 0;
    let outcome = env_text::render_text(
        input,
        crate::output::stdout(),
        &name,
        &env,
        limits,
        &RenderOptions::strict_if(args.strict),
        |line, column, w| {
            shown += 1;
            if shown <= TEXT_WARNINGS_SHOWN {
                let w = at_line(w, &name, line, column);
                anstream::eprint!("{}", format_warning(&w, None));
            }
        },
    );
    if shown > TEXT_WARNINGS_SHOWN {
        eprintln!(
            "strata: {} more warnings not shown",
            shown - TEXT_WARNINGS_SHOWN
        );
    }
    match outcome {
        Ok(_) => ExitCode::SUCCESS,
        Err(TextError::Render(e)) => failed(args, e, None),
        Err(TextError::Io(_)) if crate::output::failed() => ExitCode::SUCCESS,
        Err(TextError::Io(e)) => {
            eprintln!("error: {name}: {e}");
            ExitCode::from(crate::outcome::STRATA_FAILED)
        }
    }
}

/// A warning at `line` and `column` of `name`, its message naming them (the string it was
/// about is the line).
fn at_line(
    mut w: strata_core::Warning,
    name: &str,
    line: usize,
    column: usize,
) -> strata_core::Warning {
    w.message = format!("{name}:{line}:{column}: {}", w.message);
    w.span = None;
    w
}

/// Prints why the render failed — for people on stderr, or with `--json` as
/// `{"ok": false, "error": …}` on stdout — and returns exit code 2.
fn failed(args: &RenderArgs, e: Error, doc: Option<&Document>) -> ExitCode {
    if args.shared.json {
        crate::output::print_json(&strata_app::Failure::Error(e).to_json());
    } else {
        anstream::eprint!("{}", format_error(&e, doc));
    }
    ExitCode::from(crate::outcome::STRATA_FAILED)
}

/// The document's name, bytes and format: the file's, or standard input's (JSON when it
/// reads as JSON).
fn load(file: Option<&PathBuf>, limits: &Limits) -> Result<(String, Vec<u8>, Format), Error> {
    match file.filter(|f| f.as_os_str() != "-") {
        Some(path) => {
            let name = path.display().to_string();
            let bytes = read_file(path, limits)?;
            let format = Format::from_name(&name);
            Ok((name, bytes, format))
        }
        None => {
            let bytes = strata_doc::read_bounded(io::stdin().lock(), "<stdin>", limits)?;
            // Checked without building a value: the document is read once, later.
            let format = if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_ok() {
                Format::Json
            } else {
                Format::Yaml
            };
            Ok(("<stdin>".to_string(), bytes, format))
        }
    }
}

/// Prints every error of a `--strict` render (as [`failed`] prints one; at most
/// [`crate::report::MAX_ERRORS`] for people) and returns exit code 2.
fn failed_all(args: &RenderArgs, errors: Vec<Error>, doc: &Document) -> ExitCode {
    let errors: Vec<Error> = errors.into_iter().map(|e| doc.locate_error(e)).collect();
    if args.shared.json {
        let failure = strata_app::Failure::Document {
            errors,
            doc: Box::new(doc.clone()),
        };
        crate::output::print_json(&failure.to_json());
    } else {
        crate::outcome::print_errors(&errors, Some(doc));
    }
    ExitCode::from(crate::outcome::STRATA_FAILED)
}

/// The errors of a `--strict` render that failed with `first`: every missing value (the
/// warnings of the same render without strict mode, as errors), or none when that render
/// fails too (its error is then the one to show).
fn every_missing(template: &Template, scope: &Scope<'_>, first: &Error) -> Vec<Error> {
    let Ok(out) = template.render(scope, &RenderOptions::strict_if(false)) else {
        return Vec::new();
    };
    out.warnings
        .iter()
        .map(|w| {
            let e = Error::new(w.layer, first.kind(), w.message.clone())
                .at_path(&w.path)
                .with_span(w.span);
            match first.hint() {
                Some(hint) => e.with_hint(hint),
                None => e,
            }
        })
        .collect()
}

/// The environment of a render: the process's (unless `--clean-env`), the `.env` of the
/// current directory's project as `strata run` reads it, `--env-file`, `--env`.
fn env_of(args: &RenderArgs, limits: &Limits) -> Result<strata_core::EnvMap, Error> {
    let dotenv = match strata_app::Project::find_root(std::path::Path::new(".")) {
        Some(root) => strata_app::Project::bare(&root)?.dotenv_text()?,
        None => None,
    };
    build_env(
        args.clean_env,
        dotenv.as_deref(),
        &args.env_file,
        &args.env,
        &args.secret,
        limits,
    )
}

/// Renders the document as `args` ask — its template, compiled as it was read, or with
/// `--explain` (no template) its value stage by stage; when a `--strict` render fails on a
/// missing value, `more` gets every missing value as an error.
fn render(
    args: &RenderArgs,
    doc: &Document,
    template: Option<Template>,
    chain: &Chain,
    limits: &Limits,
    more: &mut Vec<Error>,
) -> Result<(), Error> {
    let env = env_of(args, limits)?;
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
    let Some(template) = template else {
        let text = explain_text(
            doc,
            chain,
            limits,
            &scope,
            &RenderOptions::strict_if(args.strict),
        )?;
        crate::output::print(&text);
        return Ok(());
    };
    let options = RenderOptions::strict_if(args.strict);
    // A failing render prints nothing, so the document is rendered twice: once for its errors
    // and warnings, keeping nothing, then again a top-level entry at a time into the output.
    // The rendered document is never held whole (docs/design.md, "Rendering a document").
    let warnings = match template.render_each(&scope, &options, &mut |_, _| Ok(())) {
        Ok(warnings) => warnings,
        Err(e) => {
            if args.strict {
                *more = every_missing(&template, &scope, &e);
            }
            return Err(e);
        }
    };
    let shown: String = warnings
        .iter()
        .map(|w| format_warning(w, Some(doc)))
        .collect();
    crate::style::eprint_all(&shown);
    let mut stdout = io::BufWriter::new(crate::output::stdout());
    let written = match args.format {
        OutFormat::Json => write_json(&template, &scope, &options, &mut stdout),
        OutFormat::Yaml => write_yaml(&template, &scope, &options, &mut stdout),
    }
    .and_then(|()| stdout.flush().map_err(output_error));
    match written {
        // Standard output closed or full: said when the command ends (`output::finish`).
        Err(_) if crate::output::failed() => Ok(()),
        written => written,
    }
}

/// Writes the render of `template` to `out` as YAML, each top-level entry as it is rendered
/// (a map's YAML is its entries' one after the other).
fn write_yaml(
    template: &Template,
    scope: &Scope<'_>,
    options: &RenderOptions,
    out: &mut impl Write,
) -> Result<(), Error> {
    template
        .render_each(scope, options, &mut |key, value| {
            let value = value.clone().into_json();
            let text = match key {
                Some(key) => strata_doc::to_yaml_entry(key, &value),
                None => strata_doc::to_yaml(&value),
            };
            out.write_all(text.as_bytes()).map_err(output_error)
        })
        .map(drop)
}

/// Writes the render of `template` to `out` as pretty JSON, each top-level entry as it is
/// rendered, and a newline.
fn write_json(
    template: &Template,
    scope: &Scope<'_>,
    options: &RenderOptions,
    out: &mut impl Write,
) -> Result<(), Error> {
    use serde::ser::{SerializeMap, Serializer as _};
    let json = |e: serde_json::Error| output_error(io::Error::from(e));
    let mut ser = serde_json::Serializer::pretty(&mut *out);
    if template.is_map() {
        let mut map = ser.serialize_map(None).map_err(json)?;
        template.render_each(scope, options, &mut |key, value| {
            map.serialize_entry(key.unwrap_or_default(), value)
                .map_err(json)
        })?;
        map.end().map_err(json)?;
    } else {
        template.render_each(scope, options, &mut |_, value| {
            serde::Serialize::serialize(value, &mut ser).map_err(json)
        })?;
    }
    out.write_all(b"\n").map_err(output_error)
}

/// A failure to write the output.
fn output_error(e: io::Error) -> Error {
    Error::new(
        strata_core::Layer::REQUEST,
        ErrorKind::Io,
        format!("writing the output failed: {e}"),
    )
    .with_source(e)
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
