//! The examples of every command, shown at the end of its `--help` (`Examples:`) and in the
//! EXAMPLES section of its manual page. They use the project `strata init` creates (the tool
//! `hello`, `directives/hello.md`, `graphs/hello`); each line is a command strata parses
//! (a unit test keeps them so).

/// Each command (its words after `strata`, `""` for strata itself) with its examples: a
/// comment line, then the command.
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "",
        &[
            ("Create a project", "strata init demo"),
            (
                "Run its tool with a parameter",
                "strata -C demo run hello -p name=Ann",
            ),
            ("Read the exit codes", "strata help exit-codes"),
        ],
    ),
    (
        "init",
        &[
            ("A new project in demo/", "strata init demo"),
            ("The same inside another folder", "strata init demo -C work"),
        ],
    ),
    (
        "render",
        &[
            (
                "Render a document with a .env file",
                "strata render config.yaml --env-file .env",
            ),
            (
                "Fail on a missing value",
                "strata render config.yaml --strict",
            ),
            (
                "Only the env layer, as plain text",
                "strata render notes.txt --layer env --text",
            ),
        ],
    ),
    (
        "check",
        &[
            ("Check the current project", "strata check"),
            ("Warnings fail too", "strata check --deny-warnings"),
            ("As JSON, for an editor or CI", "strata check --json"),
        ],
    ),
    (
        "explain",
        &[
            (
                "Each field of a tool after every stage",
                "strata explain hello",
            ),
            (
                "The same for a directive",
                "strata explain directives/hello.md",
            ),
        ],
    ),
    (
        "run",
        &[
            ("Run a tool", "strata run hello -p name=Ann"),
            (
                "What it would run, without running it",
                "strata run hello -p name=Ann --dry-run",
            ),
            (
                "Run a directive",
                "strata run directives/hello.md --input name=Ann",
            ),
            (
                "Run a graph; the result alone on stdout",
                "strata run graphs/hello --input name=Ann --json",
            ),
        ],
    ),
    (
        "tools",
        &[
            ("List the tools", "strata tools"),
            ("As JSON", "strata tools --json"),
        ],
    ),
    (
        "graph",
        &[
            ("Draw a graph as Mermaid", "strata graph graphs/hello"),
            ("As Graphviz", "strata graph graphs/hello --format dot"),
        ],
    ),
    (
        "runs",
        &[
            ("List the runs", "strata runs"),
            ("Show one", "strata runs show r1"),
            ("What pruning would remove", "strata runs prune --dry-run"),
        ],
    ),
    (
        "runs show",
        &[
            ("Show a run", "strata runs show r1"),
            ("Its checkpoint as JSON", "strata runs show r1 --json"),
        ],
    ),
    (
        "runs prune",
        &[
            ("What would be removed", "strata runs prune --dry-run"),
            (
                "Remove failed runs older than a week",
                "strata runs prune --status failed --older-than 7d",
            ),
        ],
    ),
    (
        "prompt",
        &[
            ("List the templates", "strata prompt list"),
            (
                "Render one",
                "strata prompt render Search --feed user_input=x",
            ),
        ],
    ),
    (
        "prompt render",
        &[
            (
                "Render a template",
                "strata prompt render Search --feed user_input=x",
            ),
            (
                "Which template won, and why",
                "strata prompt render Search --feed user_input=x --explain",
            ),
        ],
    ),
    (
        "prompt list",
        &[
            ("List the templates", "strata prompt list"),
            ("As JSON", "strata prompt list --json"),
        ],
    ),
    (
        "respond",
        &[(
            "Render a reply from a tool result",
            "strata respond reply.j2 --tool-result result.json",
        )],
    ),
    (
        "plan",
        &[
            ("Run a plan under plans/", "strata plan run diamond"),
            ("Its steps and levels", "strata plan show diamond"),
        ],
    ),
    (
        "plan run",
        &[
            ("Run a plan", "strata plan run diamond"),
            (
                "Four steps at once, only the result",
                "strata plan run plans/diamond.yaml --jobs 4 -q",
            ),
            (
                "Continue a run that waits for values",
                "strata plan run --resume r1 --value title=Q3",
            ),
        ],
    ),
    (
        "plan resolve",
        &[
            (
                "Resolve against the results so far",
                "strata plan resolve diamond --results results.json",
            ),
            ("Answer JSON Lines requests", "strata plan resolve --batch"),
        ],
    ),
    (
        "plan show",
        &[
            ("The steps and their levels", "strata plan show diamond"),
            ("As JSON", "strata plan show diamond --json"),
        ],
    ),
    (
        "plan graph",
        &[
            ("Draw the dependencies", "strata plan graph diamond"),
            ("As Graphviz", "strata plan graph diamond --format dot"),
        ],
    ),
    (
        "plan step",
        &[(
            "One step, from the records of those before it",
            "strata plan step plans/diamond.yaml --step B --records records --output out",
        )],
    ),
    (
        "export",
        &[(
            "A plan as an Argo workflow",
            "strata export argo plans/diamond --image registry/strata:1",
        )],
    ),
    (
        "export argo",
        &[
            (
                "A plan as an Argo workflow",
                "strata export argo plans/diamond --image registry/strata:1",
            ),
            (
                "A graph, written to a file",
                "strata export argo graphs/hello --image registry/strata:1 -o hello.yaml",
            ),
            (
                "At most 4 pods at once",
                "strata export argo plans/diamond --image registry/strata:1 --jobs 4",
            ),
            (
                "Check a manifest offline",
                "strata export argo hello.yaml --check",
            ),
        ],
    ),
    (
        "walk",
        &[(
            "The first node of a graph, as an exported task runs it",
            "strata walk graphs/hello --node greet --start --output out",
        )],
    ),
    (
        "import",
        &[(
            "Import a RyeOS project",
            "strata import ryeos ../old-project demo",
        )],
    ),
    (
        "import ryeos",
        &[(
            "Import a RyeOS project into demo/",
            "strata import ryeos ../old-project demo",
        )],
    ),
    (
        "config",
        &[
            ("The settings in force and their sources", "strata config"),
            ("As JSON", "strata config --json"),
        ],
    ),
    (
        "completions",
        &[("Completion for bash", "strata completions bash")],
    ),
    (
        "man",
        &[
            ("One page", "strata man plan run"),
            (
                "Every page, for `man strata-run`",
                "strata man --install man/man1",
            ),
        ],
    ),
    (
        "mcp",
        &[
            ("Serve the project to an agent on stdio", "strata mcp"),
            (
                "Over HTTP on a free loopback port",
                "strata mcp --http 127.0.0.1:0",
            ),
            ("Only what cannot change anything", "strata mcp --read-only"),
        ],
    ),
    (
        "view",
        &[
            ("Every run of the project, in the browser", "strata view"),
            ("One run's page", "strata view 20240101-120000-ab12"),
        ],
    ),
    (
        "lsp",
        &[(
            "Serve the project to an editor (which starts it) on stdio",
            "strata lsp",
        )],
    ),
    (
        "help",
        &[
            ("The help of a command", "strata help plan run"),
            ("A topic", "strata help environment"),
        ],
    ),
];

/// The examples of the command whose words after `strata` are `path` (`"plan run"`).
pub(crate) fn of(path: &str) -> &'static [(&'static str, &'static str)] {
    EXAMPLES
        .iter()
        .find(|(p, _)| *p == path)
        .map_or(&[], |(_, e)| e)
}

/// The examples as `--help` ends with them: `Examples:`, then each comment and command.
pub(crate) fn help_text(path: &str) -> Option<String> {
    let examples = of(path);
    if examples.is_empty() {
        return None;
    }
    let mut out = String::from("Examples:");
    for (what, line) in examples {
        out.push_str(&format!("\n  # {what}\n  $ {line}"));
    }
    Some(out)
}

/// `cmd` with the examples of it and of every command under it at the end of their help
/// (`path`: its words after `strata`).
pub(crate) fn add(cmd: clap::Command, path: &str) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = match help_text(path) {
        Some(text) => cmd.after_help(text),
        None => cmd,
    };
    for name in names {
        let sub = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |c| add(c, &sub));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_parses_and_names_a_command() {
        let cmd = crate::command();
        for (path, examples) in EXAMPLES {
            let mut found = Some(&cmd);
            for word in path.split_whitespace() {
                found = found.and_then(|c| c.find_subcommand(word));
            }
            assert!(found.is_some(), "no command `{path}`");
            for (_, line) in *examples {
                let words: Vec<&str> = line.split_whitespace().collect();
                assert_eq!(words[0], "strata", "{line}");
                if let Err(e) = crate::command().try_get_matches_from(&words) {
                    panic!("`{line}` does not parse: {e}");
                }
            }
        }
    }
}
