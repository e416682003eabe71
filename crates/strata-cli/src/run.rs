//! `strata run`: a YAML tool through its executor chain, stages 3–6, and a real subprocess.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use strata_app::{
    dry_run_json, App, CallerParams, ExecOptions, Failure, Invocation, Prepared, Project, SpawnSpec,
};
use strata_core::{for_each_leaf, Error, FieldPath, PathSeg, RenderOptions};
use strata_tools::CallOptions;

use crate::outcome::report;
use crate::report::format_warning;
use crate::run_args::{caller_params_from, looks_like_path, RunArgs};
use crate::run_args::{refuse_options, Target};

/// Why the tool named by the arguments cannot be found, with the project when there is one.
type NotFound = (Error, Option<Box<Project>>);

/// The project and the tool id named by the arguments.
fn locate(args: &RunArgs) -> Result<(App, String), NotFound> {
    let is_path = looks_like_path(&args.tool);
    let near = is_path.then(|| Path::new(&args.tool));
    let project = App::open(None, near)
        .map(crate::outcome::opened)
        .map_err(|e| (e, None))?;
    let id = crate::names::tool_id(&project, &args.tool)
        .map_err(|e| (e, Some(Box::new(project.project().clone()))))?;
    Ok((project, id))
}

/// Why `name` (the tool id `id`) names nothing: the tool nearest to it, or the directive
/// file `name.md` when there is one.
fn unknown(project: &App, name: &str, id: &str) -> Error {
    let directive = format!("{name}.md");
    if Path::new(&directive).is_file() {
        return project.unknown_tool(id, "tool").with_hint(format!(
            "did you mean `{directive}`? A directive is named by its file"
        ));
    }
    project.unknown_tool(id, "tool")
}

fn caller_params(args: &RunArgs) -> Result<CallerParams, Error> {
    caller_params_from(args.params_json.as_deref(), &args.params)
}

/// Runs `strata run`.
pub(crate) fn run(args: RunArgs) -> ExitCode {
    if args.batch {
        return run_batch(&args);
    }
    if args.tool.ends_with(".md") {
        return crate::run_directive::run_cli(&args);
    }
    let (project, id) = match locate(&args) {
        Ok(found) => found,
        Err((e, project)) => {
            return report(Failure::Error(e), project.as_deref(), args.shared.json)
        }
    };
    if project.is_graph(&id) {
        return crate::run_graph::run(&args, &project, &id);
    }
    if matches!(project.find_tool(&id), Ok(None)) {
        let e = unknown(&project, &args.tool, &id);
        return report(Failure::Error(e), Some(&project), args.shared.json);
    }
    if let Err(e) = refuse_options(&args, Target::Tool) {
        return report(Failure::Error(e), Some(&project), args.shared.json);
    }
    match run_in(&args, &project, &id) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => report(failure, Some(&project), args.shared.json),
    }
}

/// `strata run --batch`: the project's tools run for JSON Lines requests on standard input
/// (see docs/batch.md and [`strata_app::tool_batch`]).
fn run_batch(args: &RunArgs) -> ExitCode {
    let app = match App::open(None, None).map(crate::outcome::opened) {
        Ok(app) => app,
        Err(e) => return report(Failure::Error(e), None, args.shared.json),
    };
    let strict = app.settings.strict_over(args.shared.strict());
    let output = crate::output::stdout();
    match strata_app::tool_batch::serve(&app, io::stdin().lock(), output, strict) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) if crate::output::failed() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: batch i/o failed: {e}");
            ExitCode::from(strata_app::EXIT_STRATA)
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

fn run_in(args: &RunArgs, project: &App, id: &str) -> Result<u8, Failure> {
    let caller = caller_params(args)?;
    let opts = ExecOptions {
        render: RenderOptions::strict_if(project.settings.strict_over(args.shared.strict())),
        base_env: None,
        cancel: None,
    };
    if args.explain {
        // Shows what a call would do; runs nothing, so the gate does not apply.
        let call = project.invocation(id, &caller, &opts)?;
        let text = explain_text(&call)?;
        let prepared = call.prepare()?;
        print_warnings(&call, &prepared);
        crate::output::print(format!("{text}\n{}", spec_text(&call, &prepared.spec)));
        return Ok(0);
    }
    if args.dry_run {
        let (call, prepared) = project.prepare_tool(id, &caller, &opts)?;
        print_warnings(&call, &prepared);
        let text = if args.shared.json {
            serde_json::to_string_pretty(&dry_run_json(&prepared.spec)).unwrap_or_default() + "\n"
        } else {
            spec_text(&call, &prepared.spec)
        };
        crate::output::print(&text);
        return Ok(0);
    }
    let run = project.run_tool(id, &caller, &opts, &CallOptions::default())?;
    print_warnings(&run.call, &run.prepared);
    let (result, prepared) = (run.result, run.prepared);
    if args.shared.json {
        let text = serde_json::to_string_pretty(&result.to_json()).unwrap_or_default() + "\n";
        crate::output::print(&text);
    } else {
        crate::output::print(&result.stdout);
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
