//! A directive run recorded under `.strata/runs/<run-id>/`, as plan and graph runs are: its
//! checkpoint (`kind: directive`: the directive, its actions as they were when the run
//! started, status, times and each finished action's step record), replaced after every
//! action, its event log (`events.jsonl`: `run_started`, each `action_started`,
//! `action_finished` and `hook`, `run_finished`), and a copy of the directive's file as it was
//! when the run started (`directive.md`). Everything written is redacted. A directive run is
//! not resumed: its record is for `strata runs` and `strata view`.

use std::cell::RefCell;

use serde_json::{json, Value};
use strata_core::Error;
use strata_directive::{Observer, Progress, Report, Watch};
use strata_runs::{new_run_id, now, write_atomic, RunDir, RunLock, RunStore};

use crate::event_log::RunEvents;
use crate::App;

/// The `kind` of a directive run's checkpoint.
pub const DIRECTIVE_KIND: &str = "directive";

/// The copy of the directive's file a run keeps.
pub const DIRECTIVE_FILE: &str = "directive.md";

/// A directive run being recorded: its directory (locked while it runs), its event log and
/// its checkpoint so far.
pub(crate) struct DirectiveRecord<'w> {
    dir: RunDir,
    _lock: RunLock,
    state: RefCell<Recording>,
    inner: Watch<'w>,
}

/// What changes as the run goes: the event log and the checkpoint.
struct Recording {
    events: RunEvents,
    checkpoint: Value,
    /// The first checkpoint that could not be written (reported when the run ends).
    failed: Option<Error>,
}

/// What a directive run starts with.
pub(crate) struct DirectiveStart<'a> {
    /// The directive's name as shown.
    pub(crate) name: &'a str,
    /// Its file's text.
    pub(crate) text: &'a str,
    /// Its actions' ids and tools, in order.
    pub(crate) actions: Vec<(&'a str, &'a str)>,
    /// The tools it calls (their secrets are redacted).
    pub(crate) tools: &'a [&'a str],
}

impl<'w> DirectiveRecord<'w> {
    /// Creates a new run's directory for `start` (under a fresh run id), locked, with its
    /// first checkpoint, its copy of the directive and its first event; `inner` is told of
    /// every event after it is logged.
    pub(crate) fn open(
        app: &App,
        start: &DirectiveStart<'_>,
        inner: Watch<'w>,
    ) -> Result<DirectiveRecord<'w>, Error> {
        let run_id = new_run_id();
        let (dir, lock) = RunStore::new(&app.root).create_locked(&run_id)?;
        let mut events = RunEvents::open(app, &dir, start.tools)?;
        let started = now();
        let actions: Vec<Value> = start
            .actions
            .iter()
            .map(|(id, tool)| json!({"id": id, "tool": tool}))
            .collect();
        let mut checkpoint = json!({
            "kind": DIRECTIVE_KIND,
            "run_id": run_id,
            "directive": start.name,
            "status": "running",
            "started": started,
            "updated": started,
            "steps": actions.len(),
            "actions": actions,
            "records": [],
        });
        events.redact(&mut checkpoint);
        let mut text = Value::String(start.text.to_string());
        events.redact(&mut text);
        write_atomic(
            &dir.path,
            DIRECTIVE_FILE,
            text.as_str().unwrap_or_default().as_bytes(),
        )?;
        events.write(json!({"event": "run_started", "run_id": run_id, "directive": start.name}));
        let record = DirectiveRecord {
            dir,
            _lock: lock,
            state: RefCell::new(Recording {
                events,
                checkpoint,
                failed: None,
            }),
            inner,
        };
        record.save()?;
        Ok(record)
    }

    /// Replaces the run's checkpoint with the one so far, stamped now.
    fn save(&self) -> Result<(), Error> {
        let mut state = self.state.borrow_mut();
        state.checkpoint["updated"] = now().into();
        let bytes = serde_json::to_vec(&state.checkpoint).unwrap_or_default();
        self.dir.write_checkpoint(&bytes)
    }

    /// Ends the record with the run's outcome: its status (`failed` with the error when the
    /// run stopped on one), its last event and checkpoint; the first write that failed, if any.
    pub(crate) fn finish(self, outcome: Result<&Report, &Error>) -> Result<(), Error> {
        {
            let mut state = self.state.borrow_mut();
            let Recording {
                events, checkpoint, ..
            } = &mut *state;
            let mut end = json!({"event": "run_finished"});
            match outcome {
                Ok(report) => {
                    end["status"] = report.status.name().into();
                    end["stopped"] = json!(report.stopped);
                    // The actions that never ran (skipped once the run stopped) are
                    // recorded and logged as the report tells them.
                    let done = checkpoint["records"].as_array().map_or(0, Vec::len);
                    for (index, action) in report.actions.iter().enumerate().skip(done) {
                        let Some(record) = &action.record else {
                            continue;
                        };
                        events.write(json!({"event": "action_finished", "index": index,
                            "id": action.id, "tool": action.tool, "status": record.status.name(),
                            "elapsed_ms": 0, "error": record.message(), "stderr": null}));
                        let mut json = record.to_json();
                        events.redact(&mut json);
                        if let Some(kept) = checkpoint["records"].as_array_mut() {
                            kept.push(json);
                        }
                    }
                }
                Err(e) => {
                    end["status"] = "failed".into();
                    end["failure"] = e.to_json();
                }
            }
            events.redact(&mut end);
            for key in ["status", "stopped", "failure"] {
                if let Some(value) = end.get(key) {
                    checkpoint[key] = value.clone();
                }
            }
            events.write(end);
        }
        let saved = self.save();
        let state = self.state.into_inner();
        match state.failed {
            Some(e) => Err(e),
            None => saved.and(state.events.finish()),
        }
    }
}

impl Observer for DirectiveRecord<'_> {
    fn on(&self, event: Progress<'_>) {
        {
            let mut state = self.state.borrow_mut();
            state.events.write(event.to_json());
            if let Progress::Finished { record, .. } = event {
                let mut json = record.to_json();
                state.events.redact(&mut json);
                if let Some(records) = state.checkpoint["records"].as_array_mut() {
                    records.push(json);
                }
            }
        }
        if matches!(event, Progress::Finished { .. }) {
            if let Err(e) = self.save() {
                self.state.borrow_mut().failed.get_or_insert(e);
            }
        }
        self.inner.on(event);
    }
}
