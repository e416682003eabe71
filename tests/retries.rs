//! End-to-end tests of `retries:` under `strata plan run`: a step whose tool fails runs again
//! as its declaration (over its tool's) allows, each attempt on the progress stream and the
//! policy and the attempt count in the step's record.

mod common;
use common::{timeless, Test};

use serde_json::{json, Value};

/// Fails (exit 1, `attempt N` on stderr) until its third run, counting runs in `count`.
const FLAKY: &str = r#"description: fails twice, then prints ok
executor: runtimes/subprocess
retries: {limit: 1, delay: 1ms}
config:
  command: sh
  args: ["-c", "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; if [ $n -lt 3 ]; then echo \"attempt $n\" >&2; exit 1; fi; echo ok"]
"#;

fn project(plan: &str) -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/flaky", FLAKY)
        .file("plans/p.yaml", plan)
}

#[test]
fn a_step_retries_its_failing_tool_each_attempt_shown_and_recorded() {
    let o = project("- id: a\n  tool: t/flaky\n  arguments: {}\n  retries: {limit: 3}\n")
        .args(&["plan", "run", "plans/p.yaml", "--run-id", "r"])
        .stdout("{\n  \"a\": \"ok\"\n}\n")
        .status(0)
        .run();
    assert_eq!(
        timeless(&o.stderr),
        "run r: plans/p.yaml, 1 steps in 1 levels, at most 4 at once
start a (t/flaky)
retry a (t/flaky): attempt 1 of 4 failed: tool `t/flaky` exited with code 1; again in 1ms
    ! attempt 1
retry a (t/flaky): attempt 2 of 4 failed: tool `t/flaky` exited with code 1; again in 1ms
    ! attempt 2
end a (t/flaky): completed in N ms
run r: completed (1 completed)
"
    );
}

#[test]
fn the_tool_limit_ends_the_retries_and_json_streams_every_attempt() {
    let o = project("- id: a\n  tool: t/flaky\n  arguments: {}\n")
        .args(&["plan", "run", "plans/p.yaml", "--json"])
        .status(1)
        .run();
    let events: Vec<Value> = o
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["step_started", "step_retrying", "step_finished"]);
    assert_eq!(events[1]["attempt"], json!(1));
    assert_eq!(events[1]["attempts"], json!(2));
    assert_eq!(events[1]["delay_ms"], json!(1));
    assert_eq!(events[1]["record"]["run"]["stderr"], json!("attempt 1\n"));
    let step = &o.json()["steps"][0];
    assert_eq!(step["status"], json!("failed"));
    assert_eq!(step["run"]["attempts"], json!(2));
    assert_eq!(step["run"]["retries"], json!({"limit": 1, "delay_ms": 1}));
    assert_eq!(step["run"]["stderr"], json!("attempt 2\n"));
}
