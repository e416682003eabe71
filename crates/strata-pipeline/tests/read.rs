//! `Template::read`: YAML and JSON compiled as they are read. It renders what reading the
//! document and compiling its value renders, and the compile's limits stop the read at the
//! string that breaks them, located there.

use serde_json::{json, Value};
use strata_core::{EnvMap, Error, Limits, RenderOptions, Scope};
use strata_doc::{Document, Format};
use strata_pipeline::{Chain, Template};

/// The render of `template` with `HOME=/h` and parameter `x=X`.
fn rendered(template: &Template) -> Value {
    let mut env = EnvMap::default();
    env.set("HOME", "/h", false);
    let params = json!({"x": "X"});
    let params = params.as_object().expect("an object");
    let scope = Scope {
        env: &env,
        caller_params: params,
        ..Scope::default()
    };
    let out = template
        .render(&scope, &RenderOptions::default())
        .expect("renders");
    out.value.into_json()
}

fn read(text: &str, limits: &Limits) -> Result<(Document, Template), Error> {
    read_as(text, Format::Yaml, limits)
}

fn read_as(text: &str, format: Format, limits: &Limits) -> Result<(Document, Template), Error> {
    let (doc, template) = Template::read(
        "doc.yaml",
        text.as_bytes().to_vec(),
        format,
        &Chain::full(),
        limits,
    )?;
    // A JSON document's compile error carries its field; the document locates it.
    let template = template.map_err(|e| doc.locate_error(e))?;
    Ok((doc, template))
}

fn compiled(text: &str) -> Template {
    compiled_as(text, Format::Yaml).expect("compiles")
}

/// `text` read whole as `format`, then compiled; an error located by the document.
fn compiled_as(text: &str, format: Format) -> Result<Template, Error> {
    let limits = Limits::default();
    let doc = Document::parse("doc.yaml", text.as_bytes().to_vec(), format, &limits)?;
    Template::compile_owned(doc.value.clone(), &Chain::full(), &limits)
        .map_err(|e| doc.locate_error(e))
}

/// JSON is compiled as it is read too: the same render, and the same errors at the same
/// places, as reading it whole and compiling the value.
#[test]
fn json_renders_and_fails_as_reading_then_compiling_does() {
    for text in [
        r#"{"a": "${HOME}", "b": [1, "two", "{x}", {"c": null, "d": 2.5}], "e": true}"#,
        r#"{"esc": "a\tb ${HOME}", "uni": "\u00e9 {x}", "deep": {"k": ["v", {"w": "{x}"}]}}"#,
        r#"["${HOME}", 2, {"k": "{x}"}]"#,
        r#""just ${HOME}""#,
        "{}",
    ] {
        let (doc, template) = read_as(text, Format::Json, &Limits::default()).expect("reads");
        assert_eq!(doc.text.as_str(), text);
        let whole = compiled_as(text, Format::Json).expect("compiles");
        assert_eq!(rendered(&template), rendered(&whole), "{text}");
    }
    for text in [
        "{\"a\": 1, \"a\": 2}",
        "{\"a\": [1}",
        "{\"a\": 1e400}",
        "{\"top\": {\"cmd\": \"run ${HOME\"}}",
        "{\"list\": [\"ok\", \"${HOME\"]}",
    ] {
        let read = read_as(text, Format::Json, &Limits::default()).expect_err("refused");
        let whole = compiled_as(text, Format::Json).expect_err("refused");
        assert_eq!(read.to_string(), whole.to_string(), "{text}");
        assert!(read.location().is_some(), "{read}");
    }
}

fn refusal(text: &str, limits: &Limits) -> String {
    read(text, limits).expect_err("refused").to_string()
}

#[test]
fn renders_as_reading_then_compiling_does() {
    let docs = [
        "a: ${HOME}\nb: [1, two, '{x}', {c: null, d: 2.5}]\ne: true\n",
        "base: &b {dir: '${HOME}/x', n: 1}\nfirst: *b\nsecond: *b\nkey: &k name\n*k : v\n",
        "- &s '{x} ${HOME}'\n- *s\n- [*s, {k: *s}]\n",
        "plain: 0123\nhex: 0x1f\nlist: []\nmap: {}\nblock: |\n  ${HOME}\n  {x}\n",
        "",
        "just text\n",
        // Constant strings point into the text, after characters that are not ASCII too.
        "clé: 'née à ${HOME}'\nville: \"Zürich\"\n—: plain — text\nlist: [ü, 'x y']\n",
    ];
    for text in docs {
        let (doc, template) = read(text, &Limits::default()).expect("reads");
        assert_eq!(doc.value, Value::Null, "{text}");
        assert_eq!(doc.text.as_str(), text);
        assert_eq!(rendered(&template), rendered(&compiled(text)), "{text}");
    }
    let (_, t) = read(
        "a: &a '${HOME}'\nb: *a\n&k key: 1\nc: *k\n",
        &Limits::default(),
    )
    .expect("reads");
    assert_eq!(
        rendered(&t),
        json!({"a": "/h", "b": "/h", "key": 1, "c": "key"})
    );
}

#[test]
fn the_placeholder_limit_stops_the_read_at_its_string() {
    let limits = Limits {
        placeholders_per_document: 3,
        ..Limits::default()
    };
    // The text after the fourth placeholder is not even YAML: the read never gets there.
    let text = "a: ${HOME}\nb:\n  - '{x} {x}'\n  - x ${HOME}\nc: [unclosed\n";
    assert_eq!(
        refusal(text, &limits),
        "doc.yaml:4:5: request error at b[1]: more than 3 placeholders in one document (hint: split the document, or raise `limits.placeholders_per_document` in strata.yaml (or STRATA_LIMITS_PLACEHOLDERS_PER_DOCUMENT))"
    );
}

#[test]
fn an_alias_counts_its_anchors_placeholders_again() {
    let limits = Limits {
        placeholders_per_document: 5,
        ..Limits::default()
    };
    let text = "a: &a ['${HOME}', '{x}']\nb: *a\nc: *a\n";
    assert_eq!(
        refusal(text, &limits),
        "doc.yaml:3:4: request error at c: more than 5 placeholders in one document (hint: split the document, or raise `limits.placeholders_per_document` in strata.yaml (or STRATA_LIMITS_PLACEHOLDERS_PER_DOCUMENT))"
    );
    let fits = Limits {
        placeholders_per_document: 6,
        ..Limits::default()
    };
    assert!(read(text, &fits).is_ok());
}

#[test]
fn the_bytes_of_strings_are_counted_through_aliases_too() {
    let limits = Limits {
        template_bytes_per_document: 20,
        ..Limits::default()
    };
    let text = "a: &a 0123456789\nb: *a\nc: *a\n";
    assert_eq!(
        refusal(text, &limits),
        "doc.yaml:3:4: request error at c: the document's strings exceed the limit of 20 bytes (hint: split the document, pass large text as data, or raise `limits.template_bytes_per_document` in strata.yaml (or STRATA_LIMITS_TEMPLATE_BYTES_PER_DOCUMENT))"
    );
}

#[test]
fn a_bad_placeholder_is_located_at_its_byte_in_the_string() {
    assert_eq!(
        refusal("top:\n  cmd: \"run ${HOME\"\n", &Limits::default()),
        compiled_error("top:\n  cmd: \"run ${HOME\"\n")
    );
    assert!(refusal("top:\n  cmd: \"run ${HOME\"\n", &Limits::default())
        .starts_with("doc.yaml:2:13: env error at top.cmd 4..10: "));
}

/// The error of reading the document whole, then compiling it, located by the document.
fn compiled_error(text: &str) -> String {
    let limits = Limits::default();
    let doc = Document::parse("doc.yaml", text.as_bytes().to_vec(), Format::Yaml, &limits)
        .expect("parses");
    let e = Template::compile(&doc.value, &Chain::full(), &limits).expect_err("refused");
    doc.locate_error(e).to_string()
}

#[test]
fn reading_errors_are_those_of_the_document_reader() {
    // A map past its first chunk of entries (4,096) still finds a key repeated in any chunk.
    let many: String = (0..9_000)
        .map(|i| format!("k{i}: \"v ${{HOME}}\"\n"))
        .collect();
    let repeated = [
        format!("{many}k10: again\n"),
        format!("{many}k5000: again\n"),
        format!("{many}k8999: again\n"),
    ];
    for text in repeated.iter().map(String::as_str).chain([
        "a: 1\na: 2\n",
        "a: [1\n",
        "a: .nan\n",
        "a: !custom x\n",
        "a: 1\n---\nb: 2\n",
    ]) {
        let expected = Document::parse(
            "doc.yaml",
            text.as_bytes().to_vec(),
            Format::Yaml,
            &Limits::default(),
        )
        .expect_err("refused")
        .to_string();
        let e = read(text, &Limits::default()).expect_err("refused");
        assert_eq!(e.to_string(), expected, "{text:.60}");
    }
}

#[test]
fn a_json_compile_error_carries_its_field_path() {
    let limits = Limits {
        placeholders_per_document: 1,
        ..Limits::default()
    };
    let (doc, template) = Template::read(
        "doc.json",
        br#"{"a": "${HOME}", "b": ["{x}"]}"#.to_vec(),
        Format::Json,
        &Chain::full(),
        &limits,
    )
    .expect("a document");
    let e = template.expect_err("refused");
    assert_eq!(
        doc.locate_error(e).to_string(),
        "doc.json:1:24: request error at b[0]: more than 1 placeholders in one document (hint: split the document, or raise `limits.placeholders_per_document` in strata.yaml (or STRATA_LIMITS_PLACEHOLDERS_PER_DOCUMENT))"
    );
}
