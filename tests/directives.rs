//! End-to-end tests of `strata run directives/…`: the shipped directives and the faults of
//! issue 4, through the real binary and real tools, each in a scratch copy of the project.

mod common;
use common::{refusal, Test};

use serde_json::Value;

/// A scratch project holding a copy of the shipped tools and directives.
fn project() -> Test {
    Test::new().copy("tools").copy("directives")
}

#[test]
fn greet_uses_all_four_input_forms_with_defaults() {
    project()
        .args(&["run", "directives/greet.md", "--input", "name=Ann", "--quiet"])
        .stdout("directive greet: completed\n\n--- prompt ---\nSay hello to Ann, 1 time(s); the tool printed 16 characters.\n\n--- actions ---\n[completed] say (examples/echo)\n    | Hello, Ann! (x1)\n")
        .stderr("")
        .status(0)
        .run()
        .then(&[
            "run",
            "directives/greet.md",
            "--input",
            "name=Ann",
            "--input",
            "greeting=Hi",
            "--input",
            "title=Dr. ",
            "--input",
            "mark=?",
            "--input",
            "times=2",
        ])
        .stdout("directive greet: completed\n\n--- prompt ---\nSay hello to Ann, 2 time(s); the tool printed 17 characters.\n\n--- actions ---\n[completed] say (examples/echo)\n    | Hi, Dr. Ann? (x2)\n")
        .status(0).run();
}

#[test]
fn word_report_chains_two_tools_through_steps() {
    project()
        .args(&[
            "run",
            "directives/word_report.md",
            "--input",
            "text=one two three",
        ])
        .stdout("directive word_report: completed\n\n--- prompt ---\nThe text has 3 words and 13 characters.\nThe report listed 3 items (exit 0).\n\n--- actions ---\n[completed] count (examples/count)\n    | {\"words\":3,\"characters\":13}\n[completed] report (examples/numbered)\n    | Words: 3\n    | 1. item 1\n    | 2. item 2\n    | 3. item 3\n")
        .status(0)
        .run();
}

#[test]
fn release_check_hooks_log_every_event_through_a_tool() {
    let o = project()
        .args(&[
            "run",
            "directives/release_check.md",
            "--input",
            "version=1.2.3 $(id)",
        ])
        .stdout("directive release_check: completed\n\n--- prompt ---\nRelease check for 1.2.3 $(id) (fast): 2 part(s).\n\n--- actions ---\n[completed] announce (examples/echo)\n    | checking 1.2.3 $(id)\n[completed] parts (examples/words)\n    | {\"words\":2,\"characters\":11}\n\n--- hooks ---\n[completed] log_start on directive_started (examples/log)\n[completed] log_action on after_action (examples/log)\n[completed] log_action on after_action (examples/log)\n[completed] log_end on directive_completed (examples/log)\n")
        .status(0)
        .run();
    let log = std::fs::read_to_string(o.path().join(".strata/logs/hooks.log")).unwrap();
    assert_eq!(
        log,
        "start release_check on fast with 4 turns: 1.2.3 $(id)\ndone announce (exit 0)\ndone parts (exit 0)\nend release_check: completed\n"
    );
}

#[test]
fn json_prints_one_document() {
    let o = project()
        .args(&["run", "directives/greet.md", "--input", "name=Bo", "--json"])
        .status(0)
        .run();
    let mut v: Value = serde_json::from_str(&o.stdout).unwrap();
    v["actions"][0]["run"]["duration_ms"] = Value::Null;
    assert_eq!(
        v,
        serde_json::json!({
            "directive": "greet", "status": "completed", "stopped": null,
            "inputs": {"name": "Bo", "times": 1},
            "description": "Greets someone; every input but the name is optional",
            "prompt": "Say hello to Bo, 1 time(s); the tool printed 15 characters.\n",
            "actions": [{"id": "say", "tool": "examples/echo", "params": {"message": "Hello, Bo! (x1)"}, "status": "completed",
                "result": "Hello, Bo! (x1)", "error": null,
                "run": {"success": true, "exit_code": 0, "signal": null, "stderr": "", "duration_ms": null, "truncated": false, "timed_out": false}}],
            "hooks": [], "warnings": [], "response": null
        })
    );
}

#[test]
fn dry_run_renders_everything_and_runs_nothing() {
    let o = project()
        .args(&[
            "run",
            "directives/release_check.md",
            "--input",
            "version=2.0",
            "--dry-run",
        ])
        .stdout("directive release_check: dry run\n\n--- prompt ---\nRelease check for 2.0 (fast):  part(s).\n\n--- actions ---\n[dry run] announce (examples/echo)\n    params: {\"message\":\"checking 2.0\"}\n[dry run] parts (examples/words)\n    params: {\"text\":\"2.0\"}\n\n--- hooks ---\n[dry run] log_start on directive_started (examples/log)\n")
        .stderr("hook log_start on directive_started (examples/log): dry run\nwarning[context]: context path `steps.parts.result.words` not found (body)\n")
        .status(0)
        .run();
    assert!(!o.path().join(".strata").exists());
}

#[test]
fn inputs_are_checked_before_anything_runs() {
    let p = project();
    let cases: [(&[&str], &str); 3] = [
        (&["--input", "nme=Ann"], "error[inputs]: unknown input `nme`; did you mean `name`?\n   = help: the inputs are `name`, `greeting`, `title`, `mark`, `times`\n"),
        (&["--input", "greeting=Hi"], "error[inputs]: missing required input `name`\n   = help: give each as --input NAME=VALUE\n"),
        (&["--input", "name=A", "--input", "times=many"], "error[inputs]: input `times` must be an integer, got `many`\n"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", "directives/greet.md"];
        args.extend_from_slice(extra);
        p.then(&args).stderr(want).stdout("").status(2).run();
    }
}

#[test]
fn bad_directives_are_refused_with_file_line_and_column() {
    let mut p = project();
    // Each is refused by the gate, with the check's diagnostic (its code, file, line and
    // column) and the refusal.
    let cases = [
        ("---\nname: [x\n---\n", "error[S002]: YAML syntax error: while parsing a flow sequence, expected ',' or ']'\n  --> directives/bad.md:3:1\n  |\n3 | ---\n  | ^\n"),
        ("---\nname: x\n---\nHello {input:who\n", "error[S001]: unclosed `{input:`: no matching `}`\n  --> directives/bad.md:4:7\n  |\n4 | Hello {input:who\n  |       ^^^^^^^^^^\n   = field: body\n   = help: write `{input:key}`, `{input:key?}`, `{input:key:default}` or `{input:key|default}`; keys are letters, digits and `_`\n"),
        ("---\nname: x\nactions:\n  - {id: a, tool: examples/ech}\n---\n", "error[R007]: unknown tool `examples/ech`\n  --> directives/bad.md:4:19\n  |\n4 |   - {id: a, tool: examples/ech}\n  |                   ^\n   = field: actions[0].tool\n   = help: did you mean `examples/echo`?\n"),
        ("---\nname: x\nhooks:\n  - {id: h, event: on_start, action: {tool: examples/log}}\n---\n", "error[R008]: unknown event `on_start`\n  --> directives/bad.md:4:20\n  |\n4 |   - {id: h, event: on_start, action: {tool: examples/log}}\n  |                    ^\n   = field: hooks[0].event\n   = help: the events are `directive_started`, `before_action`, `after_action`, `action_failed`, `limit_reached`, `directive_completed`\n"),
        ("---\nname: x\nactions:\n  - {id: a, tool: examples/echo, params: {message: '${steps.b.result.stdout}'}}\n  - {id: b, tool: examples/echo}\n---\n", "error[R006]: action `a` refers to `b`, which runs after it (`steps.b.result.stdout`)\n  --> directives/bad.md:4:53\n  |\n4 |   - {id: a, tool: examples/echo, params: {message: '${steps.b.result.stdout}'}}\n  |                                                     ^^^^^^^^^^^^^^^^^^^^^^^^\n   = field: actions[0].params.message\n"),
    ];
    for (text, want) in cases {
        p = p.file("directives/bad.md", text);
        p.then(&["run", "directives/bad.md"])
            .stderr(&(want.to_string() + &refusal("directives/bad.md", 1)))
            .status(2)
            .stdout("")
            .run();
    }
}

#[test]
fn a_failing_action_stops_the_directive_and_reports_what_ran() {
    let o = project()
        .tool("t/fail", "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"echo broken >&2; exit 4\"]\n")
        .file(
            "directives/fails.md",
            "---\nname: fails\nhooks:\n  - {id: why, event: action_failed, action: {tool: examples/log, params: {line: '${action.id}: ${error.message} (${run.exit_code})'}}}\nactions:\n  - {id: first, tool: examples/echo, params: {message: one}}\n  - {id: boom, tool: t/fail}\n  - {id: never, tool: examples/echo}\n---\nDone.\n",
        )
        .args(&["run", "directives/fails.md"])
        .stdout("directive fails: failed\nstopped: action `boom` failed: tool `t/fail` exited with code 4\n\n--- prompt ---\nDone.\n\n--- actions ---\n[completed] first (examples/echo)\n    | one\n[failed] boom (t/fail): tool `t/fail` exited with code 4\n    ! broken\n[skipped] never (examples/echo): the directive stopped before this action\n\n--- hooks ---\n[completed] why on action_failed (examples/log)\n")
        .status(1)
        .run();
    let log = std::fs::read_to_string(o.path().join(".strata/logs/hooks.log")).unwrap();
    assert_eq!(log, "boom: tool `t/fail` exited with code 4 (4)\n");
}

#[test]
fn limits_stop_cleanly_and_fire_limit_reached() {
    let hook = "hooks:\n  - {id: lim, event: limit_reached, action: {tool: examples/log, params: {line: '${limit_code} at ${current_value}'}}}\n";
    let o = project()
        .tool(
            "t/sleep",
            "executor: runtimes/subprocess\nconfig:\n  command: sleep\n  args: [\"5\"]\n",
        )
        .file(
            "directives/turns.md",
            format!("---\nname: turns\nlimits: {{turns: 1}}\n{hook}actions:\n  - {{id: a, tool: examples/echo}}\n  - {{id: b, tool: examples/echo}}\n---\n"),
        )
        .args(&["run", "directives/turns.md"])
        .stdout("directive turns: limited\nstopped: limit `turns` reached (1 of 1)\n\n--- prompt ---\n\n--- actions ---\n[completed] a (examples/echo)\n    | hello from strata\n[skipped] b (examples/echo): the directive stopped before this action\n\n--- hooks ---\n[completed] lim on limit_reached (examples/log)\n")
        .status(3)
        .run();
    let slow = o.then(&["run", "directives/slow.md", "--json"]).file(
        "directives/slow.md",
        "---\nname: slow\nlimits: {timeout: 1}\nactions:\n  - {id: nap, tool: t/sleep}\n  - {id: after, tool: examples/echo}\n---\n",
    );
    let started = std::time::Instant::now();
    let o = slow.status(3).run();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the directive timeout stops the action"
    );
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["status"], "limited");
    assert_eq!(v["actions"][0]["status"], "failed");
    assert_eq!(v["actions"][0]["run"]["timed_out"], true);
    assert_eq!(v["actions"][0]["error"]["kind"], "timeout");
    assert_eq!(v["actions"][1]["status"], "skipped");
    assert_eq!(o.code, Some(3));
}

#[test]
fn project_hooks_fire_and_a_directive_hook_with_the_same_id_replaces_one() {
    let o = project()
        .file(
            "hooks/audit.yaml",
            "- {id: audit, event: directive_completed, action: {tool: examples/log, params: {line: 'project audit ${directive}'}}}\n- {id: note, event: directive_started, action: {tool: examples/log, params: {line: 'project note'}}}\n",
        )
        .file(
            "directives/hooked.md",
            "---\nname: hooked\nhooks:\n  - {id: note, event: directive_started, action: {tool: examples/log, params: {line: 'directive note'}}}\n---\nHi\n",
        )
        .args(&["run", "directives/hooked.md"])
        .status(0)
        .run();
    let log = std::fs::read_to_string(o.path().join(".strata/logs/hooks.log")).unwrap();
    assert_eq!(log, "directive note\nproject audit hooked\n");
}

/// A project whose `directives/test/` holds a `tools/` folder of its own: the directives
/// under it still belong to the project of the current directory (its tools, its hooks).
fn project_with_nested_tools() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/say",
            "executor: runtimes/subprocess\nparameters: {type: object, properties: {text: {type: string}}, required: [text]}\nconfig: {command: echo, args: [\"{text}\"]}\n",
        )
        .file(
            "hooks/audit.yaml",
            "- {id: audit, event: directive_completed, action: {tool: t/say, params: {text: 'audit ${directive}'}}}\n",
        )
        .file(
            "directives/test/tools/fixture.yaml",
            "executor: runtimes/subprocess\nconfig: {command: 'true'}\n",
        )
        .file(
            "directives/test/a.md",
            "---\nname: a\nactions:\n  - {id: say, tool: t/say, params: {text: hello}}\n---\nSaid ${steps.say.result}.\n",
        )
}

const NESTED_TOOLS_OUT: &str = "directive a: completed\n\n--- prompt ---\nSaid hello.\n\n--- actions ---\n[completed] say (t/say)\n    | hello\n\n--- hooks ---\n[completed] audit on directive_completed (t/say)\n";

#[test]
fn a_directive_given_by_path_inside_the_current_project_belongs_to_it() {
    project_with_nested_tools()
        .args(&["run", "directives/test/a.md", "--quiet"])
        .stdout(NESTED_TOOLS_OUT)
        .stderr("")
        .status(0)
        .run()
        .then(&["check", "--deny-warnings"])
        .status(0)
        .run()
        .then(&["explain", "directives/test/a.md"])
        .status(0)
        .run();
}

#[test]
fn a_directive_outside_the_current_project_is_searched_upward_from_its_folder() {
    let other = project_with_nested_tools();
    let file = other.path().join("directives/test/a.md");
    // Run from another project: the file's own project is the nearest ancestor of its
    // folder holding tools/, here `directives/test/` itself.
    Test::new()
        .args(&["run", file.to_str().unwrap(), "--quiet"])
        .stdout("")
        .stderr(&("error[R007]: unknown tool `t/say`\n  --> a.md:4:21\n  |\n4 |   - {id: say, tool: t/say, params: {text: hello}}\n  |                     ^\n   = field: actions[0].tool\n   = help: run `strata tools` to list the tools\n".to_string() + &refusal("a.md", 1)))
        .status(2)
        .run();
    // `--project` names the project whatever the file's place.
    Test::new()
        .args(&[
            "run",
            file.to_str().unwrap(),
            "--quiet",
            "--project",
            other.path().to_str().unwrap(),
        ])
        .stdout(NESTED_TOOLS_OUT)
        .status(0)
        .run();
}

/// A project whose directive names the tool of its action by an input.
fn project_with_tool_from_input() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/a",
            "executor: runtimes/subprocess\nparameters: {type: object, properties: {text: {type: string}}}\nconfig: {command: echo, args: [\"A {text}\"]}\n",
        )
        .tool(
            "t/b",
            "executor: runtimes/subprocess\nparameters: {type: object, properties: {text: {type: string}}}\nconfig: {command: echo, args: [\"B {text}\"]}\n",
        )
        .tool(
            "t/typo",
            "executor: runtimes/subprocess\nparameters: {type: object, properties: {text: {type: string}}}\nconfig: {command: echo, args: [\"{txt}\"]}\n",
        )
        .file(
            "directives/pick.md",
            "---\nname: pick\ninputs:\n  - {name: child, type: string, required: true}\nactions:\n  - {id: go, tool: \"{input:child}\", params: {text: hi}}\n---\nRan ${steps.go.result}.\n",
        )
}

#[test]
fn an_action_tool_named_by_an_input_is_resolved_then_checked() {
    let p = project_with_tool_from_input();
    // The check cannot know the tool: it checks the input reference, and leaves the tool
    // to the run (t/typo's own R001 is reported for t/typo).
    let o = p.then(&["check", "--format", "json"]).status(1).run();
    let codes: Vec<(String, String)> = o
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["file"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("U002".to_string(), "tools/t/typo.yaml".to_string()),
            ("R001".to_string(), "tools/t/typo.yaml".to_string())
        ]
    );
    p.then(&["run", "directives/pick.md", "--input", "child=t/b", "--quiet"])
        .stdout("directive pick: completed\n\n--- prompt ---\nRan B hi.\n\n--- actions ---\n[completed] go (t/b)\n    | B hi\n")
        .stderr("")
        .status(0)
        .run();
    // An unknown tool is refused before anything runs, with the usual did-you-mean.
    p.then(&["run", "directives/pick.md", "--input", "child=t/c", "--quiet"])
        .stdout("")
        .stderr("error[request]: unknown tool `t/c` (from `{input:child}`)\n  --> directives/pick.md:6:20\n  |\n6 |   - {id: go, tool: \"{input:child}\", params: {text: hi}}\n  |                    ^\n   = field: actions[0].tool\n   = help: did you mean `t/b`?\n")
        .status(2)
        .run();
    // A tool the check rejects is refused by the gate, as when it is named directly.
    let o = p
        .then(&[
            "run",
            "directives/pick.md",
            "--input",
            "child=t/typo",
            "--json",
            "--quiet",
        ])
        .status(1)
        .run();
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["actions"][0]["tool"], "t/typo");
    assert_eq!(v["actions"][0]["error"]["kind"], "check");
    assert_eq!(
        v["actions"][0]["error"]["message"],
        "check error at $: `t/typo` was not run: 1 error found (hint: `strata check` lists every error and warning of the project)"
    );
    assert_eq!(o.code, Some(1));
}
