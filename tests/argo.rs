//! End-to-end tests of `strata export argo` and `strata plan step`: the real binary exporting
//! plans as Argo Workflows, checking manifests offline (Argo's nine examples pass, mutations
//! of them are refused with their line and column), bad input refused with clear errors, and
//! the fidelity test: every task of an exported plan run locally, in dependency order, fed
//! the outputs the manifest says it gets, ends with the records `strata plan run` gives.

mod common;
use common::{Ran, Test};

use std::collections::HashMap;
use std::path::Path;

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

/// The `{{…}}` tags of `text` replaced by `lookup` (a tag it does not know stays).
fn substitute(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}").map(|c| c + open) else {
            break;
        };
        out.push_str(&rest[..open]);
        let tag = rest[open + 2..close].trim();
        match lookup(tag) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[open..close + 2]),
        }
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

/// What a task left: its phase, its output parameters and the files of its output artifacts.
#[derive(Default)]
struct Done {
    succeeded: bool,
    parameters: HashMap<String, String>,
    artifacts: HashMap<String, std::path::PathBuf>,
}

fn list<'v>(v: &'v Value, pointer: &str) -> &'v [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn name(v: &Value) -> &str {
    v["name"].as_str().unwrap()
}

/// Runs every task of the exported plan `manifest` locally, as Argo would: in dependency
/// order, a task whose `depends` does not hold is omitted, the others get the parameters and
/// artifacts their arguments name, run their container's command with the binary (paths
/// under `/tmp/strata` in a directory of their own, `/project` the project), and leave their
/// output parameters and artifacts. Returns each step's record, by step id: the record a
/// task wrote, or for an omitted task the skipped record that `strata plan run` gives.
fn run_tasks(ran: &Ran, manifest: &Value) -> HashMap<String, Value> {
    let globals: HashMap<&str, &str> = list(manifest, "/spec/arguments/parameters")
        .iter()
        .map(|p| (name(p), p["value"].as_str().unwrap_or("")))
        .collect();
    let templates: HashMap<&str, &Value> = list(manifest, "/spec/templates")
        .iter()
        .map(|t| (name(t), t))
        .collect();
    let entry = templates[manifest["spec"]["entrypoint"].as_str().unwrap()];
    let tasks = list(entry, "/dag/tasks");
    let mut done: HashMap<String, Done> = HashMap::new();
    let mut step_of: HashMap<String, String> = HashMap::new();
    let mut records: HashMap<String, Value> = HashMap::new();
    while done.len() < tasks.len() {
        let task = tasks
            .iter()
            .find(|t| {
                !done.contains_key(name(t))
                    && t["depends"].as_str().map_or(true, |d| {
                        d.split(" && ")
                            .all(|c| done.contains_key(c.trim_end_matches(".Succeeded")))
                    })
            })
            .expect("a task whose dependencies are done");
        let me = name(task).to_string();
        let template = templates[task["template"].as_str().unwrap()];
        let args = list(template, "/container/args");
        let step = args
            .iter()
            .skip_while(|a| *a != "--step")
            .nth(1)
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        step_of.insert(me.clone(), step.clone());
        let deps: Vec<&str> = task["depends"]
            .as_str()
            .map(|d| {
                d.split(" && ")
                    .map(|c| c.trim_end_matches(".Succeeded"))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(d) = deps.iter().find(|d| !done[**d].succeeded) {
            let why = if records[&step_of[*d]]["status"] == "failed" {
                "failed"
            } else {
                "was skipped"
            };
            records.insert(
                step.clone(),
                json!({"id": step, "status": "skipped", "result": null,
                       "error": {"kind": "run_state", "message": format!("step `{}` {why}", step_of[*d])},
                       "run": null}),
            );
            done.insert(me, Done::default());
            continue;
        }
        let pod = ran.path().join("pods").join(&me);
        let local = |p: &str| {
            p.replace("/tmp/strata", &pod.display().to_string())
                .replace("/project", &ran.path().display().to_string())
        };
        let from_tasks = |tag: &str| -> Option<String> {
            let parts: Vec<&str> = tag.split('.').collect();
            match parts.as_slice() {
                ["tasks", t, "outputs", "parameters", p] => done[*t].parameters.get(*p).cloned(),
                ["workflow", "parameters", p] => globals.get(p).map(|v| v.to_string()),
                _ => None,
            }
        };
        let given: HashMap<&str, String> = list(task, "/arguments/parameters")
            .iter()
            .map(|p| {
                (
                    name(p),
                    substitute(p["value"].as_str().unwrap(), &from_tasks),
                )
            })
            .collect();
        let given_artifacts: HashMap<&str, &Path> = list(task, "/arguments/artifacts")
            .iter()
            .filter_map(|a| {
                let from = a["from"].as_str().unwrap();
                let parts: Vec<&str> = from.trim_matches(['{', '}']).split('.').collect();
                let ["tasks", t, "outputs", "artifacts", o] = parts.as_slice() else {
                    panic!("{from}")
                };
                done[*t].artifacts.get(*o).map(|p| (name(a), p.as_path()))
            })
            .collect();
        let inputs = |tag: &str| -> Option<String> {
            match tag.split('.').collect::<Vec<_>>().as_slice() {
                ["inputs", "parameters", p] => given.get(p).cloned(),
                _ => from_tasks(tag),
            }
        };
        for a in list(template, "/inputs/artifacts") {
            let path = local(a["path"].as_str().unwrap());
            std::fs::create_dir_all(Path::new(&path).parent().unwrap()).unwrap();
            if let Some(data) = a.pointer("/raw/data").and_then(Value::as_str) {
                std::fs::write(&path, substitute(data, &inputs)).unwrap();
            } else if let Some(from) = given_artifacts.get(name(a)) {
                std::fs::copy(from, &path).unwrap();
            } else {
                assert_eq!(a["optional"], true, "input artifact {}", name(a));
            }
        }
        let argv: Vec<String> = args
            .iter()
            .map(|a| local(&substitute(a.as_str().unwrap(), &inputs)))
            .collect();
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = ran.then(&argv).run();
        let mut left = Done {
            succeeded: out.code == Some(0),
            ..Done::default()
        };
        for p in list(template, "/outputs/parameters") {
            let path = local(
                p.pointer("/valueFrom/path")
                    .and_then(Value::as_str)
                    .unwrap(),
            );
            let text = std::fs::read_to_string(&path).unwrap();
            left.parameters
                .insert(name(p).into(), text.trim_end_matches('\n').into());
        }
        for a in list(template, "/outputs/artifacts") {
            let path = std::path::PathBuf::from(local(a["path"].as_str().unwrap()));
            if path.is_file() {
                left.artifacts.insert(name(a).into(), path);
            }
        }
        let parameter = &left.parameters["record"];
        let record: Value = if parameter == "\"artifact\"" {
            serde_json::from_str(&std::fs::read_to_string(&left.artifacts["record"]).unwrap())
                .unwrap()
        } else {
            serde_json::from_str(parameter).unwrap()
        };
        assert_eq!(
            serde_json::from_str::<Value>(&out.stdout).unwrap(),
            record,
            "task {me} prints the record it leaves"
        );
        records.insert(step, record);
        done.insert(me, left);
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
    let manifest: Value = serde_yaml::from_str(&ran.read("wf.yaml")).unwrap();
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
    let manifest: Value = serde_yaml::from_str(&text).unwrap();
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
