//! The result of a render: constants and keys borrowed from the compiled template, whole-value
//! data borrowed from the scope, and the same result whether the template was compiled from a
//! borrowed or an owned document.

use std::borrow::Cow;

use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Limits, Origin, RenderOptions, Rendered, Scope};
use strata_pipeline::{Chain, Template};

fn doc() -> Value {
    json!({
        "name": "lint",
        "big": "x".repeat(1 << 20),
        "limits": {"cpu": 2, "tags": ["a", "b"]},
        "home": "${HOME}",
        "who": "{input:user}",
        "greeting": "hi {input:user} in ${HOME}",
    })
}

fn render_json(template: &Template) -> Value {
    let env: EnvMap = [("HOME", "/home/ada")].into_iter().collect();
    let inputs: Map<String, Value> = [("user".to_string(), json!({"id": 7}))]
        .into_iter()
        .collect();
    let scope = Scope {
        env: &env,
        inputs: &inputs,
        ..Scope::default()
    };
    template
        .render(&scope, &RenderOptions::STRICT)
        .unwrap()
        .value
        .into_json()
}

fn entry<'r, 't>(r: &'r Rendered<'t>, key: &str) -> &'r Rendered<'t> {
    let Rendered::Object(entries) = r else {
        panic!("a map: {r:?}")
    };
    &entries.iter().find(|(k, _)| k == key).unwrap().1
}

#[test]
fn constants_and_keys_are_borrowed_from_the_template() {
    let template = Template::compile(&doc(), &Chain::full(), &Limits::default()).unwrap();
    let out = template
        .render(&Scope::default(), &RenderOptions::default())
        .unwrap();
    let Rendered::Object(entries) = &out.value else {
        panic!("a map")
    };
    assert!(entries.iter().all(|(k, _)| matches!(k, Cow::Borrowed(_))));
    for key in ["name", "big"] {
        assert!(
            matches!(entry(&out.value, key), Rendered::Str(_)),
            "{key} is borrowed"
        );
    }
    let Rendered::Str(big) = entry(&out.value, "big") else {
        panic!("a constant string")
    };
    assert_eq!(big.len(), 1 << 20);
    assert!(matches!(
        entry(&out.value, "limits"),
        Rendered::Value(Cow::Borrowed(_), Origin::Authored)
    ));
    assert_eq!(
        entry(&out.value, "limits"),
        &Rendered::Value(
            Cow::Owned(json!({"cpu": 2, "tags": ["a", "b"]})),
            Origin::Authored
        )
    );
}

#[test]
fn whole_value_data_is_borrowed_from_the_scope_and_keeps_its_type() {
    let template = Template::compile(&doc(), &Chain::full(), &Limits::default()).unwrap();
    let inputs: Map<String, Value> = [("user".to_string(), json!({"id": 7}))]
        .into_iter()
        .collect();
    let scope = Scope {
        inputs: &inputs,
        ..Scope::default()
    };
    let out = template.render(&scope, &RenderOptions::default()).unwrap();
    let Rendered::Value(Cow::Borrowed(user), Origin::Data) = entry(&out.value, "who") else {
        panic!("borrowed data: {:?}", entry(&out.value, "who"))
    };
    assert!(std::ptr::eq(*user, &inputs["user"]));
    assert_eq!(*user, &json!({"id": 7}));
}

#[test]
fn into_owned_detaches_the_result_from_its_template() {
    let owned: Rendered<'static> = {
        let template = Template::compile(&doc(), &Chain::full(), &Limits::default()).unwrap();
        let out = template
            .render(&Scope::default(), &RenderOptions::default())
            .unwrap();
        out.value.into_owned()
    };
    let Rendered::Object(entries) = &owned else {
        panic!("a map")
    };
    assert!(entries.iter().all(|(k, _)| matches!(k, Cow::Owned(_))));
    assert_eq!(owned.into_json()["name"], json!("lint"));
}

#[test]
fn compile_owned_renders_exactly_what_compile_does() {
    let chain = Chain::full();
    let limits = Limits::default();
    let borrowed = Template::compile(&doc(), &chain, &limits).unwrap();
    let owned = Template::compile_owned(doc(), &chain, &limits).unwrap();
    let expected = json!({
        "name": "lint",
        "big": "x".repeat(1 << 20),
        "limits": {"cpu": 2, "tags": ["a", "b"]},
        "home": "/home/ada",
        "who": {"id": 7},
        "greeting": "hi {\"id\":7} in /home/ada",
    });
    assert_eq!(render_json(&borrowed), expected);
    assert_eq!(render_json(&owned), expected);
}

#[test]
fn a_placeholder_free_document_is_one_constant() {
    let template = Template::compile_owned(
        json!({"a": [1, "two", {"three": 3}], "b": null}),
        &Chain::full(),
        &Limits::default(),
    )
    .unwrap();
    assert!(template.is_const());
    assert_eq!(
        render_json(&template),
        json!({"a": [1, "two", {"three": 3}], "b": null})
    );
}
