//! A run sent to Ray workers, checked before anything leaves: the files of the upload hold no
//! secret value and hold every tool the run needs; the tasks' arguments hold no secret value.
//! A secret is what the one rule says ([`strata_app::RunSecrets`]): `.env` values, and the
//! values in the environment of the secrets the project or the tools' chains declare.

mod common;
use common::{app, project, write, ECHO};

use serde_json::{json, Value};
use strata_core::{Error, ErrorKind};

/// A runtime declaring `PATH` secret (a variable every test process has), and a tool on it.
const KEYED: &str = "executor: runtimes/subprocess\nsecrets: [PATH]\n";
const KEYED_TOOL: &str = "executor: runtimes/keyed\nconfig: {command: printf, args: [x]}\n";

/// Every file under `root`, relative and `/`-separated, sorted.
fn files(root: &std::path::Path) -> Vec<String> {
    fn walk(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                out.push(rel.to_str().unwrap().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn without(files: &[String], gone: &[&str]) -> Vec<String> {
    files
        .iter()
        .filter(|f| !gone.contains(&f.as_str()))
        .cloned()
        .collect()
}

fn tools(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

fn refusal(result: Result<(), Error>) -> (ErrorKind, String, String) {
    let e = result.unwrap_err();
    (
        e.kind(),
        e.message().to_string(),
        e.hint().unwrap_or_default().to_string(),
    )
}

#[test]
fn a_secret_a_chain_declares_set_in_the_environment_is_refused_in_the_upload_and_the_arguments() {
    let path = std::env::var("PATH").unwrap();
    let dir = project(&[
        ("tools/runtimes/keyed.yaml", KEYED),
        ("tools/t/keyed.yaml", KEYED_TOOL),
        ("tools/t/echo.yaml", ECHO),
        ("notes.txt", &format!("the search path: {path}\n")),
    ]);
    let app = app(dir.path());
    let all = files(dir.path());
    let run = app.scale_out(Some(&tools(&["t/keyed"]))).unwrap();
    assert_eq!(run.secret_names(), ["PATH"]);
    assert_eq!(
        refusal(run.check_upload(&all)),
        (
            ErrorKind::Forbidden,
            "`notes.txt` holds the value of secret `PATH`: it would be uploaded to the Ray workers"
                .into(),
            "exclude it (excludes=[...] or .gitignore), or keep the value only in .env or the environment"
                .into()
        )
    );
    assert!(run.check_upload(&without(&all, &["notes.txt"])).is_ok());
    let e = run
        .check_arguments("the user values", &json!({"word": format!("x{path}")}))
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.message(), e.hint()),
        (
            ErrorKind::Forbidden,
            "the Ray tasks' arguments would hold the value of secret `PATH` (found in the user values)",
            Some("keep the value in .env and let the tool read its variable")
        )
    );
    assert!(!e.to_string().contains(&path));
    // A run whose tools declare nothing searches for nothing of the environment.
    let plain = app.scale_out(Some(&tools(&["t/echo"]))).unwrap();
    assert!(plain.secret_names().is_empty());
    assert!(plain.check_upload(&all).is_ok());
    // A run of any tool (no run given) searches for every tool's secrets.
    let any = app.scale_out(None).unwrap();
    assert_eq!(any.secret_names(), ["PATH"]);
    assert!(any.check_upload(&all).is_err());
}

#[test]
fn a_secret_the_project_declares_is_searched_for_too() {
    let path = std::env::var("PATH").unwrap();
    let dir = project(&[
        ("strata.yaml", "secrets: [PATH]\n"),
        ("tools/t/echo.yaml", ECHO),
    ]);
    let run = app(dir.path())
        .scale_out(Some(&tools(&["t/echo"])))
        .unwrap();
    assert_eq!(run.secret_names(), ["PATH"]);
    assert!(run
        .check_arguments("the plan", &json!([{"text": path}]))
        .is_err());
}

#[test]
fn every_file_is_searched_whole_for_the_values_of_env_read_as_strata_reads_it() {
    let dir = project(&[
        ("tools/t/echo.yaml", ECHO),
        (
            ".env",
            "export API_KEY=abcd-1234 # the staging key\nSHORT=abc\n",
        ),
        ("notes.txt", "abcd-123 and abc are no secret\n"),
    ]);
    let app = app(dir.path());
    let run = app.scale_out(Some(&tools(&["t/echo"]))).unwrap();
    // A value shorter than 4 bytes is not searched for.
    assert_eq!(run.secret_names(), ["API_KEY"]);
    let all = without(&files(dir.path()), &[".env"]);
    assert!(run.check_upload(&all).is_ok());
    // Across the border of two chunks (1 MiB), at the end of a file of 3 MiB.
    let mut big = vec![b'x'; (1 << 20) - 4];
    big.extend_from_slice(b"abcd-1234");
    std::fs::write(dir.path().join("border.bin"), &big).unwrap();
    let mut end = vec![b'x'; 3 << 20];
    end.extend_from_slice(b"abcd-1234");
    std::fs::write(dir.path().join("end.bin"), &end).unwrap();
    for file in ["border.bin", "end.bin"] {
        let listed = [all.clone(), vec![file.to_string()]].concat();
        assert_eq!(
            refusal(run.check_upload(&listed)).1,
            format!(
                "`{file}` holds the value of secret `API_KEY`: it would be uploaded to the Ray workers"
            )
        );
    }
}

#[test]
fn arguments_are_searched_in_strings_keys_numbers_and_json_text() {
    let dir = project(&[
        ("tools/t/echo.yaml", ECHO),
        (".env", "API_KEY=abcd-1234\nPIN=98765\n"),
    ]);
    let run = app(dir.path())
        .scale_out(Some(&tools(&["t/echo"])))
        .unwrap();
    let found = |value: Value| {
        run.check_arguments("the graph's inputs", &value)
            .err()
            .map(|e| e.message().to_string())
    };
    let key = "the Ray tasks' arguments would hold the value of secret `API_KEY` (found in the graph's inputs)";
    let pin = "the Ray tasks' arguments would hold the value of secret `PIN` (found in the graph's inputs)";
    assert_eq!(
        found(json!({"a": ["x", "..abcd-1234.."]})).as_deref(),
        Some(key)
    );
    assert_eq!(found(json!({"abcd-1234": 1})).as_deref(), Some(key));
    assert_eq!(found(json!({"n": 9876543})).as_deref(), Some(pin));
    // JSON text hides nothing behind an escape.
    assert_eq!(
        found(json!({"j": "{\"v\": \"abcd\\u002d1234\"}"})).as_deref(),
        Some(key)
    );
    assert_eq!(found(json!("\"abcd\\u002d1234\"")).as_deref(), Some(key));
    assert_eq!(
        found(json!({"a": "abcd-123", "b": true, "c": null, "d": 9876})),
        None
    );
}

#[test]
fn a_tool_the_run_needs_left_out_of_the_upload_is_refused() {
    let dir = project(&[
        ("tools/runtimes/keyed.yaml", "executor: runtimes/subprocess\n"),
        ("tools/t/keyed.yaml", KEYED_TOOL),
        ("tools/t/echo.yaml", ECHO),
        ("tools/t/other.yaml", ECHO),
        (
            "tools/graphs/g.yml",
            "kind: graph\nnodes:\n  e: {kind: action, tool: t/keyed, params: {}, next: done}\n  done: {kind: return, output: 1}\n",
        ),
    ]);
    let app = app(dir.path());
    let all = files(dir.path());
    let message = |missing: &str| {
        format!("the run needs tool {missing}, left out of the upload to the Ray workers (by excludes= or .gitignore)")
    };
    let plan = app.scale_out(Some(&tools(&["t/keyed", "t/echo"]))).unwrap();
    assert_eq!(
        plan.needed(),
        ["runtimes/keyed", "runtimes/subprocess", "t/echo", "t/keyed"]
    );
    assert!(plan.check_upload(&all).is_ok());
    assert!(plan
        .check_upload(&without(&all, &["tools/t/other.yaml"]))
        .is_ok());
    assert_eq!(
        refusal(plan.check_upload(&without(
            &all,
            &["tools/t/echo.yaml", "tools/runtimes/keyed.yaml"]
        ))),
        (
            ErrorKind::Invalid,
            message("`runtimes/keyed`, `t/echo`"),
            "take it out of excludes= and .gitignore, or set RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1"
                .into()
        )
    );
    // A graph (named as `strata run` names it) needs its nodes' tools and their chains.
    let graph = app.scale_out(Some(&tools(&["g"]))).unwrap();
    assert_eq!(
        graph.needed(),
        [
            "graphs/g",
            "runtimes/keyed",
            "runtimes/subprocess",
            "t/keyed"
        ]
    );
    assert_eq!(
        refusal(graph.check_upload(&without(&all, &["tools/runtimes/subprocess.yaml"]))).1,
        message("`runtimes/subprocess`")
    );
    // A tool that does not exist is no part of the upload: the run refuses it on its own.
    assert!(app
        .scale_out(Some(&tools(&["no/such"])))
        .unwrap()
        .needed()
        .is_empty());
}

#[test]
fn a_file_of_the_upload_is_a_path_inside_the_project() {
    let dir = project(&[("tools/t/echo.yaml", ECHO), (".env", "API_KEY=abcd-1234\n")]);
    write(dir.path(), "ok.txt", "nothing\n");
    let run = app(dir.path()).scale_out(None).unwrap();
    for path in ["../x", "/etc/passwd", ""] {
        let e = run.check_upload(&[path.to_string()]).unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (
                ErrorKind::Invalid,
                format!("`{path}` is not a path inside the project").as_str()
            )
        );
    }
    assert!(run.check_upload(&["./ok.txt".to_string()]).is_ok());
}
