//! SPEC §4 limits and the bad input: each is stopped with a clear error, never a
//! panic, an explosion or a silent leftover.

mod common;
use common::*;
use serde_json::json;

#[test]
fn a_100_mb_string_exceeds_the_template_limit() {
    let big = "x".repeat(100 << 20);
    let e = case().render(&FULL, &json!({"big": big})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "request error at big: string of 104857600 bytes exceeds the template limit of 4194304 bytes (hint: pass large text as data, or raise `limits.template_bytes` in strata.yaml (or STRATA_LIMITS_TEMPLATE_BYTES))"
    );
}

#[test]
fn ten_thousand_nested_env_defaults_stop_at_the_depth_limit() {
    let s = format!("{}x{}", "${A:-".repeat(10_000), "}".repeat(10_000));
    assert_eq!(
        case().err(&FULL, &s),
        "env error at $ 160..59969: defaults are nested more than 32 levels deep (hint: flatten the nesting, or raise `limits.default_depth` in strata.yaml (or STRATA_LIMITS_DEFAULT_DEPTH))"
    );
    let shallow = format!("{}x{}", "${A:-".repeat(30), "}".repeat(30));
    assert_eq!(case().one(&FULL, &shallow), json!("x"));
}

#[test]
fn ten_thousand_nested_input_defaults_stop_at_the_depth_limit() {
    let s = format!("{}x{}", "{input:a:".repeat(10_000), "}".repeat(10_000));
    assert_eq!(
        case().err(&FULL, &s),
        "inputs error at $ 288..99969: defaults are nested more than 32 levels deep (hint: flatten the nesting, or raise `limits.default_depth` in strata.yaml (or STRATA_LIMITS_DEFAULT_DEPTH))"
    );
}

#[test]
fn a_million_placeholders_in_one_string_are_refused() {
    let s = "{p}".repeat(1_000_000);
    assert_eq!(
        case().err(&FULL, &s),
        "params error at $ 30000..30001: more than 10000 placeholders in one string (hint: split the string, or raise `limits.placeholders_per_string` in strata.yaml (or STRATA_LIMITS_PLACEHOLDERS_PER_STRING))"
    );
}

#[test]
fn rendered_strings_are_bounded() {
    let c = case().param("mb", json!("y".repeat(1 << 20)));
    let s = "{mb}".repeat(20);
    assert_eq!(
        c.err(&FULL, &s),
        "params error at $ 64..68: rendered string exceeds 16777216 bytes (hint: if this is intended, raise `limits.output_bytes_per_string` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_STRING))"
    );
    let doc = json!({"a": "{mb}".repeat(15), "b": "{mb}".repeat(15), "c": "{mb}".repeat(15), "d": "{mb}".repeat(15), "e": "{mb}".repeat(15)});
    let e = c.render(&FULL, &doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "request error at e: rendered document exceeds 67108864 bytes (hint: if this is intended, raise `limits.output_bytes_per_config` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG))"
    );
}

#[test]
fn config_key_references_cannot_explode() {
    let mut doc = serde_json::Map::new();
    doc.insert("k0".into(), json!("x"));
    for i in 1..=3 {
        doc.insert(
            format!("k{i}"),
            json!(format!("{{k{}}}", i - 1).repeat(1000)),
        );
    }
    let e = case()
        .render(&[P], &serde_json::Value::Object(doc))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "params error at k3 64..68: rendered string exceeds 16777216 bytes (hint: if this is intended, raise `limits.output_bytes_per_string` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_STRING))"
    );
}

#[test]
fn deeply_nested_expressions_are_refused() {
    let s = format!("${{a ?? {}1{}}}", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(
        case().err(&FULL, &s),
        "context error at $ 72..73: expression nested too deeply (hint: nest at most 64 levels)"
    );
}

#[test]
fn limits_are_configurable() {
    let c = case().limits(|l| {
        l.placeholders_per_string = 2;
        l.default_depth = 1;
    });
    assert_eq!(
        c.err(&FULL, "{a}{b}{c}"),
        "params error at $ 6..7: more than 2 placeholders in one string (hint: split the string, or raise `limits.placeholders_per_string` in strata.yaml (or STRATA_LIMITS_PLACEHOLDERS_PER_STRING))"
    );
    assert_eq!(c.one(&FULL, "${A:-x}"), json!("x"));
    assert_eq!(
        c.err(&FULL, "${A:-${B:-x}}"),
        "env error at $ 5..12: defaults are nested more than 1 levels deep (hint: flatten the nesting, or raise `limits.default_depth` in strata.yaml (or STRATA_LIMITS_DEFAULT_DEPTH))"
    );
}

/// Whole-value references borrow their value instead of copying it, but what they yield is
/// output all the same: it counts against the per-document limit (issue 11: 100 references
/// to a 10 MiB parameter returned 1 GiB).
#[test]
fn whole_value_references_count_against_the_document_limit() {
    let mb = || json!("y".repeat(1 << 20));
    let small = |c: Case| c.limits(|l| l.output_bytes_per_config = 8 << 20);
    let refs = |r: &str| json!(vec![r; 100]);
    let want = |path: &str| {
        format!("request error at {path}: rendered document exceeds 8388608 bytes (hint: if this is intended, raise `limits.output_bytes_per_config` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG))")
    };
    // A caller parameter, a context path, an input: data borrowed from the scope.
    let c = small(case().param("p", mb()).ctx("c", mb()).input("i", mb()));
    for (r, layers) in [("{p}", &[P][..]), ("${c}", &[C]), ("{input:i}", &[I])] {
        let e = c.render(layers, &refs(r)).unwrap_err();
        assert_eq!(e.to_string(), want("[8]"), "{r}");
    }
    // Lists and maps count by their text (compact JSON).
    let list = json!(vec!["y".repeat(1 << 10); 1 << 10]);
    let c = small(case().param("p", list));
    let e = c.render(&[P], &refs("{p}")).unwrap_err();
    assert_eq!(e.to_string(), want("[7]"));
    // A config key rendered once and referenced whole: each reference is output again.
    let c = small(case().param("p", mb()));
    let doc = json!({"a": "{p}", "b": refs("{a}")});
    let e = c.render(&[P], &doc).unwrap_err();
    assert_eq!(e.to_string(), want("b[7]"));
    // An authored constant referenced whole.
    let doc = json!({"a": "z".repeat(1 << 20), "b": refs("{a}")});
    let e = small(case()).render(&[P], &doc).unwrap_err();
    assert_eq!(e.to_string(), want("b[8]"));
    // Under the limit everything renders, whole values keeping their type.
    let c = case().param("p", mb()).param("n", json!(7));
    let out = c.render(&[P], &json!(["{p}", "{p}", "{n}"])).unwrap();
    assert_eq!(out.value[2], json!(7));
}

/// A whole document is bounded too, not only each string: compile memory grows with the
/// strings and the placeholders of the document (a 36 MB tool used 785 MB).
#[test]
fn a_document_is_bounded_in_string_bytes_and_placeholders() {
    let small = |c: Case| {
        c.limits(|l| {
            l.template_bytes_per_document = 1000;
            l.placeholders_per_document = 50;
        })
    };
    let strings = json!(vec!["x".repeat(300); 4]);
    let e = small(case()).render(&FULL, &strings).unwrap_err();
    assert_eq!(
        e.to_string(),
        "request error at [3]: the document's strings exceed the limit of 1000 bytes (hint: split the document, pass large text as data, or raise `limits.template_bytes_per_document` in strata.yaml (or STRATA_LIMITS_TEMPLATE_BYTES_PER_DOCUMENT))"
    );
    let holes = json!(vec!["{a}{b}{c}{d}{e}{f}{g}{h}{i}{j}"; 6]);
    let e = small(case()).render(&FULL, &holes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "request error at [5]: more than 50 placeholders in one document (hint: split the document, or raise `limits.placeholders_per_document` in strata.yaml (or STRATA_LIMITS_PLACEHOLDERS_PER_DOCUMENT))"
    );
    assert!(small(case())
        .render(&FULL, &json!(vec!["{a}{b}{c}{d}{e}"; 10]))
        .is_ok());
    let d = strata_core::Limits::default();
    assert_eq!(
        (d.template_bytes_per_document, d.placeholders_per_document),
        (16 << 20, 100_000)
    );
}
