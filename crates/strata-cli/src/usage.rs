//! A command line that does not parse, answered as the line asked even so: `--color` is
//! honoured by `--help` and by the usage error, and under `--json` the usage error is a
//! failure document on standard output (`{"ok": false, "error": …}`), as every other error.

use std::ffi::OsString;

use clap::ValueEnum;
use strata_core::{Error, ErrorKind, Layer};

use crate::style::ColorWhen;

/// What the words of a command line that clap could not parse ask for.
#[derive(Debug, Default)]
pub(crate) struct Asked {
    /// `--json` stands among them.
    pub(crate) json: bool,
    /// The last `--color WHEN` (`--color=WHEN`) with a value it takes; `auto` without one.
    pub(crate) color: ColorWhen,
}

impl Asked {
    /// Reads `words` (the program first) up to a `--`.
    pub(crate) fn of(words: &[OsString]) -> Asked {
        let mut asked = Asked::default();
        let mut it = words
            .iter()
            .skip(1)
            .map(|w| w.to_str().unwrap_or_default())
            .take_while(|w| *w != "--");
        while let Some(word) = it.next() {
            let color = match word {
                "--json" => {
                    asked.json = true;
                    continue;
                }
                "--color" => it.next(),
                _ => word.strip_prefix("--color="),
            };
            if let Some(when) = color.and_then(|c| ColorWhen::from_str(c, false).ok()) {
                asked.color = when;
            }
        }
        asked
    }
}

/// The usage error `e` (rendered without styles) as strata's error: its first paragraph
/// the message, clap's tips and the usage line the hint.
pub(crate) fn as_error(e: &clap::Error) -> Error {
    let text = e.render().to_string();
    let one_line = |block: &str| {
        block
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut blocks = text.split("\n\n");
    let first = blocks.next().unwrap_or_default();
    let message = one_line(first.strip_prefix("error: ").unwrap_or(first));
    let hint: Vec<String> = blocks.map(one_line).filter(|b| !b.is_empty()).collect();
    let e = Error::new(Layer::REQUEST, ErrorKind::Request, message);
    match hint.is_empty() {
        true => e,
        false => e.with_hint(hint.join("; ")),
    }
}
