//! The one key strata keeps for a user, and the keys derived from it.
//!
//! The user key is 32 random bytes, made on first use in the user's state directory —
//! `$XDG_STATE_HOME/strata/key`, else `$HOME/.local/state/strata/key` — written once (mode
//! 0600, in a directory of mode 0700) and never shown. A file that another user owns, or that
//! others may read or write, is not used. Every key strata needs is derived from it: the gate's
//! key (admissions stored in a project are authenticated with it) and each run's marker key.
//! No key is ever written into a project, so nothing a project holds — committed, copied or
//! written there by someone else — can forge an admission or a secret marker.
//!
//! Without a user key (no home, a read-only or unsafe state directory), strata still runs:
//! the gate checks every time instead of remembering, and a run's markers cannot be
//! restored by a later process.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use strata_core::hex::{from_hex, to_hex};

/// The name of the key file in the state directory.
const KEY_FILE: &str = "key";

/// A 32-byte key derived from the user key (or made at random): never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// The key made of `bytes`.
    pub const fn from_bytes(bytes: [u8; 32]) -> Key {
        Key(bytes)
    }

    /// A new random key (from the operating system's generator).
    pub fn random() -> Key {
        let mut bytes = [0u8; 32];
        // The kernel's generator does not fail on the systems strata runs on; if it ever
        // did, a key made of the time and the process id is still unique to this run, and
        // the run only loses protection against a caller guessing it.
        if getrandom::fill(&mut bytes).is_err() {
            let fallback = format!("{:?} {}", std::time::SystemTime::now(), std::process::id());
            bytes = Key([0; 32]).derive("fallback", &[fallback.as_bytes()]).0;
        }
        Key(bytes)
    }

    /// The key's bytes.
    pub fn bytes(&self) -> [u8; 32] {
        self.0
    }

    /// The key derived from this one for `purpose` and `parts` (HMAC-SHA256 over the
    /// purpose and each part with its length first, so no two inputs run together).
    pub fn derive(&self, purpose: &str, parts: &[&[u8]]) -> Key {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any size");
        for part in std::iter::once(purpose.as_bytes()).chain(parts.iter().copied()) {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        Key(mac.finalize().into_bytes().into())
    }

    /// The tag of `message` under this key, in hex (HMAC-SHA256).
    pub fn tag(&self, message: &[u8]) -> String {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any size");
        mac.update(message);
        to_hex(&mac.finalize().into_bytes())
    }

    /// Whether `tag` (hex) is the tag of `message`, compared in constant time.
    pub fn holds(&self, message: &[u8], tag: &str) -> bool {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any size");
        mac.update(message);
        from_hex(tag).is_some_and(|t| mac.verify_slice(&t).is_ok())
    }
}

/// The user key, read or made once per process; `None` where it cannot be kept safely.
pub fn user_key() -> Option<&'static Key> {
    static KEY: OnceLock<Option<Key>> = OnceLock::new();
    KEY.get_or_init(|| load_or_make(&state_dir()?.join(KEY_FILE)))
        .as_ref()
}

/// The user's state directory for strata.
fn state_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| Path::new(v).is_absolute()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".local/state")
        }
    };
    Some(base.join("strata"))
}

/// The key in `path`, made there first when there is none.
fn load_or_make(path: &Path) -> Option<Key> {
    if let Some(key) = read_key(path) {
        return Some(key);
    }
    let dir = path.parent()?;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .ok()?;
    if !private_dir(dir) {
        return None;
    }
    // Written whole into a new file, then linked into place: a reader never sees half a
    // key, and of two processes making it at once the first link wins.
    let mut file = tempfile::Builder::new()
        .prefix(".key")
        .permissions(fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)
        .ok()?;
    file.write_all(to_hex(&Key::random().0).as_bytes()).ok()?;
    file.as_file().sync_all().ok()?;
    let _ = file.persist_noclobber(path);
    read_key(path)
}

/// The key a file holds, when it is the user's own, private and well-formed.
fn read_key(path: &Path) -> Option<Key> {
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_nofollow())
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.uid() != effective_uid() || meta.mode() & 0o077 != 0 {
        return None;
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(&mut file, 65), &mut text).ok()?;
    let bytes = from_hex(text.trim_end())?;
    Some(Key(bytes.try_into().ok()?))
}

/// Whether `dir` is the user's own and closed to others.
fn private_dir(dir: &Path) -> bool {
    fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == effective_uid() && m.mode() & 0o077 == 0)
}

fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

fn libc_nofollow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/strata/key");
        let first = load_or_make(&path).unwrap();
        assert_eq!(load_or_make(&path), Some(first.clone()));
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(
            fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777,
            0o700
        );
        assert_eq!(fs::read_to_string(&path).unwrap().len(), 64);
    }

    #[test]
    fn a_key_others_can_read_or_a_link_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("strata/key");
        let key = load_or_make(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(read_key(&path), None);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_key(&path), Some(key));
        let link = dir.path().join("strata/link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read_key(&link), None);
        // A shared state directory is not written to.
        let open = dir.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(load_or_make(&open.join("key")), None);
    }

    #[test]
    fn derived_keys_differ_by_purpose_and_parts_and_tags_verify() {
        let key = Key([3; 32]);
        let a = key.derive("gate", &[b"x"]);
        assert_ne!(a, key.derive("run", &[b"x"]));
        assert_ne!(a, key.derive("gate", &[b"x", b""]));
        assert_ne!(
            key.derive("g", &[b"ab", b"c"]),
            key.derive("g", &[b"a", b"bc"])
        );
        let tag = a.tag(b"message");
        assert!(a.holds(b"message", &tag));
        assert!(!a.holds(b"messagf", &tag));
        assert!(!key.holds(b"message", &tag));
        assert!(!a.holds(b"message", "zz"));
        assert_eq!(format!("{a:?}"), "Key(..)");
    }
}
