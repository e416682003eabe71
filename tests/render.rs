//! End-to-end tests of `strata render`: the real binary, real files and standard input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn strata(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn strata");
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.unwrap_or_default()).unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn scratch(name: &str, contents: &[u8]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    (dir, path.display().to_string())
}

const FULL_ARGS: &[&str] = &[
    "render",
    "tests/fixtures/render.yaml",
    "--env",
    "API_TOKEN=t0k3n",
    "--secret",
    "API_TOKEN",
    "--input",
    "name=Ann",
    "--context",
    r#"{"state": {"count": 3}}"#,
    "--param",
    "tool_dir=/t",
];

#[test]
fn renders_a_yaml_file_through_the_full_chain() {
    let out = strata(FULL_ARGS, None);
    assert_eq!(text(&out.stderr), "");
    assert_eq!(
        text(&out.stdout),
        r#"{
  "command": "python3",
  "args": [
    "/t/main.py",
    "--name=Ann",
    "--count=3",
    "--token=t0k3n",
    3
  ],
  "greeting": "Hello nobody",
  "user": "nobody"
}
"#
    );
    assert!(out.status.success());
}

#[test]
fn explain_prints_every_stage_with_secrets_redacted() {
    let mut args = FULL_ARGS.to_vec();
    args.push("--explain");
    let out = strata(&args, None);
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("t0k3n"), "{stdout}");
    let token = stdout
        .split("args[3]\n")
        .nth(1)
        .unwrap()
        .split("args[4]")
        .next()
        .unwrap();
    assert_eq!(
        token,
        r#"  source     "--token=${API_TOKEN}"
  1 inputs   "--token=${API_TOKEN}"
  2 context  "--token=${API_TOKEN}"
  3 env      "--token=***"
  4 params   "--token=***"
"#
    );
    assert!(
        stdout.starts_with("command\n  source     \"${PYTHON:-python3}\"\n"),
        "{stdout}"
    );
    assert!(out.status.success());
}

#[test]
fn reads_json_from_standard_input_and_writes_yaml() {
    let out = strata(
        &[
            "render",
            "--format",
            "yaml",
            "--params-json",
            r#"{"items": [1, 2]}"#,
        ],
        Some(br#"{"a": "{items}", "b": "n={items}"}"#),
    );
    assert_eq!(text(&out.stdout), "a:\n- 1\n- 2\nb: n=[1,2]\n");
    assert!(out.status.success());
}

#[test]
fn layer_flags_choose_the_stages() {
    let out = strata(
        &[
            "render", "-", "--layer", "params", "--param", "x=1", "--env", "HOME=/h",
        ],
        Some(b"v: \"${HOME} {x}\"\n"),
    );
    assert_eq!(text(&out.stdout), "{\n  \"v\": \"${HOME} 1\"\n}\n");
}

#[test]
fn env_files_are_read_and_their_values_are_secret() {
    let (_dir, env_file) = scratch("project.env", b"# secrets\nDB_PASSWORD='pa$$w{0}rd'\n");
    let out = strata(
        &["render", "-", "--env-file", &env_file, "--explain"],
        Some(b"dsn: \"db://u:${DB_PASSWORD}@h\"\n"),
    );
    assert_eq!(
        text(&out.stdout),
        "dsn\n  source     \"db://u:${DB_PASSWORD}@h\"\n  1 inputs   \"db://u:${DB_PASSWORD}@h\"\n  2 context  \"db://u:${DB_PASSWORD}@h\"\n  3 env      \"db://u:***@h\"\n  4 params   \"db://u:***@h\"\n"
    );
    let out = strata(
        &["render", "-", "--env-file", &env_file],
        Some(b"dsn: \"db://u:${DB_PASSWORD}@h\"\n"),
    );
    assert_eq!(
        text(&out.stdout),
        "{\n  \"dsn\": \"db://u:pa$$w{0}rd@h\"\n}\n"
    );
}

#[test]
fn context_can_come_from_a_file() {
    let (_dir, ctx) = scratch("ctx.yaml", b"state:\n  items: [a, b]\n");
    let arg = format!("@{ctx}");
    let out = strata(
        &["render", "-", "--context", &arg],
        Some(b"last: \"${state.items[-1]}\"\n"),
    );
    assert_eq!(text(&out.stdout), "{\n  \"last\": \"b\"\n}\n");
}

#[test]
fn warnings_go_to_stderr_with_file_line_and_column() {
    let out = strata(&["render", "-"], Some(b"a: 1\nb: \"x ${state.gone} y\"\n"));
    assert_eq!(text(&out.stdout), "{\n  \"a\": 1,\n  \"b\": \"x  y\"\n}\n");
    assert_eq!(
        text(&out.stderr),
        "warning[context]: context path `state.gone` not found\n  --> <stdin>:2:7\n   = field: b (bytes 2..15)\n"
    );
    assert!(out.status.success());
}

#[test]
fn strict_mode_fails_on_missing_values() {
    let out = strata(
        &["render", "-", "--strict"],
        Some(b"a: 1\nb: \"x ${GONE} y\"\n"),
    );
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "error[env]: environment variable `GONE` is not set\n  --> <stdin>:2:7\n  |\n2 | b: \"x ${GONE} y\"\n  |       ^^^^^^^\n   = field: b (bytes 2..9)\n   = help: strict mode turns missing values into errors\n"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn unterminated_placeholders_point_at_the_source() {
    let out = strata(
        &["render", "-"],
        Some(b"config:\n  args:\n    - ok\n    - \"--x=${state.a\"\n"),
    );
    assert_eq!(
        text(&out.stderr),
        "error[context]: unclosed `${`: no matching `}`\n  --> <stdin>:4:12\n  |\n4 |     - \"--x=${state.a\"\n  |            ^^^^^^^^^\n   = field: config.args[1] (bytes 4..13)\n   = help: close the placeholder with `}`, or write `$${` for a literal `${`\n"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn bad_files_get_clear_errors() {
    let (_d1, bad_utf8) = scratch("bad.yaml", b"a: 1\nb: \"\xff\xfe\"\n");
    let out = strata(&["render", &bad_utf8], None);
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error[request]: not valid UTF-8 (byte 9)\n  --> "),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("bad.yaml:2:5\n   = help: save the file as UTF-8\n"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1));

    let out = strata(&["render", "-"], Some(b"a: [1, 2\nb: 3\n"));
    assert_eq!(
        text(&out.stderr),
        "error[request]: YAML syntax error: did not find expected ',' or ']'\n  --> <stdin>:2:2\n"
    );

    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (prev, cur) in ('a'..='h').zip('b'..='i') {
        bomb.push_str(&format!("{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let out = strata(&["render", "-"], Some(bomb.as_bytes()));
    assert_eq!(
        text(&out.stderr),
        "error[request]: YAML syntax error: repetition limit exceeded\n  --> <stdin>:1:1\n"
    );
    assert_eq!(out.status.code(), Some(1));

    let out = strata(&["render", "missing.yaml"], None);
    assert_eq!(
        text(&out.stderr),
        "error[request]: cannot read `missing.yaml`: No such file or directory (os error 2)\n"
    );
}

#[test]
fn batch_mode_serves_json_lines() {
    let input = concat!(
        r#"{"template": {"a": "${A} {p} ${state.s} {input:i}"}, "env": {"A": "1"}, "params": {"p": 2}, "context": {"state": {"s": 3}}, "inputs": {"i": 4}}"#,
        "\n",
        "oops\n",
        r#"{"template": "{x}", "params": {"x": {"k": [1]}}}"#,
        "\n"
    );
    let out = strata(&["render", "--batch"], Some(input.as_bytes()));
    assert_eq!(
        text(&out.stdout),
        concat!(
            r#"{"ok":true,"value":{"a":"1 2 3 4"},"warnings":[]}"#,
            "\n",
            r#"{"ok":false,"error":{"kind":"request","layer":"request","message":"malformed request: expected value at line 1 column 1","path":"$","span":null,"hint":"a request is one JSON object: {\"template\": …, \"layers\", \"env\", \"secrets\", \"params\", \"context\", \"inputs\", \"strict\"}"}}"#,
            "\n",
            r#"{"ok":true,"value":{"k":[1]},"warnings":[]}"#,
            "\n"
        )
    );
    assert!(out.status.success());
}

#[test]
fn usage_errors_exit_2() {
    let out = strata(&["render", "--layer", "shell"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("invalid value 'shell' for '--layer <LAYER>'"));
    let out = strata(&["render", "-", "--param", "novalue"], Some(b"a: 1"));
    assert_eq!(
        text(&out.stderr),
        "error[request]: --param `novalue` is not of the form KEY=VALUE\n"
    );
    assert_eq!(out.status.code(), Some(1));
}
