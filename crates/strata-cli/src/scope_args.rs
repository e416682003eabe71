//! The data a command renders with, as given on the command line.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use strata_core::{is_env_name, EnvMap, Error, ErrorKind, Layer, Limits};
use strata_doc::{parse_dotenv, Document, Format};

/// Splits `K=V`; `what` names the option for the error.
pub(crate) fn split_pair<'a>(pair: &'a str, what: &str) -> Result<(&'a str, &'a str), Error> {
    pair.split_once('=').ok_or_else(|| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Syntax,
            format!(
                "{what} `{}` is not of the form KEY=VALUE",
                strata_core::shown(pair)
            ),
        )
    })
}

/// Reads a file named on the command line, within the document limit.
pub(crate) fn read_file(path: &Path, limits: &Limits) -> Result<Vec<u8>, Error> {
    strata_doc::read_file(path, &path.display().to_string(), limits)
}

/// Builds the environment: the process environment (unless `clean`), then the project's
/// `.env` (`dotenv`, its text), then each `--env-file` (values of both secret, each within
/// the document limit), then `--env K=V`; names in `secrets` are marked secret.
pub(crate) fn build_env(
    clean: bool,
    dotenv: Option<&str>,
    env_files: &[PathBuf],
    pairs: &[String],
    secrets: &[String],
    limits: &Limits,
) -> Result<EnvMap, Error> {
    let mut env = if clean {
        EnvMap::default()
    } else {
        EnvMap::from_process()
    };
    for (k, v) in dotenv
        .map(|text| parse_dotenv(".env", text))
        .transpose()?
        .into_iter()
        .flatten()
    {
        env.set(k, v, true);
    }
    for file in env_files {
        let name = file.display().to_string();
        let text = strata_doc::read_text(file, &name, limits)?;
        for (k, v) in parse_dotenv(&name, &text)? {
            env.set(k, v, true);
        }
    }
    for pair in pairs {
        let (k, v) = split_pair(pair, "--env")?;
        if !is_env_name(k) {
            let (pair, k) = (strata_core::shown(pair), strata_core::shown(k));
            return Err(bad_name(&format!("--env `{pair}`: `{k}`")));
        }
        env.set(k, v, false);
    }
    for name in secrets {
        if !is_env_name(name) {
            return Err(bad_name(&format!(
                "--secret `{}`",
                strata_core::shown(name)
            )));
        }
        env.mark_secret(name);
    }
    Ok(env)
}

/// The error for an option naming a variable badly (`what` quotes the option and the name).
fn bad_name(what: &str) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Invalid,
        format!("{what} is not a valid environment variable name"),
    )
    .with_hint("names are letters, digits and `_`, not starting with a digit")
}

/// Parses `--params-json`: a JSON object (absent: empty).
pub(crate) fn params_json(json: Option<&str>) -> Result<Map<String, Value>, Error> {
    match json.map(strata_doc::json_value) {
        None => Ok(Map::new()),
        Some(Ok(Value::Object(map))) => Ok(map),
        Some(Ok(_)) => Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            "--params-json must be a JSON object",
        )),
        Some(Err(e)) => Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            format!("--params-json is not valid JSON: {e}"),
        )
        .with_source(e)),
    }
}

/// Builds caller parameters: `--params-json` first, then each `--param K=V` (a string).
pub(crate) fn build_params(
    json: Option<&str>,
    pairs: &[String],
) -> Result<Map<String, Value>, Error> {
    let mut params = params_json(json)?;
    for pair in pairs {
        let (k, v) = split_pair(pair, "--param")?;
        params.insert(k.to_string(), Value::String(v.to_string()));
    }
    Ok(params)
}

/// Builds inputs from `--input K=V` (strings).
pub(crate) fn build_inputs(pairs: &[String]) -> Result<Map<String, Value>, Error> {
    let mut inputs = Map::new();
    for pair in pairs {
        let (k, v) = split_pair(pair, "--input")?;
        inputs.insert(k.to_string(), Value::String(v.to_string()));
    }
    Ok(inputs)
}

/// Reads `--context`: inline JSON, or `@file` (JSON or YAML by extension). Must be an object.
pub(crate) fn build_context(arg: Option<&str>, limits: &Limits) -> Result<Value, Error> {
    let value = match arg {
        None => return Ok(Value::Object(Map::new())),
        Some(spec) => match spec.strip_prefix('@') {
            Some(path) => {
                let bytes = read_file(Path::new(path), limits)?;
                Document::parse(path, bytes, Format::from_name(path), limits)?.value
            }
            None => strata_doc::json_value(spec).map_err(|e| {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::Request,
                    format!("--context is not valid JSON: {e}"),
                )
                .with_source(e)
                .with_hint("give a JSON object, or @file for a JSON or YAML file")
            })?,
        },
    };
    match value {
        Value::Object(_) => Ok(value),
        _ => Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Invalid,
            "--context must be an object whose keys are namespaces (state, inputs, …)",
        )),
    }
}
