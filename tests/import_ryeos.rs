//! End-to-end tests of `strata import ryeos` (docs/import.md, ../shared MAPPING.md): the
//! driver's rules (§1: the target, links leaving the tree, spaces, determinism, messages, exit
//! codes), every row of the tool table (§2) and of the code-tool table (§5), and the whole
//! RyeOS corpus of tests/fixtures/ryeos (§10: outcome counts, `strata check` clean, every
//! imported tool dry-running).

mod common;
use common::{Ran, Test};

#[path = "import_ryeos/hardening.rs"]
mod hardening;

#[path = "import_ryeos/eras.rs"]
mod eras;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The vendored RyeOS corpus.
fn corpus() -> PathBuf {
    common::repo().join("tests/fixtures/ryeos/corpus")
}

/// Where each corpus directory lived under RyeOS's `.ai/`.
const LAYOUT: [(&str, &str); 5] = [
    ("tools", "tools"),
    ("directives", "directives"),
    ("code", "tools"),
    ("hooks", "config/agent"),
    ("runtimes", "runtimes"),
];

/// Every corpus file as `(path under .ai/, path in the corpus)`, both eras, sorted.
fn corpus_files() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for era in ["py", "head"] {
        for (from, to) in LAYOUT {
            let dir = corpus().join(era).join(from);
            if dir.is_dir() {
                collect(&dir, &dir, to, &mut out);
            }
        }
    }
    out.sort();
    out
}

fn collect(root: &Path, dir: &Path, to: &str, out: &mut Vec<(String, PathBuf)>) {
    for e in std::fs::read_dir(dir).expect("a directory").flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(root, &p, to, out);
        } else {
            let rel = p
                .strip_prefix(root)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            out.push((format!("{to}/{rel}"), p));
        }
    }
}

/// A corpus file's text by its path under `.ai/`.
fn corpus_text(ai_rel: &str) -> String {
    let (_, path) = corpus_files()
        .into_iter()
        .find(|(rel, _)| rel == ai_rel)
        .unwrap_or_else(|| panic!("{ai_rel} is not in the corpus"));
    std::fs::read_to_string(path).expect("utf-8")
}

/// A scratch project holding `ryeos/.ai/<rel>` for each file.
fn ryeos(files: &[(&str, &str)]) -> Test {
    files.iter().fold(Test::new(), |t, (rel, text)| {
        t.file(&format!("ryeos/.ai/{rel}"), text)
    })
}

/// Imports `ryeos/` into `new/` with `--json`, expecting `status`.
fn import(t: Test, status: i32) -> (Ran, Value) {
    let ran = t
        .args(&["import", "ryeos", "ryeos", "new", "--json"])
        .status(status)
        .run();
    let report: Value = serde_json::from_str(&ran.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", ran.stdout, ran.stderr));
    (ran, report)
}

/// The report's entry of one RyeOS file.
fn entry<'a>(report: &'a Value, source: &str) -> &'a Value {
    report["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["source"] == source)
        .unwrap_or_else(|| panic!("no entry for {source} in {report:#}"))
}

/// The warnings of an entry as `(code, message, line, column)`.
fn warnings(e: &Value) -> Vec<(String, String, u64, u64)> {
    e["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| {
            (
                w["code"].as_str().unwrap().to_owned(),
                w["message"].as_str().unwrap().to_owned(),
                w["line"].as_u64().unwrap(),
                w["column"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn codes(e: &Value) -> Vec<String> {
    warnings(e).into_iter().map(|w| w.0).collect()
}

fn rewrites(e: &Value) -> Vec<String> {
    e["rewrites"]
        .as_array()
        .expect("rewrites")
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect()
}

/// A written file of the new project, parsed.
fn yaml(ran: &Ran, rel: &str) -> Value {
    let text = ran.read(&format!("new/{rel}"));
    assert!(!text.is_empty(), "new/{rel} was not written");
    parse_yaml(rel, &text)
}

fn yaml_of(text: &str) -> Value {
    parse_yaml("expected", text)
}

/// `text` (named `name` in a failure) read with strata's YAML reader.
fn parse_yaml(name: &str, text: &str) -> Value {
    strata_doc::Document::yaml_value(text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
}

/// The Python-era function runtime, as RyeOS shipped it (signature comments dropped).
fn py_function_runtime() -> String {
    corpus_text("tools/rye/core/runtimes/python/function.yaml")
}

fn assert_refused(report: &Value, source: &str, code: &str, message: &str) {
    let e = entry(report, source);
    assert_eq!(e["outcome"], "refused", "{e:#}");
    assert_eq!(e["written"], json!([]), "{e:#}");
    assert_eq!(
        e["reason"],
        json!({"code": code, "message": message}),
        "{e:#}"
    );
}

// ---------------------------------------------------------------------------------------
// §1 — the command

#[test]
fn a_non_empty_target_is_refused_and_nothing_is_written() {
    let ran = ryeos(&[(
        "tools/t.yaml",
        "executor_id: \"@subprocess\"\nconfig: {command: echo}\n",
    )])
    .file("new/keep.txt", "mine")
    .args(&["import", "ryeos", "ryeos", "new"])
    .status(2)
    .run();
    assert!(
        ran.stderr.starts_with("error[import]: new is not empty\n"),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains("give a new or empty directory"),
        "{}",
        ran.stderr
    );
    assert_eq!(ran.read("new/keep.txt"), "mine");
    assert!(!ran.path().join("new/tools").exists());
}

#[test]
fn a_source_without_ai_cannot_run() {
    let ran = Test::new()
        .file("ryeos/readme", "x")
        .args(&["import", "ryeos", "ryeos", "new"])
        .status(2)
        .run();
    assert!(
        ran.stderr
            .starts_with("error[import]: the RyeOS project `ryeos` has no .ai/ directory\n"),
        "{}",
        ran.stderr
    );
    assert!(!ran.path().join("new").exists());
}

#[test]
fn an_empty_target_is_fine_and_a_clean_import_exits_0() {
    let t = ryeos(&[(
        "tools/hello.yaml",
        "# rye:signed:2026:abc\nexecutor_id: \"@subprocess\"\ndescription: hi\nconfig:\n  command: echo\n  args: [hello]\n",
    )]);
    std::fs::create_dir_all(t.path().join("new")).expect("mkdir");
    let ran = t.args(&["import", "ryeos", "ryeos", "new"]).status(0).run();
    assert_eq!(ran.stdout, "");
    assert_eq!(
        ran.stderr,
        "note[IMP-signature]: 1 signature comments (`# rye:signed:…`, `<!-- ryeos:signed:… -->`) dropped: strata does not verify RyeOS signatures\n\
         imported 1 of 1 RyeOS files (0 refused, 0 warnings); strata check: 0 errors, 0 warnings (IMPORT-REPORT.md has the details)\n"
    );
    // The new project: the primitive `strata init` writes, the tool, the verbatim `.ai/`,
    // the two reports.
    assert_eq!(
        ran.read("new/tools/runtimes/subprocess.yaml"),
        std::fs::read_to_string(common::repo().join("tools/runtimes/subprocess.yaml")).unwrap()
    );
    assert_eq!(
        ran.read("new/.ai/tools/hello.yaml"),
        ran.read("ryeos/.ai/tools/hello.yaml")
    );
    assert_eq!(
        ran.read("new/tools/hello.yaml"),
        "# Imported from RyeOS `.ai/tools/hello.yaml` by `strata import ryeos` (see IMPORT-REPORT.md).\n\
         description: hi\nexecutor: runtimes/subprocess\nparameters:\n  type: object\n  additionalProperties: true\nconfig:\n  command: echo\n  args:\n  - hello\n"
    );
    let report: Value = serde_json::from_str(&ran.read("new/IMPORT-REPORT.json")).unwrap();
    assert_eq!(
        report["summary"],
        json!({"files": 1, "imported": 1, "refused": 0, "accepted_by_check": 1, "warnings": 0, "kept": 0, "spaces": 0})
    );
    assert_eq!(report["check"]["errors"], 0);
    assert_eq!(report["exit_code"], 0);
    assert!(ran
        .read("new/IMPORT-REPORT.md")
        .starts_with("# RyeOS import report\n"));
    // It runs.
    ran.then(&["run", "hello", "--project", "new"])
        .stdout("hello\n")
        .status(0)
        .run();
}

#[test]
fn json_prints_the_report_that_is_written() {
    let (ran, report) = import(
        ryeos(&[(
            "tools/t.yaml",
            "executor_id: \"@subprocess\"\nconfig: {command: echo}\n",
        )]),
        0,
    );
    let written: Value = serde_json::from_str(&ran.read("new/IMPORT-REPORT.json")).unwrap();
    assert_eq!(report, written);
    let e = entry(&report, ".ai/tools/t.yaml");
    assert_eq!(e["outcome"], "imported");
    assert_eq!(e["era"], "head");
    assert_eq!(e["kind"], "tool");
    assert_eq!(e["written"], json!(["tools/t.yaml"]));
    assert_eq!(e["warnings"], json!([]));
}

#[test]
fn a_link_leaving_the_tree_is_refused_and_never_read() {
    let outside = tempfile::tempdir().expect("tmp");
    std::fs::write(
        outside.path().join("secret.yaml"),
        "executor_id: \"@subprocess\"\nconfig: {command: cat, args: [/etc/shadow]}\n",
    )
    .unwrap();
    std::fs::create_dir_all(outside.path().join("dir")).unwrap();
    std::fs::write(
        outside.path().join("dir/x.yaml"),
        "executor_id: \"@subprocess\"\n",
    )
    .unwrap();
    let t = ryeos(&[(
        "tools/ok.yaml",
        "executor_id: \"@subprocess\"\nconfig: {command: echo}\n",
    )])
    .link(
        "ryeos/.ai/tools/evil.yaml",
        outside.path().join("secret.yaml"),
    )
    .link("ryeos/.ai/tools/evildir", outside.path().join("dir"))
    // A link inside the tree is followed.
    .link("ryeos/.ai/tools/alias.yaml", "ok.yaml");
    let (ran, report) = import(t, 3);
    assert_refused(
        &report,
        ".ai/tools/evil.yaml",
        "IMP-escape",
        "a symbolic link leading outside the RyeOS tree: not read, not copied",
    );
    assert_refused(
        &report,
        ".ai/tools/evildir",
        "IMP-escape",
        "a symbolic link leading outside the RyeOS tree: not read, not copied",
    );
    assert!(!ran.path().join("new/.ai/tools/evil.yaml").exists());
    assert!(!ran.path().join("new/tools/evil.yaml").exists());
    assert!(!ran.path().join("new/.ai/tools/evildir").exists());
    assert_eq!(
        entry(&report, ".ai/tools/alias.yaml")["outcome"],
        "imported"
    );
    assert!(ran
        .stderr
        .contains("refused[IMP-escape]: .ai/tools/evil.yaml: a symbolic link leading outside the RyeOS tree: not read, not copied\n"));
    // A space given by a link is read where it leads; a link out of it is refused too.
    let ran2 = Test::new()
        .file(
            "ryeos/.ai/tools/a.yaml",
            "executor_id: \"@subprocess\"\nconfig: {command: echo}\n",
        )
        .link(
            "space/.ai/tools/out.yaml",
            outside.path().join("secret.yaml"),
        )
        .args(&[
            "import", "ryeos", "ryeos", "new", "--space", "space", "--json",
        ])
        .status(0)
        .run();
    assert!(!ran2.path().join("new/.ai/tools/out.yaml").exists());
}

#[test]
fn the_same_tree_imports_to_the_same_bytes() {
    let mut t = Test::new();
    for (rel, path) in corpus_files() {
        t = t.file(&format!("ryeos/.ai/{rel}"), std::fs::read(path).unwrap());
    }
    let first = t
        .args(&["import", "ryeos", "ryeos", "one", "--json"])
        .status(3)
        .run();
    let second = first
        .then(&["import", "ryeos", "ryeos", "two", "--json"])
        .status(3)
        .run();
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(first.stderr, second.stderr);
    let a = tree(&first.path().join("one"));
    let b = tree(&first.path().join("two"));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (rel, bytes) in &a {
        assert!(b[rel] == *bytes, "{rel} differs between two imports");
    }
    // No machine path leaks into what is written.
    let root = first.path().to_string_lossy().into_owned();
    for (rel, bytes) in &a {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(&root), "{rel} holds {root}");
    }
}

fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    walk(root, root, &mut out);
    out
}

#[test]
fn items_resolve_project_first_then_each_space_in_order() {
    let runtime = py_function_runtime();
    let ran = Test::new()
        .file(
            "ryeos/.ai/tools/my/tool.py",
            "__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/runtimes/python/function\"\n__tool_description__ = \"Mine\"\n\ndef execute(params, project_path):\n    return {\"ok\": True}\n",
        )
        // The project's own copy of a space tool wins over the space's.
        .file("ryeos/.ai/tools/shared.yaml", "executor_id: \"@subprocess\"\ndescription: project\nconfig: {command: echo}\n")
        .file("space1/.ai/tools/shared.yaml", "executor_id: \"@subprocess\"\ndescription: space1\nconfig: {command: echo}\n")
        .file("space1/.ai/tools/rye/core/runtimes/python/function.yaml", &runtime)
        .file("space2/.ai/tools/rye/core/runtimes/python/function.yaml", "executor_id: \"@subprocess\"\ndescription: shadowed\n")
        // Not used by the project: not imported.
        .file("space2/.ai/tools/unused.yaml", "executor_id: \"@subprocess\"\nconfig: {command: echo}\n")
        .args(&["import", "ryeos", "ryeos", "new", "--space", "space1", "--space", "space2", "--json"])
        .status(0)
        .run();
    let report: Value = serde_json::from_str(&ran.stdout).unwrap();
    let sources: Vec<(&str, Option<u64>)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["source"].as_str().unwrap(), f["space"].as_u64()))
        .collect();
    assert_eq!(
        sources,
        [
            (".ai/tools/my/tool.py", None),
            (".ai/tools/shared.yaml", None),
            (".ai/tools/rye/core/runtimes/python/function.yaml", Some(1)),
        ]
    );
    assert_eq!(yaml(&ran, "tools/shared.yaml")["description"], "project");
    assert_eq!(
        yaml(&ran, "tools/rye/core/runtimes/python/function.yaml")["description"],
        "Python function runtime - calls execute(params, project_path) and serializes result to stdout"
    );
    assert_eq!(
        ran.read("new/.ai/tools/rye/core/runtimes/python/function.yaml"),
        runtime
    );
    assert!(!ran.path().join("new/tools/unused.yaml").exists());
    assert!(!ran.path().join("new/.ai/tools/unused.yaml").exists());
    // The code tool runs for real on the runtime imported from the space.
    ran.then(&["run", "my/tool", "--project", "new"])
        .stdout("{\"ok\": true}\n")
        .status(0)
        .run();
}

// What strata's YAML reader refuses (a repeated key, a custom tag, a number that is not
// finite) is refused with the reader's reason and place; a data file it refuses is kept.
#[test]
fn files_strata_cannot_read_are_refused_with_the_reason() {
    let (ran, report) = import(
        ryeos(&[
            (
                "tools/dup.yaml",
                "executor_id: \"@subprocess\"\nconfig: {command: echo}\nconfig: {command: ls}\n",
            ),
            (
                "tools/tagged.yaml",
                "executor_id: \"@subprocess\"\nconfig: !env {command: echo}\n",
            ),
            (
                "tools/inf.yaml",
                "executor_id: \"@subprocess\"\nconfig: {command: echo, timeout: .inf}\n",
            ),
            ("tools/lib/servers.yaml", "servers: !list [a]\n"),
        ]),
        3,
    );
    assert_refused(
        &report,
        ".ai/tools/dup.yaml",
        "IMP-yaml",
        "the file cannot be read: duplicate key `config` at line 3 column 1 (each key may appear once in a map)",
    );
    assert_refused(
        &report,
        ".ai/tools/tagged.yaml",
        "IMP-yaml",
        "the file cannot be read: YAML syntax error: unsupported tag `!env` at line 2 column 14",
    );
    assert_refused(
        &report,
        ".ai/tools/inf.yaml",
        "IMP-yaml",
        "the file cannot be read: `.inf` is not a finite number at line 2 column 34 (numbers must be finite (JSON has no NaN or infinity); quote it to mean text)",
    );
    assert_eq!(report["kept"], json!([".ai/tools/lib/servers.yaml"]));
    assert_eq!(
        ran.read("new/.ai/tools/lib/servers.yaml"),
        "servers: !list [a]\n"
    );
}

#[test]
fn warnings_and_refusals_are_printed_with_their_place() {
    let ran = ryeos(&[
        (
            "tools/b.yaml",
            "executor_id: \"@subprocess\"\nrequired_caps: [x]\nconfig:\n  command: \"bin:ryeos-core-tools\"\n",
        ),
        ("tools/p.yaml", "tool_type: primitive\nexecutor_id: null\n"),
    ])
    .args(&["import", "ryeos", "ryeos", "new"])
    .status(3)
    .run();
    assert_eq!(
        ran.stderr,
        "warning[IMP-permissions]: .ai/tools/b.yaml:2:1: `required_caps` dropped: strata enforces no capabilities\n\
         warning[IMP-bin]: .ai/tools/b.yaml:4:3: `command: bin:ryeos-core-tools` is a signed RyeOS bundle binary; strata looks `ryeos-core-tools` up on the child's PATH (install it there)\n\
         refused[IMP-primitive]: .ai/tools/p.yaml: RyeOS primitive: every chain now ends at strata's `runtimes/subprocess`; `executor_id` references to it are rewritten\n\
         imported 1 of 2 RyeOS files (1 refused, 2 warnings); strata check: 0 errors, 0 warnings (IMPORT-REPORT.md has the details)\n"
    );
}

// ---------------------------------------------------------------------------------------
// §2 — tool files

#[test]
fn t_tool_type_runtime_mcp_and_head_subprocess_are_dropped() {
    let (ran, report) = import(
        ryeos(&[
            ("tools/a.yaml", "tool_type: mcp\nexecutor_id: rye/core/primitives/execute\nconfig: {command: echo}\n"),
            ("tools/b.yaml", "tool_type: \"subprocess\"\nexecutor_id: \"@subprocess\"\nconfig: {command: echo}\n"),
        ]),
        0,
    );
    for id in ["a", "b"] {
        let t = yaml(&ran, &format!("tools/{id}.yaml"));
        assert!(
            t.get("kind").is_none() && t.get("tool_type").is_none(),
            "{t:?}"
        );
    }
    assert_eq!(
        rewrites(entry(&report, ".ai/tools/a.yaml")),
        [
            "tool_type: mcp dropped (kind defaults to tool)",
            "executor_id: rye/core/primitives/execute → executor: runtimes/subprocess",
            "no schema → parameters: {type: object, additionalProperties: true} (RyeOS validated nothing)"
        ]
    );
    assert_eq!(
        rewrites(entry(&report, ".ai/tools/b.yaml"))[0],
        "tool_type: subprocess dropped (kind defaults to tool)"
    );
}

#[test]
fn t_tool_type_graph_becomes_a_graph() {
    let (ran, report) = import(
        ryeos(&[(
            "tools/graphs/g.yaml",
            &corpus_text("tools/graphs/cas-showcase.yaml"),
        )]),
        0,
    );
    let e = entry(&report, ".ai/tools/graphs/g.yaml");
    assert_eq!(e["kind"], "graph");
    assert_eq!(e["outcome"], "imported");
    assert_eq!(yaml(&ran, "tools/graphs/g.yaml")["kind"], "graph");
}

#[test]
fn t_primitive_is_refused_and_references_become_runtimes_subprocess() {
    let prims = ["execute", "subprocess", "http_client"];
    let mut files: Vec<(String, String)> = prims
        .iter()
        .map(|p| {
            let rel = format!("tools/rye/core/primitives/{p}.yaml");
            (rel.clone(), corpus_text(&rel))
        })
        .collect();
    files.push((
        "tools/t.yaml".into(),
        "executor_id: rye/core/primitives/subprocess\nconfig: {command: echo}\n".into(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (ran, report) = import(ryeos(&refs), 3);
    for p in prims {
        assert_refused(
            &report,
            &format!(".ai/tools/rye/core/primitives/{p}.yaml"),
            "IMP-primitive",
            "RyeOS primitive: every chain now ends at strata's `runtimes/subprocess`; `executor_id` references to it are rewritten",
        );
        assert!(!ran
            .path()
            .join(format!("new/tools/rye/core/primitives/{p}.yaml"))
            .exists());
        assert!(ran
            .path()
            .join(format!("new/.ai/tools/rye/core/primitives/{p}.yaml"))
            .exists());
    }
    assert_eq!(
        yaml(&ran, "tools/t.yaml")["executor"],
        "runtimes/subprocess"
    );
}

#[test]
fn t_nonrunnable_kinds_are_refused_and_kept_under_ai() {
    let files = [
        "tools/mcp/servers/context7.yaml",
        "tools/rye/core/extractors/tool/tool_extractor.yaml",
        "tools/rye/email/providers/gmail/gmail.yaml",
    ];
    let texts: Vec<String> = files.iter().map(|f| corpus_text(f)).collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .zip(&texts)
        .map(|(a, b)| (*a, b.as_str()))
        .collect();
    let (ran, report) = import(ryeos(&refs), 3);
    for (f, kind) in files
        .iter()
        .zip(["mcp_server", "extractor", "email_provider"])
    {
        assert_refused(
            &report,
            &format!(".ai/{f}"),
            "IMP-nonrunnable",
            &format!("`tool_type: {kind}` configures RyeOS itself and is not a runnable tool (the file stays under .ai/)"),
        );
        assert_eq!(
            ran.read(&format!("new/.ai/{f}")),
            ran.read(&format!("ryeos/.ai/{f}"))
        );
    }
}

#[test]
fn t_http_providers_are_refused() {
    let rel = "tools/rye/agent/providers/zen/zen.yaml";
    let (_, report) = import(ryeos(&[(rel, &corpus_text(rel))]), 3);
    assert_refused(
        &report,
        ".ai/tools/rye/agent/providers/zen/zen.yaml",
        "IMP-http",
        "HTTP provider `rye/agent/providers/zen/zen` (config.url, method, headers, body, auth, retry): strata runs subprocesses only, it has no HTTP primitive",
    );
}

#[test]
fn t_graph_runtime_is_refused() {
    let rel = "tools/rye/core/runtimes/state-graph/runtime.yaml";
    let (_, report) = import(ryeos(&[(rel, &corpus_text(rel))]), 3);
    assert_refused(
        &report,
        ".ai/tools/rye/core/runtimes/state-graph/runtime.yaml",
        "IMP-graph-runtime",
        "the RyeOS state-graph walker: graphs are `kind: graph` files run by strata's own walker",
    );
}

#[test]
fn t_tool_id_equal_to_the_stem_is_dropped_and_a_different_one_warns() {
    let (ran, report) = import(
        ryeos(&[
            (
                "tools/x/same.yaml",
                "tool_id: same\nexecutor_id: \"@subprocess\"\nconfig: {command: echo}\n",
            ),
            (
                "tools/x/other.yaml",
                "tool_id: elsewhere\nexecutor_id: \"@subprocess\"\nconfig: {command: echo}\n",
            ),
        ]),
        0,
    );
    let same = entry(&report, ".ai/tools/x/same.yaml");
    assert_eq!(same["warnings"], json!([]));
    assert_eq!(rewrites(same)[0], "tool_id: dropped (the id is the path)");
    assert_eq!(
        warnings(entry(&report, ".ai/tools/x/other.yaml")),
        [(
            "IMP-tool_id".into(),
            "`tool_id: elsewhere` differs from the file name: the strata id is the path `x/other`"
                .into(),
            1,
            1
        )]
    );
    assert!(yaml(&ran, "tools/x/other.yaml").get("tool_id").is_none());
}

#[test]
fn t_category_and_head_name_are_dropped() {
    let (ran, report) = import(
        ryeos(&[(
            "tools/core/s.yaml",
            "version: \"1.0.0\"\nexecutor_id: \"@subprocess\"\ncategory: \"core\"\nname: \"s\"\nconfig: {command: echo}\n",
        )]),
        0,
    );
    let t = yaml(&ran, "tools/core/s.yaml");
    assert!(t.get("category").is_none() && t.get("name").is_none());
    let r = rewrites(entry(&report, ".ai/tools/core/s.yaml"));
    assert!(
        r.contains(&"category: dropped (the id is the path `core/s`)".to_owned()),
        "{r:?}"
    );
    assert!(
        r.contains(&"name: dropped (the id is the path `core/s`)".to_owned()),
        "{r:?}"
    );
}

#[test]
fn t_version_becomes_a_string_and_description_is_kept() {
    let (ran, _) = import(
        ryeos(&[
            ("tools/a.yaml", "version: 1.0.0\ndescription: 'A tool'\nexecutor_id: \"@subprocess\"\nconfig: {command: echo}\n"),
            ("tools/b.yaml", "version: 2\ndescription: B\nexecutor_id: \"@subprocess\"\nconfig: {command: echo}\n"),
        ]),
        0,
    );
    assert_eq!(yaml(&ran, "tools/a.yaml")["version"], "1.0.0");
    assert_eq!(yaml(&ran, "tools/a.yaml")["description"], "A tool");
    assert_eq!(yaml(&ran, "tools/b.yaml")["version"], "2");
    assert!(ran.read("new/tools/b.yaml").contains("version: '2'\n"));
}

#[test]
fn t_executor_id_runtime_names_the_imported_runtime_or_warns_when_missing() {
    let (ran, report) = import(
        ryeos(&[
            ("tools/rye/core/runtimes/bash/bash.yaml", &corpus_text("tools/rye/core/runtimes/bash/bash.yaml")),
            ("tools/on_bash.yaml", "tool_type: mcp\nexecutor_id: rye/core/runtimes/bash/bash\nconfig: {cmd: ls}\n"),
            ("tools/lost.yaml", "tool_type: mcp\nexecutor_id: rye/core/runtimes/gone/gone\nconfig: {command: echo}\n"),
        ]),
        3,
    );
    assert_eq!(
        yaml(&ran, "tools/on_bash.yaml")["executor"],
        "rye/core/runtimes/bash/bash"
    );
    assert_eq!(
        codes(entry(&report, ".ai/tools/on_bash.yaml")),
        Vec::<String>::new()
    );
    assert_eq!(
        warnings(entry(&report, ".ai/tools/lost.yaml")),
        [(
            "IMP-executor-missing".into(),
            "executor `rye/core/runtimes/gone/gone` is in no space (the project or a --space): the chain stays broken until a tool with that id exists".into(),
            2,
            1
        )]
    );
    assert_eq!(
        yaml(&ran, "tools/lost.yaml")["executor"],
        "rye/core/runtimes/gone/gone"
    );
    // `strata check` reports the broken chain: counted against the file, exit code 3.
    assert_eq!(entry(&report, ".ai/tools/lost.yaml")["check_errors"], 1);
    assert_eq!(report["summary"]["accepted_by_check"], 2);
}

#[test]
fn t_executor_id_primitives_and_head_subprocess_become_runtimes_subprocess() {
    let (ran, report) = import(
        ryeos(&[
            (
                "tools/a.yaml",
                "executor_id: rye/core/primitives/execute\nconfig: {command: echo}\n",
            ),
            (
                "tools/b.yaml",
                "executor_id: rye/core/primitives/subprocess\nconfig: {command: echo}\n",
            ),
            (
                "tools/c.yaml",
                "executor_id: \"@subprocess\"\nconfig: {command: echo}\n",
            ),
        ]),
        0,
    );
    for (id, from) in [
        ("a", "rye/core/primitives/execute"),
        ("b", "rye/core/primitives/subprocess"),
        ("c", "@subprocess"),
    ] {
        assert_eq!(
            yaml(&ran, &format!("tools/{id}.yaml"))["executor"],
            "runtimes/subprocess"
        );
        assert!(
            rewrites(entry(&report, &format!(".ai/tools/{id}.yaml"))).contains(&format!(
                "executor_id: {from} → executor: runtimes/subprocess"
            ))
        );
    }
}

#[test]
fn t_executor_id_null_is_refused() {
    let (_, report) = import(
        ryeos(&[(
            "tools/n.yaml",
            "executor_id: null\ndescription: nothing runs\n",
        )]),
        3,
    );
    assert_refused(
        &report,
        ".ai/tools/n.yaml",
        "IMP-nonrunnable",
        "`executor_id: null`: the file configures RyeOS itself and is not a runnable tool",
    );
}

#[test]
fn ht_terminal_executors_and_method_dispatch_are_refused() {
    let files = [
        "tools/ryeos/core/subprocess/execute.yaml",
        "tools/ryeos/core/method-dispatch/execute.yaml",
        "tools/ryeos/knowledge/compose.yaml",
    ];
    let texts: Vec<String> = files.iter().map(|f| corpus_text(f)).collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .zip(&texts)
        .map(|(a, b)| (*a, b.as_str()))
        .collect();
    let (_, report) = import(ryeos(&refs), 3);
    assert_refused(
        &report,
        ".ai/tools/ryeos/core/subprocess/execute.yaml",
        "IMP-terminal",
        "terminal executor `subprocess` (executor_id: null) is RyeOS's own dispatch and has no strata equivalent",
    );
    assert_refused(
        &report,
        ".ai/tools/ryeos/core/method-dispatch/execute.yaml",
        "IMP-terminal",
        "terminal executor `method_dispatch` (executor_id: null) is RyeOS's own dispatch and has no strata equivalent",
    );
    assert_refused(
        &report,
        ".ai/tools/ryeos/knowledge/compose.yaml",
        "IMP-executor",
        "executor `@method_dispatch` has no strata equivalent (method dispatch into the RyeOS daemon)",
    );
}

#[test]
fn t_config_schema_and_input_schema_become_parameters_and_extra_keywords_are_handled() {
    let (ran, report) = import(
        ryeos(&[
            (
                "tools/s.yaml",
                "executor_id: \"@subprocess\"\nconfig: {command: echo}\nconfig_schema:\n  type: object\n  properties:\n    item_ref:\n      type: string\n      pattern: \"^directive:\"\n      minLength: 1\n    n: {type: integer, minimum: 1, maximum: 5, default: 2}\n  required: [item_ref]\n",
            ),
            (
                "tools/i.yaml",
                "tool_type: mcp\nexecutor_id: rye/core/primitives/execute\nconfig: {command: echo}\ninput_schema:\n  type: object\n  properties:\n    q: {type: string, description: the query}\n  required: [q]\n  additionalProperties: false\n  $schema: http://json-schema.org/draft-07/schema#\n",
            ),
        ]),
        0,
    );
    assert_eq!(
        yaml(&ran, "tools/s.yaml")["parameters"],
        yaml_of("type: object\nproperties:\n  item_ref: {type: string, minLength: 1}\n  n: {type: integer, minimum: 1, maximum: 5, default: 2}\nrequired: [item_ref]\n")
    );
    assert_eq!(
        warnings(entry(&report, ".ai/tools/s.yaml")),
        [(
            "IMP-schema-keyword".into(),
            "schema keyword `pattern` at parameters.properties.item_ref dropped: strata's parameters have no such keyword, the constraint is lost".into(),
            8,
            7
        )]
    );
    assert_eq!(
        yaml(&ran, "tools/i.yaml")["parameters"],
        yaml_of("type: object\nproperties:\n  q: {type: string, description: the query}\nrequired: [q]\nadditionalProperties: false\n")
    );
    let e = entry(&report, ".ai/tools/i.yaml");
    assert_eq!(e["warnings"], json!([]));
    assert!(rewrites(e).contains(&"$schema dropped from the parameters".to_owned()));
    ran.then(&["run", "i", "--project", "new", "-p", "q=x", "-p", "z=1"])
        .status(2)
        .run();
}

#[test]
fn t_interpreters_keep_their_fields_binary_becomes_a_candidate_and_search_roots_warn() {
    let (ran, report) = import(
        ryeos(&[
            (
                "tools/rye/core/runtimes/python/function.yaml",
                &py_function_runtime(),
            ),
            (
                "tools/rye/core/runtimes/node/node.yaml",
                &corpus_text("tools/rye/core/runtimes/node/node.yaml"),
            ),
        ]),
        0,
    );
    assert_eq!(
        yaml(&ran, "tools/rye/core/runtimes/python/function.yaml")["env_config"],
        yaml_of("interpreter:\n  type: local_binary\n  var: RYE_PYTHON\n  fallback: python3\n  candidates: [python, python3]\n  search_paths: [.venv/bin, .venv/Scripts]\nenv:\n  PYTHONUNBUFFERED: '1'\n  PROJECT_VENV_PYTHON: ${RYE_PYTHON}\n")
    );
    assert_eq!(
        yaml(&ran, "tools/rye/core/runtimes/node/node.yaml")["env_config"]["interpreter"],
        yaml_of("type: local_binary\nvar: RYE_NODE\nfallback: node\ncandidates: [tsx]\nsearch_paths: ['{code_dir}/node_modules/.bin', node_modules/.bin]\n")
    );
    let node = warnings(entry(&report, ".ai/tools/rye/core/runtimes/node/node.yaml"));
    assert_eq!(
        node[0],
        (
            "IMP-anchor".into(),
            "interpreter `search_roots: [{anchor_path}]` approximated: its search paths are also tried under `{code_dir}` (the code file's directory; RyeOS searched upward for marker files)".into(),
            14,
            5
        )
    );
}

#[test]
fn ht_path_candidates_become_the_fallback_and_interpreter_references_its_var() {
    let rel = "tools/ryeos/core/runtimes/python/function.yaml";
    let (ran, report) = import(ryeos(&[(rel, &corpus_text(rel))]), 0);
    let t = yaml(&ran, rel);
    assert_eq!(
        t["env_config"],
        yaml_of("interpreter:\n  type: local_binary\n  var: RYE_PYTHON\n  fallback: python3\n  candidates: [python, python3]\n  search_paths: [.venv/bin, .venv/Scripts]\nenv:\n  PYTHONUNBUFFERED: '1'\n  PROJECT_VENV_PYTHON: ${RYE_PYTHON}\n")
    );
    assert_eq!(t["config"]["command"], "${RYE_PYTHON}");
    // HT-rootvars and TPL-literal: the program is kept byte for byte.
    let args = t["config"]["args"].as_array().unwrap();
    assert_eq!(
        args[3]["literal"].as_str().unwrap().lines().next(),
        Some("import os,sys,json,hashlib,types,inspect,asyncio")
    );
    assert_eq!(
        &args[4..],
        &[
            json!("{code_path}"),
            json!("{runtime_dir}/lib"),
            json!("{project_path}")
        ]
    );
    assert_eq!(t["config"]["input_data"], "{params_json}");
    assert_eq!(t["config"]["timeout"], 300);
    assert_eq!(t["config"]["code_path"], "{tool_path}");
    assert_eq!(t["config"]["code_dir"], "{tool_dir}");
    let r = rewrites(entry(
        &report,
        ".ai/tools/ryeos/core/runtimes/python/function.yaml",
    ));
    for expected in [
        "env_config.interpreter.path_candidates: [python3] → fallback: python3",
        "${interpreter} → ${RYE_PYTHON}",
        "config.timeout_secs → config.timeout",
        "${tool_path} → {code_path}",
        "${params_json} → {params_json}",
        "${project_path} → {project_path}",
        "${runtime_dir} → {runtime_dir}",
    ] {
        assert!(r.contains(&expected.to_owned()), "{expected} not in {r:?}");
    }
}

#[test]
fn t_env_config_env_and_layer_e_templates_are_kept() {
    let (ran, report) = import(
        ryeos(&[(
            "tools/e.yaml",
            "tool_type: mcp\nexecutor_id: rye/core/primitives/execute\nenv_config:\n  env:\n    A: \"${HOME}\"\n    B: \"${A:-x}/b\"\nconfig:\n  command: echo\n  args: [\"${B}\", \"${USER:-nobody}\"]\n  timeout: 5\n",
        )]),
        0,
    );
    assert_eq!(entry(&report, ".ai/tools/e.yaml")["warnings"], json!([]));
    let t = yaml(&ran, "tools/e.yaml");
    assert_eq!(
        t["env_config"],
        yaml_of("env:\n  A: ${HOME}\n  B: ${A:-x}/b\n")
    );
    assert_eq!(
        t["config"],
        yaml_of("command: echo\nargs: ['${B}', '${USER:-nobody}']\ntimeout: 5\n")
    );
    let home = common::home_var();
    ran.then(&["run", "e", "--project", "new"])
        .stdout(&format!("{home}/b nobody\n"))
        .status(0)
        .run();
}

#[test]
fn t_config_mcp_keys_stay_authored_parameters_and_runtime_params_become_code_keys() {
    let rel = "tools/mcp/rye-os/execute.yaml";
    let (ran, report) = import(
        ryeos(&[
            (rel, &corpus_text(rel)),
            (
                "tools/rye/core/runtimes/mcp/stdio.yaml",
                &corpus_text("tools/rye/core/runtimes/mcp/stdio.yaml"),
            ),
            (
                "tools/mcp/servers/rye-os.yaml",
                &corpus_text("tools/mcp/servers/rye-os.yaml"),
            ),
        ]),
        3,
    );
    let t = yaml(&ran, rel);
    assert_eq!(t["executor"], "rye/core/runtimes/mcp/stdio");
    assert_eq!(
        t["config"],
        yaml_of("server: mcp/servers/rye-os\nserver_config_path: '{project_path}/.ai/tools/mcp/servers/rye-os.yaml'\ntool_name: execute\ncode_path: '{project_path}/.ai/tools/mcp/rye-os/execute.yaml'\ncode_dir: '{project_path}/.ai/tools/mcp/rye-os'\n")
    );
    assert_eq!(
        entry(&report, ".ai/tools/mcp/rye-os/execute.yaml")["warnings"],
        json!([])
    );
    // TPL-P-space, T-host-var and the key the tool sets, on the runtime.
    let rt = entry(&report, ".ai/tools/rye/core/runtimes/mcp/stdio.yaml");
    assert_eq!(
        warnings(rt)
            .into_iter()
            .filter(|w| w.0 != "IMP-config_resolve")
            .collect::<Vec<_>>(),
        [
            (
                "IMP-host-var".into(),
                "`${RYE_KERNEL_PYTHON}` was set by the RyeOS host; strata reads it from the environment (set it, or `strata check` warns R002)".into(),
                18,
                13
            ),
            (
                "IMP-space".into(),
                "`{system_space}` has no strata equivalent (no RyeOS spaces): it now reads the config key `system_space: \"${RYEOS_SYSTEM_SPACE}\"`; set RYEOS_SYSTEM_SPACE".into(),
                20,
                8
            ),
            (
                "IMP-caller-key".into(),
                "`{server_config_path}` is no parameter, config key or runtime parameter of this file: RyeOS's executor supplied it; strata takes it from the `config` of the tool that runs on this one (`strata check` reports R001 while none sets it)".into(),
                22,
                8
            ),
        ]
    );
    assert_eq!(
        yaml(&ran, "tools/rye/core/runtimes/mcp/stdio.yaml")["config"]["system_space"],
        "${RYEOS_SYSTEM_SPACE}"
    );
    // The whole chain dry-runs with the host's variables set; the server config path is the
    // verbatim copy under `.ai/`.
    let dry = ran
        .then(&[
            "run",
            "mcp/rye-os/execute",
            "--project",
            "new",
            "--dry-run",
            "--json",
            "--params-json",
            r#"{"item_id": "tool:x", "project_path": "."}"#,
        ])
        .env("RYE_KERNEL_PYTHON", "/bin/echo")
        .env("RYEOS_SYSTEM_SPACE", "/opt/rye")
        .status(0)
        .run();
    let spec = dry.json();
    let root = std::fs::canonicalize(ran.path().join("new")).unwrap();
    let root = root.to_string_lossy();
    assert_eq!(
        spec["argv"],
        json!([
            "/bin/echo",
            "/opt/rye/.ai/tools/rye/mcp/connect.py",
            "--server-config",
            format!("{root}/.ai/tools/mcp/servers/rye-os.yaml"),
            "--tool",
            "execute",
            "--project-path",
            root
        ])
    );
}

#[test]
fn t_config_timeout_secs_becomes_timeout() {
    let (ran, report) = import(
        ryeos(&[
            ("tools/a.yaml", "executor_id: \"@subprocess\"\nconfig: {command: echo, timeout_secs: 20}\n"),
            ("tools/b.yaml", "tool_type: mcp\nexecutor_id: rye/core/primitives/execute\nconfig: {command: echo, timeout: 7}\n"),
        ]),
        0,
    );
    assert_eq!(
        yaml(&ran, "tools/a.yaml")["config"],
        yaml_of("command: echo\ntimeout: 20\n")
    );
    assert!(rewrites(entry(&report, ".ai/tools/a.yaml"))
        .contains(&"config.timeout_secs → config.timeout".to_owned()));
    assert_eq!(
        yaml(&ran, "tools/b.yaml")["config"],
        yaml_of("command: echo\ntimeout: 7\n")
    );
}

#[test]
fn tpl_p_runtime_tool_path_reaches_the_code_file_under_ai() {
    let (ran, report) = import(
        ryeos(&[(
            "tools/x/show.yaml",
            "tool_type: mcp\nexecutor_id: rye/core/primitives/execute\nconfig:\n  command: echo\n  args: [\"{tool_path}\", \"{tool_dir}\", \"{tool_parent}\", \"{project_path}\"]\n",
        )]),
        0,
    );
    let t = yaml(&ran, "tools/x/show.yaml");
    assert_eq!(
        t["config"]["args"],
        json!([
            "{code_path}",
            "{code_dir}",
            "{code_dir}/..",
            "{project_path}"
        ])
    );
    let r = rewrites(entry(&report, ".ai/tools/x/show.yaml"));
    assert!(r.contains(&"{tool_path} → {code_path}".to_owned()), "{r:?}");
    assert!(
        r.contains(&"{tool_parent} → {code_dir}/..".to_owned()),
        "{r:?}"
    );
    let root = std::fs::canonicalize(ran.path().join("new")).unwrap();
    let root = root.to_string_lossy();
    ran.then(&["run", "x/show", "--project", "new"])
        .stdout(&format!(
            "{root}/.ai/tools/x/show.yaml {root}/.ai/tools/x {root}/.ai/tools/x/.. {root}\n"
        ))
        .status(0)
        .run();
}

#[test]
fn t_anchor_becomes_env_prepends_and_warns() {
    let (ran, report) = import(
        ryeos(&[(
            "tools/rye/core/runtimes/python/function.yaml",
            &py_function_runtime(),
        )]),
        0,
    );
    let t = yaml(&ran, "tools/rye/core/runtimes/python/function.yaml");
    assert_eq!(
        t["config"]["env"],
        yaml_of("PYTHONPATH: '{code_dir}:{runtime_dir}/lib:${PYTHONPATH:-}'\n")
    );
    let w = warnings(entry(
        &report,
        ".ai/tools/rye/core/runtimes/python/function.yaml",
    ));
    assert_eq!(
        w.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
        ["IMP-anchor", "IMP-verify_deps", "IMP-config_resolve"]
    );
    assert_eq!(
        w[0],
        (
            "IMP-anchor".into(),
            "anchor approximated: anchor_path = the code file's directory (RyeOS searched upward for the markers [\"__init__.py\",\"pyproject.toml\"]); written as config.env.PYTHONPATH".into(),
            21,
            1
        )
    );
    assert_eq!(
        w[1],
        (
            "IMP-verify_deps".into(),
            "`verify_deps` dropped: strata does not verify the integrity of a tool's sibling files"
                .into(),
            31,
            1
        )
    );
    assert_eq!(
        w[2],
        (
            "IMP-config_resolve".into(),
            "`execution/execution.yaml` overrides are not merged by strata (none found at import: dropped)".into(),
            38,
            1
        )
    );
}

#[test]
fn t_param_shadow_warns_for_the_bash_runtime() {
    let rel = "tools/rye/core/runtimes/bash/bash.yaml";
    let (ran, report) = import(ryeos(&[(rel, &corpus_text(rel))]), 0);
    let w = warnings(entry(&report, ".ai/tools/rye/core/runtimes/bash/bash.yaml"));
    assert!(
        w.contains(&(
            "IMP-param-shadow".into(),
            "`{command}` in config.args resolves to the config key `command` ('/bin/bash'), never to the caller's `command` (RyeOS behaved the same)".into(),
            21,
            7
        )),
        "{w:?}"
    );
    assert_eq!(
        yaml(&ran, rel)["config"]["args"],
        json!(["-c", "{command}", "{code_path}", "{project_path}"])
    );
}

#[test]
fn t_config_resolve_merges_the_execution_snapshot_when_there_is_one() {
    let (ran, report) = import(
        ryeos(&[
            ("config/execution/execution.yaml", "timeout: 9\nenv: {X: y}\n"),
            ("tools/c.yaml", "tool_type: mcp\nexecutor_id: rye/core/primitives/execute\nconfig_resolve:\n  path: execution/execution.yaml\nconfig:\n  command: echo\n  timeout: 1\n"),
        ]),
        0,
    );
    assert_eq!(
        yaml(&ran, "tools/c.yaml")["config"],
        yaml_of("command: echo\ntimeout: 9\nenv: {X: y}\n")
    );
    assert_eq!(
        warnings(entry(&report, ".ai/tools/c.yaml")),
        [(
            "IMP-config_resolve".into(),
            "`execution/execution.yaml` overrides are not merged by strata: the snapshot of `.ai/config/execution/execution.yaml` was merged into `config` at import".into(),
            3,
            1
        )]
    );
    assert_eq!(
        report["kept"],
        json!([".ai/config/execution/execution.yaml"])
    );
}

#[test]
fn t_exec_misc_permissions_and_requires_are_dropped_with_warnings() {
    let (ran, report) = import(
        ryeos(&[(
            "tools/m.yaml",
            "tool_type: mcp\nexecutor_id: rye/core/primitives/execute\nexecution_owner: thread\nnative_async: true\npermissions: [a]\nrequires: {capabilities: [b]}\nconfig: {command: echo}\n",
        )]),
        0,
    );
    assert_eq!(
        warnings(entry(&report, ".ai/tools/m.yaml")),
        [
            ("IMP-exec-misc".into(), "`execution_owner` dropped: strata has no equivalent (it runs each tool as one subprocess)".into(), 3, 1),
            ("IMP-exec-misc".into(), "`native_async` dropped: strata has no equivalent (it runs each tool as one subprocess)".into(), 4, 1),
            ("IMP-permissions".into(), "`permissions` dropped: strata enforces no capabilities".into(), 5, 1),
            ("IMP-permissions".into(), "`requires` dropped: strata enforces no capabilities".into(), 6, 1),
        ]
    );
    let t = yaml(&ran, "tools/m.yaml");
    for k in ["execution_owner", "native_async", "permissions", "requires"] {
        assert!(t.get(k).is_none());
    }
}

#[test]
fn ht_required_secrets_become_secrets_and_bin_commands_warn() {
    let rel = "tools/rye/web/tavily-search.yaml";
    let (ran, report) = import(ryeos(&[(rel, &corpus_text(rel))]), 0);
    let t = yaml(&ran, rel);
    assert_eq!(t["secrets"], json!(["TAVILY_API_KEY"]));
    assert_eq!(t["config"]["command"], "ryeos-web-tools");
    let e = entry(&report, ".ai/tools/rye/web/tavily-search.yaml");
    assert!(rewrites(e).contains(&"required_secrets → secrets".to_owned()));
    assert!(codes(e).contains(&"IMP-bin".to_owned()));
    // A bundle path keeps only the binary's name.
    let (ran, _) = import(
        ryeos(&[(
            "tools/r.yaml",
            "executor_id: \"@subprocess\"\nconfig:\n  command: \"bin:core/ryeos-core-tools\"\n",
        )]),
        0,
    );
    assert_eq!(
        yaml(&ran, "tools/r.yaml")["config"]["command"],
        "ryeos-core-tools"
    );
    // Not installed: the run says so (exit 2), and works once it is on PATH.
    ran.then(&["run", "r", "--project", "new", "--dry-run"])
        .status(2)
        .run();
}

#[test]
fn hr_runtime_descriptors_are_refused() {
    let rel = "runtimes/graph-runtime.yaml";
    let (ran, report) = import(ryeos(&[(rel, &corpus_text(rel))]), 3);
    assert_refused(
        &report,
        ".ai/runtimes/graph-runtime.yaml",
        "IMP-runtime-descriptor",
        "`kind: runtime` daemon descriptor (serves: graph): strata's directive and graph runners are built in",
    );
    assert_eq!(
        entry(&report, ".ai/runtimes/graph-runtime.yaml")["era"],
        "head"
    );
    assert_eq!(
        ran.read("new/.ai/runtimes/graph-runtime.yaml"),
        ran.read("ryeos/.ai/runtimes/graph-runtime.yaml")
    );
}

// ---------------------------------------------------------------------------------------
// §5 — code tools

/// A project with the Python function and script runtimes and the node runtime, and `files`.
fn with_runtimes(files: &[(&str, &str)]) -> Test {
    let mut all: Vec<(String, String)> = [
        "tools/rye/core/runtimes/python/function.yaml",
        "tools/rye/core/runtimes/python/script.yaml",
        "tools/rye/core/runtimes/node/node.yaml",
    ]
    .iter()
    .map(|r| (r.to_string(), corpus_text(r)))
    .collect();
    all.extend(files.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    let refs: Vec<(&str, &str)> = all.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    ryeos(&refs)
}

#[test]
fn k_code_k_exec_k_meta_k_schema_a_wrapper_runs_the_code_under_ai() {
    let rel = "tools/rye/file-system/read.py";
    let (ran, report) = import(with_runtimes(&[(rel, &corpus_text(rel))]), 0);
    let e = entry(&report, ".ai/tools/rye/file-system/read.py");
    assert_eq!(e["kind"], "code");
    assert_eq!(e["era"], "py");
    assert_eq!(e["warnings"], json!([]));
    assert_eq!(e["written"], json!(["tools/rye/file-system/read.yaml"]));
    let t = yaml(&ran, "tools/rye/file-system/read.yaml");
    assert_eq!(
        t,
        yaml_of(
            "description: 'Read file content. Each line is prefixed with LINE_NUM:LID where LID is a stable 6-char hex reference. LIDs are NOT part of the file content — they are metadata for use with edit_lines (pass as line_id, start_line_id, end_line_id).'\n\
             version: 1.0.0\n\
             executor: rye/core/runtimes/python/function\n\
             parameters:\n  type: object\n  properties:\n    path: {type: string, description: Path to file (relative to project root or absolute)}\n    offset: {type: integer, description: Starting line number (1-indexed), default: 1}\n    limit: {type: integer, description: Maximum number of lines to read, default: 2000}\n  required: [path]\n\
             config:\n  code_path: '{project_path}/.ai/tools/rye/file-system/read.py'\n  code_dir: '{project_path}/.ai/tools/rye/file-system'\n"
        )
    );
    assert_eq!(
        rewrites(e),
        [
            "__tool_description__ → description",
            "__version__ → version",
            "__tool_type__ dropped (the id is the path `rye/file-system/read`)",
            "__category__ dropped (the id is the path `rye/file-system/read`)",
            "__executor_id__ → executor: rye/core/runtimes/python/function",
            "CONFIG_SCHEMA → parameters",
            "code stays at .ai/tools/rye/file-system/read.py; the wrapper sets code_path and code_dir",
        ]
    );
    // It runs for real: the runtime's program loads the code file from `.ai/`.
    std::fs::write(ran.path().join("new/hello.txt"), "one\ntwo\n").unwrap();
    let out = ran
        .then(&[
            "run",
            "rye/file-system/read",
            "--project",
            "new",
            "-p",
            "path=hello.txt",
            "--json",
        ])
        .status(0)
        .run();
    let data = &out.json()["data"];
    assert_eq!(data["success"], true, "{data:#}");
    assert!(data["output"].as_str().unwrap().contains("one"), "{data:#}");
}

#[test]
fn k_exec_script_and_node_runtimes() {
    let (ran, report) = import(
        with_runtimes(&[
            ("tools/t/s.py", "__executor_id__ = \"rye/core/runtimes/python/script\"\nimport sys\nprint('script', sys.argv[2] == sys.argv[2])\n"),
            ("tools/t/n.ts", &corpus_text("tools/rye/code/npm/npm.ts")),
        ]),
        0,
    );
    assert_eq!(
        yaml(&ran, "tools/t/s.yaml")["executor"],
        "rye/core/runtimes/python/script"
    );
    assert_eq!(
        yaml(&ran, "tools/t/n.yaml")["executor"],
        "rye/core/runtimes/node/node"
    );
    assert_eq!(entry(&report, ".ai/tools/t/n.ts")["warnings"], json!([]));
    ran.then(&["run", "t/s", "--project", "new"])
        .stdout("script True\n")
        .status(0)
        .run();
    ran.then(&[
        "run",
        "t/n",
        "--project",
        "new",
        "--dry-run",
        "-p",
        "action=install",
    ])
    .status(0)
    .run();
}

#[test]
fn k_schema_ts_export_const_is_read_without_running_it() {
    let rel = "tools/rye/code/npm/npm.ts";
    let (ran, _) = import(with_runtimes(&[(rel, &corpus_text(rel))]), 0);
    let t = yaml(&ran, "tools/rye/code/npm/npm.yaml");
    assert_eq!(
        t["description"],
        "NPM operations tool - install, run scripts, exec commands"
    );
    assert_eq!(t["parameters"]["required"], json!(["action"]));
    assert_eq!(
        t["parameters"]["properties"]["action"]["enum"],
        json!(["install", "run", "build", "test", "init", "exec"])
    );
    assert_eq!(t["parameters"]["properties"]["flags"]["default"], json!({}));
}

#[test]
fn k_exec_bad_and_k_syntax_error_are_refused() {
    let (_, report) = import(
        with_runtimes(&[
            (
                "tools/rye/core/sinks/null_sink.py",
                &corpus_text("tools/rye/core/sinks/null_sink.py"),
            ),
            (
                "tools/test/test_registry_tool.py",
                &corpus_text("tools/test/test_registry_tool.py"),
            ),
            (
                "tools/rye/core/remote/remote.py",
                &corpus_text("tools/rye/core/remote/remote.py"),
            ),
        ]),
        3,
    );
    assert_refused(
        &report,
        ".ai/tools/rye/core/sinks/null_sink.py",
        "IMP-code-executor",
        "`__executor_id__ = \"python\"` names no runtime in any space (broken in RyeOS too): nothing can run this file",
    );
    assert_refused(
        &report,
        ".ai/tools/test/test_registry_tool.py",
        "IMP-code-executor",
        "`__executor_id__ = \"rye/core/runtimes/python_tool_runtime\"` names no runtime in any space (broken in RyeOS too): nothing can run this file",
    );
    assert_refused(
        &report,
        ".ai/tools/rye/core/remote/remote.py",
        "IMP-code-syntax",
        "the file does not parse (unexpected indent, line 1429): RyeOS could not load it either",
    );
}

#[test]
fn k_no_schema_is_permissive_and_k_schema_nonliteral_warns() {
    let (ran, report) = import(
        with_runtimes(&[
            ("tools/a/none.py", "__version__ = \"0.1\"\n__executor_id__ = \"rye/core/runtimes/python/function\"\n\ndef execute(p, project_path):\n    return p\n"),
            ("tools/rye/core/gc/gc.py", &corpus_text("tools/rye/core/gc/gc.py")),
            ("tools/a/made.py", "__executor_id__ = \"rye/core/runtimes/python/function\"\nCONFIG_SCHEMA = make_schema()\n"),
        ]),
        0,
    );
    let permissive = yaml_of("type: object\nadditionalProperties: true\n");
    assert_eq!(yaml(&ran, "tools/a/none.yaml")["parameters"], permissive);
    assert!(rewrites(entry(&report, ".ai/tools/a/none.py")).contains(
        &"no CONFIG_SCHEMA → parameters: {type: object, additionalProperties: true} (RyeOS validated nothing)".to_owned()
    ));
    assert_eq!(yaml(&ran, "tools/a/made.yaml")["parameters"], permissive);
    assert_eq!(
        warnings(entry(&report, ".ai/tools/a/made.py")),
        [(
            "IMP-code-schema".into(),
            "`CONFIG_SCHEMA` is computed by code (`make_schema` is computed (a name, not a literal)); the importer never runs user code, so the parameters are permissive (`type: object, additionalProperties: true`)".into(),
            2,
            1
        )]
    );
    // One computed keyword inside a parameter loosens that parameter only.
    assert_eq!(
        yaml(&ran, "tools/rye/core/gc/gc.yaml")["parameters"],
        yaml_of("type: object\nproperties:\n  action: {type: string, description: GC operation to perform}\n  aggressive: {type: boolean, description: Emergency mode — shorter grace window, default: false}\nrequired: [action]\n")
    );
    let w = warnings(entry(&report, ".ai/tools/rye/core/gc/gc.py"));
    assert_eq!(
        w[0],
        (
            "IMP-code-schema".into(),
            "`CONFIG_SCHEMA` `properties.action.enum` is computed by code (`ACTIONS` is computed (a name, not a literal)): left out, so parameter `action` is checked by the rest of its schema only (the rest of the schema is kept)".into(),
            38,
            1
        )
    );
    // Any parameter passes, as in RyeOS.
    ran.then(&[
        "run",
        "a/none",
        "--project",
        "new",
        "-p",
        "anything=1",
        "--json",
    ])
    .status(0)
    .run();
}

#[test]
fn k_misc_config_resolve_and_execution_names_warn() {
    let (_, report) = import(
        with_runtimes(&[
            (
                "tools/rye/email/send.py",
                &corpus_text("tools/rye/email/send.py"),
            ),
            (
                "tools/rye/agent/threads/thread_directive.py",
                &corpus_text("tools/rye/agent/threads/thread_directive.py"),
            ),
        ]),
        0,
    );
    assert_eq!(
        codes(entry(&report, ".ai/tools/rye/email/send.py")),
        ["IMP-config_resolve"]
    );
    assert_eq!(
        warnings(entry(&report, ".ai/tools/rye/email/send.py"))[0].1,
        "`CONFIG_RESOLVE`: `execution/execution.yaml` overrides are not merged by strata (dropped)"
    );
    assert_eq!(
        codes(entry(
            &report,
            ".ai/tools/rye/agent/threads/thread_directive.py"
        )),
        ["IMP-exec-misc"; 5]
    );
}

#[test]
fn code_modules_without_executor_id_are_only_kept() {
    let (ran, report) = import(
        with_runtimes(&[
            ("tools/x/lib/helpers.py", "def f():\n    return 1\n"),
            ("knowledge/k.md", "# notes\n"),
            ("tools/x/lib/settings.yaml", "retries: 3\n"),
        ]),
        0,
    );
    assert_eq!(
        report["kept"],
        json!([
            ".ai/knowledge/k.md",
            ".ai/tools/x/lib/helpers.py",
            ".ai/tools/x/lib/settings.yaml"
        ])
    );
    assert_eq!(
        ran.read("new/.ai/tools/x/lib/helpers.py"),
        "def f():\n    return 1\n"
    );
    assert!(!ran.path().join("new/tools/x/lib/helpers.yaml").exists());
}

// ---------------------------------------------------------------------------------------
// §10 — the whole corpus

#[test]
fn the_whole_corpus_imports_checks_clean_and_dry_runs() {
    let mut t = Test::new();
    let files = corpus_files();
    assert_eq!(files.len(), 281);
    for (rel, path) in &files {
        t = t.file(&format!("ryeos/.ai/{rel}"), std::fs::read(path).unwrap());
    }
    let (ran, report) = import(t, 3);
    assert_eq!(report["summary"]["files"], 281);
    let imported = report["summary"]["imported"].as_u64().unwrap();
    let refused = report["summary"]["refused"].as_u64().unwrap();
    assert_eq!(imported + refused, 281);
    assert!(imported >= 253, "{:#}", report["summary"]);
    assert_eq!(report["check"]["errors"], 0, "{:#}", report["check"]);
    assert_eq!(report["summary"]["accepted_by_check"], imported);
    eras::assert_honest(&report);

    // Outcome by kind and era: (kind, era) → (imported clean, imported with warnings, refused).
    let mut tally: BTreeMap<(String, String), [u64; 3]> = BTreeMap::new();
    let mut refusals: BTreeMap<String, u64> = BTreeMap::new();
    for f in report["files"].as_array().unwrap() {
        let k = (
            f["kind"].as_str().unwrap().to_owned(),
            f["era"].as_str().unwrap().to_owned(),
        );
        let slot = match (
            f["outcome"].as_str().unwrap(),
            f["warnings"].as_array().unwrap().is_empty(),
        ) {
            ("imported", true) => 0,
            ("imported", false) => 1,
            _ => 2,
        };
        tally.entry(k).or_default()[slot] += 1;
        if f["outcome"] == "refused" {
            let code = f["reason"]["code"].as_str().expect("a refusal has a code");
            assert!(!f["reason"]["message"].as_str().unwrap().is_empty());
            *refusals.entry(code.to_owned()).or_default() += 1;
        }
    }
    let tally: Vec<(&str, &str, [u64; 3])> = tally
        .iter()
        .map(|((k, e), v)| (k.as_str(), e.as_str(), *v))
        .collect();
    assert_eq!(
        tally,
        [
            ("code", "py", [42, 16, 5]),
            ("directive", "head", [1, 7, 0]),
            ("directive", "py", [1, 123, 0]),
            ("graph", "py", [0, 8, 0]),
            ("hooks", "py", [0, 0, 1]),
            ("runtime", "head", [0, 0, 3]),
            ("tool", "head", [1, 41, 3]),
            ("tool", "py", [6, 7, 16]),
        ]
    );
    assert_eq!(
        refusals,
        BTreeMap::from([
            ("IMP-code-executor".to_owned(), 4),
            ("IMP-code-syntax".to_owned(), 1),
            ("IMP-executor".to_owned(), 1),
            ("IMP-graph-runtime".to_owned(), 1),
            ("IMP-H-none".to_owned(), 1),
            ("IMP-http".to_owned(), 3),
            ("IMP-nonrunnable".to_owned(), 9),
            ("IMP-primitive".to_owned(), 3),
            ("IMP-runtime-descriptor".to_owned(), 3),
            ("IMP-terminal".to_owned(), 2),
        ])
    );
    let notices: Vec<&str> = report["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["code"].as_str().unwrap())
        .collect();
    assert_eq!(notices, ["IMP-signature", "IMP-llm"]);
    assert_eq!(
        report["notices"][1]["message"],
        "RyeOS directives are LLM-thread prompts; strata renders the prompt and runs declared actions, it never calls a model (132 directives)"
    );

    // Every imported tool and code wrapper dry-runs (runtimes run under a tool), unless it
    // calls a RyeOS bundle binary that is not installed.
    let mut ran_ok = 0;
    let mut need_bin = 0;
    for f in report["files"].as_array().unwrap() {
        if f["outcome"] != "imported" || !(f["kind"] == "tool" || f["kind"] == "code") {
            continue;
        }
        let path = f["written"][0].as_str().unwrap();
        if path.contains("/runtimes/") {
            continue;
        }
        let id = &path["tools/".len()..path.len() - ".yaml".len()];
        let tool = yaml(&ran, path);
        let params = required_params(&tool["parameters"]);
        let out = ran
            .then(&[
                "run",
                id,
                "--project",
                "new",
                "--dry-run",
                "--params-json",
                &params.to_string(),
            ])
            .env("RYE_KERNEL_PYTHON", "/bin/echo")
            .env("RYEOS_SYSTEM_SPACE", "/opt/rye")
            // Each tool's outcome is counted below: which may run is what the test checks.
            .any_status()
            .run();
        let bin = f["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "IMP-bin");
        match out.code {
            Some(0) => ran_ok += 1,
            Some(2) if bin && out.stderr.contains("not found on PATH") => need_bin += 1,
            _ => panic!("{id} does not dry-run: {}", out.stderr),
        }
    }
    assert_eq!((ran_ok, need_bin), (74, 30));
}

/// Placeholder values for a schema's required parameters.
fn required_params(schema: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap();
        let p = &schema["properties"][name];
        let v = if let Some(e) = p["enum"].as_array() {
            e[0].clone()
        } else if !p["default"].is_null() {
            p["default"].clone()
        } else {
            match p["type"].as_str().unwrap_or("string") {
                "integer" | "number" => json!(1),
                "boolean" => json!(false),
                "array" => json!([]),
                "object" => json!({}),
                _ => json!("x"),
            }
        };
        out.insert(name.to_owned(), v);
    }
    Value::Object(out)
}

/// Every code the importer can write has its line in docs/import.md's table of what to do.
#[test]
fn every_import_code_is_indexed_in_the_docs() {
    let docs = std::fs::read_to_string(common::repo().join("docs/import.md")).unwrap();
    // Every source file, those of the converters' modules included.
    let src = common::repo().join("crates/strata-import/src");
    let mut sources = Vec::new();
    collect(&src, &src, "src", &mut sources);
    let mut missing = Vec::new();
    for (_, path) in sources {
        let text = std::fs::read_to_string(path).unwrap();
        for (at, _) in text.match_indices("\"IMP-") {
            let rest = &text[at + 1..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..end];
            if !docs.contains(&format!("`{name}`")) && !missing.iter().any(|m| m == name) {
                missing.push(name.to_owned());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "codes not in docs/import.md: {missing:?}"
    );
}

// RyeOS's `rye/code/lsp/lsp.ts` builds one `enum` with a spread (`[...OPERATIONS]`): only
// that keyword is left out; the other parameters keep their schema.
#[test]
fn k_schema_ts_spread_loosens_only_its_parameter() {
    let rel = "tools/rye/code/lsp/lsp.ts";
    let (ran, report) = import(with_runtimes(&[(rel, &corpus_text(rel))]), 0);
    let p = yaml(&ran, "tools/rye/code/lsp/lsp.yaml")["parameters"].clone();
    assert_eq!(
        p["properties"]["operation"],
        json!({"type": "string", "description": "LSP operation to perform"})
    );
    assert_eq!(p["properties"]["line"]["type"], "integer");
    assert_eq!(p["properties"]["timeout"]["default"], 15);
    assert!(p.get("additionalProperties").is_none(), "{p:#}");
    assert_eq!(
        warnings(entry(&report, ".ai/tools/rye/code/lsp/lsp.ts"))
            .into_iter()
            .filter(|w| w.0 == "IMP-code-schema")
            .map(|w| w.1)
            .collect::<Vec<_>>(),
        ["`CONFIG_SCHEMA` `properties.operation.enum` is computed by code (a spread (`...`) is computed): left out, so parameter `operation` is checked by the rest of its schema only (the rest of the schema is kept)"]
    );
}
