//! End-to-end tests of `strata render`: the real binary, real files and standard input.

mod common;
use common::Test;

/// A scratch project holding the file `name`, and the file's absolute path.
fn scratch(name: &str, contents: &[u8]) -> (Test, String) {
    let test = Test::new().file(name, contents);
    let path = test.path().join(name).display().to_string();
    (test, path)
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
    Test::in_repo()
        .args(FULL_ARGS)
        .stderr("")
        .stdout(
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
"#,
        )
        .status(0)
        .run();
}

#[test]
fn explain_prints_every_stage_with_secrets_redacted() {
    let mut args = FULL_ARGS.to_vec();
    args.push("--explain");
    let out = Test::in_repo().args(&args).status(0).run();
    let stdout = &out.stdout;
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
}

#[test]
fn reads_json_from_standard_input_and_writes_yaml() {
    Test::in_repo()
        .args(&[
            "render",
            "--format",
            "yaml",
            "--params-json",
            r#"{"items": [1, 2]}"#,
        ])
        .stdin(r#"{"a": "{items}", "b": "n={items}"}"#)
        .stdout("a:\n- 1\n- 2\nb: n=[1,2]\n")
        .status(0)
        .run();
}

#[test]
fn a_json_document_is_compiled_as_it_is_read() {
    // Unescaped strings point into the text, escaped ones are kept as read: both render.
    let doc = r#"{
  "a": "${HOME} {who}",
  "b": ["x\ty", "\u00e9t\u00e9 {who}", 2],
  "c": {"d": null, "e": "plain"}
}
"#;
    Test::new()
        .file("doc.json", doc)
        .args(&[
            "render",
            "doc.json",
            "--clean-env",
            "--env",
            "HOME=/h",
            "-p",
            "who=ann",
        ])
        .stdout(
            r#"{
  "a": "/h ann",
  "b": [
    "x\ty",
    "été ann",
    2
  ],
  "c": {
    "d": null,
    "e": "plain"
  }
}
"#,
        )
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn a_json_document_s_errors_are_located_at_their_field() {
    let doc = "{\n  \"a\": \"ok\",\n  \"b\": [\"x\", \"y ${UNCLOSED\"]\n}\n";
    Test::new()
        .file("bad.json", doc)
        .args(&["render", "bad.json"])
        .stdout("")
        .stderr(
            "error[env]: unclosed `${UNCLOSED`: no matching `}`\n  --> bad.json:3:17\n  |\n\
             3 |   \"b\": [\"x\", \"y ${UNCLOSED\"]\n  |                 ^^^^^^^^^^\n   \
             = field: b[1] (bytes 2..12)\n   \
             = help: close it as `${UNCLOSED}`, or write `$${` for a literal `${`\n",
        )
        .status(2)
        .run();
    Test::new()
        .file("dup.json", r#"{"a": {"k": "${HOME}"}, "a": 2}"#)
        .args(&["render", "dup.json"])
        .stderr(
            "error[request]: duplicate key `a`\n  --> dup.json:1:27\n   \
             = help: each key may appear once in a map\n",
        )
        .status(2)
        .run();
}

#[test]
fn layer_flags_choose_the_stages() {
    Test::in_repo()
        .args(&[
            "render", "-", "--layer", "params", "--param", "x=1", "--env", "HOME=/h",
        ])
        .stdin("v: \"${HOME} {x}\"\n")
        .stdout("{\n  \"v\": \"${HOME} 1\"\n}\n")
        .status(0)
        .run();
}

#[test]
fn env_files_are_read_and_their_values_are_secret() {
    let (project, env_file) = scratch("project.env", b"# secrets\nDB_PASSWORD='pa$$w{0}rd'\n");
    project
        .then(&["render", "-", "--env-file", &env_file, "--explain"])
        .stdin("dsn: \"db://u:${DB_PASSWORD}@h\"\n")
        .stdout("dsn\n  source     \"db://u:${DB_PASSWORD}@h\"\n  1 inputs   \"db://u:${DB_PASSWORD}@h\"\n  2 context  \"db://u:${DB_PASSWORD}@h\"\n  3 env      \"db://u:***@h\"\n  4 params   \"db://u:***@h\"\n")
        .status(0)
        .run();
    project
        .then(&["render", "-", "--env-file", &env_file])
        .stdin("dsn: \"db://u:${DB_PASSWORD}@h\"\n")
        .stdout("{\n  \"dsn\": \"db://u:pa$$w{0}rd@h\"\n}\n")
        .status(0)
        .run();
}

#[test]
fn context_can_come_from_a_file() {
    let (project, ctx) = scratch("ctx.yaml", b"state:\n  items: [a, b]\n");
    let arg = format!("@{ctx}");
    project
        .then(&["render", "-", "--context", &arg])
        .stdin("last: \"${state.items[-1]}\"\n")
        .stdout("{\n  \"last\": \"b\"\n}\n")
        .status(0)
        .run();
}

#[test]
fn inline_json_is_read_as_documents_are() {
    // One JSON reader: a float in its shortest form, a key written twice or a number out of
    // range refused, on the command line as in a document.
    let (project, doc) = scratch("d.yaml", b"p: \"{a}\"\nc: \"${state.x}\"\n");
    project
        .then(&[
            "render",
            &doc,
            "--params-json",
            r#"{"a":1.50}"#,
            "--context",
            r#"{"state":{"x":1e2}}"#,
        ])
        .stdout("{\n  \"p\": 1.5,\n  \"c\": 100.0\n}\n")
        .stderr("")
        .status(0)
        .run();
    project
        .then(&["render", &doc, "--params-json", r#"{"a":1,"a":2}"#])
        .stdout("")
        .stderr("error[request]: --params-json is not valid JSON: duplicate key `a` at line 1 column 10\n")
        .status(2)
        .run();
    project
        .then(&["render", &doc, "--params-json", "{}", "--context", r#"{"state":{"x":1e400}}"#])
        .stdout("")
        .stderr("error[request]: --context is not valid JSON: number out of range at line 1 column 19\n   = help: give a JSON object, or @file for a JSON or YAML file\n")
        .status(2)
        .run();
}

#[test]
fn warnings_go_to_stderr_with_file_line_and_column() {
    Test::in_repo()
        .args(&["render", "-"])
        .stdin("a: 1\nb: \"x ${state.gone} y\"\n")
        .stdout("{\n  \"a\": 1,\n  \"b\": \"x  y\"\n}\n")
        .stderr("warning[context]: context path `state.gone` not found\n  --> <stdin>:2:7\n   = field: b (bytes 2..15)\n")
        .status(0)
        .run();
}

#[test]
fn strict_mode_fails_on_missing_values() {
    Test::in_repo()
        .args(&["render", "-", "--strict"])
        .stdin("a: 1\nb: \"x ${GONE} y\"\n")
        .stdout("")
        .stderr("error[env]: environment variable `GONE` is not set\n  --> <stdin>:2:7\n  |\n2 | b: \"x ${GONE} y\"\n  |       ^^^^^^^\n   = field: b (bytes 2..9)\n   = help: strict mode turns missing values into errors\n")
        .status(2)
        .run();
}

#[test]
fn unterminated_placeholders_point_at_the_source() {
    Test::in_repo()
        .args(&["render", "-"])
        .stdin("config:\n  args:\n    - ok\n    - \"--x=${state.a\"\n")
        .stderr("error[context]: unclosed `${`: no matching `}`\n  --> <stdin>:4:12\n  |\n4 |     - \"--x=${state.a\"\n  |            ^^^^^^^^^\n   = field: config.args[1] (bytes 4..13)\n   = help: close the placeholder with `}`, or write `$${` for a literal `${`\n")
        .status(2)
        .run();
}

#[test]
fn bad_files_get_clear_errors() {
    let (project, bad_utf8) = scratch("bad.yaml", b"a: 1\nb: \"\xff\xfe\"\n");
    let out = project.then(&["render", &bad_utf8]).status(2).run();
    let stderr = &out.stderr;
    assert!(
        stderr.starts_with("error[request]: not valid UTF-8 (byte 9)\n  --> "),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("bad.yaml:2:5\n   = help: save the file as UTF-8\n"),
        "{stderr}"
    );

    Test::in_repo()
        .args(&["render", "-"])
        .stdin("a: [1, 2\nb: 3\n")
        .stderr("error[request]: YAML syntax error: illegal placement of ':' indicator\n  --> <stdin>:2:2\n")
        .status(2).run();

    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (prev, cur) in ('a'..='h').zip('b'..='i') {
        bomb.push_str(&format!("{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    Test::in_repo()
        .args(&["render", "-"])
        .stdin(bomb)
        .stderr("error[request]: YAML aliases repeat the document more than 100 times over\n  --> <stdin>:5:32\n   = help: YAML aliases may repeat large parts of a document; reduce them\n")
        .status(2)
        .run();

    Test::in_repo()
        .args(&["render", "missing.yaml"])
        .stderr(
            "error[request]: cannot read `missing.yaml`: No such file or directory (os error 2)\n",
        )
        .status(2)
        .run();
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
    Test::in_repo()
        .args(&["render", "--batch"])
        .stdin(input)
        .stdout(concat!(
            r#"{"ok":true,"value":{"a":"1 2 3 4"},"warnings":[]}"#,
            "\n",
            r#"{"ok":false,"error":{"kind":"request","layer":"request","message":"malformed request: expected value at line 1 column 1","path":"$","span":null,"hint":"a request is one JSON object: {\"template\": …, \"layers\", \"env\", \"secrets\", \"params\", \"context\", \"inputs\", \"strict\"}"}}"#,
            "\n",
            r#"{"ok":true,"value":{"k":[1]},"warnings":[]}"#,
            "\n"
        ))
        .status(0)
        .run();
}

#[test]
fn batch_replies_to_each_request_while_the_client_waits_for_it() {
    // A client that sends one line and waits: each reply comes while the input stays open,
    // the next request built from the reply before it (replies are buffered only while
    // further requests are already waiting).
    let mut running = Test::in_repo()
        .args(&["render", "--batch"])
        .stdout(concat!(
            r#"{"id":1,"ok":true,"value":"n=1","warnings":[]}"#,
            "\n",
            r#"{"id":2,"ok":true,"value":"n=n=1","warnings":[]}"#,
            "\n",
            r#"{"id":3,"ok":true,"value":"n=n=n=1","warnings":[]}"#,
            "\n",
        ))
        .status(0)
        .start();
    let mut value = serde_json::json!("1");
    for id in 1..=3 {
        let request = serde_json::json!({"id": id, "template": "n={v}", "params": {"v": value}});
        running.write(&format!("{request}\n"));
        let reply: serde_json::Value = serde_json::from_str(&running.read_line()).unwrap();
        assert_eq!(reply["id"], serde_json::json!(id));
        value = reply["value"].clone();
    }
    running.finish();
}

#[test]
fn usage_errors_exit_2() {
    let out = Test::in_repo()
        .args(&["render", "--layer", "shell"])
        .status(2)
        .run();
    assert!(out
        .stderr
        .contains("invalid value 'shell' for '--layer <LAYER>'"));
    Test::in_repo()
        .args(&["render", "-", "--param", "novalue"])
        .stdin("a: 1")
        .stderr("error[request]: --param `novalue` is not of the form KEY=VALUE\n")
        .status(2)
        .run();
}

#[test]
fn limits_come_from_strata_variables_outside_a_project() {
    let (s, path) = scratch(
        "big.yaml",
        format!("a: \"{}${{HOME}}\"\n", "x".repeat(5 << 20)).as_bytes(),
    );
    let ran = s
        .then(&["render", &path, "--layer", "env"])
        .env("HOME", "/h")
        .status(2)
        .run();
    assert!(
        ran.stderr
            .contains("string of 5242887 bytes exceeds the template limit of 4194304 bytes"),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains(
            "raise `limits.template_bytes` in strata.yaml (or STRATA_LIMITS_TEMPLATE_BYTES)"
        ),
        "{}",
        ran.stderr
    );
    // The variable the hint names lets the string in, with no project around.
    let ran = s
        .then(&["render", &path, "--layer", "env"])
        .env("HOME", "/h")
        .env("STRATA_LIMITS_TEMPLATE_BYTES", "8388608")
        .status(0)
        .run();
    assert!(
        ran.stdout == format!("{{\n  \"a\": \"{}/h\"\n}}\n", "x".repeat(5 << 20)),
        "{}…",
        &ran.stdout[..40.min(ran.stdout.len())]
    );
}

#[test]
fn the_placeholder_limit_stops_the_read_at_the_string_past_it() {
    // Past the third placeholder the text is not even YAML: the read never gets there.
    let (s, path) = scratch(
        "many.yaml",
        b"a: ${HOME}\nb:\n  - x {y}\n  - ${HOME}/z\nc: [unclosed\n",
    );
    let ran = s
        .then(&["render", &path])
        .env("STRATA_LIMITS_PLACEHOLDERS_PER_DOCUMENT", "2")
        .status(2)
        .run();
    assert_eq!(
        ran.stderr,
        format!(
            "error[request]: more than 2 placeholders in one document\n  --> {path}:4:5\n  |\n4 |   - ${{HOME}}/z\n  |     ^\n   = field: b[1]\n   = help: split the document, or raise `limits.placeholders_per_document` in strata.yaml (or STRATA_LIMITS_PLACEHOLDERS_PER_DOCUMENT)\n"
        )
    );
}

#[test]
fn a_map_of_thousands_of_keys_renders_in_order_with_its_references() {
    // Every third key names a later or earlier one (a number, `n - 1 - i` being 2 modulo 3).
    let n = 9_000;
    let doc: String = (0..n)
        .map(|i| match i % 3 {
            0 => format!("k{i}: \"{{k{}}}!\"\n", n - 1 - i),
            1 => format!("k{i}: \"{{who}} ${{HOME}}\"\n"),
            _ => format!("k{i}: {i}\n"),
        })
        .collect();
    let expected: Vec<String> = (0..n)
        .map(|i| match i % 3 {
            0 => format!("  \"k{i}\": \"{}!\"", n - 1 - i),
            1 => format!("  \"k{i}\": \"ann /home/ada\""),
            _ => format!("  \"k{i}\": {i}"),
        })
        .collect();
    Test::in_repo()
        .args(&[
            "render",
            "-",
            "--clean-env",
            "--env",
            "HOME=/home/ada",
            "-p",
            "who=ann",
        ])
        .stdin(doc.as_str())
        .stdout(&format!("{{\n{}\n}}\n", expected.join(",\n")))
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn yaml_is_written_an_entry_at_a_time_as_the_whole_document_would_be() {
    let mut doc = String::from(
        "a: 1\nb:\n  c: \"${HOME}\"\n  d: [x, \"{who}\"]\ne: \"multi\\nline ${HOME}\"\nf: []\n",
    );
    let mut expected =
        String::from("a: 1\nb:\n  c: /h\n  d:\n  - x\n  - ann\ne: |-\n  multi\n  line /h\nf: []\n");
    for i in 0..5_000 {
        doc.push_str(&format!("k{i}: \"{{who}} {i}\"\n"));
        expected.push_str(&format!("k{i}: ann {i}\n"));
    }
    let yaml = |stdin: &str, stdout: &str| {
        Test::in_repo()
            .args(&[
                "render",
                "-",
                "--format",
                "yaml",
                "--clean-env",
                "--env",
                "HOME=/h",
                "-p",
                "who=ann",
            ])
            .stdin(stdin)
            .stdout(stdout)
            .stderr("")
            .status(0)
            .run()
    };
    yaml(&doc, &expected);
    yaml("\"x ${HOME}\"\n", "x /h\n");
}
