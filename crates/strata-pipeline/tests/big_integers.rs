//! SPEC §1: an integer renders as its decimal, never through a float — also past 64 bits.
//! Integers read from JSON or YAML text (the document, parameters, contexts, inputs) render
//! exactly in every layer, whole (keeping their type) and embedded in text.

mod common;
use common::*;

use serde_json::{json, Value};
use strata_core::{EnvMap, Limits, RenderOptions, Scope};
use strata_doc::{Document, Format};
use strata_pipeline::{Chain, Template};

/// 2^64 + 1, -(2^63) - 1 and a 40-digit integer: past `u64`, past `i64`, past 128 bits.
const BIG: [&str; 3] = [
    "18446744073709551617",
    "-9223372036854775809",
    "1234567890123456789012345678901234567890",
];

fn read(text: &str, format: Format) -> Value {
    Document::parse("data", text.as_bytes().to_vec(), format, &Limits::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .value
}

/// `{"n": <n>}` written in `format`.
fn data(n: &str, format: Format) -> Value {
    match format {
        Format::Json => read(&format!("{{\"n\": {n}}}"), format),
        _ => read(&format!("n: {n}\n"), format),
    }
}

/// The value as compact JSON: a whole value keeps its type, so a number is its digits.
fn json(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

#[test]
fn read_from_json_or_yaml_they_render_exactly_in_layers_p_c_and_i() {
    for n in BIG {
        for format in [Format::Json, Format::Yaml] {
            let d = data(n, format);
            assert_eq!(json(&d["n"]), n, "{n} read as {format:?}");
            let c = case()
                .param("n", d["n"].clone())
                .ctx("state", d.clone())
                .input("n", d["n"].clone());
            for (layer, whole) in [(P, "{n}"), (C, "${state.n}"), (I, "{input:n}")] {
                assert_eq!(json(&c.one(&[layer], whole)), n, "{whole} of {n}");
                let embedded = format!("n={whole};");
                assert_eq!(
                    c.one(&[layer], &embedded),
                    json!(format!("n={n};")),
                    "{embedded} of {n}"
                );
            }
            // Through the whole chain, and as an element of a list rendered into text.
            let c = c.ctx("list", read(&format!("[{n}, 1]"), Format::Json));
            assert_eq!(c.one(&FULL, "${list}."), json!(format!("[{n},1].")));
            assert_eq!(json(&c.one(&FULL, "${list}")), format!("[{n},1]"));
        }
    }
}

#[test]
fn layer_e_passes_the_digits_as_the_text_they_are() {
    for n in BIG {
        let c = case().env("N", n);
        assert_eq!(c.one(&[E], "${N}"), json!(n));
        assert_eq!(c.one(&[E], "n=${N}"), json!(format!("n={n}")));
    }
}

/// A template read from `text`, rendered with the parameters `params` (JSON text).
fn render_read(text: &str, format: Format, params: &str) -> Value {
    let (_, template) = Template::read(
        "doc",
        text.as_bytes().to_vec(),
        format,
        &Chain::full(),
        &Limits::default(),
    )
    .unwrap();
    let template = template.unwrap();
    let params = read(params, Format::Json);
    let env = EnvMap::default();
    let scope = Scope {
        env: &env,
        caller_params: params.as_object().unwrap(),
        ..Scope::default()
    };
    let out = template.render(&scope, &RenderOptions::STRICT).unwrap();
    out.value.into_json()
}

#[test]
fn authored_in_the_document_they_stay_exact_as_constants_and_as_parameters() {
    for n in BIG {
        for (text, format) in [
            (
                format!("{{\"k\": {n}, \"s\": \"{{k}}\", \"t\": \"k={{k}}\", \"c\": \"{{c2}}\"}}"),
                Format::Json,
            ),
            (
                format!("k: {n}\ns: \"{{k}}\"\nt: \"k={{k}}\"\nc: \"{{c2}}\"\n"),
                Format::Yaml,
            ),
        ] {
            let out = render_read(&text, format, &format!("{{\"c2\": {n}}}"));
            assert_eq!(
                json(&out),
                format!("{{\"k\":{n},\"s\":{n},\"t\":\"k={n}\",\"c\":{n}}}"),
                "{text}"
            );
            // Compiled from the value read whole, the same.
            let value = read(&text, format);
            let template = Template::compile(&value, &Chain::full(), &Limits::default()).unwrap();
            let env = EnvMap::default();
            let params = read(&format!("{{\"c2\": {n}}}"), Format::Json);
            let scope = Scope {
                env: &env,
                caller_params: params.as_object().unwrap(),
                ..Scope::default()
            };
            let whole = template.render(&scope, &RenderOptions::STRICT).unwrap();
            assert_eq!(whole.value.into_json(), out);
        }
    }
}

#[test]
fn yaml_integers_in_every_base_are_exact_up_to_128_bits() {
    let d = read(
        "hex: 0x10000000000000001\noct: 0o2000000000000000000001\nbin: 0b10000000000000000000000000000000000000000000000000000000000000001\nneg: -0x8000000000000001\nplus: +18446744073709551617\nmax: 0xffffffffffffffffffffffffffffffff\n",
        Format::Yaml,
    );
    assert_eq!(
        json(&d),
        "{\"hex\":18446744073709551617,\"oct\":18446744073709551617,\"bin\":18446744073709551617,\"neg\":-9223372036854775809,\"plus\":18446744073709551617,\"max\":340282366920938463463374607431768211455}"
    );
    // Floats keep their shortest round-trip form; leading zeros stay text, as before.
    let d = read(
        "a: 1.50\nb: 1e2\nc: 00123456789012345678901\nd: -0\n",
        Format::Yaml,
    );
    assert_eq!(
        json(&d),
        "{\"a\":1.5,\"b\":100.0,\"c\":\"00123456789012345678901\",\"d\":0}"
    );
    let d = read(
        "{\"a\": 1.50, \"b\": 1E2, \"c\": -0, \"d\": -0.0}",
        Format::Json,
    );
    assert_eq!(json(&d), "{\"a\":1.5,\"b\":100.0,\"c\":-0.0,\"d\":-0.0}");
}
