//! The help topics (`strata help exit-codes`, `environment`, `settings`): what holds for
//! every command, said once. The manual pages take their EXIT STATUS and ENVIRONMENT
//! sections from here.

/// One topic: its name, a line saying what it covers, and its text.
pub(crate) struct Topic {
    /// What `strata help` is given.
    pub(crate) name: &'static str,
    /// One line for the list of topics.
    pub(crate) summary: &'static str,
    /// The text, lines of at most 90 characters.
    pub(crate) text: &'static str,
}

/// Every topic.
pub(crate) const TOPICS: &[Topic] = &[
    Topic {
        name: "exit-codes",
        summary: "what each exit code means, for every command",
        text: "\
0      done
1      the work ran and failed: a step, graph or directive failed or was skipped;
       `strata check` found errors (or warnings with --deny-warnings)
2      strata could not do what was asked, and nothing ran: bad options or input
       (a usage error too), a file that does not load, a limit, a template or field
       not found (a missing value under --strict, in render and run alike), a refusal
       by the check; or standard output could not be written
3      a plan waits for user values; a graph stopped at max_steps; `strata import`
       wrote the project but refused a file or its check found errors
other  `strata run` of a tool: the tool's own exit code (124 after its timeout,
       128+N when killed by signal N)

With --json the code is the same, and a failure is {\"ok\": false, \"error\": ...} on
standard output.
",
    },
    Topic {
        name: "environment",
        summary: "the environment variables strata reads",
        text: "\
STRATA_STRICT=1             missing values are errors (as --strict; --no-strict undoes it)
STRATA_JOBS=N               plan steps running at once (as --jobs), 1 to 256
STRATA_CHECKPOINT_EVERY=X   graph runs: a checkpoint every N steps or every duration
STRATA_SECRETS=A,B          variables shown as *** everywhere
STRATA_LIMITS_<KEY>=N       a limit of strata.yaml's `limits:` (STRATA_LIMITS_PARAM_LINKS)
NO_COLOR                    no colour when --color is auto
CLICOLOR_FORCE=1            colour when --color is auto, even into a pipe
COMPLETE=<shell>            answer a completion request (what `strata completions` sets up)

Every other variable is the environment of the tools strata runs, with the project's
.env (every value secret) over it; `strata config` shows the settings in force and where
each came from.
",
    },
    Topic {
        name: "settings",
        summary: "the project's strata.yaml, its STRATA_* variables and flags",
        text: "\
strata.yaml, at the project root next to tools/, holds the team's settings; a STRATA_*
variable overrides the file, and a flag overrides both:

strict: false          missing values are errors      (STRATA_STRICT, --strict)
jobs: 4                plan steps running at once     (STRATA_JOBS, --jobs)
checkpoint_every: 1    graph checkpoints              (STRATA_CHECKPOINT_EVERY, --checkpoint-every)
secrets: []            variables shown as ***         (STRATA_SECRETS)
limits:                sizes and counts               (STRATA_LIMITS_<KEY>)
  template_bytes, placeholders_per_string, template_bytes_per_document,
  placeholders_per_document, default_depth, output_bytes_per_string,
  output_bytes_per_config, param_links, yaml_nodes, document_bytes

`strata config` prints each value and where it came from; a misspelt key is an error with
its line and a did-you-mean. docs/settings.md has the ranges and the defaults.
",
    },
];

/// The topic named `name`.
pub(crate) fn find(name: &str) -> Option<&'static Topic> {
    TOPICS.iter().find(|t| t.name == name)
}

/// The list of topics, as the top-level help ends with it.
pub(crate) fn list() -> String {
    let mut out = String::from("Topics (strata help TOPIC):");
    for t in TOPICS {
        out.push_str(&format!("\n  {:<12} {}", t.name, t.summary));
    }
    out
}
