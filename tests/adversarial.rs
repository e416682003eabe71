//! The adversarial suite (issue 7): the real `strata` binary, in scratch projects holding
//! copies of the shipped tools, against hostile data. Tools that print their own argv, stdin
//! and environment as JSON show what actually reached the child.
//!
//! * second-order injection across the tool stages (E and P in every pairing, config keys,
//!   `env_config`, `params_json`), directives (`{input:…}`, `${inputs…}`, `${steps…}`, hook
//!   context) and graphs (state, hook context, checkpoints);
//! * secrets: never in argv, stdin, logs, traces, `--dry-run`/`--explain` output or errors
//!   unless the author placed them there (and then `***` in everything strata prints);
//! * shell metacharacters in every parameter of every shipped runtime: passed as data;
//! * expansion bombs: each stopped by a documented limit with a clear error, in bounded time
//!   and peak memory (measured with GNU time);
//! * path traversal in tool ids, executors, directive, graph and hook tools, and run ids;
//! * env hygiene: the child's environment is exactly the documented allowlist plus declared
//!   names.

mod common;
use common::{path_var, Ran, Test};

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// Generous bounds every run of strata is held to (debug build, shared 2-core machine).
const TIME_LIMIT: Duration = Duration::from_secs(20);
/// Peak resident memory of the strata process (and the children it reaped), in KiB. The
/// measured peaks are far below (docs/security.md).
const RSS_LIMIT_KIB: u64 = 256 * 1024;
/// Every run is measured, and killed with its process group if it is still going after this.
const KILL_AFTER: Duration = Duration::from_secs(TIME_LIMIT.as_secs() * 2);

/// A scratch project holding a copy of the repository's `tools/`.
fn project() -> Test {
    Test::new().copy("tools")
}

/// Holds a run to the suite's time and memory bounds.
fn bounded(o: &Ran) {
    assert!(o.elapsed < TIME_LIMIT, "took {:?}", o.elapsed);
    assert!(
        o.peak_rss_kib < RSS_LIMIT_KIB,
        "peak RSS {} KiB",
        o.peak_rss_kib
    );
}

/// Links the real Python executable as the project's `.venv/bin/python3`, so the python
/// runtime runs it directly (not through a launcher such as a pyenv shim, which adds
/// variables of its own to the environment).
fn python_in_venv(project: Test) -> Test {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let exe = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let bin = project.path().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(exe, bin.join("python3")).unwrap();
    project
}

/// Fails when a shell ever ran an injected `touch PWNED` in the project.
fn assert_not_pwned(project: &Path) {
    assert!(!project.join("PWNED").exists(), "a shell ran injected text");
}

/// A Python program printing its argv (after the program) and stdin as JSON.
const DUMP: &str = "import json, sys\n\
json.dump({'argv': sys.argv[1:], 'stdin': sys.stdin.read()}, sys.stdout)\n";

/// The same, with its whole environment.
const DUMP_ENV: &str = "import json, os, sys\n\
json.dump({'argv': sys.argv[1:], 'stdin': sys.stdin.read(), 'env': dict(os.environ)}, sys.stdout)\n";

/// A YAML string literal (double-quoted JSON is valid YAML).
fn q(s: &str) -> String {
    json!(s).to_string()
}

/// Text with every layer's syntax, shell metacharacters and command substitutions.
const EVIL: &str = "${HOME} ${TOKEN} ${DOT_SECRET} {tool_path} {msg} {params_json} {input:text} \
${inputs.text} ${steps.first.result.stdout} ${state.comment} $${X} {{msg}} ${upper('x')} \
$(touch PWNED) `touch PWNED` ; touch PWNED | touch PWNED && touch PWNED";

const TOKEN: &str = "tok-s3cr3t-value";
const DOT_SECRET: &str = "dot-s3cr3t-value";

fn assert_no_secret(text: &str) {
    for secret in [TOKEN, DOT_SECRET] {
        assert!(!text.contains(secret), "a secret leaked into: {text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Second-order injection and secrets
// ---------------------------------------------------------------------------------------------

/// A tool in which every stage meets hostile data from every other: process env (E) into
/// params (P) and config keys, caller params (P) into later E stages, `env_config`, stdin and
/// `params_json`. The author places the secret `TOKEN` in the child's environment and in one
/// argument; `DOT_SECRET` comes from `.env`.
fn injection_project() -> Test {
    project().file(".env", format!("DOT_SECRET={DOT_SECRET}\n")).file(
        "tools/inject.yaml",
        format!(
            "executor: runtimes/subprocess\nsecrets: [TOKEN]\n\
             parameters:\n  properties:\n    msg: {{type: string}}\n    list: {{type: array, default: []}}\n\
             env_config:\n  env:\n    FROM_ENV: \"${{EVIL_ENV}}\"\n\
             config:\n  command: python3\n  key: \"${{EVIL_ENV}}\"\n  wrapped: \"<{{msg}}>\"\n\
             \x20 args: [\"-c\", {{literal: {}}}, \"${{EVIL_ENV}}\", \"{{msg}}\", \"{{key}}\", \"{{wrapped}}\", \
             \"${{FROM_ENV}}\", \"{{params_json}}\", \"{{list}}\", \"--token=${{TOKEN}}\"]\n\
             \x20 input_data: \"{{msg}}|${{EVIL_ENV}}\"\n  env: {{TOKEN: \"${{TOKEN}}\", MSG: \"{{msg}}\"}}\n",
            q(DUMP_ENV)
        ),
    )
}

fn injection_env() -> [(&'static str, &'static str); 2] {
    [("EVIL_ENV", EVIL), ("TOKEN", TOKEN)]
}

#[test]
fn data_from_every_tool_stage_reaches_the_child_byte_for_byte() {
    let s = injection_project();
    let params = json!({"msg": EVIL, "list": [EVIL, {"k": EVIL}]}).to_string();
    let o = s
        .then(&["run", "inject", "--params-json", &params, "--json"])
        .envs(&injection_env())
        .measured(KILL_AFTER)
        .status(0)
        .run();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let child = &o.json()["data"];
    assert_eq!(
        child["argv"],
        json!([
            EVIL,
            EVIL,
            EVIL,
            format!("<{EVIL}>"),
            EVIL,
            params,
            json!([EVIL, {"k": EVIL}]).to_string(),
            format!("--token={TOKEN}"),
        ])
    );
    assert_eq!(child["stdin"], json!(format!("{EVIL}|{EVIL}")));
    let env = &child["env"];
    assert_eq!(
        (
            &env["MSG"],
            &env["FROM_ENV"],
            &env["TOKEN"],
            &env["DOT_SECRET"]
        ),
        (
            &json!(EVIL),
            &json!(EVIL),
            &json!(TOKEN),
            &json!(DOT_SECRET)
        )
    );
    assert_not_pwned(s.path());
    // The secret is only where the author put it: the environment and `--token=`.
    let args = child["argv"].as_array().unwrap();
    assert_no_secret(&json!(args[..7]).to_string());
    assert_no_secret(child["stdin"].as_str().unwrap());
}

#[test]
fn secrets_never_show_in_dry_runs_explanations_or_errors() {
    let s = injection_project();
    let msg = format!("msg={EVIL}");
    for args in [
        vec!["run", "inject", "-p", &msg, "--dry-run"],
        vec!["run", "inject", "-p", &msg, "--dry-run", "--json"],
        vec!["run", "inject", "-p", &msg, "--explain"],
    ] {
        let o = s
            .then(&args)
            .envs(&injection_env())
            .measured(KILL_AFTER)
            .status(0)
            .run();
        assert_eq!(o.code, Some(0), "{args:?}: {}", o.stderr);
        assert_no_secret(&o.all());
        assert!(o.stdout.contains("--token=***"), "{}", o.stdout);
    }
    let dry = s
        .then(&["run", "inject", "-p", &msg, "--dry-run", "--json"])
        .envs(&injection_env())
        .measured(KILL_AFTER)
        .status(0)
        .run();
    let spec = dry.json();
    assert_eq!(spec["env"]["TOKEN"], json!("***"));
    assert_eq!(spec["env"]["DOT_SECRET"], json!("***"));
    assert_eq!(
        spec["argv"][3],
        json!(EVIL),
        "caller data is shown as it is"
    );

    // Errors that involve secret values: a `:?` message quoting one, a strict-mode miss in
    // a field holding one, invalid parameters next to one, a broken .env line.
    let s = s
        .file(
            "tools/fail.yaml",
            "executor: runtimes/subprocess\nsecrets: [TOKEN]\nconfig:\n  command: echo\n\
         \x20 args: [\"${MISSING:?token is ${TOKEN}, dot is ${DOT_SECRET}}\"]\n",
        )
        .file(
            "tools/strict.yaml",
            "executor: runtimes/subprocess\nsecrets: [TOKEN]\nconfig:\n  command: echo\n\
         \x20 args: [\"${TOKEN}${MISSING}\"]\n",
        );
    let o = s
        .then(&["run", "fail"])
        .envs(&injection_env())
        .measured(KILL_AFTER)
        .status(2)
        .run();
    assert_eq!(o.code, Some(2));
    assert_eq!(
        o.error_line(),
        "error[env]: required variable `MISSING` is unset or empty: token is ***, dot is ***"
    );
    assert_no_secret(&o.all());
    let o = s
        .then(&["run", "strict", "--strict"])
        .envs(&injection_env())
        .measured(KILL_AFTER)
        .status(2)
        .run();
    assert_eq!(o.code, Some(2));
    assert_eq!(
        o.error_line(),
        "error[env]: environment variable `MISSING` is not set"
    );
    assert_no_secret(&o.all());
    let o = s
        .then(&["run", "inject", "-p", "nope=1", "-p", &msg])
        .envs(&injection_env())
        .measured(KILL_AFTER)
        .status(2)
        .run();
    assert_eq!(o.code, Some(2));
    assert_no_secret(&o.all());
    let s = s.file(".env", format!("DOT_SECRET={DOT_SECRET}\n{TOKEN}\n"));
    let o = s
        .then(&["run", "inject", "-p", &msg])
        .envs(&injection_env())
        .measured(KILL_AFTER)
        .status(2)
        .run();
    assert_eq!(o.code, Some(2));
    assert_eq!(o.error_line(), "error[request]: expected NAME=value");
    assert_no_secret(&o.all());
}

#[test]
fn secrets_in_spawn_errors_are_redacted() {
    let s = [
        ("missing", "  command: \"/nonexistent/${TOKEN}\"\n"),
        ("cwd", "  command: echo\n  cwd: \"/nonexistent/${TOKEN}\"\n"),
        ("path", "  command: \"${TOKEN}\"\n"),
    ]
    .into_iter()
    .fold(project(), |s, (name, config)| {
        s.tool(
            name,
            &format!("executor: runtimes/subprocess\nsecrets: [TOKEN]\nconfig:\n{config}"),
        )
    });
    for (name, line) in [
        (
            "missing",
            "error[request]: command `/nonexistent/***` does not exist",
        ),
        (
            "cwd",
            "error[request]: working directory `/nonexistent/***` does not exist",
        ),
        ("path", "error[request]: command `***` not found on PATH"),
    ] {
        let o = s
            .then(&["run", name])
            .envs(&[("TOKEN", TOKEN)])
            .measured(KILL_AFTER)
            .status(2)
            .run();
        assert_eq!(o.code, Some(2), "{name}: {}", o.brief());
        assert_eq!(o.error_line(), line);
        assert_no_secret(&o.all());
    }
}

/// `strata render` with a placeholder of every layer fed by hostile data from every source,
/// through every order of every pair of layers: each value arrives as it was given.
#[test]
fn render_never_rescans_data_through_any_pair_of_layers() {
    let s = project().file(
        "doc.yaml",
        "e: \"<${EVIL}>\"\np: \"<{evil}>\"\nc: \"<${state.evil}>\"\ni: \"<{input:evil}>\"\n\
         secret: \"<${TOKEN}>\"\n",
    );
    let env = format!("EVIL={EVIL}");
    let param = format!("evil={EVIL}");
    let input = format!("evil={EVIL}");
    let context = json!({"state": {"evil": EVIL}}).to_string();
    let token = format!("TOKEN={TOKEN}");
    let render: [&str; 15] = [
        "render",
        "doc.yaml",
        "--clean-env",
        "--env",
        &env,
        "--env",
        &token,
        "--secret",
        "TOKEN",
        "-p",
        &param,
        "--input",
        &input,
        "--context",
        &context,
    ];
    let layers = ["env", "params", "context", "inputs"];
    let field = |layer: &str| match layer {
        "env" => "e",
        "params" => "p",
        "context" => "c",
        _ => "i",
    };
    for first in layers {
        for second in layers.iter().filter(|l| **l != first) {
            let mut args = render.to_vec();
            args.extend(["--layer", first, "--layer", second]);
            let o = s.then(&args).measured(KILL_AFTER).status(0).run();
            assert_eq!(o.code, Some(0), "{first} {second}: {}", o.brief());
            let v = o.json();
            for layer in [first, second] {
                assert_eq!(
                    v[field(layer)],
                    json!(format!("<{EVIL}>")),
                    "{first} {second}"
                );
            }
            if first == "env" || *second == "env" {
                // The author put the secret in the document: it is rendered, and shown by
                // nothing else.
                assert_eq!(v["secret"], json!(format!("<{TOKEN}>")));
            }
        }
    }
    let mut args = render.to_vec();
    args.push("--explain");
    let o = s.then(&args).measured(KILL_AFTER).status(0).run();
    assert_eq!(o.code, Some(0), "{}", o.brief());
    assert_no_secret(&o.all());
    assert!(o.stdout.contains("<***>"), "{}", o.brief());
    assert_not_pwned(s.path());
}

#[test]
fn null_bytes_in_data_are_a_clear_error_not_a_truncated_argument() {
    let s = injection_project();
    let o = s
        .then(&["run", "inject", "--params-json", r#"{"msg": "a\u0000b"}"#])
        .envs(&injection_env())
        .measured(KILL_AFTER)
        .status(2)
        .run();
    assert_eq!(o.code, Some(2), "{}", o.brief());
    assert_eq!(
        o.error_line(),
        "error[request]: contains a NUL byte, which no argument, path or variable can hold"
    );
    assert_no_secret(&o.all());
}

/// A project with the dump tool for directives and graphs: argv and stdin only (its output
/// is logged).
fn dump_tool() -> Test {
    project().file(
        "tools/dump.yaml",
        format!(
            "executor: runtimes/subprocess\nsecrets: [TOKEN]\n\
             parameters:\n  properties:\n    msg: {{type: string}}\n    ctx: {{type: string, default: \"\"}}\n\
             config:\n  command: python3\n  args: [\"-c\", {{literal: {}}}, \"{{msg}}\", \"{{ctx}}\"]\n\
             \x20 input_data: \"{{params_json}}\"\n  env: {{TOKEN: \"${{TOKEN}}\"}}\n",
            q(DUMP)
        ),
    )
}

#[test]
fn directive_inputs_steps_and_hook_context_stay_data() {
    let s = dump_tool().file(
        "directives/inject.md",
        "---\nname: inject\ninputs:\n  - {name: text, type: string, required: true}\n\
         actions:\n  - id: first\n    tool: dump\n    params: {msg: \"{input:text}\", ctx: \"${inputs.text}\"}\n\
         \x20 - id: second\n    tool: dump\n    params: {msg: \"out: ${steps.first.result}\", ctx: \"<${steps.first.result.argv[0]}>\"}\n\
         hooks:\n  - id: log\n    event: after_action\n    action:\n      tool: examples/log\n\
         \x20     params: {line: \"${action.id}: ${action.params.msg}\", file: hook.log}\n---\n\
         Body: {input:text} / ${steps.first.result.argv[1]}\n",
    );
    let input = format!("text={EVIL}");
    let o = s
        .then(&["run", "directives/inject.md", "--input", &input, "--json"])
        .envs(&[("TOKEN", TOKEN)])
        .measured(KILL_AFTER)
        .status(0)
        .run();
    assert_eq!(o.code, Some(0), "{}", o.brief());
    let report = o.json();
    let first = &report["actions"][0]["result"];
    assert_eq!(first["argv"], json!([EVIL, EVIL]));
    assert_eq!(
        first["stdin"],
        json!(json!({"msg": EVIL, "ctx": EVIL}).to_string())
    );
    // The whole result of `first`, embedded in text, is its compact JSON, byte for byte.
    let first_stdout = format!("out: {first}");
    let second = &report["actions"][1]["result"];
    assert_eq!(second["argv"], json!([first_stdout, format!("<{EVIL}>")]));
    assert_eq!(report["prompt"], json!(format!("Body: {EVIL} / {EVIL}\n")));
    assert_eq!(
        o.read("hook.log"),
        format!("first: {EVIL}\nsecond: {first_stdout}\n")
    );
    assert_no_secret(&o.all());
    assert_no_secret(&o.read("hook.log"));
    assert_not_pwned(s.path());
    let o = s
        .then(&[
            "run",
            "directives/inject.md",
            "--input",
            &input,
            "--dry-run",
        ])
        .envs(&[("TOKEN", TOKEN)])
        .measured(KILL_AFTER)
        .status(0)
        .run();
    assert_eq!(o.code, Some(0), "{}", o.brief());
    assert_no_secret(&o.all());
}

#[test]
fn graph_state_and_hook_context_stay_data() {
    let s = dump_tool().file(
        "tools/graphs/inject.yaml",
        "kind: graph\nparameters:\n  type: object\n  properties:\n    text: {type: string}\n\
         state: {comment: \"\", seen: null}\n\
         hooks:\n  - id: log\n    event: after_node\n    action:\n      tool: examples/log\n\
         \x20     params: {line: \"after: ${state.comment}\", file: hook.log}\n\
         nodes:\n  first:\n    kind: action\n    tool: dump\n    params: {msg: \"${inputs.text}\"}\n\
         \x20   assign: {comment: \"${result.argv[0]}\"}\n    next: second\n\
         \x20 second:\n    kind: action\n    tool: dump\n    params: {msg: \"${state.comment}\", ctx: \"<${state.comment}>\"}\n\
         \x20   assign: {seen: \"${result.argv}\"}\n    next: done\n\
         \x20 done:\n    kind: return\n    output: {seen: \"${state.seen}\", comment: \"${state.comment}\"}\n",
    );
    let input = format!("text={EVIL}");
    let o = s
        .then(&[
            "run",
            "graphs/inject",
            "--input",
            &input,
            "--run-id",
            "r1",
            "--quiet",
        ])
        .envs(&[("TOKEN", TOKEN)])
        .measured(KILL_AFTER)
        .status(0)
        .run();
    assert_eq!(o.code, Some(0), "{}", o.brief());
    assert_eq!(
        o.json(),
        json!({"seen": [EVIL, format!("<{EVIL}>")], "comment": EVIL})
    );
    assert_eq!(
        o.read("hook.log"),
        format!("after: {EVIL}\nafter: {EVIL}\nafter: {EVIL}\n")
    );
    assert_no_secret(&o.all());
    assert_no_secret(&o.read(".strata/runs/r1/checkpoint.json"));
    // The progress trace and the JSON event log carry the state, never the secret.
    for (id, mode) in [("r2", None), ("r3", Some("--json"))] {
        let mut args = vec!["run", "graphs/inject", "--input", &input, "--run-id", id];
        args.extend(mode);
        let o = s
            .then(&args)
            .envs(&[("TOKEN", TOKEN)])
            .measured(KILL_AFTER)
            .status(0)
            .run();
        assert_eq!(o.code, Some(0), "{}", o.brief());
        assert_no_secret(&o.all());
    }
    assert_not_pwned(s.path());
}

// ---------------------------------------------------------------------------------------------
// Shell metacharacters, every shipped runtime
// ---------------------------------------------------------------------------------------------

/// Metacharacters of sh, bash, Python and Node, each a separate parameter value.
const METAS: [&str; 24] = [
    "$(touch PWNED)",
    "`touch PWNED`",
    "; touch PWNED",
    "| touch PWNED",
    "&& touch PWNED",
    "|| touch PWNED",
    "\ntouch PWNED\n",
    "> PWNED",
    "< /etc/passwd",
    "$HOME ${HOME} ${PATH:-x} $0 $1 $@ $* $$ $? $!",
    "'; touch PWNED; '",
    "\"; touch PWNED; \"",
    "\\\" \\' \\\\ \\n",
    "* ? [a-z] ~ # !",
    "%s %n %x %PATH%",
    "-rf /",
    "--help",
    "  leading and trailing  ",
    "\ttab\r\n",
    "é 💥 \u{7f} \u{1b}[31m",
    "$'\\x41'",
    "{\"json\": [1]} {tool_path} {{x}}",
    "${IFS}touch${IFS}PWNED",
    "__import__('os').system('touch PWNED')",
];

fn metas_json() -> Value {
    json!({"msg": METAS.concat(), "list": METAS})
}

const METAS_SCHEMA: &str =
    "parameters:\n  properties:\n    msg: {type: string}\n    list: {type: array, items: {type: string}}\n";

fn run_metas(s: &Test, tool: &str) -> Ran {
    let params = metas_json().to_string();
    let o = s
        .then(&["run", tool, "--params-json", &params, "--json"])
        .measured(KILL_AFTER)
        .status(0)
        .run();
    assert_eq!(o.code, Some(0), "{tool}: {}", o.brief());
    assert_not_pwned(s.path());
    o
}

#[test]
fn shell_metacharacters_are_data_on_the_subprocess_runtime() {
    let s = project().file(
        "tools/meta.yaml",
        format!(
            "executor: runtimes/subprocess\n{METAS_SCHEMA}\
             config:\n  command: python3\n  params_env_prefix: PARAM_\n  input_data: \"{{params_json}}\"\n\
             \x20 env: {{MSG: \"{{msg}}\"}}\n  args: [\"-c\", {{literal: {}}}, \"{{msg}}\", \"<{{msg}}>\", \"{{list}}\"]\n",
            q(DUMP_ENV)
        ),
    );
    let o = run_metas(&s, "meta");
    let child = &o.json()["data"];
    let msg = METAS.concat();
    let list = json!(METAS).to_string();
    assert_eq!(
        child["argv"],
        json!([msg.clone(), format!("<{msg}>"), list.clone()])
    );
    assert_eq!(child["stdin"], json!(metas_json().to_string()));
    assert_eq!(
        (
            &child["env"]["MSG"],
            &child["env"]["PARAM_MSG"],
            &child["env"]["PARAM_LIST"]
        ),
        (&json!(msg), &json!(msg), &json!(list))
    );
}

#[test]
fn shell_metacharacters_are_data_on_the_python_runtime() {
    let s = project().file("tools/py/dump.py", DUMP).file(
        "tools/py/meta.yaml",
        format!("executor: runtimes/python\n{METAS_SCHEMA}config:\n  script: dump.py\n"),
    );
    let child = run_metas(&s, "py/meta").json()["data"].clone();
    assert_eq!(
        child,
        json!({"argv": [], "stdin": metas_json().to_string()})
    );
}

#[test]
fn shell_metacharacters_are_data_on_the_node_runtime() {
    let s = project()
        .file(
            "tools/js/dump.js",
            "const stdin = require('fs').readFileSync(0, 'utf8');\n\
         process.stdout.write(JSON.stringify({argv: process.argv.slice(2), stdin}));\n",
        )
        .file(
            "tools/js/meta.yaml",
            format!("executor: runtimes/node\n{METAS_SCHEMA}config:\n  script: dump.js\n"),
        );
    let child = run_metas(&s, "js/meta").json()["data"].clone();
    assert_eq!(
        child,
        json!({"argv": [], "stdin": metas_json().to_string()})
    );
}

#[test]
fn shell_metacharacters_are_data_on_the_bash_runtime() {
    // The script prints what it was given, NUL-separated; the values never become code.
    let s = project()
        .file(
            "tools/sh/dump.sh",
            "printf '%s\\0' \"$PARAM_MSG\" \"$PARAM_LIST\" \"$PARAMS_JSON\"\n",
        )
        .file(
            "tools/sh/meta.yaml",
            format!("executor: runtimes/bash\n{METAS_SCHEMA}config:\n  script: dump.sh\n"),
        );
    let o = run_metas(&s, "sh/meta");
    let stdout = o.json()["stdout"].as_str().unwrap().to_string();
    let parts: Vec<&str> = stdout.split('\0').collect();
    let params_json = metas_json().to_string();
    assert_eq!(
        parts,
        [
            METAS.concat().as_str(),
            json!(METAS).to_string().as_str(),
            params_json.as_str(),
            ""
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Expansion bombs: each stopped by a documented limit, in bounded time and memory
// ---------------------------------------------------------------------------------------------

fn bomb(s: &Test, name: &str, config: &str) -> Ran {
    let o = s
        .then(&["run", name])
        .tool(
            name,
            &format!("executor: runtimes/subprocess\nconfig:\n  command: echo\n{config}"),
        )
        .measured(KILL_AFTER)
        .status(2)
        .run();
    eprintln!("{name}: {:?}, peak RSS {} KiB", o.elapsed, o.peak_rss_kib);
    bounded(&o);
    assert_eq!(o.code, Some(2), "{name}: {}", o.brief());
    o
}

/// Runs the directive `directives/<name>.md` with `body`: refused (exit 2) within the bounds.
fn directive_bomb(s: &Test, name: &str, body: &str) -> Ran {
    let rel = format!("directives/{name}.md");
    let o = s
        .then(&["run", &rel])
        .file(&rel, format!("---\nname: {name}\n---\n{body}\n"))
        .measured(KILL_AFTER)
        .status(2)
        .run();
    bounded(&o);
    assert_eq!(o.code, Some(2), "{}", o.brief());
    o
}

#[test]
fn deeply_nested_defaults_stop_at_the_depth_limit() {
    let s = project();
    let env = format!("{}x{}", "${A:-".repeat(10_000), "}".repeat(10_000));
    let o = bomb(&s, "env_nest", &format!("  args: [{}]\n", q(&env)));
    assert_eq!(
        o.error_line(),
        "error[S001]: defaults are nested more than 32 levels deep"
    );
    let inputs = format!("{}x{}", "{input:a:".repeat(10_000), "}".repeat(10_000));
    let o = directive_bomb(&s, "nest", &inputs);
    assert_eq!(
        o.error_line(),
        "error[S001]: defaults are nested more than 32 levels deep"
    );
    let expr = format!("${{a ?? {}1{}}}", "[".repeat(10_000), "]".repeat(10_000));
    let o = directive_bomb(&s, "expr", &expr);
    assert_eq!(o.error_line(), "error[S001]: expression nested too deeply");
}

#[test]
fn self_referential_and_mutually_recursive_params_are_cycles() {
    let s = project();
    let o = bomb(&s, "selfref", "  a: \"{a}\"\n  args: [\"{a}\"]\n");
    assert_eq!(o.error_line(), "error[R009]: parameter cycle: a -> a");
    let o = bomb(
        &s,
        "mutual",
        "  a: \"x{b}\"\n  b: \"y{c}\"\n  c: \"z{a}\"\n  args: [\"{a}\"]\n",
    );
    assert_eq!(
        o.error_line(),
        "error[R009]: parameter cycle: a -> b -> c -> a"
    );
    let o = bomb(
        &s,
        "long",
        "  a: \"{b}\"\n  b: \"{c}\"\n  c: \"{d}\"\n  d: \"{e}\"\n  e: end\n  args: [\"{a}\"]\n",
    );
    assert!(
        o.error_line()
            .starts_with("error[R012]: parameter chain is longer than 3 links: "),
        "{}",
        o.stderr
    );
}

#[test]
fn exponential_parameter_growth_stops_at_the_output_limit() {
    let s = project();
    // Each level repeats the one below 256 times: 4 KiB, 1 MiB, 256 MiB (three links from
    // `args`, the most allowed).
    let k0 = "x".repeat(4096);
    let rep = |k: &str| q(&format!("{{{k}}}").repeat(256));
    let o = bomb(
        &s,
        "laughs",
        &format!(
            "  k0: {}\n  k1: {}\n  k2: {}\n  args: [\"{{k2}}\"]\n",
            q(&k0),
            rep("k0"),
            rep("k1"),
        ),
    );
    assert_eq!(
        o.error_line(),
        "error[params]: rendered string exceeds 16777216 bytes"
    );
}

#[test]
fn a_yaml_billion_laughs_file_is_refused() {
    let mut yaml = String::from(
        "executor: runtimes/subprocess\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..10 {
        let p = i - 1;
        yaml.push_str(&format!(
            "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    yaml.push_str("config: {command: echo, args: \"*l9\"}\n");
    let s = project().file("tools/lol.yaml", &yaml);
    let o = s.then(&["run", "lol"]).measured(KILL_AFTER).status(2).run();
    eprintln!(
        "billion laughs: {:?}, peak RSS {} KiB",
        o.elapsed, o.peak_rss_kib
    );
    bounded(&o);
    assert_eq!(o.code, Some(2), "{}", o.brief());
    assert_eq!(
        o.error_line(),
        "error[S002]: YAML aliases repeat the document more than 100 times over"
    );
}

#[test]
fn a_million_placeholders_in_one_string_are_refused() {
    let s = project();
    let o = bomb(
        &s,
        "million",
        &format!("  args: [{}]\n", q(&"{p}".repeat(1_000_000))),
    );
    assert_eq!(
        o.error_line(),
        "error[S001]: more than 10000 placeholders in one string"
    );
    let o = directive_bomb(&s, "million", &"${a}".repeat(1_000_000));
    assert_eq!(
        o.error_line(),
        "error[S001]: more than 10000 placeholders in one string"
    );
    assert!(o.stderr.len() < 1000, "{}", o.brief());
}

#[test]
fn huge_and_deeply_nested_documents_are_refused() {
    let s = project();
    let o = bomb(
        &s,
        "huge",
        &format!("  args: [{}]\n", q(&"$".repeat(5 << 20))),
    );
    assert_eq!(
        o.error_line(),
        "error[S002]: string of 5242880 bytes exceeds the template limit of 4194304 bytes"
    );
    // The snippet shows a window of the 5 MB line, not all of it.
    assert!(o.stderr.len() < 1000, "{}", o.brief());
    let s = s.file(
        "tools/deep.yaml",
        format!("config: {}1{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    );
    let o = s
        .then(&["run", "deep"])
        .measured(KILL_AFTER)
        .status(2)
        .run();
    bounded(&o);
    assert_eq!(o.code, Some(2), "{}", o.brief());
    assert_eq!(
        o.error_line(),
        "error[S002]: YAML nests collections more than 128 levels deep"
    );
    assert!(o.stderr.len() < 1000, "{}", o.brief());
}

#[test]
fn a_tool_writing_endlessly_is_capped_in_bounded_memory() {
    let s = project()
        .file(
            "tools/endless.yaml",
            "executor: runtimes/subprocess\nconfig:\n  command: yes\n  timeout: 2\n",
        )
        .file(
            "tools/gig.yaml",
            "executor: runtimes/subprocess\nconfig:\n  command: head\n  args: [\"-c\", \"1073741824\", /dev/zero]\n",
        );
    // The default cap (8 MiB per stream) holds however much the tool writes.
    let o = s
        .then(&["run", "endless", "--json"])
        .measured(KILL_AFTER)
        .status(124)
        .run();
    eprintln!("yes: {:?}, peak RSS {} KiB", o.elapsed, o.peak_rss_kib);
    bounded(&o);
    assert_eq!(o.code, Some(124));
    let v = o.json();
    assert_eq!(v["stdout"].as_str().map(str::len), Some(8 << 20));
    assert_eq!(
        (&v["truncated"], &v["timed_out"]),
        (&json!(true), &json!(true))
    );
    let o = s.then(&["run", "gig"]).measured(KILL_AFTER).status(0).run();
    eprintln!("1 GiB: {:?}, peak RSS {} KiB", o.elapsed, o.peak_rss_kib);
    bounded(&o);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout.len(), 8 << 20);
    assert_eq!(
        o.stderr,
        "strata: stdout of `gig` was truncated at 8388608 bytes\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Path traversal
// ---------------------------------------------------------------------------------------------

/// A project with a tool file outside `tools/` that would leave a mark if it ever ran.
fn traversal_project() -> Test {
    project().file(
        "outside.yaml",
        "executor: runtimes/subprocess\nconfig:\n  command: touch\n  args: [PWNED]\n",
    )
}

#[test]
fn tool_ids_cannot_leave_the_tools_directory() {
    let s = traversal_project();
    let depth = s.path().components().count();
    let up = "../".repeat(depth + 2);
    let etc = format!("{up}etc/passwd");
    // A file given by path outside the project is looked for in its own folder's project
    // (docs/tools.md, "The project"): there is none, so nothing runs.
    let outside = s.path().parent().unwrap().canonicalize().unwrap();
    let no_project = |dir: &str| {
        format!("error[request]: no `tools/` directory in `{dir}` or any of its parents")
    };
    for (id, line) in [
        (
            "../outside",
            "error[request]: unknown tool `../outside`".to_string(),
        ),
        (
            "examples/../../outside",
            "error[request]: unknown tool `examples/../../outside`".to_string(),
        ),
        (
            "../outside.yaml",
            no_project(&outside.display().to_string()),
        ),
        (etc.as_str(), no_project("/etc")),
        ("/etc/passwd", no_project("/etc")),
    ] {
        let o = s.then(&["run", id]).measured(KILL_AFTER).status(2).run();
        assert_eq!(o.code, Some(2), "{id}: {}", o.brief());
        assert_eq!(o.error_line(), line);
    }
    let s = s.file(
        "tools/hop.yaml",
        "executor: ../outside\nconfig: {command: echo}\n",
    );
    let o = s.then(&["run", "hop"]).measured(KILL_AFTER).status(2).run();
    assert_eq!(o.code, Some(2), "{}", o.brief());
    assert_eq!(
        o.error_line(),
        "error[S003]: unknown executor `../outside` in chain hop -> ../outside"
    );
    assert_not_pwned(s.path());
}

#[test]
fn directive_graph_and_hook_tools_cannot_leave_the_tools_directory() {
    let s = traversal_project()
        .file(
            "directives/act.md",
            "---\nname: act\nactions:\n  - {id: a, tool: ../outside}\n---\nx\n",
        )
        .file(
            "directives/hook.md",
            "---\nname: hook\nhooks:\n  - {id: h, event: directive_started, action: {tool: ../outside}}\n---\nx\n",
        )
        .file(
            "tools/graphs/node.yaml",
            "kind: graph\nnodes:\n  a: {kind: action, tool: ../outside, next: b}\n  b: {kind: return, output: 1}\n",
        )
        .file(
            "tools/graphs/hook.yaml",
            "kind: graph\nhooks:\n  - {id: h, event: graph_started, action: {tool: ../outside}}\n\
             nodes:\n  b: {kind: return, output: 1}\n",
        );
    for args in [
        vec!["run", "directives/act.md"],
        vec!["run", "directives/hook.md"],
        vec!["run", "graphs/node"],
        vec!["run", "graphs/hook"],
    ] {
        let o = s.then(&args).measured(KILL_AFTER).status(2).run();
        assert_eq!(o.code, Some(2), "{args:?}: {}", o.brief());
        assert!(
            o.stderr.contains("unknown tool `../outside`"),
            "{args:?}: {}",
            o.stderr
        );
    }
    assert_not_pwned(s.path());
}

#[test]
fn run_ids_cannot_leave_the_runs_directory() {
    let s = project();
    for (flag, id) in [
        ("--resume", "../../etc/passwd"),
        ("--resume", ".."),
        ("--run-id", "../escape"),
        ("--run-id", "/tmp/escape"),
        ("--run-id", "a/b"),
    ] {
        let o = s
            .then(&["run", "graphs/retry", flag, id, "--quiet"])
            .measured(KILL_AFTER)
            .status(2)
            .run();
        assert_eq!(o.code, Some(2), "{flag} {id}: {}", o.brief());
        assert_eq!(
            o.error_line(),
            format!("error[request]: invalid run id `{id}`")
        );
    }
    assert!(!s.path().join("escape").exists());
    assert!(!s.path().join(".strata/escape").exists());
    assert!(!s.path().join(".strata/runs/a").exists());
}

// ---------------------------------------------------------------------------------------------
// Env hygiene
// ---------------------------------------------------------------------------------------------

/// The caller's environment: the whole allowlist of docs/tools.md, and variables that must
/// never reach a child (credentials, loader and interpreter hooks).
const CALLER_ENV: [(&str, &str); 22] = [
    ("USER", "u"),
    ("LOGNAME", "u"),
    ("SHELL", "/bin/sh"),
    ("LANG", "C.UTF-8"),
    ("LANGUAGE", "en"),
    ("LC_ALL", "C.UTF-8"),
    ("LC_TIME", "C"),
    ("TZ", "UTC"),
    ("TMPDIR", "/tmp"),
    ("TERM", "dumb"),
    ("AWS_SECRET_ACCESS_KEY", "aws-s3cr3t"),
    ("GITHUB_TOKEN", "gh-s3cr3t"),
    ("LD_LIBRARY_PATH", "/nonexistent"),
    ("PYTHONPATH", "/nonexistent"),
    ("PYTHONSTARTUP", "/nonexistent"),
    ("NODE_OPTIONS", "--require /nonexistent.js"),
    ("BASH_ENV", "evil.sh"),
    ("ENV", "evil.sh"),
    ("IFS", "x"),
    ("PS4", "$(touch PWNED)"),
    ("SHELLOPTS", "xtrace"),
    ("DECLARED", "passed"),
];

/// The names every child gets: the allowlist (all set above) with PATH and HOME.
fn allowlist() -> BTreeSet<String> {
    [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_TIME", "TZ",
        "TMPDIR", "TERM",
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

fn env_names(env: &Value) -> BTreeSet<String> {
    env.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn a_child_sees_only_the_allowlist_and_declared_names() {
    let s = python_in_venv(
        project()
        .file("evil.sh", "touch PWNED\n")
        .file(".env", "FROM_DOTENV=d\n")
        .file(
            "tools/plain.yaml",
            "executor: runtimes/subprocess\nconfig:\n  command: env\n  args: [\"-0\"]\n",
        )
        .file(
            "tools/declared.yaml",
            "executor: runtimes/subprocess\nenv_config:\n  env: {DECLARED: \"${DECLARED:-}\"}\n\
             config:\n  command: env\n  args: [\"-0\"]\n  env: {EXTRA: x}\n",
        )
        .file("tools/py/dump.py", DUMP_ENV),
    )
        .file(
            "tools/py/env.yaml",
            "executor: runtimes/python\nconfig:\n  script: dump.py\n",
        )
        .file(
            "tools/js/env.js",
            "process.stdout.write(JSON.stringify(process.env));\n",
        )
        .file(
            "tools/js/env.yaml",
            "executor: runtimes/node\nconfig:\n  script: env.js\n",
        )
        .file("tools/sh/env.sh", "exec env -0\n")
        .file(
            "tools/sh/env.yaml",
            "executor: runtimes/bash\nconfig:\n  script: env.sh\n",
        );
    let run = |tool: &str| {
        let o = s
            .then(&["run", tool, "--json"])
            .envs(&CALLER_ENV)
            .measured(KILL_AFTER)
            .status(0)
            .run();
        assert_eq!(o.code, Some(0), "{tool}: {}", o.brief());
        o.json()
    };
    let nul_env = |v: &Value| -> Value {
        let text = v["stdout"].as_str().unwrap();
        let map: serde_json::Map<String, Value> = text
            .split('\0')
            .filter(|e| !e.is_empty())
            .map(|e| {
                let (k, v) = e.split_once('=').unwrap();
                (k.to_string(), json!(v))
            })
            .collect();
        Value::Object(map)
    };
    let base = allowlist();
    let with = |names: &[&str]| -> BTreeSet<String> {
        let mut set = base.clone();
        set.extend(names.iter().map(|n| n.to_string()));
        set
    };

    let plain = nul_env(&run("plain"));
    assert_eq!(env_names(&plain), with(&["FROM_DOTENV"]));
    for (k, v) in CALLER_ENV {
        if base.contains(k) {
            assert_eq!(plain[k], json!(v), "{k}");
        }
    }
    assert_eq!(plain["PATH"], json!(path_var()));

    let declared = nul_env(&run("declared"));
    assert_eq!(
        env_names(&declared),
        with(&["FROM_DOTENV", "DECLARED", "EXTRA"])
    );
    assert_eq!(declared["DECLARED"], json!("passed"));

    let py = run("py/env");
    assert_eq!(
        env_names(&py["data"]["env"]),
        with(&[
            "FROM_DOTENV",
            "PYTHON",
            "PYTHONUNBUFFERED",
            "PYTHONDONTWRITEBYTECODE"
        ])
    );
    let js = run("js/env");
    assert_eq!(
        env_names(&js["data"]),
        with(&["FROM_DOTENV", "NODE", "NODE_NO_WARNINGS"])
    );
    // bash exports PWD, SHLVL and `_` to what it runs; nothing else may appear.
    let mut sh = env_names(&nul_env(&run("sh/env")));
    for own in ["PWD", "SHLVL", "_", "OLDPWD"] {
        sh.remove(own);
    }
    assert_eq!(sh, with(&["FROM_DOTENV", "BASH_BIN", "PARAMS_JSON"]));
    assert_not_pwned(s.path());
}
