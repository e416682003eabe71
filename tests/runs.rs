//! End-to-end tests of `strata runs show` and `strata runs prune`: runs made by the binary,
//! and checkpoints written with known times for exact output.

mod common;
use common::Test;
use std::path::Path;

/// A graph run that failed long ago (2025-03-01), with the failed tool's stderr.
const FAILED: &str = r#"{"version": 1, "run_id": "old-fail", "graph": "graphs/g", "fingerprint": "x",
 "status": "failed", "step": 2, "node": "say", "budget": 10, "limit_handled": false,
 "result": null, "failure": "step 3 say failed: tool `t/say` exited with code 1",
 "started": 1740838953, "updated": 1740838954, "state": {"n": 2}, "inputs": {"who": "Ann"},
 "error": {"message": "tool `t/say` exited with code 1", "stderr": "first\nlast words"}}"#;

/// A plan run that completed long ago, one step failed.
const PLAN: &str = r#"{"version": 1, "kind": "plan", "run_id": "old-plan", "plan": "plans/p.yaml",
 "fingerprint": "x", "streamed": false, "status": "failed", "steps": 3, "values": {},
 "records": [
   {"id": "a", "status": "completed", "result": 1, "error": null, "run": null},
   {"id": "b", "status": "failed", "result": null,
    "error": {"kind": "tool_failed", "message": "tool `t/fail` exited with code 3"},
    "run": {"exit_code": 3, "stdout": "", "stderr": "line 1\nline 2\n"}}],
 "started": 1740838953, "updated": 1740839013}"#;

/// An interrupted graph run (its status `running`, no process holding it).
const INTERRUPTED: &str = r#"{"version": 1, "run_id": "old-cut", "graph": "graphs/g", "fingerprint": "x",
 "status": "running", "step": 1, "node": "say", "budget": 10, "limit_handled": false,
 "result": null, "failure": null, "started": 1740838900, "updated": 1740838901,
 "state": {}, "inputs": {}, "error": null}"#;

const GRAPH: &str = "kind: graph\ndescription: done at once\nstart: done\nnodes:\n  done:\n    kind: return\n    output: {ok: true}\n";

fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("graphs/g", GRAPH)
        .file(".strata/runs/old-fail/checkpoint.json", FAILED)
        .file(".strata/runs/old-plan/checkpoint.json", PLAN)
        .file(".strata/runs/old-cut/checkpoint.json", INTERRUPTED)
}

#[test]
fn show_prints_status_times_inputs_state_and_errors() {
    let p = project()
        .args(&["runs", "show", "old-fail"])
        .stdout(
            "run old-fail\n  graph:    graphs/g\n  status:   failed after 2 steps\n  next:     `say`\n  started:  2025-03-01 14:22:33 UTC\n  updated:  2025-03-01 14:22:34 UTC\n  inputs:   {\"who\":\"Ann\"}\n  state:    {\"n\":2}\n  failure:  step 3 say failed: tool `t/say` exited with code 1\n  error:    tool `t/say` exited with code 1\n    ! first\n    ! last words\n",
        )
        .status(0)
        .run();
    p.then(&["runs", "show", "old-plan"])
        .stdout("run old-plan\n  plan:     plans/p.yaml\n  status:   failed, 2 of 3 steps finished\n  started:  2025-03-01 14:22:33 UTC\n  updated:  2025-03-01 14:23:33 UTC\nsteps:\n  [completed] a\n  [failed] b: tool `t/fail` exited with code 3\n    ! line 1\n    ! line 2\n")
        .status(0)
        .run();
    p.then(&["runs", "show", "old-cut"])
        .stdout("run old-cut\n  graph:    graphs/g\n  status:   interrupted after 1 step\n  next:     `say`\n  started:  2025-03-01 14:21:40 UTC\n  updated:  2025-03-01 14:21:41 UTC\n")
        .status(0)
        .run();
    let json = p
        .then(&["runs", "show", "old-plan", "--json"])
        .status(0)
        .run();
    assert_eq!(
        json.json()["records"][1]["run"]["stderr"],
        "line 1\nline 2\n"
    );
    p.then(&["runs", "show", "nope"])
        .stderr("error[request]: no run `nope`\n   = help: `strata runs` lists the runs of this project\n")
        .status(2)
        .run();
}

#[test]
fn show_reads_a_run_the_binary_made() {
    let shown = project()
        .args(&["run", "graphs/g", "--run-id", "fresh", "--quiet"])
        .status(0)
        .run()
        .then(&["runs", "show", "fresh", "--json"])
        .status(0)
        .run()
        .json();
    assert_eq!(
        (&shown["status"], &shown["result"]),
        (
            &serde_json::json!("completed"),
            &serde_json::json!({"ok": true})
        )
    );
}

#[test]
fn prune_removes_ended_runs_older_than_asked_and_keeps_the_rest() {
    let p = project()
        .args(&["run", "graphs/g", "--run-id", "fresh", "--quiet"])
        .status(0)
        .run();
    // Every duration of the one grammar is an age, milliseconds and decimals included.
    for age in ["500ms", "90s", "1.5h", "30m", "7d", "2w"] {
        p.then(&[
            "runs",
            "prune",
            "--older-than",
            age,
            "--status",
            "interrupted",
            "--dry-run",
        ])
        .stdout("would remove old-cut (graphs/g, interrupted)\n")
        .status(0)
        .run();
    }
    p.then(&["runs", "prune", "--older-than", "7d", "--dry-run"])
        .stdout("would remove old-fail (graphs/g, failed)\nwould remove old-plan (plan:plans/p.yaml, failed)\n")
        .status(0)
        .run();
    assert!(p.path().join(".strata/runs/old-fail").is_dir());
    p.then(&["runs", "prune", "--older-than", "7d", "--status", "failed"])
        .stdout(
            "removed old-fail (graphs/g, failed)\nremoved old-plan (plan:plans/p.yaml, failed)\n",
        )
        .status(0)
        .run();
    p.then(&["runs"])
        .stdout("RUN      GRAPH     STATUS       STEPS  NEXT\nold-cut  graphs/g  interrupted  1      say\nfresh    graphs/g  completed    1      -\n")
        .status(0)
        .run();
    p.then(&["runs", "prune", "--status", "interrupted"])
        .stdout("removed old-cut (graphs/g, interrupted)\n")
        .status(0)
        .run();
    p.then(&["runs", "prune", "--older-than", "1h"])
        .stdout("no run to remove\n")
        .status(0)
        .run();
    p.then(&["runs", "prune"])
        .stdout("removed fresh (graphs/g, completed)\n")
        .status(0)
        .run();
    p.then(&["runs"]).stdout("no runs yet\n").status(0).run();
}

#[test]
fn prune_refuses_a_status_it_cannot_prune_and_an_age_without_unit() {
    let p = project();
    p.then(&["runs", "prune", "--status", "running"])
        .stderr("error[request]: runs in status `running` cannot be pruned\n   = help: a run a live process holds is never removed\n")
        .status(2)
        .run();
    p.then(&["runs", "prune", "--status", "complete"])
        .stderr("error[request]: runs in status `complete` cannot be pruned\n   = help: did you mean `completed`?\n")
        .status(2)
        .run();
    for (age, why) in [
        ("7", "`7` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"),
        ("7y", "`7y` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"),
        ("-1d", "`-1d` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"),
        ("0.5ms", "`0.5ms` is finer than a millisecond"),
        ("99999999999w", "`99999999999w` is too long: a duration is at most 584542046 years"),
    ] {
        p.then(&["runs", "prune", &format!("--older-than={age}")])
            .stderr(&format!("error: invalid value '{age}' for '--older-than <AGE>': {why}\n\nFor more information, try '--help'.\n"))
            .status(2)
            .run();
    }
    assert!(p.path().join(".strata/runs/old-cut").is_dir());
}

/// Unix seconds of the creation of the run directory `id` of `p` (its modification time
/// where the file system keeps no creation time).
fn created(p: &Path, id: &str) -> u64 {
    let meta = std::fs::metadata(p.join(".strata/runs").join(id)).unwrap();
    let time = meta.created().or_else(|_| meta.modified()).unwrap();
    time.duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn a_run_killed_before_its_first_checkpoint_is_listed_shown_and_pruned_as_started() {
    // Killed before its first checkpoint: its lock names a process that is gone. Another
    // is starting now: a live process holds its lock.
    let p = project()
        .file(".strata/runs/cut-early/lock", "999999999\n")
        .file(
            ".strata/runs/starting/lock",
            format!("{}\n", std::process::id()),
        );
    let listed = p.then(&["runs"]).status(0).run();
    assert_eq!(
        listed.stdout,
        "RUN        GRAPH              STATUS       STEPS  NEXT\n\
         old-cut    graphs/g           interrupted  1      say\n\
         old-fail   graphs/g           failed       2      say\n\
         old-plan   plan:plans/p.yaml  failed       2      -\n\
         cut-early  -                  started      0      -\n\
         starting   -                  running      0      -\n"
    );
    let at = created(p.path(), "cut-early");
    let json = p.then(&["runs", "--json"]).status(0).run().json();
    common::conforms(&json, "runs");
    assert_eq!(
        json[3],
        serde_json::json!({
            "run_id": "cut-early", "graph": null, "error": null, "status": "started",
            "steps": 0, "next": null, "started": at, "updated": at
        })
    );
    assert_eq!(json[4]["status"], "running");
    let shown = p
        .then(&["runs", "show", "cut-early"])
        .status(0)
        .run()
        .stdout;
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "run cut-early",
            "  status:   started, no checkpoint: stopped before its first one, nothing of it ran"
        ]
    );
    assert!(
        lines[2].starts_with("  started:  ") && lines[2].ends_with(" UTC") && lines.len() == 3,
        "{shown}"
    );
    let starting = p.then(&["runs", "show", "starting"]).status(0).run().stdout;
    assert!(
        starting.starts_with("run starting\n  status:   running, no checkpoint yet\n"),
        "{starting}"
    );
    let json = p
        .then(&["runs", "show", "cut-early", "--json"])
        .status(0)
        .run()
        .json();
    assert_eq!(
        json,
        serde_json::json!({"run_id": "cut-early", "status": "started", "started": at})
    );
    // The runs that ended go by default; one that never checkpointed only when asked for,
    // and one starting now never.
    p.then(&["runs", "prune", "--dry-run"])
        .stdout("would remove old-fail (graphs/g, failed)\nwould remove old-plan (plan:plans/p.yaml, failed)\n")
        .status(0)
        .run();
    p.then(&["runs", "prune", "--status", "started"])
        .stdout("removed cut-early (-, started)\n")
        .status(0)
        .run();
    assert!(!p.path().join(".strata/runs/cut-early").exists());
    assert!(p.path().join(".strata/runs/starting").is_dir());
}
