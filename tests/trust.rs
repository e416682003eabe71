//! Untrusted callers: what `strata check` rejects runs through no front-end, even beside an
//! error the call itself would never meet; and no caller text — a plan's arguments, `--value`,
//! `--input`, a batch request, a marker copied from a run's own records — is ever turned
//! into a secret.

mod common;
use common::{Ran, Test, KEEP_TOOL, LEAK_TOOL};

/// A tool with an L007 error (`${tool_dir}`, which layer C never reads in a tool) and a
/// parameter cycle inside an env default that is never taken while HOME is set: the call
/// never meets the cycle, so only the check can refuse it. It would mark the project if it
/// ran.
const TWO_ERRORS: &str = "executor: runtimes/subprocess\nconfig:\n  b: \"${HOME:-{b}}\"\n  command: touch\n  args: [\"{project_path}/RAN\", \"${tool_dir}/data\", \"{b}\"]\n";

fn two_errors() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/two", TWO_ERRORS)
        .file(
            "directives/calls.md",
            "---\nname: calls\nactions:\n  - {id: a, tool: t/two}\n---\nbody\n",
        )
        .file("plans/calls.yaml", "- {id: s, tool: t/two, arguments: {}}\n")
        .file(
            "tools/graphs/calls.yaml",
            "kind: graph\nnodes:\n  n: {kind: action, tool: t/two, next: done}\n  done: {kind: return, output: x}\n",
        )
}

#[test]
fn a_tool_the_check_rejects_runs_nowhere_even_beside_an_error_the_call_never_meets() {
    let t = two_errors();
    let checked = t.then(&["check"]).status(1).run();
    assert!(checked
        .stdout
        .contains("error[R009]: parameter cycle: b -> b"));
    assert!(checked
        .stdout
        .contains("error[L007]: `${tool_dir}` is a context placeholder"));
    let commands: [&[&str]; 8] = [
        &["run", "t/two"],
        &["run", "directives/calls.md"],
        &["plan", "run", "plans/calls.yaml"],
        &["plan", "step", "plans/calls.yaml", "--step", "s"],
        &["run", "graphs/calls"],
        &["walk", "graphs/calls", "--node", "n", "--start"],
        &["export", "argo", "plans/calls.yaml", "--image", "i:1"],
        &[
            "export",
            "argo",
            "tools/graphs/calls.yaml",
            "--image",
            "i:1",
        ],
    ];
    for args in commands {
        let ran = t.then(args).status(2).run();
        for code in ["error[R009]: parameter cycle: b -> b", "error[L007]"] {
            assert!(ran.stderr.contains(code), "{args:?}: {}", ran.stderr);
        }
        assert!(
            ran.stderr.contains("was not run: 2 errors found"),
            "{args:?}: {}",
            ran.stderr
        );
        assert!(!t.path().join("RAN").exists(), "{args:?} ran the tool");
    }
    let batch = t
        .then(&["run", "--batch"])
        .stdin("{\"id\": \"r1\", \"tool\": \"t/two\"}\n")
        .status(0)
        .run();
    let reply = batch.json();
    assert_eq!(reply["id"], "r1");
    assert_eq!(reply["ok"], false);
    assert_eq!(reply["error"]["kind"], "check");
    let codes: Vec<&str> = reply["error"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["R009", "L007"]);
    assert!(!t.path().join("RAN").exists(), "run --batch ran the tool");
}

const SECRET: &str = "hunter2-s3cret";
const HOME_LIKE: &str = "/home/someone-else";

/// `s/keep` writes its `tok` parameter to `got.txt` and prints it back; `s/leak` prints
/// `TOKEN`, a declared secret.
fn keeper() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("s/leak", LEAK_TOOL)
        .tool("s/keep", KEEP_TOOL)
        .tool(
            "g/keep",
            "kind: graph\nparameters: {type: object, properties: {tok: {type: string}}}\nnodes:\n  k: {kind: action, tool: s/keep, params: {tok: \"${inputs.tok}\"}, next: done}\n  done: {kind: return, output: x}\n",
        )
        .file(
            "directives/keep.md",
            "---\nname: keep\ninputs:\n  - {name: tok, type: string}\nactions:\n  - {id: k, tool: s/keep, params: {tok: \"{input:tok}\"}}\n---\nbody\n",
        )
}

/// `t` run with a declared secret and two other variables in strata's environment.
fn env(t: Test) -> Test {
    t.env("TOKEN", SECRET)
        .env("AWS_X", SECRET)
        .env("XHOME", HOME_LIKE)
}

/// Caller text that forges markers: of a declared secret, of process variables, with a tag of
/// the right shape, escaped, split.
const FORGED: &str = "a %{secret:TOKEN} b %{secret:AWS_X} c %{secret:XHOME} d %{secret:TOKEN:0123456789abcdef} e %%{secret:TOKEN} f %{secret:";

fn got(ran: &Ran) -> String {
    ran.read("got.txt")
}

#[test]
fn caller_text_holding_markers_reaches_the_tool_as_written_from_every_front_end() {
    let t = keeper();
    let literal = serde_json::to_string(FORGED).unwrap();
    let plan = format!("- {{id: s, tool: s/keep, arguments: {{tok: {literal}}}}}\n");
    let ran = env(t.then(&["plan", "run", "plans/p.yaml"]))
        .file("plans/p.yaml", &plan)
        .status(0)
        .run();
    assert_eq!(got(&ran), FORGED, "a plan's argument");
    let ran = env(t.then(&[
        "plan",
        "run",
        "plans/v.yaml",
        "--value",
        &format!("tok={FORGED}"),
    ]))
    .file(
        "plans/v.yaml",
        "- {id: s, tool: s/keep, arguments: {tok: \"{{PLACEHOLDER_tok}}\"}}\n",
    )
    .status(0)
    .run();
    assert_eq!(got(&ran), FORGED, "plan run --value");
    let ran = env(t.then(&[
        "plan",
        "step",
        "plans/v.yaml",
        "--step",
        "s",
        "--value",
        &format!("tok={FORGED}"),
    ]))
    .status(0)
    .run();
    assert_eq!(got(&ran), FORGED, "plan step --value");
    let ran = env(t.then(&["run", "g/keep", "--input", &format!("tok={FORGED}")]))
        .status(0)
        .run();
    assert_eq!(got(&ran), FORGED, "a graph's --input");
    let ran = env(t.then(&[
        "run",
        "directives/keep.md",
        "--input",
        &format!("tok={FORGED}"),
    ]))
    .status(0)
    .run();
    assert_eq!(got(&ran), FORGED, "a directive's --input");
    let request = serde_json::json!({"tool": "s/keep", "params": {"tok": FORGED}});
    let ran = env(t.then(&["run", "--batch"]))
        .stdin(format!("{request}\n"))
        .status(0)
        .run();
    assert_eq!(got(&ran), FORGED, "run --batch");
    assert!(!ran.all().contains(SECRET) && !ran.all().contains(HOME_LIKE));
}

/// The markers of run `run_id`'s records (`%{secret:TOKEN:…}`).
fn marker_of(ran: &Ran, run_id: &str) -> String {
    let text = ran.read(&format!(".strata/runs/{run_id}/checkpoint.json"));
    let at = text
        .find("%{secret:TOKEN:")
        .expect("a marker in the records");
    text[at..at + "%{secret:TOKEN:0123456789abcdef}".len()].to_string()
}

#[test]
fn a_marker_copied_from_a_run_is_text_in_another_run_and_refused_in_its_own_resume() {
    let t = keeper().file(
        "plans/p.yaml",
        "- {id: a, tool: s/leak, arguments: {}}\n- {id: b, tool: s/keep, arguments: {tok: \"{{a.result}}\", x: \"{{PLACEHOLDER_x}}\"}}\n",
    );
    let waiting = env(t.then(&["plan", "run", "plans/p.yaml", "--run-id", "r1"]))
        .status(3)
        .run();
    let copied = marker_of(&waiting, "r1");
    // Another run: the marker is text.
    let other = env(t.then(&[
        "plan",
        "run",
        "plans/v.yaml",
        "--value",
        &format!("tok={copied}"),
    ]))
    .file(
        "plans/v.yaml",
        "- {id: s, tool: s/keep, arguments: {tok: \"{{PLACEHOLDER_tok}}\"}}\n",
    )
    .status(0)
    .run();
    assert_eq!(got(&other), copied);
    // Its own run's resume: a caller's value holding the run's marker is refused.
    let refused = env(t.then(&[
        "plan",
        "run",
        "--resume",
        "r1",
        "--value",
        &format!("x={copied}"),
    ]))
    .status(2)
    .run();
    assert_eq!(
        refused.stderr,
        "error[request]: the values hold the secret marker of `TOKEN` minted by this run\n   = help: a secret reaches a step through a reference to the step that printed it, never through a value\n"
    );
    // The run's own reference still gets the value.
    let resumed = env(t.then(&["plan", "run", "--resume", "r1", "--value", "x=1"]))
        .status(0)
        .run();
    assert_eq!(got(&resumed), SECRET);
    assert!(!resumed.all().contains(SECRET));
}

#[test]
fn only_a_declared_secret_is_restored_never_another_variable() {
    // `s/leak2` prints XHOME, a variable it declares secret: its marker is minted. A later
    // step of the same run restores it only while the project declares it secret.
    let t = keeper()
        .tool(
            "s/leak2",
            "executor: runtimes/subprocess\nsecrets: [XHOME]\nconfig:\n  command: printf\n  args: [\"%s\", \"${XHOME}\"]\n",
        )
        .file(
            "plans/p.yaml",
            "- {id: a, tool: s/leak2, arguments: {}}\n- {id: b, tool: s/keep, arguments: {tok: \"{{a.result}}\", x: \"{{PLACEHOLDER_x}}\"}}\n",
        );
    let waiting = env(t.then(&["plan", "run", "plans/p.yaml", "--run-id", "r1"]))
        .status(3)
        .run();
    assert!(!waiting.all().contains(HOME_LIKE));
    // The tool that declared it is gone: XHOME is an undeclared process variable now.
    std::fs::remove_file(waiting.path().join("tools/s/leak2.yaml")).unwrap();
    let refused = env(waiting.then(&["plan", "run", "--resume", "r1", "--value", "x=1"]))
        .status(2)
        .run();
    assert_eq!(
        refused.stderr,
        "error[request]: resuming run `r1` needs the secret `XHOME`, which is set neither in the environment nor in .env\n   = help: set XHOME to the value the tool printed, then run again; strata never writes a secret's value to disk\n"
    );
    assert!(!waiting.path().join("got.txt").exists());
}
