//! Projects the application layer's tests run on: written in a scratch directory, with the
//! subprocess primitive, and opened as the front-ends open them.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

use strata_app::App;

/// The subprocess primitive every chain ends at.
pub const PRIMITIVE: &str = "config: {args: []}\n";

/// A tool with an L007 error (`${tool_dir}`, which layer C never reads in a tool) and a
/// parameter cycle inside an env default that is never taken while HOME is set: the call
/// never meets the cycle, only the check finds it. It would mark the project if it ran.
pub const TWO_ERRORS: &str = "executor: runtimes/subprocess\nconfig:\n  b: \"${HOME:-{b}}\"\n  command: touch\n  args: [\"{project_path}/RAN\", \"${tool_dir}/data\", \"{b}\"]\n";

/// A tool that prints its `text` parameter as given.
pub const ECHO: &str = "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    text: {type: string}\nconfig: {command: printf, args: [\"%s\", \"{text}\"]}\n";

/// A scratch project holding `files` (path, text), with the primitive.
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tools/runtimes/subprocess.yaml", PRIMITIVE);
    for (rel, text) in files {
        write(dir.path(), rel, text);
    }
    dir
}

/// Writes `text` to `rel` under `root`, making its directories.
pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The project at `root`, opened.
pub fn app(root: &Path) -> App {
    App::at(root).unwrap()
}
