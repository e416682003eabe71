//! Directives through the application layer: the project's hooks and the directive loaded
//! with the project's tools and limits, the gate over the directive, its inputs bound, and the
//! run — every tool call through the one [`crate::Runner`].

use std::path::Path;

use serde_json::{Map, Value};
use strata_check::Target;
use strata_core::{Error, Location};
use strata_directive::{load_project_hooks, Directive, Report, RunOptions, Watch};

use crate::directive_record::{DirectiveRecord, DirectiveStart};
use strata_project::ExecOptions;

use crate::{App, Failure};

/// A directive run to make.
#[derive(Debug)]
pub struct DirectiveCall<'a> {
    /// The directive file.
    pub path: &'a Path,
    /// The caller's inputs, typed by the directive's declarations.
    pub inputs: &'a Map<String, Value>,
    /// Render everything, run nothing.
    pub dry_run: bool,
    /// Strictness and environment of every render and tool call.
    pub options: ExecOptions,
    /// Told of each action and hook as it happens.
    pub watch: Watch<'a>,
}

impl App {
    /// Runs a directive: has the gate admit it (with the project hooks it fires and the tools
    /// it calls: a refusal lists every error), loads the hooks and the directive, binds the
    /// inputs and runs it; an error about one of its fields is located in its file.
    pub fn run_directive(&self, call: DirectiveCall<'_>) -> Result<Report, Failure> {
        let absolute = strata_project::normal(call.path);
        let shown = self.display_name(&absolute);
        let text = self.read_text(&absolute)?;
        self.admit(Target::Directive(&absolute), &shown)?;
        let runner = self.runner(call.options.clone());
        let hooks = load_project_hooks(&self.root, &runner, &self.limits)?;
        let directive = Directive::load(&shown, &text, &runner, &hooks, &self.limits)?;
        let inputs = directive.bind_inputs(call.inputs)?;
        let tools: Vec<&str> = directive
            .front
            .actions
            .iter()
            .map(|a| a.tool.as_str())
            .chain(directive.generator())
            .collect();
        let secrets = crate::secrets::secret_values(Some(self.project()), &tools, &[]);
        let options = |watch| RunOptions {
            dry_run: call.dry_run,
            render: call.options.render,
            secrets: &secrets,
            watch,
        };
        if call.dry_run {
            return directive
                .run(&inputs, &runner, options(call.watch))
                .map_err(|e| Failure::Error(located(&directive, e)));
        }
        // A run that runs something is recorded; a dry run runs nothing and is not.
        let start = DirectiveStart {
            name: &shown,
            text: &text,
            actions: directive
                .front
                .actions
                .iter()
                .map(|a| (a.id.as_str(), a.tool.as_str()))
                .collect(),
            tools: &tools,
        };
        let record = DirectiveRecord::open(self, &start, call.watch)?;
        let outcome = directive
            .run(&inputs, &runner, options(Watch(Some(&record))))
            .map_err(|e| located(&directive, e));
        record.finish(outcome.as_ref())?;
        outcome.map_err(Failure::Error)
    }
}

/// An error about a field of the directive, with its file, line and column.
fn located(directive: &Directive, mut e: Error) -> Error {
    if e.location().is_none() && !e.path().is_root() {
        let (line, column) = directive.locate(e.path(), e.span().map(|s| s.start));
        e = e.at_location(Location {
            file: directive.file.clone(),
            line,
            column,
        });
    }
    e
}
