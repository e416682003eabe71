//! `strata import ryeos` against hostile or broken RyeOS trees: what a file can make the
//! importer write, how much one file can make it work and report, two imports into one
//! target, file names that are not UTF-8 and the length of what messages quote.

use serde_json::json;

use super::{assert_refused, entry, import, ryeos, warnings};

/// A graph with one node calling `item_id` (then a return).
fn graph_calling(item_id: &str) -> String {
    format!(
        "tool_type: graph\nconfig:\n  start: a\n  nodes:\n    a:\n      action: {{primary: execute, item_id: {}}}\n      next: b\n    b: {{type: return}}\n",
        json!(item_id)
    )
}

const OK_TOOL: &str = "executor_id: \"@subprocess\"\nconfig: {command: echo}\n";

// A node's tool id is written as a path (a failing stub at the id of a tool in no space, a
// stub for an LLM thread): one that is not a plain path under `tools/` refuses its graph,
// and the rest of the tree is imported, with its report.
#[test]
fn a_node_calling_a_tool_id_that_is_no_path_refuses_its_graph_only() {
    let (ran, report) = import(
        ryeos(&[
            ("tools/graphs/up.yaml", &graph_calling("tool:../../evil")),
            ("tools/graphs/abs.yaml", &graph_calling("tool:/abs/x")),
            ("tools/graphs/empty.yaml", &graph_calling("tool:a//b")),
            ("tools/graphs/llm.yaml", &graph_calling("directive:../../x")),
            ("tools/graphs/nul.yaml", &graph_calling("tool:a\u{0}b")),
            ("tools/ok.yaml", OK_TOOL),
        ]),
        3,
    );
    let why = "no tool can have that id (an id is a path of names under `tools/`: no `.` or `..`, no leading `/`, no empty name, no control character, no name over 250 bytes): the graph is not imported";
    for (file, id) in [
        ("up", "tool:../../evil"),
        ("abs", "tool:/abs/x"),
        ("empty", "tool:a//b"),
        ("llm", "directive:../../x"),
        ("nul", "tool:a\\0b"),
    ] {
        assert_refused(
            &report,
            &format!(".ai/tools/graphs/{file}.yaml"),
            "IMP-G-tool-id",
            &format!("node `a` calls `{id}`: {why}"),
        );
    }
    assert_eq!(entry(&report, ".ai/tools/ok.yaml")["outcome"], "imported");
    assert_eq!(report["summary"]["refused"], 5);
    assert!(ran.path().join("new/IMPORT-REPORT.md").is_file());
    assert!(!ran.path().join("evil.yaml").exists());
    assert!(!ran.path().join("new/tools/graphs/up.yaml").exists());
    assert!(ran.stderr.contains(
        "refused[IMP-G-tool-id]: .ai/tools/graphs/up.yaml: node `a` calls `tool:../../evil`: "
    ));
}

// Two generated files where one would be the other's directory (`tools/x.yaml` and
// `tools/x.yaml/y.yaml`): the later is not written, with a warning, and the import goes on.
#[test]
fn a_path_that_would_be_both_a_file_and_a_directory_is_written_once() {
    let graph = "tool_type: graph\nconfig:\n  start: a\n  nodes:\n    a:\n      action: {primary: execute, item_id: \"tool:x.yaml/y\"}\n      next: b\n    b:\n      action: {primary: execute, item_id: \"tool:x\"}\n      next: c\n    c: {type: return}\n";
    let (ran, report) = import(ryeos(&[("tools/g.yaml", graph)]), 3);
    let e = entry(&report, ".ai/tools/g.yaml");
    assert_eq!(e["outcome"], "imported");
    assert_eq!(e["written"], json!(["tools/g.yaml", "tools/x.yaml"]));
    let conflicts: Vec<(String, String, u64, u64)> = warnings(e)
        .into_iter()
        .filter(|w| w.0 == "IMP-conflict")
        .collect();
    assert_eq!(
        conflicts,
        [(
            "IMP-conflict".to_owned(),
            "`tools/x.yaml/y.yaml` cannot be written: the new project has `tools/x.yaml` (a path cannot be both a file and a directory)".to_owned(),
            0,
            0
        )]
    );
    assert!(ran.path().join("new/tools/x.yaml").is_file());
    // The node calling the tool not written is the check's error.
    assert_eq!(e["check_errors"], 1);
}
