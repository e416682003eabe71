//! The options every command that works on a project shares, as one struct each command
//! flattens into its own (`#[command(flatten)]`), so they are spelled, documented and read
//! alike everywhere.

use std::path::{Path, PathBuf};

use clap::Args;

/// Options shared by the commands that work on a project.
#[derive(Debug, Clone, Default, Args)]
pub struct SharedArgs {
    /// The project root (default: the nearest ancestor with tools/ of the file the command
    /// reads, or of the current directory)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

impl SharedArgs {
    /// `--project`, when given.
    pub fn project(&self) -> Option<&Path> {
        self.project.as_deref()
    }
}
