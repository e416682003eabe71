//! The loaded form of a graph: nodes, edges, conditions and hooks, with templates compiled.

use serde_json::{Map, Value};
use strata_core::FieldPath;
use strata_pipeline::Template;

use strata_context::When;
use strata_tools::Hook;

/// The default for `max_steps`.
pub const DEFAULT_MAX_STEPS: u64 = 1000;

/// The default for a parallel foreach's `max_concurrency`.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// A loaded, checked graph, ready to run any number of times.
#[derive(Debug)]
pub struct Graph {
    /// The graph's id: its path under `tools/` without the extension (`graphs/retry`).
    pub id: String,
    /// The file name as shown in messages.
    pub file: String,
    /// A fingerprint of the file's text; a run resumes only on the same text.
    pub fingerprint: String,
    /// One line saying what the graph does.
    pub description: Option<String>,
    /// The JSON Schema of the inputs (the same subset as a tool's `parameters`).
    pub parameters: Option<Value>,
    /// The initial state.
    pub state: Map<String, Value>,
    /// The index of the first node.
    pub start: usize,
    /// The most steps a run may take before the `limit` event.
    pub max_steps: u64,
    /// What happens when a node fails.
    pub on_error: OnError,
    /// The graph's hooks, in declaration order.
    pub hooks: Vec<Hook>,
    /// The nodes, in document order.
    pub nodes: Vec<Node>,
}

impl Graph {
    /// The index of the node called `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// The tools the graph's action nodes call (foreach bodies included), in node order,
    /// each once.
    pub fn called_tools(&self) -> Vec<String> {
        let mut out = Vec::new();
        called_by(&self.nodes, &mut out);
        out
    }
}

impl Node {
    /// The one tool a part of a walk at this node runs: an action's own tool (`element`
    /// false), or the tool every action of a foreach's body calls, when they call one
    /// (`element` true, for one element of the foreach).
    pub fn part_tool(&self, element: bool) -> Option<&str> {
        match (&self.body, element) {
            (Body::Action(a), false) => Some(&a.tool),
            (Body::Foreach(f), true) => {
                let mut tools = f.body.iter().filter_map(|n| n.part_tool(false));
                let first = tools.next()?;
                tools.all(|t| t == first).then_some(first)
            }
            _ => None,
        }
    }
}

/// Adds the tools the action nodes of `nodes` call to `out`.
fn called_by(nodes: &[Node], out: &mut Vec<String>) {
    for node in nodes {
        match &node.body {
            Body::Action(a) if !out.contains(&a.tool) => out.push(a.tool.clone()),
            Body::Foreach(f) => called_by(&f.body, out),
            _ => {}
        }
    }
}

/// What the walker does when a node fails (the tool failed, a template or condition could
/// not be evaluated) or the step limit is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnError {
    /// The run stops with status `failed` (or `limited`).
    Fail,
    /// The failed node's changes are dropped and the walker follows its edges, counting a
    /// condition that cannot be evaluated as false.
    Continue,
    /// The walker goes to this node (its index), with `${error…}` describing the failure.
    Goto(usize),
}

/// One node.
#[derive(Debug)]
pub struct Node {
    /// The node's id (its key under `nodes`).
    pub id: String,
    /// Where it is declared (`nodes.<id>`).
    pub path: FieldPath,
    /// What it does.
    pub body: Body,
    /// Where the walker goes next; empty for a node that ends the graph.
    pub next: Vec<Edge>,
}

/// The kind-specific part of a node.
#[derive(Debug)]
pub enum Body {
    /// Calls a tool, then assigns (boxed: it holds two templates).
    Action(Box<Action>),
    /// Assigns only.
    Gate(Assign),
    /// Runs a body for every element of a list (boxed: it holds several templates).
    Foreach(Box<Foreach>),
    /// Ends the graph with a result.
    Return(Template),
    /// Renders a prompt template into `result`, then assigns (boxed: it holds several templates).
    Prompt(Box<crate::prompt::PromptNode>),
}

impl Body {
    /// The kind's name as written in files.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Action(_) => "action",
            Body::Gate(_) => "gate",
            Body::Foreach(_) => "foreach",
            Body::Return(_) => "return",
            Body::Prompt(_) => "prompt",
        }
    }

    /// The assignments of the node, if it has any.
    pub fn assign(&self) -> Option<&Assign> {
        match self {
            Body::Action(a) => Some(&a.assign),
            Body::Gate(a) => Some(a),
            Body::Foreach(f) => Some(&f.assign),
            Body::Return(_) => None,
            Body::Prompt(p) => Some(&p.assign),
        }
    }
}

/// A tool call.
#[derive(Debug)]
pub struct Action {
    /// The tool's id.
    pub tool: String,
    /// The tool's parameters, a layer-C template over `state` and `inputs`.
    pub params: Template,
    /// When true, a tool that ran but failed is not an error: its result goes to `assign`
    /// and `next` like any other.
    pub allow_failure: bool,
    /// Assignments over `state`, `inputs` and `result`.
    pub assign: Assign,
}

/// State assignments: every value is rendered against the state as it was before the node.
#[derive(Debug)]
pub struct Assign {
    /// The state keys, in declaration order.
    pub keys: Vec<String>,
    /// The values, compiled as one map (its keys are `keys`); `None` when empty.
    pub template: Option<Template>,
}

impl Assign {
    /// No assignment.
    pub fn empty() -> Assign {
        Assign {
            keys: Vec::new(),
            template: None,
        }
    }
}

/// A foreach node.
#[derive(Debug)]
pub struct Foreach {
    /// The list: a whole-value template (a JSON string holding a list is parsed).
    pub over: Template,
    /// The name the current element has inside the body (`${item}`); the index is
    /// `${<as>_index}`.
    pub item: String,
    /// The body: nodes run in order for every element, over a private copy of the state.
    pub body: Vec<Node>,
    /// Elements run concurrently when true.
    pub parallel: bool,
    /// Most elements in flight at once.
    pub max_concurrency: usize,
    /// The state key receiving the per-element outputs, in input order.
    pub collect: Option<String>,
    /// The per-element output (default: the last body node's `result`).
    pub output: Option<Template>,
    /// Assignments over `state`, `inputs` and `result` (the collected list).
    pub assign: Assign,
}

/// One edge of `next`.
#[derive(Debug)]
pub struct Edge {
    /// The target's index.
    pub to: usize,
    /// The target's id.
    pub target: String,
    /// The condition; `None` for the unconditional (last) edge.
    pub when: Option<When>,
}
