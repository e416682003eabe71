//! The global options: one struct, flattened into the top-level command line and into every
//! command (`#[command(flatten)]`), so they are spelled, documented and read alike
//! everywhere. Each is `global`: it may stand before the command (`strata -C demo check`)
//! or after it (`strata check -C demo`), as cargo's and git's do.

use std::path::{Path, PathBuf};

use clap::{ArgAction, Args};

use crate::style::ColorWhen;

/// The options every command takes (docs/settings.md, "Global options").
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SharedArgs {
    /// The project root (default: the current directory's project, the nearest ancestor
    /// with tools/; a file given by path outside it: the nearest ancestor with tools/ of
    /// the file's folder)
    #[arg(short = 'C', long, global = true, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub(crate) project: Option<PathBuf>,
    /// Print the result as JSON on standard output, errors as {"ok": false, "error": …}
    /// (shapes in docs/schemas/)
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// No progress lines and no warnings on standard error (errors are still printed)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Say more on standard error: the project and where its settings come from
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Missing values are errors: environment variables, context paths and inputs (also
    /// `strict: true` in strata.yaml, or STRATA_STRICT=1)
    #[arg(long, global = true, overrides_with = "no_strict")]
    pub(crate) strict: bool,
    /// Not strict, whatever strata.yaml or STRATA_STRICT say
    #[arg(long, global = true, overrides_with = "strict")]
    pub(crate) no_strict: bool,
    /// When to colour diagnostics and progress (auto: when the output is a terminal and
    /// NO_COLOR is not set)
    #[arg(
        long,
        value_enum,
        global = true,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub(crate) color: ColorWhen,
}

impl SharedArgs {
    /// `--project`, when given.
    pub(crate) fn project(&self) -> Option<&Path> {
        self.project.as_deref()
    }

    /// `--strict` (`Some(true)`), `--no-strict` (`Some(false)`, the last of the two wins),
    /// or neither (`None`: the settings decide).
    pub(crate) fn strict(&self) -> Option<bool> {
        match (self.strict, self.no_strict) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }

    /// Whether `-v` was given.
    pub(crate) fn verbose(&self) -> bool {
        self.verbose > 0
    }
}
