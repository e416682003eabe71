//! End-to-end tests of `strata run` and `strata tools`: the real binary running real
//! subprocesses through every shipped runtime, every fault of the tool-execution issue, and
//! SPEC §0's promise at the spawn boundary.

mod common;
use common::{home_var, path_var, refusal, Ran, Test};

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Caller text holding every layer's syntax and a shell command substitution.
const EVIL: &str = "${HOME} {tool_path} $(rm -rf /) `id` {{x}} $${Y}";

fn which(name: &str) -> String {
    path_var()
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
        .expect("program on PATH")
}

/// The result object without its timing.
fn result_of(o: &Ran) -> Value {
    let mut v = o.json();
    let ms = v["duration_ms"].as_u64().expect("duration_ms");
    assert!(ms < 60_000, "{ms}");
    v.as_object_mut().unwrap().remove("duration_ms");
    v
}

/// A scratch project with the shipped runtimes.
fn project() -> Test {
    ["subprocess", "python", "node", "bash"]
        .into_iter()
        .fold(Test::new(), |t, name| {
            t.copy(&format!("tools/runtimes/{name}.yaml"))
        })
}

fn pid_alive(pid: &str) -> bool {
    Path::new("/proc").join(pid.trim()).exists()
}

// ---------------------------------------------------------------------------------------
// The shipped examples, from the repository root, one per runtime.

#[test]
fn example_echo_runs_on_the_subprocess_primitive() {
    let o = Test::in_repo()
        .args(&["run", "tools/examples/echo.yaml"])
        .status(0)
        .run();
    assert_eq!(o.stdout, "hello from strata\n");
    assert_eq!(o.stderr, "");
    assert_eq!(o.code, Some(0));
    let o = Test::in_repo()
        .args(&["run", "examples/echo", "-p", "message=hi there"])
        .status(0)
        .run();
    assert_eq!(o.stdout, "hi there\n");
}

#[test]
fn example_greet_uses_env_defaults_config_keys_and_caller_parameters() {
    let o = Test::in_repo()
        .args(&["run", "tools/examples/greet.yaml"])
        .status(0)
        .run();
    assert_eq!(o.stdout, "Hello, world! (style: warm)\n");
    let o = Test::in_repo()
        .args(&["run", "examples/greet", "-p", "punctuation=?"])
        .envs(&[("GREET_WHO", "Ann"), ("GREETING_STYLE", "dry")])
        .status(0)
        .run();
    assert_eq!(o.stdout, "Hello, Ann? (style: dry)\n");
}

#[test]
fn example_stats_runs_python_with_params_json_on_stdin() {
    let o = Test::in_repo()
        .args(&[
            "run",
            "tools/examples/stats.yaml",
            "--params-json",
            r#"{"numbers": [1, 2, 3, 4]}"#,
            "--json",
        ])
        .status(0)
        .run();
    let out = r#"{"label": "numbers", "count": 4, "sum": 10, "mean": 2.5, "min": 1, "max": 4}"#;
    assert_eq!(
        result_of(&o),
        json!({
            "success": true, "exit_code": 0, "stdout": format!("{out}\n"), "stderr": "",
            "data": {"label": "numbers", "count": 4, "sum": 10, "mean": 2.5, "min": 1, "max": 4},
            "truncated": false, "timed_out": false
        })
    );
    assert_eq!(o.code, Some(0));
}

#[test]
fn every_example_of_the_tool_issue_runs_without_parameters() {
    for (tool, out) in [
        ("echo", "hello from strata\n"),
        ("greet", "Hello, world! (style: warm)\n"),
        ("stats", "{\"label\": \"numbers\", \"count\": 4, \"sum\": 10, \"mean\": 2.5, \"min\": 1, \"max\": 4}\n"),
        ("braces", "{\"hello\": \"strata\", \"untouched\": \"${HOME} {tool_path} {{x}}\"}\n"),
        ("words", "{\"words\":4,\"characters\":19}\n"),
        ("report", "Report\n1. item 1\n2. item 2\n3. item 3\n"),
        ("token", "{\"token_length\": 10}\n"),
    ] {
        let path = format!("tools/examples/{tool}.yaml");
        let o = Test::in_repo().args(&["run", &path]).status(0).run();
        assert_eq!((o.stdout.as_str(), o.stderr.as_str()), (out, ""), "{tool}");
        assert_eq!(o.code, Some(0), "{tool}");
    }
}

#[test]
fn example_braces_passes_a_literal_program_byte_for_byte() {
    let o = Test::in_repo()
        .args(&["run", "tools/examples/braces.yaml", "-p", "name=Ann"])
        .status(0)
        .run();
    assert_eq!(
        o.stdout,
        "{\"hello\": \"Ann\", \"untouched\": \"${HOME} {tool_path} {{x}}\"}\n"
    );
}

#[test]
fn example_words_runs_node() {
    let o = Test::in_repo()
        .args(&[
            "run",
            "tools/examples/words.yaml",
            "-p",
            "text=one two  three ✓",
            "--json",
        ])
        .status(0)
        .run();
    let v = result_of(&o);
    assert_eq!(v["data"], json!({"words": 4, "characters": 16}));
    assert_eq!(v["success"], json!(true));
}

#[test]
fn example_report_runs_bash_with_parameters_in_the_environment() {
    let o = Test::in_repo()
        .args(&[
            "run",
            "tools/examples/report.yaml",
            "-p",
            &format!("title={EVIL}"),
            "-p",
            "count=2",
        ])
        .status(0)
        .run();
    assert_eq!(o.stdout, format!("{EVIL}\n1. item 1\n2. item 2\n"));
    assert_eq!(o.code, Some(0));
}

#[test]
fn example_token_keeps_its_secret_out_of_the_dry_run() {
    let env = [("API_TOKEN", "s3cr3t-value")];
    let o = Test::in_repo()
        .args(&["run", "tools/examples/token.yaml"])
        .envs(&env)
        .status(0)
        .run();
    assert_eq!(o.stdout, "{\"token_length\": 12}\n");
    let o = Test::in_repo()
        .args(&["run", "examples/token", "--dry-run"])
        .envs(&env)
        .status(0)
        .run();
    assert!(o.stdout.contains("  API_TOKEN=***\n"), "{}", o.stdout);
    assert!(!o.stdout.contains("s3cr3t"));
}

#[test]
fn strata_tools_lists_the_tools_with_their_descriptions() {
    let s = project()
        .tool(
            "zeta/last",
            "description: the last one\nexecutor: subprocess\n",
        )
        .tool("alpha", "executor: runtimes/subprocess\n")
        .file("tools/alpha/scripts/helper.py", "print(1)\n");
    let o = s.then(&["tools"]).status(0).run();
    assert_eq!(
        o.stdout,
        "\
alpha
runtimes/bash        Bash runtime - parameters as PARAM_<NAME> environment variables, never spliced into the script
runtimes/node        Node.js runtime - node from PATH; parameters as JSON on stdin
runtimes/python      Python runtime - project .venv or python3; parameters as JSON on stdin
runtimes/subprocess  The subprocess primitive - argv only, explicit env, timeout, capped output
zeta/last            the last one
"
    );
    assert_eq!(o.code, Some(0));
    let o = Test::in_repo().args(&["tools"]).status(0).run();
    assert_eq!(o.code, Some(0), "{}", o.stdout);
    for line in [
        "examples/echo        Prints a message exactly as given\n",
        "examples/stats       Summary statistics of a list of numbers (Python, params_json on stdin)\n",
    ] {
        assert!(o.stdout.contains(line), "{}", o.stdout);
    }
}

// ---------------------------------------------------------------------------------------
// SPEC §0 at the spawn boundary: caller data reaches the child byte for byte, through argv,
// stdin, the config's env and the bash runtime's PARAM_ variables.

#[test]
fn caller_data_reaches_the_child_byte_for_byte() {
    let s = project()
        .tool(
            "argv",
            "executor: runtimes/subprocess\nparameters:\n  properties: {msg: {type: string}}\n\
             config:\n  command: printf\n  args: [\"%s|%s\", \"{msg}\", \"<{msg}>\"]\n",
        )
        .tool(
            "stdin",
            "executor: runtimes/python\nparameters:\n  properties: {msg: {type: string}}\n\
             config:\n  args: [\"-c\", {literal: \"import sys; sys.stdout.write(sys.stdin.read())\"}]\n",
        )
        .tool(
            "envvar",
            "executor: runtimes/subprocess\nparameters:\n  properties: {msg: {type: string}}\n\
             config:\n  command: printenv\n  args: [MSG]\n  env: {MSG: \"{msg}\"}\n",
        )
        .tool(
            "bashenv",
            "executor: runtimes/bash\nparameters:\n  properties: {msg: {type: string}}\n\
             config:\n  args: [\"-c\", {literal: 'printf \"%s\" \"$PARAM_MSG\"'}]\n",
        );
    let p = format!("msg={EVIL}");
    let o = s.then(&["run", "argv", "-p", &p]).status(0).run();
    assert_eq!(o.stdout, format!("{EVIL}|<{EVIL}>"));
    let o = s.then(&["run", "stdin", "-p", &p]).status(0).run();
    assert_eq!(o.stdout, json!({ "msg": EVIL }).to_string());
    let o = s.then(&["run", "envvar", "-p", &p]).status(0).run();
    assert_eq!(o.stdout, format!("{EVIL}\n"));
    let o = s.then(&["run", "bashenv", "-p", &p]).status(0).run();
    assert_eq!(o.stdout, EVIL);
    assert!(Path::new("/").join("bin").exists(), "nothing was removed");
}

#[test]
fn caller_parameters_never_override_config_keys_or_runtime_parameters() {
    let s = project().tool(
        "t",
        "executor: runtimes/subprocess\nparameters:\n  additionalProperties: true\n\
         config:\n  name: authored\n  command: printf\n  args: [\"%s %s\", \"{name}\", \"{tool_dir}\"]\n",
    );
    let o = s
        .then(&["run", "t", "-p", "name=caller", "-p", "tool_dir=caller"])
        .status(0)
        .run();
    let dir = s.path().join("tools").to_string_lossy().into_owned();
    assert_eq!(o.stdout, format!("authored {dir}"));
}

// ---------------------------------------------------------------------------------------
// The environment: precedence and the explicit child environment.

#[test]
fn env_layers_apply_in_order_and_the_child_gets_only_the_allowlist_and_declared_names() {
    let s = project()
        .file(".env", "LAYER=dotenv\nFROM_DOTENV=d\n")
        .tool(
            "runtimes/layered",
            "executor: runtimes/subprocess\nenv_config:\n  env:\n    LAYER: \"runtime(${LAYER})\"\n    RT: r\n",
        )
        .tool(
            "t",
            "executor: runtimes/layered\nenv_config:\n  env:\n    LAYER: \"tool(${LAYER})\"\n\
             config:\n  command: env\n  env: {EXTRA: \"${NOT_PASSED}\"}\n",
        );
    let o = s
        .then(&["run", "t"])
        .envs(&[("LAYER", "process"), ("NOT_PASSED", "np"), ("LANG", "C")])
        .status(0)
        .run();
    let mut lines: Vec<String> = o.stdout.lines().map(str::to_string).collect();
    lines.sort();
    let want = vec![
        "EXTRA=np".to_string(),
        "FROM_DOTENV=d".to_string(),
        format!("HOME={}", home_var()),
        "LANG=C".to_string(),
        "LAYER=tool(runtime(dotenv))".to_string(),
        format!("PATH={}", path_var()),
        "RT=r".to_string(),
    ];
    assert_eq!(lines, want);
}

// ---------------------------------------------------------------------------------------
// --dry-run, --explain, --json and exit codes.

#[test]
fn dry_run_prints_the_resolved_spawn_spec_with_secrets_redacted() {
    let s = project().file(".env", "DOT=from-dotenv\n").tool(
        "t",
        "executor: runtimes/subprocess\nsecrets: [TOKEN]\nparameters:\n  properties: {n: {type: integer, default: 2}}\n\
         config:\n  command: printf\n  args: [\"%s\", \"token=${TOKEN}\", \"{n}\", \"${DOT}\"]\n  input_data: \"{params_json}\"\n  timeout: 1.5\n",
    );
    let o = s
        .then(&["run", "t", "--dry-run"])
        .envs(&[("TOKEN", "s3cr3t")])
        .status(0)
        .run();
    let root = s.path().to_string_lossy().into_owned();
    let printf = which("printf");
    assert_eq!(
        o.stdout,
        format!(
            "chain:   t -> runtimes/subprocess\n\
             command: {printf}\n\
             argv:    [\"{printf}\", \"%s\", \"token=***\", \"2\", \"***\"]\n\
             cwd:     {root}\n\
             stdin:   \"{{\\\"n\\\":2}}\"\n\
             timeout: 1.5s\n\
             output:  8388608 bytes per stream\n\
             env:\n  DOT=***\n  HOME={}\n  PATH={}\n",
            home_var(),
            path_var()
        )
    );
    assert_eq!(o.stderr, "");
    let o = s
        .then(&["run", "t", "--dry-run", "--json"])
        .envs(&[("TOKEN", "s3cr3t")])
        .status(0)
        .run();
    assert_eq!(
        o.json(),
        json!({
            "command": printf,
            "argv": [printf, "%s", "token=***", "2", "***"],
            "cwd": root,
            "env": {"DOT": "***", "HOME": home_var(), "PATH": path_var()},
            "stdin": "{\"n\":2}",
            "timeout_ms": 1500,
            "max_output_bytes": 8388608
        })
    );
    assert!(!o.stdout.contains("s3cr3t"));
}

#[test]
fn explain_shows_every_config_field_after_each_stage() {
    let s = project().tool(
        "t",
        "executor: runtimes/subprocess\nparameters:\n  properties: {p: {type: string, default: P}}\n\
         config:\n  timeout: 5\n  who: \"${WHO:-{p}}\"\n  command: printf\n  args: [\"{who}\", {literal: \"{p}\"}]\n",
    );
    let o = s.then(&["run", "t", "--explain"]).status(0).run();
    let root = s.path().to_string_lossy().into_owned();
    let root_json = Value::String(root.clone()).to_string();
    let printf = which("printf");
    let want = format!(
        "config.args[0]\n  source    \"{{who}}\"\n  3 env     \"{{who}}\"\n  4 params  \"P\"\n  5 env     \"P\"\n  6 params  \"P\"\n\
         config.args[1]\n  literal   \"{{p}}\"\n\
         config.cwd\n  source    \"{{project_path}}\"\n  3 env     \"{{project_path}}\"\n  4 params  {root_json}\n  5 env     {root_json}\n  6 params  {root_json}\n\
         config.timeout\n  source    5\n  3 env     5\n  4 params  5\n  5 env     5\n  6 params  5\n\
         config.max_output_bytes\n  source    8388608\n  3 env     8388608\n  4 params  8388608\n  5 env     8388608\n  6 params  8388608\n\
         config.who\n  source    \"${{WHO:-{{p}}}}\"\n  3 env     \"{{p}}\"\n  4 params  \"P\"\n  5 env     \"P\"\n  6 params  \"P\"\n\
         config.command\n  source    \"printf\"\n  3 env     \"printf\"\n  4 params  \"printf\"\n  5 env     \"printf\"\n  6 params  \"printf\"\n\
         \n\
         chain:   t -> runtimes/subprocess\ncommand: {printf}\nargv:    [\"{printf}\", \"P\", \"{{p}}\"]\ncwd:     {root}\n\
         stdin:   none\ntimeout: 5s\noutput:  8388608 bytes per stream\nenv:\n  HOME={}\n  PATH={}\n",
        home_var(),
        path_var()
    );
    assert_eq!(o.stdout, want);
}

#[test]
fn a_failing_tool_gives_a_result_and_its_exit_code() {
    let s = project().tool(
        "fail",
        "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"echo out; echo err >&2; exit 3\"]\n",
    );
    let o = s.then(&["run", "fail"]).status(3).run();
    assert_eq!(o.stdout, "out\n");
    assert_eq!(o.stderr, "err\nstrata: `fail` exited with code 3\n");
    assert_eq!(o.code, Some(3));
    let o = s.then(&["run", "fail", "--json"]).status(3).run();
    assert_eq!(
        result_of(&o),
        json!({"success": false, "exit_code": 3, "stdout": "out\n", "stderr": "err\n",
               "data": null, "truncated": false, "timed_out": false})
    );
    assert_eq!(o.code, Some(3));
}

// ---------------------------------------------------------------------------------------
// Faults.

#[test]
fn a_missing_binary_is_a_located_error() {
    let s = project().tool(
        "t",
        "executor: runtimes/subprocess\nconfig:\n  command: no-such-program-xyz\n",
    );
    let o = s.then(&["run", "t"]).status(2).run();
    assert_eq!(
        o.stderr,
        "error[request]: command `no-such-program-xyz` not found on PATH\n  --> tools/t.yaml:3:12\n  |\n\
         3 |   command: no-such-program-xyz\n  |            ^\n   = field: config.command\n\
         \x20  = help: install it, or give its path\n"
    );
    assert_eq!(o.stdout, "");
    assert_eq!(o.code, Some(2));
}

#[test]
fn a_non_executable_file_is_a_located_error() {
    let s = project().file("script.sh", "echo hi\n").tool(
        "t",
        "executor: runtimes/subprocess\nconfig:\n  command: ./script.sh\n",
    );
    let o = s.then(&["run", "t"]).status(2).run();
    assert_eq!(
        o.stderr,
        "error[request]: command `./script.sh` is not executable\n  --> tools/t.yaml:3:12\n  |\n\
         3 |   command: ./script.sh\n  |            ^\n   = field: config.command\n\
         \x20  = help: make it executable (chmod +x), or run it through a runtime such as runtimes/bash\n"
    );
    assert_eq!(o.code, Some(2));
}

#[test]
fn a_hanging_tool_is_killed_with_its_whole_group_at_the_timeout() {
    let s = project().tool(
        "hang",
        "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"echo $$ > sh.pid; sleep 30 & echo $! > gc.pid; wait\"]\n  timeout: 1\n",
    );
    let start = Instant::now();
    let o = s.then(&["run", "hang", "--json"]).status(124).run();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        result_of(&o),
        json!({"success": false, "exit_code": null, "stdout": "", "stderr": "", "data": null,
               "truncated": false, "timed_out": true})
    );
    assert_eq!(o.code, Some(124));
    assert!(!pid_alive(&o.read("sh.pid")), "the tool survived");
    assert!(!pid_alive(&o.read("gc.pid")), "its grandchild survived");
    let o = s.then(&["run", "hang"]).status(124).run();
    assert_eq!(
        o.stderr,
        "strata: `hang` timed out after 1s; its process group was killed\n"
    );
}

#[test]
fn a_tool_writing_a_gigabyte_is_capped_and_flagged() {
    let s = project()
        .tool(
            "gig",
            "executor: runtimes/subprocess\nconfig:\n  command: head\n  args: [\"-c\", \"1073741824\", /dev/zero]\n  max_output_bytes: 1000\n  timeout: 30\n",
        )
        .tool(
            "endless",
            "executor: runtimes/subprocess\nconfig:\n  command: yes\n  max_output_bytes: 4\n  timeout: 1\n",
        );
    let o = s.then(&["run", "gig", "--json"]).status(0).run();
    let v = result_of(&o);
    assert_eq!(v["stdout"], json!("\0".repeat(1000)));
    assert_eq!(
        (&v["success"], &v["truncated"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(o.code, Some(0));
    let o = s.then(&["run", "endless"]).status(124).run();
    assert_eq!(o.stdout, "y\ny\n");
    assert_eq!(
        o.stderr,
        "strata: stdout of `endless` was truncated at 4 bytes\n\
         strata: `endless` timed out after 1s; its process group was killed\n"
    );
    assert_eq!(o.code, Some(124));
}

#[test]
fn grandchildren_left_behind_are_killed_and_reaped() {
    let s = project().tool(
        "spawner",
        "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"sleep 30 & echo $! > gc.pid; echo started\"]\n",
    );
    let start = Instant::now();
    let o = s.then(&["run", "spawner"]).status(0).run();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(o.stdout, "started\n");
    assert_eq!(o.code, Some(0));
    let pid = o.read("gc.pid");
    assert!(
        !pid_alive(&pid),
        "grandchild {pid} is still there (alive or zombie)"
    );
}

#[test]
fn an_interrupted_strata_takes_its_tool_down_with_it() {
    let s = project().tool(
        "hang",
        "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"sleep 30 & echo $! > gc.pid; wait\"]\n  timeout: 30\n",
    );
    let mut child = s.then(&["run", "hang"]).spawn();
    let pid_file = s.path().join("gc.pid");
    let read_pid = || std::fs::read_to_string(&pid_file).unwrap();
    let start = Instant::now();
    while !pid_file.exists() || read_pid().trim().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "tool never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(!status.success());
    let pid = read_pid();
    let start = Instant::now();
    while pid_alive(&pid) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "grandchild {pid} survived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_child_cannot_reach_the_callers_terminal() {
    let s = project().tool(
        "probe",
        "executor: runtimes/python\nconfig:\n  input_data: null\n  args:\n    - \"-c\"\n    - literal: |\n        import json, os\n        print(json.dumps({\"own_group\": os.getpgid(0) == os.getpid(), \"stdin_tty\": os.isatty(0), \"stdout_tty\": os.isatty(1)}))\n",
    );
    let o = s.then(&["run", "probe", "--json"]).status(0).run();
    assert_eq!(
        result_of(&o)["data"],
        json!({"own_group": true, "stdin_tty": false, "stdout_tty": false})
    );
}

#[test]
fn invalid_parameters_list_the_valid_names() {
    let o = Test::in_repo()
        .args(&["run", "examples/report", "-p", "titel=x", "-p", "count=500"])
        .status(2)
        .run();
    assert_eq!(
        o.stderr,
        "error[params]: invalid parameters for `examples/report`: unknown parameter `titel`; \
         parameter `count` must be at most 100\n   = help: did you mean `title`? the parameters are: \
         title (string, default \"Report\"), count (integer, default 3)\n"
    );
    assert_eq!(o.code, Some(2));
    let o = Test::in_repo()
        .args(&["run", "examples/report", "-p", "count=many"])
        .status(2)
        .run();
    assert_eq!(
        o.stderr,
        "error[params]: parameter `count` must be an integer, got `many`\n   = help: the parameters are: \
         title (string, default \"Report\"), count (integer, default 3)\n"
    );
    let s = project().tool(
        "req",
        "executor: runtimes/subprocess\nparameters:\n  properties: {n: {type: array}, m: {type: integer, default: 1}}\n  \
         required: [n]\nconfig: {command: \"true\"}\n",
    );
    let o = s
        .then(&["run", "req", "--params-json", r#"{"m": "x"}"#])
        .status(2)
        .run();
    assert_eq!(
        o.stderr,
        "error[params]: invalid parameters for `req`: parameter `m` must be an integer, not a string; \
         missing required parameter `n`\n   = help: the parameters are: n (array, required), m (integer, default 1)\n"
    );
}

#[test]
fn an_unknown_tool_id_suggests_the_closest() {
    let o = Test::in_repo()
        .args(&["run", "examples/ech"])
        .status(2)
        .run();
    assert_eq!(
        o.stderr,
        "error[request]: unknown tool `examples/ech`\n   = help: did you mean `examples/echo`?\n"
    );
    assert_eq!(o.code, Some(2));
}

#[test]
fn malformed_yaml_is_a_located_error() {
    let s = project()
        .tool(
            "bad",
            "executor: runtimes/subprocess\nconfig:\n  command: [printf\n",
        )
        .tool("typo", "executor: runtimes/subprocess\nconfg: {}\n");
    let o = s.then(&["run", "bad"]).status(2).run();
    assert_eq!(
        o.stderr,
        "error[S002]: YAML syntax error: while parsing a flow sequence, expected ',' or ']'\n  --> tools/bad.yaml:4:1\n"
            .to_string()
            + &refusal("bad", 1)
    );
    assert_eq!(o.code, Some(2));
    let o = s.then(&["run", "tools/typo.yaml"]).status(2).run();
    assert_eq!(
        o.stderr,
        "error[S002]: invalid tool file: unknown field `confg`, expected one of `kind`, `description`, \
         `version`, `executor`, `parameters`, `outputs`, `env_config`, `config`, `secrets`, `response_fields`, `read_only`, `resources`, `retries`\n  --> tools/typo.yaml:2:1\n  |\n\
         2 | confg: {}\n  | ^\n   = help: did you mean `config`?\n"
            .to_string()
            + &refusal("typo", 1)
    );
    let o = s.then(&["tools"]).status(1).run();
    assert_eq!(o.code, Some(1));
    assert!(o.stdout.starts_with(
        "bad                  (invalid: YAML syntax error: while parsing a flow sequence, expected ',' or ']')\n"
    ));
}

#[test]
fn executor_cycles_and_unknown_executors_name_the_chain() {
    let s = project()
        .tool("a", "executor: b\n")
        .tool("b", "executor: a\n")
        .tool("c", "executor: runtimes/pyton\n");
    let o = s.then(&["run", "a"]).status(2).run();
    assert_eq!(
        o.stderr,
        "error[S003]: executor cycle: a -> b -> a\n  --> tools/b.yaml:1:11\n  |\n1 | executor: a\n  |           ^\n\
         \x20  = field: executor\n   = help: every chain must end at runtimes/subprocess\n"
            .to_string()
            + &refusal("a", 1)
    );
    let o = s.then(&["run", "c"]).status(2).run();
    assert_eq!(
        o.stderr,
        "error[S003]: unknown executor `runtimes/pyton` in chain c -> runtimes/pyton\n  --> tools/c.yaml:1:11\n  |\n\
         1 | executor: runtimes/pyton\n  |           ^\n   = field: executor\n   = help: did you mean `runtimes/python`?\n"
            .to_string()
            + &refusal("c", 1)
    );
}

#[test]
fn missing_variables_warn_and_strict_mode_refuses_them() {
    let s = project().tool(
        "t",
        "executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: [\"<${UNSET_VAR}>\"]\n",
    );
    let o = s.then(&["run", "t"]).status(0).run();
    assert_eq!(o.stdout, "<>");
    assert_eq!(
        o.stderr,
        "warning[env]: environment variable `UNSET_VAR` is not set\n  --> tools/t.yaml:4:12\n   = field: config.args[0] (bytes 1..13)\n"
    );
    let o = s.then(&["run", "t", "--strict"]).status(2).run();
    assert_eq!(o.code, Some(2));
    assert!(o
        .stderr
        .starts_with("error[env]: environment variable `UNSET_VAR` is not set\n"));
}

#[test]
fn secrets_never_show_in_the_spec_or_in_errors() {
    let s = project().file(".env", "GOOD=1\nnot a pair s3cr3t\n").tool(
        "t",
        "executor: runtimes/subprocess\nsecrets: [TOOL_BIN]\nenv_config:\n  env:\n    TOOL_BIN: \"${TOOL_BIN}\"\n\
         config:\n  command: \"${TOOL_BIN}\"\n  cwd: \"${TOOL_BIN}-nowhere\"\n",
    );
    let env = [("TOOL_BIN", "/s3cr3t/bin")];
    let o = s.then(&["run", "t"]).envs(&env).status(2).run();
    assert_eq!(
        o.stderr,
        "error[request]: expected NAME=value\n  --> .env:2:1\n   = help: write NAME=value, one per line\n"
    );
    let s = s.file(".env", "GOOD=1\n");
    let o = s.then(&["run", "t"]).envs(&env).status(2).run();
    assert_eq!(
        o.stderr,
        "error[request]: working directory `***-nowhere` does not exist\n  --> tools/t.yaml:8:8\n  |\n\
         8 |   cwd: \"${TOOL_BIN}-nowhere\"\n  |        ^\n   = field: config.cwd\n\
         \x20  = help: cwd is relative to the project root\n"
    );
    let printf = which("printf");
    let s = s.tool(
        "t",
        "executor: runtimes/subprocess\nsecrets: [TOOL_BIN]\nenv_config:\n  env:\n    TOOL_BIN: \"${TOOL_BIN}\"\n\
         config:\n  command: \"${TOOL_BIN}\"\n",
    );
    let o = s
        .then(&["run", "t", "--dry-run", "--json"])
        .envs(&[("TOOL_BIN", &printf)])
        .status(0)
        .run();
    let v = o.json();
    assert_eq!(
        (&v["command"], &v["argv"]),
        (&json!("***"), &json!(["***"]))
    );
    assert_eq!(v["env"]["TOOL_BIN"], json!("***"));
    let o = s
        .then(&["run", "t", "--dry-run"])
        .envs(&[("TOOL_BIN", &printf)])
        .status(0)
        .run();
    assert!(
        o.stdout.contains("command: ***\nargv:    [\"***\"]\n"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains(&printf));
}
