//! [`Runner`]: the one [`ToolRunner`] that runs a project's tools for real — through the gate,
//! the executor chain, stages 3–6 and a real subprocess — and keeps secrets out of what it
//! returns: secret values on stdout become markers (see [`crate::secret_marks`]), and markers
//! in a call's parameters become the values again, from the environment.

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer};
use strata_project::{CallerParams, ExecOptions};
use strata_tools::{CallOptions, RunResult, ToolRunner};

use crate::secret_marks::{self, Secret};
use crate::{secrets, App, ToolRun};

/// Runs tools of a project: the runner behind directives, graphs, plans and hooks, in every
/// front-end. Each call passes the gate first. What a tool prints on stdout comes back with
/// every secret value replaced by a marker naming its variable, so no record, checkpoint or
/// display holds the value; a marker in a later call's parameters is the value again.
pub struct Runner<'a> {
    /// The application whose project's `tools/` are used.
    pub app: &'a App,
    /// Strictness and environment for every run.
    pub options: ExecOptions,
}

impl ToolRunner for Runner<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.app.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.app.unknown_tool(id, "tool")
    }

    fn callable(&self, id: &str) -> Result<(), Error> {
        self.app.callable(id)
    }

    fn parameters(&self, id: &str) -> Option<Value> {
        strata_project::tool_parameters(self.app.project(), id)
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error> {
        let mut typed = params.clone();
        let mut environment = secrets::environment(self.app.project());
        let mut restored: Vec<Secret> = Vec::new();
        for value in typed.values_mut() {
            let found = secret_marks::restore_value(value, &mut environment).map_err(|name| {
                secrets::unrestorable(
                    &name,
                    &format!("a parameter of tool `{id}`"),
                    Layer::ENV,
                    ErrorKind::Undefined,
                )
            })?;
            for secret in found {
                if !restored.contains(&secret) {
                    restored.push(secret);
                }
            }
        }
        let caller = CallerParams {
            typed,
            strings: Vec::new(),
        };
        let run = self
            .app
            .run_tool(id, &caller, &self.options, options)
            .map_err(|f| redacted(f.into_error(), &restored))?;
        Ok(marked(run, restored))
    }
}

/// The run's result with restored values redacted from stderr and every secret on stdout
/// marked: the secrets restored into the call first, then those the chain declared, then any
/// other secret variable of the call.
fn marked(run: ToolRun, restored: Vec<Secret>) -> RunResult {
    let env = &run.call.env();
    let mut secrets = restored;
    let declared = env.secrets.iter().map(String::as_str);
    let others = env
        .vars
        .0
        .iter()
        .filter(|(_, v)| v.secret)
        .map(|(k, _)| k.as_str());
    for name in declared.chain(others) {
        let Some(var) = env.vars.0.get(name) else {
            continue;
        };
        if !var.value.is_empty() && !secrets.iter().any(|s| s.name == name) {
            secrets.push(Secret {
                name: name.to_owned(),
                value: var.value.clone(),
            });
        }
    }
    let mut result = run.result;
    result.redact_stderr(secrets.iter().map(|s| s.value.as_str()));
    if let Some(stdout) = secret_marks::mark_stdout(&result.stdout, &secrets) {
        result.stdout = stdout;
    }
    result
}

/// `error` with the values of `restored` secrets replaced by their markers.
fn redacted(mut error: Error, restored: &[Secret]) -> Error {
    if restored.is_empty() {
        return error;
    }
    if let Some(message) = secret_marks::mark_text(&error.message, restored) {
        error.message = message;
    }
    if let Some(hint) = error
        .hint
        .as_deref()
        .and_then(|h| secret_marks::mark_text(h, restored))
    {
        error.hint = Some(hint);
    }
    error
}
