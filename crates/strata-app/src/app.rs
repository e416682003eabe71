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
    /// This application's own number (what it admitted is its own: `AdmittedPlan`).
    id: u64,
}

impl App {
    /// The project of a command: `dir` when given; else, for a command that reads the file
    /// `near`, the project of the current directory when the file lies inside it, or the
    /// nearest ancestor holding `tools/` of the file's folder when it does not
    /// ([`Project::discover_for`]); else the nearest ancestor holding `tools/` of the
    /// current directory.
    pub fn open(dir: Option<&Path>, near: Option<&Path>) -> Result<App, Error> {
        let project = match (dir, near) {
            (Some(dir), _) => Project::at(dir)?,
            (None, Some(file)) => Project::discover_for(file)?,
            (None, None) => Project::discover(Path::new("."))?,
        };
        Ok(App::of(project))
    }

    /// The project rooted at `root`, with its settings.
    pub fn at(root: &Path) -> Result<App, Error> {
        Project::at(root).map(App::of)
    }

    /// An application over a project already opened.
    pub fn of(project: Project) -> App {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        App {
            project,
            gate: Gate::default(),
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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

impl App {
    /// This application's own number, unique in the process.
    pub(crate) fn id(&self) -> u64 {
        self.id
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
        Err(e) if e.layer() == SETTINGS => Err(e),
        Err(_) => Settings::from_env(&|name| std::env::var(name).ok()),
    }
}
