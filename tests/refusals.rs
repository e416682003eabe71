//! What `strata check` rejects, no front-end runs — for every error code. Every file of the
//! diagnostics corpus (`tests/check/`, one mistake each) with an error is put in a project
//! with files that reach it (a directive, a plan and a graph calling a broken tool; a
//! directive firing a broken hook), and every front-end that can reach it is asked to run
//! it: each refuses (exit 2), runs nothing, and its refusal lists every error `strata check`
//! reports in that file. (The Python and Ray front-ends walk the same corpus in
//! crates/strata-py/tests/test_refusals.py and crates/strata-py/tests_ray.)

mod common;
use common::{repo, Ran, Test};

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A tool that would leave a mark if it ever ran.
const CANARY: &str =
    "executor: runtimes/subprocess\nconfig:\n  command: touch\n  args: [\"{project_path}/RAN\"]\n";

/// The corpus files whose expected diagnostics hold an error, with those error codes.
fn error_cases() -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(repo().join("tests/check")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "expected") {
            continue;
        }
        let expected = std::fs::read_to_string(format!("{}.expected", path.display())).unwrap();
        let codes: Vec<String> = expected
            .lines()
            .filter_map(|l| l.strip_prefix("error["))
            .filter_map(|l| l.split_once(']').map(|(c, _)| c.to_string()))
            .collect();
        if !codes.is_empty() {
            out.push((path, codes));
        }
    }
    out.sort();
    out
}

/// Where a case file goes in its project, and the id or path the front-ends name it by.
struct Placed {
    rel: String,
    kind: char,
    name: String,
}

fn placed(case: &Path) -> Placed {
    let file = case.file_name().unwrap().to_str().unwrap().to_string();
    let stem = case.file_stem().unwrap().to_str().unwrap().to_string();
    let kind = file.chars().next().unwrap();
    let (rel, name) = match kind {
        't' => (format!("tools/case/{file}"), format!("case/{stem}")),
        'd' => (format!("directives/{file}"), format!("directives/{file}")),
        'g' => (format!("tools/graphs/{file}"), format!("graphs/{stem}")),
        'p' => (format!("plans/{file}"), format!("plans/{file}")),
        _ => (format!("hooks/{file}"), String::new()),
    };
    Placed { rel, kind, name }
}

/// The case's project: the shipped runtimes, `examples/echo`, the canary, the case in place,
/// and the files that reach a broken tool or hook.
fn project(case: &Path, at: &Placed) -> Test {
    let t = Test::new()
        .copy("tools/runtimes")
        .copy("tools/examples/echo.yaml")
        .tool("canary", CANARY)
        .file(&at.rel, std::fs::read(case).unwrap());
    let tool = &at.name;
    match at.kind {
        't' => t
            .file(
                "directives/calls.md",
                format!("---\nname: calls\nactions:\n  - {{id: a, tool: canary}}\n  - {{id: b, tool: {tool}}}\n---\nbody\n"),
            )
            .file(
                "plans/calls.yaml",
                format!("- {{id: first, tool: canary, arguments: {{}}}}\n- {{id: s, tool: {tool}, arguments: {{}}}}\n"),
            )
            .file(
                "tools/graphs/calls.yaml",
                format!("kind: graph\nnodes:\n  first: {{kind: action, tool: canary, next: n}}\n  n: {{kind: action, tool: {tool}, next: done}}\n  done: {{kind: return, output: x}}\n"),
            ),
        'h' => t.file(
            "directives/ok.md",
            "---\nname: ok\nactions:\n  - {id: a, tool: canary}\n---\nbody\n",
        ),
        _ => t,
    }
}

/// Every front-end command that reaches the case: its arguments and standard input.
fn front_ends(at: &Placed) -> Vec<(Vec<String>, Option<String>)> {
    let v = |args: &[&str]| args.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let name = at.name.as_str();
    match at.kind {
        't' => vec![
            (v(&["run", name]), None),
            (
                v(&["run", "--batch"]),
                Some(format!("{{\"id\": 7, \"tool\": \"{name}\"}}\n")),
            ),
            (v(&["run", "directives/calls.md"]), None),
            (v(&["plan", "run", "plans/calls.yaml"]), None),
            (
                v(&["plan", "step", "plans/calls.yaml", "--step", "s"]),
                None,
            ),
            (v(&["run", "graphs/calls"]), None),
            (
                v(&["walk", "graphs/calls", "--node", "first", "--start"]),
                None,
            ),
            (
                v(&["export", "argo", "plans/calls.yaml", "--image", "i:1"]),
                None,
            ),
            (
                v(&[
                    "export",
                    "argo",
                    "tools/graphs/calls.yaml",
                    "--image",
                    "i:1",
                ]),
                None,
            ),
        ],
        'd' => vec![(v(&["run", name]), None)],
        'g' => vec![
            (v(&["run", name]), None),
            (v(&["walk", name, "--node", "start", "--start"]), None),
            (v(&["export", "argo", &at.rel, "--image", "i:1"]), None),
        ],
        'p' => vec![
            (v(&["plan", "run", name]), None),
            (v(&["plan", "step", name, "--step", "step1"]), None),
            (v(&["export", "argo", name, "--image", "i:1"]), None),
        ],
        _ => vec![(v(&["run", "directives/ok.md"]), None)],
    }
}

/// The messages of the errors `strata check` reports in file `rel`.
fn check_errors(t: &Test, rel: &str) -> Vec<String> {
    let ran = t.then(&["check", "--format", "json"]).status(1).run();
    ran.json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error" && d["file"] == rel)
        .map(|d| d["message"].as_str().unwrap().to_string())
        .collect()
}

/// What a refusal says: stderr, or the reply line of a batch.
fn said(ran: &Ran, batch: bool) -> String {
    if !batch {
        return ran.stderr.clone();
    }
    let reply: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(reply["ok"], false, "{}", ran.stdout);
    assert_eq!(reply["id"], 7, "{}", ran.stdout);
    reply["error"].to_string()
}

#[test]
fn the_corpus_has_a_file_for_every_error_code_check_emits_in_a_file_that_runs() {
    let mut codes: Vec<String> = error_cases().into_iter().flat_map(|(_, c)| c).collect();
    codes.sort();
    codes.dedup();
    assert_eq!(
        codes,
        [
            "G001", "L007", "P001", "P002", "P003", "P004", "R001", "R003", "R004", "R005", "R006",
            "R007", "R008", "R009", "R011", "R012", "S001", "S002", "S003", "S004"
        ]
    );
}

#[test]
fn every_front_end_refuses_every_error_the_check_finds() {
    let mut failures = Vec::new();
    let mut asked = 0;
    for (case, _) in error_cases() {
        let at = placed(&case);
        let t = project(&case, &at);
        let errors = check_errors(&t, &at.rel);
        assert!(
            !errors.is_empty(),
            "{}: check found no error",
            case.display()
        );
        for (args, stdin) in front_ends(&at) {
            asked += 1;
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let batch = stdin.is_some();
            let mut run = t.then(&argv);
            if let Some(input) = &stdin {
                run = run.stdin(input.clone());
            }
            // Every front-end's outcome is collected, to report all that fail at once.
            let ran = run.any_status().run();
            let what = format!("{} · strata {}", case.display(), args.join(" "));
            let status = if batch { Some(0) } else { Some(2) };
            if ran.code != status {
                failures.push(format!("{what}: exit {:?}\n{}", ran.code, ran.all()));
                continue;
            }
            if t.path().join("RAN").exists() {
                failures.push(format!("{what}: something ran"));
                continue;
            }
            let text = said(&ran, batch);
            for message in &errors {
                let quoted = serde_json::to_string(message).unwrap();
                let inner = &quoted[1..quoted.len() - 1];
                if !text.contains(message.as_str()) && !text.contains(inner) {
                    failures.push(format!("{what}: the refusal lacks `{message}`:\n{text}"));
                }
            }
        }
    }
    assert!(asked > 150, "{asked} refusals asked for");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
