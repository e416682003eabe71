//! Graph hooks are read by the shared hook parser: the keys, the did-you-mean and the
//! messages are those of directive hooks and project hook files.

mod common;

use common::{load, located, Fake};

const GRAPH: &str = "kind: graph
nodes:
  done: {kind: return, output: 1}
hooks:
";

fn error(hooks: &str) -> String {
    let text = format!("{GRAPH}{hooks}");
    match load(&text, &Fake::default()) {
        Ok(_) => panic!("loaded:\n{text}"),
        Err(e) => located(&e),
    }
}

#[test]
fn an_unknown_hook_key_is_refused_with_did_you_mean() {
    assert_eq!(
        error("  - {id: h, event: graph_started, whn: 'true', action: {tool: log}}\n"),
        "t.yaml:5:35 request: unknown key `whn` in a hook (hint: did you mean `when`?)"
    );
    assert_eq!(
        error("  - {id: h, event: graph_started, action: {tool: log, parms: {}}}\n"),
        "t.yaml:5:55 request: unknown key `parms` in a hook's `action` (hint: did you mean `params`?)"
    );
}

#[test]
fn hook_shape_errors_are_the_shared_ones() {
    let cases = [
        (
            "  - {id: h, event: graph_started, when: 'true', condition: 'true', action: {tool: log}}\n",
            "t.yaml:5:60 request: a hook has `when` or `condition`, not both",
        ),
        (
            "  - {id: h, event: graph_strated, action: {tool: log}}\n",
            "t.yaml:5:20 request: unknown event `graph_strated` (hint: did you mean `graph_started`?)",
        ),
        (
            "  - {id: h, event: graph_started, action: {tool: log}}\n  - {id: h, event: limit, action: {tool: log}}\n",
            "t.yaml:6:10 request: duplicate hook id `h`",
        ),
        (
            "  - {id: h, event: graph_started, action: {tool: log, params: [1]}}\n",
            "t.yaml:5:63 request: a hook's `params` must be a map, not an array",
        ),
        (
            "  - {id: 3, event: graph_started, action: {tool: log}}\n",
            "t.yaml:5:10 request: `id` must be a string, not an integer",
        ),
    ];
    for (hooks, want) in cases {
        assert_eq!(error(hooks), want, "{hooks}");
    }
}
