//! SPEC §4's YAML alias-expansion limit: a document whose aliases expand past the node limit
//! is refused, even when it stays under the reader's repetition limit (aliases may repeat the
//! document's events 100 times over).

use strata_core::Limits;
use strata_doc::{Document, Format};

fn parse(text: &str, nodes: usize) -> Result<Document, strata_core::Error> {
    let limits = Limits {
        yaml_nodes: nodes,
        ..Limits::default()
    };
    Document::parse("a.yaml", text.as_bytes().to_vec(), Format::Yaml, &limits)
}

#[test]
fn aliases_that_expand_past_the_node_limit_are_refused() {
    let text = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [*a, *a, *a, *a]\n";
    // 1 root + a (1 + 9) + b (1 + 4 × 10) = 52 nodes.
    assert!(parse(text, 52).is_ok());
    let e = parse(text, 51).unwrap_err();
    assert_eq!(e.message(), "document expands to more than 51 nodes");
    assert_eq!(
        e.hint(),
        Some("YAML aliases may repeat large parts of a document; reduce them")
    );
}

#[test]
fn aliases_of_aliases_stop_at_the_repetition_limit_before_the_node_limit() {
    let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (prev, cur) in ('a'..='h').zip('b'..='i') {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        text.push_str(&format!("{cur}: &{cur} [{refs}]\n"));
    }
    let e = parse(&text, 1_000_000).unwrap_err();
    assert_eq!(e.kind(), strata_core::ErrorKind::Limit);
    assert_eq!(
        e.message(),
        "YAML aliases repeat the document more than 100 times over"
    );
    let at = e.location().expect("located");
    assert_eq!(
        (at.line, at.column),
        (5, 32),
        "the alias that passed the limit"
    );
}
