//! Starting out: `strata init` makes a project that checks and runs, `--version` names the
//! commit, `strata completions` prints a shell's script.

mod common;
use common::{repo, Test};

const NEXT: &str = "created a strata project in `demo`

next:
  cd demo
  strata check                                        # every file, nothing runs
  strata run hello -p name=Ann                        # the tool
  strata run directives/hello.md --input name=Ann     # a directive calling it
  strata run graphs/hello --input name=Ann            # a graph calling it in a loop
  strata config                                       # the settings in force
";

#[test]
fn init_makes_a_project_whose_tool_directive_and_graph_run() {
    let ran = Test::new()
        .args(&["init", "demo"])
        .stdout(NEXT)
        .stderr("")
        .status(0)
        .run();
    assert_eq!(ran.read("demo/.gitignore"), ".strata/\n");
    // As after `strata init demo` in a directory that is no project: the scratch's own empty
    // `tools/` would make it the current project, which owns every file below it.
    std::fs::remove_dir(ran.path().join("tools")).unwrap();
    ran.then(&["check", "demo"])
        .stdout("checked 7 files: 0 errors, 0 warnings\n")
        .status(0)
        .run();
    ran.then(&["run", "hello", "--project", "demo", "-p", "name=Ann"])
        .stdout("{\"greeting\": \"Hello, Ann!\", \"count\": 1}\n")
        .stderr("")
        .status(0)
        .run();
    ran.then(&[
        "run",
        "demo/directives/hello.md",
        "--input",
        "name=Ann",
        "--quiet",
    ])
    .stdout(
        "directive hello: completed\n\n--- prompt ---\nThe tool said: Hello, Ann!\n\n\
         --- actions ---\n[completed] greet (hello)\n    | {\"greeting\":\"Hello, Ann!\",\"count\":1}\n",
    )
    .stderr("")
    .status(0)
    .run();
    ran.then(&[
        "run",
        "demo/tools/graphs/hello.yaml",
        "--input",
        "name=Ann",
        "--run-id",
        "r1",
    ])
    .stdout("{\n  \"greetings\": 2,\n  \"last\": \"Hello, Ann!\"\n}\n")
    .stderr(
        "run r1: starting graphs/hello at `greet`\n\
         step 1 greet (action) -> greet (when state.count < inputs.times): count = 1 (was 0), last = \"Hello, Ann!\" (new)\n\
         step 2 greet (action) -> done (otherwise): count = 2 (was 1)\n\
         step 3 done (return) -> return: no state change\n\
         run r1: completed after 3 steps\n",
    )
    .status(0)
    .run();
    assert!(ran.path().join("demo/.strata/runs/r1").is_dir());
}

#[test]
fn init_never_overwrites_a_file() {
    Test::new()
        .file("directives/hello.md", "---\nname: mine\n---\nmine\n")
        .args(&["init"])
        .stdout("")
        .stderr(
            "error[request]: `.` already has `directives/hello.md`\n   \
             = help: strata init never overwrites a file: choose a new directory, or move these away\n",
        )
        .status(2)
        .run()
        .then(&["check"])
        .status(0)
        .run();
}

#[test]
fn version_names_the_commit_of_a_git_checkout() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let want = match commit {
        Some(c) => format!("strata {} (commit {c})\n", env!("CARGO_PKG_VERSION")),
        None => format!("strata {}\n", env!("CARGO_PKG_VERSION")),
    };
    Test::new()
        .args(&["--version"])
        .stdout(&want)
        .status(0)
        .run();
}

#[test]
fn completions_print_the_script_of_each_shell() {
    let bash = Test::new()
        .args(&["completions", "bash"])
        .stderr("")
        .status(0)
        .run();
    // The script asks strata itself for each completion (tests/cli.rs drives that).
    assert!(
        bash.stdout.contains("COMPLETE=\"bash\"") && bash.stdout.contains("\"strata\" -- "),
        "{}",
        bash.brief()
    );
    assert!(bash.stdout.contains("-F _clap_complete_strata strata"));
    let zsh = bash.then(&["completions", "zsh"]).status(0).run();
    assert!(zsh.stdout.starts_with("#compdef strata\n"));
    for shell in ["fish", "elvish", "powershell"] {
        let script = bash.then(&["completions", shell]).status(0).run();
        assert!(script.stdout.contains("COMPLETE"), "{shell}");
    }
    bash.then(&["completions", "tcsh"])
        .stdout("")
        .stderr(
            "error: invalid value 'tcsh' for '<SHELL>'\n  \
             [possible values: bash, elvish, fish, powershell, zsh]\n\n  \
             tip: a similar value exists: 'zsh'\n\n\
             For more information, try '--help'.\n",
        )
        .status(2)
        .run();
}

#[test]
fn config_shows_every_setting_and_where_it_came_from() {
    let s = Test::new()
        .file("tools/.keep", "")
        .file("strata.yaml", "jobs: 8\nlimits:\n  param_links: 5\n");
    let ran = s
        .then(&["config"])
        .env("STRATA_STRICT", "1")
        .stderr("")
        .status(0)
        .run();
    let body: Vec<&str> = ran.stdout.lines().skip(1).collect();
    assert_eq!(
        body.join("\n"),
        "  strict                              true      env STRATA_STRICT  # missing variables, paths and inputs are errors
  jobs                                8         strata.yaml:1:7    # plan steps running at once
  checkpoint_every                    \"1\"       default            # graph runs write a synced checkpoint every N steps, or every duration (500ms, 2s, 1m)
  secrets                             []        default            # environment variables shown as *** everywhere
  limits.template_bytes               4194304   default            # bytes of one authored string
  limits.placeholders_per_string      10000     default            # placeholders in one string
  limits.template_bytes_per_document  16777216  default            # bytes of all the strings of one document
  limits.placeholders_per_document    100000    default            # placeholders in one document
  limits.default_depth                32        default            # nesting of defaults (`${A:-${B:-x}}`)
  limits.output_bytes_per_string      16777216  default            # bytes of one rendered string
  limits.output_bytes_per_config      67108864  default            # bytes of one rendered document
  limits.param_links                  5         strata.yaml:3:16   # parameter links followed (`a -> b -> c -> d` is 3)
  limits.yaml_nodes                   1000000   default            # YAML nodes after alias expansion
  limits.document_bytes               67108864  default            # bytes of one document read, and after alias expansion
a flag wins over a STRATA_* variable, which wins over strata.yaml, which wins over the default"
    );
    assert!(ran.stdout.starts_with("settings of "), "{}", ran.stdout);
    assert!(ran
        .stdout
        .lines()
        .next()
        .unwrap()
        .ends_with(" (strata.yaml)"));
}
