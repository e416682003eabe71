//! Atomic file replacement — a reader (or a resume after `SIGKILL`) sees either the previous
//! file or the new one, never a torn file — and the fingerprint that ties a run to its file.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use strata_core::Error;

/// Unix seconds now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A fingerprint of a file's text (64-bit FNV-1a, in hex): a run resumes only on the text
/// it started with.
pub fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Writes `bytes` to `dir/name` through a synced temporary file and a rename, then syncs
/// the directory. Nothing is written through a link: one at the temporary's name (or a
/// temporary a killed write left) is removed and the temporary made anew, and the rename
/// replaces a link at `name` itself, not what it points to.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let tmp = dir.join(format!("{name}.tmp"));
    let target = dir.join(name);
    let create = || File::options().write(true).create_new(true).open(&tmp);
    let mut file = match create() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            fs::remove_file(&tmp).and_then(|()| create())
        }
        made => made,
    }
    .map_err(|e| Error::io("create", &tmp, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io("write", &tmp, e))?;
    drop(file);
    fs::rename(&tmp, &target).map_err(|e| Error::io("replace", &target, e))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("sync", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::ErrorKind;

    #[test]
    fn fingerprints_are_fnv1a() {
        assert_eq!(fingerprint(""), "cbf29ce484222325");
        assert_eq!(fingerprint("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        write_atomic(tmp.path(), "a.json", b"1").unwrap();
        write_atomic(tmp.path(), "a.json", b"22").unwrap();
        assert_eq!(fs::read(tmp.path().join("a.json")).unwrap(), b"22");
        assert!(!tmp.path().join("a.json.tmp").exists());
        let missing = tmp.path().join("missing");
        let e = write_atomic(&missing, "a.json", b"1").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io);
        assert_eq!(
            e.message(),
            format!(
                "cannot create `{}`: No such file or directory (os error 2)",
                missing.join("a.json.tmp").display()
            )
        );
    }

    /// A link at the temporary's name or at the file's own is replaced, never written
    /// through: what it points to is left as it was.
    #[test]
    fn never_writes_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, outside) = (tmp.path().join("dir"), tmp.path().join("outside"));
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("kept"), "kept").unwrap();
        std::os::unix::fs::symlink(outside.join("kept"), dir.join("a.json")).unwrap();
        std::os::unix::fs::symlink(outside.join("made"), dir.join("a.json.tmp")).unwrap();
        write_atomic(&dir, "a.json", b"new").unwrap();
        assert_eq!(fs::read(dir.join("a.json")).unwrap(), b"new");
        assert!(fs::symlink_metadata(dir.join("a.json"))
            .unwrap()
            .file_type()
            .is_file());
        assert_eq!(fs::read(outside.join("kept")).unwrap(), b"kept");
        assert!(!outside.join("made").exists());
        assert!(fs::symlink_metadata(dir.join("a.json.tmp")).is_err());
    }
}
