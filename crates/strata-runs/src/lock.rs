//! One process per run: a run directory is locked (`lock` holds the owner's pid) while a process
//! runs it, so that two `--resume`s of the same run cannot interleave their checkpoints. A lock
//! left by a killed process is stale (its pid no longer runs) and is taken over.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use strata_core::{Error, ErrorKind, Layer};

use crate::RunDir;

/// The lock file's name inside a run directory.
pub const LOCK_FILE: &str = "lock";

/// A held lock; released (the file removed) when dropped.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// True when process `pid` runs (Linux: `/proc/<pid>` exists; elsewhere every pid is
/// assumed to run, so a stale lock must be removed by hand).
fn running(pid: &str) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || (!pid.is_empty() && proc.join(pid).exists())
}

impl RunDir {
    /// True when a live process holds the run's lock (it is running now).
    pub fn is_locked(&self) -> bool {
        fs::read_to_string(self.path.join(LOCK_FILE)).is_ok_and(|owner| running(owner.trim()))
    }

    /// Locks the run for this process; fails when another live process holds it.
    pub fn lock(&self) -> Result<RunLock, Error> {
        let path = self.path.join(LOCK_FILE);
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(RunLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = fs::read_to_string(&path).unwrap_or_default();
                    let owner = owner.trim();
                    if running(owner) {
                        let run = self
                            .path
                            .file_name()
                            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                        return Err(Error::new(
                            Layer::REQUEST,
                            ErrorKind::RunState,
                            format!("run `{run}` is in progress (process {owner})"),
                        )
                        .with_hint(format!(
                            "wait for it to end; if no strata process runs it, remove `{}`",
                            path.display()
                        )));
                    }
                    let _ = fs::remove_file(&path);
                }
                Err(e) => {
                    return Err(Error::new(
                        Layer::REQUEST,
                        ErrorKind::Io,
                        format!("cannot lock `{}`: {e}", path.display()),
                    ))
                }
            }
        }
        Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Io,
            format!("cannot lock `{}`", path.display()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_lock_is_refused_and_a_stale_one_taken_over() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir {
            path: tmp.path().join("r1"),
        };
        fs::create_dir(&dir.path).unwrap();
        let held = dir.lock().unwrap();
        let e = dir.lock().unwrap_err();
        assert_eq!(
            e.message,
            format!("run `r1` is in progress (process {})", std::process::id())
        );
        drop(held);
        assert!(!dir.path.join(LOCK_FILE).exists());
        fs::write(dir.path.join(LOCK_FILE), "999999999\n").unwrap();
        let _again = dir.lock().unwrap();
    }
}
