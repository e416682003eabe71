//! One process per run: a run directory is locked while a process (a graph walker, a plan
//! run) runs it, so that two `--resume`s of the same run cannot interleave their checkpoints.
//!
//! The lock is the operating system's (`flock` on the file `lock`), taken without waiting:
//! taking it is one atomic step, and the kernel releases it when its holder ends, however it
//! ends — so a killed process leaves no lock behind, and no taker can mistake a lock being
//! written for a stale one. The file also holds the holder's pid, for messages and for
//! `strata runs`; the holder removes it when it is done.

use std::fs::{self, File, OpenOptions};
use std::io::{Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use strata_core::{Error, ErrorKind, Layer};

use crate::RunDir;

/// The lock file's name inside a run directory.
pub const LOCK_FILE: &str = "lock";

/// A held lock; released (the file removed, then the lock let go) when dropped.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    /// The file, holding the OS lock until it is dropped.
    _file: Flock<File>,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Removed while still held: a taker that opened this file meanwhile finds, once it
        // has the lock, that the file is no longer the one at `path`, and tries again.
        let _ = fs::remove_file(&self.path);
    }
}

/// True when process `pid` runs (Linux: `/proc/<pid>` exists; elsewhere every pid is
/// assumed to run).
fn running(pid: &str) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || (!pid.is_empty() && proc.join(pid).exists())
}

/// Takes the OS lock on `file` without waiting: the file locked, or `None` when another
/// holds it.
fn try_flock(mut file: File) -> std::io::Result<Option<Flock<File>>> {
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => return Ok(Some(locked)),
            Err((_, Errno::EWOULDBLOCK)) => return Ok(None),
            Err((again, Errno::EINTR)) => file = again,
            Err((_, e)) => return Err(e.into()),
        }
    }
}

/// True when `file` is the file now at `path` (and not one removed since it was opened).
fn still_at(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl RunDir {
    /// True when a live process holds the run's lock (it is running now).
    pub fn is_locked(&self) -> bool {
        fs::read_to_string(self.path.join(LOCK_FILE)).is_ok_and(|owner| running(owner.trim()))
    }

    /// Locks the run for this process; fails when another process holds it.
    pub fn lock(&self) -> Result<RunLock, Error> {
        let path = self.path.join(LOCK_FILE);
        let io = |e: std::io::Error| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot lock `{}`: {e}", path.display()),
            )
            .with_source(e)
        };
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            let Some(mut file) = try_flock(file).map_err(io)? else {
                return Err(self.in_progress(&path));
            };
            if !still_at(&file, &path) {
                // The holder released it and removed the file between our open and our
                // lock: take the new one.
                continue;
            }
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            writeln!(file, "{}", std::process::id()).map_err(io)?;
            return Ok(RunLock { path, _file: file });
        }
    }

    /// The error for a run another walker holds.
    fn in_progress(&self, path: &Path) -> Error {
        let run = self
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let owner = fs::read_to_string(path).unwrap_or_default();
        let owner = owner.trim();
        let message = if owner.is_empty() {
            format!("run `{run}` is in progress")
        } else {
            format!("run `{run}` is in progress (process {owner})")
        };
        Error::new(Layer::REQUEST, ErrorKind::RunState, message)
            .with_hint("wait for it to end (the lock is released when its walker ends)")
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
            e.message(),
            format!("run `r1` is in progress (process {})", std::process::id())
        );
        drop(held);
        assert!(!dir.path.join(LOCK_FILE).exists());
        fs::write(dir.path.join(LOCK_FILE), "999999999\n").unwrap();
        let _again = dir.lock().unwrap();
    }

    /// Many takers at once, over a stale lock, an empty one, or none: exactly one wins each
    /// round (issue 11: a taker that read the lock before its pid was written, or while a
    /// stale one was being replaced, took it too).
    #[test]
    fn concurrent_takers_never_both_win() {
        let tmp = tempfile::tempdir().unwrap();
        for round in 0..200 {
            let dir = RunDir {
                path: tmp.path().join(format!("r{round}")),
            };
            fs::create_dir(&dir.path).unwrap();
            match round % 3 {
                0 => fs::write(dir.path.join(LOCK_FILE), "999999999\n").unwrap(),
                1 => fs::write(dir.path.join(LOCK_FILE), "").unwrap(),
                _ => {}
            }
            let barrier = std::sync::Barrier::new(4);
            let won: Vec<Option<RunLock>> = std::thread::scope(|s| {
                let takers: Vec<_> = (0..4)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            dir.lock().ok()
                        })
                    })
                    .collect();
                takers.into_iter().map(|t| t.join().unwrap()).collect()
            });
            let winners = won.iter().filter(|w| w.is_some()).count();
            assert_eq!(winners, 1, "round {round}");
        }
    }
}
