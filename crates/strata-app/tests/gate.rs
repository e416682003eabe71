//! The gate, by construction: every operation of the application layer that runs or exports
//! something refuses, on its own, what `strata check` rejects — listing every error — and the
//! verdicts it keeps on disk are authenticated, so no file written into the project turns a
//! rejection into a run.

mod common;
use common::{app, project, ECHO, TWO_ERRORS};

use std::fs;
use std::path::Path;

use serde_json::{json, Map, Value};
use strata_app::{
    gate_cache, App, ArgoExport, DirectiveCall, ExecOptions, Failure, GraphRun, GraphStart,
    PlanSource, StepPlan, StepRequest, WholePlan,
};
use strata_argo::Options;
use strata_directive::Watch;

/// The project with the two-error tool `t/two` and a directive, a plan and a graph calling it.
fn rejected() -> tempfile::TempDir {
    project(&[
        ("tools/t/two.yaml", TWO_ERRORS),
        (
            "directives/calls.md",
            "---\nname: calls\nactions:\n  - {id: a, tool: t/two}\n---\nbody\n",
        ),
        ("plans/calls.yaml", "- {id: s, tool: t/two, arguments: {}}\n"),
        (
            "tools/graphs/calls.yaml",
            "kind: graph\nnodes:\n  n: {kind: action, tool: t/two, next: done}\n  done: {kind: return, output: x}\n",
        ),
    ])
}

/// `failure` is the gate's refusal of `shown`, listing both errors of `t/two`.
fn refused(failure: Failure, shown: &str) {
    let Failure::Refused(refusal) = failure else {
        panic!("not a refusal: {failure:?}");
    };
    assert_eq!(
        refusal.error.message(),
        format!("`{shown}` was not run: 2 errors found")
    );
    let codes: Vec<&str> = refusal.diagnostics.iter().map(|d| d.code.id()).collect();
    assert_eq!(codes, ["R009", "L007"]);
}

fn ran(root: &Path) -> bool {
    root.join("RAN").exists()
}

/// The plan file `rel` of the project, read.
fn plan_doc(app: &App, rel: &str) -> strata_doc::Document {
    strata_plans::parse_document(rel, fs::read(app.root.join(rel)).unwrap(), &app.limits).unwrap()
}

/// Step `step` of the plan `doc`, alone, with `values`, as a run of its own.
fn step_of<'a>(
    doc: &'a strata_doc::Document,
    step: &'a str,
    values: &'a Map<String, Value>,
) -> StepRequest<'a> {
    StepRequest {
        plan: StepPlan::Document(doc),
        step,
        values,
        options: ExecOptions::default(),
        call: Default::default(),
        marks: strata_app::marks::fresh(),
    }
}

/// The records of the steps a step depends on: none is asked for, as the step is refused
/// first or depends on nothing.
fn no_record(_: &str) -> Result<strata_tools::StepRecord, strata_core::Error> {
    unreachable!("no step depends on another here")
}

fn graph_run() -> GraphRun {
    GraphRun {
        id: "graphs/calls".into(),
        start: GraphStart::New {
            run_id: "r1".into(),
            typed: Map::new(),
            strings: Vec::new(),
        },
        options: ExecOptions::default(),
        every: Default::default(),
    }
}

#[test]
fn every_operation_refuses_what_the_check_rejects_on_its_own() {
    let dir = rejected();
    let app = app(dir.path());
    let opts = ExecOptions::default();
    let none = Default::default();

    refused(
        app.run_tool("t/two", &none, &opts, &Default::default())
            .unwrap_err(),
        "t/two",
    );
    refused(
        app.prepare_tool("t/two", &none, &opts).unwrap_err(),
        "t/two",
    );
    let path = dir.path().join("directives/calls.md");
    let directive = app.run_directive(DirectiveCall {
        path: &path,
        inputs: &Map::new(),
        dry_run: false,
        options: opts.clone(),
        watch: Watch::default(),
    });
    refused(directive.unwrap_err(), "directives/calls.md");

    let doc = plan_doc(&app, "plans/calls.yaml");
    let plan = app.load_plan(&doc).unwrap();
    let whole = WholePlan::from_document(plan.clone(), doc.clone());
    let start = app.start_plan_run(PlanSource::Whole(Box::new(whole)), None, Map::new());
    refused(start.err().unwrap(), "plans/calls.yaml");
    refused(
        app.dry_run_plan(&plan, "plans/calls.yaml", Some(&doc), &Map::new())
            .unwrap_err(),
        "plans/calls.yaml",
    );
    let step = StepRequest {
        plan: StepPlan::Document(&doc),
        step: "s",
        values: &Map::new(),
        options: opts.clone(),
        call: Default::default(),
        marks: strata_app::marks::fresh(),
    };
    let no_record = |_: &str| -> Result<_, strata_core::Error> { unreachable!() };
    refused(
        app.plan_step(&step, &no_record).unwrap_err(),
        "plans/calls.yaml",
    );

    refused(
        app.run_graph(&graph_run(), &mut strata_graph::Silent)
            .unwrap_err(),
        "graphs/calls",
    );
    let transport = |_: &Value| -> Result<Value, strata_core::Error> { unreachable!() };
    refused(
        app.run_graph_in_parts(&graph_run(), transport).unwrap_err(),
        "graphs/calls",
    );
    refused(
        app.graph_walk("graphs/calls", None).err().unwrap(),
        "graphs/calls",
    );
    let part = json!({"part": "begin", "run_id": "r", "inputs": {}, "started": 0, "marks": strata_app::marks::fresh().to_hex()});
    refused(
        app.walk_part("graphs/calls", &part, opts.clone())
            .unwrap_err(),
        "graphs/calls",
    );

    for (rel, shown) in [
        ("plans/calls.yaml", "plans/calls.yaml"),
        ("tools/graphs/calls.yaml", "graphs/calls"),
    ] {
        let path = dir.path().join(rel);
        let doc = strata_doc::Document::parse(
            rel,
            fs::read(&path).unwrap(),
            strata_doc::Format::Yaml,
            &app.limits,
        )
        .unwrap();
        let export = app.export_argo(ArgoExport {
            doc: &doc,
            path: &path,
            options: Options::new("i:1"),
            inputs: (Map::new(), Vec::new()),
        });
        refused(export.unwrap_err(), shown);
    }

    let reply = strata_app::tool_batch::answer(&app, br#"{"id": 1, "tool": "t/two"}"#, false);
    assert_eq!(reply["ok"], false);
    assert_eq!(reply["error"]["kind"], "check");
    assert!(!ran(dir.path()), "an operation ran the tool");
}

#[test]
fn a_run_of_a_plan_refuses_the_broken_tool_of_any_step_even_one_it_never_reaches() {
    // Step `b` depends on a step that fails; the whole plan is refused before either runs.
    let dir = project(&[
        ("tools/t/two.yaml", TWO_ERRORS),
        ("tools/t/echo.yaml", ECHO),
        (
            "plans/p.yaml",
            "- {id: a, tool: t/echo, arguments: {text: x}}\n- {id: b, tool: t/two, arguments: {x: \"{{a.result}}\"}}\n",
        ),
    ]);
    let app = app(dir.path());
    let doc = strata_plans::parse_document(
        "plans/p.yaml",
        fs::read(dir.path().join("plans/p.yaml")).unwrap(),
        &app.limits,
    )
    .unwrap();
    let plan = app.load_plan(&doc).unwrap();
    let step = StepRequest {
        plan: StepPlan::Document(&doc),
        step: "a",
        values: &Map::new(),
        options: ExecOptions::default(),
        call: Default::default(),
        marks: strata_app::marks::fresh(),
    };
    let no_record = |_: &str| -> Result<_, strata_core::Error> { unreachable!() };
    refused(
        app.plan_step(&step, &no_record).unwrap_err(),
        "plans/p.yaml",
    );
    let whole = WholePlan::from_document(plan, doc);
    let start = app.start_plan_run(PlanSource::Whole(Box::new(whole)), None, Map::new());
    refused(start.err().unwrap(), "plans/p.yaml");
}

/// The key the gate stores an admission of tool `id` under, from this process.
/// Runs tool `id` with no parameters and the default options.
fn run_plain(app: &App, id: &str) -> Result<strata_app::ToolRun, Failure> {
    app.run_tool(
        id,
        &Default::default(),
        &ExecOptions::default(),
        &Default::default(),
    )
}

fn admission_key(app: &App, id: &str) -> String {
    let tool = app.compiled(id).unwrap();
    gate_cache::key(app.project(), id, &tool).unwrap()
}

#[test]
fn no_file_written_into_the_gate_directory_admits_a_rejected_tool() {
    let dir = rejected();
    let key = admission_key(&app(dir.path()), "t/two");
    let entry = dir.path().join(gate_cache::GATE_DIR).join(&key);
    fs::create_dir_all(entry.parent().unwrap()).unwrap();
    // Empty (the form admissions once had), garbage, a tag of another key, a link.
    let good = project(&[("tools/t/echo.yaml", ECHO)]);
    let good_app = app(good.path());
    run_plain(&good_app, "t/echo").unwrap();
    let good_key = admission_key(&good_app, "t/echo");
    let good_entry = good.path().join(gate_cache::GATE_DIR).join(&good_key);
    let stolen = fs::read_to_string(&good_entry).unwrap_or_default();
    for forged in ["", "admitted", "0".repeat(64).as_str(), stolen.as_str()] {
        fs::write(&entry, forged).unwrap();
        let fresh = app(dir.path());
        let failure = run_plain(&fresh, "t/two").unwrap_err();
        refused(failure, "t/two");
        assert!(!ran(dir.path()));
    }
    fs::remove_file(&entry).unwrap();
    std::os::unix::fs::symlink(&good_entry, &entry).unwrap();
    let failure = run_plain(&app(dir.path()), "t/two").unwrap_err();
    refused(failure, "t/two");
    assert!(!ran(dir.path()));
}

#[test]
fn an_admission_is_the_tag_of_what_it_judged_and_a_changed_tag_is_checked_again() {
    if strata_app::keys::user_key().is_none() {
        return; // no user key here: nothing is stored, every call is checked
    }
    let dir = project(&[("tools/t/echo.yaml", ECHO)]);
    let first = app(dir.path());
    run_plain(&first, "t/echo").unwrap();
    let key = admission_key(&first, "t/echo");
    let entry = dir.path().join(gate_cache::GATE_DIR).join(&key);
    let tag = fs::read_to_string(&entry).unwrap();
    assert_eq!(tag.len(), 64, "{tag}");
    assert!(gate_cache::admitted(app(dir.path()).project(), &key));
    fs::write(
        &entry,
        tag.replace(&tag[..1], if &tag[..1] == "0" { "1" } else { "0" }),
    )
    .unwrap();
    assert!(!gate_cache::admitted(app(dir.path()).project(), &key));
    // The next run checks the tool again and stores the admission anew.
    run_plain(&app(dir.path()), "t/echo").unwrap();
    assert_eq!(fs::read_to_string(&entry).unwrap(), tag);
}

#[test]
fn a_step_of_a_plan_the_check_accepts_runs() {
    let dir = project(&[
        ("tools/t/echo.yaml", ECHO),
        (
            "plans/p.yaml",
            "- {id: a, tool: t/echo, arguments: {text: hi}}\n",
        ),
    ]);
    let app = app(dir.path());
    let doc = plan_doc(&app, "plans/p.yaml");
    let values = Map::new();
    let outcome = app
        .plan_step(&step_of(&doc, "a", &values), &no_record)
        .unwrap();
    assert_eq!(outcome.state.unwrap().result, json!("hi"));
}

#[test]
fn a_plan_admitted_once_runs_its_steps_but_only_in_the_application_that_admitted_it() {
    let plan = "- {id: s, tool: t/two, arguments: {}}\n";
    let good = project(&[("tools/t/two.yaml", ECHO), ("plans/calls.yaml", plan)]);
    let good_app = app(good.path());
    let doc = plan_doc(&good_app, "plans/calls.yaml");
    let admitted = good_app.admit_step_plan(StepPlan::Document(&doc)).unwrap();
    let values = Map::new();
    let request = StepRequest {
        plan: StepPlan::Admitted(&admitted),
        step: "s",
        values: &values,
        options: ExecOptions::default(),
        call: Default::default(),
        marks: strata_app::marks::fresh(),
    };
    let outcome = good_app.plan_step(&request, &no_record).unwrap();
    assert_eq!(outcome.state.unwrap().status.name(), "completed");
    // Another application (a project whose `t/two` the check rejects) admits it anew.
    let bad = rejected();
    refused(
        app(bad.path()).plan_step(&request, &no_record).unwrap_err(),
        "plans/calls.yaml",
    );
    assert!(!ran(bad.path()), "the rejected tool ran");
    // And admitting refuses what `plan run` refuses.
    let bad_app = app(bad.path());
    let bad_doc = plan_doc(&bad_app, "plans/calls.yaml");
    refused(
        bad_app
            .admit_step_plan(StepPlan::Document(&bad_doc))
            .unwrap_err(),
        "plans/calls.yaml",
    );
}
