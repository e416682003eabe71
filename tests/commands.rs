//! End-to-end tests of what every command has in common: options that do not apply to the
//! target are errors with a hint, `explain` takes a tool id as `run` does and refuses a field
//! that does not exist, and a file that cannot be read says which line is wrong and why.

mod common;
use common::{refusal, Test, SAY_GRAPH};

fn project() -> Test {
    Test::say().file(
        "directives/d.md",
        "---\nname: d\nactions:\n  - {id: a, tool: t/say}\n---\n",
    )
}

#[test]
fn options_that_do_not_apply_to_the_target_are_errors_with_a_hint() {
    let p = project()
        .args(&["run", "t/say"])
        .stdout("hi\n")
        .status(0)
        .run();
    // -q/--quiet is a global option: a tool, which prints only its own output, is as quiet.
    p.then(&["run", "t/say", "--quiet"])
        .stdout("hi\n")
        .stderr("")
        .status(0)
        .run();
    let cases: [(&[&str], &str); 8] = [
        (&["run", "t/say", "--input", "x=1"], "error[request]: --input does not apply to tools\n   = help: --input sets the inputs of a directive or a graph; a tool takes -p K=V\n"),
        (&["run", "t/say", "--resume", "r1"], "error[request]: --resume does not apply to tools\n   = help: only graph runs keep checkpoints here; `strata plan run --resume` continues a plan\n"),
        (&["run", "directives/d.md", "-p", "text=x"], "error[request]: --param does not apply to directives\n   = help: -p K=V sets a tool's parameters; directives and graphs take --input K=V\n"),
        (&["run", "directives/d.md", "--params-json", "{}"], "error[request]: --params-json does not apply to directives\n   = help: --params-json sets a tool's parameters or a graph's typed inputs; directives take --input K=V\n"),
        (&["run", "directives/d.md", "--run-id", "r1"], "error[request]: --run-id does not apply to directives\n   = help: only graph runs are stored here; `strata plan run --run-id` names a plan's run\n"),
        (&["run", "directives/d.md", "--explain"], "error[request]: --explain does not apply to directives\n   = help: `strata explain <file>` shows a tool or a directive after every stage; `strata graph <id>` draws a graph\n"),
        (&["run", "graphs/g", "--dry-run"], "error[request]: --dry-run does not apply to graphs\n   = help: `strata graph <id>` draws a graph without running it\n"),
        (&["run", "graphs/g", "-p", "a=1"], "error[request]: --param does not apply to graphs\n   = help: -p K=V sets a tool's parameters; directives and graphs take --input K=V\n"),
    ];
    for (args, want) in cases {
        p.then(args).stdout("").stderr(want).status(2).run();
    }
}

#[test]
fn a_run_id_is_used_once_and_a_finished_run_is_not_resumed() {
    let p = project()
        .args(&["run", "graphs/g", "--run-id", "r1", "--quiet"])
        .stdout("{\n  \"said\": true\n}\n")
        .status(0)
        .run();
    p.then(&["run", "graphs/g", "--run-id", "r1"])
        .stderr("error[request]: run `r1` already exists\n   = help: pick another --run-id, or --resume it\n")
        .status(2)
        .run();
    p.then(&["run", "graphs/g", "--resume", "r1"])
        .stderr("error[request]: run `r1` has already ended (completed)\n   = help: `strata runs` shows every run and its status\n")
        .status(2)
        .run();
    p.then(&["run", "graphs/g", "--resume", "r1", "--input", "a=1"])
        .stderr("error[request]: --input does not go with --resume\n   = help: a resumed run keeps the inputs it started with\n")
        .status(2)
        .run();
}

#[test]
fn explain_takes_a_tool_id_and_refuses_a_field_that_does_not_exist() {
    let want = "tool t/say: stages 1-2 (inputs, context) run before dispatch, on directives and graphs; the config enters at stage 3\n\nconfig.command\n  source     authored:\"printf\"\n  3 env      authored:\"printf\"\n  4 params   authored:\"printf\"\n  5 env      authored:\"printf\"\n  6 params   authored:\"printf\"\n";
    let p = project()
        .args(&["explain", "t/say", "--field", "config.command"])
        .stdout(want)
        .status(0)
        .run();
    p.then(&["explain", "tools/t/say.yaml", "--field", "config.command"])
        .stdout(want)
        .status(0)
        .run();
    p.then(&["explain", "t/say", "--field", "config.agrs"])
        .stdout("")
        .stderr("error[request]: there is no field `config.agrs`\n   = help: did you mean `config.args`?\n")
        .status(2)
        .run();
    p.then(&["explain", "directives/d.md", "--field", "nothing"])
        .stderr("error[request]: there is no field `nothing`\n   = help: without --field, every field is shown\n")
        .status(2)
        .run();
}

#[test]
fn a_dedented_key_is_reported_on_its_own_line_with_a_hint() {
    project()
        .tool(
            "t/bad",
            "executor: runtimes/subprocess\nconfig:\n  command: printf\nargs: [x]\n    env: {}\n",
        )
        .args(&["run", "t/bad"])
        .stderr(&("error[S002]: YAML syntax error: while parsing a block mapping, did not find expected key\n  --> tools/t/bad.yaml:4:1\n  |\n4 | args: [x]\n  | ^\n   = help: `args:` is indented 0 spaces and line 5 below it 4: indent `args:` as the lines it belongs with, or line 5 as `args:`\n".to_string() + &refusal("t/bad", 1)))
        .status(2)
        .run();
}

#[test]
fn an_edge_that_is_not_a_map_says_what_it_is_and_what_is_expected() {
    project()
        .tool("graphs/g", &SAY_GRAPH.replace("next: done", "next: [done]"))
        .args(&["run", "graphs/g"])
        .stderr(&("error[G001]: an edge must be a map `{to, when?}`, not a string\n  --> tools/graphs/g.yaml:8:12\n  |\n8 |     next: [done]\n  |            ^\n   = field: nodes.say.next[0]\n   = help: write `- to: done` (and `when:` under it), or `next: done` for a single edge\n".to_string() + &refusal("graphs/g", 1)))
        .status(2)
        .run()
        .then(&["run", "graphs/g"])
        .tool("graphs/g", &SAY_GRAPH.replace("next: done", "next: [7]"))
        .stderr(&("error[G001]: an edge `{to, when?}` must be a map, not an integer\n  --> tools/graphs/g.yaml:8:12\n  |\n8 |     next: [7]\n  |            ^\n   = field: nodes.say.next[0]\n".to_string() + &refusal("graphs/g", 1)))
        .status(2)
        .run();
}

#[test]
fn diagnostics_are_coloured_with_color_always_and_plain_otherwise() {
    let p = project()
        .args(&["--color", "always", "run", "t/say", "--input", "x=1"])
        .stderr("\u{1b}[1m\u{1b}[31merror[request]\u{1b}[0m\u{1b}[1m: --input does not apply to tools\u{1b}[0m\n   \u{1b}[1m\u{1b}[34m= help:\u{1b}[0m --input sets the inputs of a directive or a graph; a tool takes -p K=V\n")
        .status(2)
        .run();
    let plain = "error[request]: --input does not apply to tools\n   = help: --input sets the inputs of a directive or a graph; a tool takes -p K=V\n";
    p.then(&["--color", "never", "run", "t/say", "--input", "x=1"])
        .stderr(plain)
        .status(2)
        .run();
    p.then(&["run", "t/say", "--input", "x=1"])
        .stderr(plain)
        .status(2)
        .run();
    p.then(&["--color", "auto", "run", "t/say", "--input", "x=1"])
        .env("NO_COLOR", "1")
        .stderr(plain)
        .status(2)
        .run();
}
