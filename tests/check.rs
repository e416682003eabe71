//! `strata check` over a corpus of broken files (`tests/check/`), each with one mistake of a
//! different kind, against the exact expected diagnostics (`<case>.expected`; run with
//! `UPDATE_EXPECT=1` to rewrite them after a deliberate change). The shipped project must be
//! clean.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

/// A scratch project: the shipped runtimes, `examples/echo`, and the case file in place.
fn project_with(case: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(root().join("tools/runtimes")).unwrap() {
        let p = entry.unwrap().path();
        copy(
            &p,
            &dir.path()
                .join("tools/runtimes")
                .join(p.file_name().unwrap()),
        );
    }
    copy(
        &root().join("tools/examples/echo.yaml"),
        &dir.path().join("tools/examples/echo.yaml"),
    );
    let name = case.file_name().unwrap().to_str().unwrap();
    let target = match &name[..2] {
        "t_" => format!("tools/case/{name}"),
        "d_" => format!("directives/{name}"),
        "g_" => format!("tools/graphs/{name}"),
        _ => format!("hooks/{name}"),
    };
    copy(case, &dir.path().join(target));
    dir
}

fn check(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("check")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("tests/check"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "expected"))
        .collect();
    out.sort();
    out
}

/// The summary counts files, which depends on the runtimes shipped; the rest is exact.
fn normalise(text: &str) -> String {
    text.lines()
        .map(
            |l| match l.strip_prefix("checked ").and_then(|r| r.split_once(": ")) {
                Some((_, counts)) => format!("checked: {counts}"),
                None => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn the_corpus_has_forty_cases_of_different_kinds() {
    assert!(cases().len() >= 40, "{} cases", cases().len());
}

#[test]
fn every_broken_file_gets_its_exact_diagnostic() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for case in cases() {
        let dir = project_with(&case);
        let o = check(dir.path(), &[]);
        let got = normalise(&String::from_utf8_lossy(&o.stdout));
        let expected_path = case.with_extension(format!(
            "{}.expected",
            case.extension().unwrap().to_str().unwrap()
        ));
        if update {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if got != want {
            failures.push(format!(
                "{}:\n--- want\n{want}--- got\n{got}",
                case.display()
            ));
        }
        let has_error = got.contains("\nerror[") || got.starts_with("error[");
        assert_eq!(
            o.status.code(),
            Some(if has_error { 1 } else { 0 }),
            "{}",
            case.display()
        );
        assert!(
            !got.starts_with("checked: 0 errors, 0 warnings"),
            "{} found nothing",
            case.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_shipped_project_is_clean() {
    let o = check(root(), &["--deny-warnings"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.ends_with(": 0 errors, 0 warnings\n"), "{text}");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn json_output_has_one_object_per_diagnostic() {
    let dir = project_with(&root().join("tests/check/t_unknown_param.yaml"));
    let o = check(dir.path(), &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{
            "severity": "error", "code": "R001", "file": "tools/case/t_unknown_param.yaml",
            "line": 4, "column": 19, "span": [0, 10], "field": "config.args[1]",
            "message": "unknown parameter `{tool_pth}`: it is left as written",
            "help": "did you mean `{tool_path}`?"
        }])
    );
}

#[test]
fn warnings_fail_only_with_deny_warnings() {
    let dir = project_with(&root().join("tests/check/d_unused_input.md"));
    assert_eq!(check(dir.path(), &[]).status.code(), Some(0));
    assert_eq!(
        check(dir.path(), &["--deny-warnings"]).status.code(),
        Some(1)
    );
}
