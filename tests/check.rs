//! `strata check` over a corpus of broken files (`tests/check/`), each with one mistake of a
//! different kind, against the exact expected diagnostics (`<case>.expected`; run with
//! `UPDATE_EXPECT=1` to rewrite them after a deliberate change). The shipped project must be
//! clean.

mod common;
use common::{repo, Test};

use std::path::{Path, PathBuf};

/// A scratch project: the shipped runtimes, `examples/echo`, and the case file in place,
/// with `strata check` and `args` to run.
fn check(case: &Path, args: &[&str]) -> Test {
    let name = case.file_name().unwrap().to_str().unwrap();
    let target = match &name[..2] {
        "t_" => format!("tools/case/{name}"),
        "d_" => format!("directives/{name}"),
        "g_" => format!("tools/graphs/{name}"),
        "p_" => format!("plans/{name}"),
        _ => format!("hooks/{name}"),
    };
    let mut argv = vec!["check"];
    argv.extend_from_slice(args);
    Test::new()
        .copy("tools/runtimes")
        .copy("tools/examples/echo.yaml")
        .file(&target, std::fs::read(case).unwrap())
        .args(&argv)
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/check"))
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
        let o = check(&case, &[]).run();
        let got = normalise(&o.stdout);
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
            o.code,
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
    let o = Test::in_repo().args(&["check", "--deny-warnings"]).run();
    assert!(
        o.stdout.ends_with(": 0 errors, 0 warnings\n"),
        "{}",
        o.stdout
    );
    assert_eq!(o.code, Some(0));
}

#[test]
fn json_output_has_one_object_per_diagnostic() {
    let o = check(
        &repo().join("tests/check/t_unknown_param.yaml"),
        &["--format", "json"],
    )
    .run();
    assert_eq!(
        o.json(),
        serde_json::json!([{
            "kind": "unknown_name",
            "message": "unknown parameter `{tool_pth}`: it is left as written",
            "path": "config.args[1]", "span": [0, 10],
            "hint": "did you mean `{tool_path}`?",
            "file": "tools/case/t_unknown_param.yaml", "line": 4, "column": 19,
            "severity": "error", "code": "R001"
        }])
    );
}

#[test]
fn warnings_fail_only_with_deny_warnings() {
    let case = repo().join("tests/check/d_unused_input.md");
    check(&case, &[])
        .status(0)
        .run()
        .then(&["check", "--deny-warnings"])
        .status(1)
        .run();
}
