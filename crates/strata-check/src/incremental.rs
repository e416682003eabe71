//! The check of a project kept in memory and brought up to date as its files change: what a
//! front-end that checks one project again and again (the language server) holds.
//!
//! Every tool, directive and plan is a unit with its own diagnostics and what its verdict
//! depends on: a tool, the files of its executor chain and whether it is some tool's
//! runtime; a graph, its file and the tools it calls; a directive or a plan, its file and the
//! tools it (its hooks included) calls. After an edit only the units whose dependencies
//! changed are checked again, and the report is put together from every unit's diagnostics
//! in the order a whole check finds them, so it is the report of [`crate::check_in`].
//! A unit that did not load is checked again after every change (what it would have read
//! is not known); a change of anything else (`.env`, `strata.yaml`, `hooks/`, `prompts/`,
//! a script) or of the set of files (one added, removed or renamed) checks everything.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use strata_project::Project;
use strata_tools::Hook;

use crate::diagnostic::Diagnostic;
use crate::tools::{Loaded, ProjectFacts, Unit};
use crate::{directives, plans, prompts, tools, Report};

/// A project's check, unit by unit.
#[derive(Debug, Default)]
pub struct ProjectIndex {
    tools: BTreeMap<String, ToolUnit>,
    /// The project hooks' diagnostics (and their own when no directive fires them).
    hooks: Found,
    directives: Vec<FileUnit>,
    prompts: Found,
    plans: Vec<FileUnit>,
}

/// Diagnostics in the order they were found, and how many files were read.
#[derive(Debug, Default, Clone)]
struct Found {
    diagnostics: Vec<Diagnostic>,
    files: usize,
}

impl From<Report> for Found {
    fn from(report: Report) -> Found {
        Found {
            diagnostics: report.diagnostics,
            files: report.files,
        }
    }
}

/// One tool's part of the check.
#[derive(Debug, Default)]
struct ToolUnit {
    /// Its file, relative to the project.
    file: String,
    /// What loading it found (a graph's check is all there).
    load: Found,
    /// What checking its executor chain found.
    chain: Vec<Diagnostic>,
    /// The files its verdict read; `None` when it did not load.
    reads: Option<Vec<String>>,
    /// Its executors (none for a graph).
    executors: Vec<String>,
    /// The tools a graph calls.
    calls: Vec<String>,
    graph: bool,
    /// Whether it was checked as a runtime.
    runtime: bool,
}

/// One directive's or plan's part of the check.
#[derive(Debug)]
struct FileUnit {
    path: PathBuf,
    /// Its file, relative to the project.
    file: String,
    found: Found,
    /// The tools it calls; `None` when it did not load.
    calls: Option<Vec<String>>,
}

impl ProjectIndex {
    /// Checks every file of `project`, unit by unit.
    pub fn build(project: &Project) -> ProjectIndex {
        let mut index = ProjectIndex::default();
        index.check_tools(project, project.tool_ids().into_iter().collect());
        let paths = directives::paths(project);
        let hooks = index.check_hooks(project, paths.is_empty());
        index.directives = paths
            .into_iter()
            .map(|path| check_directive(project, path, &hooks))
            .collect();
        index.prompts = check_prompts(project);
        index.plans = plans::paths(project)
            .into_iter()
            .map(|path| check_plan(project, path))
            .collect();
        index
    }

    /// Brings the index up to date after the files `changed` (relative to the project's
    /// root) changed; returns the files checked again, sorted.
    pub fn update(&mut self, project: &Project, changed: &[String]) -> Vec<String> {
        if !self.tracks(project, changed) {
            *self = ProjectIndex::build(project);
            return self.files();
        }
        let touched = |reads: &[String]| reads.iter().any(|r| changed.contains(r));
        let stale: BTreeSet<String> = self
            .tools
            .iter()
            .filter(|(_, u)| u.reads.as_deref().is_none_or(touched))
            .map(|(id, _)| id.clone())
            .collect();
        let graphs_before: HashSet<String> = self.graph_like(&stale);
        let again = self.check_tools(project, stale);
        let mut rechecked: BTreeSet<String> =
            again.iter().map(|id| self.tools[id].file.clone()).collect();
        let calls_again = |calls: &Option<Vec<String>>| {
            calls
                .as_ref()
                .is_none_or(|c| c.iter().any(|id| again.contains(id)))
        };
        let hooks = self.check_hooks(project, self.directives.is_empty());
        for unit in &mut self.directives {
            if changed.contains(&unit.file) || calls_again(&unit.calls) {
                *unit = check_directive(project, unit.path.clone(), &hooks);
                rechecked.insert(unit.file.clone());
            }
        }
        for unit in &mut self.plans {
            if changed.contains(&unit.file) || calls_again(&unit.calls) {
                *unit = check_plan(project, unit.path.clone());
                rechecked.insert(unit.file.clone());
            }
        }
        if !graphs_before.is_empty() || !self.graph_like(&again).is_empty() {
            self.prompts = check_prompts(project);
        }
        rechecked.into_iter().collect()
    }

    /// The report of the project as [`crate::check_in`] makes it: every unit's
    /// diagnostics in the order a whole check finds them (each tool loaded, then each
    /// executor chain checked, then the hooks, directives, prompts and plans).
    pub fn report(&self) -> Report {
        let loads = self.tools.values().map(|u| &u.load);
        let rest = [&self.hooks]
            .into_iter()
            .chain(self.directives.iter().map(|u| &u.found))
            .chain([&self.prompts])
            .chain(self.plans.iter().map(|u| &u.found));
        let chains = self.tools.values().map(|u| &u.chain);
        let mut report = Report::bounded();
        let found = loads.clone().map(|f| &f.diagnostics);
        let after = rest.clone().map(|f| &f.diagnostics);
        for d in found.chain(chains).chain(after).flatten() {
            report.push(d.clone());
        }
        report.files = loads.chain(rest).map(|f| f.files).sum();
        report.finish();
        report
    }

    /// Every file the index checks, sorted.
    fn files(&self) -> Vec<String> {
        let tools = self.tools.values().map(|u| u.file.clone());
        let others = self.directives.iter().chain(&self.plans);
        let mut all: Vec<String> = tools.chain(others.map(|u| u.file.clone())).collect();
        all.sort();
        all
    }

    /// Whether every file of `changed` is one the units know, and the project still has
    /// the same tools, directives and plans.
    fn tracks(&self, project: &Project, changed: &[String]) -> bool {
        let known = |f: &String| {
            self.tools
                .values()
                .any(|u| u.file == *f || u.reads.iter().flatten().any(|r| r == f))
                || self
                    .directives
                    .iter()
                    .chain(&self.plans)
                    .any(|u| u.file == *f)
        };
        let same = |units: &[FileUnit], paths: Vec<PathBuf>| {
            units.len() == paths.len() && units.iter().zip(&paths).all(|(u, p)| u.path == *p)
        };
        !self.tools.is_empty()
            && changed.iter().all(known)
            && project.tool_ids().iter().eq(self.tools.keys())
            && same(&self.directives, directives::paths(project))
            && same(&self.plans, plans::paths(project))
    }

    /// Those of `ids` that are graphs or did not load (and may be graphs).
    fn graph_like(&self, ids: &BTreeSet<String>) -> HashSet<String> {
        ids.iter()
            .filter(|id| {
                self.tools
                    .get(*id)
                    .is_none_or(|u| u.graph || u.reads.is_none())
            })
            .cloned()
            .collect()
    }

    /// Checks the tools `ids` again, and the tools whose verdict that changes: the graphs
    /// that call them and the tools that become or stop being some tool's runtime. Returns
    /// every tool checked.
    fn check_tools(&mut self, project: &Project, ids: BTreeSet<String>) -> BTreeSet<String> {
        let mut done = BTreeSet::new();
        let mut chains: Vec<(String, Loaded)> = Vec::new();
        let mut todo = ids;
        while !todo.is_empty() {
            for id in &todo {
                let mut report = Report::default();
                let unit = tools::load(project, id, &mut report);
                let file = project
                    .tool_path(id)
                    .map(|p| project.display_name(&p))
                    .unwrap_or_else(|| format!("tools/{id}.yaml"));
                let mut entry = ToolUnit {
                    reads: Some(vec![file.clone()]),
                    file,
                    load: Found::from(report),
                    ..ToolUnit::default()
                };
                match unit {
                    Unit::Chain(chain) => {
                        entry.executors = tools::executors(&chain).collect();
                        entry.reads =
                            Some(chain.links.iter().map(|l| l.doc.name.clone()).collect());
                        chains.push((id.clone(), chain));
                    }
                    Unit::Graph(Some(graph)) => {
                        entry.graph = true;
                        entry.calls = graph.called_tools();
                        entry
                            .calls
                            .extend(graph.hooks.iter().map(|h| h.tool.clone()));
                    }
                    Unit::Graph(None) => {
                        entry.graph = true;
                        entry.reads = None;
                    }
                    Unit::Failed => entry.reads = None,
                }
                self.tools.insert(id.clone(), entry);
            }
            done.extend(std::mem::take(&mut todo));
            let runtimes = self.runtimes();
            for (id, unit) in &self.tools {
                let flipped = unit.runtime != runtimes.contains(id);
                let calls_done = unit.calls.iter().any(|c| done.contains(c));
                if !done.contains(id) && (flipped || calls_done) {
                    todo.insert(id.clone());
                }
            }
        }
        let runtimes = self.runtimes();
        let facts = ProjectFacts::new(project, runtimes.clone());
        for (id, unit) in &mut self.tools {
            unit.runtime = runtimes.contains(id);
        }
        for (id, chain) in chains {
            let mut report = Report::default();
            tools::check_chain(
                &chain,
                &project.limits,
                &facts,
                &mut report,
                &mut HashSet::new(),
            );
            if let Some(unit) = self.tools.get_mut(&id) {
                unit.chain = report.diagnostics;
            }
        }
        done
    }

    /// The tools checked as runtimes: those under `runtimes/` and every tool's executors.
    fn runtimes(&self) -> HashSet<String> {
        let under = self.tools.keys().filter(|id| id.starts_with("runtimes/"));
        let named = self.tools.values().flat_map(|u| u.executors.iter());
        under.chain(named).cloned().collect()
    }

    /// Loads the project's hooks again (checking them alone when `lone`: no directive
    /// fires them); returns them.
    fn check_hooks(&mut self, project: &Project, lone: bool) -> Vec<Arc<Hook>> {
        let mut report = Report::default();
        let hooks = directives::project_hooks(project, &mut report);
        if lone {
            directives::check_lone_hooks(project, &hooks, &mut report);
        }
        self.hooks = Found::from(report);
        hooks
    }
}

fn check_directive(project: &Project, path: PathBuf, hooks: &[Arc<Hook>]) -> FileUnit {
    let mut report = Report::default();
    let loaded = directives::check_at(project, &path, hooks, &mut report);
    FileUnit {
        file: project.display_name(&path),
        path,
        found: Found::from(report),
        calls: loaded.map(|d| d.called_tools()),
    }
}

fn check_plan(project: &Project, path: PathBuf) -> FileUnit {
    let mut report = Report::default();
    let calls = plans::check_one(project, &path, &mut report);
    FileUnit {
        file: project.display_name(&path),
        path,
        found: Found::from(report),
        calls: Some(calls),
    }
}

fn check_prompts(project: &Project) -> Found {
    let mut report = Report::default();
    prompts::check(project, &mut report);
    Found::from(report)
}
