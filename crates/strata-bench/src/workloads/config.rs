//! A typical tool config: 23 string leaves, 10 placeholders across the four layers.
//!
//! Compile time is compared with minijinja compiling the same leaves written in Jinja syntax
//! (one template per string leaf); render time of the compiled config is compared with the
//! target of 2 µs, and with the cost of cloning the rendered output (the allocations any
//! result of that shape needs).

use std::hint::black_box;

use minijinja::Environment;
use serde_json::{json, Map, Value};
use strata_core::{string_leaves, EnvMap, FieldPath, Limits, RenderOptions, Scope};
use strata_pipeline::{Chain, Template};

use crate::harness::{compare, measure, Settings};
use crate::report::Report;

/// The render target of the issue: a compiled config renders in under 2 µs.
pub const RENDER_TARGET_NS: f64 = 2_000.0;

/// The config, in strata syntax.
pub fn config() -> Value {
    json!({
        "tool_id": "python/lint",
        "executor": "subprocess",
        "version": "1.4.2",
        "description": "Lints Python sources with ruff",
        "python": "${PYTHON:-python3}",
        "workdir": "{project_path}/src",
        "command": "{python}",
        "args": [
            "-m", "ruff", "check", "{input:target}",
            "--config", "{tool_dir}/ruff.toml", "--output-format", "json"
        ],
        "cwd": "${state.workspace}",
        "timeout": "${TIMEOUT:-30}",
        "env": {
            "HOME": "${HOME}",
            "RUFF_CACHE_DIR": "${state.cache_dir}/ruff",
            "LANG": "C.UTF-8"
        },
        "input_data": "{input:stdin?}",
        "retries": 2,
        "capture": true,
        "labels": {"team": "platform", "tier": "ci"}
    })
}

/// The same string leaves in Jinja syntax, in document order.
pub fn jinja_leaves() -> Vec<&'static str> {
    vec![
        "python/lint",
        "subprocess",
        "1.4.2",
        "Lints Python sources with ruff",
        "{{ env.PYTHON | default('python3') }}",
        "{{ project_path }}/src",
        "{{ python }}",
        "-m",
        "ruff",
        "check",
        "{{ input.target }}",
        "--config",
        "{{ tool_dir }}/ruff.toml",
        "--output-format",
        "json",
        "{{ state.workspace }}",
        "{{ env.TIMEOUT | default('30') }}",
        "{{ env.HOME }}",
        "{{ state.cache_dir }}/ruff",
        "C.UTF-8",
        "{{ input.stdin | default('') }}",
        "platform",
        "ci",
    ]
}

/// The data the config is rendered against.
struct Data {
    env: EnvMap,
    runtime: Map<String, Value>,
    context: Value,
    inputs: Map<String, Value>,
}

impl Data {
    fn new() -> Data {
        let mut env = EnvMap::default();
        env.set("HOME", "/home/ada", false);
        env.set("PYTHON", "/usr/bin/python3", false);
        let obj = |v: Value| match v {
            Value::Object(m) => m,
            _ => unreachable!("literal objects"),
        };
        Data {
            env,
            runtime: obj(json!({
                "tool_path": "/srv/app/tools/python/lint.yaml",
                "tool_dir": "/srv/app/tools/python",
                "project_path": "/srv/app"
            })),
            context: json!({"state": {"workspace": "/srv/app", "cache_dir": "/tmp/cache"}}),
            inputs: obj(json!({"target": "src/", "stdin": ""})),
        }
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            env: &self.env,
            runtime_params: &self.runtime,
            context: &self.context,
            inputs: &self.inputs,
            ..Scope::default()
        }
    }
}

/// Measures compile time against minijinja compiling the same leaves.
pub fn run_compile(settings: &Settings, report: &mut Report) {
    let config = config();
    let leaves = jinja_leaves();
    assert_eq!(
        string_leaves(&config, &FieldPath::root()).len(),
        leaves.len()
    );
    let chain = Chain::full();
    let limits = Limits::default();
    let env = Environment::new();

    let (strata, peer) = compare(
        settings,
        || Template::compile(black_box(&config), &chain, &limits).expect("config compiles"),
        || {
            black_box(&leaves)
                .iter()
                .map(|src| env.template_from_str(src).expect("template compiles"))
                .collect::<Vec<_>>()
        },
    );
    report.compare("config_compile", &strata, "minijinja", &peer);
}

/// Measures render of the compiled config against the 2 µs target and against a clone of
/// its output.
pub fn run_render(settings: &Settings, report: &mut Report) {
    let config = config();
    let chain = Chain::full();
    let limits = Limits::default();
    let data = Data::new();
    let scope = data.scope();
    let template = Template::compile(&config, &chain, &limits).expect("config compiles");
    let out = template
        .render(&scope, &RenderOptions::STRICT)
        .expect("config renders");
    let rendered = out.value.into_json();
    assert_eq!(rendered["command"], "/usr/bin/python3");
    assert_eq!(rendered["args"][5], "/srv/app/tools/python/ruff.toml");
    assert_eq!(rendered["timeout"], "30");

    let m = measure(settings, || {
        template
            .render(black_box(&scope), &RenderOptions::default())
            .expect("config renders")
    });
    report.against("config_render", &m, "target", RENDER_TARGET_NS);

    // The cost of merely producing a result of this shape: cloning the rendered output
    // makes the same allocations (rendered strings, typed data, lists; constants and keys
    // are borrowed from the template in both).
    let output = template
        .render(&scope, &RenderOptions::default())
        .expect("config renders");
    let (render, clone) = compare(
        settings,
        || {
            template
                .render(black_box(&scope), &RenderOptions::default())
                .expect("config renders")
        },
        || black_box(&output).clone(),
    );
    report.compare("config_render", &render, "clone", &clone);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_has_the_advertised_shape() {
        let config = config();
        assert_eq!(string_leaves(&config, &FieldPath::root()).len(), 23);
        let text = config.to_string();
        let holes = text.matches("${").count() + text.matches("{input:").count();
        let params = ["{project_path}", "{python}", "{tool_dir}"];
        let holes = holes
            + params
                .iter()
                .map(|p| text.matches(p).count())
                .sum::<usize>();
        assert_eq!(holes, 10);
    }

    #[test]
    fn jinja_leaves_render_like_strata() {
        let data = Data::new();
        let template =
            Template::compile(&config(), &Chain::full(), &Limits::default()).expect("compiles");
        let strata = template
            .render(&data.scope(), &RenderOptions::STRICT)
            .expect("renders");
        let mut strata_leaves = Vec::new();
        let rendered = strata.value.into_json();
        strata_leaves.extend(
            string_leaves(&rendered, &FieldPath::root())
                .into_iter()
                .map(|(_, s)| s.to_string()),
        );

        let env = Environment::new();
        let ctx = json!({
            "env": {"HOME": "/home/ada", "PYTHON": "/usr/bin/python3"},
            "project_path": "/srv/app",
            "tool_dir": "/srv/app/tools/python",
            "python": "/usr/bin/python3",
            "state": data.context["state"],
            "input": data.inputs,
        });
        let jinja: Vec<String> = jinja_leaves()
            .iter()
            .map(|src| {
                env.render_str(src, minijinja::value::Serde(&ctx))
                    .expect("renders")
            })
            .collect();
        assert_eq!(strata_leaves, jinja);
    }
}
