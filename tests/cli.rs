//! End-to-end tests of the command line as one whole (issue 28): the global options every
//! command takes (`-C/--project`, `--json`, `-q`, `-v`, `--strict/--no-strict`, `--color`),
//! one JSON shape per result, completion that knows the project, man pages, the same naming
//! forms everywhere, and the smaller misses (indentation hints, carets, resume hints, `$VAR`).

mod common;
use common::{conforms, refusal, wait_for, Test, SAY};
use serde_json::{json, Value};

/// A graph calling `t/say` once; its input `n` is an integer.
const GRAPH: &str = "kind: graph\ndescription: says hi\nparameters:\n  type: object\n  properties:\n    n: {type: integer, default: 1}\nstart: say\nnodes:\n  say:\n    kind: action\n    tool: t/say\n    next: done\n  done:\n    kind: return\n    output: {said: true}\n";

/// A project with `t/say`, the graph `graphs/g` and a directive.
fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/say", SAY)
        .tool("graphs/g", GRAPH)
        .file(
            "directives/d.md",
            "---\nname: d\nactions:\n  - {id: a, tool: t/say}\n---\n",
        )
}

/// The same project under `sub/` of an otherwise empty one.
fn nested() -> Test {
    let runtime = std::fs::read_to_string(common::repo().join("tools/runtimes/subprocess.yaml"));
    Test::new()
        .file("sub/tools/runtimes/subprocess.yaml", runtime.unwrap())
        .file("sub/tools/t/say.yaml", SAY)
        .file("sub/tools/graphs/g.yaml", GRAPH)
}

#[test]
fn the_project_option_stands_before_or_after_every_command() {
    let p = nested();
    let listing = p.then(&["-C", "sub", "tools"]).status(0).run().stdout;
    assert!(
        listing.ends_with("t/say                prints its text\n"),
        "{listing}"
    );
    for args in [&["tools", "-C", "sub"][..], &["tools", "--project", "sub"]] {
        p.then(args).stdout(&listing).status(0).run();
    }
    // Without it, the current directory's project (which has no tools).
    p.then(&["tools"]).stdout("").status(0).run();
    // `check` takes -C as every command does (its positional DIR stays).
    for args in [
        &["check", "-C", "sub"][..],
        &["-C", "sub", "check"],
        &["check", "sub"],
    ] {
        p.then(args)
            .stdout("checked 3 files: 0 errors, 0 warnings\n")
            .status(0)
            .run();
    }
    // `runs show` and `runs prune` can be used from outside the project.
    p.then(&["run", "graphs/g", "-C", "sub", "--run-id", "r1", "-q"])
        .stdout("{\n  \"said\": true\n}\n")
        .status(0)
        .run();
    let shown = p.then(&["runs", "show", "r1", "-C", "sub"]).status(0).run();
    assert!(shown.stdout.starts_with("run r1\n"), "{}", shown.all());
    p.then(&["-C", "sub", "runs", "prune", "--dry-run"])
        .stdout("would remove r1 (graphs/g, completed)\n")
        .status(0)
        .run();
}

#[test]
fn no_strict_undoes_strict_from_strata_yaml_and_the_environment() {
    let p = Test::new()
        .file("strata.yaml", "strict: true\n")
        .file("x.yaml", "a: \"${STRATA_TEST_NOPE}\"\n");
    let strict = p.then(&["render", "x.yaml"]).status(2).run();
    assert!(
        strict.stderr.contains("STRATA_TEST_NOPE"),
        "{}",
        strict.all()
    );
    for args in [
        &["render", "x.yaml", "--no-strict"][..],
        &["--no-strict", "render", "x.yaml"],
        &["render", "x.yaml", "--strict", "--no-strict"],
    ] {
        p.then(args)
            .env("STRATA_STRICT", "1")
            .stdout("{\n  \"a\": \"\"\n}\n")
            .status(0)
            .run();
    }
    // The last of --strict and --no-strict wins.
    p.then(&["render", "x.yaml", "--no-strict", "--strict"])
        .status(2)
        .run();
}

#[test]
fn quiet_and_verbose_are_global_and_exclusive() {
    let p = project();
    let ran = p.then(&["-v", "tools"]).status(0).run();
    let root = std::fs::canonicalize(p.path()).unwrap();
    let said = format!("strata: project {} (no strata.yaml)\n", root.display());
    let plain = format!("strata: project {} (no strata.yaml)\n", p.path().display());
    assert!(ran.stderr == said || ran.stderr == plain, "{}", ran.all());
    p.then(&["run", "directives/d.md", "-q"])
        .stderr("")
        .status(0)
        .run();
    let both = p.then(&["tools", "-q", "-v"]).status(2).run();
    assert!(
        both.stderr
            .starts_with("error: the argument '--quiet' cannot be used with '--verbose"),
        "{}",
        both.stderr
    );
}

#[test]
fn every_command_that_reports_takes_json() {
    let p = project()
        .args(&["run", "graphs/g", "--run-id", "r1", "-q"])
        .status(0)
        .run();
    let tools = p.then(&["tools", "--json"]).status(0).run().json();
    assert_eq!(tools["ok"], true);
    assert!(tools["tools"]
        .as_array()
        .unwrap()
        .contains(&json!({"id": "graphs/g", "graph": true, "description": "says hi"})));
    let explained = p
        .then(&["explain", "t/say", "--json", "-p", "text=yo"])
        .status(0)
        .run()
        .json();
    assert_eq!(explained["kind"], "tool");
    assert_eq!(explained["name"], "t/say");
    let args1 = explained["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "config.args[1]")
        .expect("config.args[1]")
        .clone();
    assert_eq!(
        args1["stages"].as_array().unwrap().last().unwrap()["segments"],
        json!([{"origin": "data", "value": "yo"}])
    );
    let pruned = p
        .then(&["runs", "prune", "--dry-run", "--json"])
        .status(0)
        .run()
        .json();
    assert_eq!(
        pruned,
        json!({"ok": true, "dry_run": true, "removed": [{"id": "r1", "target": "graphs/g", "status": "completed"}]})
    );
    let drawn = p.then(&["graph", "g", "--json"]).status(0).run().json();
    assert_eq!(drawn["ok"], true);
    assert_eq!(drawn["format"], "mermaid");
    assert!(drawn["drawing"].as_str().unwrap().starts_with("flowchart"));
    // `--format json` stays, as `--json`.
    let a = p.then(&["check", "--json"]).status(0).run().stdout;
    let b = p
        .then(&["check", "--format", "json"])
        .status(0)
        .run()
        .stdout;
    assert_eq!(a, b);
    // Errors keep the one shape, on stdout.
    let missing = p
        .then(&["explain", "t/nope", "--json"])
        .status(2)
        .run()
        .json();
    assert_eq!(missing["ok"], false);
    assert_eq!(missing["error"]["kind"], "unknown_tool");
    let walked = p
        .then(&["walk", "graphs/g", "--node", "nope", "--json"])
        .status(2)
        .run()
        .json();
    assert_eq!(walked["ok"], false);
    assert_eq!(
        walked["error"]["message"],
        "graph `graphs/g` has no node `nope`"
    );
    let made = p.then(&["init", "demo", "--json"]).status(0).run().json();
    assert_eq!(made["ok"], true);
    assert_eq!(made["project"], "demo");
    assert!(made["files"]
        .as_array()
        .unwrap()
        .contains(&json!("strata.yaml")));
}

#[test]
fn graph_events_go_to_stderr_and_the_result_to_stdout() {
    let ran = project()
        .args(&["run", "graphs/g", "--run-id", "r1", "--json"])
        .status(0)
        .run();
    assert_eq!(
        ran.json(),
        json!({"run_id": "r1", "status": "completed", "steps": 2, "result": {"said": true}, "failure": null})
    );
    let events: Vec<Value> = ran
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event a line"))
        .collect();
    assert_eq!(events.first().unwrap()["event"], "started");
    assert_eq!(events.last().unwrap()["event"], "finished");
}

#[test]
fn export_argo_takes_graphs_by_id_and_their_inputs_as_run_does() {
    let p = project();
    let by_file = p
        .then(&[
            "export",
            "argo",
            "tools/graphs/g.yaml",
            "--image",
            "s:1",
            "--name",
            "g",
            "--input",
            "n=2",
        ])
        .status(0)
        .run();
    for name in ["graphs/g", "g"] {
        p.then(&[
            "export", "argo", name, "--image", "s:1", "--name", "g", "--input", "n=2",
        ])
        .stdout(&by_file.stdout)
        .status(0)
        .run();
    }
    p.then(&[
        "export", "argo", "g", "--image", "s:1", "--name", "g", "--value", "n=2",
    ])
    .stdout(&by_file.stdout)
    .status(0)
    .run();
    p.then(&["export", "argo", "g", "--image", "s:1", "--input", "n=x"])
        .stderr("error[inputs]: input `n` must be an integer, got `x`\n   = help: the inputs are: n (integer, default 1)\n")
        .status(2)
        .run();
    let json = p
        .then(&[
            "export", "argo", "g", "--image", "s:1", "--name", "g", "--json",
        ])
        .status(0)
        .run()
        .json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["manifest"]["kind"], "Workflow");
    // A plan by its name under plans/.
    let p = p.file(
        "plans/one.yaml",
        "steps:\n  - {id: a, tool: t/say, arguments: {text: x}}\n",
    );
    let whole = p
        .then(&[
            "export",
            "argo",
            "plans/one.yaml",
            "--image",
            "s:1",
            "--name",
            "one",
        ])
        .status(0)
        .run();
    for name in ["plans/one", "one"] {
        p.then(&["export", "argo", name, "--image", "s:1", "--name", "one"])
            .stdout(&whole.stdout)
            .status(0)
            .run();
    }
    p.then(&["plan", "show", "one"]).status(0).run();
    p.then(&["export", "argo", "one", "--image", "s:1", "--input", "a=1"])
        .stderr("error[request]: --input does not apply to plans\n   = help: --input and --params-json set a graph's inputs; a plan's user values are --value NAME=TEXT and --value-json NAME=JSON\n")
        .status(2)
        .run();
}

#[test]
fn a_graph_input_of_the_wrong_type_names_input_not_p() {
    project()
        .args(&["run", "graphs/g", "--input", "n=many"])
        .stderr("error[inputs]: input `n` must be an integer, got `many`\n   = help: the inputs are: n (integer, default 1)\n")
        .status(2)
        .run();
}

/// The candidates `COMPLETE=fish` gives for the command line `words` (the last one being
/// completed), values only, asked at the project's root.
fn complete(p: &Test, words: &[&str]) -> Vec<String> {
    common::complete(p, ".", words)
}

#[test]
fn completion_knows_the_projects_tools_graphs_plans_prompts_and_runs() {
    let p = project()
        .file(
            "plans/one.yaml",
            "steps:\n  - {id: a, tool: t/say, arguments: {text: x}}\n",
        )
        .file("prompts/main/Hello.j2", "Hello\n")
        .args(&["run", "graphs/g", "--run-id", "r1", "-q"])
        .status(0)
        .run();
    assert_eq!(
        complete(&p.then(&[]), &["run", ""])[..3],
        ["graphs/g", "t/say", "directives/d.md"]
    );
    assert_eq!(complete(&p.then(&[]), &["run", "t/"]), ["t/say"]);
    assert_eq!(complete(&p.then(&[]), &["graph", ""]), ["graphs/g"]);
    assert_eq!(
        complete(&p.then(&[]), &["plan", "run", "pl"]),
        ["plans/one.yaml"]
    );
    assert_eq!(complete(&p.then(&[]), &["runs", "show", ""]), ["r1"]);
    assert_eq!(
        complete(&p.then(&[]), &["run", "graphs/g", "--resume", ""]),
        ["r1"]
    );
    assert_eq!(
        complete(&p.then(&[]), &["prompt", "render", "He"]),
        ["Hello"]
    );
    assert_eq!(
        complete(&p.then(&[]), &["export", "argo", ""]),
        ["plans/one.yaml", "graphs/g"]
    );
    // The script a shell sources asks strata back.
    let bash = p.then(&["completions", "bash"]).stderr("").status(0).run();
    assert!(bash.stdout.contains("COMPLETE=\"bash\""), "{}", bash.stdout);
}

#[test]
fn man_pages_for_every_command_print_and_install() {
    let p = Test::new();
    let page = p.then(&["man", "plan", "run"]).status(0).run();
    assert!(
        page.stdout.contains(".TH strata-plan-run 1"),
        "{}",
        page.stdout
    );
    assert!(page.stdout.contains("\\-\\-resume"), "{}", page.stdout);
    p.then(&["man", "plan", "rn"])
        .stderr(
            "error[request]: there is no command `plan rn`\n   = help: did you mean `plan run`?\n",
        )
        .status(2)
        .run();
    let installed = p.then(&["man", "--install", "man/man1"]).status(0).run();
    assert!(
        installed.stdout.starts_with("installed "),
        "{}",
        installed.stdout
    );
    for page in [
        "strata.1",
        "strata-run.1",
        "strata-plan-run.1",
        "strata-runs-prune.1",
    ] {
        assert!(p.path().join("man/man1").join(page).is_file(), "{page}");
    }
}

#[test]
fn config_says_when_there_is_no_strata_yaml() {
    let ran = Test::new().args(&["config"]).status(0).run();
    assert!(
        ran.stdout
            .lines()
            .next()
            .unwrap()
            .ends_with(" (no strata.yaml: defaults and STRATA_* variables)"),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_misspelt_setting_is_pointed_at_its_key() {
    Test::new()
        .file("strata.yaml", "jobs: 2\njbos: 4\n")
        .args(&["config"])
        .stderr("error[settings]: unknown setting `jbos`\n  --> strata.yaml:2:1\n  |\n2 | jbos: 4\n  | ^\n   = field: jbos\n   = help: did you mean `jobs`?\n")
        .status(2)
        .run();
}

#[test]
fn a_key_dedented_by_one_space_gets_a_hint() {
    let ran = Test::new()
        .copy("tools/runtimes")
        .tool(
            "t",
            "description: x\nexecutor: runtimes/subprocess\nconfig:\n  command: echo\n args: [x]\n",
        )
        .args(&["check"])
        .status(1)
        .run();
    assert!(
        ran.stdout.contains("   = help: `args:` is indented 1 space, between `command:` above it (2) and `config:` (0): indent it 2 spaces to belong with `command:`, or 0 spaces to stand beside `config:`\n"),
        "{}",
        ran.stdout
    );
}

#[test]
fn runs_show_lists_a_plans_steps_in_plan_order() {
    let p = Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/nap",
            "description: sleeps\nexecutor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    s: {type: string}\nconfig:\n  command: sleep\n  args: [\"{s}\"]\n",
        )
        .file(
            "plans/p.yaml",
            "steps:\n  - {id: slow, tool: t/nap, arguments: {s: \"0.6\"}}\n  - {id: fast, tool: t/nap, arguments: {s: \"0\"}}\n",
        )
        .args(&["plan", "run", "plans/p.yaml", "--run-id", "p1", "-q"])
        .status(0)
        .run();
    let shown = p.then(&["runs", "show", "p1"]).status(0).run();
    let steps = shown.stdout.split("steps:\n").nth(1).unwrap_or("");
    assert_eq!(
        steps, "  [completed] slow\n  [completed] fast\n",
        "{}",
        shown.stdout
    );
}

#[test]
fn an_interrupted_graph_run_says_how_to_resume_it() {
    let p = Test::new().copy("tools/runtimes").tool(
        "t/wait",
        "description: waits\nexecutor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"touch started; sleep 30\"]\n",
    );
    let p = p.file(
        "tools/graphs/w.yaml",
        "kind: graph\nstart: a\nnodes:\n  a:\n    kind: action\n    tool: t/wait\n",
    );
    let running = p
        .then(&["run", "graphs/w", "--run-id", "w1"])
        .killed_by(libc::SIGINT)
        .start();
    wait_for(&p.path().join("started"));
    running.signal(libc::SIGINT);
    let ran = running.finish();
    assert!(
        ran.stderr.ends_with(
            "strata: run w1 interrupted: resume it with `strata run graphs/w --resume w1`\n"
        ),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_bare_dollar_variable_is_warned_where_no_shell_reads_it() {
    let p = Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/env",
            "description: x\nexecutor: runtimes/subprocess\nconfig:\n  command: printf\n  args: [\"%s\", \"$HOME/x\"]\n",
        )
        .tool(
            "t/sh",
            "description: x\nexecutor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"echo $HOME\"]\n",
        );
    p.then(&["check"])
        .stdout("warning[L008]: `$HOME` is literal text: strata reads an environment variable as `${HOME}`\n  --> tools/t/env.yaml:5:17\n  |\n5 |   args: [\"%s\", \"$HOME/x\"]\n  |                 ^^^^^\n   = field: config.args[1]\n   = help: write `${HOME}` (or `${HOME:-default}`); for a program that expands `$HOME` itself, `strata check --allow L008`\n\nchecked 6 files: 0 errors, 1 warning\n")
        .status(0)
        .run();
    p.then(&["check", "--deny-warnings", "--allow", "L008"])
        .stdout("checked 6 files: 0 errors, 0 warnings\n")
        .status(0)
        .run();
}

#[test]
fn the_gate_reports_every_error_of_a_graph_file() {
    let ran = project()
        .file(
            "tools/graphs/bad.yaml",
            "kind: graph\nstart: a\nnodes:\n  a:\n    kind: action\n    tool: t/say\n    next: b\n    bogus: 1\n  b:\n    kind: gate\n    next: zz\n",
        )
        .args(&["run", "graphs/bad"])
        .status(2)
        .run();
    assert_eq!(
        ran.stderr,
        "error[G001]: unknown key `bogus` in an action node\n  --> tools/graphs/bad.yaml:8:5\n  |\n8 |     bogus: 1\n  |     ^\n   = field: nodes.a.bogus\n   = help: the keys of an action node are `kind`, `description`, `tool`, `params`, `allow_failure`, `assign`, `next`\n\n\
error[G001]: unknown target node `zz`\n  --> tools/graphs/bad.yaml:11:11\n   |\n11 |     next: zz\n   |           ^\n   = field: nodes.b.next\n   = help: the nodes are `a`, `b`\n"
            .to_string()
            + &refusal("graphs/bad", 2)
    );
    let json = ran
        .then(&["run", "graphs/bad", "--json"])
        .status(2)
        .run()
        .json();
    assert_eq!(json["error"]["kind"], "check");
    assert_eq!(json["error"]["diagnostics"].as_array().unwrap().len(), 2);
    let checked = ran.then(&["check"]).status(1).run();
    assert_eq!(
        checked.stdout.matches("error[G001]").count(),
        2,
        "{}",
        checked.stdout
    );
}

#[test]
fn render_strict_reports_every_missing_value_and_the_errors_shown_are_bounded() {
    let p = Test::new().file(
        "r.yaml",
        "a: \"${STRATA_TEST_NOPE1}\"\nb: \"${state.x}\"\nc: \"${STRATA_TEST_NOPE2}\"\n",
    );
    p.then(&["render", "r.yaml", "--strict"])
        .stdout("")
        .stderr("error[env]: environment variable `STRATA_TEST_NOPE1` is not set\n  --> r.yaml:1:5\n  |\n1 | a: \"${STRATA_TEST_NOPE1}\"\n  |     ^^^^^^^^^^^^^^^^^^^^\n   = field: a (bytes 0..20)\n   = help: strict mode turns missing values into errors\n\
error[context]: context path `state.x` not found\n  --> r.yaml:2:5\n  |\n2 | b: \"${state.x}\"\n  |     ^^^^^^^^^^\n   = field: b (bytes 0..10)\n   = help: strict mode turns missing values into errors\n\
error[env]: environment variable `STRATA_TEST_NOPE2` is not set\n  --> r.yaml:3:5\n  |\n3 | c: \"${STRATA_TEST_NOPE2}\"\n  |     ^^^^^^^^^^^^^^^^^^^^\n   = field: c (bytes 0..20)\n   = help: strict mode turns missing values into errors\n")
        .status(2)
        .run();
    let json = p
        .then(&["render", "r.yaml", "--strict", "--json"])
        .status(2)
        .run()
        .json();
    assert_eq!(json["error"]["errors"].as_array().unwrap().len(), 3);
    // 25 errors: the first 20 shown, then how many there are; JSON has them all.
    let many: String = (0..25)
        .map(|i| format!("k{i}: \"${{state.m{i}}}\"\n"))
        .collect();
    let p = p.file("many.yaml", many);
    let ran = p.then(&["render", "many.yaml", "--strict"]).status(2).run();
    assert_eq!(ran.stderr.matches("error[context]").count(), 20);
    assert!(
        ran.stderr.ends_with(
            "error[strata]: 25 errors in all; the first 20 are shown (fix them, then run again)\n"
        ),
        "{}",
        ran.stderr
    );
    let json = p
        .then(&["render", "many.yaml", "--strict", "--json"])
        .status(2)
        .run()
        .json();
    assert_eq!(json["error"]["errors"].as_array().unwrap().len(), 25);
}

#[test]
fn the_plan_loader_reports_every_error_of_the_file() {
    let ran = project()
        .file(
            "plans/bad.yaml",
            "steps:\n  - {id: a, tool: t/say, arguments: {}, bogus: 1}\n  - {id: b, tool: t/say, argumnts: {}}\n",
        )
        .args(&["plan", "show", "bad", "--json"])
        .status(2)
        .run();
    let errors = ran.json()["error"]["errors"].as_array().unwrap().clone();
    let lines: Vec<(u64, String)> = errors
        .iter()
        .map(|e| {
            (
                e["line"].as_u64().unwrap(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (2, "unknown key `bogus` in step 1".to_string()),
            (3, "unknown key `argumnts` in step 2".to_string()),
            (
                3,
                "step `b` has neither `arguments` nor `parameters`".to_string()
            ),
        ]
    );
}

#[test]
fn every_json_result_has_its_documented_shape() {
    let p = project()
        .args(&["run", "graphs/g", "--run-id", "r1", "--json"])
        .status(0)
        .run();
    conforms(&p.json(), "graph_run");
    let cases: [(&[&str], &str); 9] = [
        (&["tools", "--json"], "tools"),
        (&["explain", "t/say", "--json"], "explain"),
        (&["explain", "directives/d.md", "--json"], "explain"),
        (&["check", "--json"], "check"),
        (&["runs", "--json"], "runs"),
        (&["runs", "prune", "--dry-run", "--json"], "runs_prune"),
        (&["graph", "g", "--json"], "drawing"),
        (&["config", "--json"], "config"),
        (
            &["export", "argo", "g", "--image", "s:1", "--json"],
            "export",
        ),
    ];
    for (args, def) in cases {
        conforms(&p.then(args).status(0).run().json(), def);
    }
    conforms(
        &p.then(&["runs", "show", "r1", "--json"])
            .status(0)
            .run()
            .json(),
        "runs_show",
    );
    conforms(
        &p.then(&["init", "new", "--json"]).status(0).run().json(),
        "init",
    );
    conforms(
        &p.then(&["man", "--install", "m", "--json"])
            .status(0)
            .run()
            .json(),
        "man",
    );
    for args in [
        &["explain", "t/nope", "--json"][..],
        &["tools", "-C", "nowhere", "--json"],
        &["run", "graphs/g", "--input", "n=x", "--json"],
        &["man", "nope", "--json"],
    ] {
        conforms(&p.then(args).status(2).run().json(), "failure");
    }
}

#[test]
fn an_interrupted_plan_run_says_how_to_resume_it() {
    let p = Test::new()
        .copy("tools/runtimes")
        .tool(
            "t/wait",
            "description: waits\nexecutor: runtimes/subprocess\nconfig:\n  command: sh\n  args: [\"-c\", \"touch started; sleep 30\"]\n",
        )
        .file("plans/w.yaml", "steps:\n  - {id: a, tool: t/wait, arguments: {}}\n");
    let running = p
        .then(&["plan", "run", "w", "--run-id", "p1"])
        .killed_by(libc::SIGINT)
        .start();
    wait_for(&p.path().join("started"));
    running.signal(libc::SIGINT);
    let ran = running.finish();
    assert!(
        ran.stderr.ends_with(
            "strata: run p1 interrupted: resume it with `strata plan run --resume p1`\n"
        ),
        "{}",
        ran.stderr
    );
}

#[test]
fn commands_that_need_no_project_read_the_settings_of_the_one_named() {
    let p = Test::new()
        .file("sub/tools/.keep", "")
        .file("sub/strata.yaml", "strict: true\n")
        .file("x.yaml", "a: \"${STRATA_TEST_NOPE}\"\n");
    p.then(&["render", "x.yaml"])
        .stdout("{\n  \"a\": \"\"\n}\n")
        .status(0)
        .run();
    let strict = p
        .then(&["render", "../x.yaml", "-C", "sub"])
        .status(2)
        .run();
    assert!(strict.stderr.starts_with("error[env]"), "{}", strict.stderr);
}

#[test]
fn plan_events_go_to_stderr_as_json_lines_with_json() {
    let ran = project()
        .file(
            "plans/p.yaml",
            "steps:\n  - {id: a, tool: t/say, arguments: {text: x}}\n",
        )
        .args(&["plan", "run", "p", "--json"])
        .status(0)
        .run();
    let events: Vec<Value> = ran
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event a line"))
        .collect();
    assert_eq!(
        events[0],
        json!({"event": "step_started", "id": "a", "tool": "t/say"})
    );
    assert_eq!(events[1]["event"], "step_finished");
    assert_eq!(events[1]["status"], "completed");
    assert_eq!(events.len(), 2);
    assert_eq!(ran.json()["status"], "completed", "{}", ran.stdout);
}
