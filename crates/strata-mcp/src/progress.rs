//! Progress of a long call, one note per step — its id, its state and how long it took —
//! sent from the thread that runs the call to the task that answers it, which turns each into
//! `notifications/progress` when the caller asked for progress.

use std::time::Instant;

use strata_graph::LogEvent;
use tokio::sync::mpsc::UnboundedSender;

/// One step's news.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    /// The step: a plan step's id, a directive action's id, a graph node's id.
    pub(crate) step: String,
    /// `started`, `completed`, `failed`, `skipped`, `waiting`.
    pub(crate) state: String,
    /// How long the step ran, in milliseconds (0 when it has not run yet).
    pub(crate) ms: u64,
}

impl Note {
    /// The note as the message of a progress notification: `step A completed in 12 ms`.
    pub(crate) fn message(&self) -> String {
        match self.state.as_str() {
            "started" | "waiting" => format!("step {} {}", self.step, self.state),
            _ => format!("step {} {} in {} ms", self.step, self.state, self.ms),
        }
    }
}

/// Where a run's notes go (nowhere when the caller did not ask for progress).
#[derive(Debug, Clone, Default)]
pub(crate) struct Notes(pub(crate) Option<UnboundedSender<Note>>);

impl Notes {
    fn send(&self, step: &str, state: &str, ms: u128) {
        if let Some(tx) = &self.0 {
            // The answering task outlives the run; a closed channel only means it was dropped.
            let _ = tx.send(Note {
                step: step.to_string(),
                state: state.to_string(),
                ms: u64::try_from(ms).unwrap_or(u64::MAX),
            });
        }
    }
}

impl strata_plans::Observer for Notes {
    fn on(&mut self, event: strata_plans::Event<'_>) {
        use strata_plans::Event;
        match event {
            Event::Started { step, .. } => self.send(&step.id, "started", 0),
            Event::Finished {
                step,
                record,
                elapsed,
            } => self.send(&step.id, record.status.name(), elapsed.as_millis()),
            Event::Retrying { step, .. } => self.send(&step.id, "retrying", 0),
            Event::Waiting { step, .. } => self.send(&step.id, "waiting", 0),
            Event::Rejected { .. } => {}
        }
    }
}

impl strata_directive::Observer for Notes {
    fn on(&self, event: strata_directive::Progress<'_>) {
        use strata_directive::Progress;
        match event {
            Progress::Started { id, .. } => self.send(id, "started", 0),
            Progress::Finished {
                id,
                record,
                elapsed,
                ..
            } => self.send(id, record.status.name(), elapsed.as_millis()),
            Progress::Hook(_) => {}
        }
    }
}

/// A graph run's notes: a node's step is timed from the event before it.
#[derive(Debug)]
pub(crate) struct GraphNotes {
    notes: Notes,
    since: Instant,
}

impl GraphNotes {
    /// Notes of a graph run starting now.
    pub(crate) fn new(notes: Notes) -> GraphNotes {
        GraphNotes {
            notes,
            since: Instant::now(),
        }
    }

    fn elapsed(&mut self) -> u128 {
        let ms = self.since.elapsed().as_millis();
        self.since = Instant::now();
        ms
    }
}

impl strata_graph::Observer for GraphNotes {
    fn on(&mut self, event: LogEvent) {
        match event {
            LogEvent::Step { node, .. } => {
                let ms = self.elapsed();
                self.notes.send(&node, "completed", ms);
            }
            LogEvent::Error { node, .. } => {
                let ms = self.elapsed();
                self.notes.send(&node, "failed", ms);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_says_the_step_its_state_and_its_time() {
        let note = |state: &str, ms| Note {
            step: "A".into(),
            state: state.into(),
            ms,
        };
        assert_eq!(note("completed", 12).message(), "step A completed in 12 ms");
        assert_eq!(note("started", 0).message(), "step A started");
    }
}
