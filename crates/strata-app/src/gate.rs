//! The one pre-run gate: what `strata check` rejects does not run, whichever front-end asks.
//!
//! A tool's verdict is remembered with the compiled tool it was given for: while the tool
//! cache hands back the same compiled tool (no file of its chain changed, which the cache
//! tells from each file's identity), the verdict stands and the gate costs a map lookup.
//!
//! A tool admitted is also remembered on disk, in the project's state directory
//! (`.strata/gate/`, see [`crate::gate_cache`]), under a key of every input of its check and
//! authenticated with a key of the user's that the project never holds, so the next process
//! that runs an unchanged tool does not check it again — and no file written there by anyone
//! else turns a rejection into a run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use strata_check::{check_file, sort_diagnostics, Severity, Target};
use strata_project::{CompiledTool, Project};

use crate::failure::Refusal;

/// The gate's memory: per tool id, the compiled tool it judged and its verdict.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    verdicts: Arc<Mutex<HashMap<String, Verdict>>>,
}

#[derive(Debug, Clone)]
struct Verdict {
    tool: Arc<CompiledTool>,
    refusal: Option<Arc<Refusal>>,
}

impl Gate {
    /// Checks `target` (named `shown` in the refusal) unless its verdict is remembered. For
    /// a tool that compiles, the compiled tool the verdict is about is returned, so the call
    /// that follows uses it without validating its files again.
    pub fn admit(
        &self,
        project: &Project,
        target: Target<'_>,
        shown: &str,
    ) -> Result<Option<Arc<CompiledTool>>, Refusal> {
        let Target::Tool(id) = target else {
            return judge(project, target, shown).map(|()| None);
        };
        // No such tool: nothing can run, and the call says so with its did-you-mean.
        if project.tool_path(id).is_none() {
            return Ok(None);
        }
        // A tool that does not compile, or a graph, is judged every time (the call reports
        // the first itself; a graph runs once per walk).
        let Ok(tool) = project.compiled(id) else {
            return judge(project, target, shown).map(|()| None);
        };
        if let Some(v) = self.lock().get(id).filter(|v| Arc::ptr_eq(&v.tool, &tool)) {
            return match &v.refusal {
                Some(r) => Err((**r).clone()),
                None => Ok(Some(tool)),
            };
        }
        let key = crate::gate_cache::key(project, id, &tool);
        let remembered = key
            .as_ref()
            .is_some_and(|key| crate::gate_cache::admitted(project, key));
        let verdict = if remembered {
            Ok(())
        } else {
            judge(project, target, shown)
        };
        if let (Ok(()), false, Some(key)) = (&verdict, remembered, &key) {
            crate::gate_cache::remember(project, key);
        }
        let refusal = verdict.as_ref().err().cloned().map(Arc::new);
        self.lock().insert(
            id.to_string(),
            Verdict {
                tool: Arc::clone(&tool),
                refusal,
            },
        );
        verdict.map(|()| Some(tool))
    }

    /// Admits every tool of `ids`, each as [`Gate::admit`] admits one (its verdict
    /// remembered): one refusal, named `shown`, listing the errors of every tool refused.
    pub fn admit_all(&self, project: &Project, ids: &[String], shown: &str) -> Result<(), Refusal> {
        let mut diagnostics = Vec::new();
        for id in ids {
            if let Err(refusal) = self.admit(project, Target::Tool(id), id) {
                for d in refusal.diagnostics {
                    if !diagnostics.contains(&d) {
                        diagnostics.push(d);
                    }
                }
            }
        }
        if diagnostics.is_empty() {
            return Ok(());
        }
        sort_diagnostics(&mut diagnostics);
        Err(Refusal::new(shown, diagnostics))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Verdict>> {
        self.verdicts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs the check of `target`: a refusal listing every error it finds, whatever their codes
/// (the call would not report them all itself: an error in a branch the call does not take
/// is never met when it runs).
fn judge(project: &Project, target: Target<'_>, shown: &str) -> Result<(), Refusal> {
    let report = check_file(project, target);
    if report.count(Severity::Error) == 0 {
        return Ok(());
    }
    Err(Refusal::new(shown, report.diagnostics))
}
