//! End-to-end tests of the per-run event log (`events.jsonl`): what plan and graph runs made
//! by the binary write to it, redacted, and the timeline `strata runs show` prints from it.

mod common;
use common::Test;

use serde_json::{json, Value};

const CANARY: &str = "c4n4ry-t0k3n";

const PLAN: &str = "- {id: a, tool: t/json, arguments: {text: 'key {{PLACEHOLDER_key}}'}}\n\
                    - {id: b, tool: t/fail, arguments: {text: '{{a.result.text}}'}}\n\
                    - {id: c, tool: t/json, arguments: {n: '{{b.result}}'}}\n";

const GRAPH: &str = "kind: graph
start: ask
nodes:
  ask:
    kind: action
    tool: t/json
    params: {n: 2}
    assign: {n: \"${result.n}\"}
    next:
      - to: done
        when: state.n > 1
      - to: ask
  done:
    kind: return
    output: {n: \"${state.n}\"}
state: {n: 0}
";

fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/json", include_str!("fixtures/events/json.yaml"))
        .tool("t/fail", include_str!("fixtures/events/fail.yaml"))
        .file("tools/t/fail.sh", include_str!("fixtures/events/fail.sh"))
        .file("plans/p.yaml", PLAN)
        .tool("graphs/g", GRAPH)
        .file("directives/d.md", DIRECTIVE)
}

/// Run `ev` of `plans/p.yaml`, the canary its secret and a value of its first step: `b`
/// fails, `c` is skipped.
fn failed_plan_run() -> common::Ran {
    project()
        .env("API_TOKEN", CANARY)
        .args(&[
            "plan",
            "run",
            "plans/p.yaml",
            "--run-id",
            "ev",
            "--value",
            &format!("key={CANARY}"),
            "--quiet",
        ])
        .status(1)
        .run()
}

/// The events of run `id` of `p`, each line's `ts` checked and taken out.
fn events(p: &common::Ran, id: &str) -> Vec<Value> {
    let text = p.read(&format!(".strata/runs/{id}/events.jsonl"));
    assert!(!text.contains(CANARY), "the canary is in the event log");
    let mut last = 0;
    text.lines()
        .map(|line| {
            assert!(line.starts_with("{\"ts\":"), "{line}");
            let mut v: Value = serde_json::from_str(line).unwrap();
            let ts = v["ts"].as_u64().unwrap();
            assert!(ts >= last, "times go forward");
            last = ts;
            let fields = v.as_object_mut().unwrap();
            fields.remove("ts");
            for gone in ["ms", "record"] {
                fields.remove(gone);
            }
            v
        })
        .collect()
}

/// The timeline's times (`+12 ms`) as `+N ms`, padded alike.
fn timeless(text: &str) -> String {
    text.lines()
        .map(|line| match line.find(" ms  ") {
            Some(k) if line.trim_start().starts_with('+') => format!("  +N ms{}", &line[k + 3..]),
            _ => line.to_string(),
        })
        .map(|l| {
            let mut l = l;
            if let Some(k) = l.find(" in ") {
                if l.ends_with(" ms") {
                    l.truncate(k);
                    l.push_str(" in N ms");
                }
            }
            l + "\n"
        })
        .collect()
}

#[test]
fn a_plan_run_logs_every_step_redacted_and_runs_show_prints_its_timeline() {
    let p = failed_plan_run();
    assert_eq!(
        events(&p, "ev"),
        vec![
            json!({"event": "run_started", "kind": "plan", "run_id": "ev", "plan": "plans/p.yaml", "resumed": false, "finished": 0}),
            json!({"event": "step_started", "id": "a", "tool": "t/json", "arguments": {"text": "key ***"}}),
            json!({"event": "step_finished", "id": "a", "tool": "t/json", "status": "completed"}),
            json!({"event": "step_started", "id": "b", "tool": "t/fail", "arguments": {"text": "key ***"}}),
            json!({"event": "step_finished", "id": "b", "tool": "t/fail", "status": "failed"}),
            json!({"event": "step_finished", "id": "c", "tool": "t/json", "status": "skipped"}),
            json!({"event": "run_finished", "run_id": "ev", "status": "failed"}),
        ]
    );
    let line = p.read(".strata/runs/ev/events.jsonl");
    let failed: Value = serde_json::from_str(line.lines().nth(4).unwrap()).unwrap();
    assert_eq!(failed["record"]["run"]["stderr"], json!("token was ***\n"));
    assert_eq!(failed["record"]["run"]["exit_code"], json!(3));
    let shown = p.then(&["runs", "show", "ev"]).status(0).run();
    let timeline = &shown.stdout[shown.stdout.find("timeline:").unwrap()..];
    assert_eq!(
        timeless(timeline),
        "timeline:
  +N ms  run_started plans/p.yaml
  +N ms  step_started a (t/json)
  +N ms  step_finished a (t/json): completed in N ms
  +N ms  step_started b (t/fail)
  +N ms  step_finished b (t/fail): failed in N ms
  +N ms  step_finished c (t/json): skipped in N ms
  +N ms  run_finished failed
"
    );
}

#[test]
fn a_graph_run_keeps_its_step_history_with_edges_and_conditions() {
    let p = project()
        .args(&["run", "graphs/g", "--run-id", "gr", "--quiet"])
        .stdout("{\n  \"n\": 2\n}\n")
        .status(0)
        .run();
    let log = events(&p, "gr");
    assert_eq!(
        log,
        vec![
            json!({"event": "started", "run_id": "gr", "graph": "graphs/g", "node": "ask", "step": 0, "resumed": false}),
            json!({"event": "step", "step": 1, "node": "ask", "kind": "action",
                   "edge": {"to": "done", "why": "when", "when": "state.n > 1"},
                   "changes": [{"key": "n", "from": 0, "to": 2}], "inputs": {"n": 2}}),
            json!({"event": "step", "step": 2, "node": "done", "kind": "return",
                   "edge": {"to": null, "why": "return", "when": null}, "changes": []}),
            json!({"event": "finished", "run_id": "gr", "status": "completed", "steps": 2,
                   "result": {"n": 2}, "failure": null}),
        ]
    );
    assert_eq!(p.read(".strata/runs/gr/graph.yaml"), GRAPH);
    let shown = p.then(&["runs", "show", "gr"]).status(0).run();
    let timeline = &shown.stdout[shown.stdout.find("timeline:").unwrap()..];
    assert_eq!(
        timeless(timeline),
        "timeline:
  +N ms  started graphs/g at `ask`
  +N ms  step 1 ask (action) -> done (when state.n > 1)
  +N ms  step 2 done (return) -> end
  +N ms  finished completed after 2 steps
"
    );
    // The log goes with its run.
    p.then(&["runs", "prune"])
        .stdout("removed gr (graphs/g, completed)\n")
        .status(0)
        .run();
    assert!(!p.path().join(".strata/runs/gr").exists());
}

/// `GET path` from the viewer at `addr` with `host` as its `Host`: the whole response (a
/// stream of events until the viewer ends it).
#[cfg(feature = "view")]
fn get(addr: &str, host: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[cfg(feature = "view")]
#[test]
fn strata_view_serves_summaries_layouts_and_events_and_never_a_secret() {
    let ran = failed_plan_run();
    // The checkpoint keeps the value given; the viewer never serves it.
    assert!(ran.read(".strata/runs/ev/checkpoint.json").contains(CANARY));
    let ran = ran
        .then(&["run", "graphs/g", "--run-id", "gr", "--quiet"])
        .status(0)
        .run();
    let ran = ran
        .then(&["plan", "run", "-", "--run-id", "st", "--quiet"])
        .stdin("{\"id\": \"s\", \"tool\": \"t/json\", \"arguments\": {\"n\": 1}}\n")
        .status(0)
        .run();
    let ran = ran
        .then(&["run", "directives/d.md", "--quiet"])
        .env("API_TOKEN", CANARY)
        .status(1)
        .run();
    // The graph changes after its run: the run's page draws the graph it ran.
    let mut view = ran
        .then(&["view", "--port", "0"])
        .file("tools/graphs/g.yaml", GRAPH.replace("done", "fin"))
        .env("API_TOKEN", CANARY)
        .killed_by(libc::SIGTERM)
        .start();
    let line = view.read_line();
    let url = line
        .strip_prefix("strata view: http://")
        .and_then(|u| u.strip_suffix("/\n"))
        .unwrap_or_else(|| panic!("{line}"));
    let addr = url.to_string();
    let mut all = String::new();
    let mut ask = |host: &str, path: &str| {
        let reply = get(&addr, host, path);
        all.push_str(&reply);
        reply
    };
    let body = |reply: &str| reply[reply.find("\r\n\r\n").unwrap() + 4..].to_string();
    let rebound = ask("evil.example", "/api/runs");
    assert!(rebound.starts_with("HTTP/1.1 403 "), "{rebound}");
    assert_eq!(body(&rebound), "forbidden host\n");
    let port = url.rsplit(':').next().unwrap();
    assert!(ask(&format!("localhost:{port}"), "/").starts_with("HTTP/1.1 200 "));
    let other_port = ask("127.0.0.1:1", "/");
    assert!(other_port.starts_with("HTTP/1.1 403 "), "{other_port}");
    let page = ask(url, "/");
    assert!(page.starts_with("HTTP/1.1 200 "));
    assert!(page.contains("Content-Security-Policy: default-src 'none'"));
    assert!(ask(url, "/app.js").contains("new EventSource("));
    let list: Value =
        serde_json::from_str(&body(&ask(url, "/api/runs?status=failed&target=plans"))).unwrap();
    let runs = list["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (
            &runs[0]["id"],
            &runs[0]["target"],
            &runs[0]["total"],
            &runs[0]["steps"]
        ),
        (
            &json!("ev"),
            &json!("plans/p.yaml"),
            &json!(3),
            &json!({"completed": 1, "failed": 1, "skipped": 1, "waiting": 0, "pending": 0})
        )
    );
    let list: Value =
        serde_json::from_str(&body(&ask(url, "/api/runs?target=graphs%2Fg"))).unwrap();
    assert_eq!(list["runs"][0]["id"], json!("gr"));
    assert_eq!(list["runs"].as_array().unwrap().len(), 1);
    let run: Value = serde_json::from_str(&body(&ask(url, "/api/runs/gr"))).unwrap();
    assert_eq!(
        run["layout"],
        json!({"width": 420, "height": 80,
            "nodes": [
                {"id": "ask", "label": "action: t/json", "kind": "action", "x": 20, "y": 20},
                {"id": "done", "label": "return", "kind": "return", "x": 240, "y": 20}],
            "edges": [
                {"from": "ask", "to": "done", "when": "state.n > 1"},
                {"from": "ask", "to": "ask", "when": "otherwise"}]})
    );
    // A graph step's rendered inputs: in its whole event, left out of the stream.
    let graph_log = ran.read(".strata/runs/gr/events.jsonl");
    let step_at = graph_log.find('\n').unwrap() + 1;
    let step: Value = serde_json::from_str(&body(&ask(
        url,
        &format!("/api/runs/gr/event?at={step_at}"),
    )))
    .unwrap();
    assert_eq!(
        (&step["event"], &step["inputs"]),
        (&json!("step"), &json!({"n": 2}))
    );
    assert!(!ask(url, "/api/runs/gr/events").contains("\"inputs\""));
    let list: Value =
        serde_json::from_str(&body(&ask(url, "/api/runs?target=directives"))).unwrap();
    let directive = &list["runs"][0];
    assert_eq!(
        (
            &directive["kind"],
            &directive["target"],
            &directive["status"],
            &directive["total"],
            &directive["steps"]
        ),
        (
            &json!("directive"),
            &json!("directives/d.md"),
            &json!("failed"),
            &json!(3),
            &json!({"completed": 1, "failed": 1, "skipped": 1, "waiting": 0, "pending": 0})
        )
    );
    let directive_id = directive["id"].as_str().unwrap();
    let run: Value =
        serde_json::from_str(&body(&ask(url, &format!("/api/runs/{directive_id}")))).unwrap();
    assert_eq!(
        run["layout"],
        json!({"width": 640, "height": 80,
            "nodes": [
                {"id": "a", "label": "t/json", "kind": "step", "x": 20, "y": 20},
                {"id": "b", "label": "t/fail", "kind": "step", "x": 240, "y": 20},
                {"id": "c", "label": "t/json", "kind": "step", "x": 460, "y": 20}],
            "edges": [
                {"from": "a", "to": "b", "when": null},
                {"from": "b", "to": "c", "when": null}]})
    );
    let directive_stream = ask(url, &format!("/api/runs/{directive_id}/events"));
    assert!(directive_stream.contains("\"event\":\"action_finished\""));
    assert!(directive_stream.ends_with("event: end\ndata: {}\n\n"));
    let log = ran.read(".strata/runs/ev/events.jsonl");
    let ends: Vec<usize> = log.match_indices('\n').map(|(i, _)| i + 1).collect();
    // Steps streamed in: no plan to draw.
    let streamed: Value = serde_json::from_str(&body(&ask(url, "/api/runs/st"))).unwrap();
    assert_eq!(
        (&streamed["run"]["target"], &streamed["layout"]),
        (
            &json!("<stdin>"),
            &json!({"width": 40, "height": 40, "nodes": [], "edges": []})
        )
    );
    let stream = ask(url, "/api/runs/ev/events");
    assert!(stream.contains("Content-Type: text/event-stream"));
    let messages = |stream: &str| -> Vec<(String, Value)> {
        let lines: Vec<&str> = stream.lines().collect();
        lines
            .windows(2)
            .filter_map(|w| {
                let id = w[0].strip_prefix("id: ")?;
                let data = w[1].strip_prefix("data: ")?;
                Some((id.to_string(), serde_json::from_str(data).unwrap()))
            })
            .collect()
    };
    let all_events = messages(&stream);
    assert_eq!(all_events.len(), 1, "one message for what was read at once");
    assert_eq!(all_events[0].0, ends[6].to_string());
    let events = all_events[0].1.as_array().unwrap();
    assert_eq!(events.len(), 7);
    // Streamed without its detail, which is read by its offset.
    assert_eq!(
        events[4],
        json!({"ts": events[4]["ts"], "event": "step_finished", "id": "b", "tool": "t/fail",
               "status": "failed", "ms": events[4]["ms"], "exit_code": 3,
               "error": {"message": "tool `t/fail` exited with code 3"}, "at": ends[3]})
    );
    let whole: Value = serde_json::from_str(&body(&ask(
        url,
        &format!("/api/runs/ev/event?at={}", ends[3]),
    )))
    .unwrap();
    assert_eq!(whole["record"]["run"]["stderr"], json!("token was ***\n"));
    assert!(stream.ends_with("event: end\ndata: {}\n\n"));
    // Resumed after the fourth event: the three after it.
    let rest = messages(&ask(url, &format!("/api/runs/ev/events?from={}", ends[3])));
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].1.as_array().unwrap()[..], events[4..]);
    let missing = ask(url, "/api/runs/nope");
    assert!(missing.starts_with("HTTP/1.1 404 "));
    assert_eq!(
        body(&missing),
        "{\"error\":\"no run `nope`\",\"hint\":\"`strata runs` lists the runs of this project\"}"
    );
    assert!(!all.contains(CANARY), "the canary was served");
    view.signal(libc::SIGTERM);
    view.finish();
}

const DIRECTIVE: &str = "---\nname: d\nactions:\n  - {id: a, tool: t/json, params: {n: 1}}\n  - {id: b, tool: t/fail}\n  - {id: c, tool: t/json}\n---\nDone.\n";

/// The id of the one run of `p`.
fn only_run(p: &common::Ran) -> String {
    let listed = p.then(&["runs", "--json"]).status(0).run();
    let runs: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    runs[0]["run_id"].as_str().unwrap().to_string()
}

#[test]
fn a_directive_run_is_recorded_with_its_event_log_and_listed_and_shown() {
    let p = project()
        .env("API_TOKEN", CANARY)
        .args(&["run", "directives/d.md", "--quiet"])
        .status(1)
        .run();
    // What the run prints is what it printed before it was recorded.
    assert_eq!(
        p.stdout,
        "directive d: failed\nstopped: action `b` failed: tool `t/fail` exited with code 3\n\n--- prompt ---\nDone.\n\n--- actions ---\n[completed] a (t/json)\n    | {\"n\":1}\n[failed] b (t/fail): tool `t/fail` exited with code 3\n    ! token was ***\n[skipped] c (t/json): the directive stopped before this action\n"
    );
    let id = only_run(&p);
    let log: Vec<Value> = events(&p, &id)
        .into_iter()
        .map(|mut e| {
            e.as_object_mut().unwrap().remove("elapsed_ms");
            e
        })
        .collect();
    assert_eq!(
        log,
        vec![
            json!({"event": "run_started", "run_id": id, "directive": "directives/d.md"}),
            json!({"event": "action_started", "index": 0, "id": "a", "tool": "t/json"}),
            json!({"event": "action_finished", "index": 0, "id": "a", "tool": "t/json",
                   "status": "completed", "error": null, "stderr": null}),
            json!({"event": "action_started", "index": 1, "id": "b", "tool": "t/fail"}),
            json!({"event": "action_finished", "index": 1, "id": "b", "tool": "t/fail",
                   "status": "failed", "error": "tool `t/fail` exited with code 3",
                   "stderr": "token was ***"}),
            json!({"event": "action_finished", "index": 2, "id": "c", "tool": "t/json",
                   "status": "skipped", "error": "the directive stopped before this action",
                   "stderr": null}),
            json!({"event": "run_finished", "status": "failed",
                   "stopped": "action `b` failed: tool `t/fail` exited with code 3"}),
        ]
    );
    let checkpoint: Value =
        serde_json::from_str(&p.read(&format!(".strata/runs/{id}/checkpoint.json"))).unwrap();
    assert_eq!(
        (
            &checkpoint["kind"],
            &checkpoint["status"],
            &checkpoint["steps"],
            &checkpoint["actions"]
        ),
        (
            &json!("directive"),
            &json!("failed"),
            &json!(3),
            &json!([{"id": "a", "tool": "t/json"}, {"id": "b", "tool": "t/fail"},
                    {"id": "c", "tool": "t/json"}])
        )
    );
    assert!(!p
        .read(&format!(".strata/runs/{id}/checkpoint.json"))
        .contains(CANARY));
    // The directive as it was when the run started.
    assert_eq!(
        p.read(&format!(".strata/runs/{id}/directive.md")),
        DIRECTIVE
    );
    let listed = p.then(&["runs"]).status(0).run();
    assert_eq!(
        listed.stdout,
        format!(
            "RUN{}  GRAPH                      STATUS  STEPS  NEXT\n{id}  directive:directives/d.md  failed  3      -\n",
            " ".repeat(id.len() - 3)
        )
    );
    let shown = p.then(&["runs", "show", &id]).status(0).run();
    let head = &shown.stdout[..shown.stdout.find("  started:").unwrap()];
    assert_eq!(
        head,
        format!(
            "run {id}\n  directive: directives/d.md\n  status:   failed, 3 of 3 actions finished\n"
        )
    );
    let timeline = &shown.stdout[shown.stdout.find("timeline:").unwrap()..];
    assert_eq!(
        timeless(timeline),
        "timeline:
  +N ms  run_started directives/d.md
  +N ms  action_started a (t/json)
  +N ms  action_finished a (t/json): completed in N ms
  +N ms  action_started b (t/fail)
  +N ms  action_finished b (t/fail): failed in N ms
  +N ms  action_finished c (t/json): skipped in N ms
  +N ms  run_finished failed
"
    );
    p.then(&["runs", "prune"])
        .stdout(&format!(
            "removed {id} (directive:directives/d.md, failed)\n"
        ))
        .status(0)
        .run();
}

#[test]
fn a_directive_dry_run_is_not_recorded() {
    project()
        .args(&["run", "directives/d.md", "--dry-run", "--quiet"])
        .status(0)
        .run()
        .then(&["runs"])
        .stdout("no runs yet\n")
        .status(0)
        .run();
}

const SECRET_GRAPH: &str = "kind: graph
parameters:
  type: object
  properties:
    key: {type: string}
start: a
nodes:
  a:
    kind: action
    tool: t/fail
    params: {text: \"key ${inputs.key}\"}
    next: done
  done:
    kind: return
    output: 1
";

#[test]
fn a_graph_steps_rendered_inputs_are_logged_redacted() {
    let p = project()
        .tool("graphs/s", SECRET_GRAPH)
        .env("API_TOKEN", CANARY)
        .args(&[
            "run",
            "graphs/s",
            "--run-id",
            "sg",
            "--input",
            &format!("key={CANARY}"),
            "--quiet",
        ])
        .status(1)
        .run();
    let log = events(&p, "sg");
    assert_eq!(
        (&log[1]["event"], &log[1]["inputs"]),
        (&json!("error"), &json!({"text": "key ***"}))
    );
}

const FOREACH_GRAPH: &str = "kind: graph
state: {items: [1, 2, 3]}
start: each
nodes:
  each:
    kind: foreach
    over: \"${state.items}\"
    as: item
    do:
      kind: action
      tool: t/json
      params: {n: \"${item}\"}
    next: more
  more:
    kind: foreach
    over: [a, b, c]
    as: item
    do:
      kind: action
      tool: t/fail
      params: {text: \"${item}\"}
    next: done
  done:
    kind: return
    output: 1
";

#[test]
fn a_foreach_logs_each_elements_start_and_end_and_stops_at_a_failed_one() {
    let p = project()
        .tool("graphs/f", FOREACH_GRAPH)
        .env("API_TOKEN", CANARY)
        .args(&["run", "graphs/f", "--run-id", "fe", "--quiet"])
        .status(1)
        .run();
    let raw = p.read(".strata/runs/fe/events.jsonl");
    let ms: Vec<bool> = raw
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "element_finished")
        .map(|e| e["ms"].is_u64())
        .collect();
    assert_eq!(ms, vec![true; 4], "every ended element has its time");
    let log: Vec<Value> = events(&p, "fe")
        .into_iter()
        .filter(|e| e["event"] != "error" && e["event"] != "finished")
        .collect();
    let started = |step: u64, node: &str, index: u64| json!({"event": "element_started", "step": step, "node": node, "index": index});
    let done = |step: u64, node: &str, index: u64| {
        json!({"event": "element_finished", "step": step, "node": node, "index": index,
               "status": "done"})
    };
    assert_eq!(
        log,
        vec![
            json!({"event": "started", "run_id": "fe", "graph": "graphs/f", "node": "each", "step": 0, "resumed": false}),
            json!({"event": "foreach_started", "step": 1, "node": "each", "count": 3}),
            started(1, "each", 0),
            done(1, "each", 0),
            started(1, "each", 1),
            done(1, "each", 1),
            started(1, "each", 2),
            done(1, "each", 2),
            json!({"event": "step", "step": 1, "node": "each", "kind": "foreach",
                   "edge": {"to": "more", "why": "next", "when": null}, "changes": []}),
            json!({"event": "foreach_started", "step": 2, "node": "more", "count": 3}),
            started(2, "more", 0),
            json!({"event": "element_finished", "step": 2, "node": "more", "index": 0,
                   "status": "failed", "error": "tool_failed"}),
        ]
    );
}

#[test]
fn runs_show_sums_a_foreachs_elements_up_and_names_the_failed_ones() {
    let p = project()
        .tool("graphs/f", FOREACH_GRAPH)
        .args(&["run", "graphs/f", "--run-id", "fe", "--quiet"])
        .status(1)
        .run();
    let shown = p.then(&["runs", "show", "fe"]).status(0).run();
    let timeline = &shown.stdout[shown.stdout.find("timeline:").unwrap()..];
    let lines: Vec<String> = timeless(timeline)
        .lines()
        .map(|l| {
            l.trim_start()
                .trim_start_matches("+N ms")
                .trim()
                .to_string()
        })
        .filter(|l| l.contains("foreach") || l.contains("element"))
        .collect();
    assert_eq!(
        lines,
        [
            "foreach_started 1 each: 3 elements",
            "elements 1 each: 3 done",
            "step 1 each (foreach) -> more",
            "foreach_started 2 more: 3 elements",
            "element_finished 2 more[0]: failed (tool_failed)",
            "elements 2 more: 1 failed, 2 not run",
            "error 2 more: element 0: tool `t/fail` exited with code 3",
        ]
    );
}

const PARALLEL_GRAPH: &str = "kind: graph
start: each
nodes:
  each:
    kind: foreach
    over: [0, 1, 2, 3, 4, 5]
    as: item
    parallel: true
    max_concurrency: 3
    do:
      kind: action
      tool: t/json
      params: {n: \"${item}\"}
    next: done
  done:
    kind: return
    output: 1
";

#[test]
fn a_parallel_foreach_logs_every_elements_start_before_its_end() {
    let p = project()
        .tool("graphs/par", PARALLEL_GRAPH)
        .args(&["run", "graphs/par", "--run-id", "pe", "--quiet"])
        .status(0)
        .run();
    let log = events(&p, "pe");
    assert_eq!(
        log[1],
        json!({"event": "foreach_started", "step": 1, "node": "each", "count": 6})
    );
    // Elements interleave in no set order: each one's start comes before its end.
    let mut seen: Vec<(u64, &str)> = log[2..14]
        .iter()
        .map(|e| (e["index"].as_u64().unwrap(), e["event"].as_str().unwrap()))
        .collect();
    for i in 0..6 {
        let at = |name: &str| seen.iter().position(|s| *s == (i, name)).unwrap();
        assert!(at("element_started") < at("element_finished"), "{seen:?}");
    }
    seen.sort();
    let expected: Vec<(u64, &str)> = (0..6)
        .flat_map(|i| [(i, "element_finished"), (i, "element_started")])
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(log[14]["event"], "step");
    assert!(log[2..14].iter().all(|e| e["status"] != "failed"));
}
