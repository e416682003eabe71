//! The project as it is on disk: its root, its settings (`strata.yaml` and `STRATA_*` over
//! the defaults, each with its source) and limits, the `tools/` tree (ids, paths confined to
//! the project), executor chains (tool → runtimes → `subprocess` primitive), the tool compile
//! cache, and one call of a tool rendered through the post-dispatch half of SPEC §2: merge the
//! configs, validate the caller's parameters, build the environment layer by layer, render
//! stages 3–6 (`${NAME}`, `{param}`, `${NAME}`, `{param}`) into a [`strata_exec::SpawnSpec`].
//!
//! It decides nothing about whether a call may run: that is the application layer's rule
//! (`strata-app`), which every front-end goes through.
//!
//! ```no_run
//! use strata_project::{CallerParams, ExecOptions, Invocation, Project};
//! let project = Project::discover(std::path::Path::new(".")).unwrap();
//! let call = Invocation::new(&project, "examples/echo", &CallerParams::default(), &ExecOptions::default()).unwrap();
//! let prepared = call.prepare().unwrap();
//! println!("{}", strata_project::dry_run_json(&prepared.spec));
//! ```

mod cache;
mod chain;
mod registry;
pub mod settings;
mod spec;
mod stages;
mod tool_env;
mod tool_file;

pub use chain::{merge_into, Link, ToolChain, MAX_LINKS, PRIMITIVE};
pub use registry::{normal, Project, ToolEntry};
pub use settings::Settings;
pub use spec::{build_spec, dry_run_json, DEFAULT_TIMEOUT_SECS};
pub use stages::{
    as_literal, explain_config, render_string, restore_literals, stage_chain, take_literals,
    Literal, FIRST_STAGE,
};
pub use strata_tools::{
    check_schema, coerce, summary, type_name, validate, RunResult, SchemaError,
};
pub use tool_env::resolve_env;
pub use tool_file::{read_tool_file, EnvConfig, Interpreter, InterpreterKind, ToolFile};

use std::sync::Arc;

use serde_json::{Map, Value};
use strata_core::{EnvMap, Error, RenderOptions, Rendered, Scope, Warning};
use strata_exec::{process_env, ResolvedEnv, SpawnSpec};
use strata_pipeline::StageOutput;

pub use cache::{CacheStats, CompiledTool, ToolCache};

/// A warning, and the index of the chain link whose file holds the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkWarning {
    /// Index into [`ToolChain::links`].
    pub link: usize,
    /// The warning; its path is the field in that file (`config.args[1]`).
    pub warning: Warning,
}

/// How to run a tool.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// What a missing variable does.
    pub render: RenderOptions,
    /// The environment to start from; `None` is the process environment.
    pub base_env: Option<EnvMap>,
    /// Stops the run's tools when set (a caller that cancels a run it asked for).
    pub cancel: Option<strata_exec::Cancel>,
}

/// The caller's parameters: typed values (`--params-json`) and `name=value` strings (`-p`),
/// which are typed by the tool's schema and win over typed values of the same name.
#[derive(Debug, Clone, Default)]
pub struct CallerParams {
    /// Typed values.
    pub typed: Map<String, Value>,
    /// `name=value` pairs, in order.
    pub strings: Vec<(String, String)>,
}

/// One call of a tool, ready to render: chain compiled (or taken from the project's cache),
/// parameters validated, environment resolved.
#[derive(Debug, Clone)]
pub struct Invocation {
    tool: Arc<CompiledTool>,
    params: Map<String, Value>,
    runtime_params: Map<String, Value>,
    env: ResolvedEnv,
    warnings: Vec<LinkWarning>,
    project: Project,
    render: RenderOptions,
}

/// An invocation rendered into a spawn spec.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// What will be spawned.
    pub spec: SpawnSpec,
    /// The config after stage 6, literals restored.
    pub config: Rendered<'static>,
    /// Every warning of the environment and of stages 3–6.
    pub warnings: Vec<LinkWarning>,
}

fn path_text(p: &std::path::Path) -> Value {
    Value::String(p.to_string_lossy().into_owned())
}

/// An error about the config (its path relative to `config`) as a path in a tool file.
pub(crate) fn config_error(err: Error) -> Error {
    if err
        .path()
        .0
        .first()
        .is_some_and(|s| *s == strata_core::PathSeg::Key("config".into()))
    {
        return err;
    }
    err.map_path(|p| chain::config_path(&p))
}

impl Invocation {
    /// Loads tool `id` of `project` (compiled once per project) and everything a call needs.
    pub fn new(
        project: &Project,
        id: &str,
        caller: &CallerParams,
        opts: &ExecOptions,
    ) -> Result<Invocation, Error> {
        Invocation::of(project, project.compiled(id)?, id, caller, opts)
    }

    /// Everything a call of tool `id`, already compiled as `tool` (and found current), needs.
    pub fn of(
        project: &Project,
        tool: Arc<CompiledTool>,
        id: &str,
        caller: &CallerParams,
        opts: &ExecOptions,
    ) -> Result<Invocation, Error> {
        let chain = &tool.chain;
        let link = chain.tool();
        // Checked once, when the tool was compiled (`CompiledTool::compile`).
        let schema = link.file.parameters.as_ref();
        let mut given = caller.typed.clone();
        for (name, raw) in &caller.strings {
            given.insert(name.clone(), coerce(schema, name, raw)?);
        }
        let params = validate(id, schema, &given)?;
        let params_json = serde_json::to_string(&params).unwrap_or_default();
        let tool_dir = link.path.parent().unwrap_or(&project.root);
        let mut runtime_params = Map::new();
        runtime_params.insert("tool_path".into(), path_text(&link.path));
        runtime_params.insert("tool_dir".into(), path_text(tool_dir));
        runtime_params.insert(
            "tool_parent".into(),
            path_text(tool_dir.parent().unwrap_or(tool_dir)),
        );
        runtime_params.insert("project_path".into(), path_text(&project.root));
        runtime_params.insert("params_json".into(), Value::String(params_json));
        let runtime_path = &chain.runtime().path;
        runtime_params.insert(
            "runtime_dir".into(),
            path_text(runtime_path.parent().unwrap_or(&project.root)),
        );
        let base = opts.base_env.clone().unwrap_or_else(process_env);
        let mut warnings = Vec::new();
        let env = resolve_env(
            project,
            chain,
            &runtime_params,
            base,
            &opts.render,
            &mut warnings,
        )?;
        Ok(Invocation {
            tool,
            params,
            runtime_params,
            env,
            warnings,
            project: project.clone(),
            render: opts.render,
        })
    }

    /// The executor chain.
    pub fn chain(&self) -> &ToolChain {
        &self.tool.chain
    }

    /// The merged config with `{literal: …}` values taken out.
    pub fn config(&self) -> &Value {
        &self.tool.config
    }

    /// The `{literal: …}` values.
    pub fn literals(&self) -> &[Literal] {
        &self.tool.literals
    }

    /// The caller's parameters after validation, defaults applied.
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// `tool_path`, `tool_dir`, `tool_parent`, `project_path`, `params_json`, `runtime_dir`.
    pub fn runtime_params(&self) -> &Map<String, Value> {
        &self.runtime_params
    }

    /// The environment after every layer.
    pub fn env(&self) -> &ResolvedEnv {
        &self.env
    }

    /// Warnings so far (from `env_config.env` templates).
    pub fn warnings(&self) -> &[LinkWarning] {
        &self.warnings
    }

    /// The scope of stages 3–6.
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            env: &self.env.vars,
            runtime_params: &self.runtime_params,
            caller_params: &self.params,
            ..Scope::default()
        }
    }

    /// Runs stages 3–6 and builds the spawn spec.
    pub fn prepare(&self) -> Result<Prepared, Error> {
        let chain = self.chain();
        let out = self
            .tool
            .template
            .render(&self.scope(), &self.render)
            .map_err(|e| chain.locate(config_error(e)))?;
        let mut value = out.value.into_owned();
        restore_literals(&mut value, self.literals());
        let mut warnings = self.warnings.clone();
        for mut w in out.warnings {
            w.path = chain::config_path(&w.path);
            let link = chain
                .links
                .iter()
                .position(|l| w.path.lookup(&l.doc.value).is_some())
                .unwrap_or(0);
            warnings.push(LinkWarning { link, warning: w });
        }
        // The parameters the schema declares: a caller's other parameter may not take the
        // variable of one of them.
        let declared: Vec<String> = chain
            .tool()
            .file
            .parameters
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let spec = build_spec(
            &value,
            &self.env,
            &self.params,
            &declared,
            &self.project.root,
        )
        .map_err(|e| chain.locate(e))?;
        Ok(Prepared {
            spec,
            config: value,
            warnings,
        })
    }

    /// The config after each of stages 3–6 (numbered 3 to 6).
    pub fn explain(&self) -> Result<Vec<StageOutput>, Error> {
        explain_config(
            self.config(),
            self.literals(),
            &self.scope(),
            &self.project.limits,
            &self.render,
        )
        .map_err(|e| self.chain().locate(config_error(e)))
    }
}

/// The output schema of tool `id` (its file's `outputs`), when it loads and declares one.
pub fn tool_outputs(project: &Project, id: &str) -> Option<Value> {
    let tool = project.compiled(id).ok()?;
    tool.chain.tool().file.outputs.clone()
}

/// Whether tool `id` declares itself `read_only` (false when it does not load).
pub fn tool_read_only(project: &Project, id: &str) -> bool {
    project
        .compiled(id)
        .is_ok_and(|tool| tool.chain.tool().file.read_only)
}

/// The `resources` and `retries` of tool `id`, merged over its executor chain key by key
/// (primitive first, tool last); nothing when it does not load.
pub fn tool_scale(project: &Project, id: &str) -> strata_tools::Scale {
    project.compiled(id).map_or_else(
        |_| strata_tools::Scale::default(),
        |tool| {
            tool.chain
                .links
                .iter()
                .rev()
                .fold(strata_tools::Scale::default(), |base, link| {
                    link.file.scale.over(&base)
                })
        },
    )
}

/// The parameter schema of tool `id` (its file's `parameters`), when it loads and declares one.
pub fn tool_parameters(project: &Project, id: &str) -> Option<Value> {
    let tool = project.compiled(id).ok()?;
    tool.chain.tool().file.parameters.clone()
}
