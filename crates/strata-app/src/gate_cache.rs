//! The gate's verdicts on disk: a tool admitted once is not checked again by the next process
//! while nothing its check reads has changed.
//!
//! An admission is a file `.strata/gate/<key>` in the project holding the tag of its key
//! under the gate's key (HMAC-SHA256 under a key derived from the user key, see
//! [`crate::keys`], which no project holds): the verdict and what it judged kept together, and
//! authenticated. A file that anyone else writes there — by hand, in a commit, by a copy of
//! another project — lacks the tag, so it is not an admission, and the tool is checked. The
//! key is a SHA-256 of
//! every input of the check of a tool: its id; each file of its executor chain (its path and
//! the text it was compiled from); the project's `.env`; the settings in force, which are all
//! that `strata.yaml` and the `STRATA_*` variables decide (limits included); and the binary
//! (its version, and the identity — device, inode, size, modification time — of the
//! executable, so a rebuilt binary checks again). A change to any of them is a new key, so a
//! stale admission is never found; only admissions are stored (a refused tool is checked
//! every time, and reports its errors). Without a user key nothing is stored or read.
//!
//! The directory is confined like every write of the project: `.strata` or `.strata/gate`
//! leading outside the project (a symbolic link) is neither read nor written. A project that
//! cannot be written (read-only) still runs: the admission is then not stored. The
//! directory holds at most [`MAX_ENTRIES`] admissions; past that it is emptied.

use std::fs;
use std::io::{ErrorKind as IoKind, Read as _, Write as _};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use strata_project::{CompiledTool, Project};

use crate::keys::Key;

/// The directory of admissions, relative to the project root.
pub const GATE_DIR: &str = ".strata/gate";

/// The admissions kept at most; recording one more empties the directory first.
pub const MAX_ENTRIES: usize = 1024;

/// What names the format of a key: a new one makes every stored admission unreachable.
const KEY_FORMAT: &[u8] = b"strata gate 2";

/// The length of an admission's tag (HMAC-SHA256 in hex).
const TAG_BYTES: u64 = 64;

/// The key of the check of `tool` (compiled as tool `id` of `project`): `None` when an input
/// cannot be read (the tool is then checked, and nothing stored).
pub fn key(project: &Project, id: &str, tool: &CompiledTool) -> Option<String> {
    let mut h = Sha256::new();
    part(&mut h, KEY_FORMAT);
    part(&mut h, binary_identity().as_bytes());
    part(&mut h, id.as_bytes());
    for link in &tool.chain.links {
        part(&mut h, link.id.as_bytes());
        part(&mut h, link.path.as_os_str().as_encoded_bytes());
        part(&mut h, link.doc.text.as_bytes());
    }
    match project.dotenv_text().ok()? {
        Some(text) => {
            part(&mut h, b"env");
            part(&mut h, text.as_bytes());
        }
        None => part(&mut h, b"no env"),
    }
    part(&mut h, format!("{:?}", project.settings).as_bytes());
    part(&mut h, format!("{:?}", project.limits).as_bytes());
    Some(strata_core::hex::to_hex(&h.finalize()))
}

/// Adds `bytes` to the hash with its length first, so that no two inputs run together.
fn part(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// The binary's version and the identity of its executable (once per process).
fn binary_identity() -> &'static str {
    static IDENTITY: OnceLock<String> = OnceLock::new();
    IDENTITY.get_or_init(|| {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| fs::metadata(p).ok())
            .map(|m| {
                format!(
                    "{}:{}:{}:{}.{}",
                    m.dev(),
                    m.ino(),
                    m.size(),
                    m.mtime(),
                    m.mtime_nsec()
                )
            })
            .unwrap_or_default();
        format!("{} {exe}", env!("CARGO_PKG_VERSION"))
    })
}

/// The key admissions are tagged with: `None` without a user key.
fn gate_key() -> Option<Key> {
    crate::keys::user_key().map(|k| k.derive("gate admission", &[]))
}

/// Whether `key` was admitted in `project`: its entry holds the tag of `key` under the
/// gate's key (an entry under a directory leading outside the project does not count).
pub fn admitted(project: &Project, key: &str) -> bool {
    let Some(gate) = gate_key() else {
        return false;
    };
    let entry = project.root.join(GATE_DIR).join(key);
    let Ok(real) = project.confine(&entry) else {
        return false;
    };
    let Ok(file) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(real)
    else {
        return false;
    };
    let mut tag = String::new();
    let read = file.take(TAG_BYTES + 1).read_to_string(&mut tag);
    read.is_ok() && gate.holds(key.as_bytes(), &tag)
}

/// Stores the admission of `key`, when there is a user key, the project can be written and
/// its state directory lies inside it; any failure leaves it unstored, silently (the next
/// run checks again).
pub fn remember(project: &Project, key: &str) {
    let Some(gate) = gate_key() else {
        return;
    };
    let Some(dir) = confined_dir(project) else {
        return;
    };
    if fs::read_dir(&dir).is_ok_and(|entries| entries.count() >= MAX_ENTRIES) {
        if let Ok(entries) = fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    // Written whole into a new file of its own, then renamed over whatever stood there (a
    // forged entry, a link: the name is replaced, nothing is written through it).
    let Ok(mut file) = tempfile::Builder::new().prefix(".new").tempfile_in(&dir) else {
        return;
    };
    if file.write_all(gate.tag(key.as_bytes()).as_bytes()).is_ok() {
        let _ = file.persist(dir.join(key));
    }
}

/// `.strata/gate`, created as needed, where it really is: `None` when a part of it leads
/// outside the project or cannot be created.
fn confined_dir(project: &Project) -> Option<PathBuf> {
    let mut rel = PathBuf::new();
    for part in GATE_DIR.split('/') {
        rel.push(part);
        let path = project.root.join(&rel);
        match fs::symlink_metadata(&path) {
            Ok(_) => {
                project.confine(&path).ok()?;
            }
            Err(e) if e.kind() == IoKind::NotFound => match fs::create_dir(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == IoKind::AlreadyExists => {}
                Err(_) => return None,
            },
            Err(_) => return None,
        }
    }
    let real = project.confine(&project.root.join(GATE_DIR)).ok()?;
    is_dir(&real).then_some(real)
}

fn is_dir(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::App;
    use strata_check::Target;

    const TOOL: &str = "executor: runtimes/subprocess\nconfig: {command: \"true\"}\n";

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools");
        fs::create_dir_all(tools.join("runtimes")).unwrap();
        fs::write(
            tools.join("runtimes/subprocess.yaml"),
            "config: {args: []}\n",
        )
        .unwrap();
        fs::write(tools.join("t.yaml"), TOOL).unwrap();
        dir
    }

    fn key_of(root: &Path) -> String {
        let app = App::at(root).unwrap();
        let tool = app.compiled("t").unwrap();
        key(app.project(), "t", &tool).unwrap()
    }

    fn entries(root: &Path) -> Vec<String> {
        fs::read_dir(root.join(GATE_DIR))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn an_admission_is_stored_and_found_by_the_next_process() {
        let dir = project();
        let app = App::at(dir.path()).unwrap();
        app.admit(Target::Tool("t"), "t").unwrap();
        let key = key_of(dir.path());
        assert_eq!(entries(dir.path()), std::slice::from_ref(&key));
        let fresh = App::at(dir.path()).unwrap();
        assert!(admitted(fresh.project(), &key));
    }

    #[test]
    fn every_input_is_in_the_key() {
        let dir = project();
        let first = key_of(dir.path());
        assert_eq!(key_of(dir.path()), first, "the key is stable");
        fs::write(dir.path().join(".env"), "A=1\n").unwrap();
        let with_env = key_of(dir.path());
        assert_ne!(with_env, first, ".env");
        fs::write(dir.path().join("strata.yaml"), "strict: true\n").unwrap();
        let with_settings = key_of(dir.path());
        assert_ne!(with_settings, with_env, "strata.yaml");
        fs::write(
            dir.path().join("tools/runtimes/subprocess.yaml"),
            "config: {args: [x]}\n",
        )
        .unwrap();
        let with_runtime = key_of(dir.path());
        assert_ne!(with_runtime, with_settings, "a file of the chain");
    }

    #[test]
    fn a_project_that_cannot_be_written_still_runs() {
        let dir = project();
        // `.strata` a plain file: the state directory cannot be made.
        fs::write(dir.path().join(".strata"), "").unwrap();
        let app = App::at(dir.path()).unwrap();
        app.admit(Target::Tool("t"), "t").unwrap();
        assert!(dir.path().join(".strata").is_file());
    }

    #[test]
    fn a_state_directory_leading_outside_is_neither_written_nor_read() {
        let dir = project();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".strata")).unwrap();
        let app = App::at(dir.path()).unwrap();
        app.admit(Target::Tool("t"), "t").unwrap();
        assert!(fs::read_dir(outside.path()).unwrap().next().is_none());
        // An admission planted outside is not found.
        let key = key_of(dir.path());
        fs::create_dir_all(outside.path().join("gate")).unwrap();
        fs::write(outside.path().join("gate").join(&key), "").unwrap();
        assert!(!admitted(app.project(), &key));
    }
}
