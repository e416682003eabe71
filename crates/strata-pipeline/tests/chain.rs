//! SPEC §0–§2 across layers: the documented order, data never rescanned (every pair of
//! layers, every order), value-to-text rendering in every typed layer, compile once and render
//! many, map keys, field paths, and secrets.

mod common;
use common::*;
use serde_json::{json, Value};
use strata_core::{Layer, Limits, Origin, RenderOptions, Scope};
use strata_pipeline::{explain, Chain, Template};

/// Text holding every layer's syntax; any rescan would change it.
const EVIL: &str = "${HOME} {tool_path} {input:x} ${state.x} $${ {{p}} ${HOME:-d} {{input:x}}";

fn hostile() -> Case {
    case()
        .env("HOME", "/home/u")
        .env("EVIL", EVIL)
        .runtime("tool_path", json!("/t/tool.py"))
        .param("evil", json!(EVIL))
        .param("p", json!("P"))
        .ctx("state", json!({"x": "X", "evil": EVIL}))
        .input("x", json!("IX"))
        .input("evil", json!(EVIL))
}

fn placeholder(layer: Layer) -> &'static str {
    match layer {
        Layer::ENV => "${EVIL}",
        Layer::PARAMS => "{evil}",
        Layer::CONTEXT => "${state.evil}",
        _ => "{input:evil}",
    }
}

fn permutations(items: &[Layer]) -> Vec<Vec<Layer>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

#[test]
fn data_is_never_rescanned_by_any_later_layer_in_any_order() {
    let c = hostile();
    for order in permutations(&FULL) {
        for producer in FULL {
            let ph = placeholder(producer);
            assert_eq!(c.one(&order, ph), json!(EVIL), "{order:?} {ph}");
            let embedded = format!("<{ph}>");
            assert_eq!(
                c.one(&order, &embedded),
                json!(format!("<{EVIL}>")),
                "{order:?} {ph}"
            );
        }
    }
}

#[test]
fn data_inside_an_env_word_stays_data() {
    let c = hostile();
    assert_eq!(c.one(&FULL, "${UNSET:-${state.evil}}"), json!(EVIL));
    assert_eq!(c.one(&FULL, "${UNSET:-{input:evil}}"), json!(EVIL));
    assert_eq!(c.one(&FULL, "${UNSET:-{evil}}"), json!(EVIL));
}

#[test]
fn data_from_a_config_key_stays_data() {
    let out = hostile()
        .render(
            &FULL,
            &json!({"k": "${EVIL}", "use": "[{k}]", "whole": "{k}"}),
        )
        .unwrap();
    assert_eq!(out.value["use"], json!(format!("[{EVIL}]")));
    assert_eq!(out.value["whole"], json!(EVIL));
}

#[test]
fn the_documented_order_lets_later_layers_scan_authored_words() {
    let c = hostile().runtime("tool_dir", json!("/t"));
    assert_eq!(c.one(&FULL, "${PY:-{tool_dir}/python}"), json!("/t/python"));
    assert_eq!(c.one(&FULL, "${PY:-${state.x}/python}"), json!("X/python"));
    assert_eq!(c.one(&FULL, "${PY:-{input:x}}"), json!("IX"));
    assert_eq!(c.one(&FULL, "{input:who:{tool_dir}}"), json!("/t"));
    assert_eq!(c.one(&FULL, "{input:who:${HOME}}"), json!("/home/u"));
    let set = c.env("PY", "/usr/bin/py");
    assert_eq!(
        set.one(&FULL, "${PY:-{tool_dir}/python}"),
        json!("/usr/bin/py")
    );
}

#[test]
fn escapes_survive_the_whole_chain() {
    let c = hostile();
    assert_eq!(
        c.one(&FULL, "$${HOME} $${state.x} {{p}} {{input:x}}"),
        json!("${HOME} ${state.x} {p} {input:x}")
    );
}

#[test]
fn collisions_each_layer_takes_only_its_own() {
    let c = hostile();
    assert_eq!(
        c.one(&FULL, "${HOME} ${state.x} {p} {input:x} {tool_path}"),
        json!("/home/u X P IX /t/tool.py")
    );
    assert_eq!(
        c.one(&[E], "${state.x} {p} {input:x}"),
        json!("${state.x} {p} {input:x}")
    );
    assert_eq!(
        c.one(&[C], "${HOME} {p} {input:x}"),
        json!("${HOME} {p} {input:x}")
    );
    assert_eq!(
        c.one(&[P], "${HOME} ${state.x} {input:x}"),
        json!("${HOME} ${state.x} {input:x}")
    );
    assert_eq!(
        c.one(&[I], "${HOME} ${state.x} {p}"),
        json!("${HOME} ${state.x} {p}")
    );
}

#[test]
fn whole_values_keep_their_type_in_every_typed_layer() {
    let values = [
        json!(7),
        json!(10000000),
        json!(-1.5),
        json!(true),
        json!(null),
        json!([1, "a"]),
        json!({"k": {"n": 1}}),
        json!("s"),
    ];
    for v in values {
        let c = case()
            .param("v", v.clone())
            .ctx("v", v.clone())
            .input("v", v.clone());
        for s in ["{v}", "${v}", "{input:v}"] {
            assert_eq!(c.one(&FULL, s), v, "{s}");
        }
    }
}

#[test]
fn values_render_as_text_the_same_way_in_every_typed_layer() {
    let table = [
        (json!("s"), "s"),
        (json!(10000000), "10000000"),
        (json!(123456789012345678_i64), "123456789012345678"),
        (json!(0.1), "0.1"),
        (json!(1e21), "1e+21"),
        (json!(2.0), "2.0"),
        (json!(true), "true"),
        (json!(false), "false"),
        (json!(null), ""),
        (json!([1, "a", null]), r#"[1,"a",null]"#),
        (json!({"b": 1, "a": [true]}), r#"{"b":1,"a":[true]}"#),
    ];
    for (v, text) in table {
        let c = case()
            .param("v", v.clone())
            .ctx("v", v.clone())
            .input("v", v.clone());
        for s in ["<{v}>", "<${v}>", "<{input:v}>"] {
            assert_eq!(c.one(&FULL, s), json!(format!("<{text}>")), "{s} {v}");
        }
    }
}

#[test]
fn map_keys_are_never_templated() {
    let c = hostile();
    let doc =
        json!({"${HOME}": "${HOME}", "{p}": {"{input:x}": "{p}"}, "${state.x}": ["${state.x}"]});
    let out = c.render(&FULL, &doc).unwrap();
    assert_eq!(
        out.value,
        json!({"${HOME}": "/home/u", "{p}": {"{input:x}": "P"}, "${state.x}": ["X"]})
    );
}

#[test]
fn non_string_leaves_pass_through() {
    let doc = json!({"n": 1, "f": 1.5, "b": false, "z": null, "l": [1, {"a": "{p}"}]});
    let out = case().param("p", json!(2)).render(&FULL, &doc).unwrap();
    assert_eq!(
        out.value,
        json!({"n": 1, "f": 1.5, "b": false, "z": null, "l": [1, {"a": 2}]})
    );
}

#[test]
fn compiles_once_and_renders_many_times() {
    let doc = json!({"cmd": "${BIN:-run}", "args": ["{input:file}", "${state.n}", "--user={user}"], "user": "${USER}"});
    let template = Template::compile(&doc, &Chain::full(), &Limits::default()).unwrap();
    let mut seen = Vec::new();
    for (i, user) in ["ann", "bo", "cy"].iter().enumerate() {
        let mut env = strata_core::EnvMap::default();
        env.set("USER", *user, false);
        let inputs = json!({"file": format!("f{i}.txt")});
        let context = json!({"state": {"n": i}});
        let scope = Scope {
            env: &env,
            context: &context,
            inputs: inputs.as_object().unwrap(),
            ..Scope::default()
        };
        seen.push(
            template
                .render(&scope, &RenderOptions::default())
                .unwrap()
                .value
                .into_json(),
        );
    }
    assert_eq!(
        seen[0],
        json!({"cmd": "run", "args": ["f0.txt", 0, "--user=ann"], "user": "ann"})
    );
    assert_eq!(
        seen[2],
        json!({"cmd": "run", "args": ["f2.txt", 2, "--user=cy"], "user": "cy"})
    );
    fn shareable<T: Send + Sync>(_: &T) {}
    shareable(&template);
}

#[test]
fn a_document_without_placeholders_is_constant() {
    let doc = json!({"a": ["plain", 1], "b": "no $ here { either"});
    let template = Template::compile(&doc, &Chain::full(), &Limits::default()).unwrap();
    assert!(template.is_const());
    assert_eq!(
        template
            .render(&Scope::default(), &RenderOptions::STRICT)
            .unwrap()
            .value
            .into_json(),
        doc
    );
}

#[test]
fn errors_name_the_field_path() {
    let doc = json!({"config": {"args": ["ok", "{p}", "x ${state.a"]}});
    let e = case().render(&FULL, &doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "context error at config.args[2] 2..11: unclosed `${`: no matching `}` (hint: close the placeholder with `}`, or write `$${` for a literal `${`)"
    );
    let doc = json!({"env": {"MY KEY": "${NEED:?}"}});
    let e = case().render(&FULL, &doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "env error at env[\"MY KEY\"] 0..9: required variable `NEED` is unset or empty (hint: set `NEED` in the environment)"
    );
}

#[test]
fn warnings_name_the_field_path() {
    let doc = json!({"a": ["${state.gone}", "{input:who}", "${GONE}"]});
    let out = case().render(&FULL, &doc).unwrap();
    assert_eq!(
        out.warnings,
        [
            "context warning at a[0] 0..13: context path `state.gone` not found",
            "inputs warning at a[1] 0..11: input `who` is not set; the reference is kept as written",
            "env warning at a[2] 0..7: environment variable `GONE` is not set",
        ]
    );
}

#[test]
fn a_context_path_built_from_data_is_an_error() {
    let c = hostile();
    assert_eq!(
        c.err(&FULL, "${state.{input:x}}"),
        "context error at $ 0..8: context placeholder is interrupted by a substituted value (hint: close the placeholder with `}`, or write `$${` for a literal `${`)"
    );
}

#[test]
fn provenance_marks_authored_data_and_secret_runs() {
    let c = case().secret("TOKEN", "tok").env("USER", "ann");
    let context = json!({});
    let scope = Scope {
        env: &c.env,
        context: &context,
        ..Scope::default()
    };
    let t = Template::compile(
        &json!("u=${USER} t=${TOKEN}!"),
        &Chain::full(),
        &Limits::default(),
    )
    .unwrap();
    let strata_core::Rendered::Text(text) =
        t.render(&scope, &RenderOptions::default()).unwrap().value
    else {
        panic!("expected text");
    };
    let segs = text.segments();
    let want = [
        (Origin::Authored, "u="),
        (Origin::Data, "ann"),
        (Origin::Authored, " t="),
        (Origin::Secret, "***"),
        (Origin::Authored, "!"),
    ];
    assert_eq!(segs, want.map(|(o, s)| (o, s.to_string())));
    assert_eq!(text.text, "u=ann t=tok!");
}

#[test]
fn explain_shows_every_stage_with_secrets_redacted() {
    let c = case().secret("TOKEN", "tok").input("n", json!(2));
    let doc = json!({"a": "{input:n} ${TOKEN} {u}", "u": "x"});
    let context = json!({});
    let scope = Scope {
        env: &c.env,
        context: &context,
        inputs: &c.inputs,
        ..Scope::default()
    };
    let stages = explain(
        &doc,
        &Chain::full(),
        &Limits::default(),
        &scope,
        &RenderOptions::default(),
    )
    .unwrap();
    let shown: Vec<(usize, &str, Value)> = stages
        .iter()
        .map(|s| {
            (
                s.stage,
                s.layer.name(),
                s.value.to_redacted_json()["a"].clone(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (1, "inputs", json!("2 ${TOKEN} {u}")),
            (2, "context", json!("2 ${TOKEN} {u}")),
            (3, "env", json!("2 *** {u}")),
            (4, "params", json!("2 *** x")),
        ]
    );
}
