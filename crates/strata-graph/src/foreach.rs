//! Foreach nodes: the list, one body run per element over a private copy of the state, in
//! order or on up to `max_concurrency` threads, and the outputs collected in input order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::{Map, Value};
use strata_core::Warning;

use crate::exec::{apply, Exec, Failure};
use crate::fields::key;
use crate::model::{Foreach, Node};
use crate::walker::set_work;

/// What one element produced: its output, and the warnings met on the way.
type Outcome = (Result<Value, Failure>, Vec<Warning>);

/// Runs the foreach `f` of `node` against `root`; its result is the list of outputs.
pub(crate) fn run(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &Value,
    warnings: &mut Vec<Warning>,
) -> Result<Value, Failure> {
    let items = match exec.render(&f.over, root, &key(&node.path, "over"), warnings)? {
        Value::Array(items) => items,
        Value::String(text) => match serde_json::from_str(&text) {
            Ok(Value::Array(items)) => items,
            _ => {
                return Err(Failure::new(
                    "`over` rendered to a string that is not a JSON list",
                ))
            }
        },
        other => {
            return Err(Failure::new(format!(
                "`over` must be a list, found {}",
                strata_tools::type_name(&other)
            )))
        }
    };
    let outcomes = if f.parallel && items.len() > 1 {
        parallel(exec, node, f, root, &items)
    } else {
        sequential(exec, node, f, root, &items)
    };
    let mut outputs = Vec::with_capacity(items.len());
    for (i, outcome) in outcomes.into_iter().enumerate() {
        let Some((result, mut met)) = outcome else {
            continue;
        };
        warnings.append(&mut met);
        match result {
            Ok(v) => outputs.push(v),
            Err(e) => {
                return Err(Failure {
                    kind: e.kind,
                    message: format!("element {i}: {}", e.message),
                    work: e.work,
                })
            }
        }
    }
    Ok(Value::Array(outputs))
}

fn sequential(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &Value,
    items: &[Value],
) -> Vec<Option<Outcome>> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let outcome = element(exec, node, f, root, i, item.clone());
        let failed = outcome.0.is_err();
        out.push(Some(outcome));
        if failed {
            break;
        }
    }
    out
}

/// Elements run on up to `max_concurrency` threads, taken in input order; after a failure
/// no new element starts. Slots keep the outputs in input order.
fn parallel(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &Value,
    items: &[Value],
) -> Vec<Option<Outcome>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<Outcome>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let workers = f.max_concurrency.min(items.len()).max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                if failed.load(Ordering::SeqCst) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else {
                    break;
                };
                let outcome = element(exec, node, f, root, i, item.clone());
                if outcome.0.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// Runs the body for element `i`.
fn element(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &Value,
    i: usize,
    item: Value,
) -> Outcome {
    let mut warnings = Vec::new();
    let result = body(exec, node, f, root, i, item, &mut warnings);
    (result, warnings)
}

fn body(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &Value,
    i: usize,
    item: Value,
    warnings: &mut Vec<Warning>,
) -> Result<Value, Failure> {
    let mut local = Map::new();
    for name in ["state", "inputs", "error"] {
        if let Some(v) = root.get(name) {
            local.insert(name.to_string(), v.clone());
        }
    }
    local.insert(f.item.clone(), item);
    local.insert(format!("{}_index", f.item), Value::from(i));
    let mut local = Value::Object(local);
    let mut last = Value::Null;
    for sub in &f.body {
        let work = exec.work(sub, &local, warnings)?;
        set_work(&mut local, work.as_ref());
        let values = exec.assignments(sub, &local, warnings)?;
        apply(&mut local, values);
        set_work(&mut local, None);
        if let Some(w) = work {
            last = w.result;
        }
    }
    let Some(output) = &f.output else {
        return Ok(last);
    };
    if let Value::Object(map) = &mut local {
        map.insert("result".into(), last);
    }
    exec.render(output, &local, &key(&node.path, "output"), warnings)
}
