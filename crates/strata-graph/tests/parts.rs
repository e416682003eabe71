//! A walk in parts (what the tasks of an exported workflow do, one node each, a foreach's
//! elements apart): from checkpoint to checkpoint, each through its JSON, it ends with the
//! checkpoint, the result and the log of the whole walk.

mod common;

use common::{lines, load, Fake};
use serde_json::{json, Map, Value};
use strata_core::{ErrorKind, RenderOptions};
use strata_graph::parts::collect;
use strata_graph::{
    Body, Checkpoint, Failure, Graph, LogEvent, Recorder, RunDir, RunStore, Status, Walker,
};

const GRAPH: &str = "
kind: graph
state: {n: 0, trail: ''}
parameters: {type: object, properties: {xs: {type: array, default: [1, 2]}}}
on_error: fix
nodes:
  a: {kind: gate, assign: {n: '${state.n + 1}', trail: '${state.trail + \"a\"}'}, next: b}
  b:
    kind: action
    tool: echo
    params: {n: '${state.n}'}
    assign: {trail: '${state.trail + \"b\" + string(result.n)}'}
    next: c
  c:
    kind: foreach
    over: '${inputs.xs}'
    do: {kind: action, tool: echo, params: {x: '${item + state.n}'}}
    output: '${result.x}'
    collect: xs
    next: d
  d: {kind: return, output: {trail: '${state.trail}', xs: '${state.xs}'}}
  fix: {kind: return, output: {fixed: '${error.message}'}}
";

/// A checkpoint through its JSON, as it travels between tasks.
fn carried(cp: &Checkpoint) -> Checkpoint {
    Checkpoint::from_json(cp.to_json().to_string().as_bytes(), "walk.json").unwrap()
}

/// The foreach part: its list, each element through its JSON form, the collection.
fn foreach_work(walker: &Walker<'_>, cp: &Checkpoint) -> Result<Value, Failure> {
    let mut warnings = Vec::new();
    let items = walker.foreach_items(cp, &mut warnings).unwrap()?;
    let outcomes = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let outcome = walker
                .foreach_element(cp, i, item, &mut warnings, None)
                .unwrap();
            Some(outcome.map_err(|f| Failure::from_json(&f.to_json()).unwrap()))
        })
        .collect();
    assert!(warnings.is_empty());
    collect(outcomes)
}

/// Walks `graph` in parts with inputs `xs`; the last checkpoint and the log.
fn in_parts(graph: &Graph, tools: &Fake, xs: Value) -> (Checkpoint, Vec<String>) {
    let (cp, log, _) = in_parts_stepwise(graph, tools, xs);
    (cp, log)
}

/// Walks `graph` in parts with inputs `xs`, one step per call as `strata walk` does; the last
/// checkpoint, the log, and the state after each call (with the steps completed by then).
fn in_parts_stepwise(
    graph: &Graph,
    tools: &Fake,
    xs: Value,
) -> (Checkpoint, Vec<String>, Vec<(u64, Value)>) {
    let walker = Walker::new(graph, tools, None, RenderOptions::default());
    let mut rec = Recorder::default();
    let inputs = graph
        .bind_inputs(&Map::from_iter([("xs".to_string(), xs)]), &[])
        .unwrap();
    let mut cp = walker.begin("parts", inputs, 7, &mut rec);
    let mut states = Vec::new();
    while cp.progress.status == Status::Running {
        let at = cp.progress.node.as_deref().and_then(|n| graph.index_of(n));
        let work = match at.map(|i| &graph.nodes[i].body) {
            Some(Body::Foreach(_)) if cp.progress.step < cp.progress.budget => {
                Some(foreach_work(&walker, &carried(&cp)))
            }
            _ => None,
        };
        cp = walker.advance(carried(&cp), work, &mut rec).unwrap();
        states.push((cp.progress.step, Value::Object(cp.state.clone())));
    }
    (cp, lines(&rec.0), states)
}

/// Walks `graph` whole with inputs `xs`; the checkpoint it left, the outcome, its events,
/// and the state after each step, rebuilt from the steps' changes.
fn whole_stepwise(
    graph: &Graph,
    tools: &Fake,
    xs: Value,
) -> (Checkpoint, strata_graph::Outcome, Vec<String>, Vec<Value>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir: RunDir = RunStore::new(tmp.path()).create("whole").unwrap();
    let mut rec = Recorder::default();
    let inputs = graph
        .bind_inputs(&Map::from_iter([("xs".to_string(), xs)]), &[])
        .unwrap();
    let outcome = Walker::new(graph, tools, Some(dir.clone()), RenderOptions::default())
        .start("whole", inputs, &mut rec)
        .unwrap();
    let cp = strata_graph::Checkpoints::load(&dir).unwrap();
    // states[k]: the state after k steps.
    let mut states = vec![Value::Object(graph.state.clone())];
    for event in &rec.0 {
        let step = match event {
            LogEvent::Step { step, .. } | LogEvent::Error { step, .. } => *step as usize,
            _ => continue,
        };
        while states.len() <= step {
            states.push(states.last().unwrap().clone());
        }
        if let LogEvent::Step { changes, .. } = event {
            for c in changes {
                states[step][&c.key] = c.to.clone();
            }
        }
    }
    (cp, outcome, lines(&rec.0), states)
}

/// Walks `graph` whole with inputs `xs`; the checkpoint it left and the log.
fn whole(graph: &Graph, tools: &Fake, xs: Value) -> (Checkpoint, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir: RunDir = RunStore::new(tmp.path()).create("whole").unwrap();
    let mut rec = Recorder::default();
    let inputs = graph
        .bind_inputs(&Map::from_iter([("xs".to_string(), xs)]), &[])
        .unwrap();
    Walker::new(graph, tools, Some(dir.clone()), RenderOptions::default())
        .start("whole", inputs, &mut rec)
        .unwrap();
    let cp = strata_graph::Checkpoints::load(&dir).unwrap();
    (cp, lines(&rec.0))
}

/// A checkpoint's JSON without its run's id and times.
fn comparable(cp: &Checkpoint) -> Value {
    let mut v = cp.to_json();
    for key in ["run_id", "started", "updated"] {
        v.as_object_mut().unwrap().remove(key);
    }
    v
}

#[test]
fn a_walk_in_parts_ends_as_the_whole_walk() {
    let tools = Fake::default();
    let graph = load(GRAPH, &tools).unwrap();
    let (parts, parts_log) = in_parts(&graph, &tools, json!([1, 2]));
    let (all, all_log) = whole(&graph, &tools, json!([1, 2]));
    assert_eq!(comparable(&parts), comparable(&all));
    assert_eq!(
        parts.progress.result,
        Some(json!({"trail": "ab1", "xs": [2, 3]}))
    );
    assert_eq!(parts.progress.step, 4);
    let no_run_id = |log: &[String]| -> Vec<String> {
        log.iter()
            .map(|l| l.replace("parts", "R").replace("whole", "R"))
            .collect()
    };
    assert_eq!(no_run_id(&parts_log), no_run_id(&all_log));
}

#[test]
fn a_failing_element_fails_the_foreach_in_parts_as_in_the_whole_walk() {
    let tools = Fake::default();
    let text = GRAPH.replace(
        "do: {kind: action, tool: echo",
        "do: {kind: action, tool: fail",
    );
    let graph = load(&text, &tools).unwrap();
    let (parts, parts_log) = in_parts(&graph, &tools, json!([1, 2]));
    let (all, _) = whole(&graph, &tools, json!([1, 2]));
    assert_eq!(comparable(&parts), comparable(&all));
    assert_eq!(
        parts.progress.result,
        Some(json!({"fixed": "element 0: tool `fail` exited with code 3"}))
    );
    assert_eq!(parts.error.as_ref().unwrap()["run"]["stderr"], "bad");
    assert_eq!(
        parts_log[3],
        "step 3 c failed: element 0: tool `fail` exited with code 3 (on_error: goto fix)\n    ! bad"
    );
    // No elements: the foreach collects an empty list.
    let (parts, _) = in_parts(&load(GRAPH, &tools).unwrap(), &tools, json!([]));
    assert_eq!(
        parts.progress.result,
        Some(json!({"trail": "ab1", "xs": []}))
    );
}

#[test]
fn only_a_foreach_runs_in_parts() {
    let tools = Fake::default();
    let graph = load(GRAPH, &tools).unwrap();
    let walker = Walker::new(&graph, &tools, None, RenderOptions::default());
    let cp = walker.begin("x", Map::new(), 0, &mut Recorder::default());
    let e = walker.foreach_items(&cp, &mut Vec::new()).unwrap_err();
    assert_eq!(
        e.message(),
        "the checkpoint's next node `a` is not a foreach"
    );
    assert_eq!(
        Checkpoint::from_json(b"{\"version\": 9}", "walk.json")
            .unwrap_err()
            .message()
            .split(':')
            .next(),
        Some("`walk.json` is not a valid checkpoint")
    );
}

/// Every kind of step: gates looping on conditions, a tool that fails and an `on_error`
/// node reading `${error.kind}`, a foreach, the step limit handled once, then reached again.
const EVERY_STEP: &str = "
kind: graph
state: {n: 0, log: ''}
parameters: {type: object, properties: {xs: {type: array, default: [1, 2]}}}
max_steps: 6
on_error: fix
nodes:
  a:
    kind: gate
    assign: {n: '${state.n + 1}', log: '${state.log + \"a\"}'}
    next:
      - {to: b, when: 'state.n == 1'}
      - {to: c, when: 'state.n == 2'}
      - to: a
  b: {kind: action, tool: fail, next: a}
  c:
    kind: foreach
    over: '${inputs.xs}'
    do: {kind: action, tool: echo, params: {x: '${item * 10}'}}
    output: '${result.x}'
    collect: xs
    next: a
  fix: {kind: gate, assign: {log: '${state.log + \"!\" + error.kind}'}, next: a}
";

#[test]
fn a_graph_walked_whole_and_one_step_per_call_goes_through_the_same_states() {
    let tools = Fake::default();
    let graph = load(EVERY_STEP, &tools).unwrap();
    let (parts, parts_log, states) = in_parts_stepwise(&graph, &tools, json!([1, 2]));
    let (all, outcome, all_log, all_states) = whole_stepwise(&graph, &tools, json!([1, 2]));
    // The same state after every step, the same end.
    for (step, state) in &states {
        assert_eq!(state, &all_states[*step as usize], "after step {step}");
    }
    assert_eq!(states.len(), 14, "12 steps and 2 limits, one call each");
    assert_eq!(comparable(&parts), comparable(&all));
    assert_eq!(parts.progress.status, Status::Limited);
    assert_eq!(outcome.status, Status::Limited);
    assert_eq!(parts.progress.result, None);
    assert_eq!(outcome.result, Value::Null);
    let failure = outcome.failure.unwrap();
    assert_eq!(failure.kind(), ErrorKind::Limit);
    assert_eq!(
        parts.progress.failure,
        Some(strata_graph::error_line(&failure))
    );
    assert_eq!(
        parts.progress.failure.as_deref(),
        Some("max_steps (6) reached before node `a`")
    );
    assert_eq!(
        all.state,
        json!({"n": 8, "log": "a!tool_failedaa!limitaaaaa", "xs": [10, 20]})
            .as_object()
            .unwrap()
            .clone()
    );
    let no_run_id = |log: &[String]| -> Vec<String> {
        log.iter()
            .map(|l| l.replace("parts", "R").replace("whole", "R"))
            .collect()
    };
    assert_eq!(no_run_id(&parts_log), no_run_id(&all_log));
}

/// Parts run by a walker, each call noted (`begin`, `advance at NODE`, `items`, `element N`);
/// an `advance` at node `cancel_at` is cancelled (as a transport cancelled by its caller).
struct Noted<'a> {
    walker: Walker<'a>,
    calls: std::sync::Mutex<Vec<String>>,
    cancel_at: Option<&'static str>,
}

impl Noted<'_> {
    fn note(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }
}

impl strata_graph::parts::Parts for Noted<'_> {
    fn begin(
        &self,
        run_id: &str,
        inputs: &Map<String, Value>,
        started: u64,
    ) -> Result<Checkpoint, strata_core::Error> {
        self.note("begin".into());
        strata_graph::parts::Parts::begin(&self.walker, run_id, inputs, started)
    }

    fn advance(
        &self,
        cp: &Checkpoint,
        work: Option<Result<Value, Failure>>,
    ) -> Result<strata_graph::parts::Advanced, strata_core::Error> {
        let at = cp.progress.node.as_deref().unwrap_or("");
        self.note(format!("advance at {at}"));
        if self.cancel_at == Some(at) {
            return Err(strata_core::Error::new(
                strata_core::Layer::REQUEST,
                ErrorKind::Cancelled,
                "the call was cancelled",
            ));
        }
        strata_graph::parts::Parts::advance(&self.walker, &carried(cp), work)
    }

    fn items(&self, cp: &Checkpoint) -> Result<Result<Vec<Value>, Failure>, strata_core::Error> {
        self.note("items".into());
        strata_graph::parts::Parts::items(&self.walker, &carried(cp))
    }

    fn element(&self, cp: &Checkpoint, index: usize, item: Value) -> Result<Value, Failure> {
        self.note(format!("element {index}"));
        strata_graph::parts::Parts::element(&self.walker, &carried(cp), index, item)
    }
}

/// Walks `graph` with inputs `xs` by `walk_in_parts`, every part through a [`Noted`] walker:
/// the last checkpoint, the failure that ended the run, the checkpoints kept (their steps)
/// and the calls.
fn driven(
    graph: &Graph,
    tools: &Fake,
    xs: Value,
) -> (
    Checkpoint,
    Option<strata_core::Error>,
    Vec<u64>,
    Vec<String>,
) {
    let parts = Noted {
        walker: Walker::new(graph, tools, None, RenderOptions::default()),
        calls: Default::default(),
        cancel_at: None,
    };
    let inputs = graph
        .bind_inputs(&Map::from_iter([("xs".to_string(), xs)]), &[])
        .unwrap();
    let first = strata_graph::parts::Parts::begin(&parts, "whole", &inputs, 7).unwrap();
    let mut kept = Vec::new();
    let mut keep = |cp: &mut Checkpoint| {
        kept.push(cp.progress.step);
        Ok(())
    };
    let local = Walker::new(graph, tools, None, RenderOptions::default());
    let last = local.walk_in_parts(first, true, &parts, &mut keep).unwrap();
    let calls = parts.calls.into_inner().unwrap();
    (last.checkpoint, last.failure, kept, calls)
}

#[test]
fn walk_in_parts_runs_every_part_elsewhere_and_ends_as_the_whole_walk() {
    let tools = Fake::default();
    let text = GRAPH.replace("collect: xs", "collect: xs\n    parallel: true");
    let graph = load(&text, &tools).unwrap();
    let (cp, failure, kept, calls) = driven(&graph, &tools, json!([1, 2, 3]));
    let (all, _) = whole(&graph, &tools, json!([1, 2, 3]));
    assert_eq!(comparable(&cp), comparable(&all));
    assert!(failure.is_none());
    assert_eq!(kept, vec![1, 2, 3, 4]);
    assert_eq!(
        calls[..4],
        ["begin", "advance at a", "advance at b", "items"]
    );
    // The elements, in flight together, finish in any order.
    let mut elements = calls[4..7].to_vec();
    elements.sort();
    assert_eq!(elements, ["element 0", "element 1", "element 2"]);
    assert_eq!(calls[7..], ["advance at c", "advance at d"]);
}

#[test]
fn walk_in_parts_starts_no_element_after_a_failure_of_a_sequential_foreach() {
    let tools = Fake::default();
    let text = GRAPH
        .replace(
            "do: {kind: action, tool: echo",
            "do: {kind: action, tool: fail",
        )
        .replace("on_error: fix\n", "")
        .replace(
            "  fix: {kind: return, output: {fixed: '${error.message}'}}\n",
            "",
        );
    let graph = load(&text, &tools).unwrap();
    let (cp, failure, kept, calls) = driven(&graph, &tools, json!([1, 2]));
    let (all, _) = whole(&graph, &tools, json!([1, 2]));
    assert_eq!(comparable(&cp), comparable(&all));
    assert_eq!(cp.progress.status, Status::Failed);
    assert_eq!(
        failure.map(|e| e.message().to_string()),
        Some("node `c`: element 0: tool `fail` exited with code 3".to_string())
    );
    assert_eq!(kept, vec![1, 2, 3]);
    assert_eq!(
        calls,
        [
            "begin",
            "advance at a",
            "advance at b",
            "items",
            "element 0",
            "advance at c"
        ]
    );
}

#[test]
fn walk_in_parts_refuses_a_resumed_run_that_has_ended() {
    let tools = Fake::default();
    let graph = load(GRAPH, &tools).unwrap();
    let (cp, _, _, _) = driven(&graph, &tools, json!([1]));
    let local = Walker::new(&graph, &tools, None, RenderOptions::default());
    let e = local
        .walk_in_parts(cp, false, &local, &mut |_| Ok(()))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RunState);
    assert_eq!(e.message(), "run `whole` has already ended (completed)");
}

#[test]
fn walk_in_parts_whose_advance_is_cancelled_ends_cancelled_and_resumes() {
    let tools = Fake::default();
    let graph = load(GRAPH, &tools).unwrap();
    let inputs = graph
        .bind_inputs(&Map::from_iter([("xs".to_string(), json!([1]))]), &[])
        .unwrap();
    let local = Walker::new(&graph, &tools, None, RenderOptions::default());
    let cancelling = Noted {
        walker: Walker::new(&graph, &tools, None, RenderOptions::default()),
        calls: Default::default(),
        cancel_at: Some("b"),
    };
    let first = strata_graph::parts::Parts::begin(&local, "c", &inputs, 7).unwrap();
    let mut kept = Vec::new();
    let stopped = local
        .walk_in_parts(first, true, &cancelling, &mut |cp| {
            kept.push((cp.progress.step, cp.progress.status));
            Ok(())
        })
        .unwrap();
    let cp = stopped.checkpoint;
    assert_eq!(
        (
            cp.progress.status,
            cp.progress.step,
            cp.progress.node.as_deref()
        ),
        (Status::Cancelled, 1, Some("b"))
    );
    assert_eq!(kept, [(1, Status::Running), (1, Status::Cancelled)]);
    let failure = stopped.failure.unwrap();
    assert_eq!(
        (failure.kind(), failure.message()),
        (ErrorKind::Cancelled, "the call was cancelled")
    );
    // Resumed, it goes on from node `b` and ends as the whole walk.
    let resumed = local
        .walk_in_parts(carried(&cp), false, &local, &mut |_| Ok(()))
        .unwrap();
    let (all, _) = whole(&graph, &tools, json!([1]));
    assert_eq!(comparable(&resumed.checkpoint), comparable(&all));
}
