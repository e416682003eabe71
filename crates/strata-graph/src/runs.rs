//! The project's runs under `.strata/runs/`: run ids, creating and opening run directories,
//! and the listing behind `strata runs`.

use std::fs;
use std::path::{Path, PathBuf};

use strata_core::{Error, ErrorKind, Layer};

use crate::checkpoint::{RunDir, Status};

/// The runs directory, relative to the project root.
pub const RUNS_DIR: &str = ".strata/runs";

/// The longest run id accepted.
pub const MAX_ID_LEN: usize = 64;

/// Every run of a project.
#[derive(Debug, Clone)]
pub struct RunStore {
    /// `<project>/.strata/runs`.
    pub dir: PathBuf,
}

impl RunSummary {
    /// The status as `strata runs` shows it: `running` only while a process runs it,
    /// `interrupted` for a running run nobody runs (killed: resume it), `unknown` when the
    /// checkpoint cannot be read.
    pub fn shown_status(&self) -> &'static str {
        match self.status {
            Some(Status::Running) if !self.live => "interrupted",
            Some(s) => s.name(),
            None => "unknown",
        }
    }
}

/// One line of `strata runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run id.
    pub run_id: String,
    /// The graph's id, or why the checkpoint could not be read.
    pub graph: Result<String, String>,
    /// How the run stands.
    pub status: Option<Status>,
    /// Steps completed.
    pub steps: u64,
    /// The node the next step runs.
    pub node: Option<String>,
    /// True when a live process is running it now (a `running` run that is not live was
    /// interrupted: resume it).
    pub live: bool,
    /// Unix seconds when it started.
    pub started: u64,
    /// Unix seconds of its last checkpoint.
    pub updated: u64,
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
        format!("invalid run id `{id}`"),
    )
    .with_hint(
        "run ids are 1 to 64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-`",
    ))
}

/// A new run id: the UTC date and time, and four hex digits that differ between processes
/// (`20250301-142233-7f3a`).
pub fn new_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs();
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    let noise = (now.subsec_nanos() ^ std::process::id().rotate_left(16)) & 0xffff;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{noise:04x}",
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
        fs::create_dir_all(&self.dir).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot create `{}`: {e}", self.dir.display()),
            )
        })?;
        let path = self.dir.join(id);
        fs::create_dir(&path).map_err(|e| {
            let err = Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot create run `{id}`: {e}"),
            );
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::RunState,
                    format!("run `{id}` already exists"),
                )
                .with_hint("pick another --run-id, or --resume it")
            } else {
                err
            }
        })?;
        Ok(RunDir { path })
    }

    /// Opens an existing run.
    pub fn open(&self, id: &str) -> Result<RunDir, Error> {
        check_run_id(id)?;
        let path = self.dir.join(id);
        if !path.join(crate::checkpoint::FILE).is_file() {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::UnknownName,
                format!("no run `{id}`"),
            )
            .with_hint("`strata runs` lists the runs of this project"));
        }
        Ok(RunDir { path })
    }

    /// Every run, oldest first (ties by id).
    pub fn list(&self) -> Vec<RunSummary> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<RunSummary> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| {
                let id = e.file_name().to_str()?.to_string();
                check_run_id(&id).ok()?;
                Some(summary(id, &RunDir { path: e.path() }))
            })
            .collect();
        out.sort_by(|a, b| (a.started, &a.run_id).cmp(&(b.started, &b.run_id)));
        out
    }
}

fn summary(run_id: String, dir: &RunDir) -> RunSummary {
    match dir.load() {
        Ok(cp) => RunSummary {
            run_id,
            graph: Ok(cp.progress.graph),
            status: Some(cp.progress.status),
            steps: cp.progress.step,
            node: cp.progress.node,
            live: dir.is_locked(),
            started: cp.progress.started,
            updated: cp.progress.updated,
        },
        Err(e) => RunSummary {
            run_id,
            graph: Err(e.message.clone()),
            status: None,
            steps: 0,
            node: None,
            live: dir.is_locked(),
            started: 0,
            updated: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }
}
