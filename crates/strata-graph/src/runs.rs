//! The graph runs of a project (`.strata/runs/`, see `strata-runs`): the listing behind
//! `strata runs`.

use strata_runs::{RunDir, RunStore};

use crate::checkpoint::{Checkpoints, Status};

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

/// The graph runs of a [`RunStore`].
pub trait GraphRuns {
    /// Every graph run, oldest first (ties by id); runs of other kinds (plans) are left out.
    fn list(&self) -> Vec<RunSummary>;
}

impl GraphRuns for RunStore {
    fn list(&self) -> Vec<RunSummary> {
        let mut out: Vec<RunSummary> = self
            .runs()
            .into_iter()
            .filter(|(_, dir)| matches!(dir.kind().as_deref(), None | Some("graph")))
            .map(|(id, dir)| summary(id, &dir))
            .collect();
        out.sort_by(|a, b| (a.started, &a.run_id).cmp(&(b.started, &b.run_id)));
        out
    }
}

/// The summary of graph run `run_id` in `dir`.
pub fn summary(run_id: String, dir: &RunDir) -> RunSummary {
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
            graph: Err(e.message().to_string()),
            status: None,
            steps: 0,
            node: None,
            live: dir.is_locked(),
            started: 0,
            updated: 0,
        },
    }
}
