//! Foreach nodes: the list, one body run per element, in order or on up to
//! `max_concurrency` threads, and the outputs collected in input order.
//!
//! Elements share the state instead of copying it: an element's context is its own names
//! (the element, its index, the body's `result` and `run`) layered over the state, the
//! inputs and the last error, all borrowed. Only an element whose body assigns gets a
//! private copy of the state, made at its first assignment — so a foreach over the state's
//! own list costs time linear in the list, not the list times the state.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Map, Value};
use strata_core::{ContextSource, Entry, Layers, Warning};

use crate::events::ElementEvent;
use crate::exec::{assign, Exec, Failure};
use crate::fields::key;
use crate::model::{Foreach, Node};
use crate::walker::set_work;

/// What one element produced: its output, and the warnings met on the way.
pub(crate) type Outcome = (Result<Value, Failure>, Vec<Warning>);

/// Runs the foreach `f` of `node` against `root`; its result is the list of outputs.
pub(crate) fn run(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &dyn ContextSource,
    warnings: &mut Vec<Warning>,
) -> Result<Value, Failure> {
    let items = items(exec, node, f, root, warnings)?;
    if let Some((sink, step)) = exec.elements {
        sink.element(ElementEvent::ForeachStarted {
            step,
            node: node.id.clone(),
            count: items.len(),
        });
    }
    let outcomes = fan_out(f, &items, |i, item| {
        watched(exec, node, i, || element(exec, node, f, root, i, item))
    });
    let results = outcomes
        .into_iter()
        .map(|o| {
            o.map(|(result, mut met)| {
                warnings.append(&mut met);
                result
            })
        })
        .collect();
    collect(results)
}

/// Runs element `i` with `run`, reporting its start and end to the walk's element sink, if
/// it has one.
fn watched(exec: &Exec<'_>, node: &Node, i: usize, run: impl FnOnce() -> Outcome) -> Outcome {
    let Some((sink, step)) = exec.elements else {
        return run();
    };
    sink.element(ElementEvent::ElementStarted {
        step,
        node: node.id.clone(),
        index: i,
    });
    let began = Instant::now();
    let outcome = run();
    let ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    let error = outcome.0.as_ref().err().map(|f| f.error.kind().name());
    sink.element(ElementEvent::ElementFinished {
        step,
        node: node.id.clone(),
        index: i,
        status: if error.is_some() { "failed" } else { "done" },
        ms,
        error,
    });
    outcome
}

/// The list a foreach runs over: `over` rendered against `root` (a string holding a JSON
/// list is parsed).
pub(crate) fn items(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &dyn ContextSource,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Value>, Failure> {
    let at = key(&node.path, "over");
    match exec.render(&f.over, root, &at, warnings)? {
        Value::Array(items) => Ok(items),
        Value::String(text) => match serde_json::from_str(&text) {
            Ok(Value::Array(items)) => Ok(items),
            _ => Err(Failure::new("`over` rendered to a string that is not a JSON list").at(&at)),
        },
        other => Err(Failure::new(format!(
            "`over` must be a list, found {}",
            strata_tools::type_name(&other)
        ))
        .at(&at)),
    }
}

/// A foreach's result from the outcome of each element, in input order (`None`: the element
/// did not run): the list of outputs, or the failure of the first element that failed.
pub fn collect(outcomes: Vec<Option<Result<Value, Failure>>>) -> Result<Value, Failure> {
    let mut outputs = Vec::with_capacity(outcomes.len());
    for (i, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            None => {}
            Some(Ok(v)) => outputs.push(v),
            Some(Err(mut e)) => {
                e.error = e.error.map_message(|m| format!("element {i}: {m}"));
                return Err(e);
            }
        }
    }
    Ok(Value::Array(outputs))
}

/// Runs `run` for every element of foreach `f` — in parallel on up to `max_concurrency`
/// threads when `f` is `parallel`, else one by one — and returns the outcomes in input order
/// (`None`: the element did not run: after a failure no new element starts). The whole walk
/// runs the body here; the walk in parts runs each element elsewhere.
pub(crate) fn fan_out<R>(f: &Foreach, items: &[Value], run: R) -> Vec<Option<Outcome>>
where
    R: Fn(usize, Value) -> Outcome + Sync,
{
    if f.parallel && items.len() > 1 {
        parallel(f, items, &run)
    } else {
        sequential(items, &run)
    }
}

fn sequential(
    items: &[Value],
    run: &(dyn Fn(usize, Value) -> Outcome + Sync),
) -> Vec<Option<Outcome>> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let outcome = run(i, item.clone());
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
    f: &Foreach,
    items: &[Value],
    run: &(dyn Fn(usize, Value) -> Outcome + Sync),
) -> Vec<Option<Outcome>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<Outcome>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let workers = f.max_concurrency.min(items.len()).max(1);
    std::thread::scope(|s| {
        let work = || loop {
            if failed.load(Ordering::SeqCst) {
                break;
            }
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(item) = items.get(i) else {
                break;
            };
            let outcome = run(i, item.clone());
            if outcome.0.is_err() {
                failed.store(true, Ordering::SeqCst);
            }
            *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        };
        // Each worker on the stack every strata thread gets; when no more threads can start,
        // those there are take every element (none at all: this thread does).
        for k in 0..workers {
            if strata_core::work_thread("strata-foreach")
                .spawn_scoped(s, work)
                .is_err()
            {
                if k == 0 {
                    work();
                }
                break;
            }
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// Runs the body for element `i`.
pub(crate) fn element(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &dyn ContextSource,
    i: usize,
    item: Value,
) -> Outcome {
    let mut warnings = Vec::new();
    let exec = Exec {
        index: Some(i),
        ..*exec
    };
    let result = body(&exec, node, f, root, i, item, &mut warnings);
    (result, warnings)
}

/// The context of an element: its own names over the state (shared, or its private copy),
/// the inputs and the last error of `root`.
fn layered<'a, R>(
    own: &'a Value,
    state: Option<&'a Value>,
    root: &'a dyn ContextSource,
    f: impl FnOnce(&dyn ContextSource) -> R,
) -> R {
    let state = state.map(|s| Entry("state", s));
    let inputs = root.namespace("inputs").map(|v| Entry("inputs", v));
    let error = root.namespace("error").map(|v| Entry("error", v));
    let mut parts: Vec<&dyn ContextSource> = vec![own];
    for entry in [&state, &inputs, &error].into_iter().flatten() {
        parts.push(entry);
    }
    f(&Layers(&parts))
}

fn body(
    exec: &Exec<'_>,
    node: &Node,
    f: &Foreach,
    root: &dyn ContextSource,
    i: usize,
    item: Value,
    warnings: &mut Vec<Warning>,
) -> Result<Value, Failure> {
    let mut own = Map::new();
    own.insert(f.item.clone(), item);
    own.insert(format!("{}_index", f.item), Value::from(i));
    let mut own = Value::Object(own);
    // Borrowed until the body's first assignment.
    let mut state: Option<Cow<'_, Value>> = root.namespace("state").map(Cow::Borrowed);
    let mut last = Value::Null;
    for sub in &f.body {
        let work = layered(&own, state.as_deref(), root, |cx| {
            exec.work(sub, cx, warnings)
        })?;
        set_work(&mut own, work.as_ref());
        let values = layered(&own, state.as_deref(), root, |cx| {
            exec.assignments(sub, cx, warnings)
        })?;
        if !values.is_empty() {
            if let Some(Value::Object(map)) = state.as_mut().map(Cow::to_mut) {
                assign(map, values);
            }
        }
        set_work(&mut own, None);
        if let Some(w) = work {
            last = w.result;
        }
    }
    let Some(output) = &f.output else {
        return Ok(last);
    };
    if let Value::Object(map) = &mut own {
        map.insert("result".into(), last);
    }
    layered(&own, state.as_deref(), root, |cx| {
        exec.render(output, cx, &key(&node.path, "output"), warnings)
    })
}
