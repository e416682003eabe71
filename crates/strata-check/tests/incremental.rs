//! The check kept up to date edit by edit (`strata_check::ProjectIndex`) reports what a whole
//! check of the project as it then is reports, and checks again only what an edit can
//! change.

use std::fs;
use std::path::Path;

use strata_check::{check_project, ProjectIndex, Report};
use strata_project::Project;

/// The repository's shipped project (tools, directives, plans, prompts).
const SHIPPED: [&str; 4] = ["tools", "directives", "plans", "prompts"];

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn shipped_project() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    for d in SHIPPED {
        copy_tree(&repo.join(d), &dir.path().join(d));
    }
    dir
}

/// The report's diagnostics, omitted counts and files, in their JSON forms.
fn shown(report: &Report) -> (Vec<String>, Vec<String>, usize) {
    let diagnostics = report
        .diagnostics
        .iter()
        .map(|d| d.to_json().to_string())
        .collect();
    let omitted = report
        .omitted
        .iter()
        .map(|o| o.to_json().to_string())
        .collect();
    (diagnostics, omitted, report.files)
}

/// An edit: the file, and its new text (`None`: the file is deleted).
struct Edit {
    file: &'static str,
    text: Option<String>,
}

/// How a file of the sequence changes.
enum Change {
    Replace(&'static str, &'static str),
    Delete,
    Write(String),
}

fn replaced(root: &Path, file: &'static str, from: &str, to: &str) -> Edit {
    let text = fs::read_to_string(root.join(file)).unwrap();
    assert!(text.contains(from), "{file} holds {from:?}");
    Edit {
        file,
        text: Some(text.replacen(from, to, 1)),
    }
}

/// Applies `edit` on disk and to the index; returns the files the index checked again.
fn apply(root: &Path, project: &Project, index: &mut ProjectIndex, edit: Edit) -> Vec<String> {
    let path = root.join(edit.file);
    match edit.text {
        Some(text) => fs::write(&path, text).unwrap(),
        None => fs::remove_file(&path).unwrap(),
    }
    index.update(project, &[edit.file.to_string()])
}

/// After each edit of a sequence (parameters renamed in a tool and in a runtime, a tool
/// that becomes another's executor, a schema a graph's action reads, a file broken and
/// mended, a tool deleted and written again, a plan and a directive edited), the index
/// reports what a fresh whole check of the project reports.
#[test]
fn every_edit_is_reported_as_a_whole_check_reports_it() {
    let dir = shipped_project();
    let root = dir.path();
    let project = Project::at(root).unwrap();
    let mut index = ProjectIndex::build(&project);
    let whole = |label: &str, index: &ProjectIndex| {
        let fresh = check_project(root, &project.limits).unwrap();
        assert_eq!(shown(&index.report()), shown(&fresh), "after {label}");
    };
    whole("opening", &index);
    let words = fs::read_to_string(root.join("tools/examples/words.yaml")).unwrap();
    let edits: Vec<(&str, &str, Change)> = vec![
        (
            "a tool's parameter renamed",
            "tools/examples/echo.yaml",
            Change::Replace("    message:", "    msg:"),
        ),
        (
            "a runtime's parameter renamed",
            "tools/runtimes/python.yaml",
            Change::Replace("{script}", "{scrpt}"),
        ),
        (
            "a tool made another's executor",
            "tools/examples/greet.yaml",
            Change::Replace("executor: runtimes/subprocess", "executor: examples/echo"),
        ),
        (
            "a parameter a graph's action passes removed",
            "tools/examples/split.yaml",
            Change::Replace("    text:", "    txt:"),
        ),
        (
            "a tool's file broken",
            "tools/examples/stats.yaml",
            Change::Replace("config:", "config: [\n"),
        ),
        (
            "a tool's file mended",
            "tools/examples/stats.yaml",
            Change::Replace("config: [\n", "config:"),
        ),
        (
            "the runtime mended",
            "tools/runtimes/python.yaml",
            Change::Replace("{scrpt}", "{script}"),
        ),
        (
            "a tool a graph and a directive call deleted",
            "tools/examples/words.yaml",
            Change::Delete,
        ),
        (
            "the tool written again",
            "tools/examples/words.yaml",
            Change::Write(words),
        ),
        (
            "a plan's step calls an unknown tool",
            "plans/meeting.yaml",
            Change::Replace("tool: plans/reply", "tool: plans/rply"),
        ),
        (
            "a directive's input misspelt",
            "directives/greet.md",
            Change::Replace("{input:name}", "{input:nme}"),
        ),
        (
            "the tool's parameter named back",
            "tools/examples/echo.yaml",
            Change::Replace("    msg:", "    message:"),
        ),
    ];
    for (label, file, change) in edits {
        let edit = match change {
            Change::Replace(from, to) => replaced(root, file, from, to),
            Change::Delete => Edit { file, text: None },
            Change::Write(text) => Edit {
                file,
                text: Some(text),
            },
        };
        apply(root, &project, &mut index, edit);
        whole(label, &index);
    }
}

/// An edit of a tool checks that tool and what calls it; an edit of a runtime, every tool
/// on it; a directive's, that directive alone; a deleted file, everything.
#[test]
fn an_edit_checks_again_the_edited_file_and_the_files_whose_verdict_depends_on_it() {
    let dir = shipped_project();
    let root = dir.path();
    let project = Project::at(root).unwrap();
    let mut index = ProjectIndex::build(&project);
    let echo = replaced(root, "tools/examples/echo.yaml", "    message:", "    msg:");
    assert_eq!(
        apply(root, &project, &mut index, echo),
        [
            "directives/greet.md",
            "directives/release_check.md",
            "tools/examples/echo.yaml"
        ]
    );
    let split = replaced(root, "tools/examples/split.yaml", "    text:", "    txt:");
    assert_eq!(
        apply(root, &project, &mut index, split),
        ["tools/examples/split.yaml", "tools/graphs/words.yaml"]
    );
    let node = replaced(
        root,
        "tools/runtimes/node.yaml",
        "version:",
        "# edited\nversion:",
    );
    let on_node: Vec<String> = apply(root, &project, &mut index, node);
    assert!(on_node.contains(&"tools/examples/words.yaml".to_string()));
    assert!(on_node.contains(&"tools/graphs/words.yaml".to_string()));
    assert!(on_node.contains(&"directives/release_check.md".to_string()));
    assert!(!on_node.contains(&"tools/examples/echo.yaml".to_string()));
    let greet = replaced(root, "directives/greet.md", "{input:name}", "{input:nme}");
    assert_eq!(
        apply(root, &project, &mut index, greet),
        ["directives/greet.md"]
    );
    let gone = Edit {
        file: "tools/examples/count.yaml",
        text: None,
    };
    let everything = apply(root, &project, &mut index, gone);
    for file in [
        "tools/examples/echo.yaml",
        "directives/greet.md",
        "plans/meeting.yaml",
    ] {
        assert!(everything.contains(&file.to_string()), "{file}");
    }
}
