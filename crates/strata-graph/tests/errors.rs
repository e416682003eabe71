//! The errors of a run are `strata_core::Error`s: a real kind, the field of the graph file
//! they are about, the same text in progress lines, and `Error::to_json`'s form in events,
//! `${error…}` and the failures a walk in parts carries between tasks.

mod common;

use common::{lines, load, Fake};
use serde_json::{json, Map, Value};
use strata_core::{ErrorKind, Layer, RenderOptions};
use strata_graph::{error_line, Checkpoint, Failure, LogEvent, Recorder, Status, Walker, GRAPH};
use strata_prompts::{Call, PromptManager};

fn prompts() -> PromptManager {
    PromptManager::builder()
        .dict(&json!({"main": {"hello": "Hi {{ who }}"}}), "t.yaml")
        .build()
        .unwrap()
}

const PROMPT_GRAPH: &str = "
kind: graph
state: {key: nothing}
nodes:
  ask: {kind: prompt, key: '${state.key}', feed: {who: Ann}}
";

#[test]
fn a_prompt_node_that_finds_no_template_fails_as_the_prompts_crate_does() {
    let tools = Fake::default();
    let graph = load(PROMPT_GRAPH, &tools).unwrap();
    let prompts = prompts();
    // What `strata prompt render nothing` reports.
    let miss = prompts.render(&Call::key("nothing")).unwrap_err();
    assert_eq!(miss.kind(), ErrorKind::TemplateNotFound);
    let mut rec = Recorder::default();
    let outcome = Walker::new(&graph, &tools, None, RenderOptions::default())
        .with_prompts(&prompts)
        .start("r1", Map::new(), &mut rec)
        .unwrap();
    assert_eq!(outcome.status, Status::Failed);
    let LogEvent::Error { error, .. } = &rec.0[1] else {
        panic!("{:?}", rec.0[1]);
    };
    assert_eq!(error.kind(), ErrorKind::TemplateNotFound);
    assert_eq!(error.layer(), Layer::new("prompt"));
    assert_eq!(error.message(), miss.message());
    assert_eq!(
        error.message(),
        "no template for key `nothing`: tried main/nothing, main/default, default"
    );
    assert_eq!(error.hint(), miss.hint());
    assert_eq!(error.path().to_string(), "nodes.ask.key");
    let failure = outcome.failure.unwrap();
    assert_eq!(failure.kind(), ErrorKind::TemplateNotFound);
    assert_eq!(failure.message(), format!("node `ask`: {}", miss.message()));
    assert_eq!(
        lines(&rec.0)[1..],
        [
            format!("step 1 ask failed: {} (on_error: fail)", miss.message()),
            format!(
                "run r1: failed after 1 step: node `ask`: {}",
                miss.message()
            ),
        ]
    );
}

#[test]
fn a_prompt_node_without_prompts_is_a_template_not_found_failure() {
    let tools = Fake::default();
    let graph = load(PROMPT_GRAPH, &tools).unwrap();
    let outcome = Walker::new(&graph, &tools, None, RenderOptions::default())
        .start("r1", Map::new(), &mut Recorder::default())
        .unwrap();
    let failure = outcome.failure.unwrap();
    assert_eq!(failure.kind(), ErrorKind::TemplateNotFound);
    assert_eq!(
        failure.message(),
        "node `ask`: no prompt templates are loaded: the project needs a prompts/ directory"
    );
    assert_eq!(failure.path().to_string(), "nodes.ask");
}

#[test]
fn error_events_carry_the_error_and_its_json_form() {
    let text = "
kind: graph
on_error: continue
state: {n: 0}
nodes:
  bad: {kind: action, tool: fail, params: {x: 1}, next: sum}
  sum: {kind: gate, assign: {n: '${state.n + \"a\"}'}}
";
    let tools = Fake::default();
    let graph = load(text, &tools).unwrap();
    let mut rec = Recorder::default();
    let outcome = Walker::new(&graph, &tools, None, RenderOptions::default())
        .start("r1", Map::new(), &mut rec)
        .unwrap();
    let json: Vec<Value> = rec.0.iter().map(LogEvent::to_json).collect();
    assert_eq!(
        json[1],
        json!({"event": "error", "step": 1, "node": "bad",
               "error": {"kind": "tool_failed", "layer": "graph",
                         "message": "tool `fail` exited with code 3",
                         "path": "nodes.bad.tool", "span": null},
               "stderr": "bad", "handling": "continue"})
    );
    let LogEvent::Error { error, .. } = &rec.0[3] else {
        panic!("{:?}", rec.0[3]);
    };
    assert_eq!(error.kind(), ErrorKind::Type);
    assert_eq!(error.layer(), Layer::CONTEXT);
    assert!(error.path().to_string().starts_with("nodes.sum.assign"));
    assert_eq!(outcome.status, Status::Completed);
    // A run that fails ends with its failure as JSON in the `finished` event.
    let text = text.replace("on_error: continue", "on_error: fail");
    let graph = load(&text, &tools).unwrap();
    let mut rec = Recorder::default();
    Walker::new(&graph, &tools, None, RenderOptions::default())
        .start("r2", Map::new(), &mut rec)
        .unwrap();
    assert_eq!(
        rec.0.last().unwrap().to_json(),
        json!({"event": "finished", "run_id": "r2", "status": "failed", "steps": 1,
               "result": null,
               "failure": {"kind": "tool_failed", "layer": "graph",
                           "message": "node `bad`: tool `fail` exited with code 3",
                           "path": "nodes.bad.tool", "span": null}})
    );
}

#[test]
fn the_error_in_context_is_the_errors_json_with_node_step_result_and_run() {
    let text = "
kind: graph
on_error: fix
max_steps: 5
nodes:
  bad: {kind: action, tool: fail, next: bad}
  fix: {kind: return, output: '${error}'}
";
    let tools = Fake::default();
    let graph = load(text, &tools).unwrap();
    let (_, outcome) = common::run_with(&graph, &tools, &[]);
    assert_eq!(outcome.result["kind"], "tool_failed");
    assert_eq!(outcome.result["message"], "tool `fail` exited with code 3");
    assert_eq!(outcome.result["path"], "nodes.bad.tool");
    assert_eq!(outcome.result["node"], "bad");
    assert_eq!(outcome.result["step"], 1);
    assert_eq!(outcome.result["run"]["stderr"], "bad");
    // The step limit.
    let text = text.replace("tool: fail", "tool: echo");
    let graph = load(&text, &tools).unwrap();
    let (_, outcome) = common::run_with(&graph, &tools, &[]);
    assert_eq!(
        outcome.result,
        json!({"kind": "limit", "layer": "graph",
               "message": "max_steps (5) reached before node `bad`",
               "path": "max_steps", "span": null,
               "hint": "raise the graph's `max_steps`, or handle the limit with `on_error: <node>`",
               "result": null, "run": null, "node": "bad", "step": 5})
    );
}

#[test]
fn failures_travel_as_json_and_come_back_whole() {
    let f = Failure::of(ErrorKind::Limit, "too big");
    assert_eq!(
        f.to_json(),
        json!({"kind": "limit", "layer": "graph", "message": "too big", "path": "$",
               "span": null, "result": null, "run": null})
    );
    assert_eq!(Failure::from_json(&f.to_json()), Some(f.clone()));
    assert_eq!(f.error.layer(), GRAPH);
    assert_eq!(error_line(&f.error), "too big");
    assert_eq!(Failure::from_json(&json!({"message": "no kind"})), None);
}

#[test]
fn checkpoint_errors_say_where() {
    let e = Checkpoint::from_json(b"{\n  \"version\": 1,\n  oops\n}", "walk.json").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    let loc = e.location().unwrap();
    assert_eq!(
        (loc.file.as_str(), loc.line, loc.column),
        ("walk.json", 3, 3)
    );
    assert!(e
        .message()
        .starts_with("`walk.json` is not a valid checkpoint: "));
    let mut cp = Walker::new(
        &load(PROMPT_GRAPH, &Fake::default()).unwrap(),
        &Fake::default(),
        None,
        RenderOptions::default(),
    )
    .begin("r", Map::new(), 0, &mut Recorder::default())
    .to_json();
    cp["version"] = json!(9);
    let e = Checkpoint::from_json(cp.to_string().as_bytes(), "walk.json").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RunState);
    assert_eq!(
        e.message(),
        "checkpoint version 9 is not supported (expected 1)"
    );
    assert_eq!(e.path().to_string(), "version");
}
