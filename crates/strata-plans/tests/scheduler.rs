//! The scheduler over scripted tools: failure propagation, concurrency bounds, event-driven
//! starts, resume, waiting steps, streamed steps.

use std::io::Cursor;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use strata_core::{ErrorKind, FieldPath, Limits};
use strata_plans::stream::StepLines;
use strata_plans::{Event, Observer, Outcome, Plan, Scheduler, Silent, State, StepPool};
use strata_tools::{FakeTools, RunResult, StepRecord, ToolRunner};

fn plan(v: Value) -> Plan {
    Plan::from_value(&v, &FieldPath::root()).unwrap_or_else(|e| panic!("{e:?}"))
}

/// Records events as lines: `start a`, `end a completed`, `wait a x,y`, `rejected …`.
#[derive(Default)]
struct Log(Vec<String>);

impl Observer for Log {
    fn on(&mut self, event: Event<'_>) {
        self.0.push(match event {
            Event::Started { step, .. } => format!("start {}", step.id),
            Event::Finished { step, record, .. } => {
                format!("end {} {}", step.id, record.status.name())
            }
            Event::Retrying {
                step,
                record,
                attempt,
                attempts,
                delay,
            } => format!(
                "retry {} {attempt}/{attempts} {} in {}ms",
                step.id,
                record.status.name(),
                delay.as_millis()
            ),
            Event::Waiting { step, names } => format!("wait {} {}", step.id, names.join(",")),
            Event::Rejected { errors } => format!(
                "rejected {}",
                errors
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
        });
    }
}

fn scheduler<'a>(
    tools: &'a dyn ToolRunner,
    jobs: usize,
    values: &'a Map<String, Value>,
) -> Scheduler<'a> {
    // The default limits, for as long as the test runs.
    let limits: &'static Limits = Box::leak(Box::default());
    Scheduler {
        limits,
        runner: tools,
        jobs,
        values,
        call: Default::default(),
        doc: None,
    }
}

fn states(o: &Outcome) -> Vec<(String, &'static str)> {
    (0..o.plan.steps.len())
        .map(|i| (o.plan.steps[i].id.clone(), o.state(i).name()))
        .collect()
}

fn echo() -> FakeTools {
    FakeTools::new()
        .tool("echo", |p| {
            Ok(RunResult::ok(Value::Object(p.clone()).to_string()))
        })
        .tool("fail", |_| Ok(RunResult::exited(3, "", "boom\n")))
}

fn exercise(b_tool: &str) -> Plan {
    plan(json!([
        {"id": "A", "tool": "echo", "arguments": {"data": [{"email": "ann@example.com"}]}},
        {"id": "B", "tool": b_tool, "arguments": {"from": "{{A.result.data[0].email}}"}},
        {"id": "C", "tool": "echo", "arguments": {"text": "{{B.result.from}}"}},
        {"id": "D", "tool": "echo", "arguments": {"to": "{{A.result.data[0].email}}", "body": "{{C.result.text}}"}},
    ]))
}

/// The events of the exercise run in dependency order.
const EXERCISE_IN_ORDER: [&str; 8] = [
    "start A",
    "end A completed",
    "start B",
    "end B completed",
    "start C",
    "end C completed",
    "start D",
    "end D completed",
];

#[test]
fn the_exercise_runs_in_dependency_order() {
    let tools = echo();
    let values = Map::new();
    let mut log = Log::default();
    let o = scheduler(&tools, 4, &values).run(&exercise("echo"), Vec::new(), &mut log);
    assert_eq!(log.0, EXERCISE_IN_ORDER);
    assert!(o.success());
    assert_eq!(
        o.records["D"].result,
        json!({"to": "ann@example.com", "body": "ann@example.com"})
    );
}

#[test]
fn when_b_fails_c_and_d_are_skipped_and_a_completed() {
    let tools = echo();
    let values = Map::new();
    let mut log = Log::default();
    let o = scheduler(&tools, 4, &values).run(&exercise("fail"), Vec::new(), &mut log);
    assert_eq!(
        states(&o),
        [
            ("A".into(), "completed"),
            ("B".into(), "failed"),
            ("C".into(), "skipped"),
            ("D".into(), "skipped")
        ]
    );
    assert_eq!(
        o.records["B"].message(),
        Some("tool `fail` exited with code 3")
    );
    assert_eq!(o.records["C"].message(), Some("step `B` failed"));
    assert_eq!(o.records["D"].message(), Some("step `C` was skipped"));
    assert_eq!(
        log.0,
        [
            "start A",
            "end A completed",
            "start B",
            "end B failed",
            "end C skipped",
            "end D skipped"
        ]
    );
    assert!(!o.success());
}

#[test]
fn independent_steps_keep_running_after_a_failure() {
    let tools = echo();
    let values = Map::new();
    let p = plan(json!([
        {"id": "bad", "tool": "fail", "arguments": {}},
        {"id": "after_bad", "tool": "echo", "arguments": {"x": "{{bad.result}}"}},
        {"id": "free", "tool": "echo", "arguments": {"y": 1}},
        {"id": "after_free", "tool": "echo", "arguments": {"y": "{{free.result.y}}"}, "depends_on": ["free"]},
    ]));
    let o = scheduler(&tools, 1, &values).run(&p, Vec::new(), &mut Silent);
    assert_eq!(
        states(&o),
        [
            ("bad".into(), "failed"),
            ("after_bad".into(), "skipped"),
            ("free".into(), "completed"),
            ("after_free".into(), "completed")
        ]
    );
    assert_eq!(o.records["after_free"].result, json!({"y": 1}));
}

/// A tool that sleeps and records how many calls ran at once.
fn sleepy(now: Arc<AtomicUsize>, max: Arc<AtomicUsize>, ms: u64) -> FakeTools {
    FakeTools::new().tool("sleep", move |p| {
        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
        max.fetch_max(n, Ordering::SeqCst);
        let ms = p.get("ms").and_then(Value::as_u64).unwrap_or(ms);
        std::thread::sleep(Duration::from_millis(ms));
        now.fetch_sub(1, Ordering::SeqCst);
        Ok(RunResult::ok(format!("{ms}")))
    })
}

#[test]
fn at_most_jobs_steps_run_at_once() {
    let steps: Vec<Value> = (0..6)
        .map(|_| json!({"tool": "sleep", "arguments": {}}))
        .collect();
    let p = plan(Value::Array(steps));
    for jobs in [1, 2, 6] {
        let (now, max) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let tools = sleepy(now, max.clone(), 30);
        let values = Map::new();
        let o = scheduler(&tools, jobs, &values).run(&p, Vec::new(), &mut Silent);
        assert!(o.success());
        assert_eq!(max.load(Ordering::SeqCst), jobs, "jobs {jobs}");
    }
}

#[test]
fn a_step_starts_when_its_own_dependencies_completed_not_its_level() {
    // `slow` and `fast` are level 0; `next` (level 1) needs only `fast`, and must start
    // and end while `slow` still runs.
    let p = plan(json!([
        {"id": "slow", "tool": "sleep", "arguments": {"ms": 400}},
        {"id": "fast", "tool": "sleep", "arguments": {"ms": 1}},
        {"id": "next", "tool": "sleep", "arguments": {"ms": 1, "after": "{{fast.status}}"}},
    ]));
    let tools = sleepy(Arc::default(), Arc::default(), 1);
    let values = Map::new();
    let mut log = Log::default();
    scheduler(&tools, 2, &values).run(&p, Vec::new(), &mut log);
    assert_eq!(
        log.0,
        [
            "start slow",
            "start fast",
            "end fast completed",
            "start next",
            "end next completed",
            "end slow completed"
        ]
    );
}

#[test]
fn a_resumed_run_does_not_run_completed_steps_again() {
    let tools = echo();
    let values = Map::new();
    let mut a = StepRecord::from_run(
        "A",
        "echo",
        &RunResult::ok("{\"data\": [{\"email\": \"kept@x\"}]}"),
    );
    a.run = None;
    let o = scheduler(&tools, 2, &values).run(&exercise("echo"), vec![a], &mut Silent);
    assert!(o.success());
    assert_eq!(
        tools
            .calls()
            .iter()
            .map(|(t, p)| format!("{t} {p}"))
            .collect::<Vec<_>>(),
        [
            r#"echo {"from":"kept@x"}"#,
            r#"echo {"text":"kept@x"}"#,
            r#"echo {"to":"kept@x","body":"kept@x"}"#,
        ]
    );
}

#[test]
fn steps_missing_values_wait_with_their_dependents() {
    let p = plan(json!([
        {"id": "ask", "tool": "echo", "arguments": {"title": "{{PLACEHOLDER_title}}", "when": "{{PLACEHOLDER_when}}"}},
        {"id": "then", "tool": "echo", "arguments": {"x": "{{ask.result}}", "who": "{{PLACEHOLDER_who}}"}},
        {"id": "free", "tool": "echo", "arguments": {"who": "{{PLACEHOLDER_who}}"}},
    ]));
    let tools = echo();
    let values: Map<String, Value> = json!({"who": "Ann"}).as_object().cloned().unwrap();
    let mut log = Log::default();
    let o = scheduler(&tools, 2, &values).run(&p, Vec::new(), &mut log);
    assert_eq!(
        states(&o),
        [
            ("ask".into(), "waiting"),
            ("then".into(), "waiting"),
            ("free".into(), "completed")
        ]
    );
    assert_eq!(o.missing_values, ["title", "when"]);
    assert_eq!(o.waiting_for[1], ["title", "when"]);
    assert_eq!(&log.0[..2], ["wait ask title,when", "wait then title,when"]);
    let values: Map<String, Value> = json!({"who": "Ann", "title": "T", "when": 5})
        .as_object()
        .cloned()
        .unwrap();
    let o = scheduler(&tools, 2, &values).run(&p, Vec::new(), &mut Silent);
    assert!(o.success());
    assert_eq!(o.records["ask"].result, json!({"title": "T", "when": 5}));
}

#[test]
fn a_missing_path_fails_the_step_and_arguments_must_be_a_map() {
    let p = plan(json!([
        {"id": "a", "tool": "echo", "arguments": {"n": 1}},
        {"id": "b", "tool": "echo", "arguments": {"x": "{{a.result.m}}"}},
        {"id": "c", "tool": "echo", "arguments": "{{a.result.n}}"},
    ]));
    let tools = echo();
    let values = Map::new();
    let o = scheduler(&tools, 1, &values).run(&p, Vec::new(), &mut Silent);
    let b = &o.records["b"];
    assert_eq!(b.error.as_ref().unwrap().kind, ErrorKind::PathNotFound);
    assert_eq!(
        b.message(),
        Some("plan error at [1].arguments.x 0..14: `{{a.result.m}}`: step `a` has no `result.m`; `result` has `n`")
    );
    assert_eq!(
        o.records["c"].message(),
        Some("plan error at [2].arguments: the arguments of step `c` must be a map, not integer")
    );
}

#[test]
fn results_reach_the_next_tool_byte_for_byte() {
    let nasty = "{{b.result.secret}} $step2 \"q\"\n\\ ${HOME} {x}";
    let tools = FakeTools::new()
        .tool("emit", move |_| {
            Ok(RunResult::ok(json!({"text": nasty}).to_string()))
        })
        .tool("echo", |p| {
            Ok(RunResult::ok(Value::Object(p.clone()).to_string()))
        });
    let p = plan(json!([
        {"tool": "emit", "arguments": {}},
        {"tool": "echo", "arguments": {"whole": "$step1.text", "in": "[{$step1.text}]"}},
    ]));
    let values = Map::new();
    scheduler(&tools, 1, &values).run(&p, Vec::new(), &mut Silent);
    assert_eq!(
        tools.calls()[1].1,
        json!({"whole": nasty, "in": format!("[{nasty}]")})
    );
}

/// Lines fed to the scheduler one by one, each only when the test lets it through.
struct Gate {
    rx: Mutex<mpsc::Receiver<String>>,
    line: Vec<u8>,
    at: usize,
}

impl Gate {
    fn new(rx: mpsc::Receiver<String>) -> Gate {
        Gate {
            rx: Mutex::new(rx),
            line: Vec::new(),
            at: 0,
        }
    }
}

impl std::io::Read for Gate {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        unreachable!("read through BufRead")
    }
}

/// Hands out one line at a time, blocking until the next line is sent.
impl std::io::BufRead for Gate {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.line.len() {
            self.line = self
                .rx
                .lock()
                .unwrap()
                .recv()
                .unwrap_or_default()
                .into_bytes();
            self.at = 0;
        }
        Ok(&self.line[self.at..])
    }
    fn consume(&mut self, n: usize) {
        self.at += n;
    }
}

#[test]
fn streamed_steps_start_as_they_arrive_and_wait_for_steps_not_yet_arrived() {
    let (tx, rx) = mpsc::channel::<String>();
    let (called_tx, called_rx) = mpsc::channel::<String>();
    let called_tx = Mutex::new(called_tx);
    let tools = FakeTools::new().tool("echo", move |p| {
        let _ = called_tx
            .lock()
            .unwrap()
            .send(Value::Object(p.clone()).to_string());
        Ok(RunResult::ok(Value::Object(p.clone()).to_string()))
    });
    let values = Map::new();
    let lines = StepLines::new("<stdin>", None, Gate::new(rx), Limits::default());
    std::thread::scope(|s| {
        let feeder = s.spawn(move || {
            // `b` arrives first and refers to `a`, which has not arrived: it waits.
            tx.send("{\"id\": \"b\", \"tool\": \"echo\", \"arguments\": {\"got\": \"{{a.result.n}}\"}}\n".into()).unwrap();
            tx.send("{\"id\": \"a\", \"tool\": \"echo\", \"arguments\": {\"n\": 1}}\n".into()).unwrap();
            // `a` ran and then `b` ran, before the next line was sent.
            let first = called_rx.recv().unwrap();
            let second = called_rx.recv().unwrap();
            tx.send("{\"tool\": \"echo\", \"arguments\": {\"late\": \"{{zz.result}}\"}}\n".into()).unwrap();
            tx.send("not json\n".into()).unwrap();
            drop(tx);
            (first, second)
        });
        let mut log = Log::default();
        let o = scheduler(&tools, 2, &values).run_stream(lines, &mut log);
        let (first, second) = feeder.join().unwrap();
        assert_eq!(first, r#"{"n":1}"#);
        assert_eq!(second, r#"{"got":1}"#);
        assert_eq!(
            states(&o),
            [
                ("b".into(), "completed"),
                ("a".into(), "completed"),
                ("step3".into(), "failed")
            ]
        );
        assert_eq!(
            o.records["step3"].message(),
            Some("<stdin>:3:41: plan error at arguments.late 0..13: step `step3` refers to unknown step `zz` (hint: the other steps are `b`, `a`)")
        );
        // `b` finishing races the last two lines being read; their own events keep order.
        let tail: Vec<&String> = log.0.iter().filter(|e| *e != "end b completed").collect();
        assert_eq!(
            tail[tail.len() - 2..],
            [
                "rejected <stdin>:4:2: request error at $: JSON syntax error: expected ident",
                "end step3 failed",
            ]
        );
        assert!(
            log.0.contains(&"end b completed".to_string()),
            "{:?}",
            log.0
        );
        assert_eq!(o.plan.level_ids(), [vec!["a", "step3"], vec!["b"]]);
    });
}

#[test]
fn a_stream_cycle_fails_its_steps_at_the_end() {
    let text = "{\"id\": \"x\", \"tool\": \"echo\", \"arguments\": {\"v\": \"{{y.result}}\"}}\n\
                {\"id\": \"y\", \"tool\": \"echo\", \"arguments\": {\"v\": \"{{x.result}}\"}}\n\
                {\"id\": \"z\", \"tool\": \"echo\", \"arguments\": {\"v\": \"{{z.result}}\"}}\n\
                {\"id\": \"x\", \"tool\": \"echo\", \"arguments\": {}}\n";
    let tools = echo();
    let values = Map::new();
    let lines = StepLines::new("<stdin>", None, Cursor::new(text), Limits::default());
    let mut log = Log::default();
    let o = scheduler(&tools, 2, &values).run_stream(lines, &mut log);
    assert_eq!(
        log.0,
        [
            "end z failed",
            "rejected <stdin>:4:8: plan error at id: duplicate step id `x`: steps 1 and 4 (hint: every step needs its own id)",
            "end x failed",
            "end y failed",
        ]
    );
    assert_eq!(
        o.records["x"].message(),
        Some("<stdin>:1:49: plan error at arguments.v 0..12: circular dependency: x -> y -> x (hint: a step cannot depend on itself, directly or through others)")
    );
    assert_eq!(
        o.records["z"].error.as_ref().unwrap().kind,
        ErrorKind::Cycle
    );
    assert_eq!(o.state(2), State::Failed);
}

/// Runs whole steps as `strata plan step` would, over `tools`, noting each attempt with its
/// ticket, its attempt number and the ids of the records it was given (and the tickets it
/// waits for, started ahead); its steps end when [`StepPool::finished`] is next asked — in
/// reverse order, when `reverse`; only when it is asked to wait for them, when `hold`. Notes
/// what [`StepPool::awaited`] says.
struct Elsewhere<'a> {
    tools: &'a dyn ToolRunner,
    values: &'a Map<String, Value>,
    given: Mutex<Vec<String>>,
    ended: Mutex<Vec<(usize, Option<StepRecord>)>>,
    /// Runs steps ahead of those they depend on.
    ahead: bool,
    reverse: bool,
    hold: bool,
    /// Every record made, by ticket.
    made: Mutex<std::collections::HashMap<usize, StepRecord>>,
    awaited: Mutex<Vec<bool>>,
}

impl<'a> Elsewhere<'a> {
    fn new(tools: &'a dyn ToolRunner, values: &'a Map<String, Value>) -> Elsewhere<'a> {
        Elsewhere {
            tools,
            values,
            given: Mutex::new(Vec::new()),
            ended: Mutex::new(Vec::new()),
            ahead: false,
            reverse: false,
            hold: false,
            made: Mutex::new(Default::default()),
            awaited: Mutex::new(Vec::new()),
        }
    }
}

impl StepPool for Elsewhere<'_> {
    fn start(
        &self,
        ticket: usize,
        step: &strata_plans::Step,
        records: &[StepRecord],
        after: &[usize],
        attempt: u32,
    ) {
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        let mut note = format!("{} <- {}", step.id, ids.join(","));
        if !after.is_empty() {
            note += &format!(" after {after:?}");
        }
        if attempt > 1 {
            note += &format!(" (attempt {attempt}, ticket {ticket})");
        }
        self.given.lock().unwrap().push(note);
        let mut records = records.to_vec();
        for d in after {
            match self.made.lock().unwrap().get(d) {
                Some(r) if r.status == strata_tools::StepStatus::Completed => {
                    records.push(r.clone())
                }
                _ => {
                    self.ended.lock().unwrap().push((ticket, None));
                    return;
                }
            }
        }
        let records: strata_plans::RecordMap =
            records.iter().map(|r| (r.id.clone(), r.clone())).collect();
        let sources = strata_plans::Sources {
            records: &records,
            values: self.values,
        };
        let limits = Limits::default();
        let record = match strata_plans::resolve_parameters_within(step, &sources, &limits) {
            Ok(args) => match self.tools.run(&step.tool, &args, &Default::default()) {
                Ok(run) => StepRecord::from_run(&step.id, &step.tool, &run),
                Err(e) => StepRecord::failed(&step.id, &e),
            },
            Err(e) => StepRecord::failed(&step.id, &e),
        };
        self.made.lock().unwrap().insert(ticket, record.clone());
        self.ended.lock().unwrap().push((ticket, Some(record)));
    }

    fn finished(&self, timeout: Option<Duration>) -> Vec<(usize, Option<StepRecord>)> {
        if self.hold && timeout == Some(Duration::ZERO) {
            return Vec::new();
        }
        let mut ended = std::mem::take(&mut *self.ended.lock().unwrap());
        if self.reverse {
            ended.reverse();
        }
        ended
    }

    fn ahead(&self) -> bool {
        self.ahead
    }

    fn awaited(&self, awaited: bool) {
        self.awaited.lock().unwrap().push(awaited);
    }
}

#[test]
fn a_pool_is_told_whether_its_answers_are_awaited_or_only_end_the_run() {
    let tools = echo();
    let values = Map::new();
    let chain = exercise("echo");
    // Each wait for answers: whether a step is still to start. Started ahead, every step is
    // handed over at once, and no answer is awaited to start another.
    for (ahead, awaited) in [(false, vec![true, true, true, false]), (true, vec![false])] {
        let mut elsewhere = Elsewhere::new(&tools, &values);
        (elsewhere.ahead, elsewhere.hold) = (ahead, true);
        scheduler(&tools, 4, &values).run_elsewhere(&chain, Vec::new(), &elsewhere, &mut Silent);
        assert_eq!(
            elsewhere.awaited.into_inner().unwrap(),
            awaited,
            "ahead: {ahead}"
        );
    }
    // A step that may run again keeps its answer awaited, ahead or not, until it is done.
    let tools = flaky(1, Some(json!({"limit": 2, "delay": "1ms"})));
    let p = plan(json!([
        {"id": "a", "tool": "flaky", "arguments": {}},
        {"id": "b", "tool": "echo", "arguments": {}},
    ]));
    let mut elsewhere = Elsewhere::new(&tools, &values);
    (elsewhere.ahead, elsewhere.hold) = (true, true);
    let o = scheduler(&tools, 4, &values).run_elsewhere(&p, Vec::new(), &elsewhere, &mut Silent);
    assert_eq!(o.records["a"].run.as_ref().unwrap()["attempts"], json!(2));
    // (Told at each wait, the retry's delay polled for as well.)
    let awaited = elsewhere.awaited.into_inner().unwrap();
    assert!(
        !awaited.is_empty() && awaited.iter().all(|a| *a),
        "{awaited:?}"
    );
}

#[test]
fn steps_run_elsewhere_whole_get_the_records_they_depend_on_and_give_the_local_records() {
    let tools = echo();
    let values = Map::new();
    let plan = exercise("echo");
    let near = scheduler(&tools, 4, &values).run(&plan, Vec::new(), &mut Silent);
    // Started ahead, each step is handed over as soon as the one before it was, and waits
    // there for the records it needs: the chain never waits here.
    let handed = [
        (false, ["A <- ", "B <- A", "C <- B", "D <- A,C"]),
        (
            true,
            [
                "A <- ",
                "B <-  after [0]",
                "C <-  after [1]",
                "D <-  after [0, 2]",
            ],
        ),
    ];
    for (ahead, given) in handed {
        let mut elsewhere = Elsewhere::new(&tools, &values);
        elsewhere.ahead = ahead;
        let mut log = Log::default();
        let far =
            scheduler(&tools, 4, &values).run_elsewhere(&plan, Vec::new(), &elsewhere, &mut log);
        assert_eq!(far.step_records(), near.step_records());
        // Scheduled here, in dependency order; each start reported when the step was handed
        // over with every record it needs, or when the last step it waited for completed.
        assert_eq!(log.0, EXERCISE_IN_ORDER);
        assert_eq!(elsewhere.given.into_inner().unwrap(), given);
    }
}

#[test]
fn steps_run_elsewhere_are_skipped_and_wait_here() {
    let tools = echo();
    let values = Map::new();
    let elsewhere = Elsewhere::new(&tools, &values);
    let plan = plan(json!([
        {"id": "A", "tool": "fail", "arguments": {}},
        {"id": "B", "tool": "echo", "arguments": {"x": "{{A.result}}"}},
        {"id": "C", "tool": "echo", "arguments": {"t": "{{PLACEHOLDER_title}}"}},
        {"id": "D", "tool": "echo", "arguments": {"t": "{{C.result}}"}},
    ]));
    let o = scheduler(&tools, 4, &values).run_elsewhere(&plan, Vec::new(), &elsewhere, &mut Silent);
    assert_eq!(
        states(&o),
        [
            ("A".to_string(), "failed"),
            ("B".to_string(), "skipped"),
            ("C".to_string(), "waiting"),
            ("D".to_string(), "waiting")
        ]
    );
    assert_eq!(o.missing_values, ["title"]);
    assert_eq!(elsewhere.given.into_inner().unwrap(), ["A <- "]);
}

/// A tool that fails its first `failures` calls (exit 1), then succeeds; it declares
/// `retries` of its own when `declared` is given. With `cancels`, its first call cancels the
/// run: later calls are stopped, as a cancelled runner stops them.
struct Flaky {
    calls: AtomicUsize,
    failures: usize,
    declared: Option<Value>,
    cancels: bool,
}

impl ToolRunner for Flaky {
    fn has_tool(&self, id: &str) -> bool {
        id == "flaky"
    }

    fn cancelled(&self) -> bool {
        self.cancels && self.calls.load(Ordering::SeqCst) > 0
    }

    fn unknown_tool(&self, id: &str) -> strata_core::Error {
        FakeTools::new().unknown_tool(id)
    }

    fn scale(&self, _: &str) -> strata_tools::Scale {
        strata_tools::Scale::read(None, self.declared.as_ref(), strata_core::Layer::REQUEST)
            .unwrap()
    }

    fn run(
        &self,
        _: &str,
        _: &Map<String, Value>,
        _: &strata_tools::CallOptions,
    ) -> Result<RunResult, strata_core::Error> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.cancels && n > 0 {
            return Err(strata_core::Error::new(
                strata_core::Layer::REQUEST,
                ErrorKind::Cancelled,
                "the run was cancelled",
            ));
        }
        Ok(if n < self.failures {
            RunResult::exited(1, "", "not yet\n")
        } else {
            RunResult::ok("done")
        })
    }
}

fn flaky(failures: usize, declared: Option<Value>) -> Flaky {
    Flaky {
        calls: AtomicUsize::new(0),
        failures,
        declared,
        cancels: false,
    }
}

#[test]
fn a_step_waiting_to_run_again_stops_at_once_when_the_run_is_cancelled() {
    let tools = Flaky {
        cancels: true,
        ..flaky(5, None)
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let values = Map::new();
        let mut log = Log::default();
        let p = plan(json!([
            {"id": "a", "tool": "flaky", "arguments": {}, "retries": {"limit": 3, "delay": "1h"}},
        ]));
        let o = scheduler(&tools, 1, &values).run(&p, Vec::new(), &mut log);
        let _ = tx.send((log.0, o.records["a"].clone(), tools.calls.into_inner()));
    });
    // Not an hour: the wait stops with the cancel (this deadline only stops a broken
    // scheduler from hanging the test).
    let (log, record, calls) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the step waited out its retry delay after the cancel");
    assert_eq!(
        log,
        ["start a", "retry a 1/4 failed in 3600000ms", "end a failed"]
    );
    let e = record.error.unwrap();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            ErrorKind::Cancelled,
            "request error at $: the run was cancelled"
        )
    );
    assert_eq!(calls, 2);
}

#[test]
fn a_failing_tool_runs_again_as_its_step_retries_allow_each_attempt_seen_and_recorded() {
    let tools = flaky(2, None);
    let values = Map::new();
    let mut log = Log::default();
    let p = plan(json!([
        {"id": "a", "tool": "flaky", "arguments": {}, "retries": {"limit": 3, "delay": "1ms"}},
    ]));
    let o = scheduler(&tools, 2, &values).run(&p, Vec::new(), &mut log);
    assert_eq!(
        log.0,
        [
            "start a",
            "retry a 1/4 failed in 1ms",
            "retry a 2/4 failed in 1ms",
            "end a completed"
        ]
    );
    let run = o.records["a"].run.as_ref().unwrap();
    assert_eq!(run["attempts"], json!(3));
    assert_eq!(run["retries"], json!({"limit": 3, "delay_ms": 1}));
    assert_eq!(o.records["a"].result, json!("done"));
}

#[test]
fn retries_end_at_the_limit_with_the_last_failure_and_a_step_overrides_its_tool_key_by_key() {
    let tools = flaky(5, Some(json!({"limit": 4, "delay": "2ms"})));
    let values = Map::new();
    let mut log = Log::default();
    let p = plan(json!([
        {"id": "a", "tool": "flaky", "arguments": {}, "retries": {"limit": 1}},
    ]));
    let o = scheduler(&tools, 1, &values).run(&p, Vec::new(), &mut log);
    assert_eq!(
        log.0,
        ["start a", "retry a 1/2 failed in 2ms", "end a failed"]
    );
    let record = &o.records["a"];
    assert_eq!(record.run.as_ref().unwrap()["attempts"], json!(2));
    assert_eq!(
        record.run.as_ref().unwrap()["retries"],
        json!({"limit": 1, "delay_ms": 2})
    );
    assert_eq!(tools.calls.load(Ordering::SeqCst), 2);
    // The tool's own declaration applies to a step that declares none.
    let tools = flaky(1, Some(json!({"limit": 2})));
    let mut log = Log::default();
    let p = plan(json!([{"id": "b", "tool": "flaky", "arguments": {}}]));
    let o = scheduler(&tools, 1, &values).run(&p, Vec::new(), &mut log);
    assert_eq!(
        log.0,
        ["start b", "retry b 1/3 failed in 0ms", "end b completed"]
    );
    assert_eq!(o.records["b"].run.as_ref().unwrap()["attempts"], json!(2));
}

#[test]
fn a_step_without_retries_runs_once_and_its_record_has_no_attempts() {
    let tools = flaky(1, None);
    let values = Map::new();
    let p = plan(json!([{"id": "a", "tool": "flaky", "arguments": {}}]));
    let o = scheduler(&tools, 1, &values).run(&p, Vec::new(), &mut Silent);
    let run = o.records["a"].run.as_ref().unwrap();
    assert_eq!(run.get("attempts"), None);
    assert_eq!(o.records["a"].status.name(), "failed");
    assert_eq!(tools.calls.load(Ordering::SeqCst), 1);
}

/// Steps `a` and `b` (which depends on `a`) over a tool failing its first `failures` calls
/// with the `retries` declared, run elsewhere: the outcome, the events and what was started.
fn flaky_pair_elsewhere(failures: usize, declared: Value) -> (Outcome, Vec<String>, Vec<String>) {
    let tools = flaky(failures, Some(declared));
    let values = Map::new();
    let elsewhere = Elsewhere::new(&tools, &values);
    let mut log = Log::default();
    let p = plan(json!([
        {"id": "a", "tool": "flaky", "arguments": {}},
        {"id": "b", "tool": "flaky", "arguments": {"x": "{{a.result}}"}},
    ]));
    let o = scheduler(&tools, 4, &values).run_elsewhere(&p, Vec::new(), &elsewhere, &mut log);
    (o, log.0, elsewhere.given.into_inner().unwrap())
}

#[test]
fn a_step_run_elsewhere_whose_tool_fails_is_started_again_as_its_retries_allow() {
    let declared = json!({"limit": 3, "delay": "1ms"});
    let (o, log, given) = flaky_pair_elsewhere(2, declared.clone());
    assert_eq!(
        log,
        [
            "start a",
            "retry a 1/4 failed in 1ms",
            "retry a 2/4 failed in 1ms",
            "end a completed",
            "start b",
            "end b completed"
        ]
    );
    assert_eq!(
        given,
        [
            "a <- ",
            "a <-  (attempt 2, ticket 0)",
            "a <-  (attempt 3, ticket 0)",
            "b <- a"
        ]
    );
    // Each record says its attempts and the policy, as a local run's does.
    let run = |id: &str| o.records[id].run.clone().unwrap();
    assert_eq!(
        (run("a")["attempts"].clone(), run("b")["attempts"].clone()),
        (json!(3), json!(1))
    );
    assert_eq!(run("a")["retries"], json!({"limit": 3, "delay_ms": 1}));
    let local =
        scheduler(&flaky(2, Some(declared)), 4, &Map::new()).run(&o.plan, Vec::new(), &mut Silent);
    assert_eq!(o.step_records(), local.step_records());
}

#[test]
fn a_step_run_elsewhere_past_its_retries_fails_and_its_dependents_are_skipped() {
    let (o, log, given) = flaky_pair_elsewhere(9, json!({"limit": 1}));
    assert_eq!(
        log,
        [
            "start a",
            "retry a 1/2 failed in 0ms",
            "end a failed",
            "end b skipped"
        ]
    );
    assert_eq!(o.records["a"].run.as_ref().unwrap()["attempts"], json!(2));
    assert_eq!(given.len(), 2);
}

#[test]
fn a_step_started_ahead_of_a_step_that_fails_is_skipped_whichever_answer_comes_first() {
    let tools = echo();
    let values = Map::new();
    let p = plan(json!([
        {"id": "A", "tool": "fail", "arguments": {}},
        {"id": "B", "tool": "echo", "arguments": {"x": "{{A.result}}"}},
        {"id": "C", "tool": "echo", "arguments": {"x": "{{B.result}}"}},
    ]));
    let near = scheduler(&tools, 4, &values).run(&p, Vec::new(), &mut Silent);
    for reverse in [false, true] {
        let mut elsewhere = Elsewhere::new(&tools, &values);
        (elsewhere.ahead, elsewhere.reverse) = (true, reverse);
        let mut log = Log::default();
        let far = scheduler(&tools, 4, &values).run_elsewhere(&p, Vec::new(), &elsewhere, &mut log);
        assert_eq!(
            far.step_records(),
            near.step_records(),
            "reverse: {reverse}"
        );
        assert_eq!(
            log.0,
            ["start A", "end A failed", "end B skipped", "end C skipped"]
        );
    }
}

#[test]
fn no_step_starts_ahead_of_a_step_that_may_be_retried() {
    let tools = flaky(1, Some(json!({"limit": 1})));
    let values = Map::new();
    let mut elsewhere = Elsewhere::new(&tools, &values);
    elsewhere.ahead = true;
    let p = plan(json!([
        {"id": "a", "tool": "flaky", "arguments": {}},
        {"id": "b", "tool": "flaky", "arguments": {"x": "{{a.result}}"}},
    ]));
    let o = scheduler(&tools, 4, &values).run_elsewhere(&p, Vec::new(), &elsewhere, &mut Silent);
    assert_eq!(o.status().name(), "completed");
    assert_eq!(
        elsewhere.given.into_inner().unwrap(),
        ["a <- ", "a <-  (attempt 2, ticket 0)", "b <- a"]
    );
}
