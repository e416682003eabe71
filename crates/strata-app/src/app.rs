//! Opening a project: where it is, its settings and limits.

use std::path::Path;

use strata_core::Error;
use strata_project::{settings::SETTINGS, Project, Settings};

use crate::gate::Gate;

/// An opened project: the root, the settings (with their sources), the limits, the cache of
/// compiled tools and the gate's memory of what it admitted. Clones share the caches.
#[derive(Debug, Clone)]
pub struct App {
    project: Project,
    gate: Gate,
}

impl App {
    /// The project of a command: `dir` when given, else the nearest ancestor holding `tools/`
    /// of the directory of `near` (a file the command reads), else of the current directory.
    pub fn open(dir: Option<&Path>, near: Option<&Path>) -> Result<App, Error> {
        let start = near
            .and_then(Path::parent)
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let project = match dir {
            Some(dir) => Project::at(dir)?,
            None => Project::discover(start)?,
        };
        Ok(App::of(project))
    }

    /// The project rooted at `root`, with its settings.
    pub fn at(root: &Path) -> Result<App, Error> {
        Project::at(root).map(App::of)
    }

    /// An application over a project already opened.
    pub fn of(project: Project) -> App {
        App {
            project,
            gate: Gate::default(),
        }
    }

    /// The project.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.project.settings
    }

    /// Every tool, runtime, directive, hook, plan and prompt of the project, checked.
    pub fn check(&self) -> Result<strata_check::Report, Error> {
        strata_check::check_project(&self.project.root, &self.project.limits)
    }

    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }
}

impl std::ops::Deref for App {
    type Target = Project;

    fn deref(&self) -> &Project {
        &self.project
    }
}

/// The settings of the project around the current directory, when there is one (a broken
/// `strata.yaml` is still an error); outside a project, the `STRATA_*` variables over the
/// defaults. Commands that need no project (`render`, `plan resolve`) take their limits and
/// strictness from here.
pub fn ambient_settings() -> Result<Settings, Error> {
    match Project::discover(Path::new(".")) {
        Ok(p) => Ok((*p.settings).clone()),
        Err(e) if e.layer == SETTINGS => Err(e),
        Err(_) => Settings::from_env(&|name| std::env::var(name).ok()),
    }
}
