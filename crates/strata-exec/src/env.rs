//! The child's explicit environment: a base allowlist, what the chain declared, the
//! caller's parameters under a prefix (never a protected variable), and the config's `env`
//! entries; and finding a program on `PATH`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use strata_core::{EnvMap, EnvVar, Error, ErrorKind, FieldPath, Layer, Origin};

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
    /// Sets `name` (secret when `secret` or when the chain declared it secret) and records it
    /// as declared.
    pub fn set(&mut self, name: &str, value: String, secret: bool) {
        let secret = secret || self.secrets.iter().any(|s| s == name);
        self.vars.set(name, value, secret);
        if !self.declared.iter().any(|d| d == name) {
            self.declared.push(name.to_string());
        }
    }
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
/// (`mode` and `MODE`, `x y` and `x_y`), a parameter the schema does not declare naming the
/// variable of one it declares (`MODE` when `mode` is declared, whose checks it would
/// bypass), a parameter naming a variable the environment already holds, or one naming a
/// [`protected`] variable, is an error (at `prefix_path`). `declared` are the parameters
/// the tool's schema declares.
pub fn child_env(
    env: &ResolvedEnv,
    params_prefix: Option<&str>,
    params: &Map<String, Value>,
    declared: &[String],
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
            Error::new(Layer::REQUEST, ErrorKind::Invalid, message)
                .with_hint(hint)
                .with_path(prefix_path.clone())
        };
        for name in params.keys() {
            let var = param_env_name(prefix, name);
            if let Some(other) = from_params.get(&var) {
                return Err(fail(
                    format!(
                        "caller parameters `{}` and `{}` would both be passed as `{var}`",
                        strata_core::shown(other),
                        strata_core::shown(name)
                    ),
                    "parameter names that differ only in case or punctuation cannot be passed as variables",
                ));
            }
            from_params.insert(var, name);
        }
        for (name, value) in params {
            let var = param_env_name(prefix, name);
            let shown = strata_core::shown(name);
            if !declared.contains(name) {
                if let Some(owner) = declared.iter().find(|d| param_env_name(prefix, d) == var) {
                    return Err(fail(
                        format!(
                            "caller parameter `{shown}` would be passed as `{var}`, the variable of declared parameter `{}`",
                            strata_core::shown(owner)
                        ),
                        "a parameter the schema does not declare cannot take the variable of one it declares (and skip its checks): pass the declared name",
                    ));
                }
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
                var,
                EnvVar {
                    value: strata_core::value_to_text(value),
                    secret: false,
                },
            );
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

    #[test]
    fn parameter_env_names_are_upper_snake() {
        assert_eq!(param_env_name("PARAM_", "my-name"), "PARAM_MY_NAME");
    }
}
