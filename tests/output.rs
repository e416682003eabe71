//! What the command line writes, under hostile conditions: standard output that cannot be
//! written (`/dev/full`: an error, said on standard error, exit 2) or whose reader went away
//! (a closed pipe: a quiet end), for every command; and `man --install` into a directory
//! holding links.

mod common;
use common::{Sink, Test};

/// Prints its `text` parameter.
const SAY: &str = "description: prints its text\nexecutor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    text: {type: string, default: hi}\nconfig:\n  command: printf\n  args: [\"%s\\n\", \"{text}\"]\n";

/// A project with `t/say`, a plan calling it and a document to render.
fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/say", SAY)
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
