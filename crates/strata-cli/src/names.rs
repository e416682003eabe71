//! The forms every command accepts for what it names, alike everywhere (docs/tools.md,
//! "Naming tools, graphs and plans"):
//!
//! * a tool or a graph: its id (`examples/echo`, `graphs/words`), its file
//!   (`tools/graphs/words.yaml`), or — when no tool has that id — a graph's name under
//!   `graphs/` (`words`);
//! * a plan: its file (`plans/one.yaml`), the file without its extension (`plans/one`), or
//!   its name under `plans/` (`one`).

use std::path::{Path, PathBuf};

use strata_app::App;
use strata_core::Error;

use crate::run_args::looks_like_path;

/// The tool id `name` names in `project` (see the module's forms). An id no tool has is
/// returned as it is: the command's lookup says it is unknown, with its did-you-mean.
pub(crate) fn tool_id(project: &App, name: &str) -> Result<String, Error> {
    if looks_like_path(name) {
        return project.id_of_path(Path::new(name));
    }
    Ok(project.tool_named(name))
}

/// The file of the plan `name` names (see the module's forms), looked up from the current
/// directory: `name` itself when it exists (or is `-`), else the first of `name.yaml`,
/// `name.yml`, `name.json`, `plans/name.yaml`, `plans/name.yml`, `plans/name.json` that
/// exists, else the same from the project's root and under its `plans/` (from any folder of
/// the project), else `name` (whose reading then says it cannot be read).
pub(crate) fn plan_file(name: &str) -> String {
    if name == "-" || Path::new(name).exists() {
        return name.to_string();
    }
    let mut stems = vec![PathBuf::from(name), Path::new("plans").join(name)];
    if let Some(root) = strata_app::Project::find_root(Path::new(".")) {
        stems.extend([root.join(name), root.join("plans").join(name)]);
    }
    stems
        .iter()
        .flat_map(|stem| {
            ["yaml", "yml", "json"].map(|ext| {
                let mut file = stem.clone().into_os_string();
                file.push(".");
                file.push(ext);
                PathBuf::from(file)
            })
        })
        .find(|file| file.is_file())
        .map_or_else(|| name.to_string(), |f| f.display().to_string())
}

/// The file the input of `strata export argo` names: an existing file as it is, else a graph
/// (or tool) of the project by id or name, else a plan by its forms.
pub(crate) fn export_input(project: &App, name: &Path) -> PathBuf {
    if name.exists() {
        return name.to_path_buf();
    }
    let text = name.to_string_lossy();
    if let Some(file) = tool_id(project, &text)
        .ok()
        .and_then(|id| project.tool_path(&id))
    {
        return file;
    }
    PathBuf::from(plan_file(&text))
}
