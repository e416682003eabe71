//! Run storage shared by every kind of recorded run (graph runs, plan runs).
//!
//! A project's runs live under `.strata/runs/<run-id>/` ([`RunStore`]). Each run directory
//! ([`RunDir`]) holds one `checkpoint.json`, replaced atomically after every step
//! ([`write_atomic`]), its event log `events.jsonl` ([`EventLog`]), and a `lock` file while a
//! process runs it ([`RunLock`]). What a
//! checkpoint holds belongs to the kind of run; its `kind` field names the kind (absent in
//! graph checkpoints, which came first).

mod atomic;
mod cadence;
mod events;
mod lock;
mod store;

pub use atomic::{fingerprint, now, write_atomic};
pub use cadence::{Cadence, CheckpointEvery, CHECKPOINT_EVERY_FORMS, MAX_INTERVAL};
pub use events::{now_ms, EventLines, EventLog, EVENTS_FILE};
pub use lock::{RunLock, LOCK_FILE};
pub use store::{
    check_run_id, new_run_id, utc_text, RunDir, RunStore, CHECKPOINT_FILE, MAX_ID_LEN, RUNS_DIR,
};
