//! Running tools (`strata-exec`).
//!
//! * `exec_run_true`: the whole chain for a tool whose command is `true` — find the tool, load
//!   and merge the chain (tool → `runtimes/subprocess`), validate parameters, read the
//!   process environment, render stages 3–6, resolve the program, spawn in a new process
//!   group with piped stdout/stderr, wait, reap — against spawning `true` directly with
//!   `std::process::Command` (`.output()`, which also pipes stdout/stderr), side by side.
//! * `exec_step_prepare`: what a graph or plan step pays before its spawn — validate the
//!   parameters, resolve the environment, render stages 3–6 — with the project's cache of
//!   compiled tools warm (every step after the first), against the same with a cold cache
//!   (every step loading, merging and compiling the chain again, as before the cache).
//! * `cli_run_true`: `strata run bench/true` as a user runs it — the release binary next to
//!   this one, started in a real project — against starting `/bin/true` the same way (both
//!   with standard input and output on `/dev/null`, waited for); `cli_startup` is the
//!   binary's own start (`strata --version`) against the same peer, the part of the first
//!   ratio no work of `run` can remove.
//! * `cli_run_batch`: one call of `bench/true` through a resident `strata run --batch` (the
//!   request written, its reply read) against spawning `true` from the bench the way strata
//!   spawns it (output piped), side by side.
//! * `exec_load_50_tools`: loading and compiling a generated 50-tool `tools/` tree (every
//!   tool's chain loaded, merged, and its config compiled through stages 3–6), against only
//!   reading and parsing the same 50 files with `yaml-rust2`'s loader.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use strata_app::App;
use strata_pipeline::Template;
use strata_project::{
    stage_chain, take_literals, CallerParams, ExecOptions, Invocation, Project, ToolChain,
};
use strata_tools::CallOptions;

use crate::harness::{compare, strata_binary, Settings};
use crate::report::Report;

/// The shipped primitive, as every generated project's `tools/runtimes/subprocess.yaml`.
pub const PRIMITIVE: &str = include_str!("../../../../tools/runtimes/subprocess.yaml");

/// Number of tool files in the generated tree (runtimes included).
pub const TREE_TOOLS: usize = 50;

/// Writes `text` to `rel` under `root`, creating directories.
pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A project holding the primitive and `bench/true` (`command: true`), its files written an
/// hour ago as a project's files are (a file written within the file system's timestamp
/// granularity is read again to be sure of its content; see `strata-project`'s cache).
pub fn true_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    write(dir.path(), "tools/runtimes/subprocess.yaml", PRIMITIVE);
    write(
        dir.path(),
        "tools/bench/true.yaml",
        "description: does nothing\nexecutor: runtimes/subprocess\nconfig:\n  command: \"true\"\n",
    );
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for rel in ["tools/runtimes/subprocess.yaml", "tools/bench/true.yaml"] {
        std::fs::File::options()
            .write(true)
            .open(dir.path().join(rel))
            .and_then(|f| f.set_modified(hour_ago))
            .expect("set the time");
    }
    dir
}

/// A project of [`TREE_TOOLS`] files: the primitive, two runtimes, and tools that use
/// parameters, `env_config`, config keys, `{literal:}` and every reserved key.
pub fn tree_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    write(root, "tools/runtimes/subprocess.yaml", PRIMITIVE);
    write(
        root,
        "tools/runtimes/script.yaml",
        "description: runs a script\nexecutor: runtimes/subprocess\n\
         env_config:\n  env:\n    SCRIPT_MODE: \"${SCRIPT_MODE:-strict}\"\n\
         config:\n  command: \"${SHELL_BIN:-sh}\"\n  args: [\"{tool_dir}/{script}\"]\n  input_data: \"{params_json}\"\n",
    );
    write(
        root,
        "tools/runtimes/wrapped.yaml",
        "description: a runtime on a runtime\nexecutor: runtimes/script\n\
         config:\n  env: {WRAPPED: \"1\", WORKDIR: \"{project_path}/work\"}\n  timeout: 30\n",
    );
    for i in 0..TREE_TOOLS - 3 {
        let executor = match i % 3 {
            0 => "runtimes/subprocess",
            1 => "runtimes/script",
            _ => "runtimes/wrapped",
        };
        let text = format!(
            "description: generated tool {i}\nversion: \"1.0.{i}\"\nexecutor: {executor}\n\
             parameters:\n  type: object\n  properties:\n    name: {{type: string, default: n{i}}}\n    \
             count: {{type: integer, default: {i}, minimum: 0}}\n    \
             mode: {{enum: [fast, slow], default: fast}}\n\
             env_config:\n  env:\n    TOOL_{i}: \"${{HOME}}/.cache/t{i}\"\n\
             config:\n  script: scripts/t{i}.sh\n  label: \"tool {i} for {{name}}\"\n  \
             command: \"${{TOOL_CMD:-printf}}\"\n  \
             args: [\"%s %s\\n\", \"{{label}}\", \"--count={{count}}\", {{literal: \"awk '{{print $1}}'\"}}, \"${{LANG:-C}}\"]\n  \
             cwd: \"{{project_path}}\"\n  env: {{MODE: \"{{mode}}\", PARAMS: \"{{params_json}}\"}}\n  timeout: {}\n",
            10 + i
        );
        write(
            root,
            &format!("tools/gen/g{:02}/tool{i}.yaml", i % 5),
            &text,
        );
    }
    dir
}

/// Every tool file under `dir`.
fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

/// Loads every tool of the project and compiles its merged config through stages 3–6.
pub fn load_and_compile(project: &Project) -> usize {
    let mut compiled = 0;
    for id in project.tool_ids() {
        let chain = ToolChain::load(project, &id).expect("loads");
        let mut config = Value::Object(chain.merged_config());
        take_literals(&mut config).expect("literals");
        let template =
            Template::compile(&config, &stage_chain(), &project.limits).expect("compiles");
        black_box(&template);
        compiled += 1;
    }
    compiled
}

/// `exec_run_true`: the full chain running `true` as every front-end runs a tool (the gate,
/// stages 3–6, the spawn), against `std::process::Command`.
pub fn run_chain(settings: &Settings, report: &mut Report) {
    let dir = true_project();
    let app = App::at(dir.path()).expect("a project");
    let caller = CallerParams::default();
    let opts = ExecOptions::default();
    let call = CallOptions::default();
    let run = app
        .run_tool("bench/true", &caller, &opts, &call)
        .expect("runs");
    assert!(run.result.success, "`true` failed: {:?}", run.result);
    let (strata, peer) = compare(
        settings,
        || {
            app.run_tool("bench/true", &caller, &opts, &call)
                .expect("runs")
                .result
        },
        || {
            Command::new("true")
                .stdin(Stdio::null())
                .output()
                .expect("spawns")
        },
    );
    report.compare("exec_run_true", &strata, "std_command", &peer);
}

/// One run of `program args…` in `dir`, every standard stream on `/dev/null`; panics unless
/// it succeeds.
fn run_process(program: &Path, args: &[&str], dir: &Path) {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawns");
    assert!(status.success(), "{} {args:?} failed", program.display());
}

/// `cli_run_true` and `cli_startup`: the binary against starting `/bin/true` directly.
pub fn run_cli(settings: &Settings, report: &mut Report) {
    let Some(strata) = strata_binary() else {
        report
            .note("cli_run_true skipped: build the binary first (cargo build --release -p strata)");
        return;
    };
    let dir = true_project();
    let root = dir.path();
    let truth = Path::new("/bin/true");
    for (name, args) in [
        ("cli_run_true", &["run", "bench/true"][..]),
        ("cli_startup", &["--version"][..]),
    ] {
        let (ours, peer) = compare(
            settings,
            || run_process(&strata, args, root),
            || run_process(truth, &[], root),
        );
        report.compare(name, &ours, "bin_true", &peer);
    }
    run_batch_calls(settings, report, &strata, root);
}

/// `cli_run_batch`: one call through a resident `strata run --batch` (the request written,
/// the reply read back) against spawning `true` from here as strata spawns it (standard
/// output and error piped and read, `.output()`), side by side.
fn run_batch_calls(settings: &Settings, report: &mut Report, strata: &Path, root: &Path) {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(strata)
        .args(["run", "--batch"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("strata runs");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let (ours, peer) = compare(
        settings,
        || {
            input
                .write_all(b"{\"tool\": \"bench/true\"}\n")
                .and_then(|()| input.flush())
                .expect("strata reads");
            line.clear();
            output.read_line(&mut line).expect("a reply");
            assert!(
                line.starts_with(r#"{"ok":true,"record":{"id":"bench/true","status":"completed""#),
                "{line}"
            );
        },
        || {
            let out = Command::new("true")
                .stdin(Stdio::null())
                .output()
                .expect("spawns");
            assert!(out.status.success());
        },
    );
    drop(input);
    let status = child.wait().expect("strata ends");
    assert!(status.success(), "strata run --batch failed");
    report.compare("cli_run_batch", &ours, "spawn_true", &peer);
}

/// `exec_step_prepare`: one step's work before the spawn, cache warm against cache cold.
pub fn run_step_prepare(settings: &Settings, report: &mut Report) {
    let dir = true_project();
    let warm = Project::at(dir.path()).expect("a project");
    let caller = CallerParams::default();
    let opts = ExecOptions::default();
    let prepare = |project: &Project| {
        Invocation::new(project, "bench/true", &caller, &opts)
            .and_then(|call| call.prepare())
            .expect("prepares")
    };
    prepare(&warm);
    let (strata, peer) = compare(
        settings,
        || prepare(&warm),
        || prepare(&Project::at(dir.path()).expect("a project")),
    );
    report.compare("exec_step_prepare", &strata, "uncached", &peer);
}

/// `exec_load_50_tools`: load and compile a 50-tool tree, against parsing its files.
pub fn run_tree(settings: &Settings, report: &mut Report) {
    let dir = tree_project();
    let project = Project::at(dir.path()).expect("a project");
    let mut files = Vec::new();
    yaml_files(&dir.path().join("tools"), &mut files);
    assert_eq!(files.len(), TREE_TOOLS);
    assert_eq!(load_and_compile(&project), TREE_TOOLS);
    let (strata, peer) = compare(
        settings,
        || load_and_compile(&project),
        || {
            files
                .iter()
                .map(|f| {
                    let text = std::fs::read_to_string(f).expect("readable");
                    yaml_rust2::YamlLoader::load_from_str(&text).expect("parses")
                })
                .count()
        },
    );
    report.compare("exec_load_50_tools", &strata, "yaml_rust2_read", &peer);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_tree_loads_and_compiles() {
        let dir = tree_project();
        let project = Project::at(dir.path()).unwrap();
        assert_eq!(project.tool_ids().len(), TREE_TOOLS);
        assert_eq!(load_and_compile(&project), TREE_TOOLS);
    }
}
