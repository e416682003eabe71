//! The environment: process env < project `.env` < runtime `env_config` < tool `env_config`,
//! interpreter resolution, secrets, and the child's explicit environment (a base allowlist
//! plus what the chain declares).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use strata_core::{
    EnvMap, EnvVar, Error, ErrorKind, FieldPath, Layer, Limits, Origin, RenderOptions, Scope,
};
use strata_doc::parse_dotenv;
use strata_pipeline::Chain;

use crate::chain::ToolChain;
use crate::registry::Project;
use crate::stages::render_string;
use crate::tool_file::{path_of, Interpreter, InterpreterKind};
use crate::LinkWarning;

/// Variables passed from the resolved environment to every child, whether declared or not.
pub const BASE_ALLOWLIST: [&str; 10] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
];

/// True for a name in [`BASE_ALLOWLIST`] or a locale variable (`LC_*`).
pub fn allowlisted(name: &str) -> bool {
    BASE_ALLOWLIST.contains(&name) || name.starts_with("LC_")
}

/// The process environment (see [`EnvMap::from_process`]).
pub fn process_env() -> EnvMap {
    EnvMap::from_process()
}

/// The environment after every layer, and which names the project and the chain declared.
#[derive(Debug, Clone, Default)]
pub struct ResolvedEnv {
    /// Every variable, for layer E.
    pub vars: EnvMap,
    /// Names set by `.env`, an interpreter or an `env_config.env` entry (in order, no repeats).
    pub declared: Vec<String>,
    /// Names declared secret by the chain.
    pub secrets: Vec<String>,
}

impl ResolvedEnv {
    fn set(&mut self, name: &str, value: String, secret: bool) {
        let secret = secret || self.secrets.iter().any(|s| s == name);
        self.vars.set(name, value, secret);
        if !self.declared.iter().any(|d| d == name) {
            self.declared.push(name.to_string());
        }
    }
}

/// Builds the environment layer by layer over `base` (normally [`process_env`]).
pub fn resolve_env(
    project: &Project,
    chain: &ToolChain,
    runtime_params: &Map<String, Value>,
    base: EnvMap,
    options: &RenderOptions,
    warnings: &mut Vec<LinkWarning>,
) -> Result<ResolvedEnv, Error> {
    let mut secrets = chain.secrets();
    for name in &project.settings.secrets.value {
        if !secrets.contains(name) {
            secrets.push(name.clone());
        }
    }
    let mut env = ResolvedEnv {
        vars: base,
        declared: Vec::new(),
        secrets,
    };
    for name in &env.secrets {
        env.vars.mark_secret(name);
    }
    let dotenv = project.root.join(".env");
    if dotenv.is_file() {
        let text = project.read_text(&dotenv)?;
        for (k, v) in parse_dotenv(".env", &text)? {
            env.set(&k, v, true);
        }
    }
    let env_chain = Chain::of(&[Layer::ENV]);
    for (index, link) in chain.links.iter().enumerate().rev() {
        let Some(cfg) = &link.file.env_config else {
            continue;
        };
        if let Some(interp) = &cfg.interpreter {
            let (value, secret) = resolve_interpreter(interp, project, runtime_params, &env.vars)
                .map_err(|e| link.doc.locate_error(e))?;
            env.set(&interp.var, value, secret);
        }
        for (name, value) in &cfg.env {
            let source = strata_core::value_to_text(value);
            let scope = Scope {
                env: &env.vars,
                ..Scope::default()
            };
            let path = path_of(&["env_config", "env", name]);
            let (text, ws) = render_string(&source, &env_chain, &scope, &project.limits, options)
                .map_err(|e| link.doc.locate_error(e.at_path(&path)))?;
            warnings.extend(ws.into_iter().map(|mut w| {
                w.path = w.path.under(&path);
                LinkWarning {
                    link: index,
                    warning: w,
                }
            }));
            let secret = text.origin() == Origin::Secret;
            env.set(name, text.text, secret);
        }
    }
    Ok(env)
}

/// True when `path` is a regular file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `name` in the directories of `path_var` (an empty entry is `.`).
pub fn which(name: &str, path_var: &str) -> Option<PathBuf> {
    path_var
        .split(':')
        .map(|d| {
            if d.is_empty() {
                Path::new(".")
            } else {
                Path::new(d)
            }
        })
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Finds the interpreter: its path and whether it is secret. A variable already set to an
/// existing file wins.
fn resolve_interpreter(
    interp: &Interpreter,
    project: &Project,
    runtime_params: &Map<String, Value>,
    vars: &EnvMap,
) -> Result<(String, bool), Error> {
    if let Some(v) = vars.0.get(&interp.var) {
        if !v.value.is_empty() && Path::new(&v.value).is_file() {
            return Ok((v.value.clone(), v.secret));
        }
    }
    let path_var = vars.0.get("PATH").map_or("", |v| v.value.as_str());
    let mut tried: Vec<String> = Vec::new();
    let found = match interp.kind {
        InterpreterKind::VenvPython => {
            let venv = interp.venv.as_deref().unwrap_or(".venv");
            ["python3", "python"].iter().find_map(|exe| {
                let rel = Path::new(venv).join("bin").join(exe);
                tried.push(rel.display().to_string());
                let p = project.root.join(&rel);
                is_executable(&p).then_some(p)
            })
        }
        InterpreterKind::LocalBinary => {
            let mut hit = None;
            'outer: for dir in &interp.search_paths {
                let dir = render_path(dir, runtime_params, &project.limits)?;
                for c in &interp.candidates {
                    let rel = Path::new(&dir).join(c);
                    tried.push(rel.display().to_string());
                    let p = project.root.join(&rel);
                    if is_executable(&p) {
                        hit = Some(p);
                        break 'outer;
                    }
                }
            }
            hit
        }
        InterpreterKind::SystemBinary => interp.candidates.iter().find_map(|c| {
            tried.push(format!("`{c}` on PATH"));
            which(c, path_var)
        }),
        InterpreterKind::Command => {
            tried.push(format!("the output of `{}`", interp.command.join(" ")));
            first_line_of(&interp.command, vars, project)
                .map(PathBuf::from)
                .filter(|p| p.is_file())
        }
    };
    let found = found.or_else(|| {
        let fallback = interp.fallback.as_deref()?;
        if fallback.contains('/') {
            tried.push(format!("fallback `{fallback}`"));
            let p = project.root.join(fallback);
            is_executable(&p).then_some(p)
        } else {
            tried.push(format!("fallback `{fallback}` on PATH"));
            which(fallback, path_var)
        }
    });
    match found {
        Some(p) => Ok((p.to_string_lossy().into_owned(), false)),
        None => {
            let mut err = Error::new(
                Layer::REQUEST,
                ErrorKind::Spawn,
                format!(
                    "no interpreter found for `{}` ({}); tried {}",
                    interp.var,
                    interp.kind.name(),
                    tried.join(", ")
                ),
            )
            .with_hint(format!(
                "install it, set `{}` to its path, or give a `fallback`",
                interp.var
            ));
            err.path = path_of(&["env_config", "interpreter"]);
            Err(err)
        }
    }
}

/// A search path with runtime parameters (`{tool_dir}`, `{project_path}`, …) substituted.
fn render_path(
    dir: &str,
    runtime_params: &Map<String, Value>,
    limits: &Limits,
) -> Result<String, Error> {
    let scope = Scope {
        runtime_params,
        ..Scope::default()
    };
    let (text, _) = render_string(
        dir,
        &Chain::of(&[Layer::PARAMS]),
        &scope,
        limits,
        &RenderOptions::default(),
    )?;
    Ok(text.text)
}

/// The first non-empty line of a command's output, run argv-only with a short timeout.
fn first_line_of(argv: &[String], vars: &EnvMap, project: &Project) -> Option<String> {
    let (program, args) = argv.split_first()?;
    let path_var = vars.0.get("PATH").map_or("", |v| v.value.as_str());
    let program = if program.contains('/') {
        project.root.join(program)
    } else {
        which(program, path_var)?
    };
    let env: BTreeMap<String, EnvVar> = vars
        .0
        .iter()
        .filter(|(k, _)| allowlisted(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let spec = crate::spawn::SpawnSpec {
        program,
        argv: std::iter::once(argv[0].as_str())
            .chain(args.iter().map(String::as_str))
            .map(crate::spawn::authored)
            .collect(),
        cwd: project.root.clone(),
        env,
        stdin: None,
        timeout: Duration::from_secs(10),
        max_output_bytes: 64 << 10,
    };
    let result = crate::spawn::spawn(&spec).ok()?;
    if !result.success {
        return None;
    }
    let text = String::from_utf8_lossy(&result.stdout).into_owned();
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// Variables that steer how a program, the dynamic loader, a shell or an interpreter runs.
/// A caller's parameter never sets one of these, nor a name starting with one of
/// [`PROTECTED_PREFIXES`], nor any name of [`BASE_ALLOWLIST`].
pub const PROTECTED: [&str; 24] = [
    "ENV",
    "BASH_ENV",
    "BASHOPTS",
    "SHELLOPTS",
    "IFS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "PYTHONUSERBASE",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5LIB",
    "PERL5OPT",
    "PERLLIB",
    "RUBYLIB",
    "RUBYOPT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "GCONV_PATH",
];

/// Prefixes of the dynamic loader's variables (`LD_PRELOAD`, `DYLD_INSERT_LIBRARIES`, …).
pub const PROTECTED_PREFIXES: [&str; 2] = ["LD_", "DYLD_"];

/// True for a name a caller's parameter may not set (see [`PROTECTED`]).
pub fn protected(name: &str) -> bool {
    allowlisted(name)
        || PROTECTED.contains(&name)
        || PROTECTED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The child's environment: allowlisted and declared variables from `env`, then the caller's
/// parameters under `params_prefix` (if any), then the config's `env` entries.
///
/// A caller's parameter never replaces a variable: two parameters naming one variable
/// (`mode` and `MODE`, `x y` and `x_y`), a parameter naming a variable the environment
/// already holds, or one naming a [`protected`] variable, is an error (at `prefix_path`).
pub fn child_env(
    env: &ResolvedEnv,
    params_prefix: Option<&str>,
    params: &Map<String, Value>,
    config_env: &[(String, strata_core::Text)],
    prefix_path: &FieldPath,
) -> Result<BTreeMap<String, EnvVar>, Error> {
    let mut out = BTreeMap::new();
    for (k, v) in &env.vars.0 {
        if allowlisted(k) || env.declared.iter().any(|d| d == k) {
            out.insert(k.clone(), v.clone());
        }
    }
    if let Some(prefix) = params_prefix {
        let mut from_params: BTreeMap<String, &str> = BTreeMap::new();
        let fail = |message: String, hint: &str| {
            let mut err = Error::new(Layer::REQUEST, ErrorKind::Invalid, message).with_hint(hint);
            err.path = prefix_path.clone();
            err
        };
        for (name, value) in params {
            let var = param_env_name(prefix, name);
            let shown = strata_core::shown(name);
            if let Some(other) = from_params.get(&var) {
                return Err(fail(
                    format!(
                        "caller parameters `{}` and `{shown}` would both be passed as `{var}`",
                        strata_core::shown(other)
                    ),
                    "parameter names that differ only in case or punctuation cannot be passed as variables",
                ));
            }
            if protected(&var)
                || out.contains_key(&var)
                || config_env.iter().any(|(k, _)| *k == var)
            {
                return Err(fail(
                    format!("caller parameter `{shown}` would be passed as `{var}`, which a caller may not set"),
                    "choose a params_env_prefix such as PARAM_, so that parameters never name a variable the runtime uses or the tool sets",
                ));
            }
            out.insert(
                var.clone(),
                EnvVar {
                    value: strata_core::value_to_text(value),
                    secret: false,
                },
            );
            from_params.insert(var, name);
        }
    }
    for (name, text) in config_env {
        let secret = text.origin() == Origin::Secret || env.secrets.iter().any(|s| s == name);
        out.insert(
            name.clone(),
            EnvVar {
                value: text.text.clone(),
                secret,
            },
        );
    }
    Ok(out)
}

/// The variable a parameter is passed in: `prefix` + the name in upper case, with every
/// character that is not a letter, digit or `_` turned into `_`.
pub fn param_env_name(prefix: &str, name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{upper}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn setup(tool_env: &str) -> (tempfile::TempDir, Project, ToolChain) {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "tools/runtimes/subprocess.yaml", "config: {}\n");
        write(
            d.path(),
            "tools/runtimes/r.yaml",
            "executor: runtimes/subprocess\nenv_config:\n  env:\n    A: runtime\n    B: \"${A}-b\"\n    C: \"${SECRET_X:-none}\"\n",
        );
        write(d.path(), "tools/t.yaml", tool_env);
        write(d.path(), ".env", "FROM_DOTENV=dot\nA=dotenv\n");
        let p = Project::at(d.path()).unwrap();
        let c = ToolChain::load(&p, "t").unwrap();
        (d, p, c)
    }

    #[test]
    fn layers_apply_in_order_and_secrets_stick() {
        let (_d, p, c) = setup(
            "executor: r\nsecrets: [TOKEN]\nenv_config:\n  env:\n    A: \"tool(${A})\"\n    D: \"${TOKEN}\"\n",
        );
        let base: EnvMap = [
            ("A", "process"),
            ("TOKEN", "t0k"),
            ("PATH", "/bin"),
            ("OTHER", "o"),
        ]
        .into_iter()
        .collect();
        let mut ws = Vec::new();
        let env = resolve_env(
            &p,
            &c,
            &Map::new(),
            base,
            &RenderOptions::default(),
            &mut ws,
        )
        .unwrap();
        let get = |k: &str| env.vars.0.get(k).cloned().unwrap();
        assert_eq!(get("A").value, "tool(runtime)");
        assert_eq!(get("B").value, "runtime-b");
        assert_eq!(get("C").value, "none");
        assert!(get("FROM_DOTENV").secret);
        assert!(get("TOKEN").secret);
        assert!(get("D").secret);
        assert_eq!(env.declared, ["FROM_DOTENV", "A", "B", "C", "D"]);
        let child = child_env(&env, None, &Map::new(), &[], &FieldPath::root()).unwrap();
        let names: Vec<&String> = child.keys().collect();
        assert_eq!(names, ["A", "B", "C", "D", "FROM_DOTENV", "PATH"]);
    }

    #[test]
    fn interpreters_resolve_with_fallback_and_existing_values() {
        let (d, p, _c) = setup("executor: r\n");
        write(d.path(), "bin/tool", "#!/bin/sh\n");
        let exe = d.path().join("bin/tool");
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let interp = |kind: &str, extra: &str| -> Interpreter {
            serde_yaml::from_str(&format!("{{type: {kind}, var: X, {extra}}}")).unwrap()
        };
        let vars: EnvMap = [("PATH", d.path().join("bin").to_string_lossy().into_owned())]
            .into_iter()
            .collect();
        let none = Map::new();
        let got = resolve_interpreter(
            &interp("system_binary", "candidates: [nope, tool]"),
            &p,
            &none,
            &vars,
        )
        .unwrap();
        assert_eq!(got.0, exe.to_string_lossy());
        let got = resolve_interpreter(
            &interp("local_binary", "search_paths: [x, bin], candidates: [tool]"),
            &p,
            &none,
            &vars,
        )
        .unwrap();
        assert_eq!(got.0, exe.to_string_lossy());
        let got = resolve_interpreter(&interp("venv_python", "fallback: tool"), &p, &none, &vars)
            .unwrap();
        assert_eq!(got.0, exe.to_string_lossy());
        let e = resolve_interpreter(&interp("venv_python", "fallback: nope"), &p, &none, &vars)
            .unwrap_err();
        assert_eq!(
            e.message,
            "no interpreter found for `X` (venv_python); tried .venv/bin/python3, .venv/bin/python, fallback `nope` on PATH"
        );
        let mut set = vars.clone();
        set.set("X", exe.to_string_lossy(), true);
        let kept = resolve_interpreter(
            &interp("system_binary", "candidates: [nope]"),
            &p,
            &none,
            &set,
        );
        assert_eq!(kept.unwrap(), (exe.to_string_lossy().into_owned(), true));
        let echo = interp("command", "command: [tool]");
        assert!(resolve_interpreter(&echo, &p, &none, &vars).is_err());
        // Run through /bin/sh rather than exec'd: a file just written may be "busy" while
        // another test thread forks.
        let finder = d.path().join("finder.sh");
        let script = format!("echo\necho '{}'\necho other\n", exe.display());
        std::fs::write(&finder, script).unwrap();
        let spec = format!("command: [/bin/sh, '{}']", finder.display());
        let found = resolve_interpreter(&interp("command", &spec), &p, &none, &vars);
        assert_eq!(found.unwrap(), (exe.to_string_lossy().into_owned(), false));
    }

    #[test]
    fn parameter_env_names_are_upper_snake() {
        assert_eq!(param_env_name("PARAM_", "my-name"), "PARAM_MY_NAME");
    }
}
