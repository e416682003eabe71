//! `strata completions SHELL`: the shell completion script of every command and option.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Options of `strata completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    pub shell: Shell,
}

/// Runs `strata completions`: the script on standard output. (It is made in memory first:
/// the generator panics when its output fails, as it does into a closed pipe.)
pub fn run(args: CompletionsArgs) -> ExitCode {
    let mut command = crate::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "strata", &mut script);
    let _ = std::io::stdout().lock().write_all(&script);
    ExitCode::SUCCESS
}
