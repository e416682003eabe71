//! Load-time validation: every error names file:line:col before anything runs.

mod common;

use common::{load, located, Fake};

fn error(text: &str) -> String {
    match load(text, &Fake::default()) {
        Ok(_) => panic!("loaded:\n{text}"),
        Err(e) => located(&e),
    }
}

const BASE: &str = "kind: graph
parameters:
  type: object
  properties:
    limit: {type: integer, default: 3}
state: {count: 0}
nodes:
  start:
    kind: gate
    assign: {count: '${state.count + 1}'}
    next:
      - {to: start, when: 'state.count < inputs.limit'}
      - to: done
  done:
    kind: return
    output: '${state.count}'
";

#[test]
fn a_good_graph_loads() {
    let g = load(BASE, &Fake::default()).unwrap();
    assert_eq!(g.nodes.len(), 2);
    assert_eq!(g.max_steps, 1000);
}

#[test]
fn structure_errors_are_located() {
    let cases = [
        (
            BASE.replace("nodes:\n", "nodse: 1\nnodes:\n"),
            "t.yaml:7:1 request: unknown key `nodse` in a graph (hint: did you mean `nodes`?)",
        ),
        (
            BASE.replace("kind: gate", "kind: gaet"),
            "t.yaml:9:11 request: unknown node kind `gaet` (hint: did you mean `gate`?)",
        ),
        (
            BASE.replace("    kind: return\n", "    kind: return\n    nxt: start\n"),
            "t.yaml:16:5 request: unknown key `nxt` in a return node (hint: the keys of a return node are `kind`, `description`, `output`)",
        ),
        (
            BASE.replace("    kind: return\n", "    kind: return\n    next: start\n"),
            "t.yaml:16:11 request: a return node ends the graph; it has no `next`",
        ),
        (
            BASE.replace("    kind: gate\n", "    kind: gate\n    asign: {}\n"),
            "t.yaml:10:5 request: unknown key `asign` in a gate node (hint: did you mean `assign`?)",
        ),
        (
            BASE.replace("    kind: gate\n", "    kind: action\n    tool: echo\n    parms: {}\n"),
            "t.yaml:11:5 request: unknown key `parms` in an action node (hint: did you mean `params`?)",
        ),
        (
            BASE.replace("- to: done", "- to: dnoe"),
            "t.yaml:13:13 request: unknown target node `dnoe` (hint: did you mean `done`?)",
        ),
        (
            BASE.replace("      - to: done\n", "").replace(
                "- {to: start, when: 'state.count < inputs.limit'}",
                "- {to: start}\n      - {to: done, when: 'state.count > 1'}",
            ),
            "t.yaml:12:14 request: only the last edge of `next` may have no `when` (hint: edges are tried in order; an edge without `when` always matches, so the edges after it could never be taken)",
        ),
        (
            BASE.replace("      - to: done\n", "      - to: start\n"),
            "t.yaml:14:3 request: node `done` is unreachable from `start` (hint: add an edge to it, or remove it)",
        ),
        (
            BASE.replace("kind: graph", "kind: tool"),
            "t.yaml:1:7 request: a graph file needs `kind: graph` (hint: graphs are YAML files of kind `graph` under tools/)",
        ),
        (
            BASE.replace("start:\n    kind: gate", "start:\n    kind: action\n    tool: ecoh"),
            "t.yaml:10:11 request: unknown tool `ecoh` (hint: did you mean `echo`?)",
        ),
        (
            BASE.replace("state: {count: 0}", "state: {count: 0}\nstart: strat"),
            "t.yaml:7:8 request: unknown node `strat` (hint: did you mean `start`?)",
        ),
        (
            BASE.replace("state: {count: 0}", "state: {count: 0}\nmax_steps: 0"),
            "t.yaml:7:12 request: `max_steps` must be a positive integer",
        ),
    ];
    let got: Vec<String> = cases.iter().map(|(text, _)| error(text)).collect();
    let want: Vec<&str> = cases.iter().map(|(_, want)| *want).collect();
    assert_eq!(got, want);
}

#[test]
fn reference_errors_are_located_with_the_span() {
    let cases = [
        (
            BASE.replace("'${state.count}'", "'${state.cuont}'"),
            "t.yaml:16:14 context: state key `cuont` is never initialised nor assigned (hint: did you mean `state.count`?)",
        ),
        (
            BASE.replace("'${state.count}'", "'${state.total}'"),
            "t.yaml:16:14 context: state key `total` is never initialised nor assigned (hint: initialise it under `state:` or assign it in a node)",
        ),
        (
            BASE.replace("inputs.limit", "inputs.limt"),
            "t.yaml:12:42 context: input `limt` is not declared (hint: did you mean `inputs.limit`?)",
        ),
        (
            BASE.replace("'${state.count}'", "'${stat.count}'"),
            "t.yaml:16:14 context: unknown name `stat` in `stat.count` (hint: did you mean `state`?)",
        ),
        (
            BASE.replace("'${state.count + 1}'", "'${result}'"),
            "t.yaml:10:22 context: `result` is not available in node `start`: only action and foreach nodes have a result, in their `assign` and `next` (hint: node `start` can read `state`, `inputs`, `error`)",
        ),
    ];
    let got: Vec<String> = cases.iter().map(|(text, _)| error(text)).collect();
    let want: Vec<&str> = cases.iter().map(|(_, want)| *want).collect();
    assert_eq!(got, want);
}

#[test]
fn expression_errors_are_found_at_load() {
    let cases = [
        (
            BASE.replace("'${state.count + 1}'", "'${\"1\" + 2}'"),
            "t.yaml:10:28 context: `+` cannot combine a string and a number (hint: types are strict: convert with number(…) or string(…))",
        ),
        (
            BASE.replace("'state.count < inputs.limit'", "'state.count <'"),
            "t.yaml:12:41 context: expected a context path or a value (hint: a placeholder holds a path such as `state.items[0].name`, optionally `?? fallback`, or an expression)",
        ),
        (
            BASE.replace(
                "'state.count < inputs.limit'",
                "{path: state.count, op: below, value: 3}",
            ),
            "t.yaml:12:27 request: bad condition: unknown operator `below`; the operators are eq, ne, gt, gte, lt, lte, in, contains, regex, exists",
        ),
        (
            BASE.replace("'state.count < inputs.limit'", "'\"a\" > 1'"),
            "t.yaml:12:32 context: `>` cannot combine a string and a number (hint: types are strict: convert with number(…) or string(…))",
        ),
    ];
    let got: Vec<String> = cases.iter().map(|(text, _)| error(text)).collect();
    let want: Vec<&str> = cases.iter().map(|(_, want)| *want).collect();
    assert_eq!(got, want);
}

#[test]
fn foreach_and_hook_errors_are_located() {
    let foreach = "kind: graph
state: {items: [1, 2]}
nodes:
  each:
    kind: foreach
    over: 'items: ${state.items}'
    do: {kind: action, tool: echo, params: {x: '${item}'}}
";
    assert_eq!(
        error(foreach),
        "t.yaml:6:11 request: `over` must be a whole-value reference such as \"${state.items}\", or a list (hint: write the reference alone in the string, with no text around it)"
    );
    let foreach = foreach
        .replace("'items: ${state.items}'", "'${state.items}'")
        .replace("'${item}'", "'${itme}'");
    assert_eq!(
        error(&foreach),
        "t.yaml:7:49 context: unknown name `itme` in `itme` (hint: did you mean `item`?)"
    );
    let hook = format!("{BASE}hooks:\n  - {{id: h, event: node_done, action: {{tool: log}}}}\n");
    assert_eq!(
        error(&hook),
        "t.yaml:18:20 request: unknown event `node_done` (hint: the events are `graph_started`, `before_node`, `after_node`, `error`, `limit`, `graph_completed`)"
    );
}
