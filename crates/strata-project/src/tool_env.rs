//! The environment of a tool: process env < project `.env` < runtime `env_config` < tool
//! `env_config`, interpreter resolution and secrets (the child's own environment is built
//! from it by `strata_exec::child_env`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use strata_core::{EnvMap, Error, ErrorKind, Layer, Limits, Origin, RenderOptions, Scope};
use strata_doc::parse_dotenv;

use strata_core::EnvVar;
use strata_exec::{allowlisted, is_executable, which, ResolvedEnv};
use strata_pipeline::Chain;

use crate::chain::ToolChain;
use crate::registry::Project;
use crate::stages::render_string;
use crate::tool_file::{path_of, Interpreter, InterpreterKind};
use crate::LinkWarning;

/// Builds the environment layer by layer over `base` (normally [`strata_exec::process_env`]).
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
    if let Some(text) = project.dotenv_text()? {
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
            let err = Error::new(
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
            ))
            .with_path(path_of(&["env_config", "interpreter"]));
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
    let spec = strata_exec::SpawnSpec {
        program,
        argv: std::iter::once(argv[0].as_str())
            .chain(args.iter().map(String::as_str))
            .map(strata_exec::authored)
            .collect(),
        cwd: project.root.clone(),
        env,
        stdin: None,
        timeout: Duration::from_secs(10),
        max_output_bytes: 64 << 10,
        cancel: None,
    };
    let result = strata_exec::spawn(&spec).ok()?;
    if !result.success {
        return None;
    }
    let text = String::from_utf8_lossy(&result.stdout).into_owned();
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use strata_core::FieldPath;
    use strata_exec::child_env;

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
        let child = child_env(&env, None, &Map::new(), &[], &[], &FieldPath::root()).unwrap();
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
            let text = format!("{{type: {kind}, var: X, {extra}}}");
            serde_json::from_value(strata_doc::Document::yaml_value(&text).unwrap()).unwrap()
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
            e.message(),
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
}
