"""What runs on a Ray worker: a plan's step (``Project.plan_step``) or a part of a graph's walk
(``Project.walk_part``), each in the working directory of its run on that node.

Ray unpacks the project once per node and content into a directory every task of that
package shares, whatever run it belongs to. A run works on a copy of its own instead (a slot
beside Ray's, claimed by the run's first task on the node, given up when the run ends): files
one run writes are never seen by another run. A slot the run left as it was made (the same
entries, modes and bytes as the package) stays as a spare for the package's next run on the
node, which claims it instead of copying again (a copy costs more than the steps of a short
run) and finds the project there open, and its plan admitted, in the processes that served
the last one. The slots are strata's (``strata.RunSlots``), the caches of this process
here."""

from __future__ import annotations

import importlib
import os
import pickle
import zlib
from pathlib import Path
from typing import Any, Optional

import strata

#: The most slots a worker process keeps a project of, and plans admitted there (the last
#: ones it served).
_KEPT = 8

# This process's project in each slot, and each plan admitted there (by the slot, the plan as
# given and its name), once: later steps here, of the run or of the next runs in the slot,
# neither read the plan nor check it again. A slot holds what the package holds whenever a
# run starts in it, so what was admitted there stays true.
_PROJECTS: dict[str, strata.Project] = {}
_PLANS: dict[tuple[str, Any, str], strata.AdmittedPlan] = {}

# The slot and project of each run this process served (the last ones): a run's slot is its
# own until the run ends — the driver ends it (`cleanup`) once every task of the run has
# answered, and a run's id is never used again —, so the run's later tasks here find it
# without asking the node again.
_RUNS: dict[str, tuple[Path, strata.Project]] = {}


def _keep(kept: dict[Any, Any], key: Any, value: Any) -> None:
    """Keeps ``value`` under ``key``, forgetting the oldest beyond ``_KEPT``."""
    kept[key] = value
    while len(kept) > _KEPT:
        kept.pop(next(iter(kept)))


def error(kind: str, message: str, hint: Optional[str] = None) -> dict[str, Any]:
    """An error in strata's JSON form (layer ``request``)."""
    out: dict[str, Any] = {"kind": kind, "layer": "request", "message": message, "path": "", "span": None}
    if hint:
        out["hint"] = hint
    return out


# This process's Ray runtime context, its node and its pid, read by its first task: they
# stay while the process lives, and each read costs a task tens of microseconds after its
# tool ran (caches cold).
_PLACE: list[Any] = []


def where() -> dict[str, Any]:
    """The node, the process and the Ray task this runs in."""
    if not _PLACE:
        # Through importlib, as everywhere in strata.ray: Ray is an optional dependency,
        # and the package type-checks without it.
        ray: Any = importlib.import_module("ray")
        context = ray.get_runtime_context()
        _PLACE.extend((context, context.get_node_id(), os.getpid()))
    context, node, pid = _PLACE
    return {"node": node, "pid": pid, "task": context.get_task_name()}


def probe(version: str) -> dict[str, Any]:
    """The worker's strata version, node and process."""
    return {"version": strata.__version__, "driver": version, **where()}


def _mismatch(version: str, here: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The answer of a task whose worker runs another strata than the driver, else None."""
    if version == strata.__version__:
        return None
    return {
        "error": error(
            "invalid",
            f"strata version mismatch: the driver runs strata {version}, the Ray worker on "
            f"node {here['node']} runs strata {strata.__version__}",
            "install the same strata-engine on the driver and every node",
        ),
        **here,
    }


def run_dir(run: str) -> Path:
    """The working directory of run ``run`` on this node: a slot, a copy of Ray's copy of the
    project (the current directory, its package) that the run has to itself, made or claimed
    by the run's first task here (``strata.RunSlots``: the rule of when a slot may serve
    another run is strata's)."""
    return Path(strata.RunSlots(os.getcwd()).enter(run))


def _project(run: str) -> tuple[Path, strata.Project]:
    """The slot of run ``run`` and this process's project there: the slot found or made by
    the run's first task in this process, the project opened once per slot (a spare slot
    holds what the package holds, so the next run there finds it open)."""
    opened = _RUNS.get(run)
    if opened is None:
        slot = run_dir(run)
        project = _PROJECTS.get(str(slot))
        if project is None:
            project = strata.Project(str(slot))
            _keep(_PROJECTS, str(slot), project)
        opened = (slot, project)
        _keep(_RUNS, run, opened)
    return opened


def cleanup(run: str) -> None:
    """Ends run ``run``'s slot on this node: a spare again when the run left it as it was
    made, else removed (with what this process kept of it)."""
    _RUNS.pop(run, None)
    left = strata.RunSlots(os.getcwd()).leave(run)
    if left is not None and not left[1]:
        slot = left[0]
        _PROJECTS.pop(slot, None)
        for key in [k for k in _PLANS if k[0] == slot]:
            _PLANS.pop(key)


def _opened(task: Any) -> tuple[dict[str, Any], Any]:
    """Where task ``task`` runs, and the slot and project of its run here — or the task's
    answer when the worker runs another strata than the driver or the run's directory cannot
    be made. The driver's version (``task[0]``) is read before anything else of the task,
    whose shape another version may change (an earlier driver sent it as an argument of its
    own: ``task`` is then that version, a string)."""
    here = where()
    mismatch = _mismatch(task if isinstance(task, str) else task[0], here)
    if mismatch is not None:
        return here, mismatch
    run = task[1]
    try:
        return here, _project(run)
    except strata.StrataError as e:
        return here, {"error": error(e.kind, f"on node {here['node']}: {e.message}", e.hint), **here}
    except OSError as e:  # the package itself gone (its directory, the process's current one)
        message = f"on node {here['node']}: cannot make run {run}'s working directory: {e}"
        return here, {"error": error("io", message), **here}


def given_plan(plan: Any) -> Any:
    """The plan a step's task was given (``_driver.Executor._plan_arg``): unpacked (``plan``:
    its bytes, pickled and compressed), or fetched from Ray's object store (``plan``: a list
    holding its reference)."""
    if isinstance(plan, bytes):
        return pickle.loads(zlib.decompress(plan))
    ray: Any = importlib.import_module("ray")
    return ray.get(plan[0])


def _admitted(slot: Path, project: strata.Project, run: str, plan: Any, name: str) -> strata.AdmittedPlan:
    """Run ``run``'s plan, admitted by ``project`` in ``slot``: read (``given_plan``) and
    admitted by the first step in this process given the same plan there — of this run, or
    of an earlier run given its bytes; a plan from the object store, of this run —, kept for
    the others."""
    key = (str(slot), plan if isinstance(plan, bytes) else run, name)
    admitted = _PLANS.get(key)
    if admitted is None:
        admitted = project.admit_plan(given_plan(plan), name=name)
        _keep(_PLANS, key, admitted)
    return admitted


#: What a step's task is given, in one list (one argument: each costs Ray a serialization at
#: either end): the driver's strata version, the run, the plan (as ``given_plan`` reads it),
#: the step request and ``strict``.
StepTask = list[Any]

#: What a part's task is given, in one list: the driver's strata version, the run, the graph,
#: the part request and ``strict``.
PartTask = list[Any]


def step(task: StepTask, *after: Any) -> dict[str, Any]:
    """One whole step of a plan through the step operation, refused when the worker's strata
    is not the driver's. ``task`` holds the driver's version, the run, the plan — pickled and
    compressed, or a list holding its reference in Ray's object store (read once per run by
    this process) —, the step request and ``strict``. ``after`` are the answers of the steps
    it was started ahead of: it runs with their records when each completed, else answers
    ``{"unrun"}``. Answers ``{"record"}`` or ``{"error"}``, with the node and process."""
    here, opened = _opened(task)
    if isinstance(opened, dict):
        return opened
    slot, project = opened
    _, run, plan, request, strict = task
    records = list(request["records"])
    for answer in after:
        record = answer.get("record") if isinstance(answer, dict) else None
        if not isinstance(record, dict) or record.get("status") != "completed":
            return {"unrun": True, **here}
        records.append(record)
    try:
        answer = project.plan_step(
            _admitted(slot, project, run, plan, request["name"]),
            request["step"],
            records=records,
            values=request["values"],
            strict=bool(strict),
            timeout=request["timeout"],
            marks=request["marks"],
        )
    except strata.StrataError as e:
        return {"error": error(e.kind, e.message, e.hint), **here}
    if "record" not in answer:  # the driver gives every value a step runs with
        return {"error": error("invalid", f"step `{request['step']}` waits for values"), **here}
    return {"record": answer["record"], **here}


def part(task: PartTask) -> dict[str, Any]:
    """One part of a graph's walk, refused when the worker's strata is not the driver's;
    ``task`` holds the driver's version, the run, the graph, the part request and ``strict``.
    Answers ``{"answer"}`` or ``{"error"}``, with the node and process."""
    here, opened = _opened(task)
    if isinstance(opened, dict):
        return opened
    _, project = opened
    _, _, graph, request, strict = task
    try:
        answer = project.walk_part(graph, request, strict=bool(strict))
    except strata.StrataError as e:
        return {"error": error(e.kind, e.message, e.hint), **here}
    return {"answer": answer, **here}
