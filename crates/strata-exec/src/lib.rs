//! Runs YAML tools (`tools/**/*.yaml`) as real subprocesses, through the post-dispatch half
//! of SPEC §2: load the executor chain (tool → runtimes → `subprocess` primitive), merge the
//! configs, validate the caller's parameters, build the environment layer by layer, render
//! stages 3–6 (`${NAME}`, `{param}`, `${NAME}`, `{param}`), and spawn argv-only with an
//! explicit environment, a timeout and capped output.
//!
//! ```no_run
//! use strata_exec::{CallerParams, Plan, Project, RunOptions};
//! let project = Project::discover(std::path::Path::new(".")).unwrap();
//! let plan = Plan::new(&project, "examples/echo", &CallerParams::default(), &RunOptions::default()).unwrap();
//! let prepared = plan.prepare().unwrap();
//! let result = strata_exec::spawn(&prepared.spec).unwrap();
//! println!("{}", result.to_json());
//! ```

mod chain;
mod env;
mod registry;
mod spawn;
mod spec;
mod stages;
mod tool_file;

pub use chain::{merge_into, Link, ToolChain, MAX_LINKS, PRIMITIVE};
pub use env::{
    allowlisted, child_env, param_env_name, process_env, resolve_env, which, ResolvedEnv,
    BASE_ALLOWLIST,
};
pub use registry::{Project, ToolEntry};
pub use spawn::{install_interrupt_handler, spawn, SpawnSpec, DEFAULT_MAX_OUTPUT};
pub use spec::{build_spec, dry_run_json, DEFAULT_TIMEOUT_SECS};
pub use stages::{
    explain_config, render_config, render_string, stage_chain, take_literals, Literal, FIRST_STAGE,
};
pub use strata_tools::{
    check_schema, coerce, summary, type_name, validate, RunResult, SchemaError,
};
pub use tool_file::{read_tool_file, EnvConfig, Interpreter, InterpreterKind, ToolFile};

use serde_json::{Map, Value};
use strata_core::{EnvMap, Error, ErrorKind, FieldPath, RenderOptions, Rendered, Scope, Warning};
use strata_pipeline::StageOutput;

/// A warning, and the index of the chain link whose file holds the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkWarning {
    /// Index into [`ToolChain::links`].
    pub link: usize,
    /// The warning; its path is the field in that file (`config.args[1]`).
    pub warning: Warning,
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// What a missing variable does.
    pub render: RenderOptions,
    /// The environment to start from; `None` is the process environment.
    pub base_env: Option<EnvMap>,
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

/// A tool ready to render: chain loaded, parameters validated, environment resolved.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The executor chain.
    pub chain: ToolChain,
    /// The caller's parameters after validation, defaults applied.
    pub params: Map<String, Value>,
    /// `tool_path`, `tool_dir`, `tool_parent`, `project_path`, `params_json`, `runtime_dir`.
    pub runtime_params: Map<String, Value>,
    /// The environment after every layer.
    pub env: ResolvedEnv,
    /// The merged config with `{literal: …}` values taken out.
    pub config: Value,
    /// The `{literal: …}` values.
    pub literals: Vec<Literal>,
    /// Warnings so far (from `env_config.env` templates).
    pub warnings: Vec<LinkWarning>,
    project: Project,
    render: RenderOptions,
}

/// A plan rendered into a spawn spec.
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

impl Plan {
    /// Loads tool `id` of `project` and everything the render needs.
    pub fn new(
        project: &Project,
        id: &str,
        caller: &CallerParams,
        opts: &RunOptions,
    ) -> Result<Plan, Error> {
        let chain = ToolChain::load(project, id)?;
        let tool = chain.tool();
        let schema = tool.file.parameters.as_ref();
        if let Some(schema) = schema {
            check_schema(schema).map_err(|e| {
                let mut err =
                    Error::new(strata_core::Layer::REQUEST, ErrorKind::Invalid, e.message)
                        .with_hint("see docs/tools.md for the supported schema subset");
                err.path = e.path.under(&FieldPath(vec![strata_core::PathSeg::Key(
                    "parameters".into(),
                )]));
                tool.doc.locate_error(err)
            })?;
        }
        let mut given = caller.typed.clone();
        for (name, raw) in &caller.strings {
            given.insert(name.clone(), coerce(schema, name, raw)?);
        }
        let params = validate(id, schema, &given)?;
        let params_json = serde_json::to_string(&params).unwrap_or_default();
        let tool_dir = tool.path.parent().unwrap_or(&project.root);
        let mut runtime_params = Map::new();
        runtime_params.insert("tool_path".into(), path_text(&tool.path));
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
            &chain,
            &runtime_params,
            base,
            &opts.render,
            &mut warnings,
        )?;
        let mut config = Value::Object(chain.merged_config());
        let literals =
            take_literals(&mut config).map_err(|e| chain.locate(e.at_path(&FieldPath::root())))?;
        let literals = literals.into_iter().collect();
        Ok(Plan {
            chain,
            params,
            runtime_params,
            env,
            config,
            literals,
            warnings,
            project: project.clone(),
            render: opts.render,
        })
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

    /// Locates an error about the config (`path` relative to `config`) in the chain's files.
    fn locate_config_error(&self, err: Error) -> Error {
        let mut err = err;
        if !err
            .path
            .0
            .first()
            .is_some_and(|s| *s == strata_core::PathSeg::Key("config".into()))
        {
            err.path = chain::config_path(&err.path);
        }
        self.chain.locate(err)
    }

    /// Runs stages 3–6 and builds the spawn spec.
    pub fn prepare(&self) -> Result<Prepared, Error> {
        let out = render_config(
            &self.config,
            &self.literals,
            &self.scope(),
            &self.project.limits,
            &self.render,
        )
        .map_err(|e| self.locate_config_error(e))?;
        let mut warnings = self.warnings.clone();
        for mut w in out.warnings {
            w.path = chain::config_path(&w.path);
            let link = self
                .chain
                .links
                .iter()
                .position(|l| w.path.lookup(&l.doc.value).is_some())
                .unwrap_or(0);
            warnings.push(LinkWarning { link, warning: w });
        }
        let spec = build_spec(&out.value, &self.env, &self.params, &self.project.root)
            .map_err(|e| self.chain.locate(e))?;
        Ok(Prepared {
            spec,
            config: out.value,
            warnings,
        })
    }

    /// The config after each of stages 3–6 (numbered 3 to 6).
    pub fn explain(&self) -> Result<Vec<StageOutput>, Error> {
        explain_config(
            &self.config,
            &self.literals,
            &self.scope(),
            &self.project.limits,
            &self.render,
        )
        .map_err(|e| self.locate_config_error(e))
    }
}

/// Loads, renders and runs tool `id`: the whole chain in one call.
pub fn run_tool(
    project: &Project,
    id: &str,
    caller: &CallerParams,
    opts: &RunOptions,
) -> Result<RunResult, Error> {
    let plan = Plan::new(project, id, caller, opts)?;
    let prepared = plan.prepare()?;
    spawn(&prepared.spec)
}
