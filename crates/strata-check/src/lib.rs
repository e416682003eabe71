//! `strata check`: finds template mistakes across a whole project before anything runs.
//!
//! Every string leaf of every tool, runtime, directive, hook and plan is compiled through the stages
//! that will really see it; each placeholder is checked against the names available at that
//! stage (runtime parameters, config keys, declared parameters and inputs, earlier steps, hook
//! event fields, variables the chain sets), and text that looks like another layer's
//! placeholder in the wrong place is reported; `prompts/` and the graph nodes that render
//! its templates are checked too. Diagnostics have stable codes
//! (`docs/diagnostics.md`).

mod catalog;
mod diagnostic;
mod directives;
mod lints;
mod plans;
mod prompts;
mod records;
mod tools;

use std::collections::HashSet;
use std::path::Path;

pub use diagnostic::{Code, Diagnostic, Severity};
use strata_core::{Error, Limits};
use strata_exec::Project;

/// The outcome of checking a project.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every diagnostic, sorted by file, line and column.
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were read.
    pub files: usize,
    /// The diagnostics pushed so far, to drop repeats in constant time.
    seen: HashSet<Diagnostic>,
}

impl Report {
    /// Number of diagnostics of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    fn push(&mut self, d: Diagnostic) {
        if self.seen.insert(d.clone()) {
            self.diagnostics.push(d);
        }
    }
}

/// Checks every tool, runtime, directive, project hook and plan under `root`.
pub fn check_project(root: &Path, limits: &Limits) -> Result<Report, Error> {
    let mut project = Project::at(root)?;
    project.limits = limits.clone();
    let mut report = Report::default();
    tools::check(&project, &mut report);
    directives::check(&project, &mut report);
    prompts::check(&project, &mut report);
    plans::check(&project, &mut report);
    report.diagnostics.sort_by(|a, b| {
        (a.file.as_str(), a.line, a.column, a.code.id()).cmp(&(
            b.file.as_str(),
            b.line,
            b.column,
            b.code.id(),
        ))
    });
    Ok(report)
}
