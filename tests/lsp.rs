//! `strata lsp` end to end: the real binary driven over its standard input and output by a
//! client (`lsp_client`), against `strata check` on the same files.

mod common;
mod lsp_client;

use std::fs;
use std::path::Path;

use common::repo;
use lsp_client::{check_json, start, start_with, Client};
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
    let mut client = start(editor.path());
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
    let mut client = start(&repo());
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
    let mut client = start(&root);
    assert_eq!(client.workspace_diagnostics(), check_json(&root));
}

const TOOL: &str = "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    name: {type: string}\nconfig:\n  command: echo\n  args: [\"{nme}\"]\n";

#[test]
fn a_mistake_typed_is_pushed_and_its_fix_clears_it() {
    let dir = corpus_project();
    let mut client = start(dir.path());
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
        .unwrap_or_else(|| client.next_message());
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
    let mut client = start(dir.path());
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

/// A graph calling `examples/echo` whose state is initialised (`cfg` nested) and assigned
/// (`last`); `{hole}` is the message it passes.
fn state_graph(hole: &str) -> String {
    format!("kind: graph\nstate:\n  count: 0\n  cfg: {{depth: 1, mode: {{fast: true}}}}\nstart: greet\nnodes:\n  greet:\n    kind: action\n    tool: examples/echo\n    params:\n      message: \"{hole}\"\n    assign:\n      last: \"${{result.count}}\"\n    next:\n      - to: done\n  done:\n    kind: return\n    output:\n      n: \"${{state.count}}\"\n")
}

#[test]
fn completion_offers_the_state_keys_a_graph_sets_nested_and_half_typed() {
    let dir = corpus_project();
    let mut client = start(dir.path());
    let graph = "tools/graphs/c.yaml";
    client.open(graph, &state_graph("${state."));
    let keys = client.completion(graph, 10, 24);
    assert_eq!(keys, ["cfg", "count", "last"]);
    client.set(graph, &state_graph("${state.cfg."));
    assert_eq!(client.completion(graph, 10, 28), ["depth", "mode"]);
    client.set(graph, &state_graph("${state.cfg.mode.f"));
    assert_eq!(client.completion(graph, 10, 34), ["fast"]);
    offered_is_accepted(
        &mut client,
        graph,
        &keys,
        &["cont", "greet", "nope"],
        |n| state_graph(&format!("${{state.{n}}}")),
        "G001",
    );
}

/// A plan of four steps, the first calling `t/out` (which declares its `outputs`), the
/// others `examples/echo`; `{hole}` is the third one's message.
fn step_plan(hole: &str) -> String {
    format!("- id: first\n  tool: t/out\n  arguments: {{}}\n- id: step2\n  tool: examples/echo\n  arguments: {{message: hi}}\n- id: third\n  tool: examples/echo\n  arguments: {{message: \"{hole}\"}}\n- id: after\n  tool: examples/echo\n  arguments: {{message: hi}}\n")
}

#[test]
fn completion_offers_the_steps_before_the_one_written_and_their_declared_outputs() {
    let dir = corpus_project();
    fs::create_dir_all(dir.path().join("tools/t")).unwrap();
    fs::write(
        dir.path().join("tools/t/out.yaml"),
        "executor: runtimes/subprocess\noutputs:\n  type: object\n  properties:\n    count: {type: integer}\n    data: {type: object, properties: {email: {type: string}}}\nconfig:\n  command: printf\n  args: [\"{}\"]\n",
    )
    .unwrap();
    let mut client = start(dir.path());
    let plan = "plans/c.yaml";
    client.open(plan, &step_plan("{{"));
    let ids = client.completion(plan, 8, 26);
    assert_eq!(ids, ["first", "step2", "after"]);
    // What the check accepts (no P002, no P003) is exactly what is offered: every other step
    // whose record does not wait for this one, later ones too; not itself, not a step that
    // depends on it.
    let reads = |n: &str| step_plan(&format!("{{{{{n}.result}}}}"));
    let plan_codes = |client: &mut Client, text: &str| {
        accepted(client, plan, text, "P002") && accepted(client, plan, text, "P003")
    };
    for name in ["first", "step2", "after", "frst", "nope", "third"] {
        assert_eq!(
            plan_codes(&mut client, &reads(name)),
            ids.iter().any(|o| o == name),
            "{name}"
        );
    }
    let waiting = step_plan("{{").replacen(
        "- id: after\n  tool: examples/echo\n  arguments: {message: hi}",
        "- id: after\n  tool: examples/echo\n  arguments: {message: \"{{third.result}}\"}",
        1,
    );
    client.set(plan, &waiting);
    assert_eq!(client.completion(plan, 8, 26), ["first", "step2"]);
    let cyclic = waiting.replacen("\"{{\"", "\"{{after.result}}\"", 1);
    assert!(
        !plan_codes(&mut client, &cyclic),
        "a step waiting for this one is a cycle"
    );
    client.set(plan, &step_plan("{{first.result."));
    assert_eq!(client.completion(plan, 8, 39), ["count", "data"]);
    client.set(plan, &step_plan("{{ first.result.data."));
    assert_eq!(client.completion(plan, 8, 45), ["email"]);
    client.set(plan, &step_plan("{{step2.result."));
    assert!(client.completion(plan, 8, 39).is_empty());
    client.set(plan, &step_plan("$"));
    let dollar = client.completion(plan, 8, 25);
    assert_eq!(dollar, ["step2"]);
    offered_is_accepted(
        &mut client,
        plan,
        &dollar,
        &["step9"],
        |n| step_plan(&format!("${n}")),
        "P002",
    );
}

/// The hover of `relative` at `line`:`character`: its text and the columns of its range.
fn hover_at(client: &mut Client, relative: &str, line: u32, character: u32) -> (String, u64, u64) {
    let uri = client.uri(relative);
    let params =
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
    let answer = client.request("textDocument/hover", params);
    let range = &answer["result"]["range"];
    (
        answer["result"]["contents"]["value"]
            .as_str()
            .unwrap()
            .to_string(),
        range["start"]["character"].as_u64().unwrap(),
        range["end"]["character"].as_u64().unwrap(),
    )
}

/// Where `textDocument/definition` at `line`:`character` of `relative` leads: the file's
/// URI, and the line and columns of its range.
fn definition_at(client: &mut Client, relative: &str, line: u32, character: u32) -> Value {
    let uri = client.uri(relative);
    let params =
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
    client.request("textDocument/definition", params)["result"].clone()
}

#[test]
fn hover_and_definition_of_a_state_key_nested_too_and_of_a_plan_step() {
    let dir = corpus_project();
    let mut client = start(dir.path());
    let graph = "tools/graphs/c.yaml";
    client.open(graph, &state_graph("${state.last} ${state.cfg.mode}"));
    let unknown = "value: `not known yet: runtime state: set as the graph runs`";
    assert_eq!(
        hover_at(&mut client, graph, 10, 20),
        (format!("**`state.last`**: state key, assigned by node `greet` · layer context (C)\n\n{unknown}\n\nfrom: tools/graphs/c.yaml:13"), 16, 29)
    );
    assert_eq!(
        hover_at(&mut client, graph, 18, 14),
        (format!("**`state.count`**: state key, initialised under `state:` · layer context (C)\n\n{unknown}\n\ndefault: `0`\n\nfrom: tools/graphs/c.yaml:3"), 10, 24)
    );
    assert_eq!(
        hover_at(&mut client, graph, 10, 35),
        (format!("**`state.cfg.mode`**: state key, initialised under `state:` · layer context (C)\n\n{unknown}\n\ndefault: `{{\"fast\":true}}`\n\nfrom: tools/graphs/c.yaml:4"), 30, 47)
    );
    let at_line = |uri: &str, line: u32, character: u32| json!({"uri": uri, "range": {"start": {"line": line, "character": character}, "end": {"line": line, "character": character + 1}}});
    let graph_uri = client.uri(graph);
    assert_eq!(
        definition_at(&mut client, graph, 10, 20),
        at_line(&graph_uri, 12, 12)
    );
    assert_eq!(
        definition_at(&mut client, graph, 18, 14),
        at_line(&graph_uri, 2, 9)
    );
    assert_eq!(
        definition_at(&mut client, graph, 10, 35),
        at_line(&graph_uri, 3, 24)
    );
    let plan = "plans/c.yaml";
    client.open(plan, &step_plan("{{first.result.count}} $step2"));
    let unknown = "value: `not known yet: its record is known once the step has run`";
    assert_eq!(
        hover_at(&mut client, plan, 8, 30),
        (format!("**`first`**: step 1 (calls `t/out`) · layer plan reference\n\n{unknown}\n\nfrom: plans/c.yaml:1"), 24, 46)
    );
    assert_eq!(
        hover_at(&mut client, plan, 8, 48),
        (format!("**`step2`**: step 2 (calls `examples/echo`) · layer plan reference\n\n{unknown}\n\nfrom: plans/c.yaml:4"), 47, 53)
    );
    let plan_uri = client.uri(plan);
    assert_eq!(
        definition_at(&mut client, plan, 8, 30),
        at_line(&plan_uri, 0, 4)
    );
    assert_eq!(
        definition_at(&mut client, plan, 8, 48),
        at_line(&plan_uri, 3, 4)
    );
    let uri = client.uri(plan);
    let params = json!({"textDocument": {"uri": uri}, "position": {"line": 7, "character": 4}});
    assert_eq!(
        client.request("textDocument/hover", params)["result"],
        Value::Null
    );
}

/// The answer to `method` at `line`:`character` of `relative`, with `more` merged into
/// its parameters.
fn asked(
    client: &mut Client,
    method: &str,
    relative: &str,
    line: u32,
    character: u32,
    more: Value,
) -> Value {
    let uri = client.uri(relative);
    let mut params =
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
    for (k, v) in more.as_object().unwrap() {
        params[k] = v.clone();
    }
    client.request(method, params)
}

#[test]
fn references_and_rename_of_a_state_key_and_a_step_id_with_refusals() {
    let dir = corpus_project();
    let mut client = start(dir.path());
    let graph = "tools/graphs/c.yaml";
    client.open(graph, &state_graph("${state.count} ${state.cfg.depth}"));
    let all = json!({"context": {"includeDeclaration": true}});
    let graph_uri = client.uri(graph);
    let plan = "plans/c.yaml";
    let plan_uri = client.uri(plan);
    let range = |line: u32, from: u32, to: u32| json!({"start": {"line": line, "character": from}, "end": {"line": line, "character": to}});
    let at = |uri: &str, line: u32, from: u32, to: u32| json!({"uri": uri, "range": range(line, from, to)});
    let edit = |line: u32, from: u32, to: u32, new: &str| json!({"range": range(line, from, to), "newText": new});
    assert_eq!(
        asked(
            &mut client,
            "textDocument/references",
            graph,
            10,
            20,
            all.clone()
        )["result"],
        json!([
            at(&graph_uri, 10, 24, 29),
            at(&graph_uri, 18, 18, 23),
            at(&graph_uri, 2, 2, 7)
        ])
    );
    assert_eq!(
        asked(
            &mut client,
            "textDocument/rename",
            graph,
            18,
            14,
            json!({"newName": "total"})
        )["result"],
        json!({"changes": {graph_uri.clone(): [edit(2, 2, 7, "total"), edit(10, 24, 29, "total"), edit(18, 18, 23, "total")]}})
    );
    assert_eq!(
        asked(&mut client, "textDocument/rename", graph, 10, 35, json!({"newName": "x"}))["error"]["message"],
        "`state.cfg.depth` is a key inside the initial value of `state.cfg`; rename it in that value"
    );
    client.open(plan, &step_plan("{{ step2.result }} $step2"));
    assert_eq!(
        asked(&mut client, "textDocument/references", plan, 8, 30, all)["result"],
        json!([
            at(&plan_uri, 8, 27, 32),
            at(&plan_uri, 8, 44, 49),
            at(&plan_uri, 3, 6, 11)
        ])
    );
    assert_eq!(
        asked(
            &mut client,
            "textDocument/rename",
            plan,
            8,
            30,
            json!({"newName": "step7"})
        )["result"],
        json!({"changes": {plan_uri: [edit(3, 6, 11, "step7"), edit(8, 27, 32, "step7"), edit(8, 44, 49, "step7")]}})
    );
    assert_eq!(
        asked(&mut client, "textDocument/rename", plan, 8, 45, json!({"newName": "second"}))["error"]["message"],
        "step `step2` is read as `$step2`, which names a step only as `stepN`; give it such an id, or write its references as `{{step2.result…}}` first"
    );
}

/// A graph whose prompt node renders the template of key `{key}`; `{more}` are its other
/// keys' lines.
fn prompt_graph(key: &str, more: &str) -> String {
    format!("kind: graph\nstart: think\nnodes:\n  think:\n    kind: prompt\n    key: {key}\n{more}    assign:\n      template: \"${{result.template}}\"\n    next: done\n  done:\n    kind: return\n    output:\n      t: \"${{state.template}}\"\n")
}

#[test]
fn prompt_keys_are_completed_and_lead_to_the_template_the_fallback_picks() {
    let dir = corpus_project();
    copy("prompts", dir.path());
    let mut client = start(dir.path());
    let graph = "tools/graphs/p.yaml";
    client.open(graph, &prompt_graph("", ""));
    let keys = client.completion(graph, 5, 9);
    assert_eq!(keys, ["BrowseLink", "Search", "default"]);
    offered_is_accepted(
        &mut client,
        graph,
        &keys,
        &["Serch", "Browse"],
        |k| prompt_graph(k, ""),
        "T006",
    );
    client.set(graph, &prompt_graph("Search", ""));
    assert_eq!(
        hover_at(&mut client, graph, 5, 11),
        ("**`Search`**: prompt key, picks `main/Search` (fallback: main/Search) · layer prompts\n\nvalue: `main/Search`\n\nfrom: prompts/main/Search.j2:1".to_string(), 9, 15)
    );
    let template = client.uri("prompts/main/Search.j2");
    assert_eq!(
        definition_at(&mut client, graph, 5, 11),
        json!({"uri": template, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}})
    );
    client.set(
        graph,
        &prompt_graph("\"BrowseLink\"", "    version: enterprise\n"),
    );
    assert_eq!(
        hover_at(&mut client, graph, 5, 12),
        ("**`BrowseLink`**: prompt key, picks `main/BrowseLink.enterprise` (fallback: main/BrowseLink.enterprise) · layer prompts\n\nvalue: `main/BrowseLink.enterprise`\n\nfrom: prompts/templates.yaml:6".to_string(), 10, 20)
    );
    let dict = client.uri("prompts/templates.yaml");
    assert_eq!(
        definition_at(&mut client, graph, 5, 12),
        json!({"uri": dict, "range": {"start": {"line": 5, "character": 4}, "end": {"line": 5, "character": 5}}})
    );
}

const HOVERED: &str = "executor: runtimes/python\nsecrets: [API_TOKEN]\nparameters:\n  type: object\n  properties:\n    name: {type: string, default: world}\nconfig:\n  script: run.py\n  greeting: hello\n  input_data: \"{greeting} {name} ${API_TOKEN} ${PYTHON} ${CANARY}\"\n";

/// A secret of the project's `.env` that no message of the server may carry.
const CANARY: &str = "canary-7f3a9e";

/// A project with the Python runtime, a `.env` holding [`CANARY`], and [`HOVERED`] open.
fn hovered() -> (tempfile::TempDir, Client) {
    hovered_with(Value::Null)
}

/// [`hovered`], the server started with the `initializationOptions` `options`.
fn hovered_with(options: Value) -> (tempfile::TempDir, Client) {
    let dir = corpus_project();
    copy("tools/runtimes/python.yaml", dir.path());
    fs::write(dir.path().join(".env"), format!("CANARY={CANARY}\n")).unwrap();
    fs::create_dir_all(dir.path().join("tools/t")).unwrap();
    fs::write(dir.path().join("tools/t/h.yaml"), HOVERED).unwrap();
    let mut client = start_with(dir.path(), options);
    client.open("tools/t/h.yaml", HOVERED);
    (dir, client)
}

fn at(client: &Client, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": client.uri("tools/t/h.yaml")}, "position": {"line": line, "character": character}})
}

/// Asserts that no message the server sent carries [`CANARY`].
fn no_canary(client: &Client) {
    let raw = client.raw.lock().unwrap();
    assert!(raw.len() > 2);
    assert!(!raw.iter().any(|m| m.contains(CANARY)));
}

/// The inlay hints of the first lines of [`HOVERED`].
fn hints(client: &mut Client) -> Value {
    let uri = client.uri("tools/t/h.yaml");
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}});
    client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": range}),
    )["result"]
        .clone()
}

/// The inlay hints of [`HOVERED`] when they are on.
fn shown_hints() -> Value {
    let hint = |character: u32, label: &str| json!({"position": {"line": 9, "character": character}, "label": label, "paddingLeft": true});
    json!([
        hint(25, "= hello"),
        hint(32, "= \"world\" (default)"),
        hint(45, "= ***"),
        hint(65, "= ***")
    ])
}

/// Inlay hints switched off when the server starts (`initializationOptions`) are none, and
/// the editor's settings (`workspace/didChangeConfiguration`, under `strata` or at the top)
/// switch them on and off again.
#[test]
fn inlay_hints_are_switched_off_at_start_and_on_and_off_by_the_settings() {
    let (_dir, mut client) = hovered_with(json!({"inlayHints": false}));
    assert_eq!(hints(&mut client), json!([]));
    let on = json!({"settings": {"strata": {"inlayHints": true}}});
    client.notify("workspace/didChangeConfiguration", on);
    assert_eq!(hints(&mut client), shown_hints());
    let off = json!({"settings": {"inlayHints": false}});
    client.notify("workspace/didChangeConfiguration", off);
    assert_eq!(hints(&mut client), json!([]));
    no_canary(&client);
}

#[test]
fn hover_and_inlay_hints_show_what_is_known_and_secrets_as_stars() {
    let (_dir, mut client) = hovered();
    let hover = |client: &mut Client, character: u32| {
        let params = at(client, 9, character);
        let answer = client.request("textDocument/hover", params);
        let range = &answer["result"]["range"];
        (
            answer["result"]["contents"]["value"]
                .as_str()
                .unwrap()
                .to_string(),
            range["start"]["character"].as_u64().unwrap(),
            range["end"]["character"].as_u64().unwrap(),
        )
    };
    assert_eq!(hover(&mut client, 17), ("**`greeting`**: config key · layer params (P)\n\nvalue: `hello`\n\nfrom: tools/t/h.yaml:9".to_string(), 15, 25));
    assert_eq!(hover(&mut client, 28), ("**`name`**: declared parameter · layer params (P)\n\nvalue: `not known yet: given by the caller when the tool runs`\n\ndefault: `\"world\"`\n\nfrom: tools/t/h.yaml:6".to_string(), 26, 32));
    assert_eq!(
        hover(&mut client, 36),
        (
            "**`API_TOKEN`**: secret · layer env (E)\n\nvalue: `***`\n\nfrom: tools/t/h.yaml:2"
                .to_string(),
            33,
            45
        )
    );
    assert_eq!(hover(&mut client, 48), ("**`PYTHON`**: interpreter · layer env (E)\n\nvalue: `not known yet: the interpreter found when the tool runs`\n\nfrom: tools/runtimes/python.yaml:9".to_string(), 46, 55));
    assert_eq!(
        hover(&mut client, 58),
        (
            "**`CANARY`**: set in .env · layer env (E)\n\nvalue: `***`\n\nfrom: .env:1".to_string(),
            56,
            65
        )
    );
    let params = at(&client, 7, 4);
    assert_eq!(
        client.request("textDocument/hover", params)["result"],
        Value::Null
    );
    assert_eq!(hints(&mut client), shown_hints());
    no_canary(&client);
}

#[test]
fn definition_references_and_rename_of_a_parameter_and_refusals_with_the_reason() {
    let (_dir, mut client) = hovered();
    let file = client.uri("tools/t/h.yaml");
    let range = |line: u32, from: u32, to: u32| json!({"start": {"line": line, "character": from}, "end": {"line": line, "character": to}});
    let params = at(&client, 9, 28);
    assert_eq!(
        client.request("textDocument/definition", params)["result"],
        json!({"uri": file, "range": range(5, 10, 11)})
    );
    let params = at(&client, 9, 58);
    assert_eq!(
        client.request("textDocument/definition", params)["result"],
        json!({"uri": client.uri(".env"), "range": range(0, 0, 1)})
    );
    let params = at(&client, 9, 48);
    assert_eq!(
        client.request("textDocument/definition", params)["result"],
        json!({"uri": client.uri("tools/runtimes/python.yaml"), "range": range(8, 9, 10)})
    );
    let mut params = at(&client, 9, 28);
    params["context"] = json!({"includeDeclaration": true});
    assert_eq!(
        client.request("textDocument/references", params)["result"],
        json!([{"uri": file, "range": range(9, 27, 31)}, {"uri": file, "range": range(5, 10, 11)}])
    );
    let mut params = at(&client, 9, 28);
    params["newName"] = json!("who");
    assert_eq!(
        client.request("textDocument/rename", params)["result"],
        json!({"changes": {file.clone(): [{"range": range(9, 27, 31), "newText": "who"}, {"range": range(5, 4, 8), "newText": "who"}]}})
    );
    let refused = |client: &mut Client, character: u32, new: &str| {
        let mut params = at(client, 9, character);
        params["newName"] = json!(new);
        client.request("textDocument/rename", params)["error"]["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(refused(&mut client, 36, "KEY"), "`API_TOKEN` is read from the process's environment when the tool runs; rename it where it is set and in every program that reads it");
    assert_eq!(
        refused(&mut client, 28, "a b"),
        "`a b` is not a name a placeholder can read"
    );
    client.set(
        "tools/t/h.yaml",
        &HOVERED.replace("{greeting} {name}", "{tool_dir} {script}"),
    );
    assert_eq!(
        refused(&mut client, 17, "dir"),
        "`tool_dir` is a runtime parameter: strata names it"
    );
    let passes_all = HOVERED.replace("  input_data: \"", "  stdin: \"");
    client.set("tools/t/h.yaml", &passes_all);
    let mut params = at(&client, 9, 23);
    params["newName"] = json!("who");
    assert_eq!(
        client.request("textDocument/rename", params)["error"]["message"],
        "the tool's program reads its parameters by name from `{params_json}` when it runs: renaming `name` here would not rename what it reads"
    );
    no_canary(&client);
}

/// The code actions offered for every diagnostic of `relative`, pulled.
fn fixes(client: &mut Client, relative: &str) -> Value {
    let diagnostics = client.document_diagnostics(relative);
    let uri = client.uri(relative);
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}});
    client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": diagnostics}}),
    )["result"]
        .clone()
}

#[test]
fn did_you_means_are_code_actions_whose_edit_the_check_then_accepts() {
    let dir = corpus_project();
    let mut client = start(dir.path());
    client.open("tools/t/greet.yaml", TOOL);
    let actions = fixes(&mut client, "tools/t/greet.yaml");
    let actions = actions.as_array().unwrap();
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0]["title"], "Replace `{nme}` with `{name}`");
    let uri = client.uri("tools/t/greet.yaml");
    assert_eq!(
        actions[0]["edit"]["changes"][&uri],
        json!([{"range": {"start": {"line": 7, "character": 10}, "end": {"line": 7, "character": 15}}, "newText": "{name}"}])
    );
    client.set("tools/t/greet.yaml", &TOOL.replace("{nme}", "{name}"));
    assert_eq!(fixes(&mut client, "tools/t/greet.yaml"), json!([]));
    assert_eq!(
        client.document_diagnostics("tools/t/greet.yaml"),
        Vec::<Value>::new()
    );
    let d = "---\nname: c\ninputs:\n  - {name: who, type: string}\n---\nSay {input:whoo}\n";
    client.open("directives/c.md", d);
    let actions = fixes(&mut client, "directives/c.md");
    assert_eq!(
        actions[0]["title"],
        "Replace `{input:whoo}` with `{input:who}`"
    );
    let tokens = client.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(tokens["result"]["data"], json!([7, 10, 6, 1, 0]));
}

#[test]
fn an_edit_of_a_runtime_is_seen_by_every_tool_on_it_and_undone_when_closed() {
    let dir = corpus_project();
    copy("tools/runtimes/python.yaml", dir.path());
    fs::create_dir_all(dir.path().join("tools/t")).unwrap();
    fs::write(dir.path().join("tools/t/h.yaml"), HOVERED).unwrap();
    let mut client = start(dir.path());
    let clean = client.workspace_diagnostics();
    assert_eq!(clean, check_json(dir.path()));
    let runtime = "tools/runtimes/python.yaml";
    let edited = fs::read_to_string(dir.path().join(runtime))
        .unwrap()
        .replace("{tool_dir}/{script}", "{tool_dir}/{scrpt}");
    client.open(runtime, &edited);
    let on_disk = tempfile::tempdir().unwrap();
    for file in [
        "tools/runtimes/subprocess.yaml",
        "tools/examples/echo.yaml",
        "tools/t/h.yaml",
    ] {
        fs::create_dir_all(on_disk.path().join(file).parent().unwrap()).unwrap();
        fs::copy(dir.path().join(file), on_disk.path().join(file)).unwrap();
    }
    fs::write(on_disk.path().join(runtime), &edited).unwrap();
    let expected = check_json(on_disk.path());
    assert!(expected
        .iter()
        .any(|d| d["code"] == "R001" && d["file"] == runtime));
    assert_eq!(client.workspace_diagnostics(), expected);
    client.close(runtime);
    assert_eq!(client.workspace_diagnostics(), clean);
}

#[test]
fn a_prompt_key_is_found_and_renamed_across_graphs_and_its_templates() {
    let dir = corpus_project();
    copy("prompts", dir.path());
    fs::create_dir_all(dir.path().join("tools/graphs")).unwrap();
    let other = "tools/graphs/q.yaml";
    let enterprise = prompt_graph("BrowseLink", "    version: enterprise\n");
    fs::write(dir.path().join(other), enterprise).unwrap();
    let mut client = start(dir.path());
    let graph = "tools/graphs/p.yaml";
    client.open(graph, &prompt_graph("BrowseLink", ""));
    let (graph_uri, other_uri) = (client.uri(graph), client.uri(other));
    let dict = client.uri("prompts/templates.yaml");
    let file = client.uri("prompts/main/BrowseLink.j2");
    let range = |line: u32, from: u32, to: u32| json!({"start": {"line": line, "character": from}, "end": {"line": line, "character": to}});
    let at = |uri: &str, line: u32, from: u32, to: u32| json!({"uri": uri, "range": range(line, from, to)});
    let all = json!({"context": {"includeDeclaration": true}});
    assert_eq!(
        asked(&mut client, "textDocument/references", graph, 5, 12, all)["result"],
        json!([
            at(&graph_uri, 5, 9, 19),
            at(&other_uri, 5, 9, 19),
            at(&file, 0, 0, 0),
            at(&dict, 4, 2, 12)
        ])
    );
    let uses = json!({"context": {"includeDeclaration": false}});
    assert_eq!(
        asked(&mut client, "textDocument/references", graph, 5, 9, uses)["result"],
        json!([at(&graph_uri, 5, 9, 19), at(&other_uri, 5, 9, 19)])
    );
    let edits = |uri: &str, line: u32, from: u32, to: u32| json!({"textDocument": {"uri": uri, "version": null}, "edits": [{"range": range(line, from, to), "newText": "OpenLink"}]});
    let renamed = client.uri("prompts/main/OpenLink.j2");
    assert_eq!(
        asked(
            &mut client,
            "textDocument/rename",
            graph,
            5,
            10,
            json!({"newName": "OpenLink"})
        )["result"],
        json!({"documentChanges": [
            edits(&dict, 4, 2, 12),
            edits(&graph_uri, 5, 9, 19),
            edits(&other_uri, 5, 9, 19),
            {"kind": "rename", "oldUri": file, "newUri": renamed}
        ]})
    );
    let refused = |client: &mut Client, relative: &str, new: &str| {
        asked(
            client,
            "textDocument/rename",
            relative,
            5,
            10,
            json!({"newName": new}),
        )["error"]["message"]
            .clone()
    };
    let built = "tools/graphs/r.yaml";
    client.open(built, &prompt_graph("\"${state.k}\"", ""));
    let cases = [
        (graph, "Search", "prompt key `Search` is already taken by prompts/main/Search.j2"),
        (graph, "Open.Link", "`Open.Link` is not a prompt key's name: names are letters, digits, `_` and `-`"),
        (graph, "OpenLink", "prompt node `think` builds its key at run time (`${state.k}`), so which key it reads is not known; write its key out before renaming `BrowseLink`"),
        (built, "OpenLink", "the key of prompt node `think` is built at run time (`${state.k}`); rename the template it picks in `prompts/`"),
    ];
    for (relative, new, message) in cases {
        assert_eq!(
            refused(&mut client, relative, new),
            message,
            "{relative} → {new}"
        );
    }
}
