//! `strata check` over a corpus of broken files (`tests/check/`), each with one mistake of a
//! different kind, against the exact expected diagnostics (`<case>.expected`; run with
//! `UPDATE_EXPECT=1` to rewrite them after a deliberate change). The shipped project must be
//! clean.

mod common;
use common::{conforms, refusal, repo, Test};

use std::path::{Path, PathBuf};

/// A scratch project: the shipped runtimes, `examples/echo`, and the case file in place,
/// with `strata check` and `args` to run.
fn check(case: &Path, args: &[&str]) -> Test {
    let name = case.file_name().unwrap().to_str().unwrap();
    let target = match &name[..2] {
        "t_" => format!("tools/case/{name}"),
        "d_" => format!("directives/{name}"),
        "g_" => format!("tools/graphs/{name}"),
        "p_" => format!("plans/{name}"),
        _ => format!("hooks/{name}"),
    };
    let mut argv = vec!["check"];
    argv.extend_from_slice(args);
    Test::new()
        .copy("tools/runtimes")
        .copy("tools/examples/echo.yaml")
        .file(&target, std::fs::read(case).unwrap())
        .args(&argv)
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/check"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "expected"))
        .collect();
    out.sort();
    out
}

/// The summary counts files, which depends on the runtimes shipped; the rest is exact.
fn normalise(text: &str) -> String {
    text.lines()
        .map(
            |l| match l.strip_prefix("checked ").and_then(|r| r.split_once(": ")) {
                Some((_, counts)) => format!("checked: {counts}"),
                None => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn the_corpus_has_forty_cases_of_different_kinds() {
    assert!(cases().len() >= 40, "{} cases", cases().len());
}

#[test]
fn every_broken_file_gets_its_exact_diagnostic() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for case in cases() {
        let expected_path = case.with_extension(format!(
            "{}.expected",
            case.extension().unwrap().to_str().unwrap()
        ));
        let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
        // A file with an error fails the check; one with only warnings passes it.
        let has_error = want.contains("\nerror[") || want.starts_with("error[");
        let status = if update || has_error { 1 } else { 0 };
        let o = check(&case, &[]).status(status).run();
        let got = normalise(&o.stdout);
        if update {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        if got != want {
            failures.push(format!(
                "{}:\n--- want\n{want}--- got\n{got}",
                case.display()
            ));
        }
        assert!(
            !got.starts_with("checked: 0 errors, 0 warnings"),
            "{} found nothing",
            case.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_shipped_project_is_clean() {
    let o = Test::in_repo()
        .args(&["check", "--deny-warnings"])
        .status(0)
        .run();
    assert!(
        o.stdout.ends_with(": 0 errors, 0 warnings\n"),
        "{}",
        o.stdout
    );
    assert_eq!(o.code, Some(0));
}

#[test]
fn json_output_has_one_object_per_diagnostic() {
    let o = check(
        &repo().join("tests/check/t_unknown_param.yaml"),
        &["--format", "json"],
    )
    .status(1)
    .run();
    assert_eq!(
        o.json(),
        serde_json::json!([{
            "kind": "unknown_name",
            "message": "unknown parameter `{tool_pth}`: it is left as written",
            "path": "config.args[1]", "span": [0, 10],
            "hint": "did you mean `{tool_path}`?",
            "file": "tools/case/t_unknown_param.yaml", "line": 4, "column": 19,
            "severity": "error", "code": "R001"
        }])
    );
}

#[test]
fn warnings_fail_only_with_deny_warnings() {
    let case = repo().join("tests/check/d_unused_input.md");
    check(&case, &[])
        .status(0)
        .run()
        .then(&["check", "--deny-warnings"])
        .status(1)
        .run();
}

#[test]
fn r001_lists_each_parameter_once_when_a_parameter_has_a_config_key_name() {
    let o = Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/x",
            "executor: runtimes/subprocess\nparameters: {type: object, properties: {command: {type: string}}}\nconfig:\n  command: echo\n  args: [\"{command}\", \"{zzzzzz}\"]\n",
        )
        .args(&["check", "--format", "json"])
        .status(1)
        .run();
    let r001: Vec<serde_json::Value> = o
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "R001")
        .cloned()
        .collect();
    assert_eq!(
        r001,
        vec![serde_json::json!({
            "kind": "unknown_name",
            "message": "unknown parameter `{zzzzzz}`: it is left as written",
            "path": "config.args[1]", "span": [0, 8],
            "hint": "the parameters here are `{tool_path}`, `{tool_dir}`, `{tool_parent}`, `{project_path}`, `{params_json}`, `{runtime_dir}`, `{args}`, `{cwd}`, `{timeout}`, `{max_output_bytes}`, `{command}`",
            "file": "tools/t/x.yaml", "line": 5, "column": 24,
            "severity": "error", "code": "R001"
        })]
    );
}

/// A tool that declares its output fields, and a graph that reads them as `${result.x}`.
fn graph_reading_outputs(outputs: &str) -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/stats",
            &format!(
                "executor: runtimes/subprocess\n{outputs}config: {{command: echo, args: ['{{\"stdout\": \"x\", \"success\": true, \"count\": 2}}']}}\n"
            ),
        )
        .file(
            "tools/graphs/g.yaml",
            "kind: graph\nstate: {out: \"\", n: 0, c: 0}\nnodes:\n  start:\n    kind: action\n    tool: t/stats\n    assign: {out: \"${result.stdout}\", n: \"${result.cont}\", c: \"${result.count}\"}\n    next:\n      - {to: done, when: result.success}\n      - to: start\n  done:\n    kind: return\n    output: \"${state.out}\"\n",
        )
}

const STATS_OUTPUTS: &str = "outputs:\n  type: object\n  properties:\n    stdout: {type: string}\n    success: {type: boolean}\n    count: {type: integer}\n";

#[test]
fn declared_outputs_make_result_reads_exact() {
    // `result.stdout` and `result.success` are the tool's own fields: no L006. A field the
    // schema does not declare is R013, with a did-you-mean.
    graph_reading_outputs(STATS_OUTPUTS)
        .args(&["check", "--deny-warnings"])
        .stdout(
            "warning[R013]: `result.cont`: tool `t/stats` declares no output field `cont`
  --> tools/graphs/g.yaml:7:43
  |
7 |     assign: {out: \"${result.stdout}\", n: \"${result.cont}\", c: \"${result.count}\"}
  |                                           ^^^^^^^^^^^^^^
   = field: nodes.start.assign.n
   = help: did you mean `count`? the output fields of `t/stats` are stdout, success, count

checked 6 files: 0 errors, 1 warning
",
        )
        .status(1)
        .run();
    // With `additionalProperties: true` any field may be there.
    graph_reading_outputs(&format!("{STATS_OUTPUTS}  additionalProperties: true\n"))
        .args(&["check", "--deny-warnings"])
        .stdout("checked 6 files: 0 errors, 0 warnings\n")
        .status(0)
        .run();
    // The graph runs, reading the tool's own `stdout` and `success`.
    graph_reading_outputs(STATS_OUTPUTS)
        .args(&["run", "graphs/g", "--quiet"])
        .stdout("\"x\"\n")
        .status(0)
        .run();
}

#[test]
fn without_outputs_old_spellings_are_notes_that_deny_warnings_lets_pass() {
    graph_reading_outputs("")
        .args(&["check", "--deny-warnings"])
        .stdout("note[L006]: `result.stdout` is the old step-record spelling: a step's `result` is now its output (parsed as JSON, else the text)
  --> tools/graphs/g.yaml:7:20
  |
7 |     assign: {out: \"${result.stdout}\", n: \"${result.cont}\", c: \"${result.count}\"}
  |                    ^^^^^^^^^^^^^^^^
   = field: nodes.start.assign.out
   = help: did you mean `result`? (or declare the tool's `outputs` when it is a field of its own output)

note[L006]: `result.success` is the old step-record spelling: the process outcome of a step is now under `run`
  --> tools/graphs/g.yaml:9:26
  |
9 |       - {to: done, when: result.success}
  |                          ^^^^^^^^^^^^^^
   = field: nodes.start.next[0].when
   = help: did you mean `run.success`? (or declare the tool's `outputs` when it is a field of its own output)

checked 6 files: 0 errors, 0 warnings, 2 notes
")
        .status(0)
        .run();
    let o = graph_reading_outputs("")
        .args(&["check", "--format", "json"])
        .status(0)
        .run();
    let severities: Vec<&str> = o
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["severity"].as_str().unwrap())
        .collect::<Vec<_>>()
        .into_iter()
        .map(|s| if s == "note" { "note" } else { "other" })
        .collect();
    assert_eq!(severities, ["note", "note"]);
}

#[test]
fn an_outputs_schema_uses_the_parameters_subset() {
    graph_reading_outputs("outputs: {type: object, properties: {count: {type: integer, format: int32}}}\n")
        .args(&["run", "t/stats"])
        .stderr(&("error[S002]: unsupported schema keyword `format`; supported: type, properties, required, default, enum, additionalProperties, items, description, title, examples, minimum, maximum, minLength, maxLength, minItems, maxItems
  --> tools/t/stats.yaml:2:69
  |
2 | outputs: {type: object, properties: {count: {type: integer, format: int32}}}
  |                                                                     ^
   = field: outputs.properties.count.format
   = help: see docs/tools.md for the supported schema subset
".to_string() + &refusal("t/stats", 1)))
        .status(2)
        .run();
}

/// A project whose tool `t/x` has `args: [<first>, <second>]` on line 4.
fn with_args(first: &str, second: &str) -> Test {
    Test::new().copy("tools/runtimes").tool(
        "t/x",
        &format!(
            "executor: runtimes/subprocess\nconfig:\n  command: echo\n  args: [\"{first}\", \"{second}\"]\n"
        ),
    )
}

/// The `  --> file:line:col` lines of a human report.
fn arrows(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("  --> ")).collect()
}

#[test]
fn a_file_reports_its_first_twenty_diagnostics_then_a_count_of_the_rest() {
    // 25 unknown parameters, columns 11, 17, 23, …
    let p = with_args(&"{nope}".repeat(25), "x");
    let o = p.then(&["check"]).status(1).run();
    let want: Vec<String> = (0..20)
        .map(|k| format!("  --> tools/t/x.yaml:4:{}", 11 + 6 * k))
        .chain(["  --> tools/t/x.yaml:4:131".to_string()])
        .collect();
    assert_eq!(arrows(&o.stdout), want);
    assert!(
        normalise(&o.stdout).ends_with(
            "   = help: the parameters here are `{tool_path}`, `{tool_dir}`, `{tool_parent}`, `{project_path}`, `{params_json}`, `{runtime_dir}`, `{args}`, `{cwd}`, `{timeout}`, `{max_output_bytes}`, `{command}`\n\n\
             error[strata]: 5 more diagnostics of this file are not shown (5 errors)\n  --> tools/t/x.yaml:4:131\n   \
             = help: a file shows its first 20 diagnostics, errors first: fix them, then check again\n\n\
             checked: 25 errors, 0 warnings\n"
        ),
        "{}",
        o.stdout
    );
    let json = p.then(&["check", "--json"]).status(1).run().json();
    let all = json.as_array().unwrap();
    assert_eq!(all.len(), 21);
    assert!(all[..20].iter().all(|d| d["code"] == "R001"));
    assert_eq!(
        all[20],
        serde_json::json!({
            "kind": "limit",
            "message": "5 more diagnostics of this file are not shown (5 errors)",
            "hint": "a file shows its first 20 diagnostics, errors first: fix them, then check again",
            "file": "tools/t/x.yaml", "line": 4, "column": 131,
            "severity": "error", "code": "strata",
            "omitted": [{"code": "R001", "severity": "error", "count": 5}]
        })
    );
    conforms(&json, "check");
}

#[test]
fn the_diagnostics_a_file_shows_are_its_errors_first_and_allow_is_exact() {
    // 25 warnings (`$A`, L008), then one error (`{nope}`, R001) further along the line.
    let p = with_args(&["$A"; 25].join(" "), "{nope}");
    let o = p.then(&["check"]).status(1).run();
    let shown: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
        .map(|l| &l[..l.find(']').unwrap() + 1])
        .collect();
    let mut want = vec!["warning[L008]"; 19];
    want.extend(["error[R001]", "warning[strata]"]);
    assert_eq!(shown, want);
    assert!(
        normalise(&o.stdout).ends_with(
            "warning[strata]: 6 more diagnostics of this file are not shown (6 warnings)\n  --> tools/t/x.yaml:4:68\n   \
             = help: a file shows its first 20 diagnostics, errors first: fix them, then check again\n\n\
             checked: 1 error, 25 warnings\n"
        ),
        "{}",
        o.stdout
    );
    // Left out by --allow, the warnings are not counted, shown or not.
    let o = p.then(&["check", "--allow", "L008"]).status(1).run();
    assert_eq!(arrows(&o.stdout), ["  --> tools/t/x.yaml:4:89"]);
    assert!(normalise(&o.stdout).ends_with("\nchecked: 1 error, 0 warnings\n"));
    p.then(&["check", "--allow", "L008", "--deny-warnings"])
        .status(1)
        .run();
}

#[test]
fn a_refused_run_shows_the_first_twenty_diagnostics_of_a_file_too() {
    let o = with_args(&"{nope}".repeat(25), "x")
        .args(&["run", "t/x"])
        .status(2)
        .run();
    assert_eq!(arrows(&o.stderr).len(), 21, "{}", o.stderr);
    assert!(
        o.stderr.ends_with(
            "error[strata]: 5 more diagnostics of this file are not shown (5 errors)\n  --> tools/t/x.yaml:4:131\n   \
             = help: a file shows its first 20 diagnostics, errors first: fix them, then check again\n\n\
             error[check]: `t/x` was not run: 25 errors found\n   \
             = help: `strata check` lists every error and warning of the project\n"
        ),
        "{}",
        o.stderr
    );
}
