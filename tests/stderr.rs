//! A failed tool's standard error is shown — its tail, bounded, secrets redacted — in the
//! human output of directives and graphs, and kept in their JSON forms.

mod common;
use common::Test;

const LEAKY: &str = "executor: runtimes/subprocess
secrets: [API_TOKEN]
env_config:
  env: {API_TOKEN: \"${API_TOKEN}\"}
config:
  command: sh
  args: [\"-c\", \"i=0; while [ $i -lt 15 ]; do echo line $i >&2; i=$((i+1)); done; echo token=$API_TOKEN >&2; exit 2\"]
";

fn leaky() -> Test {
    Test::new()
        .shipped()
        .file("tools/t/leaky.yaml", LEAKY)
        .env("API_TOKEN", "hunter2")
}

#[test]
fn a_failed_action_shows_the_tail_of_its_stderr_with_secrets_redacted() {
    let tail: String = (6..15).map(|i| format!("    ! line {i}\n")).collect();
    let ran = leaky()
        .file(
            "directives/leak.md",
            "---\nname: leak\nactions:\n  - {id: a, tool: t/leaky}\n---\n",
        )
        .args(&["run", "directives/leak.md"])
        .status(1)
        .run();
    assert_eq!(
        ran.stdout,
        format!(
            "directive leak: failed\nstopped: action `a` failed: tool `t/leaky` exited with code 2\n\n\
             --- prompt ---\n\n--- actions ---\n[failed] a (t/leaky): tool `t/leaky` exited with code 2\n\
             {tail}    ! token=***\n"
        )
    );
    let json = leaky()
        .file(
            "directives/leak.md",
            "---\nname: leak\nactions:\n  - {id: a, tool: t/leaky}\n---\n",
        )
        .args(&["run", "directives/leak.md", "--json"])
        .status(1)
        .run();
    let stderr = json.json()["actions"][0]["run"]["stderr"].clone();
    assert!(stderr.as_str().unwrap().ends_with("line 14\ntoken=***\n"));
    assert!(!json.stdout.contains("hunter2"));
}

#[test]
fn a_failed_graph_step_shows_the_tail_of_its_stderr_with_secrets_redacted() {
    let ran = leaky()
        .file(
            "tools/graphs/leak.yaml",
            "kind: graph\nnodes:\n  a:\n    kind: action\n    tool: t/leaky\n",
        )
        .args(&["run", "graphs/leak", "--run-id", "r1"])
        .status(1)
        .run();
    let tail: String = (6..15).map(|i| format!("    ! line {i}\n")).collect();
    assert_eq!(
        ran.stderr,
        format!(
            "run r1: starting graphs/leak at `a`\n\
             step 1 a failed: tool `t/leaky` exited with code 2 (on_error: fail)\n\
             {tail}    ! token=***\n\
             run r1: failed after 1 step: node `a`: tool `t/leaky` exited with code 2\n"
        )
    );
    let checkpoint = ran.read(".strata/runs/r1/checkpoint.json");
    assert!(checkpoint.contains("\"failed\""), "{checkpoint}");
    assert!(!checkpoint.contains("hunter2"));
}

#[test]
fn a_failed_graph_step_in_json_events_keeps_its_kind_and_stderr() {
    let ran = leaky()
        .file(
            "tools/graphs/leak.yaml",
            "kind: graph\nnodes:\n  a:\n    kind: action\n    tool: t/leaky\n",
        )
        .args(&["run", "graphs/leak", "--run-id", "r1", "--json"])
        .status(1)
        .run();
    // Events go to standard error, one JSON object a line; stdout holds the result.
    let error: serde_json::Value = ran
        .stderr
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["event"] == "error")
        .expect("an error event");
    assert_eq!(error["error"]["kind"], "tool_failed");
    assert_eq!(
        error["error"]["message"],
        "tool `t/leaky` exited with code 2"
    );
    assert!(error["stderr"]
        .as_str()
        .unwrap()
        .ends_with("line 14\ntoken=***"));
}
