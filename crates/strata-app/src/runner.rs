//! [`Runner`]: the one [`ToolRunner`] that runs a project's tools for real — through the gate,
//! the executor chain, stages 3–6 and a real subprocess — and keeps secrets out of what it
//! returns: secret values on stdout become markers minted under the run's key (see
//! [`crate::secret_marks`]), and markers minted under that key, and only those, become the
//! values again when they reach a later call's parameters.

use serde_json::{Map, Value};
use strata_core::secret_marks::MarkKey;
use strata_core::{Error, ErrorKind, Layer};
use strata_project::{CallerParams, ExecOptions};
use strata_tools::{CallOptions, RunResult, ToolRunner};

use crate::secret_marks::{self, Secret};
use crate::{secrets, App, ToolRun};

/// Tool calls made on another machine (a Ray task, say): the run's scheduling, records and
/// checkpoints stay here, and each call goes there with its parameters as the run holds
/// them — secret markers, never values — and the run's marker key, with which the other side
/// restores them from its own environment ([`App::runner`] with [`Runner::with_marks`]) and
/// marks what the tool prints.
pub trait RemoteTools: Sync {
    /// Runs tool `id` there with `params`; `Ok` whenever the tool ran.
    fn call(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
        marks: &MarkKey,
    ) -> Result<RunResult, Error>;
}

/// Runs tools of a project: the runner behind directives, graphs, plans and hooks, in every
/// front-end. Each call passes the gate first. What a tool prints on stdout comes back with
/// every secret value replaced by a marker minted under the run's key, so no record,
/// checkpoint or display holds the value; such a marker in a later call's parameters is the
/// value again. Any other text — a caller's, forged markers included — reaches the tool as it
/// was.
pub struct Runner<'a> {
    app: &'a App,
    options: ExecOptions,
    marks: MarkKey,
    remote: Option<&'a dyn RemoteTools>,
}

impl App {
    /// The runner of this project's tools with `options`, for a run of its own: its markers
    /// are minted under a new random key, so nothing a caller gives it is ever restored.
    pub fn runner(&self, options: ExecOptions) -> Runner<'_> {
        Runner {
            app: self,
            options,
            marks: MarkKey::from_bytes(crate::keys::Key::random().bytes()),
            remote: None,
        }
    }
}

impl<'a> Runner<'a> {
    /// The runner of a run whose markers are minted under `marks`: the run's own key (a
    /// recorded run's, see [`crate::marks`]), or the key a run on another machine sent with
    /// its call.
    pub fn with_marks(mut self, marks: MarkKey) -> Runner<'a> {
        self.marks = marks;
        self
    }

    /// The runner whose calls run on another machine through `remote` (the checks stay
    /// here).
    pub fn remote(mut self, remote: &'a dyn RemoteTools) -> Runner<'a> {
        self.remote = Some(remote);
        self
    }

    /// The key the run's markers are minted under.
    pub fn marks(&self) -> &MarkKey {
        &self.marks
    }

    /// Strictness and environment of every call.
    pub fn options(&self) -> &ExecOptions {
        &self.options
    }

    /// The application.
    pub fn app(&self) -> &'a App {
        self.app
    }
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

    fn scale(&self, id: &str) -> strata_tools::Scale {
        strata_project::tool_scale(self.app.project(), id)
    }

    fn cancelled(&self) -> bool {
        self.options
            .cancel
            .as_ref()
            .is_some_and(strata_exec::Cancel::is_cancelled)
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error> {
        if let Some(remote) = self.remote {
            return remote.call(id, params, options, &self.marks);
        }
        let mut typed = params.clone();
        let mut environment = secrets::environment(self.app.project());
        let mut restored: Vec<Secret> = Vec::new();
        for value in typed.values_mut() {
            let found = secret_marks::restore_value(value, &self.marks, &mut environment).map_err(
                |name| {
                    secrets::unrestorable(
                        &name,
                        &format!("a parameter of tool `{id}`"),
                        Layer::ENV,
                        ErrorKind::Undefined,
                    )
                },
            )?;
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
            .map_err(|f| redacted(f.into_error(), &restored, &self.marks))?;
        Ok(marked(run, restored, &self.marks))
    }
}

/// The run's result with restored values redacted from stderr and every secret on stdout
/// marked: the secrets restored into the call first, then those the chain declared, then any
/// other secret variable of the call.
fn marked(run: ToolRun, restored: Vec<Secret>, marks: &MarkKey) -> RunResult {
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
    if let Some(stdout) = secret_marks::mark_stdout(&result.stdout, &secrets, marks) {
        result.stdout = stdout;
    }
    result
}

/// `error` with the values of `restored` secrets replaced by their markers.
fn redacted(mut error: Error, restored: &[Secret], marks: &MarkKey) -> Error {
    if restored.is_empty() {
        return error;
    }
    if let Some(message) = secret_marks::mark_text(error.message(), restored, marks) {
        error = error.with_message(message);
    }
    if let Some(hint) = error
        .hint()
        .and_then(|h| secret_marks::mark_text(h, restored, marks))
    {
        error = error.with_hint(hint);
    }
    error
}
