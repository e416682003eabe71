//! The new project's directory: absent or empty, outside every RyeOS tree read, and taken by
//! one import at a time — created when absent, then locked (`flock` on the directory, without
//! waiting) and found empty under the lock, so that of two imports into one target the second
//! is refused whether it comes while the first writes or after. The kernel lets the lock go
//! when its holder ends, however it ends.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use strata_core::Error;

use crate::driver::fail;

/// Checks the target before anything is read: absent or an empty directory, and not inside a
/// RyeOS tree (`roots`, canonical), which would be read while it is written.
pub(crate) fn check(target: &Path, roots: &[PathBuf]) -> Result<(), Error> {
    check_empty(target)?;
    let probe = std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf());
    let probe = nearest_canonical(&probe);
    if roots.iter().any(|r| probe.starts_with(r)) {
        return Err(fail(
            format!("{} is inside a RyeOS .ai/ tree", target.display()),
            "write the new project somewhere else",
        ));
    }
    Ok(())
}

/// Takes the target for this import: creates it when absent, locks it and checks again that
/// it is empty. The lock is held while the returned directory stays open.
pub(crate) fn take(target: &Path) -> Result<File, Error> {
    std::fs::create_dir_all(target).map_err(|e| {
        fail(
            format!("cannot create `{}`: {e}", target.display()),
            "choose a directory you can write to",
        )
        .with_source(e)
    })?;
    let dir = File::open(target).map_err(|e| {
        fail(
            format!("cannot open `{}`: {e}", target.display()),
            "choose a directory you can write to",
        )
        .with_source(e)
    })?;
    // SAFETY: flock on the descriptor `dir` owns, for the call.
    if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            fail(
                format!(
                    "another `strata import` is writing into {}",
                    target.display()
                ),
                "wait for it to end: strata import writes a new project, into a new or empty directory",
            )
        } else {
            fail(
                format!("cannot lock `{}`: {e}", target.display()),
                "choose a directory you can write to",
            )
            .with_source(e)
        });
    }
    check_empty(target)?;
    Ok(dir)
}

/// The target must be absent or an empty directory.
fn check_empty(target: &Path) -> Result<(), Error> {
    match std::fs::symlink_metadata(target) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => {
            let mut entries = std::fs::read_dir(target).map_err(|e| {
                fail(
                    format!("cannot read `{}`: {e}", target.display()),
                    "check the path",
                )
                .with_source(e)
            })?;
            match entries.next() {
                None => Ok(()),
                Some(_) => Err(fail(
                    format!("{} is not empty", target.display()),
                    "strata import writes a new project: give a new or empty directory",
                )),
            }
        }
        Ok(_) => Err(fail(
            format!("{} is not empty", target.display()),
            "it is not a directory: give a new or empty directory",
        )),
    }
}

/// The canonical form of the nearest existing ancestor, with the rest appended.
fn nearest_canonical(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(c) = std::fs::canonicalize(&cur) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (cur.file_name().map(|s| s.to_owned()), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cur = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_taken_by_one_import_at_a_time() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("new");
        let held = take(&target).unwrap();
        let e = take(&target).unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "another `strata import` is writing into {}",
                target.display()
            )
        );
        drop(held);
        std::fs::write(target.join("x"), "").unwrap();
        let e = take(&target).unwrap_err();
        assert_eq!(e.message(), format!("{} is not empty", target.display()));
    }
}
