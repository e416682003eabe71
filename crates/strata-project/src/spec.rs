//! From the rendered config to a [`SpawnSpec`]: the reserved keys (`command`, `args`, `cwd`,
//! `env`, `input_data`, `timeout`, `max_output_bytes`, `params_env_prefix`), the program
//! looked up on the child's `PATH`, and the redacted dry-run form.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Map, Value};
use strata_core::{is_env_name, Error, ErrorKind, FieldPath, Layer, PathSeg, Rendered, Text};

use crate::stages::to_text;
use strata_exec::{child_env, is_executable, which, ResolvedEnv};
use strata_exec::{SpawnSpec, DEFAULT_MAX_OUTPUT};

/// The timeout when the chain sets none, in seconds.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

fn at(key: &str) -> FieldPath {
    FieldPath(vec![
        PathSeg::Key("config".into()),
        PathSeg::Key(key.into()),
    ])
}

fn fail(path: FieldPath, message: impl Into<String>, hint: &str) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Invalid, message)
        .with_hint(hint)
        .with_path(path)
}

fn field<'t>(r: &Rendered<'t>, key: &str) -> Option<Rendered<'t>> {
    let found = match r {
        Rendered::Object(entries) => entries
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| v.clone()),
        Rendered::Value(v, o) => v.get(key).map(|v| Rendered::data(v.clone(), *o)),
        _ => None,
    };
    found.filter(|v| !matches!(v, Rendered::Value(v, _) if v.is_null()))
}

fn items<'t>(r: &Rendered<'t>) -> Option<Vec<Rendered<'t>>> {
    match r {
        Rendered::Array(items) => Some(items.clone()),
        Rendered::Value(v, o) => Some(
            v.as_array()?
                .iter()
                .map(|v| Rendered::data(v.clone(), *o))
                .collect(),
        ),
        _ => None,
    }
}

fn entries<'t>(r: &Rendered<'t>) -> Option<Vec<(Cow<'t, str>, Rendered<'t>)>> {
    match r {
        Rendered::Object(entries) => Some(entries.clone()),
        Rendered::Value(v, o) => Some(
            v.as_object()?
                .iter()
                .map(|(k, v)| (Cow::Owned(k.clone()), Rendered::data(v.clone(), *o)))
                .collect(),
        ),
        _ => None,
    }
}

fn is_scalar(r: &Rendered) -> bool {
    match r {
        Rendered::Text(_) | Rendered::Str(_) => true,
        Rendered::Value(v, _) => !v.is_array() && !v.is_object(),
        _ => false,
    }
}

fn number(r: &Rendered) -> Option<f64> {
    match r {
        Rendered::Value(v, _) => match &**v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        },
        Rendered::Text(t) => t.text.trim().parse().ok(),
        Rendered::Str(text) => text.trim().parse().ok(),
        _ => None,
    }
}

fn no_nul(text: &Text, path: FieldPath) -> Result<(), Error> {
    if text.text.contains('\0') {
        return Err(fail(
            path,
            "contains a NUL byte, which no argument, path or variable can hold",
            "remove the NUL byte",
        ));
    }
    Ok(())
}

/// Builds the spawn spec from the rendered config; `declared` are the parameters the tool's
/// schema declares (see [`child_env`]).
pub fn build_spec(
    config: &Rendered,
    env: &ResolvedEnv,
    params: &Map<String, Value>,
    declared: &[String],
    project_root: &Path,
) -> Result<SpawnSpec, Error> {
    let (cwd, cwd_shown) = match field(config, "cwd") {
        None => (
            project_root.to_path_buf(),
            project_root.display().to_string(),
        ),
        Some(r) => {
            let t = to_text(&r);
            no_nul(&t, at("cwd"))?;
            if t.text.is_empty() {
                (
                    project_root.to_path_buf(),
                    project_root.display().to_string(),
                )
            } else {
                (project_root.join(&t.text), t.redacted())
            }
        }
    };
    if !cwd.is_dir() {
        return Err(fail(
            at("cwd"),
            format!("working directory `{cwd_shown}` does not exist"),
            "cwd is relative to the project root",
        ));
    }

    let mut config_env = Vec::new();
    if let Some(r) = field(config, "env") {
        let list = entries(&r).ok_or_else(|| {
            fail(
                at("env"),
                "`config.env` must be a map of NAME: value",
                "e.g. env: {LOG_LEVEL: debug}",
            )
        })?;
        for (name, value) in list {
            let path = at("env").child(PathSeg::Key(name.to_string()));
            if !is_env_name(&name) {
                return Err(fail(
                    path,
                    format!("`{name}` is not a valid environment variable name"),
                    "names are letters, digits and `_`, not starting with a digit",
                ));
            }
            let t = to_text(&value);
            no_nul(&t, path)?;
            config_env.push((name.to_string(), t));
        }
    }
    let prefix = match field(config, "params_env_prefix") {
        None => None,
        Some(r) => {
            let t = to_text(&r);
            if !is_scalar(&r) || !is_env_name(&t.text) {
                return Err(fail(
                    at("params_env_prefix"),
                    "`params_env_prefix` must be the start of a variable name, e.g. PARAM_",
                    "each parameter is passed as <prefix><NAME>",
                ));
            }
            Some(t.text)
        }
    };
    let child = child_env(
        env,
        prefix.as_deref(),
        params,
        declared,
        &config_env,
        &at("params_env_prefix"),
    )?;

    let command = field(config, "command").ok_or_else(|| {
        fail(
            at("command"),
            "no command: `config.command` is not set anywhere in the chain",
            "set config.command in the tool or in its runtime",
        )
    })?;
    if !is_scalar(&command) {
        return Err(fail(
            at("command"),
            "`config.command` must be a string",
            "put arguments in config.args",
        ));
    }
    let command = to_text(&command);
    no_nul(&command, at("command"))?;
    if command.text.is_empty() {
        return Err(fail(
            at("command"),
            "`config.command` rendered to an empty string",
            "check the variables and parameters it uses (try --explain)",
        ));
    }
    let program = resolve_program(&command, &cwd, &child)?;
    let mut argv0 = Text::default();
    argv0.push(&program.to_string_lossy(), command.origin());
    let mut argv = vec![argv0];
    if let Some(r) = field(config, "args") {
        let list = items(&r).ok_or_else(|| {
            fail(
                at("args"),
                "`config.args` must be a list",
                "write args: [a, b, c]",
            )
        })?;
        for (i, item) in list.iter().enumerate() {
            let t = to_text(item);
            no_nul(&t, at("args").child(PathSeg::Index(i)))?;
            argv.push(t);
        }
    }
    let stdin = field(config, "input_data").map(|r| to_text(&r));

    let timeout = match field(config, "timeout") {
        None => Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
        Some(r) => number(&r).and_then(strata_core::seconds).ok_or_else(|| {
            fail(
                at("timeout"),
                "`config.timeout` must be a number of seconds greater than 0 (at most a week)",
                "e.g. timeout: 30, or timeout: 0.5",
            )
        })?,
    };
    let max_output_bytes = match field(config, "max_output_bytes") {
        None => DEFAULT_MAX_OUTPUT,
        Some(r) => number(&r)
            .filter(|n| *n >= 1.0 && n.fract() == 0.0 && *n <= (1u64 << 40) as f64)
            .map(|n| n as usize)
            .ok_or_else(|| {
                fail(
                    at("max_output_bytes"),
                    "`config.max_output_bytes` must be a whole number of bytes, at least 1",
                    "the default is 8388608 (8 MiB) per stream",
                )
            })?,
    };
    Ok(SpawnSpec {
        program,
        argv,
        cwd,
        env: child,
        stdin,
        timeout,
        max_output_bytes,
        cancel: None,
    })
}

/// The program for `command`: a path (relative to `cwd`) when it holds a `/`, else the first
/// match on the child's `PATH`.
fn resolve_program(
    command: &Text,
    cwd: &Path,
    env: &std::collections::BTreeMap<String, strata_core::EnvVar>,
) -> Result<PathBuf, Error> {
    let shown = command.redacted();
    if !command.text.contains('/') {
        let path_var = env.get("PATH").map_or("", |v| v.value.as_str());
        return which(&command.text, path_var).ok_or_else(|| {
            fail(
                at("command"),
                format!("command `{shown}` not found on PATH"),
                "install it, or give its path",
            )
        });
    }
    let path = cwd.join(&command.text);
    if !path.exists() {
        return Err(fail(
            at("command"),
            format!("command `{shown}` does not exist"),
            "a command holding `/` is a path, relative to the working directory",
        ));
    }
    if path.is_dir() {
        return Err(fail(
            at("command"),
            format!("command `{shown}` is a directory"),
            "name the program inside it",
        ));
    }
    if !is_executable(&path) {
        return Err(fail(
            at("command"),
            format!("command `{shown}` is not executable"),
            "make it executable (chmod +x), or run it through a runtime such as runtimes/bash",
        ));
    }
    Ok(path)
}

/// The spec as JSON for `--dry-run`, secrets shown as `***`.
pub fn dry_run_json(spec: &SpawnSpec) -> Value {
    let env: Map<String, Value> = spec
        .env
        .iter()
        .map(|(k, v)| {
            let shown = if v.secret {
                "***".to_string()
            } else {
                v.value.clone()
            };
            (k.clone(), Value::String(shown))
        })
        .collect();
    let command = spec.argv.first().map_or_else(
        || spec.program.to_string_lossy().into_owned(),
        Text::redacted,
    );
    json!({
        "command": command,
        "argv": spec.argv.iter().map(Text::redacted).collect::<Vec<_>>(),
        "cwd": spec.cwd.to_string_lossy(),
        "env": env,
        "stdin": spec.stdin.as_ref().map(Text::redacted),
        "timeout_ms": spec.timeout.as_millis() as u64,
        "max_output_bytes": spec.max_output_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::{EnvMap, Origin};

    fn env() -> ResolvedEnv {
        let vars: EnvMap = [("PATH", std::env::var("PATH").unwrap_or_default())]
            .into_iter()
            .collect();
        ResolvedEnv {
            vars,
            ..ResolvedEnv::default()
        }
    }

    fn build(config: Value) -> Result<SpawnSpec, Error> {
        let r = Rendered::data(config, Origin::Authored);
        build_spec(&r, &env(), &Map::new(), &[], &std::env::temp_dir())
    }

    #[test]
    fn defaults_and_reserved_keys() {
        let s =
            build(json!({"command": "sh", "args": ["-c", 3], "timeout": "1.5", "env": {"A": 1}}))
                .unwrap();
        let argv: Vec<&str> = s.argv.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(&argv[1..], ["-c", "3"]);
        assert!(argv[0].ends_with("/sh"));
        assert_eq!(s.timeout, Duration::from_millis(1500));
        assert_eq!(s.max_output_bytes, DEFAULT_MAX_OUTPUT);
        assert_eq!(s.env["A"].value, "1");
        assert_eq!(s.stdin, None);
    }

    #[test]
    fn bad_commands_are_clear() {
        let e = build(json!({"command": "no-such-program-xyz"})).unwrap_err();
        assert_eq!(
            e.message(),
            "command `no-such-program-xyz` not found on PATH"
        );
        assert_eq!(e.path().to_string(), "config.command");
        let e = build(json!({"args": []})).unwrap_err();
        assert_eq!(
            e.message(),
            "no command: `config.command` is not set anywhere in the chain"
        );
        let e = build(json!({"command": "sh", "timeout": 0})).unwrap_err();
        assert_eq!(e.path().to_string(), "config.timeout");
        let e = build(json!({"command": "/"})).unwrap_err();
        assert_eq!(e.message(), "command `/` is a directory");
        let e = build(json!({"command": "sh", "args": "x"})).unwrap_err();
        assert_eq!(e.message(), "`config.args` must be a list");
    }
}
