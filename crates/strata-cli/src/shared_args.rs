//! The global options: one struct, flattened into the top-level command line and into every
//! command (`#[command(flatten)]`), so they are spelled, documented and read alike
//! everywhere. Each is `global`: it may stand before the command (`strata -C demo check`)
//! or after it (`strata check -C demo`), as cargo's and git's do.

use std::path::PathBuf;

use strata_core::{Error, ErrorKind, Layer};

use clap::Args;

use crate::style::ColorWhen;

/// The options every command takes (docs/settings.md, "Global options"), under their own
/// heading in every `--help`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct SharedArgs {
    /// Run as if strata was started in DIR (as git -C does): every path, and the project
    /// (the nearest ancestor with tools/), are found from there
    #[arg(short = 'C', long, global = true, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub(crate) project: Option<PathBuf>,
    /// Print the result as JSON on standard output, errors as {"ok": false, "error": …}
    /// (shapes in docs/schemas/)
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// No progress or status lines on standard error; warnings and errors are still
    /// printed (as cargo's -q)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Say more on standard error: the project and where its settings come from (one
    /// level: -vv is refused)
    #[arg(short, long, global = true)]
    pub(crate) verbose: bool,
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
    /// Changes the current directory into `-C DIR`, when given, before the command runs:
    /// from then on every path of the command line, and the project, are found from there.
    pub(crate) fn enter(&self) -> Result<(), Error> {
        let Some(dir) = self.project.as_deref() else {
            return Ok(());
        };
        std::env::set_current_dir(dir).map_err(|e| {
            let shown = strata_core::shown(&dir.display().to_string());
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "the directory does not exist".to_string(),
                _ => e.to_string(),
            };
            Error::new(
                Layer::REQUEST,
                ErrorKind::Request,
                format!("cannot change to `{shown}`: {why}"),
            )
            .with_source(e)
            .with_hint("-C DIR runs strata as if started in DIR, as git -C does")
        })
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
        self.verbose
    }
}
