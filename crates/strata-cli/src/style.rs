//! Colour for people: the styles of diagnostics and progress lines, and the `--color` choice.
//!
//! Text is styled where it is made and printed through `anstream`, which keeps the styles
//! when the stream is a terminal (or `--color always`) and strips them otherwise: output to a
//! pipe or a file, `NO_COLOR`, `TERM=dumb` and `--color never` are plain.

use std::io::Write as _;

use anstyle::{AnsiColor, Style};
use clap::ValueEnum;
use strata_tools::StepStatus;

/// `--color`: when strata colours its output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorWhen {
    /// When the stream is a terminal and `NO_COLOR` is not set
    #[default]
    Auto,
    /// Always, even into a pipe or a file
    Always,
    /// Never
    Never,
}

impl ColorWhen {
    /// Makes this choice the one every `anstream` stream follows.
    pub(crate) fn apply(self) {
        anstream::ColorChoice::write_global(match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        });
    }
}

/// `error` and what failed.
pub(crate) const ERROR: Style = AnsiColor::Red.on_default().bold();
/// `warning` and what is suspicious.
pub(crate) const WARNING: Style = AnsiColor::Yellow.on_default().bold();
/// The headline of a diagnostic.
pub(crate) const HEADLINE: Style = Style::new().bold();
/// Arrows, gutters and the labels of a diagnostic's notes.
pub(crate) const NOTE: Style = AnsiColor::Blue.on_default().bold();
/// What completed.
pub(crate) const OK: Style = AnsiColor::Green.on_default();
/// What was skipped.
pub(crate) const SKIPPED: Style = AnsiColor::Yellow.on_default();

/// The style of a step's status in progress lines.
pub(crate) fn status_style(status: StepStatus) -> Style {
    match status {
        StepStatus::Completed => OK,
        StepStatus::Failed => ERROR,
        StepStatus::Skipped => SKIPPED,
    }
}

/// Writes `text` to standard error in one write, styled when standard error takes colour and
/// stripped otherwise. `anstream` strips straight into the stream it wraps, one write per
/// styled piece: thousands of diagnostics would cost tens of thousands of system calls.
pub(crate) fn eprint_all(text: &str) {
    let stderr = std::io::stderr();
    let bytes = styled(text, anstream::AutoStream::choice(&stderr));
    let _ = stderr.lock().write_all(&bytes);
}

/// `text` as a stream with colour `choice` takes it: as it is, or without its styles.
pub(crate) fn styled(text: &str, choice: anstream::ColorChoice) -> Vec<u8> {
    let mut out = anstream::AutoStream::new(Vec::with_capacity(text.len()), choice);
    let _ = out.write_all(text.as_bytes());
    out.into_inner()
}

/// `text` in `style` (the escape codes are stripped on the way out when colour is off).
pub(crate) fn paint(style: Style, text: impl std::fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}
