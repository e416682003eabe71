//! What the command line writes, under hostile conditions: standard output that cannot be
//! written (`/dev/full`: an error, said on standard error, exit 2) or whose reader went away
//! (a closed pipe: a quiet end), for every command; `man --install` into a directory
//! holding links; and a caller's words quoted in messages, never whole.

mod common;
use common::{Sink, Test};

/// A project with `t/say`, the graph `graphs/g`, a plan calling `t/say` and a document to
/// render.
fn project() -> Test {
    Test::say()
        .file(
            "plans/p.yaml",
            "steps:\n  - {id: a, tool: t/say, arguments: {}}\n",
        )
        .file("doc.yaml", "a: 1\n")
}

/// Command lines that print on standard output, with what they read on standard input.
const PRINTING: &[(&[&str], &str)] = &[
    (&["run", "t/say"], ""),
    (&["run", "t/say", "--json"], ""),
    (&["man"], ""),
    (&["man", "plan", "run"], ""),
    (&["completions", "bash"], ""),
    (&["tools"], ""),
    (&["tools", "--json"], ""),
    (&["config"], ""),
    (&["plan", "show", "p"], ""),
    (&["plan", "show", "p", "--json"], ""),
    (&["plan", "run", "p", "-q"], ""),
    (&["render", "doc.yaml"], ""),
    (&["runs"], ""),
    (&["check", "--json"], ""),
    (&["--help"], ""),
    (&["render", "--batch"], "{\"template\": {\"a\": 1}}\n"),
    (&["run", "--batch"], "{\"tool\": \"t/say\"}\n"),
    (
        &["plan", "resolve", "--batch"],
        "{\"plan\": {\"steps\": []}}\n",
    ),
];

/// Runs every command line of [`PRINTING`] with its standard output into `sink`, then a
/// failure that would be printed as JSON on it: each says `stderr` on standard error; the
/// commands exit with `status`, the failure with its own code, 2.
fn every_command_into(sink: Sink, stderr: &str, status: i32) {
    let p = project();
    for (args, stdin) in PRINTING {
        p.then(args)
            .stdin(*stdin)
            .stdout_into(sink)
            .stderr(stderr)
            .status(status)
            .run();
    }
    p.then(&["man", "nope", "--json"])
        .stdout_into(sink)
        .stderr(stderr)
        .status(2)
        .run();
}

#[test]
fn a_write_to_a_full_standard_output_is_an_error_of_every_command() {
    every_command_into(
        Sink::Full,
        "error[request]: cannot write to standard output: No space left on device (os error 28)\n",
        2,
    );
}

#[test]
fn a_closed_pipe_ends_every_command_quietly_with_its_own_status() {
    every_command_into(Sink::ClosedPipe, "", 0);
}

#[test]
fn man_install_replaces_links_in_its_directory_and_never_writes_through_them() {
    let p = Test::new()
        .file("outside/kept", "kept\n")
        .link("man/strata.1", "../outside/kept")
        .link("man/strata-run.1", "../outside/made")
        .link("man/strata-tools.1.tmp", "../outside/made-too");
    let ran = p
        .then(&["man", "--install", "man"])
        .stderr("")
        .status(0)
        .run();
    assert!(ran.stdout.starts_with("installed "), "{}", ran.stdout);
    assert_eq!(ran.read("outside/kept"), "kept\n");
    let outside: Vec<_> = std::fs::read_dir(p.path().join("outside"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, ["kept"]);
    for page in ["strata.1", "strata-run.1", "strata-tools.1"] {
        let path = p.path().join("man").join(page);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file(), "{page} is a file now");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(".TH strata"), "{page}: {text}");
    }
    assert!(!p.path().join("man/strata-tools.1.tmp").exists());
}

#[test]
fn a_callers_word_is_quoted_in_a_message_at_most_64_characters_and_escaped() {
    let word = "w".repeat(100_000);
    let cut = format!("{}…", "w".repeat(64));
    let p = project();
    let cases: [(&[&str], String); 8] = [
        (
            &["man", &word],
            format!("error[request]: there is no command `{cut}`\n   = help: `strata --help` lists the commands\n"),
        ),
        (
            &["man", "a\u{1b}[31m"],
            "error[request]: there is no command `a\\u{1b}[31m`\n   = help: did you mean `man`?\n".to_string(),
        ),
        (
            &["explain", "t/say", "--field", &word],
            format!("error[request]: there is no field `{cut}`\n   = help: without --field, every field is shown\n"),
        ),
        (
            &["runs", "prune", "--status", &word],
            format!("error[request]: runs in status `{cut}` cannot be pruned\n   = help: the statuses are completed, failed, limited, interrupted, waiting, cancelled, started, unknown\n"),
        ),
        (
            &["runs", "show", &word],
            format!("error[request]: invalid run id `{cut}`\n   = help: run ids are 1 to 64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-`\n"),
        ),
        (
            &["walk", "graphs/g", "--node", &word],
            format!("error[request]: graph `graphs/g` has no node `{cut}`\n"),
        ),
        (
            &[&word],
            format!("error: unrecognized subcommand '{cut}'\n\nUsage: strata [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.\n"),
        ),
        (
            &["completions", &word],
            format!("error: invalid value '{cut}' for '<SHELL>'\n  [possible values: bash, elvish, fish, powershell, zsh]\n\nFor more information, try '--help'.\n"),
        ),
    ];
    for (args, stderr) in cases {
        p.then(args).stderr(&stderr).status(2).run();
    }
    p.then(&["plan", "resolve", "-", "--value-json", &format!("{word}=x")])
        .stdin("steps: []\n")
        .stderr(&format!(
            "error[request]: --value-json `{cut}` is not JSON: expected value at line 1 column 1\n"
        ))
        .status(2)
        .run();
}
