//! Step states and partial resolution (SPEC §5.6, §5.7): given the records known so far and
//! the user values, what each step of a plan is — completed, failed, skipped, waiting,
//! blocked or ready (with its resolved arguments) — plus the levels and the missing values.

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind};
use strata_tools::StepStatus;

use crate::plan::Plan;
use crate::resolve::{resolve_within, Records, Sources};
use crate::PLAN;

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// It ran and succeeded.
    Completed,
    /// It ran and failed, or its arguments could not be resolved.
    Failed,
    /// A dependency failed or was skipped.
    Skipped,
    /// Its arguments use user values that were not supplied.
    Waiting,
    /// A dependency has not completed yet.
    Blocked,
    /// It may run now.
    Ready,
}

impl State {
    /// The lower-case name used in reports and replies.
    pub fn name(self) -> &'static str {
        match self {
            State::Completed => "completed",
            State::Failed => "failed",
            State::Skipped => "skipped",
            State::Waiting => "waiting",
            State::Blocked => "blocked",
            State::Ready => "ready",
        }
    }
}

/// One step as assessed.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessed {
    /// Its state.
    pub state: State,
    /// The resolved arguments, for a ready step.
    pub arguments: Option<Value>,
    /// For a waiting step the user values it lacks; for a blocked one the steps it waits
    /// for.
    pub waiting_for: Vec<String>,
    /// Why it failed or was skipped, when strata knows.
    pub error: Option<Error>,
}

/// A whole plan as assessed.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// Each step, in plan order.
    pub steps: Vec<Assessed>,
    /// Every user value a waiting step lacks, in plan order, each once.
    pub missing_values: Vec<String>,
}

fn state_of(status: StepStatus) -> State {
    match status {
        StepStatus::Completed => State::Completed,
        StepStatus::Failed => State::Failed,
        StepStatus::Skipped => State::Skipped,
    }
}

/// The reason a step is skipped: its first dependency that failed or was skipped.
pub fn skip_reason(dep: &str, state: State) -> String {
    match state {
        State::Failed => format!("step `{dep}` failed"),
        _ => format!("step `{dep}` was skipped"),
    }
}

/// Assesses every step of a linked plan against the records known so far (failed ids have
/// failed records) and the user values.
pub fn assess(plan: &Plan, records: &dyn Records, values: &Map<String, Value>) -> Assessment {
    let sources = Sources { records, values };
    let mut steps: Vec<Option<Assessed>> = vec![None; plan.steps.len()];
    for i in plan.levels().into_iter().flatten() {
        let step = &plan.steps[i];
        let done = |state, error| Assessed {
            state,
            arguments: None,
            waiting_for: Vec::new(),
            error,
        };
        if let Some(record) = records.record(&step.id) {
            steps[i] = Some(done(state_of(record.status), None));
            continue;
        }
        let state = |d: usize| steps[d].as_ref().map_or(State::Blocked, |a| a.state);
        if let Some(&d) = plan.deps[i]
            .iter()
            .find(|&&d| matches!(state(d), State::Failed | State::Skipped))
        {
            let reason = skip_reason(&plan.steps[d].id, state(d));
            steps[i] = Some(done(
                State::Skipped,
                Some(Error::new(PLAN, ErrorKind::RunState, reason)),
            ));
            continue;
        }
        let missing: Vec<String> = step
            .args
            .value_names()
            .into_iter()
            .filter(|n| !values.contains_key(*n))
            .map(str::to_string)
            .collect();
        let blocked: Vec<String> = plan.deps[i]
            .iter()
            .filter(|&&d| state(d) != State::Completed)
            .map(|&d| plan.steps[d].id.clone())
            .collect();
        steps[i] = Some(if !missing.is_empty() {
            Assessed {
                waiting_for: missing,
                ..done(State::Waiting, None)
            }
        } else if !blocked.is_empty() {
            Assessed {
                waiting_for: blocked,
                ..done(State::Blocked, None)
            }
        } else {
            match resolve_within(step, &sources, &plan.limits) {
                Ok(args) if !args.is_object() => {
                    done(State::Failed, Some(crate::resolve::not_a_map(step, &args)))
                }
                Ok(args) => Assessed {
                    arguments: Some(args),
                    ..done(State::Ready, None)
                },
                Err(e) => done(State::Failed, Some(e)),
            }
        });
    }
    let steps: Vec<Assessed> = steps.into_iter().flatten().collect();
    let mut missing_values: Vec<String> = Vec::new();
    for a in steps.iter().filter(|a| a.state == State::Waiting) {
        for name in &a.waiting_for {
            if !missing_values.contains(name) {
                missing_values.push(name.clone());
            }
        }
    }
    Assessment {
        steps,
        missing_values,
    }
}
