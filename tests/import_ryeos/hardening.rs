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

/// Locks directory `dir` as an import writing into it does (`flock`, exclusive).
fn hold(dir: &std::path::Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let held = std::fs::File::open(dir).expect("the directory opens");
    // SAFETY: flock on a descriptor `held` owns, for the call.
    let locked = unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(locked, 0, "{}", std::io::Error::last_os_error());
    held
}

// An import takes the target for itself: while another holds it, nothing is written.
#[test]
fn a_target_another_import_is_writing_into_is_refused() {
    let t = ryeos(&[("tools/ok.yaml", OK_TOOL)]);
    std::fs::create_dir(t.path().join("new")).expect("mkdir");
    let held = hold(&t.path().join("new"));
    let ran = t
        .args(&["import", "ryeos", "ryeos", "new"])
        .stderr("error[import]: another `strata import` is writing into new\n   = help: wait for it to end: strata import writes a new project, into a new or empty directory\n")
        .status(2)
        .run();
    assert_eq!(
        std::fs::read_dir(ran.path().join("new")).unwrap().count(),
        0
    );
    drop(held);
    ran.then(&["import", "ryeos", "ryeos", "new"])
        .status(0)
        .run();
}

// Two imports started together into one empty target: one writes the project, the other
// is refused (the target is taken, or no longer empty), and the project is what one import
// alone writes.
#[test]
fn two_imports_into_one_empty_target_write_one_project() {
    let t = super::corpus_files()
        .into_iter()
        .fold(ryeos(&[]), |t, (rel, path)| {
            t.file(&format!("ryeos/.ai/{rel}"), std::fs::read(path).unwrap())
        });
    let alone = t
        .args(&["import", "ryeos", "ryeos", "alone"])
        .status(3)
        .run();
    let expected = super::tree(&alone.path().join("alone"));
    for round in 0..3 {
        let target = format!("new{round}");
        std::fs::create_dir(alone.path().join(&target)).expect("mkdir");
        let args = ["import", "ryeos", "ryeos", target.as_str()];
        // Which of the two wins is the race: their statuses are checked together.
        let first = alone.then(&args).any_status().start();
        let second = alone.then(&args).any_status().start();
        let (first, second) = (first.finish(), second.finish());
        let (won, lost) = match (first.code, second.code) {
            (Some(3), Some(2)) => (first, second),
            (Some(2), Some(3)) => (second, first),
            codes => panic!(
                "round {round}: exit codes {codes:?}\n{}\n{}",
                first.brief(),
                second.brief()
            ),
        };
        let taken = format!("error[import]: another `strata import` is writing into {target}\n");
        let filled = format!("error[import]: {target} is not empty\n");
        assert!(
            lost.stderr.starts_with(&taken) || lost.stderr.starts_with(&filled),
            "{}",
            lost.stderr
        );
        assert!(won.stderr.ends_with("(IMPORT-REPORT.md has the details)\n"));
        assert!(
            super::tree(&alone.path().join(&target)) == expected,
            "round {round}: the project differs from one import's"
        );
    }
}

// A file or directory whose name is not UTF-8 cannot be an id or a path strata writes: it is
// refused, named with its bytes escaped, and not copied; the rest is imported.
#[test]
fn names_that_are_not_utf8_are_refused_and_shown_escaped() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let t = ryeos(&[("tools/ok.yaml", OK_TOOL)]);
    let tools = t.path().join("ryeos/.ai/tools");
    std::fs::write(tools.join(OsStr::from_bytes(b"bad\xff.yaml")), OK_TOOL).unwrap();
    let dir = tools.join(OsStr::from_bytes(b"dir\xc3("));
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("inner.yaml"), OK_TOOL).unwrap();
    std::fs::write(tools.join("ctl\u{1b}[31m.yaml"), OK_TOOL).unwrap();
    let (ran, report) = import(t, 3);
    let why = "the name is not UTF-8: not read, not copied (strata's ids and paths are printable text; rename it)";
    assert_refused(&report, ".ai/tools/bad\\xff.yaml", "IMP-name", why);
    assert_refused(&report, ".ai/tools/dir\\xc3(", "IMP-name", why);
    assert_refused(
        &report,
        ".ai/tools/ctl\\u{1b}[31m.yaml",
        "IMP-name",
        "the name holds a control character: not read, not copied (strata's ids and paths are printable text; rename it)",
    );
    assert_eq!(entry(&report, ".ai/tools/ok.yaml")["outcome"], "imported");
    assert_eq!(
        report["summary"],
        json!({"files": 4, "imported": 1, "refused": 3, "accepted_by_check": 1, "warnings": 0, "kept": 0, "spaces": 0})
    );
    assert!(ran.stderr.contains(&format!(
        "refused[IMP-name]: .ai/tools/bad\\xff.yaml: {why}\n"
    )));
    let copied: Vec<String> = std::fs::read_dir(ran.path().join("new/.ai/tools"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(copied, ["ok.yaml"]);
}

/// `text` as messages quote it: its first 64 characters, then `…`.
fn cut(text: &str) -> String {
    format!("{}…", text.chars().take(64).collect::<String>())
}

// Messages quote RyeOS text to name it, never whole: a value, key, element or literal is cut
// after 64 characters (`…`), in warnings, refusals and rewrites alike.
#[test]
fn messages_quote_at_most_64_characters_of_a_file() {
    let digits = format!("1{}", "0".repeat(99_999));
    let word = "w".repeat(100_000);
    let key = "k".repeat(1_000);
    let files = [
        ("tools/id.yaml".to_owned(), format!("executor_id: \"@subprocess\"\ntool_id: {digits}\nconfig: {{command: \"bin:{word}\"}}\n{key}: 1\n")),
        ("tools/exec.yaml".to_owned(), format!("executor_id: rye/core/runtimes/{word}\nconfig: {{command: echo}}\n")),
        ("tools/at.yaml".to_owned(), format!("executor_id: \"@{word}\"\n")),
        ("tools/null.yaml".to_owned(), format!("tool_type: {word}\nexecutor_id: null\n")),
        ("tools/code.py".to_owned(), format!("__executor_id__ = \"{word}\"\n")),
        ("tools/graphs/g.yaml".to_owned(), format!("tool_type: graph\ntool_id: {word}\n{key}: 1\nconfig:\n  start: a\n  nodes:\n    a:\n      type: {word}\n      action: {{primary: execute, item_id: \"tool:{word}\"}}\n      {key}: 2\n      next: b\n    b: {{type: return}}\n")),
        ("directives/xml.md".to_owned(), format!("```xml\n<directive name=\"x\" extends=\"{word}\"><metadata><model tier=\"a\">{word}</model><limits turns=\"{digits}\" tokens=\"{digits}\"/><context>{word}</context></metadata><inputs><input name=\"ok\" type=\"{word}\"/></inputs><{key}/></directive>\n```\n\n{{env:{word}}}\n")),
        ("directives/head.md".to_owned(), format!("---\nname: m\nlimits: {{turns: {word}}}\ncontinuation: {word}\n{key}: 1\n---\n${{json(inputs.x) / {digits}}}\n")),
        ("config/agent/hook_conditions.yaml".to_owned(), format!("builtin_hooks:\n  - id: {word}\n    event: {word}\n{key}: 1\n")),
        ("runtimes/r.yaml".to_owned(), format!("kind: runtime\nserves: {word}\n")),
    ];
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(r, t)| (r.as_str(), t.as_str()))
        .collect();
    let (ran, report) = import(ryeos(&files), 3);

    let e = entry(&report, ".ai/tools/id.yaml");
    let messages: Vec<String> = warnings(e).into_iter().map(|w| w.1).collect();
    assert_eq!(
        messages,
        [
            format!("`tool_id: {}` differs from the file name: the strata id is the path `id`", cut(&digits)),
            format!("`{}` has no strata equivalent: dropped", cut(&key)),
            format!("`command: {}` is a signed RyeOS bundle binary; strata looks `{}` up on the child's PATH (install it there)", cut(&format!("bin:{word}")), cut(&word)),
        ]
    );
    assert_refused(
        &report,
        ".ai/tools/at.yaml",
        "IMP-executor",
        &format!(
            "executor `{}` has no strata equivalent",
            cut(&format!("@{word}"))
        ),
    );
    let xml = entry(&report, ".ai/directives/xml.md");
    let turns = warnings(xml)
        .into_iter()
        .find(|w| w.0 == "IMP-D-limits-turns")
        .unwrap();
    assert_eq!(
        turns.1,
        format!(
            "limits turns=\"{}\" is not a whole number: dropped",
            cut(&digits)
        )
    );

    // Nothing the importer says of a file quotes it at length.
    for f in report["files"].as_array().unwrap() {
        let mut said: Vec<&str> = f["rewrites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        said.extend(
            f["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["message"].as_str().unwrap()),
        );
        said.extend(f["reason"]["message"].as_str());
        for text in said {
            assert!(
                text.chars().count() < 400,
                "{}: {}…",
                f["source"],
                &text[..200]
            );
        }
    }
    for line in ran.stderr.lines() {
        let start: String = line.chars().take(200).collect();
        assert!(line.chars().count() < 500, "{start}…");
    }
}

/// Limits for a run over one large file: CPU time an order of magnitude above what linear
/// work needs (quadratic work dies of SIGXCPU instead of taking the suite's time).
const LINEAR: crate::common::Limit = crate::common::Limit::CpuSeconds(5);

// One file repeating a construct does the work, and gets the report, of a few: its
// warnings of one code are listed up to 20, the others counted in one more warning. (A
// 480 KB directive of 120,000 empty elements wrote 33 MB of report, in time quadratic in
// its size.)
#[test]
fn a_file_repeating_one_construct_is_reported_in_a_few_lines() {
    let text = format!(
        "# T\n```xml\n<directive name=\"x\">{}\n</directive>\n```\n\nBody.\n",
        "<a/>".repeat(120_000)
    );
    let ran = ryeos(&[("directives/big.md", &text)])
        .args(&["import", "ryeos", "ryeos", "new", "--json"])
        .limit(LINEAR)
        .status(0)
        .run();
    let report = ran.json();
    let e = entry(&report, ".ai/directives/big.md");
    let mut expected: Vec<(String, String, u64, u64)> = (0..20)
        .map(|k| {
            (
                "IMP-D-element".to_owned(),
                "<a> in <directive> has no strata equivalent: dropped".to_owned(),
                3,
                21 + 4 * k,
            )
        })
        .collect();
    expected.push((
        "IMP-D-element".to_owned(),
        "119980 more `IMP-D-element` warnings of this file are not listed (the first 20 are)"
            .to_owned(),
        3,
        101,
    ));
    assert_eq!(warnings(e), expected);
    assert_eq!(report["summary"]["warnings"], 21);
    assert_eq!(ran.stderr.lines().count(), 21 + 2);
    let written = std::fs::metadata(ran.path().join("new/IMPORT-REPORT.json")).unwrap();
    assert!(written.len() < 20_000, "{} bytes", written.len());
}

// Elements nested past what a directive needs are refused where the nesting goes too deep,
// before the reader's recursion could overflow its stack.
#[test]
fn xml_nested_too_deeply_is_refused() {
    let depth = 100_000;
    let text = format!(
        "```xml\n<directive name=\"x\">{}{}</directive>\n```\n",
        "<a>".repeat(depth),
        "</a>".repeat(depth)
    );
    let (_, report) = import(ryeos(&[("directives/deep.md", &text)]), 3);
    assert_refused(
        &report,
        ".ai/directives/deep.md",
        "IMP-D-xml",
        "the <directive> block does not parse at 2:318: elements nest more than 100 deep",
    );
}

// A body's `{input:` that no `}` closes, followed by text that is not ASCII, is quoted in
// its rewrite, not cut inside a character (the import stopped on a panic).
#[test]
fn an_unclosed_input_reference_before_text_that_is_not_ascii_is_kept_literal() {
    let (ran, report) = import(
        ryeos(&[(
            "directives/p.md",
            "```xml\n<directive name=\"x\"></directive>\n```\n\n{input:éééééééééé\n",
        )]),
        0,
    );
    assert_eq!(
        entry(&report, ".ai/directives/p.md")["rewrites"],
        json!([
            "```xml <directive> block → YAML front matter",
            "`{input:éééééééééé\\n` kept literal: its `{` written `${'{'}`"
        ])
    );
    assert_eq!(
        ran.read("new/directives/p.md"),
        "---\nname: x\n---\n${'{'}input:éééééééééé\n"
    );
}

// Tools, graphs and hook files of many keys, nodes or hooks: the same bound, in time linear in
// their size (each warning's position was searched for from the top of the file).
#[test]
fn tools_graphs_and_hooks_of_many_parts_are_reported_in_a_few_lines() {
    let mut tool = "executor_id: \"@subprocess\"\nconfig: {command: echo}\n".to_owned();
    for k in 0..20_000 {
        tool.push_str(&format!("k{k}: 1\n"));
    }
    let mut graph = "tool_type: graph\nconfig:\n  start: n0\n  nodes:\n".to_owned();
    for k in 0..500 {
        graph.push_str(&format!(
            "    n{k}:\n      action: {{primary: execute, item_id: \"tool:t\"}}\n      extra: 1\n      next: n{}\n",
            k + 1
        ));
    }
    graph.push_str("    n500: {type: return}\n");
    let mut hooks = "builtin_hooks:\n".to_owned();
    for k in 0..5_000 {
        hooks.push_str(&format!("  - id: h{k}\n    event: nope\n"));
    }
    let ran = ryeos(&[
        ("tools/many.yaml", &tool),
        ("tools/g.yaml", &graph),
        ("config/agent/hook_conditions.yaml", &hooks),
    ])
    .args(&["import", "ryeos", "ryeos", "new", "--json"])
    .limit(LINEAR)
    .status(3)
    .run();
    let report = ran.json();
    let count = |source: &str, code: &str| {
        warnings(entry(&report, source))
            .into_iter()
            .filter(|w| w.0 == code)
            .collect::<Vec<_>>()
    };
    let dropped = count(".ai/tools/many.yaml", "IMP-dropped");
    assert_eq!(dropped.len(), 21);
    assert_eq!((dropped[0].2, dropped[0].3), (3, 1));
    assert_eq!(
        dropped[20],
        (
            "IMP-dropped".to_owned(),
            "19980 more `IMP-dropped` warnings of this file are not listed (the first 20 are)"
                .to_owned(),
            23,
            1
        )
    );
    let keys = count(".ai/tools/g.yaml", "IMP-G-key");
    assert_eq!(keys.len(), 21);
    assert_eq!(
        keys[20].1,
        "480 more `IMP-G-key` warnings of this file are not listed (the first 20 are)"
    );
    let missing = count(".ai/tools/g.yaml", "IMP-missing-tool");
    assert_eq!(
        missing[0].1,
        "node(s) `n0`, `n1`, `n2`, `n3`, `n4`, `n5`, `n6`, `n7`, `n8`, `n9`, 490 more call `t`, a tool in no space of the imported project (broken in RyeOS too): a failing stub was written at `tools/t.yaml`"
    );
    assert_eq!(
        count(".ai/config/agent/hook_conditions.yaml", "IMP-H-skip").len(),
        21
    );
    assert_refused(
        &report,
        ".ai/config/agent/hook_conditions.yaml",
        "IMP-H-none",
        "no hook of this file can be imported (5000 hooks; the warnings say why each is skipped)",
    );
}
