"""What runs on a Ray worker: a plan's step (``Project.plan_step``) or a part of a graph's walk
(``Project.walk_part``), each in the working directory of its run on that node.

Ray unpacks the project once per node and content into a directory every task of that
package shares, whatever run it belongs to. A run works on a copy of its own instead
(``strata-run-<run>`` beside Ray's, made by the run's first task on the node, removed when
the run ends): files one run writes are never seen by another run. A copy the run left as
it was made (the same entries, modes and bytes as the package) is kept as a spare for the
package's next run on the node, which takes it instead of copying again (a copy costs more
than the steps of a short run)."""

from __future__ import annotations

import fcntl
import importlib
import os
import pickle
import shutil
import stat
import uuid
import zlib
from pathlib import Path
from typing import Any, Optional

import strata

#: The most runs a worker process keeps a project and a plan of (the runs it served last).
_KEPT = 8

# This process's project of each run (by its working directory), and the plan of each run,
# admitted once: a run's later steps here neither read the plan nor check it again.
_PROJECTS: dict[str, strata.Project] = {}
_PLANS: dict[str, strata.AdmittedPlan] = {}


def _keep(kept: dict[str, Any], key: str, value: Any) -> None:
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


def where() -> dict[str, Any]:
    """The node, the process and the Ray task this runs in."""
    # Through importlib, as everywhere in strata.ray: Ray is an optional dependency, and
    # the package type-checks without it.
    ray: Any = importlib.import_module("ray")
    context = ray.get_runtime_context()
    return {"node": context.get_node_id(), "pid": os.getpid(), "task": context.get_task_name()}


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
    """The working directory of run ``run`` on this node: a copy of Ray's copy of the
    project, made once — the run's first task on the node takes a spare (``cleanup``) or
    copies the package under a lock, the others wait for it — and put in place whole
    (renamed), so a task never sees half of it."""
    package = Path(os.getcwd())
    target = package.parent / f"strata-run-{run}"
    if target.is_dir():
        return target
    with open(package.parent / f".strata-run-{run}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_dir() and not _took_spare(package, target):
            part = package.parent / f".strata-run-{run}.{os.getpid()}"
            shutil.copytree(package, part, symlinks=True)
            os.rename(part, target)
    return target


#: The most spares kept per package on a node (one per run that may start at once).
_SPARES = 2

#: How a spare's name starts, before its package's name.
_SPARE = "strata-spare-"


def _spares(package: Path) -> list[Path]:
    """The spare copies of ``package`` on this node."""
    return sorted(package.parent.glob(f"{_SPARE}{package.name}-*"))


def _took_spare(package: Path, target: Path) -> bool:
    """True when a spare copy of ``package`` became ``target`` (renamed: a spare another
    process took first is skipped)."""
    for spare in _spares(package):
        try:
            os.rename(spare, target)
            return True
        except OSError:
            continue
    return False


def _same_tree(copy: str, package: str) -> bool:
    """True when ``copy`` holds exactly what ``package`` holds: the same entries, each of the
    same kind and mode; files of the same bytes and modification time (a copy keeps the
    package's), linked nowhere else; links to the same targets."""
    try:
        theirs = {e.name: e for e in os.scandir(package)}
        ours = {e.name: e for e in os.scandir(copy)}
    except OSError:
        return False
    if theirs.keys() != ours.keys():
        return False
    for name, entry in theirs.items():
        mine = ours[name]
        a, b = entry.stat(follow_symlinks=False), mine.stat(follow_symlinks=False)
        if a.st_mode != b.st_mode:
            return False
        if stat.S_ISLNK(a.st_mode):
            if os.readlink(entry.path) != os.readlink(mine.path):
                return False
        elif stat.S_ISDIR(a.st_mode):
            if not _same_tree(mine.path, entry.path):
                return False
        elif stat.S_ISREG(a.st_mode):
            if (b.st_nlink, b.st_size, b.st_mtime_ns) != (1, a.st_size, a.st_mtime_ns) or not _same_bytes(
                entry.path, mine.path
            ):
                return False
        else:
            return False
    return True


def _same_bytes(a: str, b: str) -> bool:
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            chunk = x.read(1 << 16)
            if chunk != y.read(1 << 16):
                return False
            if not chunk:
                return True


def _kept_as_spare(target: Path, package: Path) -> bool:
    """True when run directory ``target`` became a spare of ``package``: fewer than
    ``_SPARES`` are kept, and, its ``.strata`` (what strata kept for the run there; the
    package never holds one) removed, it holds what the package holds."""
    if not target.is_dir() or len(_spares(package)) >= _SPARES or (package / ".strata").exists():
        return False
    shutil.rmtree(target / ".strata", ignore_errors=True)
    if not _same_tree(str(target), str(package)):
        return False
    try:
        os.rename(target, package.parent / f"{_SPARE}{package.name}-{uuid.uuid4().hex}")
    except OSError:
        return False
    return True


def _forget_stale_spares(parent: Path) -> None:
    """Removes the spares of packages Ray removed from this node."""
    for spare in parent.glob(f"{_SPARE}*"):
        package = spare.name[len(_SPARE):].rpartition("-")[0]
        if not (parent / package).is_dir():
            shutil.rmtree(spare, ignore_errors=True)


def _project(run: str) -> strata.Project:
    root = str(run_dir(run))
    project = _PROJECTS.get(root)
    if project is None:
        project = strata.Project(root)
        _keep(_PROJECTS, root, project)
    return project


def cleanup(run: str) -> None:
    """Ends run ``run``'s working directory on this node: kept as a spare when the run left
    it as it was made, else removed."""
    package = Path(os.getcwd())
    parent = package.parent
    target = parent / f"strata-run-{run}"
    _PROJECTS.pop(str(target), None)
    _PLANS.pop(run, None)
    if not _kept_as_spare(target, package):
        shutil.rmtree(target, ignore_errors=True)
    (parent / f".strata-run-{run}.lock").unlink(missing_ok=True)
    _forget_stale_spares(parent)


def _opened(version: str, run: str) -> tuple[dict[str, Any], Any]:
    """Where this task runs, and the project of run ``run`` here — or the task's answer when
    the worker runs another strata or the run's directory cannot be made."""
    here = where()
    mismatch = _mismatch(version, here)
    if mismatch is not None:
        return here, mismatch
    try:
        return here, _project(run)
    except OSError as e:
        return here, {"error": error("io", f"cannot make the run's working directory on node {here['node']}: {e}"), **here}


def given_plan(plan: Any) -> Any:
    """The plan a step's task was given (``_driver.Executor._plan_arg``): unpacked (``plan``:
    its bytes, pickled and compressed), or fetched from Ray's object store (``plan``: a list
    holding its reference)."""
    if isinstance(plan, bytes):
        return pickle.loads(zlib.decompress(plan))
    ray: Any = importlib.import_module("ray")
    return ray.get(plan[0])


def _admitted(project: strata.Project, run: str, plan: Any, name: str) -> strata.AdmittedPlan:
    """Run ``run``'s plan, admitted by ``project``: read (``given_plan``) and admitted by the
    run's first step in this process, kept for the others."""
    admitted = _PLANS.get(run)
    if admitted is None:
        admitted = project.admit_plan(given_plan(plan), name=name)
        _keep(_PLANS, run, admitted)
    return admitted


#: What a step's task is given besides the driver's version: the run, the plan (as
#: ``given_plan`` reads it), the step request and ``strict``.
StepTask = tuple[str, Any, dict[str, Any], Optional[bool]]

#: What a part's task is given besides the driver's version: the run, the graph, the part
#: request and ``strict``.
PartTask = tuple[str, str, dict[str, Any], Optional[bool]]


def step(version: str, task: StepTask, *after: Any) -> dict[str, Any]:
    """One whole step of a plan through the step operation, refused when the worker's strata
    is not the driver's (``version``). ``task`` holds the run, the plan — pickled and
    compressed, or a list holding its reference in Ray's object store (read once per run by
    this process) —, the step request and ``strict``. ``after`` are the answers of the steps
    it was started ahead of: it runs with their records when each completed, else answers
    ``{"unrun"}``. Answers ``{"record"}`` or ``{"error"}``, with the node and process."""
    run, plan, request, strict = task
    here, project = _opened(version, run)
    if isinstance(project, dict):
        return project
    records = list(request["records"])
    for answer in after:
        record = answer.get("record") if isinstance(answer, dict) else None
        if not isinstance(record, dict) or record.get("status") != "completed":
            return {"unrun": True, **here}
        records.append(record)
    try:
        answer = project.plan_step(
            _admitted(project, run, plan, request["name"]),
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


def part(version: str, task: PartTask) -> dict[str, Any]:
    """One part of a graph's walk, refused when the worker's strata is not the driver's
    (``version``); ``task`` holds the run, the graph, the part request and ``strict``.
    Answers ``{"answer"}`` or ``{"error"}``, with the node and process."""
    run, graph, request, strict = task
    here, project = _opened(version, run)
    if isinstance(project, dict):
        return project
    try:
        answer = project.walk_part(graph, request, strict=bool(strict))
    except strata.StrataError as e:
        return {"error": error(e.kind, e.message, e.hint), **here}
    return {"answer": answer, **here}
