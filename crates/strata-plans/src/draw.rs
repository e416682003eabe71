//! Drawing a plan's dependency graph as a Mermaid flowchart or a Graphviz digraph: a box per
//! step (its id and tool), an edge from each step to the steps that use its record (dashed
//! for `depends_on` ordering without data).

pub use strata_core::drawing::Format;
use strata_core::drawing::{dot_text, mermaid_text};

use crate::plan::Plan;

/// Every edge `(from, to, data)`: `to` depends on `from`; `data` when `to` references it.
fn edges(plan: &Plan) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    for (i, deps) in plan.deps.iter().enumerate() {
        let refs: std::collections::HashSet<&str, foldhash::fast::RandomState> =
            plan.steps[i].args.step_ids().into_iter().collect();
        for &d in deps {
            out.push((d, i, refs.contains(plan.steps[d].id.as_str())));
        }
    }
    out
}

/// Draws a linked plan in `format`.
pub fn draw(plan: &Plan, format: Format) -> String {
    match format {
        Format::Mermaid => mermaid(plan),
        Format::Dot => dot(plan),
    }
}

fn mermaid(plan: &Plan) -> String {
    let mut out = String::from("flowchart TD\n");
    for (i, step) in plan.steps.iter().enumerate() {
        let label = mermaid_text(&format!("{}<br/>{}", step.id, step.tool));
        out.push_str(&format!("    s{i}[\"{label}\"]\n"));
    }
    for (from, to, data) in edges(plan) {
        let arrow = if data { "-->" } else { "-.->" };
        out.push_str(&format!("    s{from} {arrow} s{to}\n"));
    }
    out
}

fn dot(plan: &Plan) -> String {
    let mut out = String::from("digraph plan {\n    rankdir=TB;\n");
    for step in &plan.steps {
        out.push_str(&format!(
            "    \"{0}\" [shape=box, label=\"{0}\\n{1}\"];\n",
            dot_text(&step.id),
            dot_text(&step.tool)
        ));
    }
    for (from, to, data) in edges(plan) {
        let style = if data { "" } else { " [style=dashed]" };
        out.push_str(&format!(
            "    \"{}\" -> \"{}\"{style};\n",
            dot_text(&plan.steps[from].id),
            dot_text(&plan.steps[to].id)
        ));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use strata_core::FieldPath;

    use super::*;

    fn diamond() -> Plan {
        Plan::from_value(
            &json!([
                {"id": "A", "tool": "t/a", "arguments": {}},
                {"id": "B", "tool": "t/b", "arguments": {"x": "{{A.result}}"}},
                {"id": "C", "tool": "t/c", "arguments": {}, "depends_on": ["A"]},
                {"id": "D", "tool": "t/d", "arguments": {"b": "{{B.result}}", "c": "{{C.result}}"}},
            ]),
            &FieldPath::root(),
        )
        .unwrap()
    }

    #[test]
    fn mermaid_and_dot() {
        assert_eq!(
            draw(&diamond(), Format::Mermaid),
            "flowchart TD\n    s0[\"A<br/>t/a\"]\n    s1[\"B<br/>t/b\"]\n    s2[\"C<br/>t/c\"]\n    s3[\"D<br/>t/d\"]\n    s0 --> s1\n    s0 -.-> s2\n    s1 --> s3\n    s2 --> s3\n"
        );
        assert_eq!(
            draw(&diamond(), Format::Dot),
            "digraph plan {\n    rankdir=TB;\n    \"A\" [shape=box, label=\"A\\nt/a\"];\n    \"B\" [shape=box, label=\"B\\nt/b\"];\n    \"C\" [shape=box, label=\"C\\nt/c\"];\n    \"D\" [shape=box, label=\"D\\nt/d\"];\n    \"A\" -> \"B\";\n    \"A\" -> \"C\" [style=dashed];\n    \"B\" -> \"D\";\n    \"C\" -> \"D\";\n}\n"
        );
    }
}
