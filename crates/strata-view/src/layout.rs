//! Where each node of a run's DAG is drawn, computed from the definition alone (so the whole
//! planned graph is drawn from the start, and nothing moves as the run goes): one column per
//! layer (a plan's level, a graph node's distance from its start), nodes stacked in each
//! column in the order of their predecessors, and a layer of more than [`GROUP_LIMIT`] nodes
//! drawn as one group node that lists its members (shown on demand).

use serde::Serialize;

/// The most nodes a layer is drawn with one by one; a larger layer is one group node.
pub const GROUP_LIMIT: usize = 24;

/// A node's width.
pub const NODE_W: u32 = 160;
/// A node's height.
pub const NODE_H: u32 = 40;
/// The space between two columns.
pub const GAP_X: u32 = 60;
/// The space between two nodes of a column.
pub const GAP_Y: u32 = 16;
/// The margin around the drawing.
pub const PAD: u32 = 20;

/// One node of a definition.
#[derive(Debug, Clone, PartialEq)]
pub struct DagNode {
    /// Its id (a step's, a graph node's).
    pub id: String,
    /// What it runs: a step's tool, a graph node's kind and tool.
    pub label: String,
    /// `step`, or a graph node's kind.
    pub kind: String,
}

/// One edge of a definition.
#[derive(Debug, Clone, PartialEq)]
pub struct DagEdge {
    /// The index of the node it leaves.
    pub from: usize,
    /// The index of the node it reaches.
    pub to: usize,
    /// Its condition (`otherwise` for a graph's fallback edge), if any.
    pub when: Option<String>,
}

/// A definition to lay out: nodes, edges and layers (each node in one layer).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dag {
    /// The nodes.
    pub nodes: Vec<DagNode>,
    /// The edges.
    pub edges: Vec<DagEdge>,
    /// The layers, left to right: node indexes.
    pub layers: Vec<Vec<usize>>,
}

/// A node placed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placed {
    /// The node's id; a group's is `level:<k>`.
    pub id: String,
    /// What it runs; a group's says how many nodes it holds.
    pub label: String,
    /// `step`, a graph node's kind, or `group`.
    pub kind: String,
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// A group's members (their ids, in layer order); empty for a node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
}

/// An edge between placed nodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacedEdge {
    /// The id of the placed node it leaves.
    pub from: String,
    /// The id of the placed node it reaches.
    pub to: String,
    /// Its condition, if any.
    pub when: Option<String>,
}

/// A whole drawing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layout {
    /// Width of the drawing.
    pub width: u32,
    /// Height of the drawing.
    pub height: u32,
    /// Every placed node, column by column.
    pub nodes: Vec<Placed>,
    /// Every edge, once each between two placed nodes.
    pub edges: Vec<PlacedEdge>,
}

impl Layout {
    /// The drawing as lines `id x,y` (and `[members]` for a group) and `from -> to (when)`:
    /// what the golden tests compare.
    pub fn text(&self) -> String {
        let mut out = format!("{}x{}\n", self.width, self.height);
        for n in &self.nodes {
            out.push_str(&format!("{} {},{}", n.id, n.x, n.y));
            if !n.members.is_empty() {
                out.push_str(&format!(" [{}]", n.members.len()));
            }
            out.push('\n');
        }
        for e in &self.edges {
            out.push_str(&format!("{} -> {}", e.from, e.to));
            if let Some(w) = &e.when {
                out.push_str(&format!(" ({w})"));
            }
            out.push('\n');
        }
        out
    }
}

/// Lays `dag` out.
pub fn layout(dag: &Dag) -> Layout {
    let mut placed_of = vec![usize::MAX; dag.nodes.len()];
    let mut row_of = vec![0usize; dag.nodes.len()];
    let mut nodes: Vec<Placed> = Vec::new();
    let mut tallest = 0usize;
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); dag.nodes.len()];
    for e in &dag.edges {
        preds[e.to].push(e.from);
    }
    for (col, layer) in dag.layers.iter().enumerate() {
        let x = PAD + col as u32 * (NODE_W + GAP_X);
        if layer.len() > GROUP_LIMIT {
            for &i in layer {
                placed_of[i] = nodes.len();
            }
            nodes.push(Placed {
                id: format!("level:{col}"),
                label: format!("{} nodes", layer.len()),
                kind: "group".into(),
                x,
                y: PAD,
                members: layer.iter().map(|&i| dag.nodes[i].id.clone()).collect(),
            });
            tallest = tallest.max(1);
            continue;
        }
        let mut order = layer.clone();
        // Each node near the rows of the nodes before it (the mean of their rows), ties in
        // layer order: fewer crossings, and the same drawing every time.
        let key = |i: usize| -> (u64, usize) {
            let placed: Vec<usize> = preds[i]
                .iter()
                .filter(|&&p| placed_of[p] != usize::MAX)
                .map(|&p| row_of[p])
                .collect();
            match placed.len() {
                0 => (u64::MAX, i),
                n => ((placed.iter().sum::<usize>() * 1000 / n) as u64, i),
            }
        };
        order.sort_by_key(|&i| key(i));
        for (row, &i) in order.iter().enumerate() {
            placed_of[i] = nodes.len();
            row_of[i] = row;
            let node = &dag.nodes[i];
            nodes.push(Placed {
                id: node.id.clone(),
                label: node.label.clone(),
                kind: node.kind.clone(),
                x,
                y: PAD + row as u32 * (NODE_H + GAP_Y),
                members: Vec::new(),
            });
        }
        tallest = tallest.max(order.len());
    }
    let mut edges: Vec<PlacedEdge> = Vec::new();
    for e in &dag.edges {
        let (from, to) = (placed_of[e.from], placed_of[e.to]);
        if from == usize::MAX || to == usize::MAX {
            continue;
        }
        let edge = PlacedEdge {
            from: nodes[from].id.clone(),
            to: nodes[to].id.clone(),
            when: e.when.clone(),
        };
        if !edges.contains(&edge) {
            edges.push(edge);
        }
    }
    let cols = dag.layers.len() as u32;
    Layout {
        width: 2 * PAD + cols * NODE_W + cols.saturating_sub(1) * GAP_X,
        height: 2 * PAD + tallest as u32 * NODE_H + (tallest as u32).saturating_sub(1) * GAP_Y,
        nodes,
        edges,
    }
}

/// Layers of a graph: each node at its distance (in edges) from `start`; nodes `start`
/// does not reach in a last layer of their own.
pub fn distance_layers(nodes: usize, edges: &[DagEdge], start: usize) -> Vec<Vec<usize>> {
    let mut depth = vec![usize::MAX; nodes];
    let mut queue = std::collections::VecDeque::new();
    if start < nodes {
        depth[start] = 0;
        queue.push_back(start);
    }
    while let Some(i) = queue.pop_front() {
        for e in edges.iter().filter(|e| e.from == i) {
            if depth[e.to] == usize::MAX {
                depth[e.to] = depth[i] + 1;
                queue.push_back(e.to);
            }
        }
    }
    let deepest = depth.iter().filter(|&&d| d != usize::MAX).max().copied();
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); deepest.map_or(0, |d| d + 1)];
    let mut unreached = Vec::new();
    for (i, &d) in depth.iter().enumerate() {
        match d {
            usize::MAX => unreached.push(i),
            d => layers[d].push(i),
        }
    }
    if !unreached.is_empty() {
        layers.push(unreached);
    }
    layers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str) -> DagNode {
        DagNode {
            id: id.into(),
            label: "t".into(),
            kind: "step".into(),
        }
    }

    fn edge(from: usize, to: usize) -> DagEdge {
        DagEdge {
            from,
            to,
            when: None,
        }
    }

    #[test]
    fn a_wide_layer_is_one_group_and_its_edges_meet_once() {
        let mut dag = Dag::default();
        dag.nodes.push(node("root"));
        for i in 0..30 {
            dag.nodes.push(node(&format!("s{i}")));
            dag.edges.push(edge(0, i + 1));
        }
        dag.layers = vec![vec![0], (1..=30).collect()];
        let l = layout(&dag);
        assert_eq!(
            l.text(),
            "420x80\nroot 20,20\nlevel:1 240,20 [30]\nroot -> level:1\n"
        );
    }

    #[test]
    fn nodes_follow_the_rows_of_their_predecessors_and_unreached_nodes_come_last() {
        let edges = vec![edge(0, 1), edge(0, 2), edge(2, 3), edge(1, 4), edge(3, 0)];
        let layers = distance_layers(6, &edges, 0);
        assert_eq!(layers, vec![vec![0], vec![1, 2], vec![3, 4], vec![5]]);
        let dag = Dag {
            nodes: ["a", "b", "c", "d", "e", "f"].map(node).to_vec(),
            edges,
            layers,
        };
        assert_eq!(
            layout(&dag).text(),
            "860x136\na 20,20\nb 240,20\nc 240,76\ne 460,20\nd 460,76\nf 680,20\n\
             a -> b\na -> c\nc -> d\nb -> e\nd -> a\n"
        );
    }
}
