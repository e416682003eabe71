//! The key each run mints its secret markers under (see [`crate::secret_marks`]).
//!
//! * A run with a directory under `.strata/runs/` (a plan or a graph run): derived from the
//!   user key ([`crate::keys`]), the run id and a random salt kept in the run's directory
//!   (`salt`), so a resume finds the same key, and a run made again under the same id — or a
//!   run directory copied, planted or edited — gets one that no earlier marker holds under.
//! * A run of its own with no record (a directive, a tool call): a new random key.
//! * The tasks of a workflow exported to Argo: derived from the workflow's uid, which every
//!   task is given and no caller knows before the workflow exists.
//! * Steps or parts of a run run by hand with `strata plan step` or `strata walk`: derived
//!   from the user key and what names the run.
//! * A unit of a run that another machine runs (a Ray task): the key its run sent with it.

use std::fs;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt;

use serde_json::Value;
use strata_core::secret_marks::{self, MarkKey};
use strata_core::{Error, ErrorKind, Layer};
use strata_runs::RunDir;

use crate::keys::Key;

/// The file of a run's directory holding its salt.
const SALT_FILE: &str = "salt";

/// A new random key: a run of its own, whose markers nothing outside it can hold.
pub fn fresh() -> MarkKey {
    MarkKey::from_bytes(Key::random().bytes())
}

/// The key of a run's markers from the seed every task of an exported workflow is given
/// (the workflow's uid).
pub fn seeded(seed: &str) -> MarkKey {
    MarkKey::from_bytes(
        Key::from_bytes([0; 32])
            .derive("strata workflow markers", &[seed.as_bytes()])
            .bytes(),
    )
}

/// The key of the markers of a run made of commands run by hand on this machine (`strata
/// plan step`, `strata walk` without a workflow's uid): derived from the user key and what
/// names the run (`parts`), so every command of it finds the same key; a new random key when
/// there is no user key.
pub fn local(parts: &[&[u8]]) -> MarkKey {
    match crate::keys::user_key() {
        Some(user) => MarkKey::from_bytes(user.derive("strata local run markers", parts).bytes()),
        None => fresh(),
    }
}

/// The key a unit of a run carries from the machine that runs the run (64 hex digits).
pub fn carried(text: &str) -> Result<MarkKey, Error> {
    MarkKey::from_hex(text).ok_or_else(|| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Request,
            "`marks` is not the marker key of a run (64 hex digits)",
        )
        .with_hint("pass on the `marks` the run's request holds, unchanged")
    })
}

/// The marker key of the run in `dir`, and whether it outlives this process (there is a user
/// key to derive it from; without one the key is new and its markers cannot be restored by a
/// resume).
pub fn of_run(dir: &RunDir) -> (MarkKey, bool) {
    let Some(user) = crate::keys::user_key() else {
        return (fresh(), false);
    };
    let Some(salt) = salt(dir) else {
        return (fresh(), false);
    };
    let key = user.derive(
        "strata run markers",
        &[dir.id().as_bytes(), salt.as_bytes()],
    );
    (MarkKey::from_bytes(key.bytes()), true)
}

/// Refuses to resume run `run_id` whose records (`recorded`) hold markers this process cannot
/// check (`durable` false: no user key), or a marker of the run whose variable is set nowhere:
/// its later steps would need the value, and strata never wrote it down.
pub fn require_restorable(
    app: &crate::App,
    recorded: &Value,
    run_id: &str,
    marks: &MarkKey,
    durable: bool,
) -> Result<(), Error> {
    if !durable && secret_marks::holds_marker(recorded) {
        return Err(Error::new(
            Layer::REQUEST,
            ErrorKind::RunState,
            format!(
                "resuming run `{run_id}` needs its secret markers checked, and there is no user key to check them with"
            ),
        )
        .with_hint(
            "strata keeps its key in $XDG_STATE_HOME/strata or ~/.local/state/strata: make that directory writable and private, then start the run again",
        ));
    }
    let mut environment = crate::secrets::environment(app.project());
    match secret_marks::markers_in(recorded, marks)
        .into_iter()
        .find(|name| environment(name).is_none())
    {
        Some(name) => Err(crate::secrets::unrestorable(
            &name,
            &format!("resuming run `{run_id}`"),
            Layer::REQUEST,
            ErrorKind::RunState,
        )),
        None => Ok(()),
    }
}

/// Refuses caller `values` given to a run that already exists (a resume) when they hold a
/// marker of that run: markers come from the run's own records, never from a caller, who
/// could otherwise copy one it was shown into a value a tool receives.
pub fn refuse_carried_markers(values: &Value, marks: &MarkKey, what: &str) -> Result<(), Error> {
    match secret_marks::markers_in(values, marks).first() {
        Some(name) => Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Forbidden,
            format!("{what} hold the secret marker of `{name}` minted by this run"),
        )
        .with_hint("a secret reaches a step through a reference to the step that printed it, never through a value")),
        None => Ok(()),
    }
}

/// The run's salt: read from its directory, or made there (32 random hex digits) when it has
/// none yet. `None` when it can be neither read nor made.
fn salt(dir: &RunDir) -> Option<String> {
    let path = dir.path.join(SALT_FILE);
    let read = || -> Option<String> {
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(&path)
            .ok()?;
        let mut text = String::new();
        file.take(65).read_to_string(&mut text).ok()?;
        let text = text.trim_end().to_string();
        (!text.is_empty() && text.len() <= 64).then_some(text)
    };
    if let Some(salt) = read() {
        return Some(salt);
    }
    let made = strata_core::hex::to_hex(&Key::random().bytes()[..16]);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    file.write_all(made.as_bytes()).ok()?;
    file.sync_all().ok()?;
    Some(made)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_keeps_its_key_and_a_run_made_again_gets_another() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir {
            path: tmp.path().join("r1"),
        };
        fs::create_dir(&dir.path).unwrap();
        let Some(_) = crate::keys::user_key() else {
            return; // no user key on this machine: nothing durable to test
        };
        let (first, durable) = of_run(&dir);
        assert!(durable);
        assert_eq!(of_run(&dir).0, first);
        fs::remove_dir_all(&dir.path).unwrap();
        fs::create_dir(&dir.path).unwrap();
        assert_ne!(of_run(&dir).0, first);
    }

    #[test]
    fn seeds_and_carried_keys() {
        assert_eq!(seeded("uid-1"), seeded("uid-1"));
        assert_ne!(seeded("uid-1"), seeded("uid-2"));
        let key = fresh();
        assert_eq!(carried(&key.to_hex()).unwrap(), key);
        assert_eq!(
            carried("nope").unwrap_err().message(),
            "`marks` is not the marker key of a run (64 hex digits)"
        );
    }
}
