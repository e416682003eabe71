//! What every document read (tools, directives, graphs, hooks, contexts, env files, batch
//! requests) is held to, beyond its syntax: the bytes it expands to (YAML aliases of large
//! scalars), its size on disk, numbers JSON can hold, unique keys, no byte-order mark.

use serde_json::json;
use strata_core::{ErrorKind, Limits, Location};
use strata_doc::{Document, Format};

fn parse_with(text: &str, format: Format, limits: &Limits) -> Result<Document, strata_core::Error> {
    Document::parse("d.yaml", text.as_bytes().to_vec(), format, limits)
}

fn parse(text: &str) -> Result<Document, strata_core::Error> {
    parse_with(text, Format::Yaml, &Limits::default())
}

fn at(line: usize, column: usize) -> Option<Location> {
    Some(Location {
        file: "d.yaml".into(),
        line,
        column,
    })
}

#[test]
fn aliases_of_large_scalars_stop_at_the_byte_limit() {
    let limits = Limits {
        document_bytes: 1 << 20,
        ..Limits::default()
    };
    let scalar = "x".repeat(100 << 10);
    // 100 KiB, then 10 aliases of it: 1.1 MiB once expanded, from a 100 KiB file.
    let text = format!("base: &b \"{scalar}\"\nargs: [{}]\n", ["*b"; 10].join(", "));
    let e = parse_with(&text, Format::Yaml, &limits).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit);
    assert_eq!(e.message(), "document expands to more than 1048576 bytes");
    assert_eq!(
        e.hint(),
        Some("YAML aliases may repeat large parts of a document; reduce them")
    );
    assert_eq!(e.location().map(|l| l.file.as_str()), Some("d.yaml"));
    // Keys count too, and nine aliases fit.
    let text = format!("base: &b \"{scalar}\"\nargs: [{}]\n", ["*b"; 9].join(", "));
    let doc = parse_with(&text, Format::Yaml, &limits).unwrap();
    assert_eq!(doc.value["args"].as_array().map(Vec::len), Some(9));
}

#[test]
fn two_thousand_aliases_of_a_megabyte_are_refused_in_bounded_memory() {
    let scalar = "x".repeat(1 << 20);
    let text = format!(
        "base: &b \"{scalar}\"\nargs: [{}]\n",
        vec!["*b"; 2000].join(", ")
    );
    let e = parse(&text).unwrap_err();
    assert_eq!(e.message(), "document expands to more than 67108864 bytes");
}

#[test]
fn files_larger_than_the_document_limit_are_refused_before_parsing() {
    let limits = Limits {
        document_bytes: 1000,
        ..Limits::default()
    };
    let text = format!("a: \"{}\"\n", "x".repeat(1000));
    for format in [Format::Yaml, Format::Json] {
        let e = parse_with(&text, format, &limits).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Limit);
        assert_eq!(
            e.message(),
            "document of 1006 bytes exceeds the limit of 1000 bytes"
        );
        assert_eq!(e.location().cloned(), at(1, 1));
    }
}

#[test]
fn numbers_json_cannot_hold_are_errors_not_null() {
    for (text, shown, column) in [
        ("timeout: .nan\n", ".nan", 10),
        ("a:\n  timeout: .inf\n", ".inf", 12),
        ("timeout: -.Inf\n", "-.Inf", 10),
        ("t: [1, .NaN]\n", ".NaN", 8),
    ] {
        let e = parse(text).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{text}");
        assert_eq!(
            e.message(),
            format!("`{shown}` is not a finite number"),
            "{text}"
        );
        assert_eq!(
            e.hint(),
            Some("numbers must be finite (JSON has no NaN or infinity); quote it to mean text")
        );
        assert_eq!(
            e.location().cloned(),
            at(text.lines().count(), column),
            "{text}"
        );
    }
    assert_eq!(parse("t: '.nan'\n").unwrap().value, json!({"t": ".nan"}));
    assert_eq!(parse("t: 1e300\n").unwrap().value, json!({"t": 1e300}));
    // Integers past 64 bits are exact, in YAML as in JSON.
    for (text, format) in [
        ("t: 99999999999999999999\n", Format::Yaml),
        ("{\"t\": 99999999999999999999}", Format::Json),
    ] {
        let value = parse_with(text, format, &Limits::default()).unwrap().value;
        assert_eq!(value.to_string(), r#"{"t":99999999999999999999}"#);
    }
    // Out of a float's range: text to YAML, an error to JSON.
    assert_eq!(parse("t: 1e400\n").unwrap().value, json!({"t": "1e400"}));
    let e = parse_with("{\"t\": 1e400}", Format::Json, &Limits::default()).unwrap_err();
    assert_eq!(e.message(), "JSON syntax error: number out of range");
}

#[test]
fn duplicate_keys_are_errors_not_last_wins() {
    let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert_eq!(e.message(), "duplicate key `a`");
    assert_eq!(e.hint(), Some("each key may appear once in a map"));
    assert_eq!(e.location().cloned(), at(3, 1));
    let e = parse("x:\n  y: {k: 1, k: 2}\n").unwrap_err();
    assert_eq!(e.message(), "duplicate key `k`");
    assert_eq!(e.location().cloned(), at(2, 13));
    let e = parse_with("{\"a\": 1, \"a\": 2}", Format::Json, &Limits::default()).unwrap_err();
    assert_eq!(e.message(), "duplicate key `a`");
    assert_eq!(e.location().cloned(), at(1, 12));
    // The same key in different maps is fine.
    assert!(parse("a: {k: 1}\nb: {k: 2}\n").is_ok());
}

#[test]
fn a_byte_order_mark_is_a_clear_error() {
    for format in [Format::Yaml, Format::Json] {
        let e = parse_with("\u{feff}{\"a\": 1}\n", format, &Limits::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(
            e.message(),
            "the file starts with a byte-order mark (U+FEFF)"
        );
        assert_eq!(
            e.hint(),
            Some("save the file as UTF-8 without a byte-order mark")
        );
        assert_eq!(e.location().cloned(), at(1, 1));
    }
}

#[test]
fn keys_of_other_scalar_types_are_read_as_text() {
    let doc = parse("1: a\ntrue: b\nnull: c\n").unwrap();
    assert_eq!(doc.value, json!({"1": "a", "true": "b", "null": "c"}));
}

#[test]
fn a_repeated_key_is_found_among_few_keys_and_among_many() {
    use strata_doc::has_duplicates;
    let few = ["a", "b", "c"];
    assert!(!has_duplicates(few.iter().copied()));
    assert!(has_duplicates(["a", "b", "a"].iter().copied()));
    let many: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    assert!(!has_duplicates(many.iter().map(String::as_str)));
    let repeated = many.iter().map(String::as_str).chain(["k39"]);
    assert!(has_duplicates(repeated.collect::<Vec<_>>().into_iter()));
    assert!(!has_duplicates(std::iter::empty()));
}
