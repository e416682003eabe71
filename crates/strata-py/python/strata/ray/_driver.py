"""The driver's side: the executor that sends each step of a plan, or each part of a graph's
walk, to a Ray task and hands its answer back to strata; the mapping of a step's declared
resources and retries to the task; the handle of a run under way (``cancel``)."""

from __future__ import annotations

import functools
import importlib
import json
import logging
import os
import pickle
import queue
import socket
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

import strata

from . import _worker
from ._tasks import remote_task, unstarting
from ._worker import error

#: The largest plan, pickled and compressed, that travels with each of its steps' tasks (in
#: bytes; Ray itself sends an argument of up to 100 KiB with the task); a larger one goes to
#: Ray's object store once per run.
INLINE_PLAN = 64 * 1024

#: The tasks submitted by this process (a list, so that executors update it in place).
SUBMITTED = [0]

# The nodes this process found running its strata version: (node id, version).
_CHECKED: set[tuple[str, str]] = set()
_CHECKED_LOCK = threading.Lock()

#: How long this process takes the cluster's list of alive nodes as current, in seconds (asking
#: costs a run a millisecond or two; a node that joins meanwhile is checked by its first task).
NODES_FRESH = 10.0

# The alive nodes, and when the cluster was asked (time.monotonic()).
_NODES: list[Any] = [float("-inf"), []]


def alive_nodes(ray: Any, fresh: float = NODES_FRESH) -> list[str]:
    """The ids of the cluster's alive nodes, as the cluster said at most ``fresh`` seconds
    ago."""
    with _CHECKED_LOCK:
        if time.monotonic() - _NODES[0] > fresh:
            _NODES[1] = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
            _NODES[0] = time.monotonic()
        return list(_NODES[1])


#: Where a project keeps the nodes found running a strata version (node id → version), for
#: the driver processes that follow (``python -m strata.ray`` is one per run): a node id names
#: one start of a node, and every task checks the version again.
NODES_FILE = Path(".strata") / "ray-nodes.json"


def _known_nodes(path: Optional[Path]) -> dict[str, str]:
    """The nodes a driver of the project found running a strata version (none when the file
    is missing or unreadable)."""
    if path is None:
        return {}
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {str(node): str(version) for node, version in known.items()}


def _remember_nodes(path: Optional[Path], nodes: dict[str, str]) -> None:
    """Replaces the project's known nodes with ``nodes`` (atomically; best effort)."""
    if path is None:
        return
    part = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps(nodes, sort_keys=True))
        os.replace(part, path)
    except OSError:
        part.unlink(missing_ok=True)


class VersionMismatch(RuntimeError):
    """A Ray worker runs another strata version than the driver."""


def task_options(request: dict[str, Any], num_cpus: float) -> dict[str, Any]:
    """The Ray task options of a step (or part) request: ``num_cpus`` unless the step
    declares its own ``resources`` — ``num_cpus``, ``num_gpus``, ``memory`` (bytes) and
    ``custom`` resources, each given to Ray as it is declared."""
    out: dict[str, Any] = {"num_cpus": num_cpus}
    declared = request.get("resources") or {}
    if "num_cpus" in declared:
        out["num_cpus"] = float(declared["num_cpus"])
    if "num_gpus" in declared:
        out["num_gpus"] = float(declared["num_gpus"])
    if "memory" in declared:
        out["memory"] = int(declared["memory"])
    if declared.get("custom"):
        out["resources"] = {name: float(n) for name, n in declared["custom"].items()}
    return out


#: What of a step request does not travel to its task: the plan (given apart), what only the
#: driver reads.
_NOT_SENT = ("plan", "resources", "retries", "attempt", "ticket", "after")

#: The error kinds of a graph part whose tool ran and failed.
_TOOL_KINDS = ("tool_failed", "timeout")


def _tool_failed(answer: dict[str, Any]) -> bool:
    """True for the answer of a step, or of a graph part, whose tool ran and failed — in a
    cancelled run, the tool the cancel killed: a step's failed record with a ``run``; a
    foreach element's ``error`` with a ``run``, or an ``advance`` whose node's tool failure
    ended the run."""
    record = answer.get("record")
    if isinstance(record, dict):
        return record.get("status") == "failed" and record.get("run") is not None
    part = answer.get("answer")
    if not isinstance(part, dict):
        return False
    failure = part.get("failure") or part.get("error")
    return isinstance(failure, dict) and (failure.get("run") is not None or failure.get("kind") in _TOOL_KINDS)


#: How often the driver makes sure the cluster's head still answers, in seconds.
_WATCH_EVERY = 1.0


def _head_address(ray: Any, connected: Optional[str] = None) -> Optional[tuple[str, int]]:
    """Where the cluster's head answers, as host and port: its GCS, or through a Ray Client
    the client server it runs — the one strata.ray connected this process to (``connected``),
    else the one Ray Client says it is connected to; None when this process cannot tell."""
    try:
        client: Any = importlib.import_module("ray.util.client")
        if client.ray.is_connected():
            if connected is not None and connected.startswith("ray://"):
                address = connected.split("://", 1)[1].rstrip("/")
            else:
                # Connected by the caller: the address in Ray Client's private `_conn_str`
                # (gone in another Ray: the head is then not watched).
                worker = getattr(client.ray.get_context(), "client_worker", None)
                address = str(getattr(worker, "_conn_str", "") or "")
        else:
            address = str(unstarting(ray.get_runtime_context)().gcs_address or "")
    except Exception:  # noqa: BLE001 - a connection that says nothing of its head
        return None
    host, _, port = address.rpartition(":")
    return (host, int(port)) if host and port.isdigit() else None


def _head_alive(head: Optional[tuple[str, int]]) -> bool:
    """True when the cluster's head still answers on its port (or is not known here)."""
    if head is None:
        return True
    try:
        with socket.create_connection(head, timeout=2):
            return True
    except OSError:
        return False


def _screen(secrets: strata.ScaleOut, plan: Any, values: Any) -> Optional[dict[str, Any]]:
    """The answer of every step of a plan whose text or user values hold a secret value
    (none is submitted), else None."""
    try:
        secrets.check_arguments("the plan", plan)
        secrets.check_arguments("the user values", values)
    except strata.StrataError as e:
        return {"error": error(e.kind, e.message, e.hint)}
    return None


class Executor:
    """Sends each step of a plan, or each part of a graph's walk, to a Ray task and hands its
    answer back to strata; stops them all on ``cancel``."""

    def __init__(
        self,
        ray: Any,
        env: dict[str, Any],
        *,
        run: str,
        label: str,
        secrets: strata.ScaleOut,
        strict: Optional[bool],
        max_retries: int,
        strategy: Any,
        num_cpus: float,
        nodes_file: Optional[Path] = None,
        connected: Optional[str] = None,
    ) -> None:
        self.ray = ray
        #: Where the project keeps the nodes found running a strata version (``NODES_FILE``).
        self.nodes_file = nodes_file
        self.env = env
        self.run = run
        self.label = label
        self.secrets = secrets
        self.screened: Optional[dict[str, Any]] = None
        self.strict = strict
        self.max_retries = max_retries
        self.num_cpus = num_cpus
        self.base = dict(max_retries=max_retries, retry_exceptions=False, scheduling_strategy=strategy)
        self.tasks = {fn: remote_task(ray, fn, env) for fn in (_worker.step, _worker.part)}
        self.lock = threading.Lock()
        self.checked = False
        self.flag = strata.Cancel()
        self.lost: Optional[str] = None
        #: The tasks in flight by key: their reference, ``done``, what they run, placement,
        #: and whether they wait there for other tasks' answers (a step started ahead).
        self.in_flight: dict[int, tuple[Any, Callable[[dict[str, Any]], object], str, dict[str, Any], bool]] = {}
        #: The task of each step request by its ticket (what a step started ahead waits for).
        self.tickets: dict[int, Any] = {}
        self.placements: list[dict[str, Any]] = []
        #: The nodes that answered a task of the run (where it has a working directory), and
        #: whether a task ended without saying where it ran (it raised, or was lost or
        #: cancelled).
        self.nodes: set[str] = set()
        self.unplaced = False
        self.plan: Any = None
        #: What each step's task is given of the plan (``_plan_arg``).
        self.plan_arg: Any = None
        self.on_part: Optional[Callable[[dict[str, Any]], None]] = None
        #: Where the cluster's head answers (``connected``: the address strata.ray connected
        #: this process to, when it did).
        self.head = _head_address(ray, connected)
        #: The Ray job of the connection the run started on (``_job``).
        self.job = _job(ray)
        self.ended = threading.Event()
        #: Whether the run waits on its answers to go on: always for a graph's parts; for a
        #: plan's steps, as ``answers_awaited`` says.
        self.awaited = True

    # -- cancellation --------------------------------------------------------------------

    def cancel(self) -> None:
        """Stops the run: no step starts, the tasks in flight are cancelled (their workers
        killed, their tools with them)."""
        self.flag.cancel()
        with self.lock:
            refs = [entry[0] for entry in self.in_flight.values()]
        for ref in refs:
            try:
                unstarting(self.ray.cancel)(ref, force=True)
            except Exception:  # noqa: BLE001 - a task that already ended
                pass

    def watch(self) -> None:
        """Until the run ends: when Ray was shut down in this process (the collector's wait
        may never return then), or the cluster's head stops answering (Ray would end this
        process a while later, without a word), the run stops."""
        while not self.ended.wait(_WATCH_EVERY):
            if not self.ray.is_initialized():
                self._lose(SHUT_DOWN)
                return
            if not _head_alive(self.head):
                self._lose()
                return
            # Asked last: through Ray Client, the question goes to the head.
            if self.disconnected():
                self._lose(SHUT_DOWN)
                return

    def disconnected(self) -> bool:
        """True once Ray was shut down in this process since the run started (connected again
        or not: its tasks are then never answered)."""
        if not self.ray.is_initialized():
            return True
        job = _job(self.ray)
        # A job not known now: a Ray Client connection in trouble, not another connection.
        return None not in (job, self.job) and job != self.job

    def _stopped(self, what: str) -> dict[str, Any]:
        why = self.lost or "the run was cancelled"
        return {"error": error("cancelled", f"{what} was stopped: {why}")}

    # -- submitting ----------------------------------------------------------------------

    def preflight(self) -> None:
        """Once per run, before its first task: every alive node runs this strata version
        (each node asked once, with a task it prefers — once per process, and not again by
        a later driver of the project while the node's start is the same). A node lost
        meanwhile is not asked (its tasks go elsewhere); another version raises
        ``VersionMismatch``."""
        with self.lock:
            if self.checked:
                return
            ray = self.ray
            strategies: Any = importlib.import_module("ray.util.scheduling_strategies")
            probe = remote_task(ray, _worker.probe, self.env)
            alive = alive_nodes(ray)
            version = strata.__version__
            with _CHECKED_LOCK:
                if any((node, version) not in _CHECKED for node in alive):
                    known = _known_nodes(self.nodes_file)
                    _CHECKED.update((node, version) for node in alive if known.get(node) == version)
                unchecked = [node for node in alive if (node, version) not in _CHECKED]
                refs = [
                    probe.submit(
                        {
                            "num_cpus": 0,
                            "name": "strata:probe",
                            "scheduling_strategy": strategies.NodeAffinitySchedulingStrategy(node_id=node, soft=True),
                        },
                        strata.__version__,
                    )
                    for node in unchecked
                ]
                SUBMITTED[0] += len(refs)
                for ref in refs:
                    try:
                        answer = unstarting(ray.get)(ref)
                    except ray.exceptions.RayError:
                        continue
                    if answer["version"] != strata.__version__:
                        raise VersionMismatch(
                            f"strata version mismatch: the driver runs strata {strata.__version__}, "
                            f"node {answer['node']} runs strata {answer['version']}; install the same "
                            "strata-engine on the driver and every node"
                        )
                    _CHECKED.add((answer["node"], strata.__version__))
                if refs:
                    _remember_nodes(self.nodes_file, {node: version for node in alive if (node, version) in _CHECKED})
            self.checked = True

    def start(
        self,
        fn: Any,
        name: str,
        what: str,
        placement: dict[str, Any],
        options: dict[str, Any],
        done: Callable[[dict[str, Any]], object],
        *args: Any,
        after: Sequence[Any] = (),
        ticket: Optional[int] = None,
    ) -> None:
        """Submits ``fn([version, run, *args, strict], *after)`` as the Ray task ``name`` with
        ``options`` and returns at once; ``done`` is called once with its answer (the task's,
        or ``{"error"}`` when it raised, its worker was lost past the retries, the cluster
        was lost or the run cancelled) as soon as Ray has it — from the process's collector
        thread (``_Collector``), no thread waits for a task. ``after`` are the tasks whose
        answers it waits for there (Ray gives it their answers; a step started ahead),
        ``ticket`` the step request's; ``placement`` says what it ran."""
        if self.flag.cancelled:
            done(self._stopped(what))
            return
        ray = self.ray
        try:
            self.preflight()
            # The task's arguments in one (each argument costs Ray a serialization at either
            # end: 9 µs of the driver's CPU a task), a list of plain values, which Ray packs as
            # MessagePack (a tuple would take its pickler at both ends), the version first; the
            # tasks it waits for apart, where Ray resolves them.
            ref = self.tasks[fn].submit(
                {"name": name, **self.base, **options}, [strata.__version__, self.run, *args, self.strict], *after
            )
        except VersionMismatch as e:
            done({"error": error("invalid", str(e), "install the same strata-engine on the driver and every node")})
            return
        except (ray.exceptions.RayError, ConnectionError) as e:
            done(self._failed(e, what))
            return
        with self.lock:
            SUBMITTED[0] += 1
            self.in_flight[id(ref)] = (ref, done, what, placement, bool(after))
            if ticket is not None:
                self.tickets[ticket] = ref
        if self.flag.cancelled:
            unstarting(ray.cancel)(ref, force=True)
        _COLLECTOR.add(self, id(ref), ref)

    def _ended(self, key: int, read: Callable[[], Any]) -> None:
        """Hands the answer of the task ``key`` (ended: ``read()`` gives its answer, or raises
        what it raised) to its ``done`` — an answer that cannot be read is the step's
        ``spawn`` error (its run goes on)."""
        with self.lock:
            entry = self.in_flight.pop(key, None)
        if entry is None:  # answered already: the cluster was lost
            return
        _, done, what, placement, ahead = entry
        try:
            answer = self._answer(read, what, placement, ahead)
        except Exception as e:  # noqa: BLE001 - whatever came back, the step is answered
            cause = f"{type(e).__name__}: {e}"[:300]
            answer = {"error": error("spawn", f"the answer of the Ray task running {what} could not be read: {cause}")}
        done(answer)

    def _answer(self, read: Callable[[], Any], what: str, placement: dict[str, Any], ahead: bool) -> dict[str, Any]:
        """The answer of a task (ended: ``read()`` gives it) for its ``done``, its placement
        recorded (``ahead``: it waited there for other tasks' answers)."""
        ray = self.ray
        answer: dict[str, Any]
        try:
            answer = read()
        except ray.exceptions.RayTaskError as e:
            self.unplaced = True
            if ahead:
                # A task it waited for failed or was cancelled (or it was): the scheduler
                # hands it over again once the steps it depends on completed (a cancelled
                # run then stops it at once), or skips it.
                answer = {"unrun": True}
            elif self.flag.cancelled:
                answer = self._stopped(what)
            else:
                cause = f"{type(e.cause).__name__}: {e.cause}"[:300]
                answer = {"error": error("spawn", f"the Ray task running {what} raised {cause}")}
        except BaseException as e:  # noqa: BLE001 - a lost worker, a cancelled task: an answer
            self.unplaced = True
            answer = {"unrun": True} if ahead else self._failed(e, what)
        else:
            if isinstance(answer.get("node"), str):
                with self.lock:
                    self.nodes.add(answer["node"])
            if self.flag.cancelled and (_tool_failed(answer) or "error" in answer):
                # Its tool was killed by the cancel before its worker was.
                answer = self._stopped(what)
        if answer.get("unrun"):
            # It ran nowhere: no placement.
            return answer
        with self.lock:
            self.placements.append({**placement, **{k: answer.pop(k, None) for k in ("node", "pid", "task")}})
        return answer

    def _failed(self, e: BaseException, what: str) -> dict[str, Any]:
        """The answer of a task that Ray could not run or lost (``e``): stopped when the run
        was cancelled, Ray shut down in this process or the cluster lost, else its worker
        lost."""
        if self.flag.cancelled:
            return self._stopped(what)
        if not self.ray.is_initialized():
            # Shut down in this process (before the task went to Ray, or while it ran). Asked
            # of this process alone: through Ray Client, `disconnected` asks the head, which
            # may be the thing lost.
            self._lose(SHUT_DOWN)
            return self._stopped(what)
        if not _head_alive(self.head):
            self._lose()
            return self._stopped(what)
        retries = "retried" if self.max_retries else "not retried"
        return {
            "error": error(
                "tool_failed",
                f"the Ray worker running {what} was lost ({type(e).__name__}; {retries}, "
                f"max_retries={self.max_retries})",
                "raise max_retries to retry a step whose worker dies",
            )
        }

    def _lose(self, why: str = "the Ray cluster's head node was lost") -> None:
        """The cluster is gone for this run (``why``: its head lost, or Ray shut down in this
        process): the run stops, and every task in flight is answered as stopped (Ray would
        never answer them)."""
        with self.lock:
            self.lost = self.lost or why
        self.flag.cancel()
        _COLLECTOR.forget(self)
        with self.lock:
            entries = list(self.in_flight.values())
            self.in_flight.clear()
        for _, done, what, _, ahead in entries:
            done({"unrun": True} if ahead else self._stopped(what))

    def submit(
        self, fn: Any, name: str, what: str, placement: dict[str, Any], options: dict[str, Any], *args: Any
    ) -> dict[str, Any]:
        """``start``, waiting for the answer."""
        answers: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.start(fn, name, what, placement, options, answers.put, *args)
        return answers.get()

    def _plan_arg(self, plan: Any) -> Any:
        """What each step's task is given of ``plan``: the plan pickled and compressed, when
        that is at most ``INLINE_PLAN`` bytes (cheaper than any fetch: a plan's steps repeat
        their keys and tools: a chain of 200 steps takes 1.2 KiB); else a list holding the reference
        of the plan put in Ray's object store once (in a list, Ray does not fetch it for each
        task: a worker process fetches it once per run). ``_worker.given_plan`` reads it."""
        packed = zlib.compress(pickle.dumps(plan), 1)
        if len(packed) <= INLINE_PLAN:
            return packed
        return [unstarting(self.ray.put)(plan)]

    def step(self, request: dict[str, Any], done: Callable[[dict[str, Any]], object]) -> None:
        """The step executor of ``Project.run_plan``: one attempt of a whole step, a Ray task
        named ``strata:<plan>/<step>`` given its step and the plan as ``_plan_arg`` says (a
        worker process reads it once per run and keeps it admitted), its answer handed to ``done`` when Ray has it. The scheduler starts a
        step whose tool failed again, as its declared retries allow."""
        step = request["step"]
        plan = request["plan"]
        try:
            with self.lock:
                if plan is not self.plan:
                    self.screened = _screen(self.secrets, plan, request["values"])
                    self.plan, self.plan_arg = plan, self._plan_arg(plan)
                plan_arg = self.plan_arg
        except (self.ray.exceptions.RayError, ConnectionError) as e:
            # A large plan's `put` after `ray.shutdown()` stops the run; another failure of it
            # is the step's, which could not run (the scheduler records why).
            if self.ray.is_initialized():
                raise
            done(self._failed(e, f"step `{step}`"))
            return
        if self.screened is not None:
            done(self.screened)
            return
        attempt = int(request.get("attempt", 1))
        placement: dict[str, Any] = {"step": step}
        if "retries" in request:
            placement.update(attempts=attempt, retries=int(request["retries"]["limit"]))
        rest = {k: v for k, v in request.items() if k not in _NOT_SENT}
        options = task_options(request, self.num_cpus)
        with self.lock:
            after = [self.tickets[t] for t in request.get("after") or ()]
        self.start(
            _worker.step, f"strata:{self.label}/{step}", f"step `{step}`", placement, options, done,
            plan_arg, rest, after=after, ticket=request.get("ticket"),
        )

    #: ``step`` may be given steps whose dependencies still run: it hands their tasks to the
    #: step's task, which Ray gives their answers (``Project.run_plan``'s ``ahead``).
    ahead = True

    def answers_awaited(self, awaited: bool) -> None:
        """Told by ``Project.run_plan`` whether it waits on the answers to start or retry a
        step (``True``), or only for the run to end: the collector then gathers them
        (``_GATHER``) rather than read each as it comes."""
        self.awaited = awaited

    def __call__(self, request: dict[str, Any], done: Callable[[dict[str, Any]], object]) -> None:
        """The step executor of ``Project.run_plan``: ``step``."""
        self.step(request, done)

    def parts(self, graph: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """The part executor of ``Project.run_graph`` for graph ``graph``: one part of its
        walk, a Ray task named ``strata:<graph>/<part>[@node[index]]``, submitted once (the
        walk retries a failing tool inside the task, as its tool declares)."""

        def part(request: dict[str, Any]) -> dict[str, Any]:
            kind = request["part"]
            at = (request.get("walk") or {}).get("node")
            index = request.get("index")
            placement = {"part": kind, "at": at, "index": index}
            what = f"part `{kind}` of graph `{graph}`" + (f" at node `{at}`" if at else "")
            name = f"strata:{graph}/{kind}" + (f"@{at}" if at else "") + (f"[{index}]" if index is not None else "")
            rest = {k: v for k, v in request.items() if k not in ("resources", "retries")}
            options = task_options(request, self.num_cpus)
            answer = self.submit(_worker.part, name, what, placement, options, graph, rest)
            if self.on_part is not None:
                self.on_part({"event": "part_finished", **placement, "ok": "error" not in answer})
            return answer

        return part

    def finish(self) -> None:
        """Ends the run's working directory on each node where a task of the run answered —
        on every alive node when a task ended without saying where it ran (best effort: a
        task per node, not waited for)."""
        ray = self.ray
        if self.lost:
            return
        try:
            strategies: Any = importlib.import_module("ray.util.scheduling_strategies")
            clean = remote_task(ray, _worker.cleanup, self.env)
            with self.lock:
                nodes = sorted(self.nodes)
            if self.unplaced:
                nodes = alive_nodes(ray, fresh=0)
            # Submitted, not waited for: the tasks run whether or not anyone fetches them.
            for node in nodes:
                clean.submit(
                    {
                        "num_cpus": 0,
                        "name": "strata:cleanup",
                        "scheduling_strategy": strategies.NodeAffinitySchedulingStrategy(node_id=node, soft=False),
                    },
                    self.run,
                )
        except Exception:  # noqa: BLE001 - a node gone: its directory went with it
            pass


#: The first wait of the collector after a task was submitted, in seconds; after tasks ended
#: (their dependents may be submitted next), at most ``_AFTER_ANSWER``; it doubles while nothing
#: ends, up to ``_LONGEST_WAIT``. A task submitted by another thread during a wait is waited
#: for from the next one: these bound how late the collector sees it end when it ends first.
_FIRST_WAIT = 0.001
_AFTER_ANSWER = 0.005
_LONGEST_WAIT = 0.05

#: How many of the tasks in flight, the oldest, each wait of the collector is on.
_WINDOW = 8

#: While no run waits on its answers to go on (every step left runs its last attempt) and more
#: than ``_WINDOW`` tasks are in flight, the collector waits for all of them at once, up to this
#: long, in seconds, and reads those that ended together: each wait and read costs Ray's API the
#: same whatever it returns, and the answers then only end the run — their progress lines come
#: at most this late. The last few (the run's end) are read as they come: a long wait of Ray's
#: returns a few milliseconds after its task ended, short ones as it ends.
_GATHER = 0.025


class _Collector:
    """The process's collector: one thread that waits on every task in flight with Ray's
    ``wait`` and hands each answer to its executor, in the order they came.

    Ray could call back when each task ends (``ObjectRef.future()``), but it runs the
    callback — the answer read, Python entered — on the core worker's I/O thread, the thread
    that also starts the tasks waiting for that answer: a chain of steps paid for it between
    each of its steps. Waiting on a thread of strata's own keeps that thread free."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        #: The tasks in flight by key: their executor and reference.
        self.tasks: dict[int, tuple[Executor, Any]] = {}
        #: Bumped at each task added: a wait that began before it did not include it.
        self.added = 0
        self.thread: Optional[threading.Thread] = None

    def add(self, executor: Executor, key: int, ref: Any) -> None:
        """Waits for task ``key`` (its reference ``ref``) of ``executor`` — unless its run lost
        its cluster meanwhile (``forget``)."""
        with self.cond:
            if executor.lost:
                return
            self.tasks[key] = (executor, ref)
            self.added += 1
            if self.thread is None:
                self._start()
            self.cond.notify_all()

    def forget(self, executor: Executor) -> None:
        """Stops waiting for the tasks of ``executor``, whose run answered them all (its
        cluster is gone). Told so by another thread (the run's watch), the collector's thread
        may be in a wait that never returns (Ray shut down under a wait hangs it, now and
        then): it is left to end when its wait returns, if ever, and a new thread waits for
        the tasks in flight and those that come."""
        with self.cond:
            for key in [k for k, (ex, _) in self.tasks.items() if ex is executor]:
                del self.tasks[key]
            if self.thread is not None and self.thread is not threading.current_thread():
                self.thread = None
                self.cond.notify_all()
                if self.tasks:
                    self._start()

    def _start(self) -> None:
        """Starts the collector's thread (``self.cond`` held)."""
        self.thread = threading.Thread(target=self.run, name="strata-ray-answers", daemon=True)
        self.thread.start()

    def run(self) -> None:
        """The collector's loop (its thread's, until another replaces it: ``forget``): waits,
        reads the tasks that ended, hands them over."""
        me = threading.current_thread()
        wait = _FIRST_WAIT
        while True:
            with self.cond:
                while self.thread is me and not self.tasks:
                    self.cond.wait()
                    wait = _FIRST_WAIT
                if self.thread is not me:
                    return
                tasks = list(self.tasks.items())
                added = self.added
            try:
                if len(tasks) > _WINDOW and not any(ex.awaited for _, (ex, _) in tasks):
                    ended = self.gathered(tasks)
                else:
                    ended = self.ended(tasks, wait)
            except BaseException:  # noqa: BLE001 - Ray shut down under a wait raises SystemExit
                if self.thread is not me:
                    return
                if not _shut_down(tasks):
                    # The cluster unreachable a while: wait again.
                    logging.getLogger(__name__).debug("strata.ray: waiting for tasks failed", exc_info=True)
                    time.sleep(wait)
                ended = []
            with self.cond:
                if self.thread is not me:
                    # Replaced while it waited: what it read is the new thread's to hand over.
                    return
                for key, _, _ in ended:
                    self.tasks.pop(key, None)
                if self.added != added:
                    wait = _FIRST_WAIT
                elif ended:
                    wait = min(wait, _AFTER_ANSWER)
                else:
                    wait = min(wait * 2, _LONGEST_WAIT)
            for key, executor, read in ended:
                try:
                    executor._ended(key, read)
                except Exception:  # noqa: BLE001 - the next answers still go through
                    logging.getLogger(__name__).exception("strata.ray: an answer could not be handed over")

    @staticmethod
    def gathered(tasks: list[tuple[int, tuple[Executor, Any]]]) -> list[tuple[int, Executor, Callable[[], Any]]]:
        """The tasks of ``tasks`` that ended within ``_GATHER`` seconds, or all of them as
        soon as they all did — read together, as ``ended`` gives them."""
        ray = tasks[0][1][0].ray
        refs = [ref for _, (_, ref) in tasks]
        ready, _ = unstarting(ray.wait)(refs, num_returns=len(refs), timeout=_GATHER)
        return _read(ray, tasks, ready)

    @staticmethod
    def ended(
        tasks: list[tuple[int, tuple[Executor, Any]]], wait_for: float
    ) -> list[tuple[int, Executor, Callable[[], Any]]]:
        """The tasks of ``tasks`` that ended, once one does within ``wait_for`` seconds: each
        key, executor, and how to read its answer (it raises what its task raised). Each
        wait is on the oldest ``_WINDOW`` tasks (a chain's next step is the oldest; tasks
        mostly end in the order they started), the others looked at when none of those
        ended: a wait costs Ray's ``wait`` its every reference."""
        ray = tasks[0][1][0].ray
        wait = unstarting(ray.wait)
        among = tasks[:_WINDOW]
        refs = [ref for _, (_, ref) in among]
        ready, _ = wait(refs, num_returns=1, timeout=wait_for)
        if not ready and len(tasks) > _WINDOW:
            among = tasks[_WINDOW:]
            refs = [ref for _, (_, ref) in among]
            ready, _ = wait(refs, num_returns=1, timeout=0)
        if not ready:
            return []
        if len(refs) > 1:
            # Every one of them that ended by now, read together.
            ready, _ = wait(refs, num_returns=len(refs), timeout=0)
        return _read(ray, among, ready)


def _read(
    ray: Any, tasks: list[tuple[int, tuple[Executor, Any]]], ready: list[Any]
) -> list[tuple[int, Executor, Callable[[], Any]]]:
    """The tasks of ``tasks`` among ``ready`` (their references), read together: each key,
    executor, and how to read its answer (it raises what its task raised)."""
    if not ready:
        return []
    get = unstarting(ray.get)
    done = set(ready)  # equal to the references given (through a Ray Client, not the same)
    ended = [(key, ex, ref) for key, (ex, ref) in tasks if ref in done]
    try:
        values = get([ref for _, _, ref in ended])
    except Exception:  # noqa: BLE001 - one raised: its executor reads it again, and sees why
        return [(key, ex, functools.partial(get, ref)) for key, ex, ref in ended]
    return [(key, ex, functools.partial(_given, value)) for (key, ex, _), value in zip(ended, values)]


#: Why the runs of this process stop when Ray is shut down under them (``ray.shutdown()``).
SHUT_DOWN = "Ray was shut down in this process"


def _shut_down(tasks: list[tuple[int, tuple[Executor, Any]]]) -> bool:
    """Stops every run among ``tasks`` whose Ray was shut down in this process (Ray would never
    answer its tasks): True when there was one."""
    stopped = False
    for ex in {id(ex): ex for _, (ex, _) in tasks}.values():
        if ex.disconnected():
            ex._lose(SHUT_DOWN)
            stopped = True
    return stopped


def _job(ray: Any) -> Optional[str]:
    """The Ray job of this process's connection to Ray (each connection is a job of its own),
    or None when Ray is not connected (or, through Ray Client, cannot tell now)."""
    try:
        return str(unstarting(ray.get_runtime_context)().get_job_id())
    except Exception:  # noqa: BLE001 - not connected
        return None


def _given(value: Any) -> Any:
    """``value`` (an answer already read)."""
    return value


_COLLECTOR = _Collector()


class ClusterLost(RuntimeError):
    """The Ray cluster's head node was lost during a run, or Ray was shut down in this process
    under it: the run stopped, recorded as cancelled, and resumes (``resume=run_id``) once the
    cluster is back."""

    def __init__(self, message: str, run_id: Optional[str]) -> None:
        super().__init__(message)
        #: The id of the run to resume.
        self.run_id = run_id


class RunHandle:
    """A run under way on the cluster (``submit_plan``, ``submit_graph``): ``cancel()`` stops
    it (its steps cancelled, the run recorded as cancelled and resumable), ``done()`` says
    whether it ended, ``result()`` waits for its report."""

    def __init__(self, executor: Executor, target: Callable[[], Any], run_id: Optional[str]) -> None:
        self._executor = executor
        self._outcome: list[Any] = []
        self._failure: list[BaseException] = []
        #: The run's id, when it was given.
        self.run_id = run_id
        self._thread = threading.Thread(target=self._run, args=(target,), name="strata-ray-run", daemon=True)
        self._thread.start()
        threading.Thread(target=executor.watch, name="strata-ray-watch", daemon=True).start()

    def _run(self, target: Callable[[], Any]) -> None:
        try:
            self._outcome.append(target())
        except BaseException as e:  # noqa: BLE001 - handed to result()
            self._failure.append(e)
        finally:
            # The run has ended: its report is ready while its directories are removed.
            self._executor.ended.set()
            self._executor.finish()

    def cancel(self) -> None:
        """Stops the run: no step starts, the tasks in flight are cancelled."""
        self._executor.cancel()

    @property
    def cancelled(self) -> bool:
        """True once ``cancel()`` was called (or the cluster was lost)."""
        return self._executor.flag.cancelled

    def done(self) -> bool:
        """True once the run ended."""
        return self._executor.ended.is_set()

    def result(self, timeout: Optional[float] = None) -> Any:
        """The run's report once it ended (``TimeoutError`` after ``timeout`` seconds);
        raises what the run raised, or ``ClusterLost`` when the head node was lost (or Ray
        was shut down in this process)."""
        if not self._executor.ended.wait(timeout):
            raise TimeoutError(f"the run did not end within {timeout} s")
        if self._executor.lost:
            report = self._outcome[0] if self._outcome else {}
            run_id = report.get("run_id", self.run_id) if isinstance(report, dict) else self.run_id
            raise ClusterLost(f"{self._executor.lost}; the run stopped", run_id)
        if self._failure:
            raise self._failure[0]
        return self._outcome[0]

    def wait(self) -> Any:
        """``result()``, cancelling the run when the wait is interrupted (Ctrl-C): the steps
        stop, the run is recorded, then the ``KeyboardInterrupt`` goes on."""
        try:
            while not self._executor.ended.wait(0.1):
                pass
        except BaseException:
            self.cancel()
            self._executor.ended.wait()
            self._thread.join()
            raise
        self._thread.join()
        return self.result()
