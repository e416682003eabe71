//! Hardening of plans, round 3 (issue 24, rows 2–4): references that multiply a large result
//! are counted against the output limits while they resolve; a plan run is durable before its
//! first step starts; loading, checking, `show` and `graph` are linear in steps and references.

mod common;
use common::{wait_for, Limit, Test};

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

/// Generous bounds that catch a hang or a memory bomb, not a speed.
const KILL_AFTER: Duration = Duration::from_secs(60);
const MEMORY: Limit = Limit::AddressSpace(4 << 30);

/// Prints its caller parameters as JSON.
const JSON_TOOL: &str = r#"description: prints its parameters as JSON
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    n: {type: integer}
    a: {}
config:
  command: printf
  args: ["%s\n", "{params_json}"]
"#;

/// Logs its name; the first time it runs as `s1` it writes its pid to `mark.pid` (the sign
/// that a step has started) and sleeps.
const MARK_TOOL: &str = r#"description: logs, may hold, prints JSON
executor: runtimes/bash
parameters:
  type: object
  properties:
    name: {type: string}
  required: [name]
config:
  script: mark.sh
"#;

const MARK_SCRIPT: &str = r#"printf '%s\n' "$PARAM_NAME" >> steps.log
if [ "$PARAM_NAME" = s1 ] && [ -e hold ]; then
  printf '%s\n' "$$" > mark.tmp
  mv mark.tmp mark.pid
  exec sleep 30
fi
printf '{"name": "%s"}\n' "$PARAM_NAME"
"#;

fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/json", JSON_TOOL)
        .tool("t/mark", MARK_TOOL)
        .file("tools/t/mark.sh", MARK_SCRIPT)
}

// ---------------------------------------------------------------------------------------------
// Row 2. A result referenced whole many times is counted against the output limits while the
// arguments resolve: the bomb stops early with a `limit` error.
// ---------------------------------------------------------------------------------------------

/// A request whose one step refers `n` times to a 64 KiB result.
fn bomb_request(n: usize) -> String {
    let refs = vec![json!("$step1"); n];
    json!({
        "id": 7,
        "plan": [
            {"tool": "t/json", "arguments": {}},
            {"tool": "t/json", "arguments": {"a": refs}},
        ],
        "results": {"step1": "x".repeat(64 << 10)},
    })
    .to_string()
        + "\n"
}

#[test]
fn references_multiplying_a_result_stop_at_the_output_limit_in_resolve() {
    let s = project();
    let ran = s
        .then(&["plan", "resolve", "--batch"])
        .stdin(bomb_request(10_000) + "{\"plan\": [{\"tool\": \"t/json\", \"arguments\": {}}]}\n")
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(0)
        .run();
    let lines: Vec<Value> = ran
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "{}",
        &ran.stdout[..ran.stdout.len().min(300)]
    );
    assert_eq!(
        lines[0]["steps"][1],
        json!({
            "id": "step2",
            "depends_on": ["step1"],
            "state": "failed",
            "error": {
                "kind": "limit",
                "message": "resolved arguments exceed 67108864 bytes"
            }
        })
    );
    assert_eq!(lines[1]["ok"], json!(true));
    assert!(
        ran.stdout.len() < 1 << 20,
        "a reply of {} bytes",
        ran.stdout.len()
    );
    if ran.peak_rss_kib > 0 {
        assert!(ran.peak_rss_kib < 200 << 10, "{} KiB", ran.peak_rss_kib);
    }
}

#[test]
fn the_project_output_limits_apply_to_resolve_and_to_run() {
    let s = project().file(
        "strata.yaml",
        "limits:\n  output_bytes_per_config: 1000000\n",
    );
    let ran = s
        .then(&["plan", "resolve", "--batch"])
        .stdin(bomb_request(100))
        .status(0)
        .run();
    let reply: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(
        reply["steps"][1]["error"]["message"],
        json!("resolved arguments exceed 1000000 bytes")
    );
    // Embedded references count too (the text they make), in `plan run` as in resolve.
    let big = "y".repeat(100_000);
    let plan = json!([
        {"id": "big", "tool": "t/json", "arguments": {"a": big}},
        {"id": "many", "tool": "t/json", "arguments": {"a": "{{big.result.a}}".repeat(20)}},
    ]);
    let ran = s
        .then(&["plan", "run", "plans/bomb.json", "--run-id", "b1", "--json"])
        .file("plans/bomb.json", plan.to_string())
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(1)
        .run();
    let report = ran.json();
    let many = &report["steps"][1];
    assert_eq!(many["status"], json!("failed"));
    assert_eq!(many["error"]["kind"], json!("limit"));
    assert_eq!(
        many["error"]["message"],
        json!("plans/bomb.json:1:100259: plan error at [1].arguments.a 160..176: resolved arguments exceed 1000000 bytes (hint: if this is intended, raise `limits.output_bytes_per_config` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG))"),
        "{many}"
    );
}

/// The project's output limits hold wherever a plan's references resolve: one step of an
/// exported workflow (`plan step`) and steps streamed on standard input, as in `plan run`.
#[test]
fn the_project_output_limits_apply_to_plan_step_and_to_streamed_steps() {
    let big = "y".repeat(100_000);
    let many =
        json!({"id": "many", "tool": "t/json", "arguments": {"a": "{{big.result.a}}".repeat(20)}});
    let plan = json!([{"id": "big", "tool": "t/json", "arguments": {"a": big}}, many]);
    let record = json!({"id": "big", "status": "completed", "result": {"a": big}, "error": null, "run": null});
    let s = project()
        .file(
            "strata.yaml",
            "limits:\n  output_bytes_per_config: 1000000\n",
        )
        .file("plans/bomb.json", plan.to_string())
        .file("records/big.json", record.to_string());
    let step = s
        .then(&[
            "plan",
            "step",
            "plans/bomb.json",
            "--step",
            "many",
            "--records",
            "records",
        ])
        .status(1)
        .run();
    let step: Value = serde_json::from_str(&step.stdout).unwrap();
    assert_eq!(step["error"]["kind"], json!("limit"), "{step}");
    let streamed = s
        .then(&["plan", "run", "-", "--run-id", "s1", "--json"])
        .stdin(format!(
            "{}\n{many}\n",
            json!({"id": "big", "tool": "t/json", "arguments": {"a": big}})
        ))
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(1)
        .run();
    let report = streamed.json();
    assert_eq!(
        report["steps"][1]["error"]["kind"],
        json!("limit"),
        "{report}"
    );
}

// ---------------------------------------------------------------------------------------------
// Row 3. A plan run is durable before its first step starts: killed as soon as a step has
// started, it resumes, and runs again only what its checkpoint does not hold.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_run_killed_as_its_first_step_starts_resumes() {
    let p = project().file(
        "plans/two.yaml",
        "- {id: s1, tool: t/mark, arguments: {name: s1}}\n\
         - {id: s2, tool: t/mark, arguments: {name: s2}, depends_on: [s1]}\n",
    );
    for round in 0..5 {
        let run = format!("k{round}");
        std::fs::write(p.path().join("hold"), "").unwrap();
        let _ = std::fs::remove_file(p.path().join("steps.log"));
        let _ = std::fs::remove_file(p.path().join("mark.pid"));
        let mut child = p
            .then(&["plan", "run", "plans/two.yaml", "--run-id", &run])
            .spawn();
        let pid = wait_for(&p.path().join("mark.pid"));
        child.kill().unwrap(); // SIGKILL, as soon as the first step started
        child.wait().unwrap();
        Command::new("kill").args(["-9", &pid]).status().unwrap();
        std::fs::remove_file(p.path().join("hold")).unwrap();
        let dir = p.path().join(".strata/runs").join(&run);
        assert!(dir.join("checkpoint.json").is_file(), "round {round}");
        assert!(dir.join("plan.json").is_file(), "round {round}");
        let o = p
            .then(&["plan", "run", "--resume", &run, "--quiet"])
            .stdout("{\n  \"s2\": {\n    \"name\": \"s2\"\n  }\n}\n")
            .status(0)
            .run();
        // s1 was killed before its end was recorded: it runs again; s2 once.
        assert_eq!(o.read("steps.log"), "s1\ns1\ns2\n", "round {round}");
    }
}

#[test]
fn a_run_directory_left_without_a_checkpoint_is_reported_and_started_again() {
    // What a start killed before it wrote anything leaves (no step ran before the
    // checkpoint was on disk).
    let p = project()
        .file(
            "plans/one.yaml",
            "- {id: s1, tool: t/mark, arguments: {name: s1}}\n",
        )
        .file(".strata/runs/x/lock", "")
        .file(".strata/runs/x/plan.json.tmp", "[{\"tool\": ");
    p.then(&["plan", "run", "--resume", "x"])
        .stderr(
            "error[request]: run `x` never started: it was stopped before its first step
   = help: start it again with `strata plan run <plan> --run-id x`
",
        )
        .status(2)
        .run();
    let o = p
        .then(&["plan", "run", "plans/one.yaml", "--run-id", "x", "--quiet"])
        .stdout("{\n  \"s1\": {\n    \"name\": \"s1\"\n  }\n}\n")
        .status(0)
        .run();
    assert_eq!(o.read("steps.log"), "s1\n");
    assert!(!p.path().join(".strata/runs/x/plan.json.tmp").exists());
    // A run that did start is never taken over.
    p.then(&["plan", "run", "plans/one.yaml", "--run-id", "x", "--quiet"])
        .stderr(
            "error[request]: run `x` already exists
   = help: pick another --run-id, or --resume it
",
        )
        .status(2)
        .run();
}

// ---------------------------------------------------------------------------------------------
// Row 4. Loading, checking, `show` and `graph` are linear in steps and references. These
// bounds catch a hang, not a speed (the quadratic code took minutes).
// ---------------------------------------------------------------------------------------------

/// A plan of `n` steps whose constant arguments fail the tool's schema.
fn failing_steps(n: usize) -> String {
    let steps: Vec<Value> = (0..n)
        .map(|_| json!({"tool": "t/json", "arguments": {"n": "x"}}))
        .collect();
    Value::Array(steps).to_string()
}

#[test]
fn a_plan_of_a_hundred_thousand_steps_failing_their_schema_is_refused_in_linear_time() {
    let s = project().file("plans/big.json", failing_steps(100_000));
    let ran = s
        .then(&["plan", "run", "plans/big.json", "--json"])
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(2)
        .run();
    let reply = ran.json();
    let errors = reply["error"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 100_000);
    assert_eq!(
        errors[99_999]["message"],
        json!("step `step100000`: invalid parameters for `t/json`: parameter `n` must be an integer, not a string")
    );
    assert_eq!(errors[99_999]["column"], json!(3_999_991));
}

/// The same plan reported for people: every error's snippet comes from one index of the
/// document's lines, so a plan written as one long line is reported in linear time; people
/// see the first 20 errors and how many there are, as rustc bounds them (`--json`, above,
/// has every one).
#[test]
fn a_plan_of_a_hundred_thousand_failing_steps_is_reported_for_people_in_linear_time() {
    let s = project().file("plans/big.json", failing_steps(100_000));
    let ran = s
        .then(&["plan", "run", "plans/big.json", "--quiet"])
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(2)
        .run();
    assert_eq!(ran.stderr.matches("error[params]").count(), 20);
    assert!(ran.stderr.ends_with(
        "error[strata]: 100000 errors in all; the first 20 are shown (fix them, then run again)\n"
    ));
}

/// A plan of `n` steps and one more that refers to each of them.
fn fan_in(n: usize) -> String {
    let mut steps: Vec<Value> = (0..n)
        .map(|_| json!({"tool": "t/json", "arguments": {}}))
        .collect();
    let refs: Vec<Value> = (1..=n).map(|i| json!(format!("$step{i}"))).collect();
    steps.push(json!({"tool": "t/json", "arguments": {"a": refs}}));
    Value::Array(steps).to_string()
}

#[test]
fn show_and_graph_of_a_step_with_a_hundred_thousand_references_are_linear() {
    let n = 100_000;
    let s = project().file("plans/wide.json", fan_in(n));
    let show = s
        .then(&["plan", "show", "plans/wide.json", "--json"])
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(0)
        .run();
    let outline = show.json();
    assert_eq!(
        outline["steps"][n]["depends_on"].as_array().map(Vec::len),
        Some(n)
    );
    assert_eq!(outline["levels"].as_array().map(Vec::len), Some(2));
    let dot = s
        .then(&["plan", "graph", "plans/wide.json", "--format", "dot"])
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(0)
        .run();
    assert_eq!(dot.stdout.matches("->").count(), n);
    assert_eq!(dot.stdout.matches("style=dashed").count(), 0);
    let resolve = s
        .then(&["plan", "resolve", "plans/wide.json"])
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(0)
        .run();
    assert_eq!(
        resolve.json()["steps"][n]["state"],
        json!("blocked"),
        "{}",
        resolve.brief()
    );
}

#[test]
fn a_hundred_thousand_unknown_references_are_reported_in_linear_time() {
    let n = 100_000;
    let refs: Vec<Value> = (1..=n).map(|i| json!(format!("$step{}", i + 1))).collect();
    let plan = json!([{"tool": "t/json", "arguments": {"a": refs}}]);
    let s = project().file("plans/unknown.json", plan.to_string());
    let ran = s
        .then(&["plan", "show", "plans/unknown.json", "--json"])
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(2)
        .run();
    let reply = ran.json();
    let errors = reply["error"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), n);
    assert_eq!(
        errors[0]["message"],
        json!("step `step1` refers to unknown step `step2`")
    );
    assert_eq!(
        errors[n - 1]["path"],
        json!(format!("[0].arguments.a[{}]", n - 1))
    );
}

/// A tool that writes its pid to `held.pid` (whole: written aside, then moved into place,
/// so that the test never reads it half-written), then sleeps a minute.
const HOLD_TOOL: &str = r#"description: writes its pid, then holds
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "echo $$ > held.tmp; mv held.tmp held.pid; exec sleep 60"]
  cwd: "{project_path}"
"#;

/// Whether process `pid` still exists (and is not a zombie).
fn alive(pid: &str) -> bool {
    // An empty pid would name `/proc//stat`, which is `/proc/stat`.
    assert!(pid.parse::<u32>().is_ok(), "not a pid: {pid:?}");
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')))
}

#[test]
fn the_tools_of_a_killed_plan_run_die_with_it() {
    // A run resumed after its host was killed runs the unfinished step again: the old call
    // must not still be running then.
    let s = Test::new()
        .copy("tools/runtimes")
        .tool("t/hold", HOLD_TOOL)
        .file(
            "plans/hold.yaml",
            "steps:\n  - {id: a, tool: t/hold, arguments: {}}\n",
        );
    let mut child = s
        .then(&["plan", "run", "plans/hold.yaml", "--run-id", "h1"])
        .spawn();
    let pid = wait_for(&s.path().join("held.pid"));
    assert!(alive(&pid));
    child.kill().unwrap();
    child.wait().unwrap();
    let start = std::time::Instant::now();
    while alive(&pid) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let outlived = alive(&pid);
    if outlived {
        let _ = Command::new("kill").args(["-9", &pid]).status();
    }
    assert!(!outlived, "the tool {pid} outlived the killed plan run");
}
