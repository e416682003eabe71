//! Which items change nothing when they run: the rule behind `strata mcp`'s `--read-only` and
//! its `readOnlyHint`, kept here so that every front-end reads it the same way. A tool is
//! read-only when its file declares `read_only: true`; a graph, directive or plan when it
//! calls at least one tool and every tool it calls (hooks included) is read-only.

use strata_directive::Directive;
use strata_graph::Graph;
use strata_plans::Plan;

use crate::App;

impl App {
    /// Whether tool `id` declares itself `read_only` (false when it does not load).
    pub fn tool_read_only(&self, id: &str) -> bool {
        strata_project::tool_read_only(self.project(), id)
    }

    /// Whether running the tools `tools` changes nothing: at least one, each read-only.
    pub fn tools_read_only(&self, tools: &[String]) -> bool {
        !tools.is_empty() && tools.iter().all(|id| self.tool_read_only(id))
    }

    /// Whether graph `graph` changes nothing: its nodes' tools and its hooks' are read-only.
    pub fn graph_read_only(&self, graph: &Graph) -> bool {
        let mut tools = graph.called_tools();
        tools.extend(graph.hooks.iter().map(|h| h.tool.clone()));
        self.tools_read_only(&tools)
    }

    /// Whether directive `directive` changes nothing: every tool it calls, hooks included, is
    /// read-only.
    pub fn directive_read_only(&self, directive: &Directive) -> bool {
        self.tools_read_only(&directive.called_tools())
    }

    /// Whether plan `plan` changes nothing: every step's tool is read-only.
    pub fn plan_read_only(&self, plan: &Plan) -> bool {
        self.tools_read_only(&crate::called_tools(plan))
    }
}
