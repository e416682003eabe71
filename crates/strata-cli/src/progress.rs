//! How the command line shows the progress of directives and plans on standard error: the
//! lines every front-end prints (`strata_app::progress`), the status coloured.

use strata_app::progress::{end_line, start_line};
use strata_tools::StepRecord;

use crate::style::{paint, status_style};

/// The status of `record` as a progress line shows it: its name, coloured.
pub(crate) fn painted(record: &StepRecord) -> String {
    paint(status_style(record.status), record.status.name())
}

/// How a directive run shows its progress (`strata run <file>.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A line per action start and end and per hook, on standard error.
    Human,
    /// One JSON object per event (`action_started`, `action_finished`, `hook`) on standard
    /// error, the report staying one document on standard output.
    Json,
    /// Nothing but the report.
    Quiet,
}

impl Mode {
    /// The mode `--json` and `--quiet` ask for (`--quiet` wins).
    pub(crate) fn of(json: bool, quiet: bool) -> Mode {
        match (json, quiet) {
            (_, true) => Mode::Quiet,
            (true, false) => Mode::Json,
            (false, false) => Mode::Human,
        }
    }
}

impl strata_directive::Observer for Mode {
    fn on(&self, event: strata_directive::Progress<'_>) {
        use strata_directive::Progress;
        match self {
            Mode::Quiet => {}
            Mode::Json => eprintln!("{}", event.to_json()),
            Mode::Human => anstream::eprintln!(
                "{}",
                match event {
                    Progress::Started { id, tool, .. } => start_line(id, tool),
                    Progress::Finished {
                        id,
                        tool,
                        record,
                        elapsed,
                        ..
                    } => end_line(id, tool, record, elapsed, &painted(record)),
                    Progress::Hook(f) => strata_core::escaped(&f.line()).into_owned(),
                }
            ),
        }
    }
}
