//! What the page is served about runs: a summary of each (never its whole record) for the
//! list, and a run's definition laid out for its page. Its events come from its log
//! ([`crate::stream`]).

use serde_json::{json, Value};
use strata_app::{App, DIRECTIVE_KIND};
use strata_core::{Error, ErrorKind, FieldPath, Layer};
use strata_plans::Plan;
use strata_runs::{RunDir, RunStore};

use crate::dag::{directive_dag, graph_dag, plan_dag};
use crate::layout::{layout, Dag};
use strata_plans::checkpoint::PLAN_FILE;

/// The states a step's count is given in, in the order the page shows them.
const STATES: [&str; 5] = ["completed", "failed", "skipped", "waiting", "pending"];

/// The summary of run `id`: `{id, kind, target, status, started, duration_ms, total,
/// steps: {state: count}}`; `None` when it has no readable checkpoint.
pub fn summary(id: &str, dir: &RunDir) -> Option<Value> {
    let cp: Value = serde_json::from_slice(&dir.read_checkpoint().ok()?).ok()?;
    let kind = cp
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("graph")
        .to_string();
    // A directive run's actions count as a plan's steps do.
    let plan = kind == "plan" || kind == DIRECTIVE_KIND;
    let mut status = cp["status"].as_str().unwrap_or("unknown").to_string();
    if status == "running" && !dir.is_locked() {
        status = "interrupted".into();
    }
    let started = cp["started"].as_u64().unwrap_or(0);
    let updated = cp["updated"].as_u64().unwrap_or(started);
    let mut counts = serde_json::Map::new();
    let total;
    if plan {
        total = cp["steps"].as_u64().unwrap_or(0);
        let records = cp["records"].as_array().map_or(&[][..], Vec::as_slice);
        for state in STATES {
            let n = records.iter().filter(|r| r["status"] == state).count() as u64;
            counts.insert(state.into(), n.into());
        }
        let left = total.saturating_sub(records.len() as u64);
        let key = if status == "waiting" {
            "waiting"
        } else {
            "pending"
        };
        counts.insert(key.into(), left.into());
    } else {
        total = cp["step"].as_u64().unwrap_or(0);
        counts.insert("completed".into(), total.into());
        counts.insert(
            "failed".into(),
            u64::from(cp["error"].is_object() && status == "failed").into(),
        );
    }
    // Milliseconds from the event log when the run has one, else the checkpoint's seconds.
    let (started, duration) = match dir.event_span() {
        Some((first, last)) => (first, last.saturating_sub(first)),
        None => (started * 1000, updated.saturating_sub(started) * 1000),
    };
    Some(json!({
        "id": id,
        "target": &cp[if kind == "plan" || kind == "graph" { kind.as_str() } else { "directive" }],
        "kind": kind,
        "status": status,
        "started": started,
        "duration_ms": duration,
        "total": total,
        "steps": counts,
    }))
}

/// Every run's summary, newest first, those matching `status` and containing `target`
/// (when given).
pub fn list(store: &RunStore, status: Option<&str>, target: Option<&str>) -> Vec<Value> {
    let mut out: Vec<Value> = store
        .runs()
        .into_iter()
        .filter_map(|(id, dir)| summary(&id, &dir))
        .filter(|s| status.is_none_or(|want| want.is_empty() || s["status"] == want))
        .filter(|s| {
            target.is_none_or(|want| s["target"].as_str().is_some_and(|t| t.contains(want)))
        })
        .collect();
    out.sort_by(|a, b| {
        (b["started"].as_u64(), b["id"].as_str()).cmp(&(a["started"].as_u64(), a["id"].as_str()))
    });
    out
}

/// Run `id`'s page: its summary and its definition laid out (`layout`). A plan's is the
/// plan it started with (kept in its directory; none for steps streamed in); a directive's
/// its actions as its checkpoint lists them from the start; a graph's the copy of its file
/// the run keeps (its file as it is now for a run that keeps none).
pub fn page(app: &App, store: &RunStore, id: &str) -> Result<Value, Error> {
    let dir = store.open(id)?;
    let summary = summary(id, &dir).ok_or_else(|| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::RunState,
            format!("the checkpoint of run `{id}` cannot be read"),
        )
    })?;
    let streamed = summary["kind"] == "plan" && !dir.path.join(PLAN_FILE).exists();
    let dag = if streamed {
        // Steps streamed on standard input: no plan was kept to draw.
        Dag::default()
    } else if summary["kind"] == DIRECTIVE_KIND {
        directive_dag(&serde_json::from_slice(&dir.read_checkpoint()?).unwrap_or_default())
    } else if summary["kind"] == "plan" {
        let value = strata_plans::checkpoint::load_plan(&dir)?;
        let plan = Plan::from_value(&value, &FieldPath::root()).map_err(|errors| {
            errors
                .into_iter()
                .next()
                .unwrap_or_else(|| Error::new(Layer::REQUEST, ErrorKind::Invalid, "invalid plan"))
        })?;
        plan_dag(&plan)
    } else {
        let graph = summary["target"].as_str().unwrap_or_default();
        graph_dag(&app.run_graph_definition(&dir, graph)?)
    };
    Ok(json!({"run": summary, "layout": layout(&dag)}))
}
