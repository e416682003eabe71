//! A secret a tool prints on stdout. Every record, checkpoint and display holds the run's
//! marker, `%{secret:NAME:TAG}`, instead of the value; the next step, and a resumed run, get
//! the real value back from the environment; a resume without the variable is refused; a
//! marker a tool prints itself is text, never a way to read a secret.

mod common;
use common::{Ran, Test, KEEP_TOOL, LEAK_TOOL};

const SECRET: &str = "hunter2-s3cret";

/// `s/leak` prints `TOKEN` (a declared secret) on stdout; `s/keep` writes its `tok`
/// parameter to `got.txt` and prints it back; `s/forge` prints a marker of its own.
fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("s/leak", LEAK_TOOL)
        .tool("s/keep", KEEP_TOOL)
        .tool(
            "s/forge",
            "executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: [\"%s\", \"%{secret:TOKEN}\"]\n",
        )
}

/// Every file under `.strata/runs/`, concatenated.
fn records(ran: &Ran) -> String {
    let mut out = String::new();
    let mut dirs = vec![ran.path().join(".strata/runs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push_str(&text);
            }
        }
    }
    out
}

const PLAN: &str = "steps:\n  - {id: a, tool: s/leak, arguments: {}}\n  - {id: b, tool: s/keep, arguments: {tok: \"{{a.result}}\"}}\n";

#[test]
fn a_plan_records_a_marker_and_the_next_step_gets_the_value() {
    let ran = project()
        .file("plans/p.yaml", PLAN)
        .args(&["plan", "run", "plans/p.yaml", "--run-id", "r1", "--json"])
        .env("TOKEN", SECRET)
        .status(0)
        .run();
    assert_eq!(ran.read("got.txt"), SECRET);
    assert!(!ran.all().contains(SECRET), "{}", ran.all());
    assert!(ran.stdout.contains("%{secret:TOKEN:"), "{}", ran.stdout);
    // What `b` printed echoes the value it was given: marked too.
    assert!(
        ran.stdout.contains("kept %{secret:TOKEN:"),
        "{}",
        ran.stdout
    );
    let on_disk = records(&ran);
    assert!(!on_disk.contains(SECRET), "{on_disk}");
    assert!(on_disk.contains("%{secret:TOKEN:"), "{on_disk}");
    let shown = ran.then(&["runs", "show", "r1"]).status(0).run();
    assert!(!shown.all().contains(SECRET), "{}", shown.all());
}

#[test]
fn a_resume_without_the_variable_is_refused_and_with_it_restores_the_value() {
    let plan = "steps:\n  - {id: a, tool: s/leak, arguments: {}}\n  - {id: b, tool: s/keep, arguments: {tok: \"{{a.result}}\", x: \"{{PLACEHOLDER_x}}\"}}\n";
    let waiting = project()
        .file("plans/p.yaml", plan)
        .args(&["plan", "run", "plans/p.yaml", "--run-id", "r2"])
        .env("TOKEN", SECRET)
        .status(3)
        .run();
    assert!(!records(&waiting).contains(SECRET));
    let refused = waiting
        .then(&["plan", "run", "--resume", "r2", "--value", "x=1"])
        .status(2)
        .run();
    assert_eq!(
        refused.stderr,
        "error[request]: resuming run `r2` needs the secret `TOKEN`, which is set neither in the environment nor in .env\n   = help: set TOKEN to the value the tool printed, then run again; strata never writes a secret's value to disk\n"
    );
    assert!(!waiting.path().join("got.txt").exists());
    let resumed = waiting
        .then(&["plan", "run", "--resume", "r2", "--value", "x=1"])
        .env("TOKEN", SECRET)
        .status(0)
        .run();
    assert!(!resumed.all().contains(SECRET), "{}", resumed.all());
    assert_eq!(resumed.read("got.txt"), SECRET);
    assert!(!records(&resumed).contains(SECRET));
}

#[test]
fn the_value_comes_back_from_dotenv_too() {
    let ran = project()
        .file("plans/p.yaml", PLAN)
        .file(".env", format!("TOKEN={SECRET}\n"))
        .args(&["plan", "run", "plans/p.yaml", "--run-id", "r3"])
        .status(0)
        .run();
    assert_eq!(ran.read("got.txt"), SECRET);
    assert!(!records(&ran).contains(SECRET));
}

#[test]
fn a_graph_keeps_markers_in_its_state_checkpoint_and_events() {
    let graph = "kind: graph\nstate: {tok: \"\"}\nstart: first\nnodes:\n  first:\n    kind: action\n    tool: s/leak\n    assign: {tok: \"${result}\"}\n    next: second\n  second:\n    kind: action\n    tool: s/keep\n    params: {tok: \"${state.tok}\"}\n    next: done\n  done:\n    kind: return\n    output: {tok: \"${state.tok}\"}\n";
    let ran = project()
        .tool("g/leak", graph)
        .args(&["run", "g/leak", "--json", "--run-id", "g1"])
        .env("TOKEN", SECRET)
        .status(0)
        .run();
    assert_eq!(ran.read("got.txt"), SECRET);
    assert!(!ran.all().contains(SECRET), "{}", ran.all());
    assert!(ran.stdout.contains("%{secret:TOKEN:"), "{}", ran.stdout);
    let on_disk = records(&ran);
    assert!(!on_disk.contains(SECRET), "{on_disk}");
    assert!(on_disk.contains("%{secret:TOKEN:"), "{on_disk}");
}

#[test]
fn a_marker_a_tool_prints_itself_never_reads_a_secret() {
    let plan = "steps:\n  - {id: a, tool: s/forge, arguments: {}}\n  - {id: b, tool: s/keep, arguments: {tok: \"{{a.result}}\"}}\n";
    let ran = project()
        .file("plans/p.yaml", plan)
        .args(&["plan", "run", "plans/p.yaml", "--run-id", "r4", "--json"])
        .env("TOKEN", SECRET)
        .status(0)
        .run();
    assert_eq!(ran.read("got.txt"), "%{secret:TOKEN}");
    assert!(!ran.all().contains(SECRET), "{}", ran.all());
    // Kept as the tool printed it: text, which no step restores.
    assert!(
        ran.stdout.contains("\"result\": \"%{secret:TOKEN}\""),
        "{}",
        ran.stdout
    );
}
