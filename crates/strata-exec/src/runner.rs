//! [`ExecRunner`]: the [`ToolRunner`] that runs a project's tools for real.

use serde_json::{Map, Value};
use strata_core::Error;
use strata_tools::{CallOptions, RunResult, ToolRunner};

use crate::{spawn, CallerParams, ExecOptions, Invocation, Project};

/// Runs tools of a project through the full chain (stages 3–6 and a real subprocess): the
/// runner behind the CLI's directives, graphs, plans and hooks, and the language bindings.
pub struct ExecRunner<'a> {
    /// The project whose `tools/` are used.
    pub project: &'a Project,
    /// Strictness and environment for every run.
    pub options: ExecOptions,
}

impl ToolRunner for ExecRunner<'_> {
    fn has_tool(&self, id: &str) -> bool {
        self.project.tool_path(id).is_some()
    }

    fn unknown_tool(&self, id: &str) -> Error {
        self.project.unknown_tool(id, "tool")
    }

    fn callable(&self, id: &str) -> Result<(), Error> {
        self.project.callable(id)
    }

    fn parameters(&self, id: &str) -> Option<Value> {
        crate::tool_parameters(self.project, id)
    }

    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error> {
        let caller = CallerParams {
            typed: params.clone(),
            strings: Vec::new(),
        };
        let call = Invocation::new(self.project, id, &caller, &self.options)?;
        let mut prepared = call.prepare()?;
        if let Some(limit) = options.timeout {
            prepared.spec.timeout = prepared.spec.timeout.min(limit);
        }
        let mut run = spawn(&prepared.spec)?;
        let vars = &call.env().vars;
        run.redact_stderr(
            vars.0
                .values()
                .filter(|v| v.secret)
                .map(|v| v.value.as_str()),
        );
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use strata_core::ErrorKind;

    use super::*;

    fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools");
        std::fs::create_dir_all(tools.join("runtimes")).unwrap();
        std::fs::write(
            tools.join("runtimes/subprocess.yaml"),
            "config: {args: [], timeout: 60}\n",
        )
        .unwrap();
        std::fs::write(
            tools.join("say.yaml"),
            "executor: runtimes/subprocess\n\
             parameters: {type: object, properties: {word: {type: string}}}\n\
             config: {command: printf, args: ['%s', '{word}']}\n",
        )
        .unwrap();
        std::fs::write(
            tools.join("nap.yaml"),
            "executor: runtimes/subprocess\nconfig: {command: sleep, args: ['5']}\n",
        )
        .unwrap();
        let project = Project::at(dir.path()).unwrap();
        (dir, project)
    }

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn runs_a_tool_and_passes_the_callers_parameters_as_data() {
        let (_dir, project) = project();
        let runner = ExecRunner {
            project: &project,
            options: ExecOptions::default(),
        };
        assert!(runner.has_tool("say"));
        let run = runner
            .run(
                "say",
                &params(json!({"word": "${HOME}"})),
                &CallOptions::default(),
            )
            .unwrap();
        assert!(run.success);
        assert_eq!(run.stdout, b"${HOME}");
    }

    #[test]
    fn an_unknown_tool_is_an_error_with_a_suggestion() {
        let (_dir, project) = project();
        let runner = ExecRunner {
            project: &project,
            options: ExecOptions::default(),
        };
        assert!(!runner.has_tool("sai"));
        let err = runner
            .run("sai", &Map::new(), &CallOptions::default())
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::UnknownTool);
        assert_eq!(err.message, "unknown tool `sai`");
        assert_eq!(err.hint.as_deref(), Some("did you mean `say`?"));
    }

    #[test]
    fn the_call_timeout_caps_the_tools_own() {
        let (_dir, project) = project();
        let runner = ExecRunner {
            project: &project,
            options: ExecOptions::default(),
        };
        let options = CallOptions {
            timeout: Some(Duration::from_millis(100)),
        };
        let run = runner.run("nap", &Map::new(), &options).unwrap();
        assert!(run.timed_out);
        assert!(!run.success);
    }
}
