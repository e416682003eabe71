//! End-to-end tests of `strata explain`: every stage of a field, with the origin of every
//! segment; secrets never shown.

mod common;
use common::Test;

/// A project with the shipped subprocess runtime and echo tool, a tool holding a secret and
/// a directive; `strata explain` is run in it with the secret `TOKEN` set.
fn explain(args: &[&str]) -> Test {
    let mut argv = vec!["explain"];
    argv.extend_from_slice(args);
    Test::new()
        .copy("tools/runtimes/subprocess.yaml")
        .copy("tools/examples/echo.yaml")
        .tool(
            "t/login",
            "executor: runtimes/subprocess\nsecrets: [TOKEN]\nparameters:\n  type: object\n  properties:\n    who: {type: string}\nconfig:\n  command: printf\n  args: [\"%s\", \"t=${TOKEN} u={who} h=${HOME_DIR:-none}\"]\n",
        )
        .file(
            "directives/hi.md",
            "---\nname: hi\ninputs:\n  - {name: who, type: string, default: Ann}\nactions:\n  - {id: say, tool: examples/echo, params: {message: \"hi {input:who} from ${directive}\"}}\n---\nHello {input:who}\n",
        )
        .args(&argv)
        .env("TOKEN", "hunter2")
}

#[test]
fn a_tool_field_through_stages_three_to_six_with_provenance() {
    let ran = explain(&[
        "tools/t/login.yaml",
        "-p",
        "who=${TOKEN}",
        "--field",
        "config.args[1]",
    ])
    .stderr("")
    .stdout("tool t/login: stages 1-2 (inputs, context) run before dispatch, on directives and graphs; the config enters at stage 3\n\nconfig.args[1]\n  source     authored:\"t=${TOKEN} u={who} h=${HOME_DIR:-none}\"\n  3 env      authored:\"t=\" secret:\"***\" authored:\" u={who} h=none\"\n  4 params   authored:\"t=\" secret:\"***\" authored:\" u=\" data:\"${TOKEN}\" authored:\" h=none\"\n  5 env      authored:\"t=\" secret:\"***\" authored:\" u=\" data:\"${TOKEN}\" authored:\" h=none\"\n  6 params   authored:\"t=\" secret:\"***\" authored:\" u=\" data:\"${TOKEN}\" authored:\" h=none\"\n")
    .status(0).run();
    assert!(!ran.stdout.contains("hunter2"));
}

#[test]
fn a_directive_through_stages_one_and_two() {
    explain(&["directives/hi.md", "--input", "who=${TOKEN}"])
        .stderr("")
        .stdout("directive hi: stages 3-6 run inside each action's tool (strata explain tools/<tool>.yaml); `${steps…}` are empty before a run\n\nbody\n  source     authored:\"Hello {input:who}\\n\"\n  1 inputs   authored:\"Hello \" data:\"${TOKEN}\" authored:\"\\n\"\n  2 context  authored:\"Hello \" data:\"${TOKEN}\" authored:\"\\n\"\nactions[0].params.message\n  source     authored:\"hi {input:who} from ${directive}\"\n  1 inputs   authored:\"hi \" data:\"${TOKEN}\" authored:\" from ${directive}\"\n  2 context  authored:\"hi \" data:\"${TOKEN}\" authored:\" from \" data:\"hi\"\n")
        .status(0).run();
}
