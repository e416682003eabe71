//! Running one tool: the gate, the invocation (chain, parameters, environment), stages 3–6,
//! the spawn, and secrets redacted from what the tool wrote to stderr.

use serde_json::{Map, Value};
use strata_check::Target;
use strata_project::{CallerParams, ExecOptions, Invocation, Prepared};
use strata_tools::{CallOptions, RunResult, StepRecord, ToolRunner};

use crate::{App, Failure};

/// A tool that ran: the invocation, what was spawned, and the outcome.
#[derive(Debug)]
pub struct ToolRun {
    /// The call: chain, parameters, environment.
    pub call: Invocation,
    /// The rendered config and the spawn spec, with every warning.
    pub prepared: Prepared,
    /// What the process did (stderr with secret values redacted).
    pub result: RunResult,
}

impl App {
    /// Whether `target` may run: the refusal of the check when it finds errors (see
    /// [`crate::Refusal`]). Every operation that runs something calls it first, inside this
    /// crate: no front-end can run anything without it, nor needs to call it.
    pub(crate) fn admit(&self, target: Target<'_>, shown: &str) -> Result<(), Failure> {
        self.gate()
            .admit(self.project(), target, shown)
            .map(|_| ())
            .map_err(Failure::from)
    }

    /// Whether every tool of `ids` may run: one refusal, named `shown` (a plan), listing the
    /// errors of every tool the check rejects.
    pub(crate) fn admit_tools(&self, ids: &[String], shown: &str) -> Result<(), Failure> {
        self.gate()
            .admit_all(self.project(), ids, shown)
            .map_err(Failure::from)
    }

    /// The invocation of tool `id` with the caller's parameters, not checked by the gate:
    /// for showing what a call would do (`--explain`), never for running it.
    pub fn invocation(
        &self,
        id: &str,
        caller: &CallerParams,
        options: &ExecOptions,
    ) -> Result<Invocation, Failure> {
        Ok(Invocation::new(self.project(), id, caller, options)?)
    }

    /// Tool `id` through the gate and rendered into its spawn spec, without running it (a
    /// dry run).
    pub fn prepare_tool(
        &self,
        id: &str,
        caller: &CallerParams,
        options: &ExecOptions,
    ) -> Result<(Invocation, Prepared), Failure> {
        let admitted = self
            .gate()
            .admit(self.project(), Target::Tool(id), id)
            .map_err(Failure::from)?;
        let call = match admitted {
            Some(tool) => Invocation::of(self.project(), tool, id, caller, options)?,
            None => self.invocation(id, caller, options)?,
        };
        let prepared = call.prepare()?;
        Ok((call, prepared))
    }

    /// Calls tool `id` for a caller outside the project (a request of `run --batch`, an
    /// agent's call): what it may not call (a graph, an unknown id) or what the gate refuses
    /// (with the check's diagnostics) fails, anything else runs through a [`crate::Runner`] of
    /// its own — a marker in `params` is the caller's text, never a secret, and every secret
    /// the tool prints comes back as a marker. `Ok` whenever the tool ran.
    pub fn call_tool(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: ExecOptions,
        call: &CallOptions,
    ) -> Result<StepRecord, Failure> {
        self.callable(id).map_err(Failure::Error)?;
        self.admit(Target::Tool(id), id)?;
        let run = self
            .runner(options)
            .run(id, params, call)
            .map_err(Failure::Error)?;
        Ok(StepRecord::from_run(id, id, &run))
    }

    /// Runs tool `id`: the gate, stages 3–6 and a real process (its timeout capped by
    /// `call.timeout`). `Ok` whenever the tool ran, whether it succeeded or not.
    pub fn run_tool(
        &self,
        id: &str,
        caller: &CallerParams,
        options: &ExecOptions,
        call: &CallOptions,
    ) -> Result<ToolRun, Failure> {
        let (invocation, mut prepared) = self.prepare_tool(id, caller, options)?;
        if let Some(limit) = call.timeout {
            prepared.spec.timeout = prepared.spec.timeout.min(limit);
        }
        prepared.spec.cancel = options.cancel.clone();
        let mut result = strata_exec::spawn(&prepared.spec)?;
        result.redact_stderr(
            invocation
                .env()
                .vars
                .0
                .values()
                .filter(|v| v.secret)
                .map(|v| v.value.as_str()),
        );
        Ok(ToolRun {
            call: invocation,
            prepared,
            result,
        })
    }
}
