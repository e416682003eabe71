//! End-to-end tests of `strata export argo`, `strata plan step` and `strata walk`: the real
//! binary exporting plans and graphs as Argo Workflows, checking manifests offline (Argo's
//! nine examples pass, mutations of them are refused with their line and column), bad input
//! refused with clear errors, and the fidelity tests: every task of an exported plan or graph
//! run locally as Argo would run it ([`local`]), in dependency order, fed the outputs the
//! manifest says it gets, ends with the records `strata plan run` gives, or with the
//! checkpoint, result and exit code of `strata run`.

mod common;
#[path = "argo/local.rs"]
mod local;

use common::{Ran, Test};
use local::{list, name, Phase};

use std::collections::HashMap;

use serde_json::{json, Value};

/// Prints its caller parameters as JSON.
const JSON_TOOL: &str = r#"description: prints its parameters as JSON
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    n: {type: integer}
    text: {type: string}
    data: {}
    x: {}
    input: {}
config:
  command: printf
  args: ["%s\n", "{params_json}"]
"#;

/// Fails with a line on standard error.
const FAIL_TOOL: &str = r#"description: fails
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    from: {type: string}
config:
  command: sh
  args: ["-c", "echo 'cannot go on' >&2; exit 3"]
"#;

/// A plan with everything a task must carry faithfully: awkward text, a large integer, a
/// record above the parameter limit (it travels as an artifact), a failure and the skips
/// it causes, a path missing from a result, a user value and an id with `_`.
const PLAN: &str = r#"- id: A
  tool: t/json
  arguments:
    text: "quote \" backslash \\ brace {{{{B.result.x}} $step2 ${HOME} {input:k}"
    n: 10000000
    data: {list: [1, 2.5, null, true], padding: "..........................................................................................................................................................................................................................."}
- id: B
  tool: t/fail
  arguments: {from: "{{A.result.text}}"}
- id: C
  tool: t/json
  arguments: {x: "{{B.result}}"}
- id: D
  tool: t/json
  arguments: {data: "{{A.result.data}}", text: "n={{A.result.n}} title={{PLACEHOLDER_title}}"}
- id: E_1
  tool: t/json
  arguments: {x: ["{{C.result}}", "{{D.result.text}}"]}
- id: F
  tool: t/json
  arguments: {input: "{{D.result.nope}}"}
"#;

fn project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/json", JSON_TOOL)
        .tool("t/fail", FAIL_TOOL)
        .file("plans/p.yaml", PLAN)
}

/// Runs every task of the exported plan `manifest` locally ([`local::run`]) and returns each
/// step's record, by step id: the record a task wrote (and printed), or for an omitted task
/// the skipped record that `strata plan run` gives.
fn run_tasks(ran: &Ran, manifest: &Value) -> HashMap<String, Value> {
    let templates: HashMap<&str, &Value> = list(manifest, "/spec/templates")
        .iter()
        .map(|t| (name(t), t))
        .collect();
    let tasks: HashMap<&str, &Value> = list(templates["strata-plan"], "/dag/tasks")
        .iter()
        .map(|t| (name(t), t))
        .collect();
    let step_of = |task: &str| -> String {
        list(templates[task], "/container/args")
            .iter()
            .skip_while(|a| *a != "--step")
            .nth(1)
            .and_then(Value::as_str)
            .unwrap()
            .to_string()
    };
    let mut records: HashMap<String, Value> = HashMap::new();
    for (task, done) in local::run(ran, manifest, "wf") {
        let step = step_of(&task);
        let record: Value = match done.phase {
            Phase::Omitted => {
                let depends = tasks[task.as_str()]["depends"].as_str().unwrap();
                let first = depends
                    .split(" && ")
                    .map(|c| step_of(c.trim_end_matches(".Succeeded")))
                    .find(|d| records[d]["status"] != "completed")
                    .unwrap();
                let why = match records[&first]["status"] == "failed" {
                    true => "failed",
                    false => "was skipped",
                };
                json!({"id": step, "status": "skipped", "result": null,
                       "error": {"kind": "run_state", "message": format!("step `{first}` {why}")},
                       "run": null})
            }
            Phase::Succeeded | Phase::Failed => {
                let parameter = &done.parameters["record"];
                let record: Value = match parameter == "\"artifact\"" {
                    true => serde_json::from_str(
                        &std::fs::read_to_string(&done.artifacts["record"]).unwrap(),
                    )
                    .unwrap(),
                    false => serde_json::from_str(parameter).unwrap(),
                };
                assert_eq!(
                    serde_json::from_str::<Value>(&done.stdout).unwrap(),
                    record,
                    "task {task} prints the record it leaves"
                );
                record
            }
            Phase::Skipped => panic!("a plan's task has no `when`"),
        };
        records.insert(step, record);
    }
    records
}

/// A record without what differs from run to run (the tool's duration).
fn comparable(mut record: Value) -> Value {
    if let Some(run) = record.get_mut("run").and_then(Value::as_object_mut) {
        run.remove("duration_ms");
    }
    record
}

#[test]
fn every_task_of_an_exported_plan_run_locally_gives_what_plan_run_gives() {
    let ran = project()
        .args(&[
            "export",
            "argo",
            "plans/p.yaml",
            "--image",
            "strata:test",
            "--value",
            "title=Report",
            "--parameter-limit",
            "300",
            "-o",
            "wf.yaml",
        ])
        .stdout("")
        .stderr("wrote wf.yaml: a Workflow with 7 templates and 6 tasks\n")
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&ran.read("wf.yaml")).unwrap();
    let by_argo = run_tasks(&ran, &manifest);
    let by_strata = ran
        .then(&[
            "plan",
            "run",
            "plans/p.yaml",
            "--json",
            "--quiet",
            "--value",
            "title=Report",
        ])
        .status(1)
        .run();
    let report: Value = serde_json::from_str(&by_strata.stdout).unwrap();
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6);
    for record in steps {
        let id = record["id"].as_str().unwrap();
        assert_eq!(
            comparable(by_argo[id].clone()),
            comparable(record.clone()),
            "step {id}"
        );
    }
    let status = |id: &str| by_argo[id]["status"].as_str().unwrap().to_string();
    assert_eq!(
        ["A", "B", "C", "D", "E_1", "F"].map(status),
        [
            "completed",
            "failed",
            "skipped",
            "completed",
            "skipped",
            "failed"
        ]
    );
    // A's record was above the limit: it went through the artifact.
    assert_eq!(ran.read("pods/A/out/record.json"), "\"artifact\"");
    assert_eq!(
        by_argo["A"]["result"]["text"],
        "quote \" backslash \\ brace {{B.result.x}} $step2 ${HOME} {input:k}"
    );
    assert_eq!(by_argo["D"]["result"]["text"], "n=10000000 title=Report");
    assert_eq!(by_argo["F"]["error"]["kind"], "path_not_found");
}

/// Argo's nine example workflows (`tests/fixtures/argo/`, Apache-2.0).
const EXAMPLES: [(&str, &str); 9] = [
    ("dag-coinflip", "4 templates and 7 tasks"),
    ("dag-conditional-parameters", "4 templates and 3 tasks"),
    ("dag-continue-on-fail", "3 templates and 7 tasks"),
    ("dag-diamond-steps", "3 templates and 5 tasks"),
    ("dag-diamond", "2 templates and 4 tasks"),
    ("dag-enhanced-depends", "3 templates and 7 tasks"),
    ("dag-targets", "2 templates and 5 tasks"),
    ("loops-param-result", "3 templates and 2 tasks"),
    ("retry-with-steps", "2 templates and 3 tasks"),
];

#[test]
fn argos_nine_examples_pass_the_check() {
    for (name, holds) in EXAMPLES {
        let file = format!("tests/fixtures/argo/{name}.yaml");
        Test::in_repo()
            .args(&["export", "argo", "--check", &file])
            .stdout(&format!(
                "{file}: valid: a Workflow with {holds} (Argo's schema v4.1.2 and strata's checks)\n"
            ))
            .stderr("")
            .status(0)
            .run();
    }
}

#[test]
fn a_manifest_is_checked_outside_any_project() {
    let text = std::fs::read_to_string(common::repo().join("tests/fixtures/argo/dag-diamond.yaml"))
        .unwrap();
    let t = Test::new().file("wf.yaml", text);
    std::fs::remove_dir(t.path().join("tools")).unwrap();
    t.args(&["export", "argo", "--check", "wf.yaml"])
        .stdout("wf.yaml: valid: a Workflow with 2 templates and 4 tasks (Argo's schema v4.1.2 and strata's checks)\n")
        .stderr("")
        .status(0)
        .run();
}

/// `dag-diamond.yaml` with `from` replaced by `to`, checked: refused with `stderr`.
fn refused(from: &str, to: &str, stderr: &str) {
    let text = std::fs::read_to_string(common::repo().join("tests/fixtures/argo/dag-diamond.yaml"))
        .unwrap();
    assert!(text.contains(from), "{from}");
    Test::new()
        .file("wf.yaml", text.replacen(from, to, 1))
        .args(&["export", "argo", "--check", "wf.yaml"])
        .stdout("")
        .stderr(stderr)
        .status(1)
        .run();
}

#[test]
fn mutations_of_an_example_are_refused_with_their_line() {
    refused(
        "depends: \"A\"\n        template: echo",
        "depends: \"A\"\n        template: echoo",
        "error[argo]: task `B` uses template `echoo`, which the workflow does not have
  --> wf.yaml:24:19
   |
24 |         template: echoo
   |                   ^
   = field: spec.templates[0].dag.tasks[1].template
   = help: did you mean `echo`?
wf.yaml: 1 problem
",
    );
    refused(
        "depends: \"B && C\"",
        "depends: \"B && X\"",
        "error[argo]: task `D` depends on `X`, which is not a task of template `diamond`
  --> wf.yaml:33:24
   |
33 |         depends: \"B && X\"
   |                        ^
   = field: spec.templates[0].dag.tasks[3].depends (bytes 5..6)
   = help: the other tasks are `A`, `B`, `C`
wf.yaml: 1 problem
",
    );
    refused(
        "      - name: A\n        template: echo",
        "      - name: A\n        depends: \"D\"\n        template: echo",
        "error[argo]: the tasks of template `diamond` depend on each other in a circle: A -> B -> D -> A
  --> wf.yaml:18:15
   |
18 |       - name: A
   |               ^
   = field: spec.templates[0].dag.tasks[0].name
   = help: a DAG cannot have a cycle; Argo would never start these tasks
wf.yaml: 1 problem
",
    );
    refused(
        "  - name: echo\n    inputs:",
        "  - name: echo\n    retryStratgy: {limit: 2}\n    inputs:",
        "error[argo]: unknown key `retryStratgy`: Argo's schema does not have it here
  --> wf.yaml:39:19
   |
39 |     retryStratgy: {limit: 2}
   |                   ^
   = field: spec.templates[1].retryStratgy
   = help: did you mean `retryStrategy`?
wf.yaml: 1 problem
",
    );
    refused(
        "spec:\n  entrypoint: diamond",
        "spec:\n  parallelism: two\n  entrypoint: diamond",
        "error[argo]: Argo's schema: \"two\" is not of type \"integer\"
  --> wf.yaml:13:16
   |
13 |   parallelism: two
   |                ^
   = field: spec.parallelism
wf.yaml: 1 problem
",
    );
}

#[test]
fn every_shipped_plan_exports_and_passes_the_check() {
    let project = Test::new().shipped();
    let mut plans: Vec<String> = std::fs::read_dir(project.path().join("plans"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    plans.sort();
    assert_eq!(
        plans,
        [
            "diamond.yaml",
            "duplicates.json",
            "exercise.yaml",
            "meeting.yaml"
        ]
    );
    let holds = [
        "5 templates and 4 tasks",
        "4 templates and 3 tasks",
        "5 templates and 4 tasks",
        "3 templates and 2 tasks",
    ];
    for (plan, holds) in plans.iter().zip(holds) {
        let file = format!("plans/{plan}");
        project
            .then(&["export", "argo", &file, "--image", "strata:test", "--check"])
            .stdout(&format!(
                "{file}: exported and checked: a Workflow with {holds} (Argo's schema v4.1.2 and strata's checks)\n"
            ))
            .stderr("")
            .status(0)
            .run();
    }
}

#[test]
fn a_one_step_plan_exports_as_this_manifest() {
    project()
        .file("plans/one.yaml", "- {id: a_1, tool: t/json, arguments: {text: \"Dear {{PLACEHOLDER_name}}\"}}\n")
        .args(&["export", "argo", "plans/one.yaml", "--image", "strata:1", "--name", "one", "--namespace", "argo", "--value", "name=Ann"])
        .stdout(r#"# Exported by `strata export argo` from plans/one.yaml: one task per step, each running `strata plan step` in `strata:1`.
# Checked offline against Argo's schema v4.1.2 and strata's checks; submit with `argo submit`.
# See docs/scale-out.md.
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: one
  namespace: argo
spec:
  entrypoint: strata-plan
  arguments:
    parameters:
    - name: strata-document
      value: '"- \u007bid: a_1, tool: t/json, arguments: \u007btext: \"Dear \u007b\u007bPLACEHOLDER_name}}\"}}\n"'
    - name: name
      description: the plan's user value `name`, as JSON (text in double quotes)
      value: '"Ann"'
  templates:
  - name: strata-plan
    dag:
      failFast: false
      tasks:
      - name: a-1
        template: a-1
  - name: a-1
    inputs:
      artifacts:
      - name: document
        path: /tmp/strata/document
        raw:
          data: '{{workflow.parameters.strata-document}}'
    container:
      image: strata:1
      command:
      - strata
      args:
      - plan
      - step
      - /tmp/strata/document
      - --as
      - plans/one.yaml
      - --step
      - a_1
      - --project
      - /project
      - --records
      - /tmp/strata/in
      - --output
      - /tmp/strata/out
      - --limit
      - '262144'
      - --run-uid
      - '{{workflow.uid}}'
      - --value-json
      - name={{workflow.parameters.name}}
      workingDir: /project
    outputs:
      parameters:
      - name: record
        valueFrom:
          path: /tmp/strata/out/record.json
      artifacts:
      - name: record
        path: /tmp/strata/out/record.artifact.json
        optional: true
        archive:
          none: {}
"#)
        .stderr("")
        .status(0)
        .run();
}

/// Needs two CPUs, 512 MiB and a GPU; retried twice, 30 s apart.
const TRAIN_TOOL: &str = "description: trains\nexecutor: runtimes/subprocess\nresources: {cpus: 2, memory: 512Mi, gpus: 1}\nretries: {limit: 2, delay: 30s}\nconfig: {command: \"true\"}\n";

#[test]
fn resources_retries_and_parallelism_export_as_this_manifest() {
    project()
        .tool("t/train", TRAIN_TOOL)
        .file("plans/one.yaml", "- {id: a, tool: t/train, arguments: {}, resources: {cpus: 0.5, custom: {example.com/ssd: 1}}, retries: {limit: 5}}\n")
        .args(&["export", "argo", "plans/one.yaml", "--image", "strata:1", "--name", "one", "--jobs", "2"])
        .stdout(r#"# Exported by `strata export argo` from plans/one.yaml: one task per step, each running `strata plan step` in `strata:1`.
# Checked offline against Argo's schema v4.1.2 and strata's checks; submit with `argo submit`.
# See docs/scale-out.md.
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: one
spec:
  entrypoint: strata-plan
  arguments:
    parameters:
    - name: strata-document
      value: '"- \u007bid: a, tool: t/train, arguments: \u007b}, resources: \u007bcpus: 0.5, custom: \u007bexample.com/ssd: 1}}, retries: \u007blimit: 5}}\n"'
  parallelism: 2
  templates:
  - name: strata-plan
    dag:
      failFast: false
      tasks:
      - name: a
        template: a
  - name: a
    inputs:
      artifacts:
      - name: document
        path: /tmp/strata/document
        raw:
          data: '{{workflow.parameters.strata-document}}'
    container:
      image: strata:1
      command:
      - strata
      args:
      - plan
      - step
      - /tmp/strata/document
      - --as
      - plans/one.yaml
      - --step
      - a
      - --project
      - /project
      - --records
      - /tmp/strata/in
      - --output
      - /tmp/strata/out
      - --limit
      - '262144'
      - --run-uid
      - '{{workflow.uid}}'
      workingDir: /project
      resources:
        requests:
          cpu: 500m
          memory: 512Mi
          nvidia.com/gpu: '1'
          example.com/ssd: '1'
        limits:
          memory: 512Mi
          nvidia.com/gpu: '1'
          example.com/ssd: '1'
    outputs:
      parameters:
      - name: record
        valueFrom:
          path: /tmp/strata/out/record.json
      artifacts:
      - name: record
        path: /tmp/strata/out/record.artifact.json
        optional: true
        archive:
          none: {}
    retryStrategy:
      limit: '5'
      retryPolicy: OnFailure
      backoff:
        duration: 30s
"#)
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn resources_kubernetes_cannot_take_are_refused_where_the_step_declares_them() {
    project()
        .tool("t/train", TRAIN_TOOL)
        .file("plans/half.yaml", "- {id: a, tool: t/train, arguments: {}}\n- {id: b, tool: t/train, arguments: {}, resources: {gpus: 0.5}}\n")
        .args(&["export", "argo", "plans/half.yaml", "--image", "strata:1"])
        .stdout("")
        .stderr("error[argo]: step `b`: `gpus` is 0.5, but Kubernetes counts `nvidia.com/gpu` in whole units
  --> plans/half.yaml:2:3
  |
2 | - {id: b, tool: t/train, arguments: {}, resources: {gpus: 0.5}}
  |   ^
   = field: [1]
   = help: declare a whole number (Ray alone shares a GPU in fractions)
")
        .status(2)
        .run();
}

/// `strata export argo <plan> <args…>` in the test project refused with `stderr`.
fn export_refused(plan: &str, args: &[&str], stderr: &str) {
    let mut argv = vec!["export", "argo", "plans/x.yaml"];
    argv.extend_from_slice(args);
    project()
        .file("plans/x.yaml", plan)
        .file(".env", "API_TOKEN=s3cr3t-value\n")
        .args(&argv)
        .stdout("")
        .stderr(stderr)
        .status(2)
        .run();
}

#[test]
fn bad_input_is_refused_with_a_clear_error() {
    export_refused(
        "- {id: a, tool: t/json, arguments: {x: \"{{b.result}}\"}}\n- {id: b, tool: t/json, arguments: {x: \"{{a.result}}\"}}\n",
        &["--image", "strata:1"],
        "error[plan]: circular dependency: a -> b -> a
  --> plans/x.yaml:1:41
  |
1 | - {id: a, tool: t/json, arguments: {x: \"{{b.result}}\"}}
  |                                         ^^^^^^^^^^^^
   = field: [0].arguments.x (bytes 0..12)
   = help: a step cannot depend on itself, directly or through others
",
    );
    export_refused(
        "- {id: a, tool: t/json, arguments: {x: \"{{nope.result}}\"}}\n",
        &["--image", "strata:1"],
        "error[plan]: step `a` refers to unknown step `nope`
  --> plans/x.yaml:1:41
  |
1 | - {id: a, tool: t/json, arguments: {x: \"{{nope.result}}\"}}
  |                                         ^^^^^^^^^^^^^^^
   = field: [0].arguments.x (bytes 0..15)
",
    );
    export_refused(
        "- {id: a_b, tool: t/json, arguments: {}}\n- {id: a-b, tool: t/json, arguments: {}}\n",
        &["--image", "strata:1"],
        "error[argo]: steps `a_b` and `a-b` both become the Argo task `a-b`
  --> plans/x.yaml:2:8
  |
2 | - {id: a-b, tool: t/json, arguments: {}}
  |        ^
   = field: [1].id
   = help: task names map `_` to `-`; rename one of them
",
    );
    export_refused(
        "- {id: a, tool: t/json, arguments: {text: \"s3cr3t-value\"}}\n",
        &["--image", "strata:1"],
        "error[argo]: the manifest would hold the value of secret `API_TOKEN` (`plans/x.yaml` holds it)
   = help: a manifest never holds a secret: keep it in the Kubernetes Secret named with --secret, and let the tool read its variable
",
    );
    let ok = "- {id: a, tool: t/json, arguments: {text: \"{{PLACEHOLDER_t}}\"}}\n";
    export_refused(
        ok,
        &["--image", "strata:1", "--value", "t=s3cr3t-value"],
        "error[argo]: the manifest would hold the value of secret `API_TOKEN` (at spec.arguments.parameters[1].value)
   = help: a manifest never holds a secret: keep it in the Kubernetes Secret named with --secret, and let the tool read its variable
",
    );
    export_refused(
        ok,
        &["--image", "my strata"],
        "error[argo]: the image `my strata` holds ' '; an image reference has no spaces
   = help: an image is a reference such as `registry.example.com/strata:0.1.0`: no spaces, no quotes
",
    );
    export_refused(
        ok,
        &[],
        "error[request]: no --image given
   = help: name the container image holding strata and the project: --image registry/strata:tag (docs/scale-out.md)
",
    );
    export_refused(
        ok,
        &["--image", "strata:1", "--name", "Big_Name"],
        "error[argo]: `Big_Name` cannot name a workflow
   = help: a workflow name is 1 to 63 lower-case letters, digits and `-`, starting and ending with a letter or digit
",
    );
    export_refused(
        ok,
        &["--image", "strata:1", "--value", "tt=x"],
        "error[argo]: the plan has no user value `tt`
   = help: did you mean `t`?
",
    );
    export_refused(
        "- {id: a, tool: t/jsn, arguments: {}}\n",
        &["--image", "strata:1"],
        "error[request]: step `a` calls unknown tool `t/jsn`
  --> plans/x.yaml:1:17
  |
1 | - {id: a, tool: t/jsn, arguments: {}}
  |                 ^
   = field: [0].tool
   = help: did you mean `t/json`?
",
    );
}

#[test]
fn secrets_are_read_from_the_named_kubernetes_secret() {
    let ran = project()
        .file(".env", "API_TOKEN=s3cr3t-value\n")
        .args(&[
            "export",
            "argo",
            "plans/p.yaml",
            "--image",
            "strata:1",
            "--secret",
            "strata-env",
            "-o",
            "wf.yaml",
        ])
        .stderr("wrote wf.yaml: a Workflow with 7 templates and 6 tasks\n")
        .status(0)
        .run();
    let text = ran.read("wf.yaml");
    assert!(!text.contains("s3cr3t"));
    let manifest: Value = strata_doc::Document::yaml_value(&text).unwrap();
    assert_eq!(
        manifest.pointer("/spec/templates/1/container/env").unwrap(),
        &json!([{"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "strata-env", "key": "API_TOKEN", "optional": true}}}])
    );
    ran.then(&["export", "argo", "plans/p.yaml", "--image", "strata:1", "--check"])
        .stdout("plans/p.yaml: exported and checked: a Workflow with 7 templates and 6 tasks (Argo's schema v4.1.2 and strata's checks)\n")
        .stderr("note: the tools read secret variables (API_TOKEN); without --secret NAME the tasks run without them\n")
        .status(0)
        .run();
}

#[test]
fn a_manifest_is_checked_not_exported() {
    Test::in_repo()
        .args(&[
            "export",
            "argo",
            "tests/fixtures/argo/dag-diamond.yaml",
            "--image",
            "x",
        ])
        .stdout("")
        .stderr(
            "error[request]: `tests/fixtures/argo/dag-diamond.yaml` is already an Argo Workflow
   = help: check it with `strata export argo --check FILE`; export plans and graphs
",
        )
        .status(2)
        .run();
}

#[test]
fn plan_step_runs_one_step_from_the_records_it_is_given() {
    let ran = project()
        .file("in/B.json", r#"{"id": "B", "status": "failed", "result": null, "error": {"kind": "tool_failed", "message": "no"}, "run": null}"#)
        .args(&["plan", "step", "plans/p.yaml", "--step", "C", "--records", "in"])
        .stdout(r#"{
  "id": "C",
  "status": "skipped",
  "result": null,
  "error": {
    "kind": "run_state",
    "message": "step `B` failed"
  },
  "run": null
}
"#)
        .stderr("skip C (t/json): step `B` failed\n")
        .status(1)
        .run();
    ran.then(&[
        "plan",
        "step",
        "plans/p.yaml",
        "--step",
        "D",
        "--records",
        "in",
    ])
    .stdout("")
    .stderr(
        "error[request]: no record of step `A`, which step `D` depends on, in `in`
   = help: give the records of the steps it depends on with --records DIR (`<id>.json` each)
",
    )
    .status(2)
    .run();
    ran.then(&["plan", "step", "plans/p.yaml", "--step", "E1"])
        .stdout("")
        .stderr(
            "error[request]: `plans/p.yaml` has no step `E1`
   = help: its steps are A, B, C, D, E_1, F
",
        )
        .status(2)
        .run();
    ran.then(&[
        "plan",
        "step",
        "plans/p.yaml",
        "--step",
        "A",
        "--output",
        "out",
        "--limit",
        "10",
    ])
    .status(0)
    .run();
    assert_eq!(ran.read("out/record.json"), "\"artifact\"");
    let record: Value = serde_json::from_str(&ran.read("out/record.artifact.json")).unwrap();
    assert_eq!(record["result"]["n"], 10000000);
}

/// Prints a word; fails on `bad`.
const CHECK_TOOL: &str = r#"description: prints a word, fails on `bad`
executor: runtimes/subprocess
parameters:
  type: object
  properties:
    text: {type: string}
config:
  command: sh
  args: ["-c", "case \"$0\" in bad) echo 'bad word' >&2; exit 3;; esac; printf '%s\\n' \"$0\"", "{text}"]
"#;

/// A graph whose nodes form a DAG: a condition, a parallel foreach over the inputs, an
/// action fed the collected outputs, three ways to end.
const FAN: &str = r#"kind: graph
description: checks every word in parallel, then sums up
parameters:
  type: object
  properties:
    words: {type: array, default: [a, bb, ccc]}
state: {count: 0, words: [], seen: [], echoed: null}
nodes:
  start:
    kind: gate
    assign: {words: "${inputs.words}"}
    next:
      - {to: measure, when: length(state.words) > 0}
      - to: none
  measure:
    kind: foreach
    over: "${state.words}"
    as: w
    parallel: true
    max_concurrency: 2
    do:
      kind: action
      tool: t/check
      params: {text: "${w}"}
    output: {word: "${result}", at: "${w_index}"}
    collect: seen
    assign: {count: "${length(result)}"}
    next: sum
  sum:
    kind: action
    tool: t/json
    params: {data: "${state.seen}", text: "${state.words[0]}"}
    assign: {echoed: "${result}"}
    next:
      - {to: many, when: state.count > 2}
      - to: few
  many: {kind: return, output: {kind: many, count: "${state.count}", echoed: "${state.echoed}"}}
  few: {kind: return, output: {kind: few, count: "${state.count}"}}
  none: {kind: return, output: none}
"#;

/// [`FAN`] with its failures handled by a node of its own.
fn fan_handled() -> String {
    FAN.replace("nodes:\n", "on_error: report\nnodes:\n")
        + "  report: {kind: return, output: {failed: \"${error.node}\", message: \"${error.message}\"}}\n"
}

/// A graph with a loop: it counts to `to`.
const LOOP: &str = r#"kind: graph
parameters:
  type: object
  properties:
    to: {type: integer, default: 3}
state: {n: 0}
nodes:
  count:
    kind: gate
    assign: {n: "${state.n + 1}"}
    next:
      - {to: count, when: state.n < inputs.to}
      - to: done
  done: {kind: return, output: "${state.n}"}
"#;

fn graph_project() -> Test {
    Test::new()
        .copy("tools/runtimes")
        .tool("t/json", JSON_TOOL)
        .tool("t/check", CHECK_TOOL)
        .tool("graphs/fan", FAN)
        .tool("graphs/handled", &fan_handled())
        .tool("graphs/loop", LOOP)
}

/// A checkpoint without what differs from run to run (its id, its times, the duration of
/// the failed tool of a handled error).
fn comparable_checkpoint(mut cp: Value) -> Value {
    for key in ["run_id", "started", "updated"] {
        cp.as_object_mut().unwrap().remove(key);
    }
    if let Some(run) = cp.pointer_mut("/error/run").and_then(Value::as_object_mut) {
        run.remove("duration_ms");
    }
    cp
}

/// The JSON value output `output` of a task carries (from its artifact when above the limit).
fn carried(done: &local::Done, output: &str) -> Value {
    let parameter = &done.parameters[output];
    match parameter.as_str() {
        "\"artifact\"" => {
            serde_json::from_str(&std::fs::read_to_string(&done.artifacts[output]).unwrap())
                .unwrap()
        }
        "" => Value::Null,
        text => serde_json::from_str(text).unwrap(),
    }
}

/// Exports graph `id` of `project` with the inputs `inputs` (`name=JSON`) and `extra`
/// options, runs every task locally ([`local::run`]) and checks the walk ends as
/// `strata run` of the graph with those inputs ends: the same checkpoint (but for the run's
/// id and times), the same result on stdout, the same exit code (`code`). Returns how each
/// task ended, in order.
fn graph_fidelity(
    project: &Ran,
    id: &str,
    inputs: &[&str],
    extra: &[&str],
    code: i32,
) -> Vec<(String, Phase)> {
    let file = format!("tools/{id}.yaml");
    let mut export = vec![
        "export",
        "argo",
        &file,
        "--image",
        "strata:test",
        "-o",
        "wf.yaml",
    ];
    for i in inputs {
        export.extend(["--value-json", i]);
    }
    export.extend_from_slice(extra);
    project.then(&export).stdout("").status(0).run();
    let manifest: Value = strata_doc::Document::yaml_value(&project.read("wf.yaml")).unwrap();
    std::fs::remove_dir_all(project.path().join("pods")).ok();
    let tasks = local::run(project, &manifest, "wf-1");
    let runs = project.path().join(".strata/runs");
    let run_id = format!(
        "local-{}",
        std::fs::read_dir(&runs).map_or(0, |d| d.count())
    );
    let mut run = vec!["run", id, "--run-id", &run_id, "--quiet"];
    for i in inputs {
        run.extend(["--input", i]);
    }
    let by_strata = project.then(&run).status(code).run();
    let ends: Vec<&(String, local::Done)> = tasks
        .iter()
        .filter(|(_, d)| {
            d.parameters.contains_key("walk") && carried(d, "walk")["status"] != "running"
        })
        .filter(|(_, d)| matches!(d.phase, Phase::Succeeded | Phase::Failed))
        .collect();
    assert_eq!(ends.len(), 1, "one task ends the walk");
    let (last, done) = ends[0];
    let want: Value =
        serde_json::from_str(&project.read(&format!(".strata/runs/{run_id}/checkpoint.json")))
            .unwrap();
    let got = carried(done, "walk");
    assert_eq!(got["run_id"], "wf-1");
    assert_eq!(
        comparable_checkpoint(got),
        comparable_checkpoint(want),
        "the walk ends at {last} as `strata run` ends"
    );
    assert_eq!(done.stdout, by_strata.stdout, "{last} prints the result");
    assert_eq!(
        done.phase == Phase::Failed,
        code != 0,
        "{last} ends as the run"
    );
    tasks.into_iter().map(|(t, d)| (t, d.phase)).collect()
}

/// `(task, phase)` pairs.
fn phases(pairs: &[(&str, Phase)]) -> Vec<(String, Phase)> {
    pairs.iter().map(|(t, p)| (t.to_string(), *p)).collect()
}

#[test]
fn every_task_of_an_exported_dag_graph_run_locally_ends_as_strata_run_ends() {
    use Phase::*;
    let project = graph_project().args(&["tools"]).status(0).run();
    assert_eq!(
        graph_fidelity(&project, "graphs/fan", &[], &[], 0),
        phases(&[
            ("start", Succeeded),
            ("measure", Succeeded),
            ("measure-each", Succeeded),
            ("measure-collect", Succeeded),
            ("sum", Succeeded),
            ("many", Succeeded),
            ("few", Skipped),
            ("none", Skipped),
        ])
    );
    assert_eq!(project.read("pods/measure/out/indexes"), "[0,1,2]");
    assert_eq!(project.read("pods/start/out/next"), "measure");
    // Another branch: one word, and a checkpoint above the limit (an artifact).
    assert_eq!(
        graph_fidelity(
            &project,
            "graphs/fan",
            &["words=[\"only\"]"],
            &["--parameter-limit", "200"],
            0
        ),
        phases(&[
            ("start", Succeeded),
            ("measure", Succeeded),
            ("measure-each", Succeeded),
            ("measure-collect", Succeeded),
            ("sum", Succeeded),
            ("many", Skipped),
            ("few", Succeeded),
            ("none", Skipped),
        ])
    );
    assert_eq!(project.read("pods/sum/out/walk.json"), "\"artifact\"");
    // No words: the foreach and what follows it never run.
    assert_eq!(
        graph_fidelity(&project, "graphs/fan", &["words=[]"], &[], 0),
        phases(&[
            ("start", Succeeded),
            ("measure", Skipped),
            ("measure-each", Omitted),
            ("measure-collect", Omitted),
            ("sum", Omitted),
            ("many", Omitted),
            ("few", Omitted),
            ("none", Succeeded),
        ])
    );
}

#[test]
fn failures_of_an_exported_graph_end_as_strata_run_ends() {
    use Phase::*;
    let project = graph_project().args(&["tools"]).status(0).run();
    // An element fails: the node fails, the run fails, what follows is omitted.
    assert_eq!(
        graph_fidelity(
            &project,
            "graphs/fan",
            &["words=[\"a\",\"bad\",\"c\"]"],
            &[],
            1
        ),
        phases(&[
            ("start", Succeeded),
            ("measure", Succeeded),
            ("measure-each", Succeeded),
            ("measure-collect", Failed),
            ("sum", Omitted),
            ("many", Omitted),
            ("few", Omitted),
            ("none", Skipped),
        ])
    );
    // The same failure, handled by `on_error: report`.
    assert_eq!(
        graph_fidelity(
            &project,
            "graphs/handled",
            &["words=[\"a\",\"bad\",\"c\"]"],
            &[],
            0
        ),
        phases(&[
            ("start", Succeeded),
            ("measure", Succeeded),
            ("measure-each", Succeeded),
            ("measure-collect", Succeeded),
            ("sum", Skipped),
            ("many", Omitted),
            ("few", Omitted),
            ("none", Skipped),
            ("report", Succeeded),
        ])
    );
    assert_eq!(
        project
            .then(&[
                "run",
                "graphs/handled",
                "--quiet",
                "--input",
                "words=[\"bad\"]"
            ])
            .status(0)
            .run()
            .json(),
        json!({"failed": "measure", "message": "element 0: tool `t/check` exited with code 3"})
    );
}

#[test]
fn the_step_limit_of_an_exported_graph_ends_as_strata_run_ends() {
    use Phase::*;
    let project = graph_project()
        .tool(
            "graphs/short",
            &FAN.replace("nodes:\n", "max_steps: 1\nnodes:\n"),
        )
        .args(&["tools"])
        .status(0)
        .run();
    assert_eq!(
        graph_fidelity(&project, "graphs/short", &[], &[], 3),
        phases(&[
            ("start", Succeeded),
            ("measure", Succeeded),
            ("measure-each", Skipped),
            ("measure-collect", Failed),
            ("sum", Omitted),
            ("many", Omitted),
            ("few", Omitted),
            ("none", Skipped),
        ])
    );
}

#[test]
fn a_graph_with_a_loop_exports_as_one_task_running_the_whole_graph() {
    let ran = graph_project()
        .args(&["export", "argo", "tools/graphs/loop.yaml", "--image", "strata:1", "--name", "count", "--value", "to=2"])
        .stdout(r#"# Exported by `strata export argo` from tools/graphs/loop.yaml: one task running `strata run graphs/loop` in `strata:1`.
# Checked offline against Argo's schema v4.1.2 and strata's checks; submit with `argo submit`.
# See docs/scale-out.md.
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: count
spec:
  entrypoint: strata-graph
  arguments:
    parameters:
    - name: inputs
      description: the graph's inputs, a JSON object
      value: '{"to":2}'
  templates:
  - name: strata-graph
    dag:
      tasks:
      - name: run
        template: run
  - name: run
    container:
      image: strata:1
      command:
      - strata
      args:
      - run
      - graphs/loop
      - --project
      - /project
      - --params-json
      - '{{workflow.parameters.inputs}}'
      - --run-id
      - '{{workflow.name}}'
      workingDir: /project
"#)
        .stderr("note: graph `graphs/loop` has a loop (count -> count): it is exported as one task running `strata run` on the whole graph\n")
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&ran.stdout).unwrap();
    let tasks = local::run(&ran, &manifest, "wf-loop");
    assert_eq!(tasks.len(), 1);
    let (task, done) = &tasks[0];
    assert_eq!((task.as_str(), done.phase), ("run", Phase::Succeeded));
    assert_eq!(done.stdout, "2\n");
    let by_strata = ran
        .then(&["run", "graphs/loop", "--quiet", "--input", "to=2"])
        .status(0)
        .run();
    assert_eq!(done.stdout, by_strata.stdout);
    let cp: Value =
        serde_json::from_str(&ran.read(".strata/runs/wf-loop/checkpoint.json")).unwrap();
    assert_eq!(
        (cp["status"].as_str(), cp["step"].as_u64()),
        (Some("completed"), Some(3))
    );
}

#[test]
fn an_exported_graph_gives_its_action_and_element_templates_their_tools_resources_not_retries() {
    let check = format!("{CHECK_TOOL}resources: {{cpus: 1, memory: 1Gi}}\nretries: {{limit: 3}}\n");
    let json_tool = format!("{JSON_TOOL}resources: {{custom: {{example.com/fpga: 1}}}}\n");
    let ran = graph_project()
        .tool("t/check", &check)
        .tool("t/json", &json_tool)
        .args(&[
            "export",
            "argo",
            "tools/graphs/fan.yaml",
            "--image",
            "strata:1",
            "--jobs",
            "4",
        ])
        .stderr("")
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&ran.stdout).unwrap();
    assert_eq!(manifest["spec"]["parallelism"], json!(4));
    let scaled: Vec<Value> = list(&manifest, "/spec/templates")
        .iter()
        .filter(|t| t.get("retryStrategy").is_some() || t["container"].get("resources").is_some())
        .map(|t| json!([t["name"], t["container"]["resources"], t["retryStrategy"]]))
        .collect();
    assert_eq!(
        scaled,
        [
            // No `retryStrategy`: `strata walk` retries the tool in the pod, before
            // `on_error` sees its failure (Argo's retries would multiply the attempts).
            json!([
                "measure-each",
                {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
                null
            ]),
            json!([
                "sum",
                {"requests": {"example.com/fpga": "1"}, "limits": {"example.com/fpga": "1"}},
                null
            ]),
        ]
    );
}

#[test]
fn an_exported_dag_graph_has_these_tasks() {
    let ran = graph_project()
        .args(&[
            "export",
            "argo",
            "tools/graphs/fan.yaml",
            "--image",
            "strata:1",
        ])
        .stderr("")
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&ran.stdout).unwrap();
    let tasks: Vec<Value> = list(&manifest, "/spec/templates/0/dag/tasks")
        .iter()
        .map(|t| json!([t["name"], t["depends"], t["when"], t["withParam"]]))
        .collect();
    let next =
        |from: &str, to: &str| format!("'{{{{tasks.{from}.outputs.parameters.next}}}}' == '{to}'");
    assert_eq!(
        tasks,
        [
            json!(["start", null, null, null]),
            json!(["measure", "start.Succeeded", next("start", "measure"), null]),
            json!([
                "measure-each",
                "measure.Succeeded",
                null,
                "{{tasks.measure.outputs.parameters.indexes}}"
            ]),
            json!([
                "measure-collect",
                "measure-each.Succeeded || measure-each.Skipped",
                null,
                null
            ]),
            json!([
                "sum",
                "measure-collect.Succeeded",
                next("measure-collect", "sum"),
                null
            ]),
            json!(["many", "sum.Succeeded", next("sum", "many"), null]),
            json!(["few", "sum.Succeeded", next("sum", "few"), null]),
            json!(["none", "start.Succeeded", next("start", "none"), null]),
        ]
    );
    assert_eq!(
        manifest["spec"]["arguments"],
        json!({"parameters": [{"name": "inputs", "description": "the graph's inputs, a JSON object", "value": "{\"words\":[\"a\",\"bb\",\"ccc\"]}"}]})
    );
    ran.then(&["run", "graphs/fan", "--run-id", "fp", "--quiet"])
        .status(0)
        .run();
    let cp: Value = serde_json::from_str(&ran.read(".strata/runs/fp/checkpoint.json")).unwrap();
    let fingerprint = cp["fingerprint"].as_str().unwrap();
    let start = list(&manifest, "/spec/templates/1/container/args");
    assert_eq!(
        start
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "walk",
            "graphs/fan",
            "--node",
            "start",
            "--fingerprint",
            fingerprint,
            "--project",
            "/project",
            "--walks",
            "/tmp/strata/in",
            "--output",
            "/tmp/strata/out",
            "--limit",
            "262144",
            "--run-uid",
            "{{workflow.uid}}",
            "--start",
            "--params-json",
            "{{workflow.parameters.inputs}}",
            "--run-id",
            "{{workflow.name}}"
        ]
    );
    let handled = ran
        .then(&[
            "export",
            "argo",
            "tools/graphs/handled.yaml",
            "--image",
            "strata:1",
        ])
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&handled.stdout).unwrap();
    let report = list(&manifest, "/spec/templates/0/dag/tasks")
        .last()
        .unwrap()
        .clone();
    assert_eq!(report["depends"], "start.Succeeded || measure-collect.Succeeded || sum.Succeeded || many.Succeeded || few.Succeeded || none.Succeeded");
}

#[test]
fn every_shipped_graph_exports_and_passes_the_check() {
    let project = Test::new().shipped();
    let graphs = [
        (
            "agent_loop",
            Some("think -> plan -> think"),
            "2 templates and 1 task",
        ),
        (
            "recover",
            Some("summarise -> recover -> summarise"),
            "2 templates and 1 task",
        ),
        ("retry", Some("try -> try"), "2 templates and 1 task"),
        ("words", None, "8 templates and 7 tasks"),
    ];
    for (graph, cycle, holds) in graphs {
        let file = format!("tools/graphs/{graph}.yaml");
        let note = match cycle {
            Some(c) => format!("note: graph `graphs/{graph}` has a loop ({c}): it is exported as one task running `strata run` on the whole graph\n"),
            None => String::new(),
        };
        project
            .then(&["export", "argo", &file, "--image", "strata:test", "--check"])
            .stdout(&format!(
                "{file}: exported and checked: a Workflow with {holds} (Argo's schema v4.1.2 and strata's checks)\n"
            ))
            .stderr(&note)
            .status(0)
            .run();
    }
}

/// `strata export argo tools/graphs/x.yaml <args…>` of graph `graph` refused with `stderr`.
fn graph_refused(graph: &str, args: &[&str], stderr: &str) {
    let mut argv = vec![
        "export",
        "argo",
        "tools/graphs/x.yaml",
        "--image",
        "strata:1",
    ];
    argv.extend_from_slice(args);
    graph_project()
        .tool("graphs/x", graph)
        .file(".env", "API_TOKEN=s3cr3t-value\n")
        .args(&argv)
        .stdout("")
        .stderr(stderr)
        .status(2)
        .run();
}

#[test]
fn bad_graphs_and_inputs_are_refused_with_a_clear_error() {
    graph_refused(
        "kind: graph\nnodes:\n  a_b: {kind: gate, next: a-b}\n  a-b: {kind: return, output: 1}\n",
        &[],
        "error[argo]: nodes `a_b` and `a-b` both become the Argo task `a-b`
  --> tools/graphs/x.yaml:4:8
  |
4 |   a-b: {kind: return, output: 1}
  |        ^
   = field: nodes.a-b
   = help: task names map `_` to `-`; rename one of them
",
    );
    graph_refused(
        "kind: graph\nnodes:\n  x: {kind: foreach, over: [1], do: {kind: gate}, next: x_each}\n  x_each: {kind: return, output: 1}\n",
        &[],
        "error[argo]: two node tasks would be named `x-each`
  --> tools/graphs/x.yaml:4:11
  |
4 |   x_each: {kind: return, output: 1}
  |           ^
   = field: nodes.x_each
   = help: a foreach node `x` has the tasks `x`, `x-each` and `x-collect`; rename the node that clashes
",
    );
    graph_refused(
        "kind: graph\nnodes:\n  strata-graph: {kind: return, output: 1}\n",
        &[],
        "error[argo]: node `strata-graph` becomes the Argo task `strata-graph`, a name the export uses for itself
  --> tools/graphs/x.yaml:3:17
  |
3 |   strata-graph: {kind: return, output: 1}
  |                 ^
   = field: nodes.strata-graph
   = help: rename it
",
    );
    graph_refused(
        LOOP,
        &["--value", "to=x"],
        "error[inputs]: input `to` must be an integer, got `x`
   = help: the inputs are: to (integer, default 3)
",
    );
    graph_refused(
        FAN,
        &["--value-json", "words=[\"s3cr3t-value\"]"],
        "error[argo]: the manifest would hold the value of secret `API_TOKEN` (at spec.arguments.parameters[0].value)
   = help: a manifest never holds a secret: keep it in the Kubernetes Secret named with --secret, and let the tool read its variable
",
    );
}

#[test]
fn walk_refuses_what_it_cannot_take_on() {
    let ran = graph_project()
        .file("empty/.keep", "")
        .args(&["walk", "graphs/fan", "--node", "strat"])
        .stdout("")
        .stderr("error[request]: graph `graphs/fan` has no node `strat`\n   = help: did you mean `start`?\n")
        .status(2)
        .run();
    let refused = |args: &[&str], stderr: &str| {
        let mut argv = vec!["walk", "graphs/fan"];
        argv.extend_from_slice(args);
        ran.then(&argv).stdout("").stderr(stderr).status(2).run();
    };
    refused(
        &["--node", "start", "--fingerprint", "0123456789abcdef"],
        "error[request]: graph `graphs/fan` is not the one the workflow was exported from\n   = help: rebuild the image from the project the workflow was exported from\n",
    );
    refused(
        &["--node", "measure", "--start"],
        "error[request]: a run of graph `graphs/fan` starts at `start`, not `measure`\n",
    );
    refused(
        &["--node", "sum", "--walks", "empty"],
        "error[request]: no walk in `empty` goes on to node `sum`\n",
    );
    refused(
        &["--node", "measure", "--part", "element", "--walks", "empty"],
        "error[request]: --part element needs --index\n",
    );
    refused(
        &["--node", "start", "--start", "--params-json", "[1]"],
        "error[request]: --params-json must be a JSON object\n",
    );
    ran.then(&["walk", "graphs/fan", "--node", "start", "--start", "--run-id", "w1", "--output", "two"])
        .stdout("")
        .stderr("run w1: starting graphs/fan at `start`\nstep 1 start (gate) -> measure (when length(state.words) > 0): words = [\"a\",\"bb\",\"ccc\"] (was [])\n")
        .status(0)
        .run();
    assert_eq!(ran.read("two/next"), "measure");
    std::fs::copy(
        ran.path().join("two/walk.json"),
        ran.path().join("two/again.json"),
    )
    .unwrap();
    refused(
        &["--node", "measure", "--part", "items", "--walks", "two"],
        "error[request]: 2 walks in `two` go on to node `measure`; a run walks one path\n",
    );
}

#[test]
fn a_foreach_element_above_the_parameter_limit_fails_with_a_clear_error() {
    use Phase::*;
    let ran = graph_project()
        .args(&[
            "export",
            "argo",
            "tools/graphs/fan.yaml",
            "--image",
            "strata:1",
            "--parameter-limit",
            "30",
            "-o",
            "wf.yaml",
        ])
        .stderr("wrote wf.yaml: a Workflow with 9 templates and 8 tasks\n")
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&ran.read("wf.yaml")).unwrap();
    let tasks = local::run(&ran, &manifest, "wf-big");
    let ended: Vec<(&str, Phase)> = tasks.iter().map(|(t, d)| (t.as_str(), d.phase)).collect();
    assert_eq!(
        ended,
        [
            ("start", Succeeded),
            ("measure", Succeeded),
            ("measure-each", Succeeded),
            ("measure-collect", Failed),
            ("sum", Omitted),
            ("many", Omitted),
            ("few", Omitted),
            ("none", Skipped),
        ]
    );
    let walk = carried(&tasks[3].1, "walk");
    assert_eq!(
        walk["failure"],
        "node `measure`: element 0: its output is 40 bytes of JSON, more than the parameter limit (30 bytes); a fan-out's outputs travel as parameters"
    );
    assert_eq!(ran.read("pods/measure/out/walk.json"), "\"artifact\"");
}

/// Text Argo would act on if it reached a manifest as written: tags it knows, an expression,
/// a tag it does not know, a lone `{{`.
const TAGS: &str = "{{workflow.name}} {{workflow.parameters.title}} {{=1+1}} {{nope}} {{ {x}";

/// No tag of [`TAGS`] in the manifest as Argo reads it (its comments aside).
fn no_user_tags(manifest: &Value) {
    let text = serde_json::to_string(manifest).unwrap();
    // strata's own tags stand alone (`{{workflow.name}}` as the run id, for one).
    for tag in [
        "{{workflow.name}} ",
        "\\\"{{workflow.name",
        "{{workflow.parameters.inputs}} ",
        "{{workflow.parameters.title}} ",
        "{{=",
        "{{nope",
        "{{ ",
        "{{workflow.parameters.x",
    ] {
        assert!(!text.contains(tag), "{tag} in {text}");
    }
}

#[test]
fn argo_tags_in_plan_values_results_and_file_names_arrive_byte_for_byte() {
    let file = "plans/{{workflow.parameters.x}}.yaml";
    let plan = "- {id: A, tool: t/json, arguments: {text: \"{{PLACEHOLDER_title}}\"}}\n- {id: B, tool: t/json, arguments: {x: \"{{A.result}}\"}}\n";
    let value = format!("title={}", json!(TAGS));
    let ran = project()
        .file(file, plan)
        .args(&[
            "export",
            "argo",
            file,
            "--image",
            "strata:1",
            "--value-json",
            &value,
            "-o",
            "wf.yaml",
        ])
        .stderr("wrote wf.yaml: a Workflow with 3 templates and 2 tasks\n")
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&ran.read("wf.yaml")).unwrap();
    no_user_tags(&manifest);
    let records = run_tasks(&ran, &manifest);
    assert_eq!(records["A"]["status"], "completed", "{records:?}");
    assert_eq!(records["A"]["result"]["text"], TAGS);
    assert_eq!(records["B"]["result"]["x"]["text"], TAGS);
    // The file's name reaches the task as it is: the step's messages name it.
    let args: Vec<String> = list(&manifest, "/spec/templates/1/container/args")
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let shown = args.iter().skip_while(|a| *a != "--as").nth(1).unwrap();
    std::fs::copy(ran.path().join(file), ran.path().join("doc")).unwrap();
    ran.then(&["plan", "step", "doc", "--as", shown, "--step", "C"])
        .stdout("")
        .stderr(
            "error[request]: `plans/{{workflow.parameters.x}}.yaml` has no step `C`
   = help: its steps are A, B
",
        )
        .status(2)
        .run();
}

/// A graph whose inputs' defaults hold Argo's tags, in a DAG and around a loop.
const TAGGED: &str = r#"kind: graph
parameters:
  type: object
  properties:
    tag: {type: string, default: "{{workflow.name}} {{workflow.parameters.inputs}} {{=1}}"}
    words: {type: array, default: []}
state: {echoed: null}
nodes:
  echo:
    kind: action
    tool: t/json
    params: {text: "${inputs.tag}", data: "${inputs.words}"}
    assign: {echoed: "${result}"}
    next: each
  each:
    kind: foreach
    over: "${inputs.words}"
    as: w
    do: {kind: action, tool: t/json, params: {text: "${w}"}}
    output: "${result}"
    collect: seen
    next: done
  done: {kind: return, output: {tag: "${inputs.tag}", echoed: "${state.echoed}", seen: "${state.seen}"}}
"#;

#[test]
fn argo_tags_in_graph_defaults_inputs_and_results_arrive_byte_for_byte() {
    let looped = LOOP
        .replace(
            "    to: {type: integer, default: 3}\n",
            "    to: {type: integer, default: 3}\n    tag: {type: string, default: \"{{workflow.name}} {{=1}}\"}\n",
        )
        .replace("output: \"${state.n}\"", "output: [\"${state.n}\", \"${inputs.tag}\"]");
    let project = graph_project()
        .tool("graphs/tagged", TAGGED)
        .tool("graphs/looped", &looped)
        .args(&["tools"])
        .status(0)
        .run();
    let words = format!("words={}", json!([TAGS, "{{workflow.name}}"]));
    graph_fidelity(&project, "graphs/tagged", &[&words], &[], 0);
    no_user_tags(&strata_doc::Document::yaml_value(&project.read("wf.yaml")).unwrap());
    graph_fidelity(&project, "graphs/tagged", &[], &[], 0);
    project
        .then(&["run", "graphs/tagged", "--quiet"])
        .stdout(
            r#"{
  "tag": "{{workflow.name}} {{workflow.parameters.inputs}} {{=1}}",
  "echoed": {
    "text": "{{workflow.name}} {{workflow.parameters.inputs}} {{=1}}",
    "data": []
  },
  "seen": []
}
"#,
        )
        .status(0)
        .run();
    project
        .then(&[
            "export",
            "argo",
            "tools/graphs/looped.yaml",
            "--image",
            "strata:1",
            "-o",
            "wf.yaml",
        ])
        .status(0)
        .run();
    let manifest: Value = strata_doc::Document::yaml_value(&project.read("wf.yaml")).unwrap();
    no_user_tags(&manifest);
    let tasks = local::run(&project, &manifest, "wf-looped");
    let by_strata = project
        .then(&["run", "graphs/looped", "--quiet"])
        .status(0)
        .run();
    assert_eq!(tasks[0].1.stdout, by_strata.stdout);
    assert!(by_strata.stdout.contains("\"{{workflow.name}} {{=1}}\""));
}

#[test]
fn argo_tags_where_no_task_can_decode_them_are_refused() {
    export_refused(
        "- {id: a, tool: t/json, arguments: {}}\n",
        &["--image", "strata:1", "--project-dir", "/{{workflow.name}}"],
        "error[argo]: the project directory `/{{workflow.name}}` holds `{{`, which Argo would replace
   = help: Argo replaces every `{{…}}` in a manifest and has no escape: choose a directory without `{{`
",
    );
    graph_project()
        .tool(
            "graphs/{{workflow.name}}",
            "kind: graph\nnodes:\n  a: {kind: return, output: 1}\n",
        )
        .args(&[
            "export",
            "argo",
            "tools/graphs/{{workflow.name}}.yaml",
            "--image",
            "strata:1",
        ])
        .stdout("")
        .stderr(
            // The project loads no tool whose id holds `{{` (the export would refuse it too).
            "error[request]: unknown tool `graphs/{{workflow.name}}`
   = help: did you mean `graphs/fan`?
",
        )
        .status(2)
        .run();
}

#[test]
fn a_secret_declared_by_the_project_or_a_chain_set_in_the_environment_is_refused() {
    // Not in .env: the value comes from the environment, the declaration from `strata.yaml`
    // or from the `secrets` of the tool's chain (the rule strata.ray checks its upload by).
    let help = "   = help: a manifest never holds a secret: keep it in the Kubernetes Secret named with --secret, and let the tool read its variable\n";
    project()
        .file("strata.yaml", "secrets: [SETTINGS_TOKEN]\n")
        .file(
            "plans/x.yaml",
            "- {id: a, tool: t/json, arguments: {text: \"settings-s3cr3t\"}}\n",
        )
        .env("SETTINGS_TOKEN", "settings-s3cr3t")
        .args(&["export", "argo", "plans/x.yaml", "--image", "strata:1"])
        .stdout("")
        .stderr(&format!("error[argo]: the manifest would hold the value of secret `SETTINGS_TOKEN` (`plans/x.yaml` holds it)\n{help}"))
        .status(2)
        .run();
    project()
        .tool(
            "t/keyed",
            &JSON_TOOL.replace("executor:", "secrets: [CHAIN_TOKEN]\nexecutor:"),
        )
        .file(
            "plans/x.yaml",
            "- {id: a, tool: t/keyed, arguments: {text: \"{{PLACEHOLDER_t}}\"}}\n",
        )
        .env("CHAIN_TOKEN", "chain-s3cr3t")
        .args(&[
            "export",
            "argo",
            "plans/x.yaml",
            "--image",
            "strata:1",
            "--value",
            "t=chain-s3cr3t",
        ])
        .stdout("")
        .stderr(&format!("error[argo]: the manifest would hold the value of secret `CHAIN_TOKEN` (at spec.arguments.parameters[1].value)\n{help}"))
        .status(2)
        .run();
}

#[test]
fn a_secret_written_with_escapes_is_refused_as_a_plain_one() {
    for (written, place) in [
        ("\"s3cr\\x33t-value\"", "`plans/x.yaml` holds it"),
        ("\"s3cr3t-\\\n    value\"", "`plans/x.yaml` holds it"),
        ("\"s3cr\\u0033t\\u002dvalue\"", "`plans/x.yaml` holds it"),
    ] {
        export_refused(
            &format!("- {{id: a, tool: t/json, arguments: {{text: {written}}}}}\n"),
            &["--image", "strata:1"],
            &format!("error[argo]: the manifest would hold the value of secret `API_TOKEN` ({place})
   = help: a manifest never holds a secret: keep it in the Kubernetes Secret named with --secret, and let the tool read its variable
"),
        );
    }
    graph_refused(
        &FAN.replace("default: [a, bb, ccc]", "default: [\"s3cr\\x33t-value\"]"),
        &[],
        "error[argo]: the manifest would hold the value of secret `API_TOKEN` (`tools/graphs/x.yaml` holds it)
   = help: a manifest never holds a secret: keep it in the Kubernetes Secret named with --secret, and let the tool read its variable
",
    );
}
