//! The graph loader: YAML, located validation of nodes, edges, conditions, foreach, hooks and
//! templates; then both drawings of every graph that loads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_doc::{Document, Format};
use strata_graph::draw::{draw, Format as Drawing};

fuzz_target!(|data: &[u8]| {
    let limits = strata_fuzz::loader_limits();
    let Ok(doc) = Document::parse(
        "tools/graphs/fuzz.yaml",
        data.to_vec(),
        Format::Yaml,
        &limits,
    ) else {
        return;
    };
    if let Ok(graph) =
        strata_graph::Graph::load(&doc, "graphs/fuzz", &strata_fuzz::StubTools, &limits)
    {
        let _ = draw(&graph, Drawing::Mermaid);
        let _ = draw(&graph, Drawing::Dot);
    }
});
