//! `strata.Project`: run a project's tools, and whole plans, from Python.

use std::collections::HashMap;
use std::path::PathBuf;

use pyo3::prelude::*;
use serde_json::{json, Value};
use strata_app::{
    App, CallerParams, ExecOptions, Failure, GraphRun, GraphStart, PlanExecution, PlanSource,
    StepPlan, StepRequest, WholePlan,
};
use strata_core::secret_marks::MarkKey;
use strata_core::{Error, RenderOptions};
use strata_core::{ErrorKind, Layer};
use strata_doc::Document;
use strata_plans::Silent;
use strata_tools::{CallOptions, Scale, StepRecord, ToolRunner};

use crate::convert::{
    count_arg, env_arg, flag_arg, json_arg, list_arg, map_arg, names_arg, opt_str_arg, path_arg,
    seconds_arg, str_arg, to_py,
};
use crate::errors::OrRaise;
use crate::events::PyEvents;
use crate::plans::PyPlan;
use crate::remote::{envelope, remote_parts, RemoteCalls, RemoteSteps};
use crate::scale_out::PyScaleOut;
use crate::stack::{on_strata_stack, stack_for, CAPPED_LIMITS_STACK};

/// A plan loaded and admitted once by a project (``Project.admit_plan``), for the many
/// steps of a run ``plan_step`` runs there.
#[pyclass(frozen, module = "strata", name = "AdmittedPlan")]
pub struct PyAdmittedPlan {
    plan: strata_app::AdmittedPlan,
}

#[pymethods]
impl PyAdmittedPlan {
    fn __repr__(&self) -> String {
        format!("AdmittedPlan({:?})", self.plan.name())
    }
}

/// The plan of a step run on its own: the document read from its text, else its data.
fn step_plan<'a>(name: &'a str, doc: Option<&'a Document>, data: &'a Value) -> StepPlan<'a> {
    match doc {
        Some(doc) => StepPlan::Document(doc),
        None => StepPlan::Data { name, value: data },
    }
}

/// A strata project: the directory ``path`` holding ``tools/``.
///
/// Raises ``StrataError`` when ``path`` has no ``tools/`` directory.
#[pyclass(frozen, module = "strata", name = "Project")]
pub struct PyProject {
    project: App,
}

impl PyProject {
    /// The stack this project's work may need (its recursion limits': [`stack_for`]).
    fn stack(&self) -> usize {
        stack_for(&self.project.limits)
    }

    /// The options of every tool call: the environment `env` (`None`: the process
    /// environment) and `strict` rendering (`None`: the project's `strict` setting).
    fn options(
        &self,
        env: Option<&Bound<'_, PyAny>>,
        strict: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ExecOptions> {
        let base_env = match env.filter(|e| !e.is_none()) {
            None => None,
            Some(e) => Some(env_arg(Some(e), "env")?),
        };
        let strict = flag_arg(strict, "strict")?;
        Ok(ExecOptions {
            render: RenderOptions::strict_if(self.project.settings.strict_with(strict)),
            base_env,
            cancel: None,
        })
    }

    /// The plan of a step run on its own, as `plan_step` takes it: its text (JSON or YAML,
    /// named `name`) read into a document (and no data), or its data.
    fn step_plan_of(
        &self,
        py: Python<'_>,
        plan: &Bound<'_, PyAny>,
        name: &str,
    ) -> PyResult<(Option<Document>, Value)> {
        Ok(match plan.extract::<String>() {
            Ok(text) => {
                let doc =
                    strata_plans::parse_document(name, text.into_bytes(), &self.project.limits)
                        .or_raise(py)?;
                (Some(doc), Value::Null)
            }
            Err(_) => (None, json_arg(plan, "plan")?),
        })
    }
}

#[pymethods]
impl PyProject {
    #[new]
    fn new(path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = path.py();
        let root = path_arg(path, "path")?;
        let project = on_strata_stack(py, CAPPED_LIMITS_STACK, || App::at(&root))?.or_raise(py)?;
        Ok(PyProject { project })
    }

    /// The project's root directory (absolute).
    #[getter]
    fn root(&self) -> PathBuf {
        self.project.root.clone()
    }

    /// Every tool id under ``tools/``, sorted.
    fn tool_ids(&self) -> Vec<String> {
        self.project.tool_ids()
    }

    /// The checks of a run of ``tools`` sent to Ray workers (``strata.ray`` makes them before
    /// it submits anything): ``tools`` are the tools a plan's steps call, or a graph's id;
    /// ``None`` is a run of any tool of the project (each one's secrets count, none must be
    /// uploaded). Raises ``StrataError`` when ``.env`` cannot be read or parsed.
    #[pyo3(signature = (tools=None))]
    fn scale_out(&self, py: Python<'_>, tools: Option<&Bound<'_, PyAny>>) -> PyResult<PyScaleOut> {
        let tools = match tools.filter(|t| !t.is_none()) {
            Some(t) => Some(names_arg(Some(t), "tools")?),
            None => None,
        };
        let checks = on_strata_stack(py, self.stack(), || {
            self.project.scale_out(tools.as_deref())
        })?
        .or_raise(py)?;
        Ok(PyScaleOut { checks })
    }

    /// Runs tool ``tool`` (an id such as ``"examples/echo"``) with the caller's ``params``
    /// through its executor chain and a real subprocess, and returns its step record:
    /// ``{"id", "status", "result", "error", "run"}`` — ``result`` is the tool's standard
    /// output parsed as JSON (else the text), ``run`` the process outcome. The record's id is
    /// ``step_id``, by default the tool id.
    ///
    /// The parameters are data: whatever they hold reaches the tool byte for byte. ``env``
    /// replaces the process environment the tool's environment is built from; ``strict``
    /// makes a missing environment variable an error; ``timeout`` (seconds) caps the tool's
    /// own timeout. Other Python threads run while the tool does.
    ///
    /// A tool that ran and failed (or timed out) gives a record with status ``"failed"``. A
    /// tool that could not run at all raises ``StrataError``: ``ToolError`` for an unknown
    /// tool or a program that cannot start, ``TemplateSyntaxError`` for a malformed tool file
    /// (with its file, line and column), kind ``"invalid"`` for parameters that fail the
    /// tool's schema or a command that is not on ``PATH``.
    #[pyo3(
        signature = (tool, params=None, *, step_id=None, env=None, strict=None, timeout=None),
        text_signature = "($self, tool, params=None, *, step_id=None, env=None, strict=False, timeout=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn run_tool<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyAny>,
        params: Option<&Bound<'py, PyAny>>,
        step_id: Option<&Bound<'py, PyAny>>,
        env: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tool = str_arg(tool, "tool")?;
        let params = map_arg(params, "params")?;
        let step_id = opt_str_arg(step_id, "step_id")?;
        let options = self.options(env, strict)?;
        let call = CallOptions {
            timeout: seconds_arg(timeout, "timeout")?,
        };
        let caller = CallerParams {
            typed: params,
            strings: Vec::new(),
        };
        let run = on_strata_stack(py, self.stack(), || {
            self.project.run_tool(&tool, &caller, &options, &call)
        })?
        .or_raise(py)?;
        let id = step_id.unwrap_or_else(|| tool.clone());
        to_py(py, &StepRecord::from_run(id, &tool, &run.result).to_json())
    }

    /// Runs a whole plan with the project's tools — as ``strata plan run`` does, the run
    /// recorded under ``.strata/runs/`` (``strata runs show`` lists it, ``strata plan run
    /// --resume`` continues it) — and returns ``{"run_id", "plan", "status", "levels",
    /// "steps", "missing_values", "rejected"}``.
    ///
    /// ``plan`` is a ``strata.Plan`` or a plan document (a list of steps, or ``{"steps":
    /// [...]}``). Each step starts as soon as every step it depends on has completed, at most
    /// ``jobs`` at once (default 4); independent steps keep running after a failure.
    /// ``values`` are the user values for ``{{PLACEHOLDER_name}}``; ``env``, ``strict`` and
    /// ``timeout`` are those of ``run_tool``, for every step. ``run_id`` names the new run
    /// (default: date, time and a random suffix); ``resume`` continues the run with that id
    /// instead — its finished steps do not run again, ``values`` are added to its own, and
    /// ``plan``, when given, must be the plan it started with. Other Python threads run
    /// while the plan does.
    ///
    /// ``executor``, when given, runs every tool call instead of this process: it is called
    /// as ``executor(tool, params, timeout)`` and returns what ``call_tool`` returns; the
    /// scheduling, the records and the checkpoints stay here. ``step_executor``, instead,
    /// runs every whole step (as ``strata.ray`` does on a Ray cluster): it is called as
    /// ``step_executor(request)``, ``request`` holding the arguments of ``plan_step``
    /// (``plan``, ``name``, ``step``, ``records``, ``values``, ``timeout``) and, each only
    /// when the step or its tool declares it, ``resources`` (``{"num_cpus", "num_gpus",
    /// "memory"`` in bytes, ``"custom"}``, each key when declared) and ``retries``
    /// (``{"limit", "delay_ms"}``, ``delay_ms`` when declared), and returns
    /// ``{"record": ...}`` (``plan_step``'s) or ``{"error": ...}`` (strata's error form)
    /// when the step could not run there; the scheduling — which step is ready, skipped or
    /// waiting — the records and the checkpoints stay here.
    ///
    /// ``cancel``, a ``strata.Cancel``, stops the run once set (from another thread): the
    /// tools running here are killed and no step starts; a step executor answers its steps
    /// with errors of kind ``cancelled``; the run is ``"cancelled"``, and resumed it runs
    /// the steps the cancel stopped again. ``on_event``, when given, is called with each
    /// event of the run as ``strata plan run --json`` streams it (``step_started``,
    /// ``step_finished``, ``step_waiting``), on the scheduler's thread.
    ///
    /// ``status`` is ``"completed"`` (every step completed), ``"failed"`` (a step failed or
    /// was skipped) or ``"waiting"`` (steps wait for values: resume the run with them);
    /// ``steps`` holds every step's record in plan order (``run_tool``'s record; a skipped
    /// step's ``error`` names the dependency; a step waiting for values is ``{"id",
    /// "status": "waiting", "result": None, "error": None, "run": None, "waiting_for":
    /// [names]}``); ``missing_values`` lists the values not given, once, in plan order.
    ///
    /// Raises before anything runs: the errors of ``strata.Plan`` for a plan document,
    /// ``ToolError`` for a step calling an unknown tool (with a did-you-mean), kind
    /// ``invalid`` for constant arguments that cannot match the tool's parameter schema,
    /// ``CheckError`` for a tool the project check rejects, kind ``run_state`` for a run id
    /// that is taken or a run that cannot be resumed.
    #[pyo3(
        signature = (plan=None, *, values=None, jobs=None, env=None, strict=None, timeout=None, run_id=None, resume=None, executor=None, step_executor=None, cancel=None, on_event=None),
        text_signature = "($self, plan=None, *, values=None, jobs=None, env=None, strict=False, timeout=None, run_id=None, resume=None, executor=None, step_executor=None, cancel=None, on_event=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn run_plan<'py>(
        &self,
        py: Python<'py>,
        plan: Option<&Bound<'py, PyAny>>,
        values: Option<&Bound<'py, PyAny>>,
        jobs: Option<&Bound<'py, PyAny>>,
        env: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
        run_id: Option<&Bound<'py, PyAny>>,
        resume: Option<&Bound<'py, PyAny>>,
        executor: Option<&Bound<'py, PyAny>>,
        step_executor: Option<&Bound<'py, PyAny>>,
        cancel: Option<&Bound<'py, PyAny>>,
        on_event: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        use pyo3::exceptions::{PyTypeError, PyValueError};
        let read;
        let given = match plan.filter(|p| !p.is_none()) {
            None => None,
            Some(plan) => match plan.cast::<PyPlan>() {
                Ok(given) => Some(given.get()),
                Err(_) => {
                    read = PyPlan::read(plan, "plan")?;
                    Some(&read)
                }
            },
        };
        let values = map_arg(values, "values")?;
        let jobs = match jobs_arg(jobs)? {
            Some(n) => n,
            None => self.project.settings.jobs.value,
        };
        let run_id = opt_str_arg(run_id, "run_id")?;
        let resume = opt_str_arg(resume, "resume")?;
        if resume.is_some() && run_id.is_some() {
            return Err(PyValueError::new_err(
                "resume= continues a run: it takes no run_id=",
            ));
        }
        if resume.is_none() && given.is_none() {
            return Err(PyTypeError::new_err(
                "run_plan() needs a plan, or resume= the id of a run to continue",
            ));
        }
        let executor = callable_arg(executor, "executor")?;
        let step_executor = callable_arg(step_executor, "step_executor")?;
        if executor.is_some() && step_executor.is_some() {
            return Err(PyValueError::new_err(
                "executor= runs tool calls, step_executor= whole steps: give one",
            ));
        }
        let mut options = self.options(env, strict)?;
        options.cancel = cancel_arg(cancel)?;
        let mut events = callable_arg(on_event, "on_event")?.map(|callback| PyEvents { callback });
        let call = CallOptions {
            timeout: seconds_arg(timeout, "timeout")?,
        };
        let app = &self.project;
        let report = on_strata_stack(py, self.stack(), || -> Result<_, Failure> {
            let run = match (&resume, given) {
                (Some(id), given) => {
                    let named = given.map(|g| move || Ok(plan_text(g)));
                    let named = named
                        .as_ref()
                        .map(|read| read as &dyn Fn() -> Result<Document, Failure>);
                    app.resume_plan_run(id, named, values)?
                }
                (None, Some(given)) => {
                    let whole = WholePlan {
                        plan: given.plan().clone(),
                        value: given.value().clone(),
                        name: given.name().to_string(),
                        fingerprint: strata_app::plan_fingerprint(&plan_text(given).text),
                        doc: given.doc().cloned(),
                    };
                    app.start_plan_run(PlanSource::Whole(Box::new(whole)), run_id, values)?
                }
                (None, None) => unreachable!("checked above"),
            };
            let remote = executor.map(|executor| RemoteCalls { executor });
            // The declarations of the tools the steps call, for the step requests.
            let tools: HashMap<String, Scale> = match (&step_executor, run.plan()) {
                (Some(_), Some(plan)) => plan
                    .steps
                    .iter()
                    .map(|s| {
                        (
                            s.tool.clone(),
                            strata_app::tool_scale(app.project(), &s.tool),
                        )
                    })
                    .collect(),
                _ => HashMap::new(),
            };
            let steps = match (step_executor, run.step_plan()) {
                (Some(executor), Some(plan)) => Some(
                    Python::attach(|py| {
                        RemoteSteps::new(
                            py,
                            executor,
                            tools,
                            plan,
                            run.values(),
                            &call,
                            run.marks(),
                        )
                    })
                    .map_err(|e| {
                        Error::new(
                            Layer::REQUEST,
                            ErrorKind::Invalid,
                            format!("cannot hand the plan to the step executor: {e}"),
                        )
                        .with_source(e)
                    })?,
                ),
                _ => None,
            };
            let exec = PlanExecution {
                options,
                remote: remote.as_ref().map(|r| r as &dyn strata_app::RemoteTools),
                steps: steps.as_ref().map(|s| s as &dyn strata_plans::StepPool),
                jobs,
                call,
            };
            match events.as_mut() {
                Some(events) => run.execute(app, &exec, events),
                None => run.execute(app, &exec, &mut Silent),
            }
        })?
        .or_raise(py)?;
        to_py(py, &report.to_json())
    }

    /// Runs tool ``tool`` with ``params`` through the project's runner, as a step of a plan
    /// or a node of a graph would — the gate, the executor chain, the limits; with ``marks``,
    /// the marker key of the run the call belongs to (what an ``executor`` is given), the
    /// run's secret markers (``%{secret:NAME:TAG}``) in ``params`` restored from this
    /// machine's environment or ``.env`` and secret values on the tool's stdout put back as
    /// markers of that run (without it, the call is a run of its own: text in ``params`` is
    /// never a secret) — and returns
    /// ``{"run": {...}}`` (``success``, ``exit_code``, ``signal``, ``stdout`` and ``stderr``
    /// as bytes, ``stdout_truncated``, ``stderr_truncated``, ``timed_out``, ``duration`` in
    /// seconds) when it ran, or ``{"error": {...}}`` (strata's error form) when it could
    /// not. This is what an ``executor`` of ``run_plan`` and ``run_graph`` returns; it never
    /// raises for a tool that cannot run.
    #[pyo3(
        signature = (tool, params=None, *, env=None, strict=None, timeout=None, marks=None),
        text_signature = "($self, tool, params=None, *, env=None, strict=False, timeout=None, marks=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn call_tool<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyAny>,
        params: Option<&Bound<'py, PyAny>>,
        env: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
        marks: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tool = str_arg(tool, "tool")?;
        let params = map_arg(params, "params")?;
        let options = self.options(env, strict)?;
        let call = CallOptions {
            timeout: seconds_arg(timeout, "timeout")?,
        };
        let marks = marks_arg(marks).or_raise(py)?;
        let outcome = on_strata_stack(py, self.stack(), || {
            self.project
                .runner(options)
                .with_marks(marks)
                .run(&tool, &params, &call)
        })?;
        Ok(envelope(py, &outcome)?.into_any())
    }

    /// Runs graph ``graph`` (the id of a tool of ``kind: graph``) with the project's tools —
    /// as ``strata run`` does, the run recorded under ``.strata/runs/`` — and returns
    /// ``{"run_id", "status", "steps", "result", "failure"}``.
    ///
    /// ``inputs`` are the graph's inputs (typed values, checked against its declarations);
    /// ``inputs_text`` more inputs as text, typed by the declarations as ``strata run
    /// --input`` types them (they win);
    /// ``run_id`` names the new run (default: date, time and a random suffix); ``resume``
    /// continues the run with that id from its last checkpoint instead. ``env`` and
    /// ``strict`` are those of ``run_tool``, for every render and tool call. ``executor`` is
    /// that of ``run_plan``: every tool node's call runs there, the walk and its checkpoints
    /// stay here.
    ///
    /// ``status`` is ``"completed"``, ``"failed"`` or ``"limited"`` (stopped by
    /// ``max_steps``); ``result`` is the graph's result (``None`` unless completed);
    /// ``failure`` is ``None`` or the error that ended the run, as a dict in the shape of
    /// strata's errors (``kind``, ``layer``, ``message``, ``path``, ``span``, ``hint``…).
    ///
    /// ``part_executor``, instead of ``executor``, runs the walk in parts (as ``strata.ray``
    /// does on a Ray cluster): the run's start, each step and a foreach's list and each of its
    /// elements are requests ``part_executor(request)`` answers with ``{"answer": ...}``
    /// (what ``walk_part`` returns for it) — a step at an action node, and an element of a
    /// foreach whose body's actions call one tool, carry that tool's ``resources`` and
    /// ``retries`` as ``run_plan``'s step requests do — or ``{"error": ...}`` (strata's error form) when the
    /// part could not run there; the run's directory, its lock and its checkpoint after each
    /// step stay here, and a foreach's elements are requested in parallel (up to its
    /// ``max_concurrency``) when it is ``parallel``. A part that could not run ends the call
    /// with its error (the run resumes from its last checkpoint), but for an element, whose
    /// failure it is.
    ///
    /// Raises before anything runs: ``StrataError`` for a graph file that does not load,
    /// ``CheckError`` for a graph the project check rejects (as ``strata run`` refuses it),
    /// ``ToolError`` for an unknown graph id.
    #[pyo3(
        signature = (graph, inputs=None, *, run_id=None, resume=None, env=None, strict=None, executor=None, inputs_text=None, part_executor=None),
        text_signature = "($self, graph, inputs=None, *, run_id=None, resume=None, env=None, strict=False, executor=None, inputs_text=None, part_executor=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn run_graph<'py>(
        &self,
        py: Python<'py>,
        graph: &Bound<'py, PyAny>,
        inputs: Option<&Bound<'py, PyAny>>,
        run_id: Option<&Bound<'py, PyAny>>,
        resume: Option<&Bound<'py, PyAny>>,
        env: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        executor: Option<&Bound<'py, PyAny>>,
        inputs_text: Option<&Bound<'py, PyAny>>,
        part_executor: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = self.project.tool_named(&str_arg(graph, "graph")?);
        let strings = crate::convert::str_map_arg(inputs_text, "inputs_text")?;
        let executor = callable_arg(executor, "executor")?;
        let part_executor = callable_arg(part_executor, "part_executor")?;
        if executor.is_some() && part_executor.is_some() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "executor= runs tool calls, part_executor= the parts of the walk: give one",
            ));
        }
        let typed = map_arg(inputs, "inputs")?;
        let run_id = opt_str_arg(run_id, "run_id")?;
        let resume = opt_str_arg(resume, "resume")?;
        let start = match resume {
            Some(resumed) => {
                if run_id.is_some() || !typed.is_empty() || !strings.is_empty() {
                    return Err(pyo3::exceptions::PyValueError::new_err(
                        "resume= continues a run: it takes neither run_id= nor inputs",
                    ));
                }
                GraphStart::Resume(resumed)
            }
            None => GraphStart::New {
                run_id: run_id.unwrap_or_else(strata_graph::new_run_id),
                typed,
                strings,
            },
        };
        let run = GraphRun {
            id,
            start,
            options: self.options(env, strict)?,
            every: self.project.settings.checkpoint_every.value,
        };
        let outcome = on_strata_stack(py, self.stack(), || match (executor, part_executor) {
            (_, Some(parts)) => self.project.run_graph_in_parts(&run, remote_parts(parts)),
            (None, None) => self.project.run_graph(&run, &mut strata_graph::Silent),
            (Some(executor), None) => {
                let remote = RemoteCalls { executor };
                self.project
                    .run_graph_on(&run, Some(&remote), &mut strata_graph::Silent)
            }
        })?
        .or_raise(py)?;
        let report = json!({
            "run_id": outcome.run_id,
            "status": outcome.status.name(),
            "steps": outcome.steps,
            "result": outcome.result,
            "failure": outcome.failure.as_ref().map(Error::to_json),
        });
        to_py(py, &report)
    }

    /// ``plan`` (what ``plan_step`` takes, named ``name``) loaded and refused as
    /// ``plan_step`` refuses it — the gate over its tools, each step's tool and constant
    /// arguments — once, for the many steps of a run that run here: ``plan_step`` given the
    /// ``AdmittedPlan`` skips both. Only this project skips them; another project given it
    /// checks the plan again. Raises as ``plan_step`` does.
    #[pyo3(signature = (plan, *, name=None))]
    fn admit_plan(
        &self,
        py: Python<'_>,
        plan: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyAdmittedPlan> {
        let name = opt_str_arg(name, "name")?.unwrap_or_else(|| PLAN_NAME.to_string());
        let (doc, data) = self.step_plan_of(py, plan, &name)?;
        let given = step_plan(&name, doc.as_ref(), &data);
        let plan = on_strata_stack(py, self.stack(), || self.project.admit_step_plan(given))?
            .or_raise(py)?;
        Ok(PyAdmittedPlan { plan })
    }

    /// Runs step ``step`` of ``plan`` on its own, given the records of the steps it depends
    /// on — as ``strata plan step`` does, and as a run of the plan runs it: its tool must
    /// exist, its constant arguments match the tool's schema and the gate admit the tool;
    /// then the step is skipped (a dependency did not complete), waits (user values
    /// missing) or runs — and returns ``{"tool", "record"}`` (the step's record, as
    /// ``run_plan``'s ``steps`` hold it) or ``{"tool", "waiting_for": [names]}``.
    ///
    /// ``plan`` is the plan's text (JSON or YAML; errors are located in it, named ``name``)
    /// or its data (a list of steps, or ``{"steps": [...]}``; errors are not located, as a
    /// run of a plan given as data leaves them). ``records`` lists the records of the steps
    /// it depends on; ``values`` are the user values; ``strict`` and ``timeout`` are those
    /// of ``run_tool``. Raises ``StrataError`` when the step cannot run at all: a plan that
    /// does not load, no such step (with a did-you-mean), a record missing, a refusal.
    #[pyo3(
        signature = (plan, step, *, records=None, values=None, name=None, strict=None, timeout=None, marks=None),
        text_signature = "($self, plan, step, *, records=None, values=None, name=None, strict=False, timeout=None, marks=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn plan_step<'py>(
        &self,
        py: Python<'py>,
        plan: &Bound<'py, PyAny>,
        step: &Bound<'py, PyAny>,
        records: Option<&Bound<'py, PyAny>>,
        values: Option<&Bound<'py, PyAny>>,
        name: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
        marks: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let step = str_arg(step, "step")?;
        let marks = marks_arg(marks).or_raise(py)?;
        let name = opt_str_arg(name, "name")?.unwrap_or_else(|| PLAN_NAME.to_string());
        let records = records_arg(records)?;
        let values = map_arg(values, "values")?;
        let options = self.options(None, strict)?;
        let call = CallOptions {
            timeout: seconds_arg(timeout, "timeout")?,
        };
        let (doc, data);
        let given = match plan.cast::<PyAdmittedPlan>() {
            Ok(admitted) => StepPlan::Admitted(&admitted.get().plan),
            Err(_) => {
                (doc, data) = self.step_plan_of(py, plan, &name)?;
                step_plan(&name, doc.as_ref(), &data)
            }
        };
        let request = StepRequest {
            plan: given,
            step: &step,
            values: &values,
            options,
            call,
            marks,
        };
        let record = |id: &str| {
            records.iter().find(|r| r.id == id).cloned().ok_or_else(|| {
                Error::new(
                    Layer::REQUEST,
                    ErrorKind::Request,
                    format!("no record of step `{id}`, which step `{step}` depends on"),
                )
            })
        };
        let outcome = on_strata_stack(py, self.stack(), || {
            self.project.plan_step(&request, &record)
        })?
        .or_raise(py)?;
        let answer = match outcome.state {
            Ok(record) => json!({"tool": outcome.tool, "record": record.to_json()}),
            Err(names) => json!({"tool": outcome.tool, "waiting_for": names}),
        };
        to_py(py, &answer)
    }

    /// Runs one part of a walk of graph ``graph`` from the checkpoint ``request`` carries —
    /// as a task of an exported workflow (``strata walk``) runs it, and as ``run_graph``
    /// with ``part_executor`` asks for it — and returns its answer. ``request`` is
    /// ``{"part": "begin", "run_id", "inputs", "started"}`` (answer ``{"walk"}``: the
    /// run's first checkpoint), ``{"part": "advance", "walk", "work"}`` (``{"walk",
    /// "failure"}``: the checkpoint one step further, and the error that ended the run
    /// there), ``{"part": "items", "walk"}`` (``{"items"}`` or ``{"error"}``: the list of the
    /// foreach about to run) or ``{"part": "element", "walk", "index", "item"}``
    /// (``{"output"}`` or ``{"error"}``: one element's body). ``strict`` is that of
    /// ``run_tool``.
    ///
    /// Raises ``CheckError`` for a graph the project check rejects (as ``strata run``
    /// refuses it), ``StrataError`` for a graph that does not load, a malformed request or a
    /// checkpoint of another graph file.
    #[pyo3(
        signature = (graph, request, *, strict=None),
        text_signature = "($self, graph, request, *, strict=False)"
    )]
    fn walk_part<'py>(
        &self,
        py: Python<'py>,
        graph: &Bound<'py, PyAny>,
        request: &Bound<'py, PyAny>,
        strict: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = self.project.tool_named(&str_arg(graph, "graph")?);
        let request = json_arg(request, "request")?;
        let options = self.options(None, strict)?;
        let app = &self.project;
        let answer = on_strata_stack(py, self.stack(), || {
            app.walk_part(&id, &request, options.clone())
        })?
        .or_raise(py)?;
        to_py(py, &answer)
    }

    fn __repr__(&self) -> String {
        format!("<strata.Project {}>", self.project.root.display())
    }
}

/// The marker key of the run a call belongs to (`marks=`, as a run's request carries it), or
/// a new one: a call of its own.
fn marks_arg(marks: Option<&Bound<'_, PyAny>>) -> Result<MarkKey, Error> {
    match marks.filter(|m| !m.is_none()) {
        None => Ok(strata_app::marks::fresh()),
        Some(m) => strata_app::marks::carried(&m.extract::<String>().unwrap_or_default()),
    }
}

/// The name of a plan given to `plan_step` without one.
const PLAN_NAME: &str = "<plan>";

/// An executor argument: `None`, or a callable.
/// The ``cancel`` argument: a ``strata.Cancel``, or nothing.
fn cancel_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<strata_app::Cancel>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => match o.cast::<crate::cancel::PyCancel>() {
            Ok(c) => Ok(Some(c.get().cancel.clone())),
            Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(
                "cancel= takes a strata.Cancel",
            )),
        },
    }
}

fn callable_arg(obj: Option<&Bound<'_, PyAny>>, arg: &str) -> PyResult<Option<Py<PyAny>>> {
    match obj.filter(|e| !e.is_none()) {
        None => Ok(None),
        Some(e) if e.is_callable() => Ok(Some(e.clone().unbind())),
        Some(e) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{arg}: expected a callable, got {}",
            crate::convert::type_name(e)
        ))),
    }
}

/// `plan_step`'s `records=`: a list of step records.
fn records_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<StepRecord>> {
    list_arg(obj, "records", "step records")?
        .iter()
        .map(|value| {
            StepRecord::from_json(value).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(
                    "records: a record is {id, status, result, error, run}",
                )
            })
        })
        .collect()
}

/// Python's `jobs=`: an `int` from 1 to `strata_app::settings::MAX_JOBS`, refused with the
/// message `--jobs`, `STRATA_JOBS` and `strata.yaml` give (as `ValueError`).
fn jobs_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    use pyo3::exceptions::PyValueError;
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    // `count_arg` checks the type; the range is the settings' (0 and too many alike).
    let n = match count_arg(Some(obj), "jobs") {
        Ok(n) => n.and_then(|n| u64::try_from(n).ok()),
        Err(e) if e.is_instance_of::<PyValueError>(obj.py()) => None,
        Err(e) => return Err(e),
    };
    let shown = obj.str()?.to_string();
    strata_app::settings::jobs_shown(n, &shown)
        .map(Some)
        .map_err(|e| PyValueError::new_err(e.message().to_string()))
}

/// The text of a plan given to `run_plan` (its file's, or its JSON for a plan given as data),
/// named as its records name it: what a run's fingerprint is taken of.
fn plan_text(given: &PyPlan) -> Document {
    match given.doc() {
        Some(doc) => Document::unparsed(&doc.name, doc.text.clone()),
        None => Document::unparsed(given.name(), given.value().to_string()),
    }
}
