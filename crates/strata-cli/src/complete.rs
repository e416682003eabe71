//! Completion that knows the project: clap_complete's dynamic engine (`COMPLETE=bash strata
//! -- strata run gr<TAB>`), whose candidates for tool ids, directive and graph paths, plan
//! files, prompt keys and run ids come from the project of the current directory (the
//! nearest ancestor with `tools/`). `strata completions SHELL` prints the script a shell
//! sources once; the script calls strata back for every completion, so what it offers is
//! always the project's state at that moment.

use std::path::{Path, PathBuf};

use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use strata_app::App;

/// The environment variable that turns a run of strata into a completion request.
pub(crate) const VAR: &str = "COMPLETE";

/// Answers a completion request (`COMPLETE=<shell> strata -- …`) and exits; does nothing
/// on an ordinary run. A `-C DIR` on the line being completed is honoured as the command
/// would honour it: the candidates are those of DIR.
pub(crate) fn answer_and_exit() {
    if std::env::var_os(VAR).is_some_and(|v| !v.is_empty()) {
        let words: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if let Some(dir) = project_dir(&words) {
            // A directory that cannot be entered offers what the current one has.
            let _ = std::env::set_current_dir(dir);
        }
    }
    clap_complete::CompleteEnv::with_factory(crate::command)
        .var(VAR)
        .complete();
}

/// The directory of the last `-C DIR` (`-CDIR`, `--project DIR`, `--project=DIR`) among the
/// words of a completion request before the one being completed.
fn project_dir(words: &[std::ffi::OsString]) -> Option<PathBuf> {
    let line = words.iter().position(|w| w == "--")?;
    let typed = words.get(line + 1..words.len().saturating_sub(1))?;
    let mut dir = None;
    let mut it = typed.iter().filter_map(|w| w.to_str());
    while let Some(word) = it.next() {
        if word == "-C" || word == "--project" {
            dir = it.next().map(PathBuf::from);
        } else if let Some(d) = word.strip_prefix("--project=") {
            dir = Some(PathBuf::from(d));
        } else if let Some(d) = word.strip_prefix("-C").filter(|d| !d.is_empty()) {
            dir = Some(PathBuf::from(d));
        }
    }
    dir
}

/// The project of the current directory, quietly (no project: no candidates).
fn project() -> Option<App> {
    App::open(None, None).ok()
}

fn candidate(value: impl Into<String>, help: Option<&str>) -> CompletionCandidate {
    let help = help.map(|h| h.lines().next().unwrap_or_default().to_string().into());
    CompletionCandidate::new(value.into()).help(help)
}

/// Tool ids (graphs included), with their descriptions.
fn tool_candidates(only_graphs: bool) -> Vec<CompletionCandidate> {
    let Some(app) = project() else {
        return Vec::new();
    };
    app.list()
        .into_iter()
        .filter(|e| !only_graphs || app.is_graph(&e.id))
        .filter(|e| !e.id.starts_with("runtimes/"))
        .map(|e| candidate(&e.id, e.description.as_deref().ok()))
        .collect()
}

/// The files under `dir` of the project (relative to the current directory, as a user types
/// them) whose extension is one of `exts`, depth first, sorted.
fn files(app: &App, dir: &str, exts: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![app.root.join(dir)];
    let cwd = std::env::current_dir().unwrap_or_default();
    let base = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
            {
                out.push(shown(&base, &path));
            }
        }
    }
    out.sort();
    out
}

/// `path` relative to `base` when it lies under it, else as it is.
fn shown(base: &Path, path: &Path) -> String {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
    real.strip_prefix(base)
        .map(Path::to_path_buf)
        .unwrap_or(real)
        .display()
        .to_string()
}

fn directive_candidates() -> Vec<CompletionCandidate> {
    project().map_or_else(Vec::new, |app| {
        files(&app, "directives", &["md"])
            .into_iter()
            .map(|f| candidate(f, Some("directive")))
            .collect()
    })
}

/// What `strata run` takes: tool and graph ids, and directive files.
pub(crate) fn runnables() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let mut all = tool_candidates(false);
        all.extend(directive_candidates());
        all
    })
}

/// Tool ids (graphs included).
pub(crate) fn tools() -> ArgValueCandidates {
    ArgValueCandidates::new(|| tool_candidates(false))
}

/// Graph ids.
pub(crate) fn graphs() -> ArgValueCandidates {
    ArgValueCandidates::new(|| tool_candidates(true))
}

fn plan_candidates() -> Vec<CompletionCandidate> {
    project().map_or_else(Vec::new, |app| {
        files(&app, "plans", &["yaml", "yml", "json"])
            .into_iter()
            .map(|f| candidate(f, Some("plan")))
            .collect()
    })
}

/// Plan files under `plans/`.
pub(crate) fn plans() -> ArgValueCandidates {
    ArgValueCandidates::new(plan_candidates)
}

/// What `strata export argo` takes: plan files and graph ids.
pub(crate) fn exportables() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let mut all = plan_candidates();
        all.extend(tool_candidates(true));
        all
    })
}

/// Prompt keys: the name of each template (in any namespace).
pub(crate) fn prompt_keys() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let Some(app) = project() else {
            return Vec::new();
        };
        let Ok(manager) = strata_prompts::PromptManager::load(&app.root, &app.limits) else {
            return Vec::new();
        };
        manager
            .keys()
            .into_iter()
            .map(|k| candidate(k, Some("prompt")))
            .collect()
    })
}

/// The options of `strata run` that take a value, as a line spells them.
const RUN_VALUED: [&str; 10] = [
    "-p",
    "--param",
    "--params-json",
    "--input",
    "--resume",
    "--run-id",
    "--checkpoint-every",
    "-C",
    "--project",
    "--color",
];

/// The target of `strata run` on the line being completed: the first word after `run`
/// that is neither an option nor an option's value (the word being completed aside).
fn run_target() -> Option<String> {
    let words: Vec<String> = std::env::args().collect();
    let line = words.iter().position(|w| w == "--")?;
    let typed = words.get(line + 2..words.len().saturating_sub(1))?;
    let mut it = typed.iter().skip_while(|w| *w != "run").skip(1);
    while let Some(word) = it.next() {
        if RUN_VALUED.contains(&word.as_str()) {
            it.next();
        } else if !word.starts_with('-') {
            return Some(word.clone());
        }
    }
    None
}

/// `NAME=` for each name, with its help.
fn assignments(names: Vec<(String, Option<String>)>) -> Vec<CompletionCandidate> {
    names
        .into_iter()
        .map(|(name, help)| candidate(format!("{name}="), help.as_deref()))
        .collect()
}

/// The properties of a parameter schema, with their descriptions.
fn properties(schema: Option<&serde_json::Value>) -> Vec<(String, Option<String>)> {
    let Some(props) = schema.and_then(|s| s["properties"].as_object()) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(k, v)| (k.clone(), v["description"].as_str().map(str::to_string)))
        .collect()
}

/// The parameters of the tool or graph `target` names.
fn parameters_of(app: &App, target: &str) -> Vec<(String, Option<String>)> {
    let Ok(id) = crate::names::tool_id(app, target) else {
        return Vec::new();
    };
    let doc = app.tool_path(&id).and_then(|path| {
        let bytes = app.read(&path).ok()?;
        let format = strata_doc::Format::Yaml;
        strata_doc::Document::parse(&id, bytes, format, &app.limits).ok()
    });
    properties(doc.as_ref().map(|d| &d.value["parameters"]))
}

/// `NAME=` for each parameter of the tool `strata run` names (`-p`).
pub(crate) fn param_names() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let (Some(app), Some(target)) = (project(), run_target()) else {
            return Vec::new();
        };
        assignments(parameters_of(&app, &target))
    })
}

/// `NAME=` for each input of the directive or graph `strata run` names (`--input`).
pub(crate) fn input_names() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let (Some(app), Some(target)) = (project(), run_target()) else {
            return Vec::new();
        };
        if !target.ends_with(".md") {
            return assignments(parameters_of(&app, &target));
        }
        let path = strata_app::normal(Path::new(&target));
        let Ok(front) = crate::catalog::front_matter(&app, &path) else {
            return Vec::new();
        };
        let inputs = front["inputs"].as_array().into_iter().flatten();
        let names = inputs.filter_map(|i| {
            let name = i["name"].as_str()?.to_string();
            Some((name, i["description"].as_str().map(str::to_string)))
        });
        assignments(names.collect())
    })
}

/// Run ids of `.strata/runs/`, with what each ran and its status.
pub(crate) fn run_ids() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let Some(app) = project() else {
            return Vec::new();
        };
        let store = strata_graph::RunStore::new(&app.root);
        crate::runs_table::rows(&store)
            .iter()
            .map(|r| {
                let help = format!("{} ({})", r.target(), r.status());
                candidate(r.id(), Some(&help))
            })
            .collect()
    })
}
