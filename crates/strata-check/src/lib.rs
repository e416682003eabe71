//! `strata check`: finds template mistakes across a whole project before anything runs.
//!
//! Every string leaf of every tool, runtime, directive, hook and plan is compiled through the stages
//! that will really see it; each placeholder is checked against the names available at that
//! stage (runtime parameters, config keys, declared parameters and inputs, earlier steps, hook
//! event fields, variables the chain sets), and text that looks like another layer's
//! placeholder in the wrong place is reported; `prompts/` and the graph nodes that render
//! its templates are checked too. Diagnostics have stable codes
//! (`docs/diagnostics.md`).

mod actions;
mod catalog;
mod diagnostic;
mod directives;
mod flow_names;
mod incremental;
mod lints;
mod names;
mod plans;
mod prompts;
mod records;
mod report;
mod tools;

use std::path::Path;

pub use diagnostic::{Code, Diagnostic, Severity};
pub use flow_names::{
    graph_state, plan_step_waits, plan_steps, prompt_key_sites, prompt_key_uses, prompt_keys_at,
    state_key_sites, step_id_site, step_result_paths, PromptKeySite, PromptKeyUse,
};
pub use incremental::ProjectIndex;
pub use names::{directive_inputs, tool_names, Known, Shown, ToolNames};
pub use report::{sort_diagnostics, FileReport, Omitted, OmittedCode, Report, SHOWN_PER_FILE};
use strata_core::{Error, Limits};
use strata_project::Project;

/// What is about to run, for [`check_file`].
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A tool or a graph, by id.
    Tool(&'a str),
    /// A directive file.
    Directive(&'a Path),
    /// The tools a plan's steps call, by id (the plan itself is checked as it loads).
    Tools(&'a [String]),
}

/// Checks one file before it runs, and the tools it calls: a tool through its executor
/// chain; a graph by its loader, with its actions' parameters and the tools it calls; a
/// directive with the project hooks it fires, its actions' parameters, and the tools its
/// actions, hooks and generator call. `strata run` refuses to run when this finds an error.
pub fn check_file(project: &Project, target: Target<'_>) -> Report {
    let mut report = Report::default();
    let mut done: Vec<String> = Vec::new();
    let mut called: Vec<String> = Vec::new();
    match target {
        Target::Tool(id) => {
            done.push(id.to_string());
            for graph in tools::check_ids(project, &done, &mut report) {
                called.extend(graph.called_tools());
                called.extend(graph.hooks.iter().map(|h| h.tool.clone()));
            }
        }
        Target::Directive(path) => {
            if let Some(d) = directives::check_one(project, path, &mut report) {
                called.extend(d.front.actions.iter().map(|a| a.tool.clone()));
                called.extend(d.front.hooks.iter().map(|h| h.action.tool.clone()));
                called.extend(d.generator().map(str::to_string));
            }
        }
        Target::Tools(ids) => called.extend(ids.iter().cloned()),
    }
    let mut ids: Vec<String> = Vec::new();
    for id in called {
        if !done.contains(&id) && !ids.contains(&id) && project.tool_path(&id).is_some() {
            ids.push(id);
        }
    }
    tools::check_ids(project, &ids, &mut report);
    report.finish();
    report
}

/// Checks every tool, runtime, directive, project hook and plan under `root`: a
/// [`Report::bounded`] one, each file keeping the first [`SHOWN_PER_FILE`] diagnostics of
/// each code and counting the rest.
pub fn check_project(root: &Path, limits: &Limits) -> Result<Report, Error> {
    let mut project = Project::at(root)?;
    project.limits = limits.clone();
    Ok(check_in(&project))
}

/// [`check_project`] of a project already opened: a tool it has compiled, whose files have
/// not changed since, is checked on the chain it holds compiled (its files are not read
/// again), so a project kept open is checked again at the cost of what changed in it.
pub fn check_in(project: &Project) -> Report {
    let mut report = Report::bounded();
    tools::check(project, &mut report);
    directives::check(project, &mut report);
    prompts::check(project, &mut report);
    plans::check(project, &mut report);
    report.finish();
    report
}
