//! The one pre-run gate: what `strata check` rejects does not run, whichever front-end asks.
//!
//! A tool's verdict is remembered with the compiled tool it was given for: while the tool
//! cache hands back the same compiled tool (no file of its chain changed, which the cache
//! tells from each file's identity), the verdict stands and the gate costs a map lookup.
//!
//! A tool admitted is also remembered on disk, in the project's state directory
//! (`.strata/gate/`, see [`crate::gate_cache`]), under a key of every input of its check, so
//! the next process that runs an unchanged tool does not check it again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use strata_check::{check_file, Code, Severity, Target};
use strata_project::{CompiledTool, Project};

use crate::failure::Refusal;

/// The errors a tool call reports itself, as it always has: files that do not load, broken
/// executor chains, unknown tools, parameter cycles and chains past the limit. With one of
/// them the gate lets the call go ahead, to fail on it with its own error.
const REPORTED_BY_THE_CALL: [Code; 6] = [
    Code::Syntax,
    Code::Load,
    Code::Chain,
    Code::UnknownTool,
    Code::ParamCycle,
    Code::ParamChain,
];

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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Verdict>> {
        self.verdicts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs the check of `target`: a refusal when it finds errors the call would not report
/// itself (an unknown parameter, input, step or namespace, parameters that cannot match the
/// tool, a tool called later that is broken).
fn judge(project: &Project, target: Target<'_>, shown: &str) -> Result<(), Refusal> {
    let report = check_file(project, target);
    let errors = report.count(Severity::Error);
    let reported_by_call = matches!(target, Target::Tool(_))
        && report
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && REPORTED_BY_THE_CALL.contains(&d.code));
    if errors == 0 || reported_by_call {
        return Ok(());
    }
    Err(Refusal::new(shown, report.diagnostics))
}
