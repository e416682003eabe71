//! The JSON Lines protocol of `strata render --batch`: one request per line, one reply per
//! line, in order. A malformed line gets an error reply and the next lines are still served.

use std::io::{self, BufRead, Write};

use serde::Deserialize;
use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Error, ErrorKind, Layer, Limits, RenderOptions, Scope, Warning};

use crate::{Chain, Template};

/// One request line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    template: Value,
    #[serde(default)]
    layers: Option<Vec<String>>,
    #[serde(default)]
    env: Map<String, Value>,
    #[serde(default)]
    secrets: Vec<String>,
    #[serde(default)]
    params: Map<String, Value>,
    #[serde(default)]
    context: Map<String, Value>,
    #[serde(default)]
    inputs: Map<String, Value>,
    #[serde(default)]
    strict: bool,
}

/// Serves requests from `input` until it ends, writing one reply line per request line.
/// Blank lines are skipped. Fails only when reading or writing fails.
pub fn serve(input: impl BufRead, mut output: impl Write, limits: &Limits) -> io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = handle_line(&line, limits);
        serde_json::to_writer(&mut output, &reply)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

/// The reply to one request line.
pub fn handle_line(line: &str, limits: &Limits) -> Value {
    match parse_request(line).and_then(|request| render(request, limits)) {
        Ok(reply) => reply,
        Err(e) => error_reply(&e),
    }
}

fn parse_request(line: &str) -> Result<Request, Error> {
    let hint = "a request is one JSON object: {\"template\": …, \"layers\", \"env\", \"secrets\", \"params\", \"context\", \"inputs\", \"strict\"}";
    let bad =
        |message: String| Error::new(Layer::REQUEST, ErrorKind::Request, message).with_hint(hint);
    let value: Value =
        serde_json::from_str(line).map_err(|e| bad(format!("malformed request: {e}")))?;
    if !value.is_object() {
        return Err(bad("a request must be a JSON object".to_string()));
    }
    serde_json::from_value(value).map_err(|e| bad(format!("malformed request: {e}")))
}

fn render(request: Request, limits: &Limits) -> Result<Value, Error> {
    let chain = match &request.layers {
        Some(names) => Chain::from_names(names)?,
        None => Chain::full(),
    };
    let mut env = EnvMap::default();
    for (name, value) in request.env {
        let Value::String(value) = value else {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Request,
                format!("env value of `{name}` must be a string"),
            ));
        };
        env.set(name, value, false);
    }
    for name in &request.secrets {
        env.mark_secret(name);
    }
    let context = Value::Object(request.context);
    let scope = Scope {
        env: &env,
        caller_params: &request.params,
        context: &context,
        inputs: &request.inputs,
        ..Scope::default()
    };
    let template = Template::compile_owned(request.template, &chain, limits)?;
    let out = template.render(&scope, &RenderOptions::strict_if(request.strict))?;
    let warnings: Vec<Value> = out.warnings.iter().map(Warning::to_json).collect();
    Ok(json!({"ok": true, "value": out.value.into_json(), "warnings": warnings}))
}

fn error_reply(e: &Error) -> Value {
    json!({"ok": false, "error": e.to_json()})
}
