"""What runs on a Ray worker: a plan's step (``Project.plan_step``) or a part of a graph's walk
(``Project.walk_part``), each in the working directory of its run on that node.

Ray unpacks the project once per node and content into a directory every task of that
package shares, whatever run it belongs to. A run works on a copy of its own instead (a slot
beside Ray's, claimed by the run's first task on the node, given up when the run ends): files
one run writes are never seen by another run. A slot the run left as it was made (the same
entries, modes and bytes as the package) stays as a spare for the package's next run on the
node, which claims it instead of copying again (a copy costs more than the steps of a short
run) and finds the project there open, and its plan admitted, in the processes that served
the last one."""

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

#: The most slots a worker process keeps a project of, and plans admitted there (the last
#: ones it served).
_KEPT = 8

# This process's project in each slot, and each plan admitted there (by the slot, the plan as
# given and its name), once: later steps here, of the run or of the next runs in the slot,
# neither read the plan nor check it again. A slot holds what the package holds whenever a
# run starts in it, so what was admitted there stays true.
_PROJECTS: dict[str, strata.Project] = {}
_PLANS: dict[tuple[str, Any, str], strata.AdmittedPlan] = {}


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
    """The working directory of run ``run`` on this node: a slot, a copy of Ray's copy of the
    project (``strata-slot-<package>-<id>`` beside it) that the run has to itself. The run's
    first task on the node claims a spare slot or copies the package into a new one, under a
    lock (the others wait for it), and names it by the link ``strata-run-<run>``; a slot
    appears whole (renamed into place), so a task never sees half of it."""
    package = Path(os.getcwd())
    link = package.parent / f"strata-run-{run}"
    slot = _linked(link)
    if slot is not None:
        return slot
    with open(package.parent / f".strata-run-{run}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        slot = _linked(link)
        if slot is None:
            slot = _claimed_spare(package) or _new_slot(package)
            os.symlink(slot.name, link)
    return slot


def _linked(link: Path) -> Optional[Path]:
    """The slot ``link`` names, or None when there is no such link."""
    try:
        return link.parent / os.readlink(link)
    except OSError:
        return None


#: The most spare slots kept per package on a node (one per run that may start at once).
_SPARES = 2

#: How a slot's name starts, before its package's name.
_SLOT = "strata-slot-"


def _slots(package: Path) -> list[Path]:
    """The slots of ``package`` on this node, claimed or spare."""
    return sorted(p for p in package.parent.glob(f"{_SLOT}{package.name}-*") if p.is_dir())


def _claim(slot: Path) -> Path:
    """The file whose existence says ``slot`` is some run's."""
    return slot.parent / f".{slot.name}.claimed"


def _claimed_spare(package: Path) -> Optional[Path]:
    """A spare slot of ``package``, now claimed (its claim made exclusively: a spare another
    process claimed first is skipped), or None."""
    for slot in _slots(package):
        try:
            os.close(os.open(_claim(slot), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        except OSError:
            continue
        if slot.is_dir():
            return slot
        _claim(slot).unlink(missing_ok=True)  # removed meanwhile by its last run's cleanup
    return None


def _new_slot(package: Path) -> Path:
    """A new slot holding a copy of ``package``, claimed before it appears."""
    slot = package.parent / f"{_SLOT}{package.name}-{uuid.uuid4().hex}"
    os.close(os.open(_claim(slot), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    part = package.parent / f".{slot.name}.{os.getpid()}"
    try:
        shutil.copytree(package, part, symlinks=True)
        os.rename(part, slot)
    except OSError:
        # The disk full, say: neither half a copy nor a claim of no slot is left behind.
        shutil.rmtree(part, ignore_errors=True)
        _claim(slot).unlink(missing_ok=True)
        raise
    return slot


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


def _kept_as_spare(slot: Path, package: Path) -> bool:
    """True when ``slot``, claimed, stays as a spare of ``package``: fewer than ``_SPARES``
    spares are kept, and, its ``.strata`` (what strata kept for the run there; the package
    never holds one) removed, it holds what the package holds."""
    spares = [s for s in _slots(package) if s != slot and not _claim(s).exists()]
    if not slot.is_dir() or len(spares) >= _SPARES or (package / ".strata").exists():
        return False
    shutil.rmtree(slot / ".strata", ignore_errors=True)
    return _same_tree(str(slot), str(package))


def _forget_stale_slots(parent: Path) -> None:
    """Removes the spare slots of packages Ray removed from this node."""
    for slot in parent.glob(f"{_SLOT}*"):
        package = slot.name[len(_SLOT):].rpartition("-")[0]
        if slot.is_dir() and not (parent / package).is_dir() and not _claim(slot).exists():
            shutil.rmtree(slot, ignore_errors=True)


def _project(run: str) -> tuple[Path, strata.Project]:
    """The slot of run ``run`` and this process's project there, opened once per slot: a
    spare slot holds what the package holds, so the next run there finds it open."""
    slot = run_dir(run)
    project = _PROJECTS.get(str(slot))
    if project is None:
        project = strata.Project(str(slot))
        _keep(_PROJECTS, str(slot), project)
    return slot, project


def cleanup(run: str) -> None:
    """Ends run ``run``'s slot on this node: a spare again when the run left it as it was
    made, else removed (with what this process kept of it)."""
    package = Path(os.getcwd())
    parent = package.parent
    link = parent / f"strata-run-{run}"
    slot = _linked(link)
    link.unlink(missing_ok=True)
    if slot is not None:
        if not _kept_as_spare(slot, package):
            _PROJECTS.pop(str(slot), None)
            for key in [k for k in _PLANS if k[0] == str(slot)]:
                _PLANS.pop(key)
            shutil.rmtree(slot, ignore_errors=True)
        _claim(slot).unlink(missing_ok=True)
    (parent / f".strata-run-{run}.lock").unlink(missing_ok=True)
    _forget_stale_slots(parent)


def _opened(version: str, run: str) -> tuple[dict[str, Any], Any]:
    """Where this task runs, and the slot and project of run ``run`` here — or the task's
    answer when the worker runs another strata or the run's directory cannot be made."""
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
    here, opened = _opened(version, run)
    if isinstance(opened, dict):
        return opened
    slot, project = opened
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


def part(version: str, task: PartTask) -> dict[str, Any]:
    """One part of a graph's walk, refused when the worker's strata is not the driver's
    (``version``); ``task`` holds the run, the graph, the part request and ``strict``.
    Answers ``{"answer"}`` or ``{"error"}``, with the node and process."""
    run, graph, request, strict = task
    here, opened = _opened(version, run)
    if isinstance(opened, dict):
        return opened
    _, project = opened
    try:
        answer = project.walk_part(graph, request, strict=bool(strict))
    except strata.StrataError as e:
        return {"error": error(e.kind, e.message, e.hint), **here}
    return {"answer": answer, **here}
