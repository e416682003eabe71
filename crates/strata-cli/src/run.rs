//! `strata run`: a YAML tool through its executor chain, stages 3–6, and a real subprocess.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;
use strata_core::{for_each_leaf, Error, FieldPath, PathSeg, RenderOptions};
use strata_doc::Document;
use strata_exec::{
    dry_run_json, CallerParams, ExecOptions, Invocation, Prepared, Project, SpawnSpec,
};

use strata_runs::{CheckpointEvery, CHECKPOINT_EVERY_FORMS};

use crate::report::{format_error, format_warning};
use crate::run_target::{refuse_options, Target};
use crate::scope_args::{params_json, split_pair};

/// Exit code when strata itself fails before the tool runs.
pub const STRATA_FAILED: u8 = 2;

/// Options of `strata run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Tool id (`examples/echo`) or tool file (`tools/examples/echo.yaml`)
    pub tool: String,
    /// Set a caller parameter; typed by the tool's parameter schema (repeatable)
    #[arg(long = "param", short = 'p', value_name = "K=V")]
    pub params: Vec<String>,
    /// Caller parameters as a JSON object; -p entries win over it
    #[arg(long, value_name = "JSON")]
    pub params_json: Option<String>,
    /// Print the result object (success, exit_code, stdout, stderr, data, …) as JSON
    #[arg(long)]
    pub json: bool,
    /// Print the fully resolved spawn spec (secrets as ***) without running the tool
    #[arg(long)]
    pub dry_run: bool,
    /// Print every config field after each of stages 3–6 and the spawn spec; does not run
    #[arg(long)]
    pub explain: bool,
    /// Missing values are errors: environment variables, context paths and inputs (also
    /// `strict: true` in strata.yaml, or STRATA_STRICT=1)
    #[arg(long)]
    pub strict: bool,
    /// The project root (default: the nearest ancestor of the current directory with tools/)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Set a directive or graph input, typed by its declaration (repeatable)
    #[arg(long = "input", value_name = "K=V")]
    pub inputs: Vec<String>,
    /// Graphs: continue the run with this id from its last checkpoint
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<String>,
    /// Graphs: the id of the new run (default: date, time and a random suffix)
    #[arg(long, value_name = "RUN_ID")]
    pub run_id: Option<String>,
    /// Directives and graphs: no progress lines (a graph prints only its result)
    #[arg(long)]
    pub quiet: bool,
    /// Graphs: write the synced checkpoint every N steps or every time (2s, 500ms) instead
    /// of after every step; a killed run then resumes from the last one written
    #[arg(long, value_name = "N|TIME", value_parser = checkpoint_every)]
    pub checkpoint_every: Option<CheckpointEvery>,
}

/// `--checkpoint-every`'s value.
fn checkpoint_every(text: &str) -> Result<CheckpointEvery, String> {
    CheckpointEvery::parse(text).ok_or_else(|| format!("expected {CHECKPOINT_EVERY_FORMS}"))
}

/// Prints an error, with a snippet of the file it points into when there is one.
pub fn print_error(err: &Error, project: Option<&Project>) {
    // A snippet of `.env` would show a secret value: those errors get no snippet. Nor do
    // files outside the project (a link to one is refused before it is read, and its
    // contents are never shown).
    let doc = err
        .location
        .as_ref()
        .filter(|loc| !loc.file.ends_with(".env"))
        .and_then(|loc| {
            let text = match project {
                Some(p) => p.read_text(&p.root.join(&loc.file)).ok()?,
                None => {
                    let path = Path::new(&loc.file);
                    let real = strata_doc::confine(path, Path::new("."), &loc.file, "").ok()?;
                    std::fs::read_to_string(real).ok()?
                }
            };
            Some(Document::unparsed(&loc.file, text))
        });
    anstream::eprint!("{}", format_error(err, doc.as_ref()));
}

/// The settings of the project around the current directory, when there is one (a render
/// needs no project; a broken `strata.yaml` is still an error); outside a project, the
/// `STRATA_*` variables over the defaults. Commands that need no project (`render`, `plan
/// resolve`) take their limits and strictness from here.
pub fn ambient_settings() -> Result<strata_exec::Settings, Error> {
    match Project::discover(Path::new(".")) {
        Ok(p) => Ok((*p.settings).clone()),
        Err(e) if e.layer == strata_exec::settings::SETTINGS => Err(e),
        Err(_) => strata_exec::Settings::from_env(&|name| std::env::var(name).ok()),
    }
}

/// The project of a command: `--project DIR`, or the nearest ancestor with `tools/` of the
/// directory holding `file` (of the current directory without one). A failure is printed and
/// returned as the exit code.
pub fn open_project(dir: Option<&Path>, file: Option<&Path>) -> Result<Project, ExitCode> {
    let start = file
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    dir.map_or_else(|| Project::discover(start), Project::at)
        .map_err(|e| {
            print_error(&e, None);
            ExitCode::from(STRATA_FAILED)
        })
}

/// True when `arg` names a tool file rather than a tool id.
pub fn looks_like_path(arg: &str) -> bool {
    arg.ends_with(".yaml") || arg.ends_with(".yml") || Path::new(arg).is_file()
}

/// Why the tool named by the arguments cannot be found, with the project when there is one.
type NotFound = (Error, Option<Box<Project>>);

/// The project and the tool id named by the arguments.
fn locate(args: &RunArgs) -> Result<(Project, String), NotFound> {
    let is_path = looks_like_path(&args.tool);
    let project = match &args.project {
        Some(dir) => Project::at(dir),
        None if is_path => {
            let parent = Path::new(&args.tool)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Project::discover(parent)
        }
        None => Project::discover(Path::new(".")),
    }
    .map_err(|e| (e, None))?;
    let id = if is_path {
        project
            .id_of_path(Path::new(&args.tool))
            .map_err(|e| (e, Some(Box::new(project.clone()))))?
    } else {
        args.tool.clone()
    };
    Ok((project, id))
}

fn caller_params(args: &RunArgs) -> Result<CallerParams, Error> {
    caller_params_from(args.params_json.as_deref(), &args.params)
}

/// Caller parameters from `--params-json` and `-p K=V` pairs (the pairs win).
pub fn caller_params_from(json: Option<&str>, pairs: &[String]) -> Result<CallerParams, Error> {
    let typed = params_json(json)?;
    let strings = pairs
        .iter()
        .map(|p| split_pair(p, "--param").map(|(k, v)| (k.to_string(), v.to_string())))
        .collect::<Result<_, _>>()?;
    Ok(CallerParams { typed, strings })
}

/// Runs `strata run`.
pub fn run(args: RunArgs) -> ExitCode {
    if args.tool.ends_with(".md") {
        return crate::directive_cmd::run_cli(&args);
    }
    let (project, id) = match locate(&args) {
        Ok(found) => found,
        Err((e, project)) => {
            print_error(&e, project.as_deref());
            return ExitCode::from(STRATA_FAILED);
        }
    };
    if crate::graph_cmd::is_graph(&project, &id) {
        return crate::graph_cmd::run(&args, &project, &id);
    }
    if let Err(e) = refuse_options(&args, Target::Tool) {
        print_error(&e, Some(&project));
        return ExitCode::from(STRATA_FAILED);
    }
    if !args.explain && crate::check_cmd::refuse_run(&project, strata_check::Target::Tool(&id), &id)
    {
        return ExitCode::from(STRATA_FAILED);
    }
    match run_in(&args, &project, &id) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            print_error(&e, Some(&project));
            ExitCode::from(STRATA_FAILED)
        }
    }
}

fn print_warnings(call: &Invocation, prepared: &Prepared) {
    let text: String = prepared
        .warnings
        .iter()
        .map(|w| {
            let doc = call.chain().links.get(w.link).map(|l| &l.doc);
            format_warning(&w.warning, doc)
        })
        .collect();
    crate::style::eprint_all(&text);
}

fn run_in(args: &RunArgs, project: &Project, id: &str) -> Result<u8, Error> {
    let caller = caller_params(args)?;
    let opts = ExecOptions {
        render: RenderOptions::strict_if(project.settings.strict_with(args.strict)),
        base_env: None,
    };
    let call = Invocation::new(project, id, &caller, &opts)?;
    if args.explain {
        let text = explain_text(&call)?;
        let prepared = call.prepare()?;
        print_warnings(&call, &prepared);
        let mut out = io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.write_all(spec_text(&call, &prepared.spec).as_bytes());
        return Ok(0);
    }
    let prepared = call.prepare()?;
    print_warnings(&call, &prepared);
    if args.dry_run {
        let text = if args.json {
            serde_json::to_string_pretty(&dry_run_json(&prepared.spec)).unwrap_or_default() + "\n"
        } else {
            spec_text(&call, &prepared.spec)
        };
        let _ = io::stdout().lock().write_all(text.as_bytes());
        return Ok(0);
    }
    let result = strata_exec::spawn(&prepared.spec)?;
    if args.json {
        let text = serde_json::to_string_pretty(&result.to_json()).unwrap_or_default() + "\n";
        let _ = io::stdout().lock().write_all(text.as_bytes());
    } else {
        let _ = io::stdout().lock().write_all(&result.stdout);
        let _ = io::stdout().flush();
        let mut err = io::stderr().lock();
        let _ = err.write_all(&result.stderr);
        for (name, truncated) in [
            ("stdout", result.stdout_truncated),
            ("stderr", result.stderr_truncated),
        ] {
            if truncated {
                let _ = writeln!(
                    err,
                    "strata: {name} of `{id}` was truncated at {} bytes",
                    prepared.spec.max_output_bytes
                );
            }
        }
        if result.timed_out {
            let _ = writeln!(
                err,
                "strata: `{id}` timed out after {}s; its process group was killed",
                secs(&prepared.spec)
            );
        } else if let Some(sig) = result.signal {
            let _ = writeln!(err, "strata: `{id}` was killed by signal {sig}");
        } else if let Some(code) = result.exit_code.filter(|c| *c != 0) {
            let _ = writeln!(err, "strata: `{id}` exited with code {code}");
        }
    }
    Ok(result.process_exit_code())
}

fn secs(spec: &SpawnSpec) -> String {
    let s = spec.timeout.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

/// The spawn spec for people: chain, program, argv, cwd, stdin, limits and env.
fn spec_text(call: &Invocation, spec: &SpawnSpec) -> String {
    let v = dry_run_json(spec);
    let mut out = String::new();
    let argv = v["argv"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let stdin = match &v["stdin"] {
        Value::Null => "none".to_string(),
        s => s.to_string(),
    };
    out.push_str(&format!("chain:   {}\n", call.chain().describe()));
    let command = v["command"].as_str().unwrap_or_default();
    out.push_str(&format!("command: {command}\n"));
    out.push_str(&format!("argv:    [{argv}]\n"));
    out.push_str(&format!("cwd:     {}\n", spec.cwd.display()));
    out.push_str(&format!("stdin:   {stdin}\n"));
    out.push_str(&format!("timeout: {}s\n", secs(spec)));
    out.push_str(&format!(
        "output:  {} bytes per stream\n",
        spec.max_output_bytes
    ));
    out.push_str("env:\n");
    if let Some(env) = v["env"].as_object() {
        for (k, val) in env {
            out.push_str(&format!("  {k}={}\n", val.as_str().unwrap_or_default()));
        }
    }
    out
}

/// Every field of the merged config after each of stages 3–6 (secrets as `***`).
fn explain_text(call: &Invocation) -> Result<String, Error> {
    let stages = call.explain()?;
    let mut leaves = Vec::new();
    for_each_leaf(call.config(), &FieldPath::root(), &mut |p, v| {
        leaves.push((p.clone(), v))
    });
    let config = FieldPath(vec![PathSeg::Key("config".into())]);
    let mut out = String::new();
    for (path, source) in leaves {
        let literal = call.literals().iter().find(|l| l.path == path);
        out.push_str(&format!("{}\n", path.under(&config)));
        match literal {
            Some(l) => {
                let shown = Value::String(l.text.clone());
                out.push_str(&format!("  literal   {shown}\n"));
                continue;
            }
            None => out.push_str(&format!("  source    {source}\n")),
        }
        for stage in &stages {
            let redacted = stage.value.to_redacted_json();
            let shown = path.lookup(&redacted).cloned().unwrap_or(Value::Null);
            let label = format!("{} {}", stage.stage, stage.layer);
            out.push_str(&format!("  {label:<8}  {shown}\n"));
        }
    }
    Ok(out)
}
