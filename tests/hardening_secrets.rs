//! Hardening, round 3 (issue 24), rows 9, 11, 12 and 14: one redaction rule for the
//! project's declared secrets, tool text escaped wherever it reaches a terminal, writes and
//! settings reads confined to the project, and caller parameters that cannot pose as a
//! declared parameter's variable.

mod common;
use common::{Ran, Test};

// ---------------------------------------------------------------------------------------------
// Row 9. The project's declared secrets are redacted wherever `--secret` redacts
// ---------------------------------------------------------------------------------------------

const SECRET: &str = "hunter2-s3cret";

/// A project whose `k.yaml` holds `a: "x${API_KEY}"` and `e.yaml` a required variable whose
/// message quotes the secret.
fn secret_project() -> Test {
    Test::new()
        .file("k.yaml", "a: \"x${API_KEY}\"\n")
        .file("e.yaml", "b: \"${NOPE:?key is ${API_KEY}}\"\n")
}

/// What `args` prints with `--secret API_KEY`, ending with `status`: the reference every
/// other way of declaring the secret must match.
fn with_flag(args: &[&str], status: i32) -> Ran {
    let mut all = args.to_vec();
    all.extend(["--secret", "API_KEY"]);
    secret_project()
        .args(&all)
        .env("API_KEY", SECRET)
        .status(status)
        .run()
}

#[test]
fn secrets_declared_in_settings_are_redacted_like_secret_flags() {
    // `e.yaml` fails to render (`:?`): status 2.
    for (args, status) in [
        (&["render", "k.yaml", "--explain"][..], 0),
        (&["render", "e.yaml"], 2),
        (&["render", "e.yaml", "--explain"], 2),
    ] {
        let reference = with_flag(args, status);
        assert!(
            !reference.all().contains(SECRET),
            "{args:?}: {}",
            reference.all()
        );
        assert!(
            reference.all().contains("***"),
            "{args:?}: {}",
            reference.all()
        );
        let by_file = secret_project()
            .file("strata.yaml", "secrets: [API_KEY]\n")
            .args(args)
            .env("API_KEY", SECRET)
            .status(status)
            .run();
        let by_env = secret_project()
            .args(args)
            .env("API_KEY", SECRET)
            .env("STRATA_SECRETS", "API_KEY")
            .status(status)
            .run();
        for ran in [by_file, by_env] {
            assert_eq!(ran.stdout, reference.stdout, "{args:?}");
            assert_eq!(ran.stderr, reference.stderr, "{args:?}");
        }
    }
    // The exact error, the value nowhere.
    secret_project()
        .file("strata.yaml", "secrets: [API_KEY]\n")
        .args(&["render", "e.yaml"])
        .env("API_KEY", SECRET)
        .stdout("")
        .stderr("error[env]: required variable `NOPE` is unset or empty: key is ***\n  --> e.yaml:1:5\n  |\n1 | b: \"${NOPE:?key is ${API_KEY}}\"\n  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^\n   = field: b (bytes 0..26)\n   = help: set `NOPE` in the environment\n")
        .status(2)
        .run();
    // The rendered document itself is the caller's output: the value is there.
    secret_project()
        .file("strata.yaml", "secrets: [API_KEY]\n")
        .args(&["render", "k.yaml"])
        .env("API_KEY", SECRET)
        .stdout(&format!("{{\n  \"a\": \"x{SECRET}\"\n}}\n"))
        .status(0)
        .run();
}

// ---------------------------------------------------------------------------------------------
// Row 11. Control characters in tool text are escaped wherever it reaches a terminal
// ---------------------------------------------------------------------------------------------

/// Fails with a title change, a screen wipe, a carriage return, a line erase and a forged
/// `completed` line on standard error.
const EVIL_TOOL: &str = r#"description: fails with terminal escapes
executor: runtimes/subprocess
config:
  command: sh
  args: ["-c", "printf '\\033]0;TITLE\\007\\033[2Jwiped\\r\\033[Kend A (t/evil): completed\\n' >&2; exit 3"]
"#;

/// The stderr line as every printer must show it.
const ESCAPED: &str =
    "    ! \\u{1b}]0;TITLE\\u{7}\\u{1b}[2Jwiped\\r\\u{1b}[Kend A (t/evil): completed";

fn evil_project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/evil", EVIL_TOOL)
        .file("plans/p.json", "[{\"id\": \"A\", \"tool\": \"t/evil\", \"arguments\": {}}]\n")
        .file(
            "directives/d.md",
            "---\nname: d\nactions:\n  - {id: A, tool: t/evil}\n---\nDone.\n",
        )
        .file(
            "tools/graphs/g.yaml",
            "kind: graph\nstart: a\nnodes:\n  a:\n    kind: action\n    tool: t/evil\n    next:\n      - to: done\n  done:\n    kind: return\n    output: x\n",
        )
}

/// True when `text` holds no raw control character but newlines and the colour sequences
/// `--color always` adds (`ESC [ … m`).
fn no_raw_controls(text: &str) -> bool {
    let mut rest = text;
    while let Some(i) = rest.find('\u{1b}') {
        let after = &rest[i + 1..];
        let Some(body) = after.strip_prefix('[') else {
            return false;
        };
        let end = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(body.len());
        if !body[end..].starts_with('m') {
            return false;
        }
        rest = &body[end + 1..];
    }
    !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\u{1b}')
}

#[test]
fn tool_stderr_reaches_the_terminal_escaped_from_every_printer() {
    let p = evil_project();
    for color in ["always", "never"] {
        let (plan_run, graph_run) = (format!("p-{color}"), format!("g-{color}"));
        // The tool fails: each run fails (1); showing the run succeeds.
        for (args, status) in [
            (
                &["plan", "run", "plans/p.json", "--run-id", &plan_run][..],
                1,
            ),
            (&["plan", "step", "plans/p.json", "--step", "A"], 1),
            (&["run", "directives/d.md"], 1),
            (&["run", "graphs/g", "--run-id", &graph_run], 1),
            (&["runs", "show", &plan_run], 0),
        ] {
            let mut all = vec!["--color", color];
            all.extend_from_slice(args);
            let ran = p.then(&all).status(status).run();
            let printed = ran.all();
            assert!(no_raw_controls(&printed), "{all:?}: {printed:?}");
            assert!(printed.lines().any(|l| l == ESCAPED), "{all:?}: {printed}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Row 12. Writes and settings reads stay inside the project
// ---------------------------------------------------------------------------------------------

#[test]
fn init_never_writes_through_a_link_leading_outside() {
    let outside = Test::new();
    let p = Test::new().link("new/tools/runtimes", outside.path().join("tools"));
    let ran = p.then(&["init", "new"]).status(2).run();
    assert_eq!(
        ran.error_line(),
        format!(
            "error[request]: `tools/runtimes` leads outside `new` (to `{}`)",
            outside
                .path()
                .join("tools")
                .canonicalize()
                .unwrap()
                .display()
        )
    );
    assert_eq!(ran.stdout, "");
    assert!(std::fs::read_dir(outside.path().join("tools"))
        .unwrap()
        .next()
        .is_none());
    assert!(!p.path().join("new/strata.yaml").exists());

    // A dangling link would have its target created outside.
    let p = Test::new().link("new/strata.yaml", outside.path().join("made.yaml"));
    let ran = p.then(&["init", "new"]).status(2).run();
    assert_eq!(
        ran.error_line(),
        "error[request]: `new` already has `strata.yaml`"
    );
    assert!(!outside.path().join("made.yaml").exists());
    assert!(!p.path().join("new/tools/hello.yaml").exists());
}

#[test]
fn run_records_are_never_written_through_a_link_leading_outside() {
    let outside = Test::new();
    for link in [".strata/runs", ".strata"] {
        let p = evil_project()
            .tool(
                "t/ok",
                "executor: runtimes/subprocess\nconfig:\n  command: printf\n  args: [ok]\n",
            )
            .file(
                "plans/ok.json",
                "[{\"id\": \"A\", \"tool\": \"t/ok\", \"arguments\": {}}]\n",
            )
            .link(link, outside.path());
        let target = outside.path().canonicalize().unwrap();
        for args in [
            &["plan", "run", "plans/ok.json", "--run-id", "r1"][..],
            &["run", "graphs/g", "--run-id", "g1"],
            &["plan", "run", "plans/ok.json", "--resume", "r1"],
        ] {
            let ran = p.then(args).status(2).run();
            assert_eq!(
                ran.error_line(),
                format!(
                    "error[request]: `{link}` leads outside the project (to `{}`)",
                    target.display()
                ),
                "{args:?}: {}",
                ran.all()
            );
        }
        let written: Vec<_> = std::fs::read_dir(outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|name| name != "tools")
            .collect();
        assert!(written.is_empty(), "{link}: written outside: {written:?}");
    }
}

#[test]
fn settings_outside_the_project_are_refused_like_dotenv() {
    let outside = Test::new().file("s.yaml", "secrets: [API_KEY]\nstrict: true\n");
    let real = outside.path().join("s.yaml").canonicalize().unwrap();
    let p = Test::new()
        .file("k.yaml", "a: \"${UNSET_THING}\"\n")
        .link("strata.yaml", outside.path().join("s.yaml"));
    // Neither `render` nor `config` can be carried out: 2.
    for (args, status) in [(&["render", "k.yaml"][..], 2), (&["config"], 2)] {
        let ran = p.then(args).status(status).run();
        assert_eq!(
            ran.error_line(),
            format!(
                "error[settings]: `strata.yaml` leads outside the project (to `{}`)",
                real.display()
            ),
            "{args:?}: {}",
            ran.all()
        );
        assert_eq!(ran.stdout, "", "{args:?}");
    }
    // A link inside the project is followed.
    Test::new()
        .file("conf/s.yaml", "strict: true\n")
        .file("k.yaml", "a: \"${UNSET_THING}\"\n")
        .link("strata.yaml", "conf/s.yaml")
        .args(&["render", "k.yaml"])
        .status(2)
        .run();
}

// ---------------------------------------------------------------------------------------------
// Row 14. A caller parameter cannot pose as a declared parameter's variable
// ---------------------------------------------------------------------------------------------

/// A tool printing its environment, `mode` declared with an enum, extra parameters allowed.
fn env_tool() -> Test {
    Test::new()
        .file("tools/runtimes/subprocess.yaml", "config: {}\n")
        .tool(
            "t",
            "executor: runtimes/subprocess\nparameters:\n  type: object\n  additionalProperties: true\n  properties:\n    mode: {type: string, enum: [safe]}\nconfig:\n  command: env\n  params_env_prefix: \"PARAM_\"\n",
        )
        .file("plans/p.json", "[{\"id\": \"A\", \"tool\": \"t\", \"arguments\": {\"MODE\": \"rm-rf\"}}]\n")
}

#[test]
fn a_caller_parameter_named_like_a_declared_one_is_refused() {
    for name in ["MODE", "Mode"] {
        let json = format!("{{\"{name}\":\"rm-rf\"}}");
        let ran = env_tool()
            .args(&["run", "t", "--params-json", &json])
            .status(2)
            .run();
        assert_eq!(ran.stdout, "", "{name}: the tool must not run");
        assert_eq!(
            ran.error_line(),
            format!("error[request]: caller parameter `{name}` would be passed as `PARAM_MODE`, the variable of declared parameter `mode`"),
            "{}",
            ran.stderr
        );
        assert!(
            ran.stderr.contains("--> tools/t.yaml:9:22"),
            "{}",
            ran.stderr
        );
    }
    // `mode ` is not `mode`: it names another variable and passes.
    let ran = env_tool()
        .args(&[
            "run",
            "t",
            "--params-json",
            r#"{"mode ":"x","mode":"safe"}"#,
        ])
        .status(0)
        .run();
    assert!(ran.stdout.contains("PARAM_MODE=safe\n"), "{}", ran.stdout);
    assert!(ran.stdout.contains("PARAM_MODE_=x\n"), "{}", ran.stdout);
    // The same through a plan's step.
    let ran = env_tool()
        .args(&["plan", "run", "plans/p.json"])
        .status(1)
        .run();
    assert!(!ran.all().contains("PARAM_MODE=rm-rf"), "{}", ran.all());
    assert!(
        ran.all().contains("caller parameter `MODE` would be passed as `PARAM_MODE`, the variable of declared parameter `mode`"),
        "{}",
        ran.all()
    );
}
