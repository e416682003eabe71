//! `strata prompt render KEY` and `strata prompt list`: the project's prompt templates
//! (`prompts/`, docs/prompts.md).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use strata_core::{Error, ErrorKind, Layer, Limits, Undefined};
use strata_doc::{Document, Format};
use strata_prompts::{Call, Merge, Overrides, PromptManager, Rendered};

use crate::outcome::{open_project_as, report};
use crate::scope_args::{read_file, split_pair};
use crate::shared_args::SharedArgs;
use strata_app::Failure;

/// Options of `strata prompt`.
#[derive(Debug, Args)]
pub(crate) struct PromptArgs {
    #[command(subcommand)]
    command: PromptCommand,
}

#[derive(Debug, Subcommand)]
enum PromptCommand {
    /// Render the template KEY resolves to (see docs/prompts.md for the lookup order)
    Render(Box<RenderArgs>),
    /// List the templates of prompts/: namespaces, names, versions and components
    List(ListArgs),
}

/// Options of `strata prompt render`.
#[derive(Debug, Args)]
struct RenderArgs {
    /// The key (`BrowseLink`, `reflection/default`); none means the default name
    #[arg(add = crate::complete::prompt_keys())]
    key: Option<String>,
    /// The root space, looked in before its ancestors and the top (`action_agent`)
    #[arg(long, value_name = "SPACE")]
    root_space: Option<String>,
    /// The type namespace (default: main)
    #[arg(long = "type", value_name = "TYPE")]
    type_: Option<String>,
    /// The deployment version: `KEY.VERSION` is tried before `KEY`
    #[arg(long, value_name = "VERSION")]
    version: Option<String>,
    /// The name every namespace falls back to (default: default)
    #[arg(long, value_name = "NAME")]
    default_name: Option<String>,
    /// Set a feed variable to a string (repeatable; wins over --feed-json)
    #[arg(long = "feed", value_name = "K=V")]
    feed: Vec<String>,
    /// Feed variables as a JSON object, or @file (JSON or YAML)
    #[arg(long, value_name = "JSON|@FILE")]
    feed_json: Option<String>,
    /// Knowledge merged into the feed, as a JSON object or @file
    #[arg(long, value_name = "JSON|@FILE")]
    knowledge_json: Option<String>,
    /// How knowledge merges into the feed
    #[arg(long, value_name = "STRATEGY", default_value = "feed_only",
          value_parser = Merge::NAMES)]
    merge: String,
    /// Render one version of a versioned component (repeatable)
    #[arg(long = "pin", value_name = "COMPONENT=VERSION")]
    pins: Vec<String>,
    /// The content hash (SHA-256, or its first 8+ hex digits) the template must have
    #[arg(long, value_name = "HEX")]
    hash: Option<String>,
    /// A feed or knowledge variable whose value is secret: *** in errors and the trace
    /// (repeatable)
    #[arg(long, value_name = "NAME")]
    secret: Vec<String>,
    /// The template used when nothing else matches (SPEC §6's configured default
    /// template): its text, or @file (read as the template's text)
    #[arg(long, value_name = "TEXT|@FILE")]
    default_template: Option<String>,
    /// Print every variant when versioned components give several
    #[arg(long)]
    all_variants: bool,
    /// Print the candidates tried in order, the one that won and the variables, then the
    /// prompt
    #[arg(long)]
    explain: bool,
    /// The global options: warnings (a key no template is named after, undefined
    /// variables) go to standard error, with `-q` too; `--strict` makes them errors (except
    /// in tests such as `{% if x is defined %}`; strata.yaml's `strict` does not apply);
    /// `--json` prints the result as JSON
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Options of `strata prompt list`.
#[derive(Debug, Args)]
struct ListArgs {
    /// The global options; `--json` prints the list as JSON
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata prompt`.
pub(crate) fn run(args: PromptArgs) -> ExitCode {
    let json = match &args.command {
        PromptCommand::Render(a) => a.shared.json,
        PromptCommand::List(a) => a.shared.json,
    };
    let project = match open_project_as(None, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let default_template = match &args.command {
        PromptCommand::Render(a) => a.default_template.as_deref(),
        PromptCommand::List(_) => None,
    };
    let out =
        load(&project.root, &project.limits, default_template).and_then(|m| match &args.command {
            PromptCommand::Render(a) => render(a, &m, &project.settings),
            PromptCommand::List(a) => Ok(list(a, &m)),
        });
    match out {
        Ok(text) => {
            crate::output::print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => report(Failure::Error(e), Some(&project), json),
    }
}

/// The project's templates, with `--default-template` (its text, or `@file`) when given.
fn load(
    root: &Path,
    limits: &Limits,
    default_template: Option<&str>,
) -> Result<PromptManager, Error> {
    let Some(spec) = default_template else {
        return PromptManager::load(root, limits);
    };
    let (text, file) = match spec.strip_prefix('@') {
        Some(path) => {
            let bytes = read_file(Path::new(path), limits)?;
            String::from_utf8(bytes)
                .map_err(|_| {
                    Error::new(
                        Layer::REQUEST,
                        ErrorKind::Invalid,
                        format!(
                            "--default-template file `{}` is not UTF-8 text",
                            strata_core::shown(path)
                        ),
                    )
                })
                .map(|text| (text, Some(path)))?
        }
        None => (spec.to_string(), None),
    };
    let dir = root.join(strata_prompts::PROMPTS_DIR);
    let mut builder =
        PromptManager::builder().limits(strata_prompts::PromptLimits::from_limits(limits));
    builder = match file {
        Some(file) => builder.default_template_from(&text, file),
        None => builder.default_template(&text),
    };
    if dir.is_dir() {
        builder = builder.dir(&dir, strata_prompts::PROMPTS_DIR);
    }
    builder.build()
}

/// A JSON object given inline or as `@file` (JSON or YAML), for option `flag`.
fn object_arg(arg: Option<&str>, flag: &str) -> Result<Map<String, Value>, Error> {
    let value = match arg {
        None => return Ok(Map::new()),
        Some(spec) => match spec.strip_prefix('@') {
            Some(path) => {
                let bytes = read_file(Path::new(path), &Limits::default())?;
                Document::parse(path, bytes, Format::from_name(path), &Limits::default())?.value
            }
            None => strata_doc::json_value(spec).map_err(|e| {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::Request,
                    format!("{flag} is not valid JSON: {e}"),
                )
                .with_source(e)
                .with_hint("give a JSON object, or @file for a JSON or YAML file")
            })?,
        },
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            format!("{flag} must be a JSON object of variables"),
        )),
    }
}

fn render(
    args: &RenderArgs,
    m: &PromptManager,
    settings: &strata_app::Settings,
) -> Result<String, Error> {
    let mut feed = object_arg(args.feed_json.as_deref(), "--feed-json")?;
    for pair in &args.feed {
        let (k, v) = split_pair(pair, "--feed")?;
        feed.insert(k.to_string(), Value::String(v.to_string()));
    }
    let knowledge = object_arg(args.knowledge_json.as_deref(), "--knowledge-json")?;
    let pins = args
        .pins
        .iter()
        .map(|p| split_pair(p, "--pin").map(|(c, v)| (c.to_string(), v.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let call = Call {
        key: args.key.as_deref(),
        feed: Some(&feed),
        knowledge: args.knowledge_json.is_some().then_some(&knowledge),
        merge: Merge::parse(&args.merge).unwrap_or_default(),
        overrides: Overrides {
            root_space: args.root_space.clone().map(Some),
            type_: args.type_.clone(),
            version: args.version.clone().map(Some),
            default_name: args.default_name.clone(),
            predefined: None,
        },
        pins,
        hash: args.hash.clone(),
        undefined: Undefined::strict_if(args.shared.strict() == Some(true)),
        secrets: strata_app::secrets::declared(settings, &args.secret),
        explain: args.explain,
    };
    let out = m.render(&call)?;
    if !args.all_variants {
        out.only_text("pass --all-variants to print them all, or --pin COMPONENT=VERSION for one")?;
    }
    for w in out.notices.iter().chain(&out.warnings) {
        eprintln!("warning[{}]: {}", w.layer, w.message);
    }
    Ok(if args.shared.json {
        serde_json::to_string_pretty(&out.to_json()).unwrap_or_default() + "\n"
    } else {
        text(&out)
    })
}

/// The prompt for people: the trace when asked, then the text (each variant under a
/// `--- component=version, … ---` line when there are several).
fn text(out: &Rendered) -> String {
    let mut s = String::new();
    if let Some(e) = &out.explain {
        s.push_str(&e.to_text());
        let _ = writeln!(s, "--- {} ({}) ---", out.template, out.file);
    }
    let several = out.variants.len() > 1;
    for v in &out.variants {
        if several {
            let _ = writeln!(s, "--- {} ---", v.label());
        }
        s.push_str(&v.text);
        if !v.text.ends_with('\n') {
            s.push('\n');
        }
    }
    s
}

fn list(args: &ListArgs, m: &PromptManager) -> String {
    let spaces = m.namespaces();
    if args.shared.json {
        let all: Vec<Value> = spaces
            .iter()
            .map(|n| {
                let names: Map<String, Value> = n
                    .names
                    .iter()
                    .map(|(name, versions)| (name.clone(), json!(versions)))
                    .collect();
                let components: Map<String, Value> = n
                    .components
                    .iter()
                    .map(|(name, versions)| (name.clone(), json!(versions)))
                    .collect();
                json!({"namespace": n.path, "templates": names, "components": components})
            })
            .collect();
        return serde_json::to_string_pretty(&all).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    for n in &spaces {
        let path = if n.path.is_empty() { "(top)" } else { &n.path };
        let _ = writeln!(out, "{path}");
        for (name, versions) in &n.names {
            let shown: Vec<&str> = versions
                .iter()
                .map(|v| v.as_deref().unwrap_or("-"))
                .collect();
            if shown == ["-"] {
                let _ = writeln!(out, "  {name}");
            } else {
                let _ = writeln!(out, "  {name} [{}]", shown.join(", "));
            }
        }
        for (name, versions) in &n.components {
            if versions.is_empty() {
                let _ = writeln!(out, "  component {name}");
            } else {
                let _ = writeln!(out, "  component {name} [{}]", versions.join(", "));
            }
        }
    }
    out
}
