//! One single-layer context template, rendered by strata and by minijinja side by side.
//!
//! Both are compiled once and rendered many times against the same, already converted
//! context; both produce an owned result (strata's [`strata_pipeline::Output`], minijinja's
//! `String`).

use std::hint::black_box;

use minijinja::Environment;
use serde_json::{json, Value};
use strata_core::{Layer, Limits, RenderOptions, Scope};
use strata_pipeline::{Chain, Template};

use crate::harness::{compare, Settings};
use crate::report::Report;

/// The strata template (layer C only).
pub const STRATA: &str = "Hello ${user.name}, you have ${state.count} items in ${state.cart.name}";

/// The same template in Jinja syntax.
pub const JINJA: &str =
    "Hello {{ user.name }}, you have {{ state.count }} items in {{ state.cart.name }}";

/// The context both render against.
pub fn context() -> Value {
    json!({"user": {"name": "Ada"}, "state": {"count": 3, "cart": {"name": "weekend"}}})
}

/// What both must produce.
pub const EXPECTED: &str = "Hello Ada, you have 3 items in weekend";

/// Measures strata against minijinja.
pub fn run(settings: &Settings, report: &mut Report) {
    let context = context();
    let scope = Scope {
        context: &context,
        ..Scope::default()
    };
    let chain = Chain::of(&[Layer::CONTEXT]);
    let template = Template::compile(&Value::from(STRATA), &chain, &Limits::default())
        .expect("template compiles");

    let env = Environment::new();
    let jinja = env.template_from_str(JINJA).expect("template compiles");
    // Converted as strata's prompts convert JSON (serialised, a number held as its text
    // would come through as a map).
    let jinja_ctx = strata_jinja::value_of(&context);

    let strata_out = template
        .render(&scope, &RenderOptions::STRICT)
        .expect("renders");
    assert_eq!(strata_out.value.into_json(), Value::from(EXPECTED));
    assert_eq!(jinja.render(&jinja_ctx).expect("renders"), EXPECTED);

    let (strata, peer) = compare(
        settings,
        || {
            template
                .render(black_box(&scope), &RenderOptions::default())
                .expect("renders")
        },
        || jinja.render(black_box(&jinja_ctx)).expect("renders"),
    );
    report.compare("context_render", &strata, "minijinja", &peer);
}
