//! Reading files and streams with the document limit: a source larger than
//! `Limits::document_bytes` is refused without being read whole (a file's size is checked
//! first; a pipe or a device is read up to one byte past the limit).

use std::io::Read;
use std::path::Path;

use strata_core::{Error, ErrorKind, Layer, Limits, Location};

/// The error for a document of `len` bytes (or more) named `name`.
pub(crate) fn too_large(name: &str, len: usize, limits: &Limits) -> Error {
    let mut err = Error::new(
        Layer::REQUEST,
        ErrorKind::Limit,
        format!(
            "document of {len} bytes exceeds the limit of {} bytes",
            limits.document_bytes
        ),
    )
    .with_hint("split the document, or pass large values as data");
    err.location = Some(Location {
        file: name.to_string(),
        line: 1,
        column: 1,
    });
    err
}

fn io_error(name: &str, e: std::io::Error) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Io,
        format!("cannot read `{name}`: {e}"),
    )
}

/// Reads all of `reader` (named `name` in errors), refusing more than
/// `limits.document_bytes` bytes.
pub fn read_bounded(reader: impl Read, name: &str, limits: &Limits) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    let cap = limits.document_bytes as u64 + 1;
    reader
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(name, e))?;
    if bytes.len() > limits.document_bytes {
        return Err(too_large(name, bytes.len(), limits));
    }
    Ok(bytes)
}

/// Reads the file at `path` (named `name` in errors), refusing one larger than
/// `limits.document_bytes` before reading it.
pub fn read_file(path: &Path, name: &str, limits: &Limits) -> Result<Vec<u8>, Error> {
    let file = std::fs::File::open(path).map_err(|e| io_error(name, e))?;
    let len = file.metadata().map_err(|e| io_error(name, e))?.len();
    if len > limits.document_bytes as u64 {
        return Err(too_large(
            name,
            usize::try_from(len).unwrap_or(usize::MAX),
            limits,
        ));
    }
    read_bounded(file, name, limits)
}

/// [`read_file`] as UTF-8 text (for `.env` files and directives, read as text).
pub fn read_text(path: &Path, name: &str, limits: &Limits) -> Result<String, Error> {
    let bytes = read_file(path, name, limits)?;
    String::from_utf8(bytes)
        .map_err(|e| crate::document::utf8_error(name, e.as_bytes(), e.utf8_error()))
}
