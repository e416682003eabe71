//! `strata import ryeos`, the directive, graph and hook converters end to end: every
//! directive, graph and hook file of the RyeOS corpus (tests/fixtures/ryeos) is converted by
//! `strata_import`, written into a scratch project with the repository's runtimes, and the
//! binary then checks the project (`strata check`), dry-runs every directive and walks every
//! graph to completion.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{repo, Test};
use serde_json::Value;
use strata_import::{import_directive, import_graph, import_hooks, Catalog, FileImport, Outcome};

/// The corpus: `py/` (the Python era) and `head/` (HEAD), each holding what RyeOS kept under
/// `.ai/`.
fn corpus() -> PathBuf {
    repo().join("tests/fixtures/ryeos/corpus")
}

/// Every file under `dir` with one of `exts`, sorted, as paths relative to `dir`.
fn files(dir: &Path, exts: &[&str]) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, exts: &[&str], out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, exts, out);
            } else if exts.iter().any(|x| p.extension().is_some_and(|e| e == *x)) {
                let rel = p.strip_prefix(root).expect("under root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, exts, &mut out);
    out.sort();
    out
}

fn strip_ext(rel: &str) -> &str {
    rel.rsplit_once('.').map_or(rel, |(stem, _)| stem)
}

/// The catalog of the Python era: every tool and code-tool id.
fn catalog() -> Catalog {
    let mut c = Catalog::default();
    for dir in ["tools", "code"] {
        for rel in files(
            &corpus().join("py").join(dir),
            &["yaml", "yml", "py", "ts", "js"],
        ) {
            c.tools.insert(strip_ext(&rel).to_owned());
        }
    }
    // The graphs: the files that say `tool_type: graph`.
    for rel in files(&corpus().join("py").join("tools"), &["yaml"]) {
        let text = std::fs::read_to_string(corpus().join("py/tools").join(&rel)).unwrap();
        if text.lines().any(|l| l.trim_end() == "tool_type: graph") {
            c.graphs.insert(strip_ext(&rel).to_owned());
        }
    }
    for era in ["py", "head"] {
        for rel in files(&corpus().join(era).join("directives"), &["md"]) {
            c.directives.insert(strip_ext(&rel).to_owned());
        }
    }
    c
}

/// Everything the three converters make of the corpus.
struct Imported {
    /// (RyeOS source, id, result) of every directive.
    directives: Vec<(String, String, FileImport)>,
    /// (id, required inputs with a sample value, result) of every graph.
    graphs: Vec<(String, FileImport)>,
    hooks: FileImport,
}

fn import_corpus() -> Imported {
    let catalog = catalog();
    let mut directives = Vec::new();
    for era in ["py", "head"] {
        let dir = corpus().join(era).join("directives");
        for rel in files(&dir, &["md"]) {
            let text = std::fs::read_to_string(dir.join(&rel)).expect("directive text");
            let id = strip_ext(&rel).to_owned();
            let source = format!(".ai/directives/{rel}");
            let f = import_directive(&source, &id, &text, &catalog);
            directives.push((format!("{era}/{rel}"), id, f));
        }
    }
    let mut graphs = Vec::new();
    let tools = corpus().join("py/tools");
    for rel in files(&tools, &["yaml"]) {
        let text = std::fs::read_to_string(tools.join(&rel)).expect("tool text");
        let value = parse_yaml(&rel, &text);
        if value.get("tool_type").and_then(Value::as_str) != Some("graph") {
            continue;
        }
        let id = strip_ext(&rel).to_owned();
        let f = import_graph(&format!(".ai/tools/{rel}"), &id, &value, &text, &catalog);
        graphs.push((id, f));
    }
    let text =
        std::fs::read_to_string(corpus().join("py/hooks/hook_conditions.yaml")).expect("hook file");
    let hooks = import_hooks(".ai/config/agent/hook_conditions.yaml", &text, &catalog);
    Imported {
        directives,
        graphs,
        hooks,
    }
}

/// A tool standing in for a RyeOS tool the other converters bring over: it prints a JSON
/// object holding every field the corpus graphs read from a result.
fn fake_tool() -> String {
    let json = serde_json::json!({
        "stdout": "3",
        "stderr": "",
        "success": true,
        "thread_id": "thread-1",
        "result": "done",
        "action": "auto_reply",
        "forward_to": "ops@example.com",
        "agent_inbox": "agent@example.com",
        "outputs": {"draft_body": "Thanks!", "draft_subject": "Re: hello"},
        "email_id": "email-2",
        "forwarded_email_id": "email-3"
    });
    format!(
        "description: a fake of a RyeOS tool for the import test\nexecutor: runtimes/subprocess\nparameters: {{type: object, additionalProperties: true}}\nconfig:\n  command: printf\n  args: ['%s', {{literal: '{json}'}}]\n"
    )
}

/// The tool ids every graph node calls (action and foreach bodies).
fn called_tools(graph_yaml: &str) -> BTreeSet<String> {
    let v = parse_yaml("graph", graph_yaml);
    let mut out = BTreeSet::new();
    if let Some(Value::Object(nodes)) = v.get("nodes") {
        for node in nodes.values() {
            for n in [Some(node), node.get("do")].into_iter().flatten() {
                if let Some(t) = n.get("tool").and_then(Value::as_str) {
                    out.insert(t.to_owned());
                }
            }
        }
    }
    out
}

/// A sample value for an input of `ty`, as `--input` takes it.
fn sample(ty: &str) -> &'static str {
    match ty {
        "integer" | "number" => "1",
        "boolean" => "true",
        "array" => "[]",
        "object" => "{}",
        _ => "sample",
    }
}

/// The front matter of a written directive.
fn front_matter(text: &str) -> Value {
    let rest = text.strip_prefix("---\n").expect("front matter first");
    let end = rest.find("\n---\n").expect("front matter closed");
    parse_yaml("front matter", &rest[..end])
}

/// `text` (named `name` in a failure) read with strata's YAML reader.
fn parse_yaml(name: &str, text: &str) -> Value {
    strata_doc::Document::yaml_value(text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
}

/// The scratch project: the repository's runtimes, every file the converters wrote, and a
/// fake for every tool a graph calls that the converters did not write (the tool and code
/// converters' output); with `all_fakes`, the generated failing stubs are faked too.
fn project(imported: &Imported, all_fakes: bool) -> Test {
    let mut t = Test::new().copy("tools/runtimes");
    let mut written = BTreeSet::new();
    let all = imported
        .directives
        .iter()
        .map(|(_, _, f)| f)
        .chain(imported.graphs.iter().map(|(_, f)| f))
        .chain([&imported.hooks]);
    for f in all {
        for w in &f.written {
            written.insert(w.path.clone());
            t = t.file(&w.path, &w.contents);
        }
    }
    for (_, f) in &imported.graphs {
        let graph = &f.written[0].contents;
        for tool in called_tools(graph) {
            let path = format!("tools/{tool}.yaml");
            let generated = written.contains(&path);
            if tool.starts_with("ryeos-nested/") || (generated && !all_fakes) {
                continue;
            }
            t = t.file(&path, fake_tool());
        }
    }
    t
}

#[test]
fn every_directive_of_the_corpus_imports_checks_and_dry_runs() {
    let imported = import_corpus();
    assert_eq!(
        imported.directives.len(),
        132,
        "124 Python-era and 8 HEAD directives"
    );
    let refused: Vec<_> = imported
        .directives
        .iter()
        .filter(|(_, _, f)| f.outcome == Outcome::Refused)
        .map(|(s, _, f)| format!("{s}: {:?}", f.reason))
        .collect();
    assert!(refused.is_empty(), "refused: {refused:#?}");
    let clean = imported
        .directives
        .iter()
        .filter(|(_, _, f)| f.warnings.is_empty())
        .count();
    // §10: 2 load without warnings (1 Python-era, 1 HEAD), the rest with warnings.
    assert_eq!(clean, 2, "directives imported without a warning");
    for (source, _, f) in &imported.directives {
        for w in &f.warnings {
            assert!(w.code.starts_with("IMP-"), "{source}: {w:?}");
            assert!(w.line > 0 && w.column > 0, "{source}: unlocated {w:?}");
        }
    }

    let ran = project(&imported, false).args(&["check"]).status(0).run();
    assert_eq!(ran.code, Some(0), "strata check:\n{}", ran.stderr);
    assert!(ran.stdout.contains(" 0 errors"), "{}", ran.stdout);

    let mut ok = 0;
    for (source, id, f) in &imported.directives {
        let front = front_matter(&f.written[0].contents);
        let mut args = vec![
            "run".to_owned(),
            format!("directives/{id}.md"),
            "--dry-run".to_owned(),
        ];
        if let Some(Value::Array(inputs)) = front.get("inputs") {
            for i in inputs {
                let required = i.get("required").and_then(Value::as_bool) == Some(true);
                if required && i.get("default").is_none() {
                    let name = i.get("name").and_then(Value::as_str).expect("name");
                    let ty = i.get("type").and_then(Value::as_str).expect("type");
                    args.push("--input".into());
                    args.push(format!("{name}={}", sample(ty)));
                }
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = ran.then(&args).status(0).run();
        assert_eq!(r.code, Some(0), "{source}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("dry run"), "{source}: {}", r.stdout);
        ok += 1;
    }
    assert_eq!(ok, 132);
}

#[test]
fn every_graph_of_the_corpus_loads_and_walks_to_completion() {
    let imported = import_corpus();
    assert_eq!(imported.graphs.len(), 8, "the 8 Python-era graphs");
    for (id, f) in &imported.graphs {
        assert_eq!(f.outcome, Outcome::Imported, "{id}: {:?}", f.reason);
        assert!(!f.warnings.is_empty(), "{id}: every corpus graph warns");
    }

    // The import as it is (failing stubs included) loads: `strata check` and `strata graph`.
    let ran = project(&imported, false).args(&["check"]).status(0).run();
    assert_eq!(
        ran.code,
        Some(0),
        "strata check:\n{}\n{}",
        ran.stdout,
        ran.stderr
    );
    for (id, _) in &imported.graphs {
        let r = ran.then(&["graph", id]).status(0).run();
        assert_eq!(r.code, Some(0), "strata graph {id}: {}", r.stderr);
    }
    // A generated stub fails with its reason and status 127.
    let r = ran
        .then(&["run", "ryeos-unmapped/rye/agent/threads/thread_directive"])
        .status(127)
        .run();
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr
            .contains("runs a directive on an LLM thread; strata runs no LLM"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("127"), "{}", r.stderr);

    // With every tool faked (the nested wrapper stays real), every graph completes.
    let walked = project(&imported, true).args(&["check"]).status(0).run();
    assert_eq!(walked.code, Some(0), "{}", walked.stderr);
    let mut completed = 0;
    for (id, f) in &imported.graphs {
        let graph = parse_yaml(id, &f.written[0].contents);
        let mut args = vec![
            "run".to_owned(),
            id.clone(),
            "--run-id".to_owned(),
            id.replace('/', "-"),
        ];
        if let Some(Value::Array(required)) =
            graph.get("parameters").and_then(|p| p.get("required"))
        {
            for name in required {
                args.push("--input".into());
                args.push(format!("{}=sample", name.as_str().expect("a name")));
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = walked
            .then(&args)
            .env("STRATA_BIN", env!("CARGO_BIN_EXE_strata"))
            .status(0)
            .run();
        assert_eq!(r.code, Some(0), "{id}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("completed after"), "{id}: {}", r.stderr);
        completed += 1;
    }
    assert_eq!(completed, 8);

    // Values read through `${result.x}` and `${state.inputs.x}` arrive.
    let show = walked
        .then(&["runs", "show", "graphs-full-review-pipeline", "--json"])
        .status(0)
        .run();
    let state = &show.json()["state"];
    assert_eq!(state["analysis_thread_1"], "thread-1", "{}", show.stdout);
    assert_eq!(state["total_functions"], "3");
    assert_eq!(state["final_report"], "3");
    // The nested graph ran through its wrapper: RyeOS's envelope says it succeeded.
    assert_eq!(state["nested_result"], true, "{}", show.stdout);
    let show = walked
        .then(&["runs", "show", "rye-email-handle_inbound", "--json"])
        .status(0)
        .run();
    let state = &show.json()["state"];
    assert_eq!(state["draft_subject"], "Re: hello", "{}", show.stdout);
    assert_eq!(state["sent_email_id"], "email-2");
}

#[test]
fn the_corpus_hook_file_is_refused_with_every_hook_named() {
    let imported = import_corpus();
    let f = &imported.hooks;
    assert_eq!(f.outcome, Outcome::Refused);
    let reason = f.reason.as_ref().expect("a reason");
    assert_eq!(reason.code, "IMP-H-none");
    for id in [
        "default_retry_transient",
        "default_fail_permanent",
        "default_abort_cancelled",
        "default_escalate_limit",
        "default_context_compaction",
        "default_directive_return",
        "infra_save_state",
        "infra_completion_signal",
        "ctx_directive_instruction",
    ] {
        assert!(
            f.warnings
                .iter()
                .any(|w| w.message.contains(&format!("`{id}`"))),
            "{id} is named: {:#?}",
            f.warnings
        );
    }
    assert!(f.written.is_empty());
}

/// A RyeOS hook file whose hooks strata can fire: the imported `hooks/ryeos.yaml` loads
/// under `strata check` and fires on a directive's events.
#[test]
fn surviving_hooks_load_and_fire() {
    let text = r#"builtin_hooks:
  - id: "start"
    event: "thread_started"
    layer: 2
    action:
      primary: "execute"
      item_type: "tool"
      item_id: "ops/log"
      params:
        line: "start ${directive}"
        thread: "${thread_id}"
  - id: "limit"
    event: "limit"
    condition:
      path: "limit_code"
      op: "in"
      value: ["turns_exceeded", "spend_exceeded"]
    action:
      primary: "execute"
      item_id: "tool:ops/log"
      params:
        line: "${limit_code} at ${current_value}"
  - id: "retry"
    event: "error"
    action:
      primary: "execute"
      item_type: "tool"
      item_id: "rye/agent/threads/internal/control"
"#;
    let mut catalog = Catalog::default();
    catalog.tools.insert("ops/log".into());
    let f = import_hooks(".ai/config/agent/hook_conditions.yaml", text, &catalog);
    assert_eq!(f.outcome, Outcome::Imported, "{:?}", f.reason);
    assert_eq!(f.written[0].path, "hooks/ryeos.yaml");
    let ran = Test::new()
        .copy("tools/runtimes")
        .file(&f.written[0].path, &f.written[0].contents)
        .tool(
            "ops/log",
            "executor: runtimes/subprocess\nparameters: {type: object, additionalProperties: true}\nconfig:\n  command: printf\n  args: ['%s', '{params_json}']\n",
        )
        .file(
            "directives/x.md",
            "---\nname: x\nlimits: {turns: 1}\nactions:\n  - {id: a, tool: ops/log}\n  - {id: b, tool: ops/log}\n---\nHi\n",
        )
        .args(&["check"])
        .status(0)
        .run();
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    let r = ran
        .then(&["run", "directives/x.md", "--json"])
        .status(3)
        .run();
    let report = r.json();
    let hooks: Vec<(String, String)> = report["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap_or_default().to_owned(),
                h["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        hooks,
        [
            ("start".to_owned(), "completed".to_owned()),
            ("limit".to_owned(), "completed".to_owned())
        ],
        "{}",
        r.stdout
    );
    assert_eq!(
        report["hooks"][0]["params"],
        serde_json::json!({"line": "start x"})
    );
    assert_eq!(
        report["hooks"][1]["params"],
        serde_json::json!({"line": "turns at 1"})
    );
}
