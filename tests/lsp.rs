//! `strata lsp` end to end: the real binary driven over its standard input and output by a
//! client (`lsp_client`), against `strata check` on the same files.

mod common;
mod lsp_client;

use std::fs;
use std::path::Path;

use common::repo;
use lsp_client::{check_json, Client};
use serde_json::{json, Value};

/// Copies `relative` (a file or a directory) of the repository into `dir`.
fn copy(relative: &str, dir: &Path) {
    let from = repo().join(relative);
    let to = dir.join(relative);
    if from.is_dir() {
        fs::create_dir_all(&to).unwrap();
        for entry in fs::read_dir(&from).unwrap() {
            let name = entry.unwrap().file_name();
            copy(&format!("{relative}/{}", name.to_str().unwrap()), dir);
        }
    } else {
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(from, to).unwrap();
    }
}

/// The project every case of the check's corpus is checked in: the shipped runtimes and
/// `examples/echo`.
fn corpus_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy("tools/runtimes", dir.path());
    copy("tools/examples/echo.yaml", dir.path());
    dir
}

/// Where the check's corpus puts a case (`tests/check.rs`).
fn corpus_target(name: &str) -> String {
    match &name[..2] {
        "t_" => format!("tools/case/{name}"),
        "d_" => format!("directives/{name}"),
        "g_" => format!("tools/graphs/{name}"),
        "p_" => format!("plans/{name}"),
        _ => format!("hooks/{name}"),
    }
}

#[test]
fn every_case_of_the_check_corpus_typed_into_the_editor_is_diagnosed_as_the_check_does() {
    let mut cases: Vec<_> = fs::read_dir(repo().join("tests/check"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "expected"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 40);
    let editor = corpus_project();
    let mut client = Client::start(editor.path());
    assert_eq!(client.workspace_diagnostics(), check_json(editor.path()));
    for case in cases {
        let name = case.file_name().unwrap().to_str().unwrap();
        let target = corpus_target(name);
        let text = fs::read_to_string(&case).unwrap();
        let on_disk = corpus_project();
        fs::create_dir_all(on_disk.path().join(&target).parent().unwrap()).unwrap();
        fs::write(on_disk.path().join(&target), &text).unwrap();
        let expected = check_json(on_disk.path());
        assert!(!expected.is_empty(), "{name}");
        client.open(&target, &text);
        assert_eq!(client.workspace_diagnostics(), expected, "{name}");
        client.close(&target);
    }
    assert_eq!(client.workspace_diagnostics(), Vec::<Value>::new());
    assert_eq!(client.shut_down(), Some(0));
}

#[test]
fn the_shipped_project_and_a_new_one_are_diagnosed_as_the_check_does() {
    let mut client = Client::start(&repo());
    assert_eq!(client.workspace_diagnostics(), check_json(&repo()));
    drop(client);
    let dir = tempfile::tempdir().unwrap();
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["init", "new"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(made.status.success());
    let root = dir.path().join("new");
    let mut client = Client::start(&root);
    assert_eq!(client.workspace_diagnostics(), check_json(&root));
}

const TOOL: &str = "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    name: {type: string}\nconfig:\n  command: echo\n  args: [\"{nme}\"]\n";

#[test]
fn a_mistake_typed_is_pushed_and_its_fix_clears_it() {
    let dir = corpus_project();
    let mut client = Client::start(dir.path());
    assert_eq!(client.workspace_diagnostics(), Vec::<Value>::new());
    client.open("tools/t/greet.yaml", TOOL);
    let found = client.document_diagnostics("tools/t/greet.yaml");
    let unused = json!({
        "range": {"start": {"line": 4, "character": 10}, "end": {"line": 4, "character": 11}},
        "severity": 2,
        "code": "U002",
        "source": "strata",
        "message": "parameter `name` never reaches the tool\nhelp: use `{name}` in the config, or `{params_json}` to pass every parameter",
        "data": {
            "kind": "invalid",
            "message": "parameter `name` never reaches the tool",
            "path": "parameters.properties.name",
            "hint": "use `{name}` in the config, or `{params_json}` to pass every parameter",
            "file": "tools/t/greet.yaml",
            "line": 5,
            "column": 11,
            "severity": "warning",
            "code": "U002"
        }
    });
    let unknown = json!({
        "range": {"start": {"line": 7, "character": 10}, "end": {"line": 7, "character": 15}},
        "severity": 1,
        "code": "R001",
        "source": "strata",
        "message": "unknown parameter `{nme}`: it is left as written\nhelp: did you mean `{name}`?",
        "data": {
            "kind": "unknown_name",
            "message": "unknown parameter `{nme}`: it is left as written",
            "path": "config.args[0]",
            "span": [0, 5],
            "hint": "did you mean `{name}`?",
            "file": "tools/t/greet.yaml",
            "line": 8,
            "column": 11,
            "severity": "error",
            "code": "R001"
        }
    });
    assert_eq!(found, vec![unused, unknown]);
    let pushed = client
        .notes
        .iter()
        .find(|n| n["method"] == "textDocument/publishDiagnostics")
        .cloned()
        .unwrap_or_else(|| client.next());
    assert_eq!(
        pushed["params"]["uri"],
        json!(client.uri("tools/t/greet.yaml"))
    );
    assert_eq!(pushed["params"]["diagnostics"], json!(found));
    client.change("tools/t/greet.yaml", 7, 12, 12, "a");
    assert_eq!(
        client.document_diagnostics("tools/t/greet.yaml"),
        Vec::<Value>::new()
    );
    let cleared = client
        .notes
        .iter()
        .rev()
        .find(|n| n["method"] == "textDocument/publishDiagnostics");
    assert_eq!(cleared.unwrap()["params"]["diagnostics"], json!([]));
    assert_eq!(client.shut_down(), Some(0));
}

/// A tool on the Python runtime (which sets `PYTHON` and two more), with a secret, a
/// declared parameter and config keys; `{hole}` is its `input_data`.
fn python_tool(hole: &str) -> String {
    format!("executor: runtimes/python\nsecrets: [API_TOKEN]\nparameters:\n  type: object\n  properties:\n    name: {{type: string}}\nconfig:\n  script: run.py\n  input_data: \"{hole}\"\n")
}

/// Whether the check accepts `text` as the file `relative`: no diagnostic of `code` there.
fn accepted(client: &mut Client, relative: &str, text: &str, code: &str) -> bool {
    client.set(relative, text);
    !client
        .document_diagnostics(relative)
        .iter()
        .any(|d| d["code"] == code)
}

/// Asserts that the names offered are exactly those of `universe` (the offered ones and
/// `decoys`) the check accepts.
fn offered_is_accepted(
    client: &mut Client,
    relative: &str,
    offered: &[String],
    decoys: &[&str],
    text: impl Fn(&str) -> String,
    code: &str,
) {
    let universe = offered
        .iter()
        .map(String::as_str)
        .chain(decoys.iter().copied());
    for name in universe {
        assert_eq!(
            accepted(client, relative, &text(name), code),
            offered.iter().any(|o| o == name),
            "{relative}: {name}"
        );
    }
}

#[test]
fn completion_offers_exactly_the_names_the_check_accepts() {
    let dir = corpus_project();
    copy("tools/runtimes/python.yaml", dir.path());
    fs::write(dir.path().join(".env"), "FROM_DOTENV=1\n").unwrap();
    let mut client = Client::start(dir.path());
    let tool = "tools/t/c.yaml";
    client.open(tool, &python_tool("{"));
    let params = client.completion(tool, 8, 16);
    assert_eq!(
        params,
        [
            "tool_path",
            "tool_dir",
            "tool_parent",
            "project_path",
            "params_json",
            "runtime_dir",
            "args",
            "cwd",
            "timeout",
            "max_output_bytes",
            "command",
            "input_data",
            "script",
            "name"
        ]
    );
    offered_is_accepted(
        &mut client,
        tool,
        &params,
        &["nme", "PYTHON", "other"],
        |n| python_tool(&format!("{{{n}}}")),
        "R001",
    );
    client.set(tool, &python_tool("${"));
    let env = client.completion(tool, 8, 17);
    assert_eq!(
        env,
        [
            "API_TOKEN",
            "PATH",
            "HOME",
            "USER",
            "LOGNAME",
            "SHELL",
            "LANG",
            "LANGUAGE",
            "TZ",
            "TMPDIR",
            "TERM",
            "FROM_DOTENV",
            "PYTHONUNBUFFERED",
            "PYTHONDONTWRITEBYTECODE",
            "PYTHON"
        ]
    );
    offered_is_accepted(
        &mut client,
        tool,
        &env,
        &["NOPE", "OTHER_VAR", "API_TOKN"],
        |n| python_tool(&format!("${{{n}}}")),
        "R002",
    );
    let directive = |hole: &str| {
        format!("---\nname: c\ninputs:\n  - {{name: who, type: string}}\n  - {{name: times, type: integer, default: 1}}\n---\nSay {hole}\n")
    };
    let d = "directives/c.md";
    client.open(d, &directive("{input:"));
    let inputs = client.completion(d, 6, 11);
    assert_eq!(inputs, ["who", "times"]);
    offered_is_accepted(
        &mut client,
        d,
        &inputs,
        &["wo", "name"],
        |n| directive(&format!("{{input:{n}}}")),
        "R003",
    );
}
