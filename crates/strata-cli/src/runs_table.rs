//! The runs of a project as rows: one per graph, plan or directive run, with its status, steps and
//! times, for `strata runs`, `runs show` and `runs prune`.

use std::collections::HashSet;

use serde_json::{json, Value};
use strata_app::DIRECTIVE_KIND;
use strata_graph::{GraphRuns, RunDir, RunStore, RunSummary};
use strata_plans::checkpoint::{Checkpoint, RunStatus, KIND};

/// One run of the listing: its columns, its JSON form, when it started and was last updated.
pub(crate) struct Row {
    cells: [String; 5],
    /// The run as `strata runs --json` lists it.
    pub(crate) json: Value,
    started: u64,
    /// Unix seconds of its last checkpoint.
    pub(crate) updated: u64,
}

impl Row {
    /// The run id.
    pub(crate) fn id(&self) -> &str {
        &self.cells[0]
    }

    /// What it runs: a graph id, or `plan:<file>`.
    pub(crate) fn target(&self) -> &str {
        &self.cells[1]
    }

    /// Its status as listed (`running`, `interrupted`, `completed`, …).
    pub(crate) fn status(&self) -> &str {
        &self.cells[2]
    }
}

fn graph_row(r: &RunSummary) -> Row {
    let graph = match &r.graph {
        Ok(g) => g.clone(),
        Err(why) => format!("(unreadable: {why})"),
    };
    Row {
        cells: [
            r.run_id.clone(),
            graph,
            r.shown_status().to_string(),
            r.steps.to_string(),
            r.node.clone().unwrap_or_else(|| "-".into()),
        ],
        json: json!({
            "run_id": r.run_id,
            "graph": r.graph.as_ref().ok(),
            "error": r.graph.as_ref().err(),
            "status": r.shown_status(),
            "steps": r.steps,
            "next": r.node,
            "started": r.started,
            "updated": r.updated,
        }),
        started: r.started,
        updated: r.updated,
    }
}

/// A plan run's line: `plan:<file>` in the GRAPH column, the steps finished, no next node.
fn plan_row(run_id: String, cp: &Result<Checkpoint, String>, live: bool) -> Row {
    let (name, status, steps, started, updated) = match cp {
        Ok(cp) => {
            let status = match cp.status {
                RunStatus::Running if !live => "interrupted",
                s => s.name(),
            };
            let name = format!("plan:{}", cp.plan);
            (name, status, cp.records.len(), cp.started, cp.updated)
        }
        Err(why) => (format!("(unreadable: {why})"), "unknown", 0, 0, 0),
    };
    Row {
        json: json!({
            "run_id": run_id,
            "plan": cp.as_ref().ok().map(|c| &c.plan),
            "error": cp.as_ref().err(),
            "status": status,
            "steps": steps,
            "next": null,
            "started": started,
            "updated": updated,
        }),
        cells: [run_id, name, status.into(), steps.to_string(), "-".into()],
        started,
        updated,
    }
}

/// A directive run's line: `directive:<file>` in the GRAPH column, the actions finished, no
/// next node.
fn directive_row(run_id: String, dir: &RunDir) -> Row {
    let cp: Value = dir
        .read_checkpoint()
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    let mut status = cp["status"].as_str().unwrap_or("unknown");
    if status == "running" && !dir.is_locked() {
        status = "interrupted";
    }
    let steps = cp["records"].as_array().map_or(0, Vec::len);
    let (started, updated) = (
        cp["started"].as_u64().unwrap_or(0),
        cp["updated"].as_u64().unwrap_or(0),
    );
    let name = format!("directive:{}", cp["directive"].as_str().unwrap_or_default());
    Row {
        json: json!({
            "run_id": run_id,
            "directive": cp["directive"],
            "error": null,
            "status": status,
            "steps": steps,
            "next": null,
            "started": started,
            "updated": updated,
        }),
        cells: [run_id, name, status.into(), steps.to_string(), "-".into()],
        started,
        updated,
    }
}

/// The status of a run whose directory holds no checkpoint and no process runs: it was
/// stopped before its first checkpoint, which a run writes before its first step.
pub(crate) const STARTED: &str = "started";

/// The status of a run whose directory holds no checkpoint: `running` while a process holds
/// it, else [`STARTED`].
pub(crate) fn bare_status(dir: &RunDir) -> &'static str {
    if dir.is_locked() {
        "running"
    } else {
        STARTED
    }
}

/// A run whose directory holds no checkpoint: `running` while a process holds it (it has
/// not written its first yet), else [`STARTED`]; what it runs is not known (`-`), and its
/// times are the directory's creation.
fn bare_row(run_id: String, dir: &RunDir) -> Row {
    let status = bare_status(dir);
    let at = dir.created();
    Row {
        json: json!({
            "run_id": run_id,
            "graph": null,
            "error": null,
            "status": status,
            "steps": 0,
            "next": null,
            "started": at,
            "updated": at,
        }),
        cells: [run_id, "-".into(), status.into(), "0".into(), "-".into()],
        started: at,
        updated: at,
    }
}

/// The table for people: run, graph (or `plan:<file>`), status (`running`, `interrupted`,
/// `completed`, `failed`, `limited`, `waiting`), steps, next node; columns aligned.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut all = vec![["RUN", "GRAPH", "STATUS", "STEPS", "NEXT"].map(str::to_string)];
    all.extend(rows.iter().map(|r| r.cells.clone()));
    let mut widths = [0usize; 5];
    for r in &all {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for r in &all {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Every run of `store`, oldest first (ties by id).
pub(crate) fn rows(store: &RunStore) -> Vec<Row> {
    let runs = store.runs();
    let bare: HashSet<&str> = runs
        .iter()
        .filter(|(id, _)| store.unstarted(id))
        .map(|(id, _)| id.as_str())
        .collect();
    let mut rows: Vec<Row> = store
        .list()
        .iter()
        .filter(|r| !bare.contains(r.run_id.as_str()))
        .map(graph_row)
        .collect();
    for (id, dir) in &runs {
        if bare.contains(id.as_str()) {
            rows.push(bare_row(id.clone(), dir));
        } else if dir.kind().as_deref() == Some(KIND) {
            let cp = Checkpoint::load(dir).map_err(|e| e.message().to_string());
            rows.push(plan_row(id.clone(), &cp, dir.is_locked()));
        } else if dir.kind().as_deref() == Some(DIRECTIVE_KIND) {
            rows.push(directive_row(id.clone(), dir));
        }
    }
    rows.sort_by(|a, b| (a.started, a.id()).cmp(&(b.started, b.id())));
    rows
}
