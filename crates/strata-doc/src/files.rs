//! Files of a project and how they are read: confined to the project's directories through
//! symbolic links ([`confine`], [`walk`]), and within the document limit — a source larger
//! than `Limits::document_bytes` is refused without being read whole (a file's size is
//! checked first; a pipe or a device is read up to one byte past the limit).

use std::io::Read;
use std::path::{Path, PathBuf};

use strata_core::{Error, ErrorData, ErrorKind, Layer, Limits, Location};

/// The error for a document of `len` bytes (or more) named `name`.
pub(crate) fn too_large(name: &str, len: usize, limits: &Limits) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Limit,
        format!(
            "document of {len} bytes exceeds the limit of {} bytes",
            limits.document_bytes
        ),
    )
    .with_hint("split the document, or pass large values as data")
    .with_data(ErrorData::Limit {
        setting: "limits.document_bytes".into(),
        limit: limits.document_bytes,
    })
    .at_location(Location {
        file: name.to_string(),
        line: 1,
        column: 1,
    })
}

/// Reads all of `reader` (named `name` in errors), refusing more than
/// `limits.document_bytes` bytes.
pub fn read_bounded(reader: impl Read, name: &str, limits: &Limits) -> Result<Vec<u8>, Error> {
    read_bounded_into(reader, Vec::new(), name, limits)
}

/// [`read_bounded`] into `bytes` (empty; its capacity the size expected, so that a file is
/// read in one call and one more that sees its end).
fn read_bounded_into(
    reader: impl Read,
    mut bytes: Vec<u8>,
    name: &str,
    limits: &Limits,
) -> Result<Vec<u8>, Error> {
    let cap = limits.document_bytes as u64 + 1;
    reader
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", Path::new(name), e))?;
    if bytes.len() > limits.document_bytes {
        return Err(too_large(name, bytes.len(), limits));
    }
    Ok(bytes)
}

/// Reads the file at `path` (named `name` in errors), refusing one larger than
/// `limits.document_bytes` before reading it.
pub fn read_file(path: &Path, name: &str, limits: &Limits) -> Result<Vec<u8>, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::io("read", Path::new(name), e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io("read", Path::new(name), e))?
        .len();
    if len > limits.document_bytes as u64 {
        return Err(too_large(
            name,
            usize::try_from(len).unwrap_or(usize::MAX),
            limits,
        ));
    }
    // One byte more than the size: the read that finds the end needs no second buffer.
    let expected = usize::try_from(len).unwrap_or(0).saturating_add(1);
    read_bounded_into(file, Vec::with_capacity(expected), name, limits)
}

/// [`read_file`] as UTF-8 text (for `.env` files and directives, read as text).
pub fn read_text(path: &Path, name: &str, limits: &Limits) -> Result<String, Error> {
    let bytes = read_file(path, name, limits)?;
    String::from_utf8(bytes)
        .map_err(|e| crate::document::utf8_error(name, e.as_bytes(), e.utf8_error()))
}

/// The real location of `path`: every symbolic link resolved (as far as the path exists).
fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Where `path` really is, when that lies inside directory `dir` (both resolved through
/// every symbolic link); a Forbidden error naming `shown` (and where it leads) otherwise.
/// `dir_shown` names the directory in the error (``"`tools/`"``, `"the project"`).
///
/// Every file strata reads from a project goes through this, so that a link inside `tools/`,
/// `directives/` or `hooks/` cannot make it read, run or quote a file elsewhere. The path
/// returned is the one to read (the link resolved).
pub fn confine(path: &Path, dir: &Path, shown: &str, dir_shown: &str) -> Result<PathBuf, Error> {
    confine_in(path, dir, &real(dir), shown, dir_shown)
}

/// [`confine`] for a caller that already knows where `dir` really is (`real_dir`, resolved
/// once for many files). A path below `dir` none of whose components below it is a
/// symbolic link is resolved with one `lstat` per component below `dir`, instead of a
/// `readlink` of every component of its whole absolute path; any other path is resolved
/// in full.
pub fn confine_in(
    path: &Path,
    dir: &Path,
    real_dir: &Path,
    shown: &str,
    dir_shown: &str,
) -> Result<PathBuf, Error> {
    let target = plainly_below(path, dir, real_dir).unwrap_or_else(|| real(path));
    if target.starts_with(real_dir) {
        return Ok(target);
    }
    Err(Error::new(
        Layer::REQUEST,
        ErrorKind::Forbidden,
        format!(
            "`{shown}` leads outside {dir_shown} (to `{}`)",
            target.display()
        ),
    )
    .with_hint("strata reads only files inside the project's directories; copy the file in"))
}

/// Where `path` really is when it lies below `dir` through plain names that exist and are
/// no symbolic links: `real_dir` joined with them. `None` otherwise (a link, `..`, a name
/// that does not exist, a path elsewhere), for the caller to resolve in full.
fn plainly_below(path: &Path, dir: &Path, real_dir: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(dir).ok()?;
    let mut walked = dir.to_path_buf();
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            return None;
        };
        walked.push(name);
        if std::fs::symlink_metadata(&walked)
            .ok()?
            .file_type()
            .is_symlink()
        {
            return None;
        }
    }
    Some(real_dir.join(rel))
}

/// Every file under `dir` whose name ends in `.<ext>` for one of `exts`, as paths under
/// `dir` sorted by their text; names starting with `.` are left out.
///
/// Symbolic links to directories are followed only when the directory lies inside `dir`
/// and has not been visited yet (real directories are visited first), so a link to `..`
/// or two links to one place cost nothing: the walk reads each directory at most once.
/// Links to files are listed as they are; reading one goes through [`confine`].
pub fn walk(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let root = real(dir);
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let mut seen: std::collections::HashSet<(u64, u64)> = id(dir).into_iter().collect();
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    let mut links: std::collections::VecDeque<PathBuf> = std::collections::VecDeque::new();
    // Real directories first: a linked one is followed only when no real path reaches it.
    let next_link = |links: &mut std::collections::VecDeque<PathBuf>,
                     seen: &mut std::collections::HashSet<(u64, u64)>| {
        while let Some(link) = links.pop_front() {
            let inside = real(&link).starts_with(&root);
            if inside && id(&link).is_some_and(|k| seen.insert(k)) {
                return Some(link);
            }
        }
        None
    };
    while let Some(current) = dirs.pop().or_else(|| next_link(&mut links, &mut seen)) {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let is_dir = if kind.is_symlink() {
                path.is_dir()
            } else {
                kind.is_dir()
            };
            if is_dir {
                if kind.is_symlink() {
                    links.push_back(path);
                } else if id(&path).is_some_and(|k| seen.insert(k)) {
                    dirs.push(path);
                }
            } else if name
                .rsplit_once('.')
                .is_some_and(|(_, ext)| exts.contains(&ext))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
