//! A render handed over a top-level entry at a time (`Template::render_each`, what
//! `strata render` writes from) gives the document and warnings `Template::render` gives,
//! whatever the document's shape and size.

use serde::ser::{SerializeMap, Serializer as _};
use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Error, ErrorKind, Layer, Limits, RenderOptions, Scope};
use strata_doc::Format;
use strata_pipeline::{Chain, Template};

/// The scope every document is rendered against.
struct Data {
    env: EnvMap,
    params: Map<String, Value>,
}

impl Data {
    fn new() -> Data {
        Data {
            env: [("HOME", "/home/ada")].into_iter().collect(),
            params: [("who".to_string(), json!("ann"))].into_iter().collect(),
        }
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            env: &self.env,
            caller_params: &self.params,
            ..Scope::default()
        }
    }
}

fn template(yaml: &str) -> Template {
    let (_, template) = Template::read(
        "doc.yaml",
        yaml.as_bytes().to_vec(),
        Format::Yaml,
        &Chain::full(),
        &Limits::default(),
    )
    .expect("reads");
    template.expect("compiles")
}

/// The pretty JSON and warnings of a render gathered whole.
fn whole(template: &Template, data: &Data) -> (String, Vec<String>) {
    let out = template
        .render(&data.scope(), &RenderOptions::default())
        .expect("renders");
    let warnings = out.warnings.iter().map(|w| w.message.clone()).collect();
    (serde_json::to_string_pretty(&out.value).unwrap(), warnings)
}

/// The pretty JSON and warnings of a render written a top-level entry at a time.
fn streamed(template: &Template, data: &Data) -> (String, Vec<String>) {
    let mut text = Vec::new();
    let mut ser = serde_json::Serializer::pretty(&mut text);
    let options = RenderOptions::default();
    let warnings = if template.is_map() {
        let mut map = ser.serialize_map(None).unwrap();
        let warnings = template
            .render_each(&data.scope(), &options, &mut |key, value| {
                map.serialize_entry(key.expect("a map's entry has its key"), value)
                    .unwrap();
                Ok(())
            })
            .expect("renders");
        map.end().unwrap();
        warnings
    } else {
        let mut calls = 0;
        let warnings = template
            .render_each(&data.scope(), &options, &mut |key, value| {
                assert_eq!(key, None);
                calls += 1;
                serde::Serialize::serialize(value, &mut ser).unwrap();
                Ok(())
            })
            .expect("renders");
        assert_eq!(calls, 1, "a document that is not a map is handed over once");
        warnings
    };
    let warnings = warnings.iter().map(|w| w.message.clone()).collect();
    (String::from_utf8(text).unwrap(), warnings)
}

#[test]
fn each_shape_streams_as_it_renders_whole() {
    let data = Data::new();
    let many: String = (0..10_000)
        .map(|i| match i % 4 {
            0 => format!("k{i}: \"v{i} ${{HOME}}\"\n"),
            1 => format!("k{i}: \"{{k{}}} and {{who}}\"\n", 9_999 - i),
            2 => format!("k{i}: [{i}, \"${{MISSING_{i}}}\"]\n"),
            _ => format!("k{i}: {{n: {i}, s: plain}}\n"),
        })
        .collect();
    for doc in [
        "a: 1\nb: \"${HOME}/x\"\nc: [true, null]\n",
        // Keys named by `{name}`: rendered when first needed, written in document order.
        "late: \"{early} and {mid}\"\nmid: \"m {early}\"\nearly: \"${HOME}\"\nlast: \"{late}\"\n",
        "- \"${HOME}\"\n- 2\n- {k: \"{who}\"}\n",
        "\"${HOME}\"\n",
        "a: 1\nb: [x, y]\n",
        "x: \"${NOT_SET_ANYWHERE}\"\ny: \"{nobody}\"\n",
        &many,
    ] {
        let template = template(doc);
        assert_eq!(
            streamed(&template, &data),
            whole(&template, &data),
            "{doc:.80}"
        );
    }
}

#[test]
fn an_error_of_the_receiver_stops_the_render() {
    let data = Data::new();
    let template = template("a: \"${HOME}\"\nb: \"${HOME}\"\nc: \"${HOME}\"\n");
    let mut seen = Vec::new();
    let stop = Error::new(Layer::REQUEST, ErrorKind::Io, "full".to_string());
    let err = template
        .render_each(&data.scope(), &RenderOptions::default(), &mut |key, _| {
            seen.push(key.unwrap().to_string());
            if seen.len() == 2 {
                return Err(stop.clone());
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!((err.kind(), err.message()), (ErrorKind::Io, "full"));
    assert_eq!(seen, ["a", "b"]);
}

#[test]
fn a_render_error_stops_before_the_entry_that_fails() {
    let data = Data::new();
    let template = template("a: \"${HOME}\"\nb: \"${GONE:?must be set}\"\nc: 1\n");
    let mut seen = Vec::new();
    let err = template
        .render_each(&data.scope(), &RenderOptions::default(), &mut |key, _| {
            seen.push(key.unwrap().to_string());
            Ok(())
        })
        .unwrap_err();
    assert_eq!(
        err.message(),
        "required variable `GONE` is unset or empty: must be set"
    );
    assert_eq!(seen, ["a"]);
}
