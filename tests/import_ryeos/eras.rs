//! `strata import ryeos` on the RyeOS eras and layouts beyond the corpus: the Rust-era
//! daemon's test projects (`# ryeos-tool:` headers on the sealed Python runtimes), older and
//! intermediate formats, id conflicts, nested graphs and the files RyeOS's daemon reads that
//! strata does not. Each tree is a small fixture under tests/fixtures/ryeos/eras/ written in
//! the style RyeOS shipped, or inline.

use serde_json::json;

use super::common::{Ran, Test};
use super::{
    assert_refused, codes, collect, corpus_text, entry, import, rewrites, ryeos, warnings, yaml,
    yaml_of,
};

/// The files of an era fixture (a tree laid out as RyeOS's `.ai/`), as `(path under .ai/,
/// text)`.
fn era(name: &str) -> Vec<(String, String)> {
    let root = common_root().join(name);
    let mut files = Vec::new();
    for top in std::fs::read_dir(&root).expect("a fixture").flatten() {
        let to = top.file_name().to_string_lossy().into_owned();
        collect(&top.path(), &top.path(), &to, &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|(rel, p)| (rel, std::fs::read_to_string(p).expect("utf-8")))
        .collect()
}

fn common_root() -> std::path::PathBuf {
    super::common::repo().join("tests/fixtures/ryeos/eras")
}

/// `files` with the Rust-era Python runtimes RyeOS's core bundle ships.
fn with_sealed_runtimes(mut files: Vec<(String, String)>) -> Vec<(String, String)> {
    for rt in ["script", "function"] {
        let rel = format!("tools/ryeos/core/runtimes/python/{rt}.yaml");
        let text = corpus_text(&rel);
        files.push((rel, text));
    }
    files
}

fn tree(files: &[(String, String)]) -> Test {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    ryeos(&refs)
}

// The daemon's own test projects: Python tools declared by a `# ryeos-tool:` header on the
// sealed `script` and `function` runtimes are imported and run as RyeOS ran them (the
// namespace root and its `lib/` on `sys.path`, `execute(params, project_path)` called).
#[test]
fn rt_header_code_tools_run_on_the_unsealed_python_runtimes() {
    let (ran, report) = import(tree(&with_sealed_runtimes(era("rust-daemon"))), 0);
    assert_invariants(&ran, &report);
    let e = entry(&report, ".ai/tools/hello/hello.py");
    assert_eq!(e["kind"], "code");
    assert_eq!(e["era"], "head");
    assert_eq!(e["outcome"], "imported");
    assert_eq!(e["warnings"], json!([]));
    assert_eq!(
        rewrites(e),
        [
            "# ryeos-tool: category dropped (the id is the path `hello/hello`)",
            "# ryeos-tool: executor_id → executor: ryeos/core/runtimes/python/script",
            "no config_schema → parameters: {type: object, additionalProperties: true} (RyeOS validated nothing)",
            "code stays at .ai/tools/hello/hello.py; the wrapper sets code_path and code_dir",
        ]
    );
    assert_eq!(
        yaml(&ran, "tools/hello/hello.yaml"),
        yaml_of(
            "version: 1.0.0\ndescription: Hello world demo\nexecutor: ryeos/core/runtimes/python/script\nparameters: {type: object, additionalProperties: true}\nconfig: {code_path: '{project_path}/.ai/tools/hello/hello.py', code_dir: '{project_path}/.ai/tools/hello'}\n"
        )
    );
    let sealed: Vec<(String, String)> = warnings(entry(
        &report,
        ".ai/tools/ryeos/core/runtimes/python/function.yaml",
    ))
    .into_iter()
    .filter(|w| w.0 == "IMP-sealed")
    .map(|w| (w.0, w.1))
    .collect();
    assert_eq!(
        sealed,
        [(
            "IMP-sealed".to_owned(),
            "the program read the tool's code through the RyeOS daemon's sealed hand-off (`RYEOS_VERIFIED_CODE_MAP`, digest-checked); it now reads the code file it is given (`{code_path}`) directly: strata verifies no digests".to_owned()
        )]
    );
    assert_eq!(report["summary"]["imported"], 5);
    assert_eq!(report["summary"]["accepted_by_check"], 5);
    assert_eq!(report["check"]["errors"], 0);

    ran.then(&["run", "hello/hello", "--project", "new"])
        .stdout("hello world\n")
        .status(0)
        .run();
    ran.then(&["run", "example/system/health", "--project", "new"])
        .stdout("{\"message\": \"ok\", \"suffix\": \"campaign\"}\n")
        .status(0)
        .run();
    let out = ran
        .then(&[
            "run",
            "example/function/health",
            "--project",
            "new",
            "--json",
        ])
        .status(0)
        .run();
    assert_eq!(
        out.json()["data"],
        json!({"message": "ok", "project_path_seen": true})
    );
}

// A header that cannot be read, or names no executor, refuses its file; so does a header or
// an `__executor_id__` naming a RyeOS primitive (a primitive runs a `config.command` a code
// file does not have).
#[test]
fn rt_header_without_executor_and_primitive_executors_are_refused() {
    let files = with_sealed_runtimes(vec![
        (
            "tools/a/none.py".into(),
            "# ryeos-tool:\n#   version: \"1.0.0\"\n#   tool_type: python\nprint(1)\n".into(),
        ),
        (
            "tools/a/bad.py".into(),
            "# ryeos-tool:\n#   version: [\nprint(1)\n".into(),
        ),
        (
            "tools/a/at.py".into(),
            "# ryeos-tool:\n#   executor_id: \"@subprocess\"\nprint(1)\n".into(),
        ),
        (
            "tools/rye/core/primitives/subprocess.yaml".into(),
            corpus_text("tools/rye/core/primitives/subprocess.yaml"),
        ),
        (
            "tools/a/prim.py".into(),
            "__executor_id__ = \"rye/core/primitives/subprocess\"\nCONFIG_SCHEMA = {\"type\": \"object\", \"properties\": {\"command\": {\"type\": \"string\"}}}\n".into(),
        ),
    ]);
    let (ran, report) = import(tree(&files), 3);
    assert_invariants(&ran, &report);
    assert_refused(
        &report,
        ".ai/tools/a/none.py",
        "IMP-code-executor",
        "the `# ryeos-tool:` header (line 1) names no `executor_id` (RyeOS requires one): nothing can run this file",
    );
    let bad = entry(&report, ".ai/tools/a/bad.py");
    assert_eq!(bad["reason"]["code"], "IMP-code-header");
    assert!(bad["reason"]["message"]
        .as_str()
        .unwrap()
        .starts_with("the `# ryeos-tool:` header (line 1) cannot be read: "));
    assert_refused(
        &report,
        ".ai/tools/a/at.py",
        "IMP-code-executor",
        "`executor_id: \"@subprocess\"` of the `# ryeos-tool:` header names a RyeOS primitive, which runs a `config.command` a code file does not have (RyeOS runs code files through a runtime): nothing can run this file",
    );
    assert_refused(
        &report,
        ".ai/tools/a/prim.py",
        "IMP-code-executor",
        "`__executor_id__ = \"rye/core/primitives/subprocess\"` names a RyeOS primitive, which runs a `config.command` a code file does not have (RyeOS runs code files through a runtime): nothing can run this file",
    );
    assert_eq!(report["check"]["errors"], 0);
}

// RyeOS's core bundle keeps `verbs/list.yaml` beside the `verbs/list.py` it runs (`python3
// ${tool_path}`): the YAML defines the item and runs that code file; the `.py` is reported
// for what it is (shadowed, kept under `.ai/`), never `imported` with nothing written.
#[test]
fn ic_a_yaml_beside_its_code_file_defines_the_item_and_runs_it() {
    let (ran, report) = import(tree(&era("rust-core")), 3);
    assert_invariants(&ran, &report);
    assert_refused(
        &report,
        ".ai/tools/ryeos/core/verbs/list.py",
        "IMP-shadowed",
        "`.ai/tools/ryeos/core/verbs/list.yaml` defines the item `ryeos/core/verbs/list`: a YAML definition beside a code file is the item RyeOS ran (its `{tool_path}` is this file), so this file is kept under `.ai/` as its code",
    );
    let e = entry(&report, ".ai/tools/ryeos/core/verbs/list.yaml");
    assert_eq!(e["outcome"], "imported");
    assert!(rewrites(e).contains(
        &"{tool_path} is the code file beside: .ai/tools/ryeos/core/verbs/list.py".to_owned()
    ));
    assert_eq!(
        report["summary"],
        json!({"files": 2, "imported": 1, "refused": 1, "accepted_by_check": 1, "warnings": 0, "kept": 0, "spaces": 0})
    );
    let out = ran
        .then(&["run", "ryeos/core/verbs/list", "--project", "new", "--json"])
        .status(0)
        .run();
    assert_eq!(
        out.json()["data"],
        json!({"verbs": [], "total_verbs": 0, "total_aliases": 0})
    );
}

// Two code files of one id: the first in RyeOS's order defines it. A file every write of
// which an earlier file took is refused (`IMP-conflict`), not counted `imported`.
#[test]
fn ic_two_files_of_one_id_and_a_file_with_nothing_written_are_not_imported() {
    let files = vec![
        (
            "tools/t/d.py".to_owned(),
            "# ryeos-tool:\n#   executor_id: \"tool:ryeos/core/runtimes/python/script\"\nprint('py')\n".to_owned(),
        ),
        (
            "tools/t/d.ts".to_owned(),
            "export const __executor_id__ = \"ryeos/core/runtimes/python/script\";\n".to_owned(),
        ),
        (
            "tools/t/rust.ts".to_owned(),
            "const __executor_id__ = \"tool:ryeos/core/runtimes/python/script\";\n".to_owned(),
        ),
        (
            "tools/graphs/g.yaml".to_owned(),
            "tool_type: graph\nconfig:\n  start: a\n  nodes:\n    a:\n      action: {primary: execute, item_id: \"directive:x\"}\n      next: b\n    b: {type: return}\n".to_owned(),
        ),
        (
            "tools/ryeos-unmapped/directive/x.yaml".to_owned(),
            "executor_id: \"@subprocess\"\nconfig: {command: echo}\n".to_owned(),
        ),
    ];
    let (ran, report) = import(tree(&with_sealed_runtimes(files)), 3);
    assert_invariants(&ran, &report);
    assert_refused(
        &report,
        ".ai/tools/t/d.ts",
        "IMP-shadowed",
        "`.ai/tools/t/d.py` defines the item `t/d`: RyeOS resolves one file per id, the first it finds: this file is kept under `.ai/` only",
    );
    assert_refused(
        &report,
        ".ai/tools/ryeos-unmapped/directive/x.yaml",
        "IMP-conflict",
        "nothing of this file is written: `tools/ryeos-unmapped/directive/x.yaml` is also written, differently, by an earlier file: this file's version is not written",
    );
    // The Rust era's dunder form names its runtime with the kind prefix.
    assert_eq!(
        yaml(&ran, "tools/t/rust.yaml")["executor"],
        "ryeos/core/runtimes/python/script"
    );
    assert_eq!(report["summary"]["imported"], 5);
    assert_eq!(report["summary"]["accepted_by_check"], 5);
    ran.then(&["run", "t/d", "--project", "new"])
        .stdout("py\n")
        .status(0)
        .run();
}

// A graph run by another graph is known by what it is, not by where it lives.
#[test]
fn ng_a_nested_graph_outside_graphs_runs_through_its_wrapper() {
    let inner = "tool_type: graph\nversion: \"1.0.0\"\nexecutor_id: rye/core/runtimes/state-graph/runtime\nconfig:\n  start: a\n  nodes:\n    a: {type: return}\n";
    let outer = "tool_type: graph\nversion: \"1.0.0\"\nexecutor_id: rye/core/runtimes/state-graph/runtime\nconfig:\n  start: a\n  nodes:\n    a:\n      action: {primary: execute, item_id: \"tool:g/inner\"}\n      next: b\n    b: {type: return}\n";
    let (ran, report) = import(
        ryeos(&[
            ("tools/g/inner.yaml", inner),
            ("tools/flows/outer.yaml", outer),
        ]),
        0,
    );
    assert_invariants(&ran, &report);
    let e = entry(&report, ".ai/tools/flows/outer.yaml");
    assert_eq!(
        e["written"],
        json!(["tools/flows/outer.yaml", "tools/ryeos-nested/g/inner.yaml"])
    );
    assert_eq!(codes(e), ["IMP-G-nested"]);
    assert_eq!(report["check"]["errors"], 0);
    // It walks: the wrapper runs the inner graph with this very binary.
    let walked = ran
        .then(&["run", "flows/outer", "--project", "new"])
        .env("STRATA_BIN", env!("CARGO_BIN_EXE_strata"))
        .status(0)
        .run();
    assert!(
        walked.stderr.contains("completed after"),
        "{}",
        walked.stderr
    );
}

// The intermediate era (v0.4 bundles): `{interpreter}` in brace form and
// `env_config.env_paths` on the Python runtimes, code tools on
// `ryeos/core/runtimes/python/function` importing a sibling module.
#[test]
fn old_intermediate_runtimes_keep_their_interpreter_and_paths_and_run() {
    let (ran, report) = import(tree(&era("intermediate")), 0);
    assert_invariants(&ran, &report);
    let e = entry(
        &report,
        ".ai/tools/ryeos/core/runtimes/python/function.yaml",
    );
    let r = rewrites(e);
    for expected in [
        "{interpreter} → ${RYE_PYTHON}",
        "env_config.env_paths → config.env.PYTHONPATH (prepended)",
    ] {
        assert!(r.contains(&expected.to_owned()), "{r:#?}");
    }
    let t = yaml(&ran, "tools/ryeos/core/runtimes/python/function.yaml");
    assert_eq!(t["config"]["command"], "${RYE_PYTHON}");
    assert_eq!(
        t["env_config"]["env"]["PROJECT_VENV_PYTHON"],
        "${RYE_PYTHON}"
    );
    assert_eq!(
        t["config"]["env"]["PYTHONPATH"],
        "{code_dir}:{runtime_dir}/lib:${PYTHONPATH:-}"
    );
    assert_eq!(report["check"]["errors"], 0);
    assert_eq!(report["summary"]["accepted_by_check"], 5);
    let out = ran
        .then(&[
            "run",
            "test/anchor_demo/anchor_demo",
            "--project",
            "new",
            "-p",
            "name=Ann",
            "--json",
        ])
        .status(0)
        .run();
    assert_eq!(out.json()["data"]["greeting"], "Hey Ann, nice to see you!");
}

// The early era's `interpreter.type: node_modules` was RyeOS's search for `node` in the
// search paths (default `node_modules/.bin`) under the project: strata's `local_binary`.
// An interpreter type strata has no equivalent for refuses its file; so does a
// `kind: streaming_tool` (a bundle binary speaking RyeOS's framed protocol).
#[test]
fn old_interpreter_types_and_streaming_tools_are_converted_or_refused() {
    let mut files = era("early");
    files.push((
        "tools/rye/core/runtimes/nvm.yaml".into(),
        "tool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\nenv_config:\n  interpreter:\n    type: version_manager\n    var: RYE_NODE\nconfig: {command: \"${RYE_NODE}\"}\n".into(),
    ));
    files.push((
        "tools/st/frames.yaml".into(),
        "kind: streaming_tool\nexecutor_id: ryeos-frames\ndescription: frames\n".into(),
    ));
    let (ran, report) = import(tree(&files), 3);
    assert_invariants(&ran, &report);
    let e = entry(&report, ".ai/tools/rye/core/runtimes/node_runtime.yaml");
    assert_eq!(e["outcome"], "imported");
    assert_eq!(e["warnings"], json!([]));
    assert!(rewrites(e).contains(&"env_config.interpreter.type: node_modules → local_binary with candidates: [node] (what RyeOS searched its search_paths for)".to_owned()));
    assert_eq!(
        yaml(&ran, "tools/rye/core/runtimes/node_runtime.yaml")["env_config"]["interpreter"],
        yaml_of("{type: local_binary, var: RYE_NODE, fallback: node, candidates: [node], search_paths: [node_modules/.bin]}")
    );
    assert_refused(
        &report,
        ".ai/tools/rye/core/runtimes/nvm.yaml",
        "IMP-interpreter",
        "interpreter `type: version_manager` has no strata equivalent (strata resolves venv_python, local_binary, system_binary, command)",
    );
    assert_refused(
        &report,
        ".ai/tools/st/frames.yaml",
        "IMP-streaming",
        "`kind: streaming_tool`: a RyeOS bundle binary speaking the daemon's framed streaming protocol (length-prefixed JSON frames on stdout); strata has no such protocol",
    );
    assert_eq!(report["check"]["errors"], 0);
    ran.then(&[
        "run",
        "rye/core/runtimes/node_runtime",
        "--project",
        "new",
        "--dry-run",
    ])
    .status(0)
    .run();
}

// The Rust era's daemon items (`kind: service`, `handler`, `node`…) are copied under `.ai/`
// and said so in the report's notices.
#[test]
fn kept_daemon_items_are_noticed() {
    let (ran, report) = import(
        ryeos(&[
            ("services/a.yaml", "kind: service\nendpoint: a\n"),
            ("services/b.yaml", "kind: service\nendpoint: b\n"),
            ("handlers/h.yaml", "kind: handler\n"),
            (
                "tools/t.yaml",
                "executor_id: \"@subprocess\"\nconfig: {command: echo}\n",
            ),
            ("knowledge/k.md", "# k\n"),
        ]),
        0,
    );
    assert_invariants(&ran, &report);
    let notice = "3 RyeOS daemon files (`kind: handler` ×1, `kind: service` ×2) are copied under .ai/ only, not imported: strata has no equivalent (see `kept` in the report)";
    assert_eq!(
        report["notices"],
        json!([{"code": "IMP-kept", "message": notice}])
    );
    assert!(
        ran.stderr.contains(&format!("note[IMP-kept]: {notice}\n")),
        "{}",
        ran.stderr
    );
    assert_eq!(
        report["kept"],
        json!([
            ".ai/handlers/h.yaml",
            ".ai/knowledge/k.md",
            ".ai/services/a.yaml",
            ".ai/services/b.yaml"
        ])
    );
}

// HEAD prose about templates (`${inputs.*}`) and RyeOS's own escape (`$${input:y}`) render
// as the literal text RyeOS showed, and the check finds nothing to reject.
#[test]
fn hd_escapes_render_as_ryeos_showed_them() {
    let body = "---\nname: esc\nversion: \"1.0.0\"\ndescription: d\ninputs:\n  - name: x\n    type: string\n---\n\nUse ${inputs.*} here. Escaped: $${input:y}, $${inputs.x} and ${input:z}; x is ${inputs.x}.\n";
    let (ran, report) = import(ryeos(&[("directives/esc.md", body)]), 0);
    assert_invariants(&ran, &report);
    assert_eq!(report["check"]["errors"], 0);
    assert_eq!(
        codes(entry(&report, ".ai/directives/esc.md")),
        ["IMP-D-expr", "IMP-D-expr"]
    );
    let out = ran
        .then(&[
            "run",
            "directives/esc.md",
            "--project",
            "new",
            "--dry-run",
            "--input",
            "x=V",
        ])
        .status(0)
        .run();
    assert!(
        out.stdout.contains(
            "Use ${inputs.*} here. Escaped: ${input:y}, ${inputs.x} and ${input:z}; x is V.\n"
        ),
        "{}",
        out.stdout
    );
}

/// What every import promises, checked on one: the counts are honest (an item is `imported`
/// only when something was written for it, `accepted_by_check` only when the check found no
/// error in it), a check error lies only in a file the import warned about, and every item
/// imported runs: tools and code wrappers dry-run (a RyeOS bundle binary that is not installed
/// excepted, which `IMP-bin` announced), directives dry-run with their required inputs, graphs
/// load (`strata graph`).
pub(super) fn assert_invariants(ran: &Ran, report: &serde_json::Value) {
    assert_honest(report);
    assert_runs(ran, report);
}

/// The report's half of [`assert_invariants`]: honest counts, no check error unannounced.
pub(super) fn assert_honest(report: &serde_json::Value) {
    let files = report["files"].as_array().expect("files");
    let of = |outcome: &str| files.iter().filter(|f| f["outcome"] == outcome).count();
    assert_eq!(report["summary"]["imported"], of("imported"));
    assert_eq!(report["summary"]["refused"], of("refused"));
    let mut accepted = 0;
    for f in files.iter().filter(|f| f["outcome"] == "imported") {
        let source = f["source"].as_str().unwrap();
        assert!(
            !f["written"].as_array().unwrap().is_empty(),
            "{source} is imported with nothing written"
        );
        match f.get("check_errors").and_then(serde_json::Value::as_u64) {
            None | Some(0) => accepted += 1,
            Some(n) => assert!(
                !f["warnings"].as_array().unwrap().is_empty(),
                "{source}: {n} check errors no import code announced"
            ),
        }
    }
    assert_eq!(report["summary"]["accepted_by_check"], accepted);
    // Every check error is in a file some imported item wrote.
    for d in report["check"]["diagnostics"].as_array().unwrap() {
        if d["severity"] == "error" {
            let file = d["file"].as_str().unwrap_or("");
            assert!(
                files.iter().any(
                    |f| f["written"].as_array().unwrap().iter().any(|w| w == file)
                        && !f["warnings"].as_array().unwrap().is_empty()
                ),
                "an error no import code announced: {d:#}"
            );
        }
    }
}

/// The running half of [`assert_invariants`].
fn assert_runs(ran: &Ran, report: &serde_json::Value) {
    let files = report["files"].as_array().expect("files");
    for f in files.iter().filter(|f| f["outcome"] == "imported") {
        let path = f["written"][0].as_str().unwrap();
        let kind = f["kind"].as_str().unwrap();
        let out = match kind {
            "tool" | "code" if !path.contains("/runtimes/") => {
                let id = &path["tools/".len()..path.len() - ".yaml".len()];
                let params = super::required_params(&yaml(ran, path)["parameters"]);
                ran.then(&[
                    "run",
                    id,
                    "--project",
                    "new",
                    "--dry-run",
                    "--params-json",
                    &params.to_string(),
                ])
                .any_status()
                .run()
            }
            "directive" => {
                let text = ran.read(&format!("new/{path}"));
                let front = text.split("---\n").nth(1).unwrap_or("");
                let mut args: Vec<String> = ["run", path, "--project", "new", "--dry-run"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                for input in yaml_of(front)["inputs"].as_array().into_iter().flatten() {
                    if input["required"] == true {
                        args.push("--input".into());
                        args.push(format!("{}=x", input["name"].as_str().unwrap()));
                    }
                }
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                ran.then(&args).any_status().run()
            }
            "graph" => {
                let id = &path["tools/".len()..path.len() - ".yaml".len()];
                ran.then(&["graph", id, "--project", "new"])
                    .any_status()
                    .run()
            }
            _ => continue,
        };
        let bin = f["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "IMP-bin");
        match out.code {
            Some(0) => {}
            Some(2) if bin && out.stderr.contains("not found on PATH") => {}
            _ => panic!("{path} ({kind}) does not run: {}", out.stderr),
        }
    }
}

// Every era fixture keeps the import's promises.
#[test]
fn every_era_fixture_keeps_the_import_invariants() {
    for name in ["early", "intermediate", "rust-core", "rust-daemon"] {
        let mut files = era(name);
        if name == "rust-daemon" {
            files = with_sealed_runtimes(files);
        }
        let ran = tree(&files)
            .args(&["import", "ryeos", "ryeos", "new", "--json"])
            .any_status()
            .run();
        let report: serde_json::Value = serde_json::from_str(&ran.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", ran.stderr));
        assert_invariants(&ran, &report);
    }
}

// A runtime reading a key RyeOS's executor computed (`{server_config_path}` of the MCP
// runtimes), imported without the tools that set it, says so: the check's R001 is announced.
#[test]
fn ck_a_key_the_ryeos_executor_supplied_is_announced() {
    let rel = "tools/rye/core/runtimes/mcp/http.yaml";
    let (ran, report) = import(ryeos(&[(rel, &corpus_text(rel))]), 3);
    assert_invariants(&ran, &report);
    let e = entry(&report, ".ai/tools/rye/core/runtimes/mcp/http.yaml");
    assert_eq!(e["check_errors"], 1);
    assert!(warnings(e).contains(&(
        "IMP-caller-key".to_owned(),
        "`{server_config_path}` is no parameter, config key or runtime parameter of this file: RyeOS's executor supplied it; strata takes it from the `config` of the tool that runs on this one (`strata check` reports R001 while none sets it)".to_owned(),
        22,
        8
    )));
}
