//! Drawing a graph as a Mermaid flowchart or a Graphviz digraph: one shape per node kind,
//! edges labelled with their conditions (`otherwise` for the fallback edge), and a dashed
//! edge to the `on_error` node.

pub use strata_core::drawing::Format;
use strata_core::drawing::{dot_text, mermaid_text};

use crate::model::{Body, Graph, Node, OnError};

/// The second line of a node's label: its kind, and the tools it calls.
fn detail(node: &Node) -> String {
    match &node.body {
        Body::Action(a) => format!("action: {}", a.tool),
        Body::Prompt(p) => match &p.key_source {
            serde_json::Value::String(k) => format!("prompt: {k}"),
            _ => "prompt".to_string(),
        },
        Body::Foreach(f) => {
            let tools: Vec<&str> = f
                .body
                .iter()
                .filter_map(|n| match &n.body {
                    Body::Action(a) => Some(a.tool.as_str()),
                    _ => None,
                })
                .collect();
            let mode = if f.parallel {
                "parallel foreach"
            } else {
                "foreach"
            };
            if tools.is_empty() {
                mode.to_string()
            } else {
                format!("{mode}: {}", tools.join(", "))
            }
        }
        other => other.kind().to_string(),
    }
}

/// Every edge: (from, to, label).
fn edges(graph: &Graph) -> Vec<(usize, usize, Option<String>)> {
    let mut out = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let only = node.next.len() == 1;
        for e in &node.next {
            let label = match &e.when {
                Some(w) => Some(w.source()),
                None if only => None,
                None => Some("otherwise".to_string()),
            };
            out.push((i, e.to, label));
        }
    }
    out
}

/// Draws `graph` in `format`.
pub fn draw(graph: &Graph, format: Format) -> String {
    match format {
        Format::Mermaid => mermaid(graph),
        Format::Dot => dot(graph),
    }
}

fn mermaid(graph: &Graph) -> String {
    let mut out = String::from("flowchart TD\n");
    out.push_str(&format!("    start([start]) --> n{}\n", graph.start));
    for (i, node) in graph.nodes.iter().enumerate() {
        let label = mermaid_text(&format!("{}<br/>{}", node.id, detail(node)));
        let shape = match node.body {
            Body::Action(_) => format!("[\"{label}\"]"),
            Body::Gate(_) => format!("{{\"{label}\"}}"),
            Body::Foreach(_) => format!("[[\"{label}\"]]"),
            Body::Return(_) => format!("([\"{label}\"])"),
            Body::Prompt(_) => format!("[/\"{label}\"/]"),
        };
        out.push_str(&format!("    n{i}{shape}\n"));
    }
    for (from, to, label) in edges(graph) {
        match label {
            Some(l) => out.push_str(&format!(
                "    n{from} -->|\"{}\"| n{to}\n",
                mermaid_text(&l)
            )),
            None => out.push_str(&format!("    n{from} --> n{to}\n")),
        }
    }
    if let OnError::Goto(h) = graph.on_error {
        out.push_str(&format!("    on_error{{{{on_error}}}} -.-> n{h}\n"));
    }
    out
}

fn dot(graph: &Graph) -> String {
    let mut out = format!("digraph \"{}\" {{\n", dot_text(&graph.id));
    out.push_str("    rankdir=TB;\n");
    out.push_str("    \"__start\" [shape=circle, label=\"start\"];\n");
    for node in &graph.nodes {
        let shape = match node.body {
            Body::Action(_) => "box",
            Body::Gate(_) => "diamond",
            Body::Foreach(_) => "box3d",
            Body::Return(_) => "oval",
            Body::Prompt(_) => "note",
        };
        out.push_str(&format!(
            "    \"{}\" [shape={shape}, label=\"{}\\n{}\"];\n",
            dot_text(&node.id),
            dot_text(&node.id),
            dot_text(&detail(node))
        ));
    }
    let id = |i: usize| dot_text(&graph.nodes[i].id);
    out.push_str(&format!("    \"__start\" -> \"{}\";\n", id(graph.start)));
    for (from, to, label) in edges(graph) {
        match label {
            Some(l) => out.push_str(&format!(
                "    \"{}\" -> \"{}\" [label=\"{}\"];\n",
                id(from),
                id(to),
                dot_text(&l)
            )),
            None => out.push_str(&format!("    \"{}\" -> \"{}\";\n", id(from), id(to))),
        }
    }
    if let OnError::Goto(h) = graph.on_error {
        out.push_str("    \"__on_error\" [shape=hexagon, label=\"on_error\"];\n");
        out.push_str(&format!(
            "    \"__on_error\" -> \"{}\" [style=dashed];\n",
            id(h)
        ));
    }
    out.push_str("}\n");
    out
}
