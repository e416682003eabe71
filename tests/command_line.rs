//! End-to-end tests of the command line's conventions: `-C DIR` as git's (the command runs
//! as if started in DIR), global options in every position, errors that name what went
//! wrong, machine output, help, and what a first run meets.

mod common;
use common::{complete, Test, SAY, SAY_GRAPH};

/// A plan of two steps calling `t/say`.
const PLAN: &str = "steps:\n  - id: a\n    tool: t/say\n    arguments: {}\n  - id: b\n    tool: t/say\n    arguments: {text: \"{{a.status}}\"}\n";

/// What `plan show` prints for [`PLAN`] named `file`.
fn shown_plan(file: &str) -> String {
    format!("{file}: 2 steps in 2 levels\nlevel 0\n  a (t/say)\nlevel 1\n  b (t/say) after a\n")
}

/// A directive calling `t/say` once.
const DIRECTIVE: &str = "---\nname: d\nactions:\n  - {id: a, tool: t/say}\n---\n";

/// The project of `sub/`: `t/say`, `graphs/g`, a plan and a directive, inside a folder that
/// is no project.
fn nested() -> Test {
    let runtime = std::fs::read_to_string(common::repo().join("tools/runtimes/subprocess.yaml"));
    Test::new()
        .file("sub/tools/runtimes/subprocess.yaml", runtime.unwrap())
        .file("sub/tools/t/say.yaml", SAY)
        .file("sub/tools/graphs/g.yaml", SAY_GRAPH)
        .file("sub/plans/p.yaml", PLAN)
        .file("sub/directives/d.md", DIRECTIVE)
        .file("other/.keep", "")
}

/// Runs `t` and checks that the directive [`DIRECTIVE`] ran.
fn directive_runs(t: Test) {
    let ran = t.status(0).run();
    assert!(
        ran.stdout.starts_with("directive d: completed\n"),
        "{}",
        ran.all()
    );
}

#[test]
fn dash_c_runs_the_command_as_if_started_in_its_directory() {
    let p = nested();
    for name in ["p", "plans/p", "plans/p.yaml"] {
        p.then(&["-C", "sub", "plan", "show", name])
            .stdout(&shown_plan(name))
            .status(0)
            .run();
    }
    directive_runs(p.then(&["-C", "sub", "run", "directives/d.md"]));
    let exported = p
        .then(&["-C", "sub", "export", "argo", "plans/p", "--image", "i"])
        .status(0)
        .run();
    assert!(
        exported
            .stdout
            .starts_with("# Exported by `strata export argo` from plans/p.yaml:"),
        "{}",
        exported.all()
    );
    // A relative path given to an option is read from there too.
    p.then(&[
        "-C",
        "sub",
        "run",
        "t/say",
        "--params-json",
        "{\"text\": \"x\"}",
    ])
    .stdout("x\n")
    .status(0)
    .run();
}

#[test]
fn dash_c_applies_to_init_and_names_a_missing_directory() {
    let p = nested();
    p.then(&["init", "fresh", "-C", "other", "-q"])
        .status(0)
        .run();
    assert!(p.path().join("other/fresh/tools").is_dir());
    assert!(!p.path().join("fresh").exists());
    p.then(&["-C", "nope", "tools"])
        .stderr("error[request]: cannot change to `nope`: the directory does not exist\n   = help: -C DIR runs strata as if started in DIR, as git -C does\n")
        .status(2)
        .run();
    p.then(&["-C", "nope", "tools", "--json"])
        .stdout("{\n  \"ok\": false,\n  \"error\": {\n    \"kind\": \"request\",\n    \"message\": \"cannot change to `nope`: the directory does not exist\",\n    \"hint\": \"-C DIR runs strata as if started in DIR, as git -C does\"\n  }\n}\n")
        .status(2)
        .run();
}

#[test]
fn paths_and_names_resolve_alike_from_every_folder_of_the_project() {
    let p = nested();
    for cwd in ["sub/tools", "sub/plans", "sub/tools/t"] {
        let up = if cwd == "sub/tools/t" { "../.." } else { ".." };
        directive_runs(p.then(&["run", &format!("{up}/directives/d.md")]).cwd(cwd));
        for name in ["p", "plans/p"] {
            p.then(&["plan", "show", name])
                .cwd(cwd)
                .stdout(&shown_plan(name))
                .status(0)
                .run();
        }
        p.then(&["run", "graphs/g", "-q"])
            .cwd(cwd)
            .stdout("{\n  \"said\": true\n}\n")
            .status(0)
            .run();
    }
}

#[test]
fn completion_honours_dash_c_on_the_line() {
    let p = nested();
    let runnable = ["graphs/g", "t/say", "directives/d.md"];
    assert_eq!(complete(&p, ".", &["-C", "sub", "run", ""]), runnable);
    assert_eq!(complete(&p, ".", &["run", "--project=sub", ""]), runnable);
    assert_eq!(
        complete(&p, ".", &["-Csub", "plan", "show", ""]),
        ["plans/p.yaml"]
    );
    assert!(complete(&p, ".", &["run", ""]).is_empty());
}

#[test]
fn global_options_stand_between_a_command_and_its_subcommand() {
    let p = Test::say();
    p.then(&["run", "graphs/g", "--run-id", "r1", "-q"])
        .stdout("{\n  \"said\": true\n}\n")
        .status(0)
        .run();
    for args in [
        &["runs", "-q", "show", "r1"][..],
        &["runs", "-C", ".", "show", "r1"],
        &["runs", "-v", "show", "r1"],
    ] {
        let shown = p.then(args).status(0).run();
        assert!(shown.stdout.starts_with("run r1\n"), "{}", shown.all());
    }
    let json = p.then(&["runs", "--json", "show", "r1"]).status(0).run();
    assert_eq!(json.json()["run_id"], "r1", "{}", json.all());
    p.then(&["runs", "-v", "prune", "--dry-run"])
        .stdout("would remove r1 (graphs/g, completed)\n")
        .status(0)
        .run();
}

#[test]
fn a_missing_variable_under_strict_exits_2_from_render_and_run_alike() {
    let p = Test::say()
        .file("x.yaml", "a: \"${STRATA_TEST_NOPE}\"\n")
        .tool(
            "t/m",
            "executor: runtimes/subprocess\nconfig:\n  command: echo\n  args: [\"${STRATA_TEST_NOPE}\"]\n",
        );
    let why = "error[env]: environment variable `STRATA_TEST_NOPE` is not set\n";
    let render = p.then(&["render", "x.yaml", "--strict"]).status(2).run();
    assert!(render.stderr.starts_with(why), "{}", render.all());
    let run = p.then(&["run", "t/m", "--strict"]).status(2).run();
    assert!(run.stderr.starts_with(why), "{}", run.all());
}

#[test]
fn a_target_that_does_not_resolve_gets_a_did_you_mean_whatever_its_options() {
    let p = Test::say().file("directives/d.md", DIRECTIVE);
    for args in [
        &["run", "graphs/h"][..],
        &["run", "graphs/h", "--input", "n=1"],
    ] {
        p.then(args)
            .stderr(
                "error[request]: unknown tool `graphs/h`\n   = help: did you mean `graphs/g`?\n",
            )
            .status(2)
            .run();
    }
    for args in [
        &["run", "directives/d"][..],
        &["run", "directives/d", "--input", "n=1"],
    ] {
        p.then(args)
            .stderr("error[request]: unknown tool `directives/d`\n   = help: did you mean `directives/d.md`? A directive is named by its file\n")
            .status(2)
            .run();
    }
    // A tool that exists still refuses the options of another kind of target.
    p.then(&["run", "t/say", "--input", "n=1"])
        .stderr("error[request]: --input does not apply to tools\n   = help: --input sets the inputs of a directive or a graph; a tool takes -p K=V\n")
        .status(2)
        .run();
}

#[test]
fn the_prompt_fallback_fails_under_strict_as_every_warning_does() {
    let p = Test::new()
        .file("prompts/default.md", "Default {{ name }}\n")
        .file("prompts/greet.md", "Hello {{ name }}\n");
    let why = "key `gret` fell back to `default`: no template anywhere in prompts/ is named `gret` (did you mean `greet`?)";
    p.then(&["prompt", "render", "gret", "--feed", "name=A"])
        .stdout("Default A\n")
        .stderr(&format!("warning[prompt]: {why}\n"))
        .status(0)
        .run();
    p.then(&["prompt", "render", "gret", "--feed", "name=A", "--strict"])
        .stdout("")
        .stderr(&format!("error[prompt]: {why}\n   = help: under --strict a fallback is an error: name a template that exists\n"))
        .status(2)
        .run();
}

#[test]
fn quiet_keeps_warnings_as_cargo_does_and_vv_is_refused() {
    let p = Test::new()
        .file("prompts/default.md", "Default {{ name }}\n")
        .file("x.yaml", "a: \"${STRATA_TEST_NOPE}\"\n");
    p.then(&["prompt", "render", "gret", "--feed", "name=A", "-q"])
        .stdout("Default A\n")
        .stderr("warning[prompt]: key `gret` fell back to `default`: no template anywhere in prompts/ is named `gret`\n")
        .status(0)
        .run();
    let render = p.then(&["render", "x.yaml", "-q"]).status(0).run();
    assert!(
        render
            .stderr
            .starts_with("warning[env]: environment variable `STRATA_TEST_NOPE` is not set"),
        "{}",
        render.all()
    );
    p.then(&["-vv", "tools"])
        .stdout("")
        .stderr("error: the argument '--verbose' cannot be used multiple times\n\nUsage: strata [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.\n")
        .status(2)
        .run();
}

#[test]
fn usage_errors_are_json_under_json_and_coloured_as_color_says() {
    let p = Test::new();
    p.then(&["--json", "runs", "show"])
        .stdout("{\n  \"ok\": false,\n  \"error\": {\n    \"kind\": \"request\",\n    \"message\": \"the following required arguments were not provided: <RUN_ID>\",\n    \"hint\": \"Usage: strata runs show <RUN_ID>; For more information, try '--help'.\"\n  }\n}\n")
        .stderr("")
        .status(2)
        .run();
    p.then(&["tols", "--json"])
        .stdout("{\n  \"ok\": false,\n  \"error\": {\n    \"kind\": \"request\",\n    \"message\": \"unrecognized subcommand 'tols'\",\n    \"hint\": \"tip: a similar subcommand exists: 'tools'; Usage: strata [OPTIONS] <COMMAND>; For more information, try '--help'.\"\n  }\n}\n")
        .stderr("")
        .status(2)
        .run();
    // Colour forced on for `auto` (as a terminal would have it): `--color never` wins,
    // for the help and for a usage error.
    let forced = |args: &[&str]| p.then(args).env("CLICOLOR_FORCE", "1");
    let help = forced(&["--color", "never", "--help"]).status(0).run();
    assert!(!help.stdout.contains('\u{1b}'), "{}", help.stdout);
    assert!(forced(&["--help"])
        .status(0)
        .run()
        .stdout
        .contains('\u{1b}'));
    forced(&["--color=never", "tols"])
        .stderr("error: unrecognized subcommand 'tols'\n\n  tip: a similar subcommand exists: 'tools'\n\nUsage: strata [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.\n")
        .status(2)
        .run();
    let always = p.then(&["tols", "--color", "always"]).status(2).run();
    assert!(
        always.stderr.starts_with("\u{1b}[1m\u{1b}[31merror:"),
        "{:?}",
        always.stderr
    );
}

/// Every command path strata has (`run`, `plan run`), from its installed man pages.
fn command_paths(p: &Test) -> Vec<String> {
    p.then(&["man", "--install", "man1", "-q"]).status(0).run();
    let mut paths: Vec<String> = std::fs::read_dir(p.path().join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".1").map(str::to_string))
        .filter_map(|n| n.strip_prefix("strata-").map(|c| c.replace('-', " ")))
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_command_has_examples_in_its_help_and_its_man_page() {
    let p = Test::new();
    let paths = command_paths(&p);
    assert!(paths.len() >= 29, "{paths:?}");
    for path in &paths {
        let mut args: Vec<&str> = path.split(' ').collect();
        args.push("--help");
        let help = p.then(&args).status(0).run().stdout;
        assert!(help.contains("\nExamples:\n  # "), "{path}: {help}");
        assert!(
            help.contains("\nGlobal options:\n  -C, --project <DIR>"),
            "{path}: {help}"
        );
        let widest = help.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= 100, "{path}: a line of {widest} characters");
        let page = p.read(&format!("man1/strata-{}.1", path.replace(' ', "-")));
        for section in [
            ".SH EXAMPLES\n",
            ".SH \"EXIT STATUS\"\n",
            ".SH ENVIRONMENT\n",
        ] {
            assert!(page.contains(section), "{path}: no {section}");
        }
        assert!(!page.contains(".SH EXTRA"), "{path}");
    }
    let run = p.then(&["run", "--help"]).status(0).run().stdout;
    assert!(
        run.ends_with("Examples:\n  # Run a tool\n  $ strata run hello -p name=Ann\n  # What it would run, without running it\n  $ strata run hello -p name=Ann --dry-run\n  # Run a directive\n  $ strata run directives/hello.md --input name=Ann\n  # Run a graph; the result alone on stdout\n  $ strata run graphs/hello --input name=Ann --json\n"),
        "{run}"
    );
}

#[test]
fn help_topics_say_the_exit_codes_the_environment_and_the_settings() {
    let p = Test::new();
    let codes = p.then(&["help", "exit-codes"]).stderr("").status(0).run();
    assert!(
        codes
            .stdout
            .starts_with("0      done\n1      the work ran and failed"),
        "{}",
        codes.stdout
    );
    assert!(
        codes
            .stdout
            .contains("\n3      a plan waits for user values;"),
        "{}",
        codes.stdout
    );
    let env = p.then(&["help", "environment"]).status(0).run().stdout;
    assert!(env.contains("\nNO_COLOR "), "{env}");
    let settings = p.then(&["help", "settings"]).status(0).run().stdout;
    assert!(
        settings.starts_with("strata.yaml, at the project root"),
        "{settings}"
    );
    // The top-level help lists them; `help COMMAND` is `COMMAND --help`.
    let top = p.then(&["--help"]).status(0).run().stdout;
    assert!(top.ends_with("Topics (strata help TOPIC):\n  exit-codes   what each exit code means, for every command\n  environment  the environment variables strata reads\n  settings     the project's strata.yaml, its STRATA_* variables and flags\n"), "{top}");
    let plan_run = p.then(&["plan", "run", "--help"]).status(0).run().stdout;
    p.then(&["help", "plan", "run"])
        .stdout(&plan_run)
        .status(0)
        .run();
    p.then(&["help", "exit-code"])
        .stderr("error[request]: there is no command or topic `exit-code`\n   = help: did you mean `exit-codes`?\n")
        .status(2)
        .run();
}

#[test]
fn render_reads_the_projects_dotenv_as_run_does() {
    let p = Test::new()
        .file(".env", "STRATA_TEST_GREETING=from-dotenv\n")
        .file("sub/x.yaml", "a: \"${STRATA_TEST_GREETING}\"\n");
    p.then(&["render", "sub/x.yaml"])
        .stdout("{\n  \"a\": \"from-dotenv\"\n}\n")
        .stderr("")
        .status(0)
        .run();
    // From a folder of the project too; --env wins over it.
    p.then(&["render", "x.yaml", "--env", "STRATA_TEST_GREETING=line"])
        .cwd("sub")
        .stdout("{\n  \"a\": \"line\"\n}\n")
        .status(0)
        .run();
}

#[test]
fn tools_all_lists_the_directives_and_the_plans_too() {
    let p = nested().file("sub/plans/bad.yaml", "steps: 3\n");
    p.then(&["-C", "sub", "tools", "--all"])
        .stdout("graphs/g             says hi\nruntimes/subprocess  The subprocess primitive - argv only, explicit env, timeout, capped output\nt/say                prints its text\ndirectives/d.md      d\nplans/bad.yaml       (invalid: a plan object needs `steps`: a list of steps)\nplans/p.yaml         a plan of 2 steps\n")
        .status(1)
        .run();
    let json = p
        .then(&["-C", "sub", "tools", "--all", "--json"])
        .status(1)
        .run()
        .json();
    common::conforms(&json, "tools");
    assert_eq!(
        json["directives"],
        serde_json::json!([{"path": "directives/d.md", "description": "d"}])
    );
    assert_eq!(
        json["plans"][1],
        serde_json::json!({"path": "plans/p.yaml", "description": "a plan of 2 steps"})
    );
    // Without --all, the tools alone, as before.
    let tools = p.then(&["-C", "sub", "tools"]).status(0).run().stdout;
    assert!(
        tools.ends_with("t/say                prints its text\n"),
        "{tools}"
    );
}

#[test]
fn completion_offers_the_parameter_and_input_names_of_the_target() {
    let directive = "---\nname: d\ninputs:\n  - {name: who, type: string}\n  - {name: mood, type: string}\nactions:\n  - {id: a, tool: t/say}\n---\n";
    let graph = "kind: graph\nparameters:\n  type: object\n  properties:\n    n: {type: integer}\nstart: done\nnodes:\n  done:\n    kind: return\n    output: {}\n";
    let p = nested()
        .file("sub/directives/d.md", directive)
        .file("sub/tools/graphs/g.yaml", graph);
    assert_eq!(complete(&p, "sub", &["run", "t/say", "-p", ""]), ["text="]);
    assert_eq!(
        complete(&p, "sub", &["run", "-q", "t/say", "--param", "t"]),
        ["text="]
    );
    assert_eq!(
        complete(&p, "sub", &["run", "graphs/g", "--input", ""]),
        ["n="]
    );
    assert_eq!(
        complete(&p, "sub", &["run", "directives/d.md", "--input", ""]),
        ["who=", "mood="]
    );
    assert_eq!(
        complete(
            &p,
            "sub/tools",
            &["run", "../directives/d.md", "--input", "m"]
        ),
        ["mood="]
    );
    assert!(complete(&p, "sub", &["run", "nope", "-p", ""]).is_empty());
}

#[test]
fn a_default_template_file_with_an_error_is_named_in_it() {
    let p = Test::new().file("def.j2", "line one\nHello {{ name \n");
    p.then(&["prompt", "render", "k", "--default-template", "@def.j2", "--feed", "name=x"])
        .stderr("error[prompt]: template `<default template>`: unexpected end of input, expected end of variable block\n  --> def.j2:2:10\n  |\n2 | Hello {{ name \n  |          ^\n   = help: see the Jinja syntax: {{ value }}, {% if %}…{% endif %}, {% for x in xs %}…{% endfor %}\n")
        .status(2)
        .run();
}

#[test]
fn prompt_errors_point_into_folded_blocks_and_past_surrogate_pairs() {
    let help = "   = help: see the Jinja syntax: {{ value }}, {% if %}…{% endif %}, {% for x in xs %}…{% endfor %}\n";
    let p = Test::new().file(
        "prompts/t.json",
        "{\"main\": {\n  \"a\": \"hi \\ud83d\\ude00\",\n  \"b\": \"ok\\nthen {{ name\"\n}}\n",
    );
    p.then(&["prompt", "render", "b", "--feed", "name=x"])
        .stderr(&format!("error[prompt]: template `main/b`: unexpected end of input, expected end of variable block\n  --> prompts/t.json:3:21\n  |\n3 |   \"b\": \"ok\\nthen {{{{ name\"\n  |                     ^\n{help}"))
        .status(2)
        .run();
    let p = Test::new().file(
        "prompts/t.yaml",
        "main:\n  a: >\n    folded line one\n    and {{ name\n",
    );
    p.then(&["prompt", "render", "a", "--feed", "name=x"])
        .stderr(&format!("error[prompt]: template `main/a`: unexpected end of input, expected end of variable block\n  --> prompts/t.yaml:4:12\n  |\n4 |     and {{{{ name\n  |            ^\n{help}"))
        .status(2)
        .run();
}
