//! Standard output, the one way every command writes it (clippy's `disallowed-methods` in
//! this crate's `clippy.toml` refuses `std::io::stdout` and `println!` anywhere else).
//!
//! The first write that fails is remembered and every later one fails at once (a streaming
//! command stops there); [`finish`] then makes the failure the command's outcome: a message on
//! standard error and [`EXIT_STRATA`] — except for a reader that went away (a closed pipe,
//! `strata tools | head -0`), which ends the output quietly with the command's own status.

use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::OnceLock;

use strata_app::EXIT_STRATA;
use strata_core::{Error, ErrorKind, Layer};

/// The first failed write of standard output: its kind and what the system said.
static FAILED: OnceLock<(io::ErrorKind, String)> = OnceLock::new();

/// Standard output, locked, as a writer that remembers its first failure.
pub(crate) struct Stdout(io::StdoutLock<'static>);

/// Standard output, locked for the caller's writes.
#[allow(clippy::disallowed_methods)]
pub(crate) fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// The failure remembered, as an error for the next write (of the same kind, so that a
/// closed pipe still reads as one).
fn failed_before() -> Option<io::Error> {
    FAILED
        .get()
        .map(|(kind, _)| io::Error::new(*kind, "standard output failed before"))
}

/// Remembers `e` unless a failure already is (or it is an interruption, retried).
fn remember<T>(result: io::Result<T>) -> io::Result<T> {
    if let Err(e) = &result {
        if e.kind() != io::ErrorKind::Interrupted {
            let _ = FAILED.set((e.kind(), e.to_string()));
        }
    }
    result
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match failed_before() {
            Some(e) => Err(e),
            None => remember(self.0.write(buf)),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match failed_before() {
            Some(e) => Err(e),
            None => remember(self.0.write_all(buf)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match failed_before() {
            Some(e) => Err(e),
            None => remember(self.0.flush()),
        }
    }
}

/// Writes `bytes` to standard output and flushes it (a failure is remembered for
/// [`finish`]).
pub(crate) fn print(bytes: impl AsRef<[u8]>) {
    let mut out = stdout();
    let _ = out.write_all(bytes.as_ref()).and_then(|()| out.flush());
}

/// Writes `value` to standard output as pretty JSON and a line break.
pub(crate) fn print_json(value: &impl serde::Serialize) {
    print(serde_json::to_string_pretty(value).unwrap_or_default() + "\n");
}

/// Writes `text` to standard output in one write, styled when standard output takes colour
/// and stripped otherwise (see [`crate::style::styled`]).
#[allow(clippy::disallowed_methods)]
pub(crate) fn print_styled(text: &str) {
    let choice = anstream::AutoStream::choice(&io::stdout());
    print(crate::style::styled(text, choice));
}

/// Whether a write of standard output has failed: a command whose stream stopped on that
/// failure leaves it to [`finish`] to say so.
pub(crate) fn failed() -> bool {
    FAILED.get().is_some()
}

/// The outcome of a command that returned `code`, once what it wrote is flushed: `code`, or
/// when standard output could not be written, the error said on standard error and
/// [`EXIT_STRATA`]; a closed pipe is not said, and leaves `code`.
pub(crate) fn finish(code: ExitCode) -> ExitCode {
    let _ = stdout().flush();
    match FAILED.get() {
        None => code,
        Some((io::ErrorKind::BrokenPipe, _)) => code,
        Some((_, why)) => {
            let e = Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot write to standard output: {why}"),
            );
            crate::outcome::print_error(&e, None);
            ExitCode::from(EXIT_STRATA)
        }
    }
}
