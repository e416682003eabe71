//! The read-only rule: a tool is read-only when its file says so; a graph, directive or plan
//! when it calls at least one tool and every tool it calls, hooks included, is read-only.

mod common;
use common::{app, project, ECHO};

use std::fs;

use strata_app::ExecOptions;
use strata_directive::Directive;

/// `ECHO`, declared read-only.
fn pure() -> String {
    format!("{ECHO}read_only: true\n")
}

#[test]
fn a_tool_is_read_only_only_when_its_file_says_so() {
    let dir = project(&[("tools/t/pure.yaml", &pure()), ("tools/t/echo.yaml", ECHO)]);
    let app = app(dir.path());
    assert!(app.tool_read_only("t/pure"));
    assert!(!app.tool_read_only("t/echo"));
    assert!(!app.tool_read_only("t/missing"));
    assert!(!app.tools_read_only(&[]));
    assert!(app.tools_read_only(&["t/pure".into()]));
    assert!(!app.tools_read_only(&["t/pure".into(), "t/echo".into()]));
}

#[test]
fn a_plan_graph_or_directive_is_read_only_when_every_tool_it_calls_is() {
    let graph = |tool: &str| {
        format!("kind: graph\nnodes:\n  n: {{kind: action, tool: {tool}, next: done}}\n  done: {{kind: return, output: x}}\n")
    };
    let dir = project(&[
        ("tools/t/pure.yaml", &pure()),
        ("tools/t/echo.yaml", ECHO),
        ("tools/graphs/pure.yaml", &graph("t/pure")),
        ("tools/graphs/echo.yaml", &graph("t/echo")),
        (
            "directives/pure.md",
            "---\nname: pure\nactions:\n  - {id: a, tool: t/pure}\n---\nbody\n",
        ),
        (
            "directives/mixed.md",
            "---\nname: mixed\nactions:\n  - {id: a, tool: t/pure}\n  - {id: b, tool: t/echo}\n---\nbody\n",
        ),
    ]);
    let app = app(dir.path());
    assert!(app.graph_read_only(&app.load_graph("graphs/pure").unwrap()));
    assert!(!app.graph_read_only(&app.load_graph("graphs/echo").unwrap()));

    let plan = |text: &str| {
        let doc =
            strata_plans::parse_document("p.yaml", text.as_bytes().to_vec(), &app.limits).unwrap();
        app.load_plan(&doc).unwrap()
    };
    assert!(app.plan_read_only(&plan("- {id: s, tool: t/pure, arguments: {}}\n")));
    assert!(!app.plan_read_only(&plan(
        "- {id: s, tool: t/pure, arguments: {}}\n- {id: e, tool: t/echo, arguments: {}}\n"
    )));

    let runner = app.runner(ExecOptions::default());
    let directive = |name: &str| {
        let text = fs::read_to_string(dir.path().join(format!("directives/{name}.md"))).unwrap();
        Directive::load(name, &text, &runner, &[], &app.limits).unwrap()
    };
    assert!(app.directive_read_only(&directive("pure")));
    assert!(!app.directive_read_only(&directive("mixed")));
}
