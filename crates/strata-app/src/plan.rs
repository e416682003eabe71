//! Plans through the application layer: the checks a plan passes before any step runs (its
//! tools exist, its constant arguments can match their schemas, the gate admits every tool
//! it calls), a dry run, and one step given the records of the steps it depends on — what
//! every task of an exported workflow runs. Whole runs are recorded (`plan_record`).

use std::collections::HashMap;

use serde_json::{Map, Value};
use strata_core::secret_marks::MarkKey;
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, Layer};
use strata_doc::Document;
use strata_plans::{
    assess, check_tools, resolve_parameters_within, skip_reason, Assessment, Plan, RecordMap,
    Sources, State,
};
use strata_project::ExecOptions;
use strata_tools::{validate, CallOptions, StepRecord, StepStatus, ToolRunner};

use crate::{App, Failure};

/// The plan a step to run on its own belongs to.
#[derive(Debug, Clone, Copy)]
pub enum StepPlan<'a> {
    /// A plan document: errors are located in it (as a run of the document locates them).
    Document(&'a Document),
    /// A plan known only as data — a resumed run's, or one given to Python as data — named
    /// `name`: errors are not located, as a run of such a plan leaves them.
    Data {
        /// The plan's name in messages.
        name: &'a str,
        /// The plan (a list of steps, or `{"steps": [...]}`).
        value: &'a Value,
    },
    /// A plan loaded and admitted once ([`App::admit_step_plan`]): the application that
    /// admitted it neither loads nor checks it again; another one does both.
    Admitted(&'a AdmittedPlan),
}

/// A plan loaded and admitted once by an application, for the many steps of a run that
/// run on their own there (a worker runs each step of a run through it): each step skips
/// loading the plan and the checks of [`App::plan_step`], which the whole plan passed.
#[derive(Debug)]
pub struct AdmittedPlan {
    plan: Plan,
    name: String,
    doc: Option<Document>,
    /// The application that admitted it.
    by: u64,
}

impl AdmittedPlan {
    /// The plan's name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl<'a> StepPlan<'a> {
    /// The plan, linked; every error of the plan as a failure.
    fn load(self) -> Result<Plan, Failure> {
        let loaded = match self {
            StepPlan::Document(doc) => Plan::load(doc),
            StepPlan::Data { value, .. } => Plan::from_value(value, &FieldPath::root()),
            StepPlan::Admitted(admitted) => Ok(admitted.plan.clone()),
        };
        loaded.map_err(|errors| self.failure(errors))
    }

    /// `errors` (already located, for a document) as the failure of a refused step.
    fn failure(self, errors: Vec<Error>) -> Failure {
        let doc = match self {
            StepPlan::Document(doc) => doc.clone(),
            StepPlan::Data { name, .. } => Document::unparsed(name, String::new()),
            StepPlan::Admitted(admitted) => match &admitted.doc {
                Some(doc) => doc.clone(),
                None => Document::unparsed(&admitted.name, String::new()),
            },
        };
        Failure::Document {
            errors,
            doc: Box::new(doc),
        }
    }

    /// An error about a field of the plan, located in its document (when it has one).
    fn locate(self, e: Error) -> Error {
        match self {
            StepPlan::Document(doc) => doc.locate_error(e),
            StepPlan::Data { .. } => e,
            StepPlan::Admitted(admitted) => match &admitted.doc {
                Some(doc) => doc.locate_error(e),
                None => e,
            },
        }
    }

    /// The plan's name in messages.
    fn name(self) -> &'a str {
        match self {
            StepPlan::Document(doc) => &doc.name,
            StepPlan::Data { name, .. } => name,
            StepPlan::Admitted(admitted) => &admitted.name,
        }
    }
}

/// One step of a plan to run on its own.
pub struct StepRequest<'a> {
    /// The plan.
    pub plan: StepPlan<'a>,
    /// The id of the step.
    pub step: &'a str,
    /// The user values.
    pub values: &'a Map<String, Value>,
    /// Strictness and environment of the tool call.
    pub options: ExecOptions,
    /// Options of the tool call (a timeout cap).
    pub call: CallOptions,
    /// The key the run's secret markers are minted under (see [`crate::marks`]): markers of
    /// the records under it are restored for the tool, and what it prints is marked under it.
    pub marks: MarkKey,
}

/// What one step came to.
#[derive(Debug)]
pub struct StepOutcome {
    /// The tool the step calls.
    pub tool: String,
    /// Its record (it ran, completed or failed, or was skipped), or the user values it waits
    /// for (in order, once each; nothing ran).
    pub state: Result<StepRecord, Vec<String>>,
}

impl App {
    /// The plan of `doc` (every error of the document), its references held to the
    /// project's limits.
    pub fn load_plan(&self, doc: &Document) -> Result<Plan, Vec<Error>> {
        Plan::load_within(doc, &self.limits)
    }

    /// An empty plan held to the project's limits, for steps added as they arrive.
    pub fn new_plan(&self) -> Plan {
        let mut plan = Plan::default();
        plan.limits = self.limits.clone();
        plan
    }

    /// The checks of a whole plan before anything runs: the gate over every tool the plan
    /// calls (one refusal listing every error of every tool the check rejects), then every
    /// step's tool exists and its constant arguments can match its parameter schema (all
    /// such errors, located in `doc`).
    pub(crate) fn admit_plan(
        &self,
        plan: &Plan,
        shown: &str,
        doc: Option<&Document>,
    ) -> Result<(), Failure> {
        self.admit_tools(&called_tools(plan), shown)?;
        let runner = self.runner(ExecOptions::default());
        let errors = check_tools(plan, &runner);
        if !errors.is_empty() {
            return Err(match doc {
                Some(doc) => Failure::Document {
                    errors: errors.into_iter().map(|e| doc.locate_error(e)).collect(),
                    doc: Box::new(doc.clone()),
                },
                None => Failure::Document {
                    errors,
                    doc: Box::new(Document::unparsed(shown, String::new())),
                },
            });
        }
        Ok(())
    }

    /// A plan's dry run: after `App::admit_plan`, every step's state with nothing run, the
    /// ready steps' arguments resolved (with `values`) and validated against their tools'
    /// schemas (a step whose arguments do not match is failed, with the error).
    pub fn dry_run_plan(
        &self,
        plan: &Plan,
        shown: &str,
        doc: Option<&Document>,
        values: &Map<String, Value>,
    ) -> Result<Assessment, Failure> {
        self.admit_plan(plan, shown, doc)?;
        let runner = self.runner(ExecOptions::default());
        let mut assessment = assess(plan, &HashMap::new(), values);
        for (step, a) in plan.steps.iter().zip(assessment.steps.iter_mut()) {
            let Some(Value::Object(given)) = &a.arguments else {
                continue;
            };
            if let Err(e) = validate(&step.tool, runner.parameters(&step.tool).as_ref(), given) {
                a.state = State::Failed;
                a.arguments = None;
                a.error = Some(e);
            }
        }
        Ok(assessment)
    }

    /// The plan `given`, loaded and refused as `strata plan run` refuses a plan (its tools
    /// through the gate, every step's tool and constant arguments): what
    /// [`App::plan_step`] does first, done once for the steps of a run that all run here.
    pub fn admit_step_plan(&self, given: StepPlan<'_>) -> Result<AdmittedPlan, Failure> {
        let plan = given.load()?;
        let doc = match given {
            StepPlan::Document(doc) => Some(doc),
            StepPlan::Admitted(admitted) => admitted.doc.as_ref(),
            StepPlan::Data { .. } => None,
        };
        self.admit_plan(&plan, given.name(), doc)?;
        Ok(AdmittedPlan {
            name: given.name().to_string(),
            doc: doc.cloned(),
            by: self.id(),
            plan,
        })
    }

    /// Runs one step of a plan given the records of the steps it depends on (`record(id)`
    /// reads one): the plan must pass `App::admit_plan` — as `strata plan run` of it would
    /// (the gate over its tools, each step's tool and constant arguments); then the step is
    /// skipped (a
    /// dependency did not complete), waits (user values missing), or runs.
    pub fn plan_step(
        &self,
        request: &StepRequest<'_>,
        record: &dyn Fn(&str) -> Result<StepRecord, Error>,
    ) -> Result<StepOutcome, Failure> {
        let given = request.plan;
        let admitted;
        let plan = match given {
            StepPlan::Admitted(admitted) if admitted.by == self.id() => &admitted.plan,
            _ => {
                admitted = self.admit_step_plan(given)?;
                &admitted.plan
            }
        };
        let Some(i) = plan.find(request.step) else {
            return Err(unknown_step(plan, given.name(), request.step).into());
        };
        let step = &plan.steps[i];
        let runner = self
            .runner(request.options.clone())
            .with_marks(request.marks.clone());
        let known = plan.deps[i]
            .iter()
            .map(|&d| record(&plan.steps[d].id))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(r) = known.iter().find(|r| r.status != StepStatus::Completed) {
            let state = match r.status {
                StepStatus::Failed => State::Failed,
                _ => State::Skipped,
            };
            return Ok(StepOutcome {
                tool: step.tool.clone(),
                state: Ok(StepRecord::skipped(&step.id, skip_reason(&r.id, state))),
            });
        }
        let mut missing: Vec<String> = Vec::new();
        for name in step.args.value_names() {
            if !request.values.contains_key(name) && !missing.iter().any(|m| m == name) {
                missing.push(name.to_string());
            }
        }
        if !missing.is_empty() {
            return Ok(StepOutcome {
                tool: step.tool.clone(),
                state: Err(missing),
            });
        }
        let records: RecordMap = known.into_iter().map(|r| (r.id.clone(), r)).collect();
        let sources = Sources {
            records: &records,
            values: request.values,
        };
        let record = match resolve_parameters_within(step, &sources, &self.limits) {
            Ok(params) => match runner.run(&step.tool, &params, &request.call) {
                Ok(run) => StepRecord::from_run(&step.id, &step.tool, &run),
                Err(e) => StepRecord::failed(&step.id, &e),
            },
            Err(e) => {
                let e = e.map_path(|p| p.under(&step.at));
                StepRecord::failed(&step.id, &given.locate(e))
            }
        };
        Ok(StepOutcome {
            tool: step.tool.clone(),
            state: Ok(record),
        })
    }
}

/// The tools a plan's steps call, each once, in plan order.
pub fn called_tools(plan: &Plan) -> Vec<String> {
    let mut called: Vec<String> = Vec::new();
    for step in &plan.steps {
        if !called.contains(&step.tool) {
            called.push(step.tool.clone());
        }
    }
    called
}

/// The error for a step id the plan does not have, with a did-you-mean.
fn unknown_step(plan: &Plan, name: &str, id: &str) -> Error {
    let e = Error::new(
        Layer::REQUEST,
        ErrorKind::UnknownStep,
        format!("`{name}` has no step `{id}`"),
    );
    match did_you_mean(id, plan.ids()) {
        Some(best) => e.with_hint(format!("did you mean `{best}`?")),
        None => e.with_hint(format!(
            "its steps are {}",
            plan.ids().collect::<Vec<_>>().join(", ")
        )),
    }
}
