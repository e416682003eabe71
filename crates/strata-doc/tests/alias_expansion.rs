//! SPEC §4's YAML alias-expansion limit: a document whose aliases expand past the node limit
//! is refused, even when it stays under serde_yaml's own repetition limit.

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
    assert_eq!(e.message, "document expands to more than 51 nodes");
    assert_eq!(
        e.hint.as_deref(),
        Some("YAML aliases may repeat large parts of a document; reduce them")
    );
}
