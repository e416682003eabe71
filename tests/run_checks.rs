//! `strata run` refuses what `strata check` rejects (before anything runs, with
//! file:line:col), `--strict` means the same for every kind of file, and a limit the check
//! reports is raised by the project's settings for the check and the run alike.

mod common;
use common::Test;

/// The shipped runtimes and `examples/echo`, and a tool that records each call in a file.
fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .copy("tools/examples/echo.yaml")
        .tool(
            "t/mark",
            "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"echo ran >> marks\"]\n",
        )
}

const TYPO: &str = "---
name: typo
inputs:
  - {name: word, type: string, required: true}
actions:
  - {id: mark, tool: t/mark}
  - {id: say, tool: examples/echo, params: {message: \"{input:wrod}\"}}
---
";

#[test]
fn a_directive_the_check_rejects_does_not_run() {
    let ran = project()
        .file("directives/typo.md", TYPO)
        .args(&["run", "directives/typo.md", "--input", "word=hi"])
        .stdout("")
        .stderr(
            "error[R003]: `{input:wrod}` names no declared input
  --> directives/typo.md:7:55
  |
7 |   - {id: say, tool: examples/echo, params: {message: \"{input:wrod}\"}}
  |                                                       ^^^^^^^^^^^^
   = field: actions[1].params.message
   = help: did you mean `word`?

error[check]: `directives/typo.md` was not run: 1 error found
   = help: `strata check` lists every error and warning of the project
",
        )
        .status(2)
        .run();
    assert_eq!(ran.read("marks"), "", "the first action must not run");
}

#[test]
fn parameters_that_cannot_match_the_tool_are_refused_before_the_first_action() {
    let ran = project()
        .file(
            "directives/params.md",
            "---\nname: params\nactions:\n  - {id: mark, tool: t/mark}\n  - id: say\n    tool: examples/echo\n    params:\n      message: 42\n      colour: red\n---\n",
        )
        .args(&["run", "directives/params.md"])
        .stdout("")
        .stderr(
            "error[R011]: action `say`: invalid parameters for `examples/echo`: parameter `message` must be a string, not an integer; unknown parameter `colour`
  --> directives/params.md:8:16
  |
8 |       message: 42
  |                ^
   = field: actions[1].params.message
   = help: the parameters are: message (string, default \"hello from strata\")

error[check]: `directives/params.md` was not run: 1 error found
   = help: `strata check` lists every error and warning of the project
",
        )
        .status(2)
        .run();
    assert_eq!(ran.read("marks"), "");
}

#[test]
fn a_graph_and_a_tool_the_check_rejects_do_not_run() {
    let p = project()
        .tool(
            "graphs/bad",
            "kind: graph\nnodes:\n  a:\n    kind: action\n    tool: t/mark\n    next: b\n  b:\n    kind: action\n    tool: examples/echo\n    params: {message: [1]}\n",
        )
        .tool(
            "t/typo",
            "executor: runtimes/subprocess\nconfig:\n  command: echo\n  args: [\"{mesage}\"]\n",
        );
    p.then(&["run", "graphs/bad", "--run-id", "r1"])
        .stdout("")
        .stderr(
            "error[R011]: node `b`: invalid parameters for `examples/echo`: parameter `message` must be a string, not an array
  --> tools/graphs/bad.yaml:10:23
   |
10 |     params: {message: [1]}
   |                       ^
   = field: nodes.b.params.message
   = help: the parameters are: message (string, default \"hello from strata\")

error[check]: `graphs/bad` was not run: 1 error found
   = help: `strata check` lists every error and warning of the project
",
        )
        .status(2)
        .run();
    p.then(&["run", "t/typo"])
        .stdout("")
        .stderr(
            "error[R001]: unknown parameter `{mesage}`: it is left as written
  --> tools/t/typo.yaml:4:11
  |
4 |   args: [\"{mesage}\"]
  |           ^^^^^^^^
   = field: config.args[0]
   = help: the parameters here are `{tool_path}`, `{tool_dir}`, `{tool_parent}`, `{project_path}`, `{params_json}`, `{runtime_dir}`, `{args}`, `{cwd}`, `{timeout}`, `{max_output_bytes}`, `{command}`

error[check]: `t/typo` was not run: 1 error found
   = help: `strata check` lists every error and warning of the project
",
        )
        .status(2)
        .run();
    assert_eq!(p.read("marks"), "");
    assert!(!p.path().join(".strata/runs/r1").exists());
}

const OPTIONAL: &str = "---
name: optional
inputs:
  - {name: title, type: string}
---
Hello {input:title}.
";

#[test]
fn strict_makes_a_missing_value_of_a_directive_an_error_as_the_settings_do() {
    let p = project().file("directives/optional.md", OPTIONAL);
    p.then(&["run", "directives/optional.md", "--quiet"])
        .stdout("directive optional: completed\n\n--- prompt ---\nHello {input:title}.\n")
        .stderr(
            "warning[inputs]: input `title` is not set; the reference is kept as written (body)\n",
        )
        .status(0)
        .run();
    let strict = "error[inputs]: input `title` is not set; the reference is kept as written
  --> directives/optional.md:6:7
  |
6 | Hello {input:title}.
  |       ^^^^^^^^^^^^^
   = field: body (bytes 6..19)
   = help: strict mode turns missing values into errors
";
    p.then(&["run", "directives/optional.md", "--strict"])
        .stdout("")
        .stderr(strict)
        .status(2)
        .run();
    p.then(&["run", "directives/optional.md"])
        .env("STRATA_STRICT", "1")
        .stderr(strict)
        .status(2)
        .run();
    let with_file = p.file("strata.yaml", "strict: true\n");
    with_file
        .then(&["run", "directives/optional.md"])
        .stderr(strict)
        .status(2)
        .run();
    with_file
        .then(&["config"])
        .status(0)
        .run()
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("strict "))
        .map(|l| assert!(l.contains("true      strata.yaml:1:9"), "{l}"))
        .expect("a strict line");
}

const CHAIN: &str = "executor: runtimes/subprocess
config:
  command: echo
  args: [\"{a}\"]
  a: \"{b}\"
  b: \"{c}\"
  c: \"{d}\"
  d: \"{e}\"
  e: end
";

#[test]
fn a_five_link_chain_is_a_check_error_until_the_settings_raise_the_limit() {
    let p = project().tool("t/chain", CHAIN);
    let check = p.then(&["check"]).status(1).run();
    assert!(
        check.stdout.starts_with(
            "error[R012]: parameter chain is longer than 3 links: args -> a -> b -> c -> d\n  --> tools/t/chain.yaml:7:7\n"
        ),
        "{}",
        check.stdout
    );
    assert!(check.stdout.contains(
        "   = help: shorten the chain, or raise `limits.param_links` in strata.yaml (or STRATA_LIMITS_PARAM_LINKS)\n"
    ));
    p.then(&["run", "t/chain"]).stdout("").status(2).run();
    let raised = p.file("strata.yaml", "limits:\n  param_links: 5\n");
    raised.then(&["check"]).status(0).run();
    raised
        .then(&["run", "t/chain"])
        .stdout("end\n")
        .stderr("")
        .status(0)
        .run();
    raised
        .then(&["run", "t/chain"])
        .env("STRATA_LIMITS_PARAM_LINKS", "4")
        .stdout("")
        .status(2)
        .run();
}

/// A tool whose command names a parameter nobody declares.
const NOSUCH: &str =
    "executor: runtimes/subprocess\nconfig:\n  command: echo\n  args: [\"{nosuch}\"]\n";

/// The refusal of `t/nosuch`, as every front-end reports it.
const NOSUCH_REFUSED: &str = "error[R001]: unknown parameter `{nosuch}`: it is left as written
  --> tools/t/nosuch.yaml:4:11
  |
4 |   args: [\"{nosuch}\"]
  |           ^^^^^^^^
   = field: config.args[0]
   = help: the parameters here are `{tool_path}`, `{tool_dir}`, `{tool_parent}`, `{project_path}`, `{params_json}`, `{runtime_dir}`, `{args}`, `{cwd}`, `{timeout}`, `{max_output_bytes}`, `{command}`

error[check]: `t/nosuch` was not run: 1 error found
   = help: `strata check` lists every error and warning of the project
";

#[test]
fn a_plan_step_is_refused_as_strata_plan_run_refuses_its_plan() {
    let t = project()
        .tool("t/nosuch", NOSUCH)
        .file("p.yaml", "- {id: a, tool: t/nosuch, arguments: {}}\n");
    t.then(&["run", "t/nosuch"])
        .stdout("")
        .stderr(NOSUCH_REFUSED)
        .status(2)
        .run();
    let plan_refused = NOSUCH_REFUSED.replace("`t/nosuch` was not run", "`p.yaml` was not run");
    t.then(&["plan", "run", "p.yaml"])
        .stderr(&plan_refused)
        .status(2)
        .run();
    t.then(&["plan", "step", "--step", "a", "p.yaml"])
        .stdout("")
        .stderr(&plan_refused)
        .status(2)
        .run();
}

#[test]
fn json_failures_are_one_shape_on_stdout_with_the_same_exit_code() {
    let t = project().tool("t/nosuch", NOSUCH);
    let run = t.then(&["run", "t/nosuch", "--json"]).status(2).run();
    let error = &run.json()["error"];
    assert_eq!(run.json()["ok"], false);
    assert_eq!(error["kind"], "check");
    assert_eq!(error["message"], "`t/nosuch` was not run: 1 error found");
    assert_eq!(error["diagnostics"][0]["kind"], "unknown_name");
    assert_eq!(error["diagnostics"][0]["code"], "R001");
    let unknown = t.then(&["run", "t/nosuhc", "--json"]).status(2).run();
    assert_eq!(
        unknown.json(),
        serde_json::json!({"ok": false, "error": {
            "kind": "unknown_tool",
            "message": "unknown tool `t/nosuhc`",
            "hint": "did you mean `t/nosuch`?"
        }})
    );
    let prompt = t
        .then(&["prompt", "render", "nokey", "--json"])
        .status(2)
        .run();
    assert_eq!(prompt.json()["ok"], false);
}

/// `${tool_dir}` in a tool config is layer C's syntax, which never runs on tool configs: it
/// would reach the process as written. `strata check` reports it as an error (L007) and
/// `strata run` refuses the tool, naming the runtime parameter meant.
#[test]
fn a_runtime_parameter_written_as_a_context_placeholder_is_refused_at_run() {
    let p = project().tool(
        "t/dir",
        "executor: runtimes/subprocess\nconfig:\n  command: echo\n  args: [\"${tool_dir}/data\", \"$${tool_dir} stays\"]\n",
    );
    let l007 = "error[L007]: `${tool_dir}` is a context placeholder in a tool file, where layer C never runs: it would reach the process as written
  --> tools/t/dir.yaml:4:11
  |
4 |   args: [\"${tool_dir}/data\", \"$${tool_dir} stays\"]
  |           ^^^^^^^^^^^
   = field: config.args[0]
   = help: the runtime parameter is `{tool_dir}` (layer P); write `$${tool_dir}` for the literal text
";
    p.then(&["run", "t/dir"])
        .stdout("")
        .stderr(&format!(
            "{l007}
error[check]: `t/dir` was not run: 1 error found
   = help: `strata check` lists every error and warning of the project
"
        ))
        .status(2)
        .run();
    p.then(&["check"])
        .stdout(&format!("{l007}\nchecked 7 files: 1 error, 0 warnings\n"))
        .status(1)
        .run();
    // Written as layer P's parameter it runs, and the escaped text stays as written.
    let fixed = project().tool(
        "t/dir",
        "executor: runtimes/subprocess\nconfig:\n  command: echo\n  args: [\"{tool_dir}/data\", \"$${tool_dir} stays\"]\n",
    );
    let dir = fixed.path().join("tools/t");
    fixed
        .then(&["run", "t/dir"])
        .stdout(&format!("{}/data ${{tool_dir}} stays\n", dir.display()))
        .status(0)
        .run();
}
