"""strata.ray: strata's plans and graphs on a Ray cluster.

``run_plan`` and ``run_graph`` run a plan or a graph as ``strata plan run`` and ``strata run``
do — the same checks before anything runs, the same scheduling (a step starts as soon as its
dependencies completed; a foreach's elements in parallel), the same step records and
checkpoints, the run recorded under the project's ``.strata/runs/`` so that ``strata runs
show`` lists it and a killed driver resumes — with the work on the cluster, in Ray's copy of
the project, through strata's application layer:

* each step of a plan is a Ray task named ``strata:<plan>/<step>`` running the step
  operation (``Project.plan_step``, what ``strata plan step`` runs: the gate, the arguments
  resolved from the records of the steps it depends on, the tool with the project's limits,
  secret markers restored from the worker's own environment and put back on the tool's
  stdout) and returning the step's record; the plan itself goes to Ray's object store once
  per run;
* a graph runs on the walk in parts (``Project.walk_part``, what ``strata walk`` runs): its
  start and each step a Ray task, a foreach's list a task and its elements tasks in flight
  together (up to its ``max_concurrency``, when it is ``parallel``).

The driver (this process) schedules the steps or drives the walk, and alone writes the run's
records and checkpoints. ``submit_plan`` and ``submit_graph`` return a ``RunHandle`` at once
(``cancel()``, ``done()``, ``result()``); ``run_plan`` and ``run_graph`` wait for it, and a
``KeyboardInterrupt`` while they wait cancels the run's tasks and records the run as
cancelled (a plan's resumes with ``resume=``) before it goes on.

The project reaches the workers through Ray's ``runtime_env`` working directory (from afar
too, through a Ray Client ``ray://`` address), without ``.env``, the runs directory, the
other ``DEFAULT_EXCLUDES`` and what ``.gitignore`` leaves out; each run works on a copy of
its own on each node. Before anything is submitted, strata's own checks
(``Project.scale_out``): a file of the upload holding a secret value, a tool the run needs
left out of the upload, or a secret value in the user values, graph inputs or plan are
refused. Secrets never travel as task arguments or
results: a tool's stdout carries ``%{secret:NAME}`` markers, which the next worker restores
from its own environment.

Ray is an optional dependency: ``pip install "strata-engine[ray]"``. Importing this module
does not import Ray; calling it does. See docs/scale-out.md.
"""

from __future__ import annotations

import importlib
import json
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union, cast

import strata

from . import _upload
from ._driver import NODES_FILE, SUBMITTED, ClusterLost, Executor, RunHandle, VersionMismatch, task_options
from ._upload import DEFAULT_EXCLUDES

__all__ = [
    "DEFAULT_EXCLUDES",
    "ClusterLost",
    "RayRun",
    "RunHandle",
    "VersionMismatch",
    "run_graph",
    "run_plan",
    "runtime_env",
    "submit_graph",
    "submit_plan",
    "task_options",
    "tasks_submitted",
]

#: The most steps in flight at once (the most ``strata plan run`` runs at once).
MAX_IN_FLIGHT = 256

ProjectLike = Union[strata.Project, str, "os.PathLike[str]"]


class RayRun(dict[str, Any]):
    """The report of a run (``Project.run_plan``'s or ``Project.run_graph``'s), with
    ``placements``: for each task in the order they finished, the Ray node id, the worker
    process and the Ray task name (``node``, ``pid``, ``task``) and what it ran — ``{"step": id}`` for a plan's
    step (with ``attempts`` and ``retries`` for a step that declares retries),
    ``{"part": "begin" | "advance" | "items" | "element", "at": graph node, "index": element
    or None}`` for a part of a graph's walk."""


def _ray() -> Any:
    """The ``ray`` module, or an ImportError that says how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError('strata.ray needs Ray: pip install "strata-engine[ray]"') from e


def _project(project: ProjectLike) -> strata.Project:
    return project if isinstance(project, strata.Project) else strata.Project(project)


def runtime_env(project: ProjectLike, excludes: Sequence[str] = ()) -> dict[str, Any]:
    """The ``runtime_env`` that takes ``project`` to the workers: its directory as the working
    directory, without ``DEFAULT_EXCLUDES``, ``excludes`` (gitignore-style patterns) and what
    its ``.gitignore`` files leave out.

    Raises ``StrataError`` (kind ``forbidden``) when a file that would be uploaded, of any
    size, holds a secret value (``Project.scale_out``: a value of the project's ``.env``, or of
    a secret the project or its tools declare, in this process's environment): exclude it,
    or keep the value in ``.env`` or the environment only."""
    proj = _project(project)
    root = Path(proj.root).resolve()
    patterns = list(DEFAULT_EXCLUDES) + list(excludes)
    _checked_upload(proj.scale_out(), root, patterns)
    return {"working_dir": str(root), "excludes": patterns}


def _checked_upload(scale: strata.ScaleOut, root: Path, patterns: Sequence[str]) -> list[Path]:
    """The files Ray would upload from ``root``, checked (``ScaleOut.check_upload``)."""
    files = _upload.upload_files(root, patterns)
    scale.check_upload([p.relative_to(root).as_posix() for p in files])
    return files


# Where this process connected Ray, when it did.
_CONNECTED: list[Optional[str]] = [None]


def _bare(address: str) -> str:
    return address.split("://", 1)[-1].replace("localhost", "127.0.0.1").rstrip("/")


def _current_address(ray: Any) -> Optional[str]:
    """The address Ray is connected to, as far as this process can tell."""
    if _CONNECTED[0] is not None:
        return _CONNECTED[0]
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # noqa: BLE001 - a client connection made elsewhere
        return None


def _connect(ray: Any, address: Optional[str]) -> None:
    """Connects Ray to ``address`` (``None``: ``RAY_ADDRESS``, else a local cluster) unless it
    is connected; raises ``ValueError`` when it is connected to another address."""
    if ray.is_initialized():
        current = _current_address(ray)
        if address not in (None, "auto") and (current is None or _bare(address) != _bare(current)):
            raise ValueError(
                f"Ray is already connected to {current or 'another cluster'}, not to {address}: "
                "leave address= out to use that connection, or call ray.shutdown() first"
            )
        return
    if address is None:
        ray.init(log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
        _CONNECTED[0] = address


# Uploaded packages by what was uploaded: the Ray job (the cluster connection), the
# directory, the excludes and every file's path, size and modification time.
_UPLOADS: dict[tuple[Any, ...], dict[str, Any]] = {}


def _prepared(
    ray: Any,
    proj: strata.Project,
    scale: strata.ScaleOut,
    excludes: Sequence[str],
    arguments: Sequence[tuple[str, Any]],
) -> dict[str, Any]:
    """The run's ``runtime_env`` with the project uploaded, after the checks on the driver
    (``scale``, from ``Project.scale_out``): no secret value in the tasks' ``arguments`` or
    in a file of the upload, every tool the run needs in the upload. A directory unchanged
    since this process uploaded it (same files, sizes and times) is not packed again."""
    root = Path(proj.root).resolve()
    patterns = list(DEFAULT_EXCLUDES) + list(excludes)
    for what, value in arguments:
        scale.check_arguments(what, value)
    files = _checked_upload(scale, root, patterns)
    stats = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            continue
        stats.append((str(path), st.st_size, st.st_mtime_ns))
    key = (ray.get_runtime_context().get_job_id(), str(root), tuple(patterns), tuple(stats))
    cached = _UPLOADS.get(key)
    if cached is None:
        cached = _UPLOADS[key] = _upload.upload(ray, {"working_dir": str(root), "excludes": patterns})
    return dict(cached)


def _plan_path(project: strata.Project, plan: Union[str, "os.PathLike[str]"]) -> Path:
    """Plan file ``plan``: as given when it exists so, else relative to the project."""
    path = Path(plan)
    if not path.is_absolute() and not path.exists():
        path = Path(project.root) / path
    return path


def _plan_file(project: strata.Project, plan: Union[str, "os.PathLike[str]"]) -> tuple[strata.Plan, Any]:
    """The plan in file ``plan`` (relative to the project unless it exists as given), named
    as ``strata plan run`` names it in records and errors (relative to the project when the
    file is inside it), and the text that travels to the tasks — read once, so that the text
    checked for secrets is the text sent — or None when strata read the file itself."""
    path = _plan_path(project, plan)
    try:
        text = path.read_bytes().decode("utf-8")
    except (ValueError, OSError):
        # Unreadable or not UTF-8: as strata reads (and refuses) it.
        return strata.Plan.from_file(path), None
    try:
        shown = str(path.resolve().relative_to(Path(project.root).resolve()))
    except ValueError:
        shown = str(path)  # outside the project: named as given, as strata names it
    return strata.Plan.from_text(text, file=shown), text


def _kept(project: strata.Project, run_id: str, name: str) -> Any:
    """A file a recorded run keeps (its plan, its checkpoint), or None."""
    try:
        return json.loads((Path(project.root) / ".strata" / "runs" / run_id / name).read_text())
    except (OSError, ValueError):
        return None


def _plan_given(project: strata.Project, plan: Any) -> Any:
    """What of a plan given travels to the tasks, for the secret check: a file's text, a
    document's data, a ``strata.Plan`` (checked as its document)."""
    if isinstance(plan, (str, os.PathLike)):
        try:
            return _plan_path(project, plan).read_text(errors="replace")
        except OSError:
            return None
    return plan


def _plan_tools(project: strata.Project, given: Any, resume: Optional[str]) -> dict[str, str]:
    """The tool of each step of the plan given, or of the resumed run's."""
    if given is None and resume is not None:
        kept = _kept(project, resume, "plan.json")
        given = strata.Plan(kept) if kept is not None else None
    if given is None:
        return {}
    plan = given if isinstance(given, strata.Plan) else strata.Plan(given)
    return {step["id"]: step["tool"] for step in plan.steps}


def submit_plan(
    project: ProjectLike,
    plan: Union[strata.Plan, str, "os.PathLike[str]", Sequence[Any], Mapping[str, Any], None] = None,
    values: Optional[Mapping[str, Any]] = None,
    *,
    address: Optional[str] = None,
    max_retries: int = 3,
    run_id: Optional[str] = None,
    resume: Optional[str] = None,
    strict: Optional[bool] = None,
    timeout: Optional[float] = None,
    jobs: Optional[int] = None,
    strategy: Any = "DEFAULT",
    num_cpus: float = 1,
    excludes: Sequence[str] = (),
    on_event: Optional[Callable[[dict[str, Any]], object]] = None,
) -> RunHandle:
    """Starts ``run_plan`` and returns its ``RunHandle`` at once: ``cancel()`` stops it,
    ``result()`` waits for its report. What ``run_plan`` refuses is raised here, before any
    task."""
    proj = _project(project)
    given: Any = plan
    sent: Any = None
    if isinstance(plan, (str, os.PathLike)):
        given, sent = _plan_file(proj, plan)
    ray = _ray()
    _connect(ray, address)
    arguments: list[tuple[str, Any]] = [("the user values", dict(values or {}))]
    arguments.append(("the plan", sent if sent is not None else _plan_given(proj, plan)))
    if resume is not None:
        arguments.append(("the run's kept values", (_kept(proj, resume, "checkpoint.json") or {}).get("values")))
        arguments.append(("the run's plan", _kept(proj, resume, "plan.json")))
    tools = _plan_tools(proj, given, resume)
    scale = proj.scale_out(tools.values())
    env = _prepared(ray, proj, scale, excludes, arguments)
    label = Path(str(plan)).stem if isinstance(plan, (str, os.PathLike)) else "plan"
    executor = Executor(
        ray,
        env,
        run=uuid.uuid4().hex,
        label=label,
        secrets=scale,
        strict=strict,
        max_retries=max_retries,
        strategy=strategy,
        num_cpus=num_cpus,
        nodes_file=Path(proj.root) / NODES_FILE,
        connected=_CONNECTED[0],
    )
    # Until the scheduler first waits, it is starting steps, not waiting on answers: it says
    # when it does (``Executor.answers_awaited``).
    executor.awaited = False

    def run() -> RayRun:
        report = proj.run_plan(
            given,
            values=values,
            jobs=jobs if jobs is not None else MAX_IN_FLIGHT,
            strict=bool(strict),
            timeout=timeout,
            run_id=run_id,
            resume=resume,
            step_executor=executor,
            cancel=executor.flag,
            on_event=on_event,
        )
        out = RayRun(report)
        out["placements"] = executor.placements
        return out

    return RunHandle(executor, run, run_id or resume)


def run_plan(
    project: ProjectLike,
    plan: Union[strata.Plan, str, "os.PathLike[str]", Sequence[Any], Mapping[str, Any], None] = None,
    values: Optional[Mapping[str, Any]] = None,
    *,
    address: Optional[str] = None,
    max_retries: int = 3,
    run_id: Optional[str] = None,
    resume: Optional[str] = None,
    strict: Optional[bool] = None,
    timeout: Optional[float] = None,
    jobs: Optional[int] = None,
    strategy: Any = "DEFAULT",
    num_cpus: float = 1,
    excludes: Sequence[str] = (),
    on_event: Optional[Callable[[dict[str, Any]], object]] = None,
) -> RayRun:
    """Runs ``plan`` (a ``strata.Plan``, a plan file — relative to the project — or a plan
    document) of ``project`` on the Ray cluster at ``address`` (default: the one Ray is
    connected to, else the one ``ray.init()`` finds or starts; another address than the
    connected one is a ``ValueError``; ``ray://`` addresses go through Ray Client), as
    ``strata plan run`` runs it, and returns the report of ``Project.run_plan`` with
    ``placements``.

    Each step is a Ray task (``num_cpus`` each unless the step declares its ``resources``,
    placed by ``strategy``, e.g. ``"SPREAD"``) that runs it through the step operation
    (``Project.plan_step``) on the worker and returns its record; it is retried
    ``max_retries`` times when its worker dies, and as many times as the step declares
    ``retries`` when its tool fails; with the retries exhausted the step fails (kind
    ``tool_failed``) and its dependents are skipped. At most ``jobs`` steps are in flight
    (default: as many as can be). ``on_event`` is called with each event of the run, as
    ``strata plan run --json`` streams them. ``run_id``, ``resume``, ``values``, ``strict``
    and ``timeout`` are those of ``Project.run_plan``; a plan that does not pass the checks
    is refused before any task is submitted. A ``KeyboardInterrupt`` while it waits cancels
    the run (recorded as ``cancelled``: resume it) and goes on; the head node lost, or Ray
    shut down in this process meanwhile, raises ``ClusterLost``."""
    return cast(RayRun, submit_plan(
        project,
        plan,
        values,
        address=address,
        max_retries=max_retries,
        run_id=run_id,
        resume=resume,
        strict=strict,
        timeout=timeout,
        jobs=jobs,
        strategy=strategy,
        num_cpus=num_cpus,
        excludes=excludes,
        on_event=on_event,
    ).wait())


def submit_graph(
    project: ProjectLike,
    graph: str,
    inputs: Optional[Mapping[str, Any]] = None,
    *,
    address: Optional[str] = None,
    max_retries: int = 3,
    run_id: Optional[str] = None,
    resume: Optional[str] = None,
    strict: Optional[bool] = None,
    inputs_text: Optional[Mapping[str, str]] = None,
    strategy: Any = "DEFAULT",
    num_cpus: float = 1,
    excludes: Sequence[str] = (),
    on_part: Optional[Callable[[dict[str, Any]], None]] = None,
) -> RunHandle:
    """Starts ``run_graph`` and returns its ``RunHandle`` at once (``cancel()`` stops the
    walk: the run resumes from its last checkpoint). What ``run_graph`` refuses is raised
    here, before any task."""
    proj = _project(project)
    ray = _ray()
    _connect(ray, address)
    arguments: list[tuple[str, Any]] = [
        ("the graph's inputs", dict(inputs or {})),
        ("the graph's inputs", dict(inputs_text or {})),
    ]
    scale = proj.scale_out([graph])
    env = _prepared(ray, proj, scale, excludes, arguments)
    executor = Executor(
        ray,
        env,
        run=uuid.uuid4().hex,
        label=graph,
        secrets=scale,
        strict=strict,
        max_retries=max_retries,
        strategy=strategy,
        num_cpus=num_cpus,
        nodes_file=Path(proj.root) / NODES_FILE,
        connected=_CONNECTED[0],
    )
    executor.on_part = on_part

    def run() -> RayRun:
        report = proj.run_graph(
            graph,
            None if resume is not None else (inputs or {}),
            run_id=run_id,
            resume=resume,
            strict=bool(strict),
            part_executor=executor.parts(graph),
            inputs_text=None if resume is not None else inputs_text,
        )
        out = RayRun(report)
        out["placements"] = executor.placements
        return out

    return RunHandle(executor, run, run_id or resume)


def run_graph(
    project: ProjectLike,
    graph: str,
    inputs: Optional[Mapping[str, Any]] = None,
    *,
    address: Optional[str] = None,
    max_retries: int = 3,
    run_id: Optional[str] = None,
    resume: Optional[str] = None,
    strict: Optional[bool] = None,
    inputs_text: Optional[Mapping[str, str]] = None,
    strategy: Any = "DEFAULT",
    num_cpus: float = 1,
    excludes: Sequence[str] = (),
    on_part: Optional[Callable[[dict[str, Any]], None]] = None,
) -> RayRun:
    """Runs graph ``graph`` (a tool id such as ``"graphs/words"``) of ``project`` on the Ray
    cluster at ``address``, as ``strata run`` runs it, on the walk in parts — the run's start
    and each step a Ray task (``Project.walk_part`` on the worker), a foreach's list a task
    and its elements tasks in flight together when it is ``parallel``, the checkpoint after
    each step and the run's records here — and returns the report of ``Project.run_graph``
    with ``placements``. A part whose task could not run (its worker lost past
    ``max_retries``, another strata, the run cancelled) stops the run with its error
    (``StrataError``): the run resumes from its last checkpoint; an element's is the
    element's failure. ``on_part`` is called as each part ends (``{"event":
    "part_finished", "part", "at", "index", "ok"}``). ``inputs`` and ``inputs_text`` are
    those of ``Project.run_graph``; the other arguments are those of ``run_plan``."""
    return cast(RayRun, submit_graph(
        project,
        graph,
        inputs,
        address=address,
        max_retries=max_retries,
        run_id=run_id,
        resume=resume,
        strict=strict,
        inputs_text=inputs_text,
        strategy=strategy,
        num_cpus=num_cpus,
        excludes=excludes,
        on_part=on_part,
    ).wait())


def tasks_submitted() -> int:
    """How many Ray tasks ``strata.ray`` has submitted in this process (probes included)."""
    return SUBMITTED[0]
