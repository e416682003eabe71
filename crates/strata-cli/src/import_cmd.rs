//! `strata import ryeos <ryeos-project> <new-project> [--space DIR]... [--json]`: a new strata
//! project from a RyeOS project's `.ai/` tree, with `IMPORT-REPORT.json` and `.md` (see
//! docs/import.md). Nothing of RyeOS is ever run.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use strata_import::{import_ryeos, ImportOptions};

use crate::outcome::report;

/// Options of `strata import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    #[command(subcommand)]
    from: ImportFrom,
}

/// What to import from.
#[derive(Debug, Subcommand)]
enum ImportFrom {
    /// A RyeOS project (its `.ai/` tree, both eras), into a new strata project
    Ryeos(RyeosArgs),
}

/// Options of `strata import ryeos`.
#[derive(Debug, Args)]
struct RyeosArgs {
    /// The RyeOS project directory (the one holding `.ai/`)
    source: PathBuf,
    /// The new strata project directory (absent or empty)
    target: PathBuf,
    /// A RyeOS space (user space, bundle) holding `.ai/`, searched after the project, in order
    #[arg(long = "space", value_name = "DIR")]
    spaces: Vec<PathBuf>,
    /// The global options; `--json` prints the report as JSON on stdout
    #[command(flatten)]
    shared: crate::shared_args::SharedArgs,
}

/// Runs `strata import`: exit 0 when every file was imported and the new project checks
/// clean, 3 when some file was refused or the check found errors, 2 when the import could
/// not run.
pub(crate) fn run(args: ImportArgs) -> ExitCode {
    let ImportFrom::Ryeos(args) = args.from;
    let json = args.shared.json;
    let opts = ImportOptions {
        source: args.source,
        target: args.target,
        spaces: args.spaces,
    };
    let report = match import_ryeos(&opts) {
        Ok(r) => r,
        Err(e) => return report(strata_app::Failure::Error(e), None, json),
    };
    let _ = std::io::stderr()
        .lock()
        .write_all(report.messages().as_bytes());
    if json {
        let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default() + "\n";
        crate::output::print(&text);
    }
    ExitCode::from(report.exit_code())
}
