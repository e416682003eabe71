"""strata.ray: strata's plans and graphs on a Ray cluster.

``run_plan`` and ``run_graph`` run a plan or a graph as ``strata plan run`` and ``strata run``
do — the same checks before anything runs, the same scheduling (a step starts as soon as its
dependencies completed; a foreach's elements in parallel), the same step records and
checkpoints, the run recorded under the project's ``.strata/runs/`` so that ``strata runs
show`` lists it and a killed driver resumes — with the work on the cluster, in Ray's copy of
the project, through strata's application layer:

* each step of a plan is a Ray task running the step operation (``Project.plan_step``, what
  ``strata plan step`` runs: the gate, the arguments resolved from the records of the steps it
  depends on, the tool with the project's limits, secret markers restored from the worker's
  own environment and put back on the tool's stdout) and returning the step's record;
* a graph runs on the walk in parts (``Project.walk_part``, what ``strata walk`` runs): its
  start and each step a Ray task, a foreach's list a task and its elements tasks in flight
  together (up to its ``max_concurrency``, when it is ``parallel``).

The driver (this process) schedules the steps or drives the walk, and alone writes the run's
records and checkpoints.

Only the driver (this process) writes the run's records and checkpoints. The project reaches
the workers through Ray's ``runtime_env`` working directory, without ``.env``, the runs
directory and the other ``DEFAULT_EXCLUDES``; a file that holds the value of a ``.env``
variable is refused before anything is uploaded. Secrets never travel as task arguments or
results: a tool's stdout carries ``%{secret:NAME}`` markers, which the next worker restores
from its own environment.

Ray is an optional dependency: ``pip install "strata-engine[ray]"``. Importing this module
does not import Ray; calling it does. See docs/scale-out.md.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

import strata

__all__ = [
    "DEFAULT_EXCLUDES",
    "RayRun",
    "VersionMismatch",
    "run_graph",
    "run_plan",
    "runtime_env",
    "tasks_submitted",
]

#: What never reaches a worker: the project's secrets (``.env`` and its variants), its runs
#: and caches (``.strata/``), version control and build output.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    ".strata",
    ".git",
    "target",
    "__pycache__",
    "*.pyc",
)

#: The most steps in flight at once (the most ``strata plan run`` runs at once).
MAX_IN_FLIGHT = 256

#: Files larger than this are uploaded without being searched for secret values.
_SCAN_LIMIT = 8 << 20


class VersionMismatch(RuntimeError):
    """A Ray worker runs another strata version than the driver."""


class RayRun(dict[str, Any]):
    """The report of a run (``Project.run_plan``'s or ``Project.run_graph``'s), with
    ``placements``: for each task in the order they finished, the Ray node id and the worker
    process that ran it (``node``, ``pid``) and what it ran — ``{"step": id}`` for a plan's
    step, ``{"part": "begin" | "advance" | "items" | "element", "at": graph node, "index":
    element or None}`` for a part of a graph's walk."""


def _ray() -> Any:
    """The ``ray`` module, or an ImportError that says how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as e:  # pragma: no cover - exercised without the extra
        raise ImportError(
            'strata.ray needs Ray: pip install "strata-engine[ray]"'
        ) from e


def _dotenv_values(root: Path) -> list[str]:
    """The values of the project's ``.env`` (every one is a secret to keep off the wire)."""
    values = []
    try:
        text = (root / ".env").read_text(errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        value = line.split("=", 1)[1].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if len(value) >= 4:
            values.append(value)
    return values


def _excluded(rel: str, patterns: Sequence[str]) -> bool:
    import fnmatch

    parts = rel.split("/")
    for pattern in patterns:
        pattern = pattern.strip("/")
        if "/" in pattern:
            if fnmatch.fnmatch(rel, pattern) or rel.startswith(pattern + "/"):
                return True
        elif any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
    return False


def runtime_env(project: Union[strata.Project, str, os.PathLike[str]], excludes: Sequence[str] = ()) -> dict[str, Any]:
    """The ``runtime_env`` that takes ``project`` to the workers: its directory as the working
    directory, without ``DEFAULT_EXCLUDES`` and ``excludes`` (gitignore-style patterns).

    Raises ``ValueError`` when a file that would be uploaded holds the value of a variable of
    the project's ``.env``: exclude it, or keep the value in ``.env`` only."""
    root = Path(project.root if isinstance(project, strata.Project) else project).resolve()
    patterns = list(DEFAULT_EXCLUDES) + list(excludes)
    secrets = [s.encode() for s in _dotenv_values(root)]
    if secrets:
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            rel_dir = "" if rel_dir == "." else rel_dir + "/"
            dirnames[:] = [d for d in dirnames if not _excluded(rel_dir + d, patterns)]
            for name in filenames:
                rel = rel_dir + name
                if _excluded(rel, patterns):
                    continue
                path = Path(dirpath) / name
                try:
                    if path.stat().st_size > _SCAN_LIMIT:
                        continue
                    data = path.read_bytes()
                except OSError:
                    continue
                if any(s in data for s in secrets):
                    raise ValueError(
                        f"`{rel}` holds the value of a variable of .env: it would be uploaded to "
                        "the Ray workers; exclude it (excludes=[...]) or keep the value in .env"
                    )
    return {"working_dir": str(root), "excludes": patterns}


# ---------------------------------------------------------------------------------------
# On the worker.

_PROJECTS: dict[str, strata.Project] = {}

# Tasks submitted by this process (a list, so that executors update it in place).
_SUBMITTED = [0]

# The nodes this process found running its strata version: (node id, version).
_CHECKED: set[tuple[str, str]] = set()
_CHECKED_LOCK = threading.Lock()


def _error(kind: str, message: str, hint: Optional[str] = None) -> dict[str, Any]:
    error: dict[str, Any] = {"kind": kind, "layer": "request", "message": message, "path": "", "span": None}
    if hint:
        error["hint"] = hint
    return error


def _where() -> dict[str, Any]:
    ray = _ray()
    return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}


def _probe(version: str) -> dict[str, Any]:
    """Runs on a worker: its strata version, node and process."""
    return {"version": strata.__version__, "driver": version, **_where()}


def _mismatch(version: str, where: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The answer of a task whose worker runs another strata than the driver, else None."""
    if version == strata.__version__:
        return None
    return {
        "error": _error(
            "invalid",
            f"strata version mismatch: the driver runs strata {version}, the Ray worker on "
            f"node {where['node']} runs strata {strata.__version__}",
            "install the same strata-engine on the driver and every node",
        ),
        **where,
    }


def _here() -> strata.Project:
    """The project in the task's working directory (Ray's copy), opened once per worker."""
    root = os.getcwd()
    project = _PROJECTS.get(root)
    if project is None:
        project = _PROJECTS[root] = strata.Project(root)
    return project


def _refused(e: strata.StrataError) -> dict[str, Any]:
    """The answer of a task whose work strata refused there."""
    return {"error": _error(e.kind, e.message, e.hint)}


def _step(version: str, request: dict[str, Any], strict: Optional[bool]) -> dict[str, Any]:
    """Runs on a worker, in Ray's copy of the project: one whole step of a plan through the
    step operation (``Project.plan_step``), refused when the worker's strata is not the
    driver's. Answers ``{"record"}`` or ``{"error"}``, with the node and process."""
    where = _where()
    mismatch = _mismatch(version, where)
    if mismatch is not None:
        return mismatch
    try:
        answer = _here().plan_step(
            request["plan"],
            request["step"],
            records=request["records"],
            values=request["values"],
            name=request["name"],
            strict=bool(strict),
            timeout=request["timeout"],
            marks=request["marks"],
        )
    except strata.StrataError as e:
        return {**_refused(e), **where}
    if "record" not in answer:  # the driver gives every value a step runs with
        return {"error": _error("invalid", f"step `{request['step']}` waits for values"), **where}
    return {"record": answer["record"], **where}


def _part(version: str, graph: str, request: dict[str, Any], strict: Optional[bool]) -> dict[str, Any]:
    """Runs on a worker, in Ray's copy of the project: one part of a graph's walk
    (``Project.walk_part``), refused when the worker's strata is not the driver's. Answers
    ``{"answer"}`` or ``{"error"}``, with the node and process."""
    where = _where()
    mismatch = _mismatch(version, where)
    if mismatch is not None:
        return mismatch
    try:
        answer = _here().walk_part(graph, request, strict=bool(strict))
    except strata.StrataError as e:
        return {**_refused(e), **where}
    return {"answer": answer, **where}


# ---------------------------------------------------------------------------------------
# On the driver.


class _Executor:
    """Sends each step of a plan, or each part of a graph's walk, to a Ray task and hands its
    answer back to strata."""

    def __init__(
        self,
        ray: Any,
        env: dict[str, Any],
        *,
        strict: Optional[bool],
        max_retries: int,
        strategy: Any,
        num_cpus: float,
    ) -> None:
        self.ray = ray
        self.strict = strict
        self.max_retries = max_retries
        self.env = env
        self.num_cpus = num_cpus
        options = dict(
            num_cpus=num_cpus,
            max_retries=max_retries,
            retry_exceptions=False,
            scheduling_strategy=strategy,
            runtime_env=env,
        )
        self.tasks = {fn: ray.remote(fn).options(**options) for fn in (_step, _part)}
        self.lock = threading.Lock()
        self.checked = False
        self.placements: list[dict[str, Any]] = []

    def preflight(self) -> None:
        """Once per run, before its first call: every alive node runs this strata version
        (each node is asked once per process, with a task pinned to it)."""
        with self.lock:
            if self.checked:
                return
            ray = self.ray
            strategies = importlib.import_module("ray.util.scheduling_strategies")
            affinity = strategies.NodeAffinitySchedulingStrategy
            probe = ray.remote(_probe)
            with _CHECKED_LOCK:
                unchecked = [
                    n["NodeID"]
                    for n in ray.nodes()
                    if n.get("Alive") and (n["NodeID"], strata.__version__) not in _CHECKED
                ]
                refs = [
                    probe.options(
                        num_cpus=0,
                        scheduling_strategy=affinity(node_id=node, soft=False),
                        runtime_env=self.env,
                    ).remote(strata.__version__)
                    for node in unchecked
                ]
                _SUBMITTED[0] += len(refs)
                for answer in ray.get(refs):
                    if answer["version"] != strata.__version__:
                        raise VersionMismatch(
                            f"strata version mismatch: the driver runs strata {strata.__version__}, "
                            f"node {answer['node']} runs strata {answer['version']}; install the same "
                            "strata-engine on the driver and every node"
                        )
                    _CHECKED.add((answer["node"], strata.__version__))
            self.checked = True

    def submit(self, fn: Any, what: str, placement: dict[str, Any], *args: Any) -> dict[str, Any]:
        """Runs ``fn(version, *args, strict)`` as a Ray task and returns its answer (the
        task's, or ``{"error"}`` when the task raised or its worker was lost);
        ``placement`` says what it ran, for ``placements``."""
        self.preflight()
        ray = self.ray
        with self.lock:
            _SUBMITTED[0] += 1
        ref = self.tasks[fn].remote(strata.__version__, *args, self.strict)
        try:
            answer: dict[str, Any] = ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = f"{type(e.cause).__name__}: {e.cause}"[:300]
            return {"error": _error("spawn", f"the Ray task running {what} raised {cause}")}
        except ray.exceptions.RayError as e:
            retries = "retried" if self.max_retries else "not retried"
            return {
                "error": _error(
                    "tool_failed",
                    f"the Ray worker running {what} was lost ({type(e).__name__}; {retries}, "
                    f"max_retries={self.max_retries})",
                    "raise max_retries to retry a step whose worker dies",
                )
            }
        with self.lock:
            self.placements.append({**placement, "node": answer.pop("node", None), "pid": answer.pop("pid", None)})
        return answer

    def step(self, request: dict[str, Any]) -> dict[str, Any]:
        """The step executor of ``Project.run_plan``: one whole step, a Ray task."""
        step = request["step"]
        return self.submit(_step, f"step `{step}`", {"step": step}, request)

    def parts(self, graph: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """The part executor of ``Project.run_graph`` for graph ``graph``: one part of its
        walk, a Ray task."""

        def part(request: dict[str, Any]) -> dict[str, Any]:
            kind = request["part"]
            at = (request.get("walk") or {}).get("node")
            placement = {"part": kind, "at": at, "index": request.get("index")}
            what = f"part `{kind}` of graph `{graph}`" + (f" at node `{at}`" if at else "")
            return self.submit(_part, what, placement, graph, request)

        return part


def _connect(ray: Any, address: Optional[str]) -> None:
    if ray.is_initialized():
        return
    if address is None:
        ray.init(log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)


# Uploaded packages by what was uploaded: the Ray job (the cluster connection), the
# directory, the excludes and every file's path, size and modification time.
_UPLOADS: dict[tuple[Any, ...], dict[str, Any]] = {}


def _signature(ray: Any, env: dict[str, Any]) -> tuple[Any, ...]:
    root = env["working_dir"]
    patterns = env.get("excludes", [])
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(d for d in dirnames if not _excluded(rel_dir + d, patterns))
        for name in sorted(filenames):
            rel = rel_dir + name
            if _excluded(rel, patterns):
                continue
            try:
                st = os.stat(os.path.join(dirpath, name))
            except OSError:
                continue
            files.append((rel, st.st_size, st.st_mtime_ns))
    # The package lives as long as the job that uploaded it.
    job = ray.get_runtime_context().get_job_id()
    return (job, root, tuple(patterns), tuple(files))


def _uploaded(ray: Any, env: dict[str, Any]) -> dict[str, Any]:
    """``env`` with its working directory uploaded to the cluster (as ``ray.init`` uploads a
    job's): a task's ``runtime_env`` names a package, not a local directory. A directory
    unchanged since this process uploaded it (same files, sizes and times) is not hashed
    again."""
    key = _signature(ray, env)
    cached = _UPLOADS.get(key)
    if cached is not None:
        return dict(cached)
    # What ray.init does with a job's working directory (Ray has no public call for it).
    upload_working_dir_if_needed = importlib.import_module(
        "ray._private.runtime_env.working_dir"
    ).upload_working_dir_if_needed
    scratch = ray._private.worker.global_worker.node.get_runtime_env_dir_path()
    include_gitignore = os.environ.get("RAY_RUNTIME_ENV_IGNORE_GITIGNORE", "0") != "1"
    uploaded: dict[str, Any] = upload_working_dir_if_needed(
        dict(env), include_gitignore=include_gitignore, scratch_dir=scratch
    )
    uploaded.pop("excludes", None)
    _UPLOADS[key] = dict(uploaded)
    return uploaded


def _project(project: Union[strata.Project, str, os.PathLike[str]]) -> strata.Project:
    return project if isinstance(project, strata.Project) else strata.Project(project)


def _plan_file(project: strata.Project, plan: Union[str, os.PathLike[str]]) -> strata.Plan:
    """The plan in file ``plan`` (relative to the project unless it exists as given), named
    as ``strata plan run`` names it in records and errors: relative to the project when the
    file is inside it."""
    path = Path(plan)
    if not path.is_absolute() and not path.exists():
        path = Path(project.root) / path
    try:
        shown = str(path.resolve().relative_to(Path(project.root).resolve()))
        text = path.read_bytes().decode("utf-8")
    except (ValueError, OSError):
        # Outside the project, unreadable or not UTF-8: as strata reads (and refuses) it.
        return strata.Plan.from_file(path)
    return strata.Plan.from_text(text, file=shown)


def _executor(
    project: strata.Project,
    *,
    address: Optional[str],
    strict: Optional[bool],
    max_retries: int,
    strategy: Any,
    num_cpus: float,
    excludes: Sequence[str],
) -> _Executor:
    ray = _ray()
    env = runtime_env(project, excludes)
    _connect(ray, address)
    env = _uploaded(ray, env)
    return _Executor(ray, env, strict=strict, max_retries=max_retries, strategy=strategy, num_cpus=num_cpus)


def run_plan(
    project: Union[strata.Project, str, os.PathLike[str]],
    plan: Union[strata.Plan, str, os.PathLike[str], Sequence[Any], Mapping[str, Any], None] = None,
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
) -> RayRun:
    """Runs ``plan`` (a ``strata.Plan``, a plan file — relative to the project — or a plan
    document) of ``project`` on the Ray cluster at ``address`` (default: the one
    ``ray.init()`` finds or starts), as ``strata plan run`` runs it, and returns the report of
    ``Project.run_plan`` with ``placements``.

    Each step is a Ray task (``num_cpus`` each, placed by ``strategy``, e.g. ``"SPREAD"``)
    that runs it through the step operation (``Project.plan_step``) on the worker and
    returns its record; it is retried ``max_retries`` times when its worker dies; with the
    retries exhausted the step fails (kind ``tool_failed``) and its dependents are skipped.
    At most ``jobs`` steps are in flight (default: as many as can be). ``run_id``,
    ``resume``, ``values``, ``strict`` and ``timeout`` are those of ``Project.run_plan``; a
    plan that does not pass the checks is refused before any task is submitted."""
    proj = _project(project)
    given: Any = _plan_file(proj, plan) if isinstance(plan, (str, os.PathLike)) else plan
    executor = _executor(
        proj,
        address=address,
        strict=strict,
        max_retries=max_retries,
        strategy=strategy,
        num_cpus=num_cpus,
        excludes=excludes,
    )
    report = proj.run_plan(
        given,
        values=values,
        jobs=jobs if jobs is not None else MAX_IN_FLIGHT,
        strict=bool(strict),
        timeout=timeout,
        run_id=run_id,
        resume=resume,
        step_executor=executor.step,
    )
    out = RayRun(report)
    out["placements"] = executor.placements
    return out


def run_graph(
    project: Union[strata.Project, str, os.PathLike[str]],
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
) -> RayRun:
    """Runs graph ``graph`` (a tool id such as ``"graphs/words"``) of ``project`` on the Ray
    cluster at ``address``, as ``strata run`` runs it, on the walk in parts — the run's start
    and each step a Ray task (``Project.walk_part`` on the worker), a foreach's list a task
    and its elements tasks in flight together when it is ``parallel``, the checkpoint after
    each step and the run's records here — and returns the report of ``Project.run_graph``
    with ``placements``. A part whose task could not run (its worker lost past
    ``max_retries``, another strata) stops the run with its error (``StrataError``): the run
    resumes from its last checkpoint; an element's is the element's failure.
    ``inputs`` and ``inputs_text`` are those of ``Project.run_graph``; the other arguments
    are those of ``run_plan``."""
    proj = _project(project)
    executor = _executor(
        proj,
        address=address,
        strict=strict,
        max_retries=max_retries,
        strategy=strategy,
        num_cpus=num_cpus,
        excludes=excludes,
    )
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


def tasks_submitted() -> int:
    """How many Ray tasks ``strata.ray`` has submitted in this process (probes included)."""
    return _SUBMITTED[0]
