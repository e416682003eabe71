//! End-to-end tests of the progress of directive runs: a line per action start and end and
//! per hook on standard error, `--quiet`, `--json` events, and colour with `--color always`.

mod common;
use common::{timeless, Test};

use serde_json::Value;

/// Prints its `text` parameter.
const SAY: &str = r#"description: prints its text
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    text: {type: string}
  required: [text]
config:
  command: printf
  args: ["%s\n", "{text}"]
"#;

/// Fails with two lines on standard error.
const FAIL: &str = r#"description: fails
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "echo first >&2; echo 'last words' >&2; exit 4"]
"#;

/// Two actions, a hook on each action's end, and a failing action that does not stop it.
const TWO: &str = "---\nname: two\nhooks:\n  - {id: note, event: after_action, action: {tool: t/say, params: {text: done}}}\nactions:\n  - {id: first, tool: t/say, params: {text: one}}\n  - {id: broken, tool: t/fail, continue_on_error: true}\n  - {id: second, tool: t/say, params: {text: two}}\n---\nSaid ${steps.first.result} and ${steps.second.result}.\n";

fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/say", SAY)
        .tool("t/fail", FAIL)
        .file("directives/two.md", TWO)
}

const REPORT: &str = "directive two: completed\n\n--- prompt ---\nSaid one and two.\n\n--- actions ---\n[completed] first (t/say)\n    | one\n[failed] broken (t/fail): tool `t/fail` exited with code 4\n    ! first\n    ! last words\n[completed] second (t/say)\n    | two\n\n--- hooks ---\n[completed] note on after_action (t/say)\n[completed] note on after_action (t/say)\n";

#[test]
fn a_directive_prints_a_line_per_action_start_and_end_and_per_hook() {
    let o = project()
        .args(&["run", "directives/two.md"])
        .stdout(REPORT)
        .status(0)
        .run();
    assert_eq!(
        timeless(&o.stderr),
        "start first (t/say)\n\
         end first (t/say): completed in N ms\n\
         hook note on after_action (t/say): completed\n\
         start broken (t/fail)\n\
         end broken (t/fail): failed in N ms: tool `t/fail` exited with code 4\n\
         start second (t/say)\n\
         end second (t/say): completed in N ms\n\
         hook note on after_action (t/say): completed\n"
    );
}

#[test]
fn quiet_prints_the_report_alone() {
    project()
        .args(&["run", "directives/two.md", "--quiet"])
        .stdout(REPORT)
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn json_prints_one_event_per_line_on_stderr_and_the_report_on_stdout() {
    let o = project()
        .args(&["run", "directives/two.md", "--json"])
        .status(0)
        .run();
    let events: Vec<Value> = o
        .stderr
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("one JSON object a line");
            if let Some(ms) = v.get_mut("elapsed_ms") {
                *ms = Value::from(0);
            }
            v
        })
        .collect();
    let hook = serde_json::json!({"event": "hook", "id": "note", "on": "after_action",
        "tool": "t/say", "status": "completed", "error": null});
    assert_eq!(
        events,
        vec![
            serde_json::json!({"event": "action_started", "index": 0, "id": "first", "tool": "t/say"}),
            serde_json::json!({"event": "action_finished", "index": 0, "id": "first", "tool": "t/say",
                "status": "completed", "elapsed_ms": 0, "error": null, "stderr": null}),
            hook.clone(),
            serde_json::json!({"event": "action_started", "index": 1, "id": "broken", "tool": "t/fail"}),
            serde_json::json!({"event": "action_finished", "index": 1, "id": "broken", "tool": "t/fail",
                "status": "failed", "elapsed_ms": 0, "error": "tool `t/fail` exited with code 4",
                "stderr": "first\nlast words"}),
            serde_json::json!({"event": "action_started", "index": 2, "id": "second", "tool": "t/say"}),
            serde_json::json!({"event": "action_finished", "index": 2, "id": "second", "tool": "t/say",
                "status": "completed", "elapsed_ms": 0, "error": null, "stderr": null}),
            hook,
        ]
    );
    let report: Value = serde_json::from_str(&o.stdout).expect("the report, one document");
    assert_eq!(report["status"], "completed");
    assert_eq!(report["actions"][1]["run"]["stderr"], "first\nlast words\n");
}

#[test]
fn an_action_whose_parameters_cannot_render_ends_without_starting() {
    let why = "context error at actions[1].params.text 0..22: context path `steps.a.result.nope` not found (hint: strict mode turns missing values into errors)";
    let o = project()
        .file(
            "directives/bad.md",
            "---\nname: bad\nactions:\n  - {id: a, tool: t/say, params: {text: one}}\n  - {id: b, tool: t/say, params: {text: '${steps.a.result.nope}'}}\n---\n",
        )
        .args(&["run", "directives/bad.md", "--strict"])
        .status(1)
        .run();
    assert_eq!(
        timeless(&o.stderr),
        format!(
            "start a (t/say)\nend a (t/say): completed in N ms\nend b (t/say): failed: {why}\n"
        )
    );
}

#[test]
fn progress_is_coloured_with_color_always_and_plain_with_no_color() {
    let o = project()
        .args(&["--color", "always", "run", "directives/two.md"])
        .status(0)
        .run();
    let lines: Vec<String> = timeless(&o.stderr).lines().map(String::from).collect();
    assert_eq!(
        lines[1],
        "end first (t/say): \u{1b}[32mcompleted\u{1b}[0m in N ms"
    );
    assert_eq!(
        lines[4],
        "end broken (t/fail): \u{1b}[1m\u{1b}[31mfailed\u{1b}[0m in N ms: tool `t/fail` exited with code 4"
    );
    let plain = o
        .then(&["run", "directives/two.md"])
        .env("NO_COLOR", "1")
        .status(0)
        .run();
    assert!(!plain.stderr.contains('\u{1b}'), "{}", plain.stderr);
}
