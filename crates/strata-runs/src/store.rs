//! The project's runs under `.strata/runs/`: run ids, creating and opening run directories,
//! reading and replacing their checkpoints.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use strata_core::{Error, ErrorKind, Layer};

use crate::atomic::write_atomic;
use crate::lock::{RunLock, LOCK_FILE};

/// The runs directory, relative to the project root.
pub const RUNS_DIR: &str = ".strata/runs";

/// The checkpoint file's name inside a run directory.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";

/// The longest run id accepted.
pub const MAX_ID_LEN: usize = 64;

/// Every run of a project.
#[derive(Debug, Clone)]
pub struct RunStore {
    /// `<project>/.strata/runs`.
    pub dir: PathBuf,
}

/// One run's directory (`.strata/runs/<run-id>/`).
#[derive(Debug, Clone)]
pub struct RunDir {
    /// The directory.
    pub path: PathBuf,
}

/// Checks a run id: 1 to 64 letters, digits, `.`, `_` and `-`, not starting with `.` or
/// `-` (so `../../etc/passwd` and `..` are refused).
pub fn check_run_id(id: &str) -> Result<(), Error> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && !id.starts_with(['.', '-'])
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        return Ok(());
    }
    Err(Error::new(
        Layer::REQUEST,
        ErrorKind::Invalid,
        format!("invalid run id `{}`", strata_core::shown(id)),
    )
    .with_hint(
        "run ids are 1 to 64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-`",
    ))
}

/// A new run id: the UTC date and time, and four random hex digits (`20250301-142233-7f3a`).
/// The digits come from the system's random source: the clock's nanoseconds, which they
/// once came from, tick coarsely on some machines, and runs started in one second then
/// shared an id.
pub fn new_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs();
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    let mut bytes = [0u8; 2];
    let noise = match getrandom::fill(&mut bytes) {
        Ok(()) => u32::from(u16::from_le_bytes(bytes)),
        Err(_) => (now.subsec_nanos() ^ std::process::id().rotate_left(16)) & 0xffff,
    };
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{noise:04x}",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// Unix seconds as a UTC date and time: `2025-03-01 14:22:33 UTC`.
pub fn utc_text(secs: u64) -> String {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// Year, month and day of a count of days since 1970-01-01 (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

impl RunStore {
    /// The runs of the project rooted at `root`.
    pub fn new(root: &Path) -> RunStore {
        RunStore {
            dir: root.join(RUNS_DIR),
        }
    }

    /// Creates the directory of a new run; fails when the id is invalid or taken.
    pub fn create(&self, id: &str) -> Result<RunDir, Error> {
        check_run_id(id)?;
        self.confined(&[])?;
        fs::create_dir_all(&self.dir).map_err(|e| Error::io("create", &self.dir, e))?;
        let path = self.dir.join(id);
        fs::create_dir(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::RunState,
                    format!("run `{id}` already exists"),
                )
                .with_hint("pick another --run-id, or --resume it")
            } else {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::Io,
                    format!("cannot create run `{id}`: {e}"),
                )
                .with_source(e)
            }
        })?;
        Ok(RunDir { path })
    }

    /// Creates the directory of a new run and locks it, like [`RunStore::create`]; but a run
    /// directory left without a checkpoint — a start killed before its first checkpoint was
    /// on disk, which a run writes before its first step, so nothing of it ran — is taken
    /// over: emptied (but for its lock) and used. A run with a checkpoint, or one whose lock
    /// a live process holds, is refused as before.
    pub fn create_locked(&self, id: &str) -> Result<(RunDir, RunLock), Error> {
        let taken = match self.create(id) {
            Ok(dir) => {
                let lock = dir.lock()?;
                return Ok((dir, lock));
            }
            Err(e) if e.kind() == ErrorKind::RunState => e,
            Err(e) => return Err(e),
        };
        if !self.unstarted(id) {
            return Err(taken);
        }
        let dir = RunDir {
            path: self.dir.join(id),
        };
        let lock = dir.lock()?;
        // Checked again under the lock: a start that was under way may have committed.
        if dir.file().exists() {
            return Err(taken);
        }
        let entries = fs::read_dir(&dir.path).map_err(|e| Error::io("read", &dir.path, e))?;
        for entry in entries.flatten() {
            if entry.file_name() != LOCK_FILE {
                let path = entry.path();
                fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?;
            }
        }
        Ok((dir, lock))
    }

    /// True when run `id` has a directory (a real one, not a link) but no checkpoint: it was
    /// stopped before its first checkpoint was written.
    pub fn unstarted(&self, id: &str) -> bool {
        check_run_id(id).is_ok()
            && fs::symlink_metadata(self.dir.join(id)).is_ok_and(|m| m.is_dir())
            && fs::symlink_metadata(self.dir.join(id).join(CHECKPOINT_FILE)).is_err()
    }

    /// Refuses a runs directory that leads outside the project, as every read of the project
    /// is refused ([`strata_core`]'s Forbidden): `.strata`, `.strata/runs` or, under it, the
    /// directory `below` names a symbolic link to elsewhere (or to nothing). Run records are
    /// written only inside the project.
    fn confined(&self, below: &[&str]) -> Result<(), Error> {
        let Some(root) = self.dir.ancestors().nth(2) else {
            return Ok(());
        };
        let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut rel = PathBuf::new();
        let parts = RUNS_DIR.split('/').chain(below.iter().copied());
        for part in parts {
            rel.push(part);
            let path = root.join(&rel);
            let Ok(meta) = fs::symlink_metadata(&path) else {
                return Ok(());
            };
            if !meta.file_type().is_symlink() {
                continue;
            }
            let target = match path.canonicalize() {
                Ok(real) if real.starts_with(&real_root) => continue,
                Ok(real) => real,
                Err(_) => fs::read_link(&path).unwrap_or(path),
            };
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Forbidden,
                format!(
                    "`{}` leads outside the project (to `{}`)",
                    rel.display(),
                    target.display()
                ),
            )
            .with_hint("strata writes run records only inside the project: remove the link"));
        }
        Ok(())
    }

    /// Opens an existing run (one with a checkpoint).
    pub fn open(&self, id: &str) -> Result<RunDir, Error> {
        check_run_id(id)?;
        self.confined(&[id])?;
        let path = self.dir.join(id);
        if !path.join(CHECKPOINT_FILE).is_file() {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::UnknownName,
                format!("no run `{id}`"),
            )
            .with_hint("`strata runs` lists the runs of this project"));
        }
        Ok(RunDir { path })
    }

    /// Every run directory with a valid id, with its id, in no particular order (none when
    /// the runs directory leads outside the project; a run directory that does is left out).
    pub fn runs(&self) -> Vec<(String, RunDir)> {
        if self.confined(&[]).is_err() {
            return Vec::new();
        }
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let id = e.file_name().to_str()?.to_string();
                check_run_id(&id).ok()?;
                Some((id, RunDir { path: e.path() }))
            })
            .collect()
    }
}

impl RunDir {
    /// The checkpoint file.
    pub fn file(&self) -> PathBuf {
        self.path.join(CHECKPOINT_FILE)
    }

    /// The run id: the directory's name.
    pub fn id(&self) -> String {
        self.path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }

    /// Replaces the checkpoint atomically, after syncing the run's event log (when it has
    /// one): every event of the steps a checkpoint records is on disk before it is.
    pub fn write_checkpoint(&self, bytes: &[u8]) -> Result<(), Error> {
        self.sync_events()?;
        write_atomic(&self.path, CHECKPOINT_FILE, bytes)
    }

    /// Unix seconds when the directory was made (when it was last changed where the file
    /// system keeps no creation time); 0 when it cannot be read.
    pub fn created(&self) -> u64 {
        fs::metadata(&self.path)
            .and_then(|m| m.created().or_else(|_| m.modified()))
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs())
    }

    /// Reads the checkpoint's bytes.
    pub fn read_checkpoint(&self) -> Result<Vec<u8>, Error> {
        let file = self.file();
        fs::read(&file).map_err(|e| Error::io("read", &file, e))
    }

    /// The kind of run the checkpoint records: its `kind` field, `graph` when it has none,
    /// `None` when it cannot be read.
    pub fn kind(&self) -> Option<String> {
        let bytes = self.read_checkpoint().ok()?;
        let value: Value = serde_json::from_slice(&bytes).ok()?;
        Some(
            value
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("graph")
                .to_string(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_made_in_one_tight_loop_differ() {
        // 300 ids in well under a second: random digits repeat a handful of times at most;
        // digits from a coarse clock repeat by the hundred.
        let suffixes: std::collections::HashSet<String> = (0..300)
            .map(|_| new_run_id().rsplit('-').next().unwrap_or("").to_string())
            .collect();
        assert!(suffixes.len() > 280, "{} distinct of 300", suffixes.len());
    }

    #[test]
    fn times_are_shown_in_utc() {
        assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_text(1_795_455_001), "2026-11-23 17:30:01 UTC");
    }

    #[test]
    fn run_ids_cannot_escape_the_runs_directory() {
        for bad in [
            "../../etc/passwd",
            "..",
            ".",
            "",
            "a/b",
            "-x",
            ".hidden",
            "a b",
        ] {
            assert!(check_run_id(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["r1", "20250301-142233-7f3a", "nightly_2.x"] {
            assert!(check_run_id(good).is_ok(), "{good:?} refused");
        }
        assert!(check_run_id(&"x".repeat(65)).is_err());
        assert!(check_run_id(&new_run_id()).is_ok());
    }

    #[test]
    fn a_run_directory_without_a_checkpoint_is_taken_over_and_one_with_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let store = RunStore::new(tmp.path());
        let (dir, lock) = store.create_locked("r1").unwrap();
        assert_eq!(
            store.create_locked("r1").unwrap_err().message(),
            format!("run `r1` is in progress (process {})", std::process::id())
        );
        fs::write(dir.path.join("plan.json.tmp"), "[").unwrap();
        drop(lock);
        assert!(store.unstarted("r1"));
        let (dir, lock) = store.create_locked("r1").unwrap();
        assert!(!dir.path.join("plan.json.tmp").exists());
        dir.write_checkpoint(b"{}").unwrap();
        drop(lock);
        assert!(!store.unstarted("r1"));
        assert_eq!(
            store.create_locked("r1").unwrap_err().message(),
            "run `r1` already exists"
        );
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    #[test]
    fn runs_are_created_once_opened_by_checkpoint_and_know_their_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let store = RunStore::new(tmp.path());
        let dir = store.create("r1").unwrap();
        assert_eq!(
            store.create("r1").unwrap_err().message(),
            "run `r1` already exists"
        );
        assert_eq!(store.open("r1").unwrap_err().message(), "no run `r1`");
        assert_eq!(dir.kind(), None);
        dir.write_checkpoint(b"{\"version\": 1}").unwrap();
        assert_eq!(store.open("r1").unwrap().id(), "r1");
        assert_eq!(dir.kind().as_deref(), Some("graph"));
        dir.write_checkpoint(b"{\"kind\": \"plan\"}").unwrap();
        assert_eq!(dir.kind().as_deref(), Some("plan"));
        assert_eq!(store.runs().len(), 1);
    }
}
