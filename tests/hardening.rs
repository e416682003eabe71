//! Hardening, round 2 (issue 11): the `strata` binary attacked from outside — crashes,
//! escapes, races and limits. Each test is the regression test of one reproduced failure or
//! one weakness, and covers its class: every command where the failure could appear.
//!
//! Every run goes through the [`Test`] builder: a signal through [`Running::signal`] and
//! [`Test::killed_by`], a small stack or a bounded address space through [`Test::limit`], a
//! bound in time and the peak memory through [`Test::measured`].

mod common;
use common::{wait_for, Limit, Ran, Running, Test};

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long a run may take before it is killed: it fails its test instead of hanging it.
const KILL_AFTER: Duration = Duration::from_secs(60);

/// At most 4 GiB of address space, so that a regression fails its test instead of the
/// machine.
const MEMORY: Limit = Limit::AddressSpace(4 << 30);

/// Every line of standard output parsed as JSON.
fn json_lines(ran: &Ran) -> Vec<Value> {
    ran.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `operand op operand op …`, `n` operands.
fn chain(operand: &str, op: &str, n: usize) -> String {
    vec![operand; n].join(op)
}

// ---------------------------------------------------------------------------------------------
// 1. Recursion depth: one expression must not overflow the stack
// ---------------------------------------------------------------------------------------------

#[test]
fn a_long_operator_chain_in_a_batch_request_is_answered_and_later_lines_still_served() {
    let deep = format!("${{{}true{}}}", "(".repeat(65), ")".repeat(65));
    for (kib, operands) in [(8192, 8_000), (1024, 20_000)] {
        let long = format!("${{{}}}", chain("true", " && ", operands));
        let stdin = format!(
            "{}\n{}\n{}\n",
            json!({"template": long}),
            json!({"template": deep}),
            json!({"template": "c"})
        );
        let ran = Test::new()
            .args(&["render", "--batch"])
            .limit(Limit::StackKib(kib))
            .stdin(stdin)
            .status(0)
            .run();
        let replies = json_lines(&ran);
        assert_eq!(replies.len(), 3, "{replies:?}");
        assert_eq!(
            replies[0],
            json!({"ok": true, "value": true, "warnings": []})
        );
        assert_eq!(replies[1]["error"]["kind"], "syntax");
        assert_eq!(
            replies[1]["error"]["message"],
            "expression nested too deeply"
        );
        assert_eq!(
            replies[2],
            json!({"ok": true, "value": "c", "warnings": []})
        );
    }
}

#[test]
fn a_graph_condition_of_eight_thousand_operands_loads_and_runs() {
    let when = chain("state.go", " && ", 8_000);
    let graph = format!(
        "kind: graph\nstate: {{go: true}}\nstart: a\nnodes:\n  a:\n    kind: gate\n    next:\n      - {{to: yes, when: \"{when}\"}}\n      - to: no\n  yes: {{kind: return, output: taken}}\n  no: {{kind: return, output: not taken}}\n"
    );
    let s = Test::new().tool("g", &graph);
    for args in [
        &["run", "g", "--quiet", "--run-id", "r1"][..],
        &["check"],
        &["graph", "g"],
    ] {
        let ran = s.then(args).limit(Limit::StackKib(1024)).status(0).run();
        if args[0] == "run" {
            assert_eq!(ran.stdout, "\"taken\"\n");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Limits by bytes: whole values count against the output limit
// ---------------------------------------------------------------------------------------------

#[test]
fn whole_value_references_cannot_multiply_a_large_parameter() {
    let big = "x".repeat(1 << 20);
    let requests = [
        json!({"template": vec!["{p}"; 100], "params": {"p": big}}),
        json!({"template": vec!["${c}"; 100], "context": {"c": big}}),
        json!({"template": {"a": "{p}", "b": vec!["{a}"; 100]}, "params": {"p": big}}),
        json!({"template": vec!["{p}"; 60], "params": {"p": big}}),
    ];
    let stdin: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let ran = Test::new()
        .args(&["render", "--batch"])
        .stdin(stdin)
        .status(0)
        .run();
    let replies = json_lines(&ran);
    assert_eq!(replies.len(), 4);
    for (reply, path) in replies.iter().zip(["[64]", "[64]", "b[63]"]) {
        assert_eq!(
            reply["error"],
            json!({"kind": "limit", "layer": "request", "message": "rendered document exceeds 67108864 bytes", "path": path, "span": null, "hint": "if this is intended, raise `limits.output_bytes_per_config` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG)", "data": {"limit": {"setting": "limits.output_bytes_per_config", "limit": 67108864}}})
        );
    }
    assert_eq!(replies[3]["ok"], true);
    assert_eq!(replies[3]["value"].as_array().map(Vec::len), Some(60));
}

// ---------------------------------------------------------------------------------------------
// 3. Limits by bytes: what a document expands to, and its size
// ---------------------------------------------------------------------------------------------

/// A YAML text whose `key` holds 1 MiB, and whose `list` holds `n` aliases of it.
fn alias_bomb(key: &str, list: &str, n: usize) -> String {
    format!(
        "{key}: &b \"{}\"\n{list}: [{}]\n",
        "x".repeat(1 << 20),
        vec!["*b"; n].join(", ")
    )
}

#[test]
fn aliases_of_large_scalars_are_refused_in_every_document_read() {
    let mib = "x".repeat(1 << 20);
    let aliases = |n: usize| vec!["*b"; n].join(", ");
    let tool = format!(
        "executor: runtimes/subprocess\ndescription: &b \"{mib}\"\nconfig:\n  command: printf\n  a: [{}]\n",
        aliases(200)
    );
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool("t", &tool)
        .tool(
            "g",
            &format!(
                "kind: graph\ndescription: &b \"{mib}\"\nstate: {{s: [{}]}}\nstart: a\nnodes:\n  a: {{kind: return, output: x}}\n",
                aliases(200)
            ),
        )
        .file(
            "d.md",
            format!(
                "---\nname: d\ndescription: &b \"{mib}\"\nmodel: [{}]\n---\nbody\n",
                aliases(200)
            ),
        )
        .file("doc.yaml", alias_bomb("a", "b", 300))
        .file("ctx.yaml", alias_bomb("state", "inputs", 200));
    let expands = "document expands to more than 67108864 bytes";
    // `render` compiles the document as it reads it: the template's own limit on the bytes
    // of its strings (16 MiB) stops the read first.
    let strings = "the document's strings exceed the limit of 16777216 bytes";
    // A run or a render refused (2); a check that fails (1).
    for (args, file, want, status) in [
        (&["run", "t", "--dry-run"][..], "tools/t.yaml", expands, 2),
        (&["run", "g"], "tools/g.yaml", expands, 2),
        (&["run", "d.md", "--dry-run"], "d.md", expands, 2),
        (&["render", "doc.yaml"], "doc.yaml", strings, 2),
        (
            &["render", "--context", "@ctx.yaml", "-"],
            "ctx.yaml",
            expands,
            2,
        ),
        (&["check"], "tools/g.yaml", expands, 1),
    ] {
        let ran = s.then(args).measured(KILL_AFTER).status(status).run();
        let printed = ran.all();
        assert!(printed.contains(want), "{args:?}: {printed}");
        assert!(printed.contains(file), "{args:?}: {printed}");
        let peak = ran.peak_rss_kib;
        assert!(peak < 512 * 1024, "{args:?}: peak RSS {peak} KiB");
    }
}

#[test]
fn files_and_requests_larger_than_the_document_limit_are_refused_unread() {
    let big = format!("A=\"{}\"\n", "x".repeat(64 << 20));
    let ran = Test::new()
        .file("big.env", &big)
        .file("doc.yaml", "a: ${A}\n")
        .args(&["render", "doc.yaml", "--env-file", "big.env"])
        .status(2)
        .run();
    assert!(
        ran.stderr
            .contains("document of 67108869 bytes exceeds the limit of 67108864 bytes"),
        "{}",
        ran.stderr
    );
    assert!(ran.stderr.contains("big.env"), "{}", ran.stderr);
}

// ---------------------------------------------------------------------------------------------
// 8. Every duration and number read from a file is validated
// ---------------------------------------------------------------------------------------------

#[test]
fn directive_timeouts_out_of_range_are_located_errors_not_panics() {
    for value in ["-1", "0", "1e20", ".nan", ".inf", "-.inf", "\"soon\""] {
        let ran = Test::new()
            .file(
                "d.md",
                format!("---\nname: d\nlimits: {{turns: 2, timeout: {value}}}\n---\nbody\n"),
            )
            .args(&["run", "d.md", "--dry-run"])
            .status(2)
            .run();
        let first = ran.stderr.lines().next().unwrap_or_default();
        let want = match value {
            ".nan" | ".inf" | "-.inf" => format!("error[S002]: `{value}` is not a finite number"),
            "\"soon\"" => "error[S002]: bad front matter: limits.timeout: invalid type: string \"soon\", expected f64".to_string(),
            _ => "error[S002]: `limits.timeout` must be a number of seconds greater than 0 (at most a week)".to_string(),
        };
        assert_eq!(first, want, "{value}: {}", ran.stderr);
        assert!(
            ran.stderr.contains("--> d.md:3:"),
            "{value}: {}",
            ran.stderr
        );
        assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    }
}

#[test]
fn a_tool_timeout_that_is_not_a_number_is_an_error_not_sixty_seconds() {
    for value in [".nan", ".inf", "-.inf"] {
        let ran = Test::new()
            .file("tools/runtimes/subprocess.yaml", "config: {}\n")
            .file(
                "tools/t.yaml",
                format!("executor: runtimes/subprocess\nconfig:\n  command: printf\n  timeout: {value}\n"),
            )
            .args(&["run", "t", "--dry-run"])
            .status(2)
            .run();
        assert_eq!(
            ran.stderr.lines().next().unwrap_or_default(),
            format!("error[S002]: `{value}` is not a finite number"),
            "{}",
            ran.stderr
        );
        assert!(
            ran.stderr.contains("--> tools/t.yaml:4:12"),
            "{}",
            ran.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 12. Files: a byte-order mark and duplicate keys are clear errors
// ---------------------------------------------------------------------------------------------

#[test]
fn a_byte_order_mark_or_a_duplicate_key_in_a_tool_or_graph_is_a_clear_error() {
    let tool = "executor: runtimes/subprocess\nconfig:\n  command: printf\n";
    let graph = "kind: graph\nstart: a\nnodes:\n  a: {kind: return, output: x}\n";
    let cases = [
        (
            "tools/t.yaml",
            format!("\u{feff}{tool}"),
            "t",
            "error[S002]: the file starts with a byte-order mark (U+FEFF)",
            "tools/t.yaml:1:1",
        ),
        (
            "tools/g.yaml",
            format!("\u{feff}{graph}"),
            "g",
            "error[S002]: the file starts with a byte-order mark (U+FEFF)",
            "tools/g.yaml:1:1",
        ),
        (
            "tools/t.yaml",
            format!("{tool}  command: echo\n"),
            "t",
            "error[S002]: duplicate key `command`",
            "tools/t.yaml:4:3",
        ),
        (
            "tools/g.yaml",
            format!("{graph}start: b\n"),
            "g",
            "error[S002]: duplicate key `start`",
            "tools/g.yaml:5:1",
        ),
    ];
    for (file, text, id, first, at) in cases {
        let ran = Test::new()
            .file("tools/runtimes/subprocess.yaml", "config: {}\n")
            .file(file, &text)
            .args(&["run", id, "--dry-run"])
            .status(2)
            .run();
        assert_eq!(
            ran.stderr.lines().next().unwrap_or_default(),
            first,
            "{}",
            ran.stderr
        );
        assert!(ran.stderr.contains(&format!("--> {at}")), "{}", ran.stderr);
    }
}

// ---------------------------------------------------------------------------------------------
// 9. The batch protocol answers every line that is not empty, whatever its bytes
// ---------------------------------------------------------------------------------------------

#[test]
fn a_batch_line_that_is_not_utf8_is_answered_and_the_rest_are_served() {
    let ran = Test::new()
        .args(&["render", "--batch"])
        .stdin(
            &b"{\"template\":\"a\"}\n{\"template\":\"\xff\"}\n  \n{\"id\":9,\"template\":\"c\"}\n"
                [..],
        )
        .status(0)
        .run();
    assert_eq!(
        ran.stdout,
        concat!(
            "{\"ok\":true,\"value\":\"a\",\"warnings\":[]}\n",
            "{\"ok\":false,\"error\":{\"kind\":\"request\",\"layer\":\"request\",\"message\":\"malformed request: not valid UTF-8 (byte 13)\",\"path\":\"$\",\"span\":null,\"hint\":\"a request is one line of UTF-8 JSON\"}}\n",
            "{\"ok\":false,\"error\":{\"kind\":\"request\",\"layer\":\"request\",\"message\":\"empty request\",\"path\":\"$\",\"span\":null,\"hint\":\"a request is one JSON object: {\\\"template\\\": …, \\\"layers\\\", \\\"env\\\", \\\"secrets\\\", \\\"params\\\", \\\"context\\\", \\\"inputs\\\", \\\"strict\\\"}\"}}\n",
            "{\"id\":9,\"ok\":true,\"value\":\"c\",\"warnings\":[]}\n",
        )
    );
}

// ---------------------------------------------------------------------------------------------
// 10. Caller parameters passed as environment variables cannot bypass the schema
// ---------------------------------------------------------------------------------------------

/// A tool printing its environment, with `params_env_prefix` set to `prefix`.
fn env_tool(prefix: &str) -> Test {
    Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .file(
            "tools/t.yaml",
            format!(
                "executor: runtimes/subprocess\nparameters:\n  type: object\n  additionalProperties: true\n  properties:\n    mode: {{type: string, enum: [safe]}}\nconfig:\n  command: env\n  params_env_prefix: \"{prefix}\"\n"
            ),
        )
}

#[test]
fn two_parameters_naming_one_variable_are_an_error() {
    for (params, first) in [
        (
            r#"{"mode":"safe","MODE":"rm-rf"}"#,
            "error[request]: caller parameters `mode` and `MODE` would both be passed as `PARAM_MODE`",
        ),
        (
            r#"{"x y":1,"x_y":2}"#,
            "error[request]: caller parameters `x y` and `x_y` would both be passed as `PARAM_X_Y`",
        ),
    ] {
        let ran = env_tool("PARAM_")
            .args(&["run", "t", "--params-json", params])
            .status(2)
            .run();
        assert_eq!(ran.stdout, "", "the tool must not run");
        assert_eq!(ran.stderr.lines().next().unwrap_or_default(), first, "{}", ran.stderr);
        assert!(ran.stderr.contains("--> tools/t.yaml:9:22"), "{}", ran.stderr);
    }
    let ran = env_tool("PARAM_")
        .args(&[
            "run",
            "t",
            "--params-json",
            r#"{"mode":"safe","other":"x"}"#,
        ])
        .status(0)
        .run();
    assert!(ran.stdout.contains("PARAM_MODE=safe\n"), "{}", ran.stdout);
    assert!(ran.stdout.contains("PARAM_OTHER=x\n"), "{}", ran.stdout);
}

#[test]
fn an_empty_prefix_is_refused() {
    let ran = env_tool("")
        .args(&[
            "run",
            "t",
            "--params-json",
            r#"{"PATH":"/evil","mode":"safe"}"#,
        ])
        .status(2)
        .run();
    assert_eq!(ran.stdout, "");
    assert_eq!(
        ran.stderr.lines().next().unwrap_or_default(),
        "error[request]: `params_env_prefix` must be the start of a variable name, e.g. PARAM_"
    );
    assert!(
        ran.stderr.contains("--> tools/t.yaml:9:22"),
        "{}",
        ran.stderr
    );
}

#[test]
fn variables_that_steer_the_runtime_are_never_set_by_a_caller() {
    for (prefix, param, var) in [
        ("LD_", "preload", "LD_PRELOAD"),
        ("DYLD_", "insert_libraries", "DYLD_INSERT_LIBRARIES"),
        ("BASH_", "env", "BASH_ENV"),
        ("PYTHON", "path", "PYTHONPATH"),
        ("NODE_", "options", "NODE_OPTIONS"),
        ("PA", "th", "PATH"),
        ("HO", "me", "HOME"),
    ] {
        let ran = env_tool(prefix)
            .args(&[
                "run",
                "t",
                "--params-json",
                &format!(r#"{{"{param}":"x"}}"#),
            ])
            .status(2)
            .run();
        assert_eq!(ran.stdout, "", "{var}");
        assert_eq!(
            ran.stderr.lines().next().unwrap_or_default(),
            format!("error[request]: caller parameter `{param}` would be passed as `{var}`, which a caller may not set"),
            "{}",
            ran.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 12. Names on the command line, empty secrets, values that are not UTF-8
// ---------------------------------------------------------------------------------------------

#[test]
fn bad_variable_names_on_the_command_line_are_refused() {
    for (args, first) in [
        (
            &["--env", "A B=x"][..],
            "error[request]: --env `A B=x`: `A B` is not a valid environment variable name",
        ),
        (
            &["--env", "=x"],
            "error[request]: --env `=x`: `` is not a valid environment variable name",
        ),
        (
            &["--env", "1A=x"],
            "error[request]: --env `1A=x`: `1A` is not a valid environment variable name",
        ),
        (
            &["--secret", "bad name"],
            "error[request]: --secret `bad name` is not a valid environment variable name",
        ),
        (
            &["--secret", ""],
            "error[request]: --secret `` is not a valid environment variable name",
        ),
    ] {
        let mut all = vec!["render", "-", "--clean-env"];
        all.extend_from_slice(args);
        let ran = Test::new().args(&all).stdin("a: b\n").status(2).run();
        assert_eq!(
            ran.stderr.lines().next().unwrap_or_default(),
            first,
            "{args:?}: {}",
            ran.stderr
        );
        assert_eq!(ran.stdout, "");
    }
}

#[test]
fn an_empty_secret_is_shown_as_stars_not_as_an_empty_string() {
    let ran = Test::new()
        .args(&[
            "render",
            "-",
            "--clean-env",
            "--env",
            "TOKEN=",
            "--secret",
            "TOKEN",
            "--explain",
        ])
        .stdin("a: \"[${TOKEN}]\"\nb: \"${TOKEN}\"\n")
        .status(0)
        .run();
    assert!(ran.stdout.contains("\"[***]\""), "{}", ran.stdout);
    assert!(!ran.stdout.contains("\"[]\""), "{}", ran.stdout);
    let ran = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .file(
            "tools/t.yaml",
            "executor: runtimes/subprocess\nsecrets: [TOKEN]\nconfig:\n  command: printf\n  args: [\"%s\", \"${TOKEN}\"]\n",
        )
        .env("TOKEN", "")
        .args(&["run", "t", "--dry-run"])
        .status(0)
        .run();
    assert!(
        ran.stdout.contains("printf\", \"%s\", \"***\"]\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_variable_that_is_not_utf8_is_reported_as_such_not_as_unset() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
    for (strict, code, first) in [
        (
            &["--strict"][..],
            2,
            "error[env]: environment variable `BAD` is set but its value is not valid UTF-8",
        ),
        (
            &[],
            0,
            "warning[env]: environment variable `BAD` is set but its value is not valid UTF-8",
        ),
    ] {
        let mut args = vec!["render", "-"];
        args.extend_from_slice(strict);
        let ran = Test::new()
            .args(&args)
            .env("BAD", bad)
            .stdin("a: \"${BAD}\"\n")
            .status(code)
            .run();
        assert_eq!(ran.error_line(), first, "{}", ran.stderr);
    }
}

// ---------------------------------------------------------------------------------------------
// 12. Validation errors quote caller text capped and escaped
// ---------------------------------------------------------------------------------------------

#[test]
fn validation_errors_quote_caller_values_capped_and_escaped() {
    let huge = format!("\u{1b}[31m{}\u{1b}[0m", "x".repeat(100_000));
    let schema_tool = "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    count: {type: integer}\nconfig:\n  command: printf\n  args: [\"{count}\"]\n";
    let directive = "---\nname: d\ninputs:\n  - {name: n, type: integer}\n---\nbody\n";
    let graph = "kind: graph\nparameters:\n  type: object\n  properties:\n    n: {type: integer}\nstart: a\nnodes:\n  a: {kind: return, output: x}\n";
    let long_key = format!("--param={huge}=1");
    let long_input = format!("n={huge}");
    let long_env = format!("{huge}=1");
    let long_count = format!("count={huge}");
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "t", "-p", &long_count],
        vec!["run", "t", &long_key],
        vec!["run", "d.md", "--input", &long_input],
        vec!["run", "d.md", "--input", &long_env],
        vec!["run", "g", "--input", &long_input],
        vec!["render", "-", "--env", &long_env],
    ];
    for args in cases {
        let ran = Test::new()
            .file("tools/runtimes/subprocess.yaml", "config: {}\n")
            .file("tools/t.yaml", schema_tool)
            .file("tools/g.yaml", graph)
            .file("d.md", directive)
            .stdin("a: 1\n")
            .args(&args)
            .status(2)
            .run();
        assert!(
            ran.stderr.len() < 1_000,
            "{} bytes: {}",
            ran.stderr.len(),
            &ran.stderr[..300]
        );
        assert!(
            !ran.stderr.contains('\u{1b}'),
            "a raw escape byte: {}",
            ran.stderr
        );
        assert!(ran.stderr.contains("\\u{1b}[31mxxx"), "{}", ran.stderr);
        assert!(ran.stderr.contains("…"), "{}", ran.stderr);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Symbolic links: no project file leads outside the project's directories
// ---------------------------------------------------------------------------------------------

/// A tool that would leave a mark if it ever ran.
const MARKER_TOOL: &str =
    "executor: runtimes/subprocess\nconfig:\n  command: touch\n  args: [\"{project_path}/RAN\"]\n";

#[test]
fn links_to_files_outside_tools_are_refused_by_id_executor_and_directory() {
    let outside = Test::new()
        .file("x.yaml", MARKER_TOOL)
        .file("dir/y.yaml", MARKER_TOOL);
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .link("tools/ch/link.yaml", outside.path().join("x.yaml"))
        .link("tools/ext", outside.path().join("dir"))
        .tool("via", "executor: ch/link\nconfig: {}\n");
    // A link named by id is no tool of the project (the call says so); a link in a chain
    // is an error of the chain's file, which the gate refuses.
    for (id, shown, tag) in [
        ("ch/link", "tools/ch/link.yaml", "request"),
        ("ext/y", "tools/ext/y.yaml", "request"),
        ("via", "tools/ch/link.yaml", "S002"),
    ] {
        for extra in [&["--dry-run"][..], &[]] {
            let mut args = vec!["run", id];
            args.extend_from_slice(extra);
            let ran = s.then(&args).status(2).run();
            assert!(
                ran.error_line().starts_with(&format!(
                    "error[{tag}]: `{shown}` leads outside `tools/` (to `"
                )),
                "{id}: {}",
                ran.stderr
            );
            assert!(!s.path().join("RAN").exists(), "{id}: the outside tool ran");
        }
    }
}

#[test]
fn an_error_never_shows_the_contents_of_a_file_outside_the_project() {
    let secret = "root:x:0:0:secret line:/root:/bin/sh\n";
    let outside = Test::new()
        .file("passwd", secret)
        .file("hooks.yaml", secret)
        .file("d.md", format!("---\n{secret}---\n"));
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .link("tools/p.yaml", outside.path().join("passwd"))
        .link(".env", outside.path().join("passwd"))
        .link("hooks/h.yaml", outside.path().join("hooks.yaml"))
        .link("directives/d.md", outside.path().join("d.md"))
        .tool(
            "t",
            "executor: runtimes/subprocess\nconfig:\n  command: printf\n",
        );
    // Refused (2), or listed as failing (`check`, `tools`: 1).
    for (args, status) in [
        (&["run", "p"][..], 2),
        (&["run", "t", "--dry-run"], 2),
        (&["run", "directives/d.md", "--dry-run"], 2),
        (&["check"], 1),
        (&["tools"], 1),
        (&["graph", "p"], 2),
        (&["explain", "tools/p.yaml"], 2),
    ] {
        let ran = s.then(args).status(status).run();
        let printed = ran.all();
        assert!(!printed.contains("secret line"), "{args:?}: {printed}");
        assert!(printed.contains("leads outside"), "{args:?}: {printed}");
    }
}

#[test]
fn directory_links_are_never_followed_twice_nor_outside() {
    // Forty levels of two links each would be 2^40 paths.
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool(
            "examples/echo",
            "description: echoes\nexecutor: runtimes/subprocess\nconfig:\n  command: printf\n",
        )
        .file("directives/d.md", "---\nname: d\n---\nbody\n")
        .link("tools/a", "..")
        .link("tools/b", "..")
        .link("tools/examples/self", ".")
        .link("tools/runtimes/alias", "../examples")
        .link("directives/up", "..")
        .link("directives/here", ".");
    let bounded = |args: &[&str]| s.then(args).measured(Duration::from_secs(20)).limit(MEMORY);
    bounded(&["tools"])
        .stdout(&format!(
            "{:<19}  echoes\nruntimes/subprocess\n",
            "examples/echo"
        ))
        .status(0)
        .run();
    let ran = bounded(&["check"]).status(0).run();
    assert!(
        ran.stdout
            .ends_with("checked 3 files: 0 errors, 0 warnings\n"),
        "{}",
        ran.stdout
    );
    bounded(&["run", "examples/echp"])
        .stderr(
            "error[request]: unknown tool `examples/echp`\n   = help: did you mean `examples/echo`?\n",
        )
        .status(2)
        .run();
    // A link inside tools/ to a file inside tools/ is a tool like any other.
    s.then(&["run", "alias", "--dry-run"])
        .link("tools/alias.yaml", "examples/echo.yaml")
        .status(0)
        .run();
    s.then(&["run", "runtimes/alias/echo", "--dry-run"])
        .status(0)
        .run();
}

#[test]
fn plans_and_prompts_are_confined_to_their_directories_and_walked_once() {
    let secret = "[{\"id\": \"a\", \"tool\": \"secret line\"}]\n";
    let outside = Test::new()
        .file("p.json", secret)
        .file("p.j2", "secret line\n");
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .link("plans/p.json", outside.path().join("p.json"))
        .link("plans/up", "..")
        .link("plans/here", ".")
        .link("prompts/up", "..")
        .link("prompts/p.j2", outside.path().join("p.j2"));
    let ran = s
        .then(&["check"])
        .measured(Duration::from_secs(20))
        .limit(MEMORY)
        .status(1)
        .run();
    assert!(!ran.all().contains("secret line"), "{}", ran.all());
    assert!(
        ran.stdout
            .contains("`plans/p.json` leads outside `plans/` (to `"),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_plan_line_longer_than_a_document_is_refused_without_holding_it() {
    let huge = format!("{{\"plan\": \"{}\"}}\n", "x".repeat(64 << 20));
    let next = r#"{"id": 2, "plan": [{"id": "a", "tool": "t", "arguments": {}}]}"#;
    let ran = Test::new()
        .args(&["plan", "resolve", "--batch"])
        .stdin(format!("{huge}{next}\n"))
        .limit(MEMORY)
        .status(0)
        .run();
    let replies: Vec<Value> = ran
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2, "{}", ran.stdout);
    assert_eq!(
        replies[0]["error"]["message"],
        "request line exceeds the limit of 67108864 bytes; pass large results in several requests"
    );
    assert_eq!(replies[0]["error"]["kind"], "limit", "{}", ran.stdout);
    // The limit is the setting its documentation names.
    let raised = Test::new()
        .args(&["plan", "resolve", "--batch"])
        .env("STRATA_LIMITS_DOCUMENT_BYTES", "134217728")
        .stdin(format!("{huge}{next}\n"))
        .limit(MEMORY)
        .status(0)
        .run();
    let first: Value = serde_json::from_str(raised.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["error"]["kind"], "request", "{}", raised.stdout);
    assert_eq!(replies[1]["id"], 2, "{}", ran.stdout);
    assert_eq!(replies[1]["ok"], true, "{}", ran.stdout);

    // Refused whole (2), or a run of the step read before it that fails (1).
    let stream = format!("{{\"id\": \"a\", \"tool\": \"t\"}}\n{huge}");
    for (input, status) in [(huge.clone(), 2), (stream, 1)] {
        let ran = Test::new()
            .file("tools/t.yaml", "config: {}\n")
            .args(&["plan", "run", "-"])
            .stdin(input)
            .limit(MEMORY)
            .status(status)
            .run();
        assert!(
            ran.stderr.contains("exceeds the limit of 67108864 bytes"),
            "{}",
            ran.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 5, 6. Signals: every command that spawns kills and reaps its children, then dies of the
// signal it received; one owner per child, so no false status
// ---------------------------------------------------------------------------------------------

/// A project whose tool `slow` writes its pid to `pids/<pid>` and sleeps; a graph and a
/// directive call it.
fn slow_project() -> Test {
    Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool(
            "slow",
            "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"echo $$ > pids/$$; exec sleep 30\"]\n  timeout: 60\n",
        )
        .tool(
            "g",
            "kind: graph\nstart: a\nnodes:\n  a: {kind: action, tool: slow, next: b}\n  b: {kind: return, output: done}\n",
        )
        .file(
            "d.md",
            "---\nname: d\nactions:\n  - {id: a, tool: slow}\n---\nbody\n",
        )
}

/// Empties the directory `pids/` of the project at `root`.
fn clear_pids(root: &Path) {
    let _ = std::fs::remove_dir_all(root.join("pids"));
    std::fs::create_dir_all(root.join("pids")).expect("pids/");
}

/// The pids the slow tool wrote so far.
fn tool_pids(root: &Path) -> Vec<i32> {
    std::fs::read_dir(root.join("pids"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// True while process `pid` runs (a zombie has stopped running).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// Waits up to `secs` for `f`.
fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

#[test]
fn every_spawning_command_kills_its_tool_and_dies_of_the_signal() {
    let s = slow_project();
    let root = s.path();
    for args in [&["run", "slow"][..], &["run", "g"], &["run", "d.md"]] {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            clear_pids(root);
            let running = s.then(args).stdin("").killed_by(sig).start();
            assert!(
                eventually(20, || !tool_pids(root).is_empty()),
                "{args:?}: the tool never started"
            );
            let tool = tool_pids(root)[0];
            running.signal(sig);
            running.finish();
            assert!(!alive(tool), "{args:?} {sig}: the tool {tool} still runs");
        }
    }
}

/// Kills process `pid` when dropped, if it still runs: a tool a failed test left behind.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if alive(self.0) {
            // SAFETY: a plain kill of a tool this test started through strata.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}

#[test]
fn a_tool_dies_with_a_strata_killed_by_sigkill() {
    let s = slow_project();
    let root = s.path();
    let cases: [(&[&str], &str); 4] = [
        (&["run", "slow"], ""),
        (&["run", "--batch"], "{\"tool\": \"slow\"}\n"),
        (&["run", "d.md"], ""),
        (&["run", "g"], ""),
    ];
    for (args, stdin) in cases {
        clear_pids(root);
        let running = s.then(args).stdin(stdin).killed_by(libc::SIGKILL).start();
        assert!(
            eventually(20, || !tool_pids(root).is_empty()),
            "{args:?}: the tool never started"
        );
        let tool = KillOnDrop(tool_pids(root)[0]);
        running.signal(libc::SIGKILL);
        running.finish();
        assert!(
            eventually(20, || !alive(tool.0)),
            "{args:?}: the tool {} outlived strata",
            tool.0
        );
    }
}

#[test]
fn signalled_runs_always_report_the_signal_received_never_a_false_status() {
    let s = slow_project();
    let root = s.path();
    for trial in 0..40u64 {
        clear_pids(root);
        let args: &[&str] = match trial % 3 {
            0 => &["run", "slow"],
            1 => &["run", "g", "--quiet"],
            _ => &["run", "d.md", "--quiet"],
        };
        let running = s
            .then(args)
            .stdin("")
            .killed_by(libc::SIGTERM)
            .stderr("")
            .start();
        // From before the tool starts to well after.
        std::thread::sleep(Duration::from_millis(trial % 8 * 5));
        running.signal(libc::SIGTERM);
        running.finish();
        for pid in tool_pids(root) {
            assert!(
                eventually(2, || !alive(pid)),
                "trial {trial}: tool {pid} still runs"
            );
        }
    }
}

#[test]
fn a_tool_never_inherits_descriptors_of_the_caller() {
    let ran = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool(
            "fds",
            "executor: runtimes/subprocess\nconfig:\n  command: ls\n  args: [/proc/self/fd]\n",
        )
        .args(&["run", "fds"])
        .open_fd(9)
        .status(0)
        .run();
    let fds: Vec<&str> = ran.stdout.lines().collect();
    assert!(fds.contains(&"0"), "{fds:?}");
    assert!(
        !fds.contains(&"9"),
        "fd 9 of the caller reached the tool: {fds:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 7. Locks: one walker per run, however many resume it at once
// ---------------------------------------------------------------------------------------------

#[test]
fn concurrent_resumes_of_a_killed_run_run_one_walker() {
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool(
            "mark",
            "executor: runtimes/subprocess\nconfig:\n  command: sh\n  args:\n    - -c\n    - |\n      if [ -e pause ]; then echo $$ > paused.tmp; mv paused.tmp paused.pid; exec sleep 30; fi\n      echo step >> effects.log\n      sleep 0.05\n",
        )
        .tool(
            "g",
            "kind: graph\nstart: a\nnodes:\n  a: {kind: action, tool: mark, next: b}\n  b: {kind: return, output: done}\n",
        );
    let root = s.path();
    for trial in 0..50 {
        let run_id = format!("r{trial}");
        let mut first = s
            .then(&["run", "g", "--quiet", "--run-id", &run_id])
            .file("pause", "")
            .spawn();
        let paused: i32 = wait_for(&root.join("paused.pid")).parse().expect("a pid");
        first.kill().unwrap(); // SIGKILL: the lock file stays, its holder gone
        first.wait().unwrap();
        // SAFETY: the paused tool is a process this test started through strata.
        unsafe { libc::kill(paused, libc::SIGKILL) };
        for f in ["pause", "paused.pid", "effects.log"] {
            let _ = std::fs::remove_file(root.join(f));
        }
        let resumers: Vec<Running> = (0..2 + trial % 3)
            .map(|_| {
                // Which of them wins is the race: their statuses are checked together.
                s.then(&["run", "g", "--quiet", "--resume", &run_id])
                    .stdin("")
                    .any_status()
                    .start()
            })
            .collect();
        let rans: Vec<Ran> = resumers.into_iter().map(Running::finish).collect();
        let effects = s.read("effects.log");
        assert_eq!(
            effects,
            "step\n",
            "trial {trial}: the step ran {} times",
            effects.lines().count()
        );
        let ok = rans.iter().filter(|r| r.code == Some(0)).count();
        assert_eq!(ok, 1, "trial {trial}");
        for r in rans.iter().filter(|r| r.code != Some(0)) {
            assert_eq!(r.code, Some(2), "trial {trial}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!("run `{run_id}` is in progress"))
                    || r.stderr
                        .contains(&format!("run `{run_id}` has already ended (completed)")),
                "trial {trial}: {}",
                r.stderr
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 11. Loops that were quadratic. These bounds catch a hang, not a speed: the linear code
// takes a few seconds in a debug build, the quadratic one minutes. Speed itself is measured
// by `strata-bench --quick` (the `check_refs`, `check_unknown` and `foreach_items` rows).
// ---------------------------------------------------------------------------------------------

#[test]
fn check_locates_tens_of_thousands_of_placeholders_in_linear_time() {
    // Four strings of 8,000 unknown parameters each: 32,000 diagnostics, each located (a
    // file shows its first 20). Another tool's four strings hold 32,000 known parameters
    // and, at the end of its last one, an unknown one.
    let tool = |strings: Vec<String>| {
        format!(
            "executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: [{}]\n",
            strings.join(", ")
        )
    };
    let unknown = tool(
        (0..4)
            .map(|_| format!("\"{}\"", "{zz}".repeat(8_000)))
            .collect(),
    );
    let far = tool(
        (0..4)
            .map(|i| {
                format!(
                    "\"{}{}\"",
                    "{tool_dir}".repeat(8_000),
                    if i == 3 { "{zz}" } else { "" }
                )
            })
            .collect(),
    );
    let far_column = far.lines().nth(3).unwrap().find("{zz}").unwrap() + 1;
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool("unknown", &unknown)
        .tool("far", &far);
    let ran = s
        .then(&["check"])
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .status(1)
        .run();
    let stdout = &ran.stdout;
    assert!(
        stdout.ends_with(
            "error[strata]: 31980 more diagnostics of this file are not shown (31980 errors)\n  \
             --> tools/unknown.yaml:4:91\n   = help: a file shows its first 20 diagnostics, errors \
             first: fix them, then check again\n\nchecked 3 files: 32001 errors, 0 warnings\n"
        ),
        "{}",
        &stdout[stdout.len().saturating_sub(300)..]
    );
    assert!(
        stdout.contains(&format!("  --> tools/far.yaml:4:{far_column}\n")),
        "the unknown parameter at the end of the far tool"
    );
    std::fs::remove_file(s.path().join("tools/far.yaml")).unwrap();
    // Ten keys of 9,999 references each, all known and one link deep: nothing to report,
    // nothing to locate.
    let keys: String = (0..10)
        .map(|i| {
            let value = if i < 9 {
                "{k9}".repeat(9_999)
            } else {
                "x".into()
            };
            format!("  k{i}: \"{value}\"\n")
        })
        .collect();
    std::fs::remove_file(s.path().join("tools/unknown.yaml")).unwrap();
    s.then(&["check"])
        .tool(
            "known",
            &format!("executor: runtimes/subprocess\nconfig:\n  command: printf\n{keys}  args: [\"{{k8}}\"]\n"),
        )
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .stdout("checked 2 files: 0 errors, 0 warnings\n")
        .status(0)
        .run();
}

#[test]
fn a_foreach_over_the_state_shares_it_with_every_element() {
    let n = 40_000;
    let items: Vec<usize> = (0..n).collect();
    let graph = format!(
        "kind: graph\nstate: {{items: {}, other: {}}}\nstart: each\nnodes:\n  each:\n    kind: foreach\n    over: \"${{state.items}}\"\n    do: {{kind: gate}}\n    output: \"${{item + length(state.other)}}\"\n    collect: out\n    next: done\n  done: {{kind: return, output: \"${{state.out[-1]}}\"}}\n",
        json!(items),
        json!(vec!["x"; n])
    );
    let s = Test::new();
    s.then(&["run", "g", "--quiet"])
        .tool("g", &graph)
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .stdout(&format!("{}\n", 2 * n - 1))
        .status(0)
        .run();
    // An element that assigns gets its own copy: nothing leaks into the others or out.
    let graph = "kind: graph\nstate: {items: [1, 2, 3], seen: 0}\nstart: each\nnodes:\n  each:\n    kind: foreach\n    over: \"${state.items}\"\n    do: {kind: gate, assign: {seen: \"${state.seen + item}\"}}\n    output: \"${state.seen}\"\n    collect: out\n    next: done\n  done: {kind: return, output: {out: \"${state.out}\", seen: \"${state.seen}\"}}\n";
    s.then(&["run", "g", "--quiet"])
        .tool("g", graph)
        .measured(KILL_AFTER)
        .limit(MEMORY)
        .stdout("{\n  \"out\": [\n    1,\n    2,\n    3\n  ],\n  \"seen\": 0\n}\n")
        .status(0)
        .run();
}

// ---------------------------------------------------------------------------------------------
// 12. A whole document's compile is bounded, not only each string
// ---------------------------------------------------------------------------------------------

#[test]
fn a_tool_of_too_many_placeholders_or_string_bytes_is_refused_in_bounded_memory() {
    // 30 strings of 9,000 placeholders: 270,000 (each string within its limits).
    let holes = format!("\"{}\"", "{a}".repeat(9_000));
    let args = vec![holes.as_str(); 30].join(", ");
    // 9 strings of 2 MB without placeholders: 18 MB (read as JSON, quicker than YAML in a
    // debug build; every document is compiled by the same code).
    let plain = vec!["x".repeat(2 << 20); 9];
    let s = Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool(
            "holes",
            &format!(
                "executor: runtimes/subprocess\nconfig:\n  command: printf\n  a: x\n  args: [{args}]\n"
            ),
        )
        .file("doc.json", json!({ "args": plain }).to_string());
    for (args, code, first) in [
        (
            &["run", "holes", "--dry-run"][..],
            2,
            "error[S002]: more than 100000 placeholders in one document",
        ),
        (
            &["render", "doc.json"],
            2,
            "error[request]: the document's strings exceed the limit of 16777216 bytes",
        ),
    ] {
        let ran = s.then(args).measured(KILL_AFTER).status(code).run();
        let id = args[1];
        assert_eq!(ran.error_line(), first, "{id}");
        let peak = ran.peak_rss_kib;
        assert!(peak < 512 * 1024, "{id}: peak RSS {peak} KiB");
    }
}
