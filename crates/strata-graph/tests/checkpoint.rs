//! Checkpoints: written after every step, and a run resumed from any of them ends exactly
//! like an uninterrupted one. Drawing the graph.

mod common;

use common::{lines, load, Fake};
use serde_json::{json, Map, Value};
use strata_core::RenderOptions;
use strata_graph::draw::{draw, Format};
use strata_graph::{
    CheckpointEvery, Checkpoints, GraphRuns, LogEvent, Observer, Recorder, RunDir, RunStore,
    Status, Walker,
};

const GRAPH: &str = "
kind: graph
state: {n: 0, trail: ''}
on_error: fix
nodes:
  a: {kind: gate, assign: {n: '${state.n + 1}', trail: '${state.trail + \"a\"}'}, next: b}
  b:
    kind: action
    tool: echo
    params: {n: '${state.n}'}
    assign: {trail: '${state.trail + \"b\" + string(result.n)}'}
    next:
      - {to: a, when: 'state.n < 2'}
      - to: c
  c:
    kind: foreach
    over: [1, 2]
    do: {kind: action, tool: echo, params: {x: '${item + state.n}'}}
    output: '${result.x}'
    collect: xs
    next: d
  d: {kind: return, output: {trail: '${state.trail}', xs: '${state.xs}'}}
  fix: {kind: return, output: broken}
";

/// Copies the checkpoint file every time a step is reported (before it is saved): each copy
/// is what a kill during the next step would leave behind.
struct Snapshots<'a> {
    dir: &'a RunDir,
    copies: Vec<Vec<u8>>,
    events: Recorder,
}

impl Observer for Snapshots<'_> {
    fn on(&mut self, event: LogEvent) {
        if matches!(event, LogEvent::Step { .. }) {
            self.copies.push(std::fs::read(self.dir.file()).unwrap());
        }
        self.events.on(event);
    }
}

#[test]
fn every_checkpoint_resumes_to_the_same_result() {
    let tmp = tempfile::tempdir().unwrap();
    let store = RunStore::new(tmp.path());
    let tools = Fake::default();
    let graph = load(GRAPH, &tools).unwrap();
    let dir = store.create("full").unwrap();
    let mut obs = Snapshots {
        dir: &dir,
        copies: Vec::new(),
        events: Recorder::default(),
    };
    let full = Walker::new(&graph, &tools, Some(dir.clone()), RenderOptions::default())
        .start("full", Map::new(), &mut obs)
        .unwrap();
    assert_eq!(full.status, Status::Completed);
    assert_eq!(full.result, json!({"trail": "ab1ab2", "xs": [3, 4]}));
    assert_eq!(obs.copies.len(), 6);
    let done = dir.load().unwrap();
    assert_eq!(done.progress.status, Status::Completed);
    assert_eq!(done.progress.step, 6);
    assert_eq!(done.progress.result, Some(full.result.clone()));

    for (k, copy) in obs.copies.iter().enumerate() {
        let id = format!("killed-{k}");
        let dir = store.create(&id).unwrap();
        std::fs::write(dir.file(), copy).unwrap();
        let cp = dir.load().unwrap();
        assert_eq!(cp.progress.step, k as u64);
        let mut rec = Recorder::default();
        let resumed = Walker::new(&graph, &tools, Some(dir.clone()), RenderOptions::default())
            .resume(cp, &mut rec)
            .unwrap();
        assert_eq!(resumed.result, full.result, "resumed before step {}", k + 1);
        assert_eq!(resumed.steps, 6);
        let log = lines(&rec.0);
        assert!(
            log[0].starts_with(&format!("run full: resuming graphs/t after step {k} at `")),
            "{}",
            log[0]
        );
        let full_log = lines(&obs.events.0);
        assert_eq!(log[1..log.len() - 1], full_log[k + 1..full_log.len() - 1]);
    }
    assert_eq!(
        store
            .list()
            .iter()
            .map(|r| format!("{} {:?} {}", r.run_id, r.status, r.steps))
            .collect::<Vec<_>>()[..2],
        ["full Some(Completed) 6", "killed-0 Some(Completed) 6"]
    );
}

#[test]
fn every_n_steps_a_checkpoint_and_a_resume_reruns_at_most_the_steps_since() {
    let tmp = tempfile::tempdir().unwrap();
    let store = RunStore::new(tmp.path());
    let tools = Fake::default();
    let graph = load(GRAPH, &tools).unwrap();
    let dir = store.create("relaxed").unwrap();
    let mut obs = Snapshots {
        dir: &dir,
        copies: Vec::new(),
        events: Recorder::default(),
    };
    let full = Walker::new(&graph, &tools, Some(dir.clone()), RenderOptions::default())
        .checkpoint_every(CheckpointEvery::Steps(4))
        .start("relaxed", Map::new(), &mut obs)
        .unwrap();
    assert_eq!(full.result, json!({"trail": "ab1ab2", "xs": [3, 4]}));
    // What a kill during each step would find: the checkpoint before the first step until
    // four steps are done, then the one after the fourth.
    let found: Vec<u64> = obs
        .copies
        .iter()
        .map(|copy| {
            let dir = store.create("probe").unwrap();
            std::fs::write(dir.file(), copy).unwrap();
            let step = dir.load().unwrap().progress.step;
            std::fs::remove_dir_all(&dir.path).unwrap();
            step
        })
        .collect();
    assert_eq!(found, [0, 0, 0, 0, 4, 4]);
    let done = dir.load().unwrap();
    assert_eq!(
        (done.progress.status, done.progress.step),
        (Status::Completed, 6)
    );
    // Killed during step 4: the resume runs steps 1–4 again and ends the same.
    let dir = store.create("killed").unwrap();
    std::fs::write(dir.file(), &obs.copies[3]).unwrap();
    let mut rec = Recorder::default();
    let resumed = Walker::new(&graph, &tools, Some(dir.clone()), RenderOptions::default())
        .checkpoint_every(CheckpointEvery::Steps(4))
        .resume(dir.load().unwrap(), &mut rec)
        .unwrap();
    assert_eq!(resumed.result, full.result);
    assert_eq!(resumed.steps, 6);
    let log = lines(&rec.0);
    assert!(
        log[0].starts_with("run relaxed: resuming graphs/t after step 0 at `a`"),
        "{}",
        log[0]
    );
}

#[test]
fn finished_runs_and_changed_graphs_do_not_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let store = RunStore::new(tmp.path());
    let tools = Fake::default();
    let graph = load(GRAPH, &tools).unwrap();
    let dir = store.create("r").unwrap();
    let walker = Walker::new(&graph, &tools, Some(dir.clone()), RenderOptions::default());
    walker
        .start("r", Map::new(), &mut Recorder::default())
        .unwrap();
    let e = walker
        .resume(dir.load().unwrap(), &mut Recorder::default())
        .unwrap_err();
    assert_eq!(e.message(), "run `r` has already ended (completed)");
    let changed = load(&GRAPH.replace("broken", "gone"), &tools).unwrap();
    let e = Walker::new(&changed, &tools, None, RenderOptions::default())
        .resume(dir.load().unwrap(), &mut Recorder::default())
        .unwrap_err();
    assert_eq!(e.message(), "`t.yaml` changed since run `r` started");
    let e = store.create("r").unwrap_err();
    assert_eq!(e.message(), "run `r` already exists");
    let e = store.open("../../etc/passwd").unwrap_err();
    assert_eq!(e.message(), "invalid run id `../../etc/passwd`");
}

#[test]
fn graphs_draw_as_mermaid_and_dot() {
    let graph = load(GRAPH, &Fake::default()).unwrap();
    assert_eq!(
        draw(&graph, Format::Mermaid),
        r#"flowchart TD
    start([start]) --> n0
    n0{"a<br/>gate"}
    n1["b<br/>action: echo"]
    n2[["c<br/>foreach: echo"]]
    n3(["d<br/>return"])
    n4(["fix<br/>return"])
    n0 --> n1
    n1 -->|"state.n < 2"| n0
    n1 -->|"otherwise"| n2
    n2 --> n3
    on_error{{on_error}} -.-> n4
"#
    );
    assert_eq!(
        draw(&graph, Format::Dot),
        r#"digraph "graphs/t" {
    rankdir=TB;
    "__start" [shape=circle, label="start"];
    "a" [shape=diamond, label="a\ngate"];
    "b" [shape=box, label="b\naction: echo"];
    "c" [shape=box3d, label="c\nforeach: echo"];
    "d" [shape=oval, label="d\nreturn"];
    "fix" [shape=oval, label="fix\nreturn"];
    "__start" -> "a";
    "a" -> "b";
    "b" -> "a" [label="state.n < 2"];
    "b" -> "c" [label="otherwise"];
    "c" -> "d";
    "__on_error" [shape=hexagon, label="on_error"];
    "__on_error" -> "fix" [style=dashed];
}
"#
    );
}

/// True until the first call of `stoppable`, which is cancelled.
static CANCELS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

#[test]
fn a_cancelled_run_is_recorded_cancelled_and_resumes_at_the_step_it_stopped() {
    use strata_core::{Error, ErrorKind, Layer};
    use strata_tools::{FakeTools, RunResult};
    const STOPPED: &str = "
kind: graph
state: {n: 0}
on_error: fix
nodes:
  a: {kind: gate, assign: {n: '${state.n + 1}'}, next: b}
  b: {kind: action, tool: stoppable, params: {n: '${state.n}'}, assign: {n: '${result.n + 10}'}, next: c}
  c: {kind: return, output: '${state.n}'}
  fix: {kind: return, output: broken}
";
    let tools = Fake(FakeTools::new().tool("stoppable", |p| {
        if CANCELS.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Cancelled,
                "the call was cancelled",
            ));
        }
        Ok(RunResult::ok(Value::Object(p.clone()).to_string()))
    }));
    let graph = load(STOPPED, &tools).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let store = RunStore::new(tmp.path());
    let dir = store.create("c").unwrap();
    let mut rec = Recorder::default();
    let walker = Walker::new(&graph, &tools, Some(dir.clone()), RenderOptions::default());
    let stopped = walker.start("c", Map::new(), &mut rec).unwrap();
    assert_eq!((stopped.status, stopped.steps), (Status::Cancelled, 1));
    assert_eq!(stopped.failure.unwrap().kind(), ErrorKind::Cancelled);
    assert_eq!(
        lines(&rec.0),
        [
            "run c: starting graphs/t at `a`",
            "step 1 a (gate) -> b: n = 1 (was 0)",
            "run c: cancelled after 1 step: node `b`: tool `stoppable`: the call was cancelled"
        ]
    );
    // Recorded cancelled, at the step it stopped (on_error does not apply).
    let cp = dir.load().unwrap();
    assert_eq!(cp.progress.status, Status::Cancelled);
    assert_eq!(
        (cp.progress.step, cp.progress.node.as_deref()),
        (1, Some("b"))
    );
    let resumed = walker.resume(cp, &mut Recorder::default()).unwrap();
    assert_eq!(
        (resumed.status, resumed.steps, resumed.result),
        (Status::Completed, 3, json!(11))
    );
}
