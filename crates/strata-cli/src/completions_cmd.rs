//! `strata completions SHELL`: the script that makes a shell complete strata's commands and
//! options and the project's tool ids, directive and graph paths, plan files, prompt keys and
//! run ids. The script asks strata for each completion (`COMPLETE=SHELL strata -- …`, see
//! `complete`), so it stays right as the project changes.

use std::process::ExitCode;

use clap::Args;
use clap_complete::env::Shells;
use clap_complete::Shell;

/// Options of `strata completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    pub(crate) shell: Shell,
}

/// Runs `strata completions`: the script on standard output.
pub(crate) fn run(args: CompletionsArgs) -> ExitCode {
    let name = args.shell.to_string();
    let shells = Shells::builtins();
    let Some(shell) = shells.completer(&name) else {
        return ExitCode::FAILURE;
    };
    let mut script = Vec::new();
    let _ = shell.write_registration(
        crate::complete::VAR,
        "strata",
        "strata",
        "strata",
        &mut script,
    );
    crate::output::print(&script);
    ExitCode::SUCCESS
}
