//! Run slots: the working directory each run has to itself on a node that runs a project's
//! tasks from an unpacked copy of it — a Ray worker node, where Ray's copy of the uploaded
//! project (its *package*) is shared by every run, and by every project of the same content.
//!
//! A slot is a copy of the package beside it (`strata-slot-<package>-<id>`) that keeps its
//! name for good. A run's first task on the node claims a spare slot, or copies the package
//! into a new one, under a lock of the run's (its other tasks wait for it); a claim is a file
//! created exclusively (`.<slot>.claimed`), and a new slot appears whole (renamed into place).
//! The link `strata-run-<run>` names the run's slot. When the run ends, its slot becomes a
//! spare again only while it holds exactly what the package holds, and only [`SPARES`] of them
//! per package; a slot the run changed in any way is removed. So a run never sees what
//! another run wrote, and a process may keep what it opened in a slot across runs.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};

use strata_core::{Error, ErrorKind, Layer};
use strata_runs::check_run_id;

use crate::tree_copy::{copy_tree, Unusual};

/// The most spare slots kept per package on a node (one per run that may start at once).
pub const SPARES: usize = 2;

/// How a slot's name starts, before its package's name.
const SLOT: &str = "strata-slot-";

/// How the link naming a run's slot starts, before the run id.
const LINK: &str = "strata-run-";

/// The slots of one package on this node.
#[derive(Debug, Clone)]
pub struct RunSlots {
    package: PathBuf,
    parent: PathBuf,
    name: String,
}

/// A run's slot as the run left it ([`RunSlots::leave`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftSlot {
    /// The slot.
    pub slot: PathBuf,
    /// True when it stays as a spare (what was opened there is still valid), false when it
    /// was removed.
    pub kept: bool,
}

impl RunSlots {
    /// The slots of the package at `package` (a directory with a parent).
    pub fn of(package: &Path) -> Result<RunSlots, Error> {
        let (Some(parent), Some(name)) = (package.parent(), package.file_name()) else {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!(
                    "`{}` cannot hold run slots: it has no parent directory",
                    package.display()
                ),
            ));
        };
        Ok(RunSlots {
            package: package.to_path_buf(),
            parent: parent.to_path_buf(),
            name: name.to_string_lossy().into_owned(),
        })
    }

    /// The slot of run `run`: the one its link names, else a spare now claimed, else a new
    /// copy of the package — one per run, whichever of its tasks asks first.
    pub fn enter(&self, run: &str) -> Result<PathBuf, Error> {
        check_run_id(run)?;
        let failed = |e: io::Error| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot make run {run}'s working directory: {e}"),
            )
            .with_source(e)
        };
        let link = self.link(run);
        if let Some(slot) = self.linked(&link) {
            return Ok(slot);
        }
        let lock = File::create(self.lock(run)).map_err(failed)?;
        lock.lock().map_err(failed)?;
        if let Some(slot) = self.linked(&link) {
            return Ok(slot);
        }
        let slot = match self.claimed_spare() {
            Some(slot) => slot,
            None => self.new_slot().map_err(failed)?,
        };
        symlink(slot.file_name().unwrap_or_default(), &link).map_err(failed)?;
        Ok(slot)
    }

    /// Ends run `run`'s slot: a spare again when the run left it as it was made (its
    /// `.strata`, what strata kept for the run there, removed first), else removed; also
    /// removes the spares of packages no longer on the node. Best effort: None when the run
    /// has no slot here.
    pub fn leave(&self, run: &str) -> Option<LeftSlot> {
        check_run_id(run).ok()?;
        let link = self.link(run);
        let slot = self.linked(&link);
        let _ = fs::remove_file(&link);
        let left = slot.map(|slot| {
            let kept = self.kept_as_spare(&slot);
            if !kept {
                let _ = fs::remove_dir_all(&slot);
            }
            let _ = fs::remove_file(claim(&slot));
            LeftSlot { slot, kept }
        });
        let _ = fs::remove_file(self.lock(run));
        self.forget_stale_slots();
        left
    }

    fn link(&self, run: &str) -> PathBuf {
        self.parent.join(format!("{LINK}{run}"))
    }

    fn lock(&self, run: &str) -> PathBuf {
        self.parent.join(format!(".{LINK}{run}.lock"))
    }

    /// The slot `link` names, or None when there is no such link.
    fn linked(&self, link: &Path) -> Option<PathBuf> {
        fs::read_link(link).ok().map(|name| self.parent.join(name))
    }

    /// The package's slots, claimed or spare, sorted.
    fn slots(&self) -> Vec<PathBuf> {
        let prefix = format!("{SLOT}{}-", self.name);
        let mut out: Vec<PathBuf> = fs::read_dir(&self.parent)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        out.sort();
        out
    }

    /// A spare slot, now claimed (a spare another process claimed first is skipped).
    fn claimed_spare(&self) -> Option<PathBuf> {
        for slot in self.slots() {
            if create_new(&claim(&slot)).is_err() {
                continue;
            }
            if slot.is_dir() {
                return Some(slot);
            }
            let _ = fs::remove_file(claim(&slot)); // removed meanwhile by its last run's end
        }
        None
    }

    /// A new slot holding a copy of the package, claimed before it appears; a copy that
    /// fails (a full disk, say) leaves neither half a copy nor a claim behind.
    fn new_slot(&self) -> io::Result<PathBuf> {
        let slot = self
            .parent
            .join(format!("{SLOT}{}-{}", self.name, random_hex()?));
        create_new(&claim(&slot))?;
        let part = self.parent.join(format!(
            ".{}.{}",
            slot.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        let copied = fs::create_dir(&part)
            .and_then(|()| copy_tree(&self.package, &part, &[], Unusual::Refuse))
            .and_then(|()| fs::rename(&part, &slot));
        if let Err(e) = copied {
            let _ = fs::remove_dir_all(&part);
            let _ = fs::remove_file(claim(&slot));
            return Err(e);
        }
        Ok(slot)
    }

    /// True when `slot`, claimed, stays as a spare: fewer than [`SPARES`] spares are kept,
    /// and, its `.strata` removed (the package never holds one), it holds what the package
    /// holds.
    fn kept_as_spare(&self, slot: &Path) -> bool {
        let spares = self
            .slots()
            .into_iter()
            .filter(|s| s != slot && !claim(s).exists())
            .count();
        if !slot.is_dir() || spares >= SPARES || self.package.join(".strata").exists() {
            return false;
        }
        let _ = fs::remove_dir_all(slot.join(".strata"));
        same_tree(slot, &self.package)
    }

    /// Removes the spare slots of packages no longer on this node.
    fn forget_stale_slots(&self) {
        for entry in fs::read_dir(&self.parent).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(SLOT) else {
                continue;
            };
            let package = rest.rsplit_once('-').map_or("", |(p, _)| p);
            let slot = entry.path();
            if slot.is_dir() && !self.parent.join(package).is_dir() && !claim(&slot).exists() {
                let _ = fs::remove_dir_all(&slot);
            }
        }
    }
}

/// The file whose existence says `slot` is some run's.
fn claim(slot: &Path) -> PathBuf {
    let name = slot.file_name().unwrap_or_default().to_string_lossy();
    slot.with_file_name(format!(".{name}.claimed"))
}

/// Creates the empty file `path`, failing when it exists.
fn create_new(path: &Path) -> io::Result<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(drop)
}

/// 16 random hex digits, from the system's random source.
fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// True when `copy` holds exactly what `package` holds: the same entries, each of the same
/// kind and mode; files of the same bytes and modification time (a copy keeps the
/// package's), linked nowhere else; links to the same targets.
fn same_tree(copy: &Path, package: &Path) -> bool {
    let (Ok(ours), Ok(theirs)) = (entries(copy), entries(package)) else {
        return false;
    };
    if !ours.keys().eq(theirs.keys()) {
        return false;
    }
    theirs.iter().all(|(name, (path, a))| {
        let (mine, b) = &ours[name];
        if a.mode() != b.mode() {
            return false;
        }
        let kind = a.file_type();
        if kind.is_symlink() {
            fs::read_link(path).ok() == fs::read_link(mine).ok()
        } else if kind.is_dir() {
            same_tree(mine, path)
        } else if kind.is_file() {
            (b.nlink(), b.size(), b.mtime(), b.mtime_nsec())
                == (1, a.size(), a.mtime(), a.mtime_nsec())
                && same_bytes(path, mine).unwrap_or(false)
        } else {
            false
        }
    })
}

/// The entries of the directory `dir` by name: their paths and what `lstat` says.
fn entries(dir: &Path) -> io::Result<BTreeMap<std::ffi::OsString, (PathBuf, fs::Metadata)>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let meta = fs::symlink_metadata(&path)?;
        out.insert(entry.file_name(), (path, meta));
    }
    Ok(out)
}

/// True when the files `a` and `b` hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut x, mut y) = (File::open(a)?, File::open(b)?);
    let (mut p, mut q) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = read_full(&mut x, &mut p)?;
        let m = read_full(&mut y, &mut q)?;
        if p[..n] != q[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Reads into `buf` until it is full or the file ends; the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use std::fs::FileTimes;

    use super::*;

    /// A package as Ray unpacks one (a tool, a script, a link) in a node's directory.
    fn package(node: &Path) -> PathBuf {
        let root = node.join("_ray_pkg_0123abcd");
        fs::create_dir_all(root.join("tools/t")).unwrap();
        fs::write(root.join("tools/t/a.yaml"), "config: {command: echo}\n").unwrap();
        fs::write(root.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        symlink("tools/t/a.yaml", root.join("link.yaml")).unwrap();
        root
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_copy_keeps_what_a_spare_is_compared_by_and_an_unchanged_run_leaves_a_spare() {
        let node = tempfile::tempdir().unwrap();
        let pkg = package(node.path());
        let slots = RunSlots::of(&pkg).unwrap();
        let slot = slots.enter("r1").unwrap();
        assert!(same_tree(&slot, &pkg));
        assert_eq!(slots.enter("r1").unwrap(), slot);
        fs::create_dir(slot.join(".strata")).unwrap(); // what strata kept for the run
        let left = slots.leave("r1").unwrap();
        assert_eq!(
            left,
            LeftSlot {
                slot: slot.clone(),
                kept: true
            }
        );
        assert!(slot.is_dir() && !slot.join(".strata").exists());
        assert_eq!(slots.enter("r2").unwrap(), slot);
    }

    #[test]
    fn a_changed_byte_of_the_same_size_and_time_is_seen() {
        let node = tempfile::tempdir().unwrap();
        let pkg = package(node.path());
        let slots = RunSlots::of(&pkg).unwrap();
        let slot = slots.enter("r1").unwrap();
        let file = slot.join("run.sh");
        let time = fs::metadata(&file).unwrap().modified().unwrap();
        fs::write(&file, "#!/bin/sh\necho ho\n").unwrap();
        File::open(&file)
            .unwrap()
            .set_times(FileTimes::new().set_modified(time))
            .unwrap();
        assert!(!slots.leave("r1").unwrap().kept);
        assert!(!slot.exists());
    }

    #[test]
    fn a_copy_that_fails_leaves_neither_half_a_slot_nor_a_claim() {
        let node = tempfile::tempdir().unwrap();
        let pkg = package(node.path());
        let _socket = std::os::unix::net::UnixListener::bind(pkg.join("zz.sock")).unwrap();
        let err = RunSlots::of(&pkg).unwrap().enter("r1").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io);
        assert!(
            err.message()
                .starts_with("cannot make run r1's working directory: `")
                && err
                    .message()
                    .ends_with("zz.sock` is not a file, a folder or a link"),
            "{}",
            err.message()
        );
        assert_eq!(
            names(node.path()),
            [".strata-run-r1.lock", "_ray_pkg_0123abcd"]
        );
    }

    #[test]
    fn a_run_id_that_names_a_path_is_refused() {
        let node = tempfile::tempdir().unwrap();
        let slots = RunSlots::of(&package(node.path())).unwrap();
        let err = slots.enter("../x").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert_eq!(err.message(), "invalid run id `../x`");
        assert_eq!(slots.leave("../x"), None);
        assert_eq!(names(node.path()), ["_ray_pkg_0123abcd"]);
    }
}
