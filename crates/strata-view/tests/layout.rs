//! The layout of every shipped plan and graph against golden coordinates: the drawing a
//! run's page shows, computed without a browser.

use std::path::{Path, PathBuf};

use strata_app::App;
use strata_core::Limits;
use strata_doc::{Document, Format};
use strata_plans::Plan;
use strata_view::dag::{graph_dag, plan_dag};
use strata_view::layout::layout;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn plan(name: &str) -> String {
    let path = repo().join("plans").join(name);
    let text = std::fs::read(&path).unwrap();
    let format = if name.ends_with(".json") {
        Format::Json
    } else {
        Format::Yaml
    };
    let doc = Document::parse(name, text, format, &Limits::default()).unwrap();
    layout(&plan_dag(&Plan::load(&doc).unwrap())).text()
}

fn graph(id: &str) -> String {
    let app = App::at(&repo()).unwrap();
    layout(&graph_dag(&app.load_graph(id).unwrap())).text()
}

#[test]
fn plan_diamond_yaml_is_laid_out_as_before() {
    assert_eq!(
        plan("diamond.yaml"),
        "640x136\n\
         A 20,20\n\
         B 240,20\n\
         C 240,76\n\
         D 460,20\n\
         A -> B\n\
         A -> C\n\
         B -> D\n\
         C -> D\n"
    );
}

#[test]
fn plan_duplicates_json_is_laid_out_as_before() {
    assert_eq!(
        plan("duplicates.json"),
        "640x80\n\
         setup 20,20\n\
         step1 240,20\n\
         step2 460,20\n\
         setup -> step1\n\
         step1 -> step2\n"
    );
}

#[test]
fn plan_exercise_yaml_is_laid_out_as_before() {
    assert_eq!(
        plan("exercise.yaml"),
        "860x80\n\
         A 20,20\n\
         B 240,20\n\
         C 460,20\n\
         D 680,20\n\
         A -> B\n\
         B -> C\n\
         A -> D\n\
         C -> D\n"
    );
}

#[test]
fn plan_meeting_yaml_is_laid_out_as_before() {
    assert_eq!(
        plan("meeting.yaml"),
        "420x80\n\
         invite 20,20\n\
         confirm 240,20\n\
         invite -> confirm\n"
    );
}

#[test]
fn graph_agent_loop_is_laid_out_as_before() {
    assert_eq!(
        graph("graphs/agent_loop"),
        "640x80\n\
         think 20,20\n\
         plan 240,20\n\
         done 460,20\n\
         think -> plan\n\
         plan -> done (result.action == 'Answer')\n\
         plan -> think (otherwise)\n"
    );
}

#[test]
fn graph_recover_is_laid_out_as_before() {
    assert_eq!(
        graph("graphs/recover"),
        "640x136\n\
         summarise 20,20\n\
         report 240,20\n\
         recover 460,20\n\
         give_up 460,76\n\
         summarise -> report\n\
         recover -> summarise (state.recoveries <= 1)\n\
         recover -> give_up (otherwise)\n"
    );
}

#[test]
fn graph_retry_is_laid_out_as_before() {
    assert_eq!(
        graph("graphs/retry"),
        "420x136\n\
         try 20,20\n\
         done 240,20\n\
         give_up 240,76\n\
         try -> done (run.success)\n\
         try -> give_up (state.attempt >= inputs.max_attempts)\n\
         try -> try (otherwise)\n"
    );
}

#[test]
fn graph_words_is_laid_out_as_before() {
    assert_eq!(
        graph("graphs/words"),
        "860x136\n\
         split 20,20\n\
         measure 240,20\n\
         empty 240,76\n\
         summarise 460,20\n\
         done 680,20\n\
         split -> measure (length(state.words) > 0)\n\
         split -> empty (otherwise)\n\
         measure -> summarise\n\
         summarise -> done\n"
    );
}
