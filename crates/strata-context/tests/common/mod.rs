//! Shared helpers: evaluating expressions alone, and rendering strings through the documented
//! chain (layers I, C, E, P) with an environment and a context.
#![allow(dead_code)]

use serde_json::{json, Map, Value};
use strata_context::{eval_value, parse_expr};
use strata_core::{EnvMap, Layer, Limits, RenderOptions, Scope};
use strata_pipeline::{Chain, Template};

/// The context of the tests.
pub fn ctx() -> Value {
    json!({
        "state": {
            "n": 3, "price": 2.5, "name": "Ann", "on": true, "off": false, "nil": null,
            "items": ["a", "b", "c"], "nums": [3, 1, 2], "floats": [1.5, 2], "words": ["b", "a", "c"],
            "empty": [], "obj": {"z": 1, "a": 2}, "big": [9223372036854775807i64, 1],
            "mixed": [1, "a"], "text": "abc123", "pattern": "^[a-z]+\\d+$", "bad": "(",
            "s01": "01", "max_i": 9223372036854775807i64, "nested": [[1], {"k": 1}]
        }
    })
}

/// Parses and evaluates `src` against [`ctx`]: the value, or `kind: message`.
pub fn ev(src: &str) -> Result<Value, String> {
    let expr = parse_expr(src, 0).map_err(|e| format!("{}: {}", e.kind().name(), e.message()))?;
    eval_value(&expr, &ctx()).map_err(|e| format!("{}: {}", e.kind().name(), e.message()))
}

/// The error parsing `src`: `kind at start: message`.
pub fn compile_err(src: &str) -> String {
    match parse_expr(src, 0) {
        Ok(e) => panic!("{src:?} parsed: {e:?}"),
        Err(e) => format!(
            "{} at {}: {}",
            e.kind().name(),
            e.span().map_or(0, |s| s.start),
            e.message()
        ),
    }
}

/// Renders one string through `layers` with `env` set and [`ctx`]: the value and the
/// warnings, or the error text.
pub fn render(
    layers: &[Layer],
    env: &[(&str, &str)],
    s: &str,
) -> Result<(Value, Vec<String>), String> {
    let mut envs = EnvMap::default();
    for (k, v) in env {
        envs.set(*k, *v, false);
    }
    let context = ctx();
    let (runtime, params, inputs) = (Map::new(), Map::new(), Map::new());
    let scope = Scope {
        env: &envs,
        runtime_params: &runtime,
        caller_params: &params,
        context: &context,
        inputs: &inputs,
    };
    let t = Template::compile(
        &Value::String(s.into()),
        &Chain::of(layers),
        &Limits::default(),
    )
    .map_err(|e| e.to_string())?;
    let out = t
        .render(&scope, &RenderOptions::strict_if(false))
        .map_err(|e| e.to_string())?;
    Ok((
        out.value.into_json(),
        out.warnings.iter().map(|w| w.to_string()).collect(),
    ))
}

/// Layers I, C, E, P: what `strata render` runs.
pub const FULL: [Layer; 4] = [Layer::INPUTS, Layer::CONTEXT, Layer::ENV, Layer::PARAMS];
