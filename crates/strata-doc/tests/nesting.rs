//! Deeply nested YAML flow collections are refused before the YAML parser sees them: its
//! scanner spends time proportional to the nesting depth on every token, so 100,000 levels
//! took minutes (found by the adversarial suite, issue 7). Valid documents holding many
//! brackets in quoted, plain and block scalars are still read.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::json;
use strata_core::Limits;
use strata_doc::{Document, Format};

fn parse(text: &str) -> Result<serde_json::Value, String> {
    Document::parse(
        "d.yaml",
        text.as_bytes().to_vec(),
        Format::Yaml,
        &Limits::default(),
    )
    .map(|d| d.value)
    .map_err(|e| e.to_string())
}

#[test]
fn a_hundred_thousand_nested_flow_collections_are_refused_quickly() {
    for (open, close) in [("[", "]"), ("{a: ", "}"), ("[{a: ", "}]")] {
        let n = 100_000;
        let text = format!("config: {}1{}\n", open.repeat(n), close.repeat(n));
        let start = Instant::now();
        let e = parse(&text).unwrap_err();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        assert!(
            e.ends_with(
                "YAML nests collections more than 128 levels deep (hint: flatten the document)"
            ),
            "{e}"
        );
    }
}

#[test]
fn the_error_points_at_the_bracket_past_the_limit() {
    let text = format!("a: 1\nb: {}\n", "[".repeat(200));
    let e = Document::parse(
        "d.yaml",
        text.into_bytes(),
        Format::Yaml,
        &Limits::default(),
    )
    .unwrap_err();
    let loc = e.location().unwrap();
    assert_eq!(
        (loc.file.as_str(), loc.line, loc.column),
        ("d.yaml", 2, 132)
    );
}

#[test]
fn brackets_in_scalars_and_comments_are_not_nesting() {
    let deep = "[".repeat(1000);
    let braces = "{".repeat(1000);
    let text = format!(
        "quoted: \"{deep}\"\nsingle: '{braces}'\nplain: echo {deep} {braces}\n\
         block: |\n  {deep}\n  {braces}\n\nfolded: >-\n  {braces}\n\
         # {deep}\nlist: [\"{deep}\", '{braces}', a\"b]\nmap: {{k: \"{braces}\"}}\n"
    );
    let v = parse(&text).unwrap();
    assert_eq!(v["quoted"], json!(deep));
    assert_eq!(v["single"], json!(braces));
    assert_eq!(v["block"], json!(format!("{deep}\n{braces}\n")));
    assert_eq!(v["folded"], json!(braces));
    assert_eq!(v["list"][0], json!(deep));
    assert_eq!(v["map"]["k"], json!(braces));
}

#[test]
fn nesting_within_the_limit_is_read() {
    let n = 100;
    let text = format!("x: {}1{}\n", "[".repeat(n), "]".repeat(n));
    let mut v = &parse(&text).unwrap()["x"];
    for _ in 0..n {
        v = &v[0];
    }
    assert_eq!(v, &json!(1));
}

/// True when YAML's parser refuses `text` or reads collections in it nested deeper than
/// `limit` (the parser alone, without strata's limits).
fn nested_deeper_than(text: &str, limit: usize) -> bool {
    use yaml_rust2::parser::{Event, Parser};
    let mut parser = Parser::new_from_str(text);
    let (mut depth, mut deepest) = (0usize, 0usize);
    loop {
        match parser.next_token() {
            Err(_) => return true,
            Ok((Event::StreamEnd, _)) => return deepest > limit,
            Ok((Event::SequenceStart(..) | Event::MappingStart(..), _)) => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Ok((Event::SequenceEnd | Event::MappingEnd, _)) => depth -= 1,
            Ok(_) => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// The pre-scan never narrows YAML: whatever it refuses, the YAML parser refuses too.
    #[test]
    fn the_pre_scan_refuses_only_what_the_parser_refuses(
        deep in 0usize..200,
        at in any::<prop::sample::Index>(),
        parts in prop::collection::vec(prop::sample::select(vec![
            "[", "]", "{", "}", "a", "b c", ": ", ":", "- ", "-", "\n", "  ", "\"", "'", "''",
            "\\", " #", "#", "|", ">-", ",", "? ", "&x ", "!t ", "*x", "---\n", "--- ", "...\n",
        ]), 0..300),
    ) {
        // A run of brackets anywhere: inside a quoted or block scalar, a comment, a plain
        // scalar, or as real nesting.
        let mut parts: Vec<String> = parts.into_iter().map(String::from).collect();
        let i = at.index(parts.len() + 1);
        parts.insert(i, "[".repeat(deep));
        let text = parts.concat();
        if let Err(e) = parse(&text) {
            if e.contains("YAML nests collections") {
                prop_assert!(
                    nested_deeper_than(&text, 128),
                    "refused, but the parser reads it within the limit: {text:?}"
                );
            }
        }
    }
}

/// Where the pre-scan does not count brackets (lines that may continue a plain scalar), the
/// parser reads them as text or stops at a structure error: never slowly.
#[test]
fn brackets_after_a_plain_scalar_are_text_or_a_quick_error() {
    let deep = "[".repeat(100_000);
    for prefix in ["a: b\n", "a\n", "- a\n", "a: b\n  ", "a: b\n- "] {
        let text = format!("{prefix}{deep}\n");
        let start = Instant::now();
        let _ = parse(&text);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{prefix:?}: {:?}",
            start.elapsed()
        );
    }
}
