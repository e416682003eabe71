//! Caller data is never turned into a secret: text holding markers of every known and unknown
//! name — forged, copied from another run, cut and joined — reaches the tool unchanged through
//! a plan's arguments, its user values and a graph's inputs; only a marker the run itself
//! minted is restored, and only for a variable the project declares secret.

mod common;
use common::{app, project, ECHO};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use strata_app::{
    marks, App, ExecOptions, GraphRun, GraphStart, PlanExecution, PlanSource, Runner, WholePlan,
};
use strata_tools::ToolRunner;

/// A declared secret (the project's `.env`), whose value no generated text holds.
const TOKEN: &str = "zq-Secret-Value";

fn keeper() -> tempfile::TempDir {
    project(&[
        ("tools/t/echo.yaml", ECHO),
        (".env", &format!("TOKEN={TOKEN}\n")),
        (
            "tools/g/echo.yaml",
            "kind: graph\nparameters: {type: object, properties: {text: {type: string}}}\nnodes:\n  e: {kind: action, tool: t/echo, params: {text: \"${inputs.text}\"}, assign: {out: \"${result}\"}, next: done}\n  done: {kind: return, output: \"${state.out}\"}\nstate: {out: \"\"}\n",
        ),
    ])
}

/// Text built of what markers are made of: every name (a `.env` secret, process variables,
/// unknown ones), tags of the right shape and of real keys, `%` runs and pieces.
fn caller_text() -> impl Strategy<Value = String> {
    let other = marks::fresh();
    let pieces: Vec<String> = vec![
        "%".into(),
        "%%".into(),
        "%{secret:".into(),
        "{secret:".into(),
        "TOKEN".into(),
        "HOME".into(),
        "PATH".into(),
        "NOPE_1".into(),
        ":".into(),
        "}".into(),
        "0123456789abcdef".into(),
        "x y".into(),
        other.marker("TOKEN"),
        other.marker("HOME"),
        format!("%{{secret:TOKEN:{}}}", "f".repeat(16)),
    ];
    prop::collection::vec(prop::sample::select(pieces), 1..12).prop_map(|p| p.concat())
}

/// Runs `plan` (its text) as a recorded run with `values`; every step's result, by id.
fn plan_results(app: &App, plan: &str, values: Map<String, Value>) -> Map<String, Value> {
    let doc =
        strata_plans::parse_document("p.yaml", plan.as_bytes().to_vec(), &app.limits).unwrap();
    let whole = WholePlan::from_document(app.load_plan(&doc).unwrap(), doc);
    let run = app
        .start_plan_run(PlanSource::Whole(Box::new(whole)), None, values)
        .unwrap();
    let exec = PlanExecution {
        options: ExecOptions::default(),
        remote: None,
        steps: None,
        jobs: 1,
        call: Default::default(),
    };
    let report = run.execute(app, &exec, &mut strata_plans::Silent).unwrap();
    report
        .outcome
        .records
        .iter()
        .map(|(id, r)| (id.clone(), r.result.clone()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn caller_text_with_markers_reaches_the_tool_unchanged(text in caller_text()) {
        let dir = keeper();
        let app = app(dir.path());
        let literal = serde_json::to_string(&text).unwrap();
        let plan = format!(
            "- {{id: lit, tool: t/echo, arguments: {{text: {literal}}}}}\n- {{id: val, tool: t/echo, arguments: {{text: \"{{{{PLACEHOLDER_v}}}}\"}}}}\n- {{id: mix, tool: t/echo, arguments: {{text: \"%{{{{lit.result}}}}{{{{PLACEHOLDER_v}}}}%\"}}}}\n"
        );
        let mut values = Map::new();
        values.insert("v".into(), json!(text));
        let results = plan_results(&app, &plan, values);
        prop_assert_eq!(&results["lit"], &json!(text));
        prop_assert_eq!(&results["val"], &json!(text));
        prop_assert_eq!(&results["mix"], &json!(format!("%{text}{text}%")));

        let run = GraphRun {
            id: "g/echo".into(),
            start: GraphStart::New {
                run_id: "g".into(),
                typed: [("text".to_string(), json!(text))].into_iter().collect(),
                strings: Vec::new(),
            },
            options: ExecOptions::default(),
            every: Default::default(),
        };
        let outcome = app.run_graph(&run, &mut strata_graph::Silent).unwrap();
        prop_assert_eq!(outcome.result, json!(text));
    }
}

#[test]
fn a_runner_restores_only_the_markers_of_its_own_key_and_only_declared_secrets() {
    let dir = keeper();
    let app = app(dir.path());
    let key = marks::fresh();
    let runner: Runner<'_> = app.runner(ExecOptions::default()).with_marks(key.clone());
    let call = |text: String| -> Value {
        let params: Map<String, Value> = [("text".to_string(), json!(text))].into_iter().collect();
        let run = runner.run("t/echo", &params, &Default::default()).unwrap();
        json!(String::from_utf8(run.stdout).unwrap())
    };
    // Its own marker of a declared secret: the tool gets the value (and prints it marked).
    let own = key.marker("TOKEN");
    assert_eq!(call(format!("[{own}]")), json!(format!("[{own}]")));
    // Another run's marker: text.
    let other = marks::fresh().marker("TOKEN");
    assert_eq!(call(other.clone()), json!(other));
    // Its own marker of a process variable nothing declares: never read.
    let home = key.marker("HOME");
    let e = runner
        .run(
            "t/echo",
            &[("text".to_string(), json!(home))].into_iter().collect(),
            &Default::default(),
        )
        .unwrap_err();
    assert_eq!(
        e.message(),
        "a parameter of tool `t/echo` needs the secret `HOME`, which is set neither in the environment nor in .env"
    );
}

#[test]
fn a_secret_the_tool_printed_reaches_the_next_step_and_no_record_holds_it() {
    let dir = project(&[
        ("tools/t/echo.yaml", ECHO),
        (".env", &format!("TOKEN={TOKEN}\n")),
        (
            "tools/t/leak.yaml",
            "executor: runtimes/subprocess\nconfig: {command: printf, args: [\"%s\", \"${TOKEN}\"]}\n",
        ),
        (
            "tools/t/len.yaml",
            "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    text: {type: string}\nconfig: {command: wc, args: [\"-c\"], input_data: \"{text}\"}\n",
        ),
    ]);
    let app = app(dir.path());
    let results = plan_results(
        &app,
        "- {id: a, tool: t/leak, arguments: {}}\n- {id: b, tool: t/len, arguments: {text: \"{{a.result}}\"}}\n",
        Map::new(),
    );
    let marker = results["a"].as_str().unwrap();
    assert!(marker.starts_with("%{secret:TOKEN:"), "{marker}");
    // `wc -c` counted the value's bytes, not the marker's.
    assert_eq!(
        results["b"].to_string().trim_matches('"').trim(),
        TOKEN.len().to_string()
    );
}
