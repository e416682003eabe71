//! End-to-end tests of `strata explain`: every stage of a field, with the origin of every
//! segment; secrets never shown.

mod common;
use common::write;

use std::path::Path;
use std::process::Command;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for rel in ["tools/runtimes/subprocess.yaml", "tools/examples/echo.yaml"] {
        write(
            dir.path(),
            rel,
            &std::fs::read_to_string(root.join(rel)).unwrap(),
        );
    }
    write(
        dir.path(),
        "tools/t/login.yaml",
        "executor: runtimes/subprocess\nsecrets: [TOKEN]\nparameters:\n  type: object\n  properties:\n    who: {type: string}\nconfig:\n  command: printf\n  args: [\"%s\", \"t=${TOKEN} u={who} h=${HOME_DIR:-none}\"]\n",
    );
    write(
        dir.path(),
        "directives/hi.md",
        "---\nname: hi\ninputs:\n  - {name: who, type: string, default: Ann}\nactions:\n  - {id: say, tool: examples/echo, params: {message: \"hi {input:who} from ${directive}\"}}\n---\nHello {input:who}\n",
    );
    dir
}

fn explain(dir: &Path, args: &[&str]) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("explain")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TOKEN", "hunter2")
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_tool_field_through_stages_three_to_six_with_provenance() {
    let p = project();
    let (out, err) = explain(
        p.path(),
        &[
            "tools/t/login.yaml",
            "-p",
            "who=${TOKEN}",
            "--field",
            "config.args[1]",
        ],
    );
    assert_eq!(err, "");
    assert_eq!(
        out,
        "tool t/login: stages 1-2 (inputs, context) run before dispatch, on directives and graphs; the config enters at stage 3\n\nconfig.args[1]\n  source     authored:\"t=${TOKEN} u={who} h=${HOME_DIR:-none}\"\n  3 env      authored:\"t=\" secret:\"***\" authored:\" u={who} h=none\"\n  4 params   authored:\"t=\" secret:\"***\" authored:\" u=\" data:\"${TOKEN}\" authored:\" h=none\"\n  5 env      authored:\"t=\" secret:\"***\" authored:\" u=\" data:\"${TOKEN}\" authored:\" h=none\"\n  6 params   authored:\"t=\" secret:\"***\" authored:\" u=\" data:\"${TOKEN}\" authored:\" h=none\"\n"
    );
    assert!(!out.contains("hunter2"));
}

#[test]
fn a_directive_through_stages_one_and_two() {
    let p = project();
    let (out, err) = explain(p.path(), &["directives/hi.md", "--input", "who=${TOKEN}"]);
    assert_eq!(err, "");
    assert_eq!(
        out,
        "directive hi: stages 3-6 run inside each action's tool (strata explain tools/<tool>.yaml); `${steps…}` are empty before a run\n\nbody\n  source     authored:\"Hello {input:who}\\n\"\n  1 inputs   authored:\"Hello \" data:\"${TOKEN}\" authored:\"\\n\"\n  2 context  authored:\"Hello \" data:\"${TOKEN}\" authored:\"\\n\"\nactions[0].params.message\n  source     authored:\"hi {input:who} from ${directive}\"\n  1 inputs   authored:\"hi \" data:\"${TOKEN}\" authored:\" from ${directive}\"\n  2 context  authored:\"hi \" data:\"${TOKEN}\" authored:\" from \" data:\"hi\"\n"
    );
}
