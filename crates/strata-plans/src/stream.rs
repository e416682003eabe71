//! Steps that arrive one by one, as a planner emits them: JSON Lines, one step a line.

use std::io::BufRead;

use strata_core::{Error, ErrorKind, FieldPath, Layer, Limits, Location};
use strata_doc::{Document, Format};

use crate::plan::Step;

/// The line a streamed step came from, kept to locate errors found later (a duplicate id,
/// a reference to a step that never arrived).
#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based line number in the stream.
    pub number: usize,
    /// The line, parsed.
    pub doc: Document,
}

impl Line {
    /// Locates an error about this line's step: the stream's name, this line, the column
    /// of the field.
    pub fn locate(&self, err: Error) -> Error {
        let err = self.doc.locate_error(err);
        let column = err.location().map_or(1, |l| l.column);
        err.at_location(Location {
            file: self.doc.name.clone(),
            line: self.number,
            column,
        })
    }
}

/// A step that arrived, and its line.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// The step, parsed and compiled.
    pub step: Step,
    /// Where it came from.
    pub line: Line,
}

/// Reads steps from JSON Lines: each non-blank line is one step (its position counts the
/// non-blank lines so far, so a step without an id on the third line is `step3`); a line
/// that is not a step is an error for that line only.
pub struct StepLines<R> {
    reader: R,
    name: String,
    pending: Option<(usize, String)>,
    number: usize,
    position: usize,
    limits: Limits,
}

impl<R: BufRead> StepLines<R> {
    /// Steps from `reader`, named `name` in errors (`<stdin>`). `first` is a line already
    /// read (with its number); reading continues after it.
    pub fn new(name: &str, first: Option<(usize, String)>, reader: R, limits: Limits) -> Self {
        let number = first.as_ref().map_or(0, |(n, _)| *n);
        StepLines {
            reader,
            name: name.to_string(),
            pending: first,
            number,
            position: 0,
            limits,
        }
    }

    fn next_line(&mut self) -> Option<Result<(usize, String), Error>> {
        if let Some(first) = self.pending.take() {
            return Some(Ok(first));
        }
        let mut buf = Vec::new();
        loop {
            match strata_lines::read_line(&mut self.reader, self.limits.document_bytes, &mut buf) {
                Ok(None) => return None,
                Ok(Some(fits)) => {
                    self.number += 1;
                    if !fits {
                        return Some(Err(Error::new(
                            Layer::REQUEST,
                            ErrorKind::Limit,
                            format!(
                                "the line exceeds the limit of {} bytes",
                                self.limits.document_bytes
                            ),
                        )
                        .with_hint("a step is one line; pass large values as results")
                        .at_location(self.location(1))));
                    }
                    let Ok(text) = std::str::from_utf8(&buf) else {
                        return Some(Err(Error::new(
                            Layer::REQUEST,
                            ErrorKind::Syntax,
                            "the line is not valid UTF-8",
                        )
                        .at_location(self.location(1))));
                    };
                    if !text.trim().is_empty() {
                        return Some(Ok((self.number, text.to_string())));
                    }
                }
                Err(e) => {
                    return Some(Err(Error::new(
                        Layer::REQUEST,
                        ErrorKind::Io,
                        format!("cannot read `{}`: {e}", self.name),
                    )
                    .with_source(e)))
                }
            }
        }
    }

    fn location(&self, column: usize) -> Location {
        Location {
            file: self.name.clone(),
            line: self.number,
            column,
        }
    }
}

impl<R: BufRead> Iterator for StepLines<R> {
    type Item = Result<Arrival, Vec<Error>>;

    fn next(&mut self) -> Option<Self::Item> {
        let (number, text) = match self.next_line()? {
            Ok(line) => line,
            Err(e) => return Some(Err(vec![e])),
        };
        self.position += 1;
        let doc = match Document::parse(&self.name, text.into_bytes(), Format::Json, &self.limits) {
            Ok(doc) => doc,
            Err(e) => {
                let e = match e.location() {
                    Some(loc) => {
                        let loc = Location {
                            line: number,
                            ..loc.clone()
                        };
                        e.at_location(loc)
                    }
                    None => e,
                };
                return Some(Err(vec![e]));
            }
        };
        let line = Line { number, doc };
        Some(
            match Step::parse(&line.doc.value, self.position, &FieldPath::root()) {
                Ok(step) => Ok(Arrival { step, line }),
                Err(errors) => Err(errors.into_iter().map(|e| line.locate(e)).collect()),
            },
        )
    }
}
