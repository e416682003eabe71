//! A run's definition as a [`Dag`]: a plan's steps in their levels, a directive's actions in
//! order, or a graph's nodes in
//! layers by their distance from its start, edges labelled with their conditions.

use serde_json::Value;
use strata_graph::{Body, Graph};
use strata_plans::Plan;

use crate::layout::{distance_layers, Dag, DagEdge, DagNode};

/// The DAG of a plan: one node per step (labelled with its tool), an edge from each step it
/// depends on, its levels as layers.
pub fn plan_dag(plan: &Plan) -> Dag {
    Dag {
        nodes: plan
            .steps
            .iter()
            .map(|s| DagNode {
                id: s.id.clone(),
                label: s.tool.clone(),
                kind: "step".into(),
            })
            .collect(),
        edges: plan
            .deps
            .iter()
            .enumerate()
            .flat_map(|(to, deps)| {
                deps.iter().map(move |&from| DagEdge {
                    from,
                    to,
                    when: None,
                })
            })
            .collect(),
        layers: plan.levels(),
    }
}

/// The DAG of a directive run from its checkpoint: its actions (`actions`, each `{id,
/// tool}`) in order, one after the other, each a layer of its own.
pub fn directive_dag(checkpoint: &Value) -> Dag {
    let actions = checkpoint["actions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    Dag {
        nodes: actions
            .iter()
            .map(|a| DagNode {
                id: a["id"].as_str().unwrap_or_default().into(),
                label: a["tool"].as_str().unwrap_or_default().into(),
                kind: "step".into(),
            })
            .collect(),
        edges: (1..actions.len())
            .map(|to| DagEdge {
                from: to - 1,
                to,
                when: None,
            })
            .collect(),
        layers: (0..actions.len()).map(|i| vec![i]).collect(),
    }
}

/// The DAG of a graph: one node per node (labelled with its kind, and an action's tool),
/// its `next` edges with their conditions (`otherwise` for the fallback of several).
pub fn graph_dag(graph: &Graph) -> Dag {
    let nodes = graph
        .nodes
        .iter()
        .map(|n| DagNode {
            id: n.id.clone(),
            label: match &n.body {
                Body::Action(a) => format!("action: {}", a.tool),
                Body::Foreach(f) if f.parallel => "parallel foreach".into(),
                other => other.kind().into(),
            },
            kind: n.body.kind().into(),
        })
        .collect();
    let mut edges = Vec::new();
    for (from, node) in graph.nodes.iter().enumerate() {
        let several = node.next.len() > 1;
        for e in &node.next {
            edges.push(DagEdge {
                from,
                to: e.to,
                when: match &e.when {
                    Some(w) => Some(w.source()),
                    None if several => Some("otherwise".into()),
                    None => None,
                },
            });
        }
    }
    let layers = distance_layers(graph.nodes.len(), &edges, graph.start);
    Dag {
        nodes,
        edges,
        layers,
    }
}
