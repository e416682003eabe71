//! End-to-end tests of `strata run --batch` (docs/batch.md, "strata run --batch"): JSON Lines
//! requests to run tools, one reply line per request with the step record of the run,
//! through the same gate, limits, signals and cleanup as `strata run`; and the gate's
//! admissions remembered on disk (`.strata/gate/`) between runs of `strata run`.

mod common;
use common::Test;

/// A project with the primitive and tools that succeed, echo, fail, sleep and are broken.
fn project() -> Test {
    Test::new()
        .copy("tools/runtimes/subprocess.yaml")
        .tool(
            "t/ok",
            "executor: runtimes/subprocess\nconfig: {command: \"true\"}\n",
        )
        .tool(
            "t/echo",
            "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    word: {type: string}\n  required: [word]\nconfig:\n  command: printf\n  args: [\"%s\\n\", \"{word}\"]\n",
        )
        .tool(
            "t/fail",
            "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"echo no >&2; exit 3\"]\n",
        )
        .tool(
            "t/slow",
            "executor: runtimes/subprocess\nconfig: {command: sleep, args: [\"30\"]}\n",
        )
        .tool(
            "t/broken",
            "executor: runtimes/subprocess\nconfig: {command: touch, args: [\"ran-{nope}\"]}\n",
        )
}

/// Replies with every `"duration_ms":N` made `"duration_ms":0`.
fn timeless(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find("\"duration_ms\":") {
        let (head, tail) = rest.split_at(k + "\"duration_ms\":".len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        out.push('0');
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

const RUN_OK: &str = r#""run":{"success":true,"exit_code":0,"signal":null,"stderr":"","duration_ms":0,"truncated":false,"timed_out":false}"#;

#[test]
fn every_request_gets_its_reply_in_order() {
    let ran = project()
        .args(&["run", "--batch"])
        .stdin(concat!(
            "{\"id\": 1, \"tool\": \"t/ok\"}\n",
            "{\"tool\": \"t/echo\", \"params\": {\"word\": \"hi\"}}\n",
            "\n",
            "{\"id\": \"j\", \"tool\": \"t/echo\", \"params\": {\"word\": \"{\\\"a\\\": [1]}\"}}\n",
            "{\"id\": 4, \"tool\": \"t/fail\"}\n",
        ))
        .status(0)
        .stderr("")
        .run();
    let expected = [
        format!(r#"{{"id":1,"ok":true,"record":{{"id":"t/ok","status":"completed","result":null,"error":null,{RUN_OK}}}}}"#),
        format!(r#"{{"ok":true,"record":{{"id":"t/echo","status":"completed","result":"hi","error":null,{RUN_OK}}}}}"#),
        format!(r#"{{"id":"j","ok":true,"record":{{"id":"t/echo","status":"completed","result":{{"a":[1]}},"error":null,{RUN_OK}}}}}"#),
        r#"{"id":4,"ok":true,"record":{"id":"t/fail","status":"failed","result":null,"error":{"kind":"tool_failed","message":"tool `t/fail` exited with code 3"},"run":{"success":false,"exit_code":3,"signal":null,"stderr":"no\n","duration_ms":0,"truncated":false,"timed_out":false}}}"#.to_string(),
    ];
    assert_eq!(timeless(&ran.stdout), expected.join("\n") + "\n");
}

#[test]
fn a_request_that_runs_nothing_gets_an_error_and_the_next_is_served() {
    const HINT: &str = r#""hint":"a request is one JSON object: {\"tool\": …, \"params\": {…}, \"id\", \"strict\", \"timeout\"}""#;
    let ran = project()
        .args(&["run", "--batch"])
        .stdin(concat!(
            "{\"id\": 1, \"tool\": \"t/nope\"}\n",
            "{\"id\": 2, \"tool\": \"t/echo\"}\n",
            "{\"id\": 3, \"tool\": \"t/ok\", \"bogus\": 1}\n",
            "not json\n",
            "  \n",
            "{\"id\": 6, \"tool\": \"t/ok\", \"timeout\": -1}\n",
            "{\"id\": 7, \"tool\": \"t/ok\"}\n",
            // Lines that are no valid request still get their id back, when it can be read.
            "{\"id\": 8, \"tool\": \"t/ok\", \"tool\": \"t/echo\"}\n",
            "{\"id\": \"nine\", \"tool\": \"t/ok\", \"timeout\": 1e400}\n",
            "{\"id\": 10, \"tool\": \"t/echo\", \"params\": {\"word\": 1e999, \"word\": 1}}\n",
            "{\"id\": 11, \"id\": 12, \"tool\": \"t/ok\"}\n",
        ))
        .status(0)
        .run();
    let expected = [
        r#"{"id":1,"ok":false,"error":{"kind":"unknown_tool","message":"unknown tool `t/nope`","hint":"did you mean `t/ok`?"}}"#.to_string(),
        r#"{"id":2,"ok":false,"error":{"kind":"invalid","message":"invalid parameters for `t/echo`: missing required parameter `word`","hint":"the parameters are: word (string, required)"}}"#.to_string(),
        format!(r#"{{"id":3,"ok":false,"error":{{"kind":"request","message":"malformed request: unknown field `bogus`, expected one of `id`, `tool`, `params`, `strict`, `timeout`",{HINT}}}}}"#),
        format!(r#"{{"ok":false,"error":{{"kind":"request","message":"malformed request: expected ident at line 1 column 2",{HINT}}}}}"#),
        format!(r#"{{"ok":false,"error":{{"kind":"request","message":"empty request",{HINT}}}}}"#),
        format!(r#"{{"id":6,"ok":false,"error":{{"kind":"request","message":"timeout must be a positive number of seconds, not -1",{HINT}}}}}"#),
        format!(r#"{{"id":7,"ok":true,"record":{{"id":"t/ok","status":"completed","result":null,"error":null,{RUN_OK}}}}}"#),
        format!(r#"{{"id":8,"ok":false,"error":{{"kind":"request","message":"malformed request: duplicate key `tool` at line 1 column 32",{HINT}}}}}"#),
        format!(r#"{{"id":"nine","ok":false,"error":{{"kind":"request","message":"malformed request: number out of range at line 1 column 47",{HINT}}}}}"#),
        format!(r#"{{"id":10,"ok":false,"error":{{"kind":"request","message":"malformed request: number out of range at line 1 column 53",{HINT}}}}}"#),
        format!(r#"{{"ok":false,"error":{{"kind":"request","message":"malformed request: duplicate key `id` at line 1 column 15",{HINT}}}}}"#),
    ];
    assert_eq!(timeless(&ran.stdout), expected.join("\n") + "\n");
}

#[test]
fn the_gate_refuses_what_check_rejects_and_nothing_runs() {
    let ran = project()
        .args(&["run", "--batch"])
        .stdin("{\"id\": 1, \"tool\": \"t/broken\"}\n")
        .status(0)
        .run();
    assert_eq!(
        ran.stdout,
        concat!(
            r#"{"id":1,"ok":false,"error":{"kind":"check","message":"`t/broken` was not run: 1 error found","hint":"`strata check` lists every error and warning of the project","diagnostics":[{"kind":"unknown_name","message":"unknown parameter `{nope}`: it is left as written","path":"config.args[0]","span":[4,10],"hint":"the parameters here are `{tool_path}`, `{tool_dir}`, `{tool_parent}`, `{project_path}`, `{params_json}`, `{runtime_dir}`, `{args}`, `{cwd}`, `{timeout}`, `{max_output_bytes}`, `{command}`","file":"tools/t/broken.yaml","line":2,"column":38,"severity":"error","code":"R001"}]}}"#,
            "\n"
        )
    );
    assert!(!ran.path().join("ran-{nope}").exists(), "the tool ran");
}

#[test]
fn a_timeout_caps_the_tool_and_its_group_is_killed() {
    let ran = project()
        .args(&["run", "--batch"])
        .stdin("{\"tool\": \"t/slow\", \"timeout\": 0.2}\n")
        .status(0)
        .run();
    assert_eq!(
        timeless(&ran.stdout),
        concat!(
            r#"{"ok":true,"record":{"id":"t/slow","status":"failed","result":null,"error":{"kind":"timeout","message":"tool `t/slow` timed out"},"run":{"success":false,"exit_code":null,"signal":9,"stderr":"","duration_ms":0,"truncated":false,"timed_out":true}}}"#,
            "\n"
        )
    );
    assert!(ran.elapsed.as_secs() < 20, "{:?}", ran.elapsed);
}

/// A caller that waits for each reply before it sends the next request gets it at once.
#[test]
fn each_reply_comes_as_soon_as_its_run_is_over() {
    let mut running = project().args(&["run", "--batch"]).status(0).start();
    running.write("{\"id\": 1, \"tool\": \"t/echo\", \"params\": {\"word\": \"one\"}}\n");
    let first = running.read_line();
    assert!(
        first.starts_with(
            r#"{"id":1,"ok":true,"record":{"id":"t/echo","status":"completed","result":"one""#
        ),
        "{first}"
    );
    running.write("{\"id\": 2, \"tool\": \"t/echo\", \"params\": {\"word\": \"two\"}}\n");
    let second = running.read_line();
    assert!(second.contains(r#""result":"two""#), "{second}");
    running.finish();
}

/// A signal ends the batch as it ends `strata run`: the running tool's group is killed and
/// strata dies of the signal, with no reply for the run cut short.
#[test]
fn a_signal_kills_the_running_tool_and_ends_the_batch() {
    let mut running = project()
        .args(&["run", "--batch"])
        .killed_by(libc::SIGTERM)
        .start();
    running.write("{\"id\": 1, \"tool\": \"t/ok\"}\n");
    assert!(running.read_line().starts_with(r#"{"id":1,"ok":true"#));
    running.write("{\"id\": 2, \"tool\": \"t/slow\"}\n");
    std::thread::sleep(std::time::Duration::from_millis(300));
    running.signal(libc::SIGTERM);
    let ran = running.finish();
    assert!(ran.elapsed.as_secs() < 20, "{:?}", ran.elapsed);
}

#[test]
fn batch_takes_no_tool_and_no_tool_options() {
    project().args(&["run", "--batch", "t/ok"]).status(2).run();
    project()
        .args(&["run", "--batch", "-p", "a=b"])
        .status(2)
        .run();
}

/// `strata run` remembers a tool it admitted in `.strata/gate/`; a changed tool is a new key,
/// checked again (and refused when broken): no stale admission lets it through.
#[test]
fn an_admission_on_disk_never_outlives_a_change() {
    let ran = project().args(&["run", "t/ok"]).status(0).run();
    let gate = ran.path().join(".strata/gate");
    assert_eq!(std::fs::read_dir(&gate).unwrap().count(), 1);
    ran.then(&["run", "t/ok"]).status(0).run();
    assert_eq!(
        std::fs::read_dir(&gate).unwrap().count(),
        1,
        "found, not stored again"
    );
    std::fs::write(
        ran.path().join("tools/t/ok.yaml"),
        "executor: runtimes/subprocess\nconfig: {command: \"true\", args: [\"{nope}\"]}\n",
    )
    .unwrap();
    let refused = ran.then(&["run", "t/ok"]).status(2).run();
    assert!(
        refused.stderr.contains("`t/ok` was not run: 1 error found"),
        "{}",
        refused.stderr
    );
    // A `.env` or setting changes the key as well.
    std::fs::write(
        ran.path().join("tools/t/ok.yaml"),
        "executor: runtimes/subprocess\nconfig: {command: \"true\"}\n",
    )
    .unwrap();
    ran.then(&["run", "t/ok"]).status(0).run();
    std::fs::write(ran.path().join(".env"), "A=1\n").unwrap();
    ran.then(&["run", "t/ok"]).status(0).run();
    assert_eq!(std::fs::read_dir(&gate).unwrap().count(), 2);
}

/// A project whose state directory cannot be made still runs its tools.
#[test]
fn a_project_without_a_writable_state_directory_still_runs() {
    project()
        .file(".strata", "not a directory")
        .args(&["run", "t/ok"])
        .status(0)
        .run();
}
