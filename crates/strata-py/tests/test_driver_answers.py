"""The driver's collector (``strata.ray._driver._Collector``) waits on the tasks in flight with
Ray's ``wait`` on a thread of its own and answers every task it is given — in the order they
end, one whose answer cannot be read included (a step never answered would hang its run), one
that ends first though it was submitted while the collector waited on others. Ray is not
needed: the executor is given a stand-in whose tasks end when a test says so."""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from types import SimpleNamespace
from typing import Any, Optional, cast

import pytest

from strata.ray import _driver


class RayError(Exception):
    """The stand-in of Ray's errors."""


class RayTaskError(RayError):
    """The stand-in of Ray's error of a task that raised ``cause``."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class Ref:
    """A task's reference: it ends (with a value, or raising) when ``end`` is called."""

    def __init__(self, name: str) -> None:
        self.name = name  # hashed and compared as itself, as Ray's references are
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None

    def end(self, value: Any = None, error: Optional[BaseException] = None) -> None:
        self.value, self.error = value, error
        self.done.set()


class StandIn:
    """What the executor and the collector use of Ray: ``wait`` (each call counted, with how
    many references it was given, and noted with how many it was to return and its timeout)
    and ``get``."""

    exceptions = SimpleNamespace(RayError=RayError, RayTaskError=RayTaskError)

    def __init__(self) -> None:
        self.waits: list[int] = []
        self.calls: list[tuple[int, int, float]] = []
        self.up = True
        #: Set by ``shutdown(hang=True)``: a wait under way then returns once this is set.
        self.released: Optional[threading.Event] = None
        #: The Ray job of the connection.
        self.job = 1

    def is_initialized(self) -> bool:
        return self.up

    def shutdown(self, hang: bool = False) -> None:
        """As ``ray.shutdown()``: every later wait raises what Ray's raises then; so does a
        wait under way — or, with ``hang``, as Ray's now and then, it returns only once
        ``release()`` is called."""
        if hang:
            self.released = threading.Event()
        self.up = False

    def connect_again(self) -> None:
        """As ``ray.init()`` after ``shutdown()``: a connection of a job of its own."""
        self.job += 1
        self.up = True

    def release(self) -> None:
        """The waits hung by ``shutdown(hang=True)`` return."""
        assert self.released is not None
        self.released.set()

    @staticmethod
    def remote(**options: Any) -> Any:
        return lambda fn: fn

    def get_runtime_context(self) -> Any:
        if not self.up:
            raise RuntimeError("Ray has not been started yet")
        return SimpleNamespace(gcs_address="", get_job_id=lambda: f"{id(self):x}-{self.job}")

    def wait(self, refs: list[Ref], num_returns: int, timeout: float) -> tuple[list[Ref], list[Ref]]:
        if not self.up:
            raise SystemExit(0)
        self.waits.append(len(refs))
        self.calls.append((len(refs), num_returns, timeout))
        deadline = time.monotonic() + timeout
        while True:
            if not self.up or self.released is not None:
                if self.released is not None:
                    self.released.wait()
                raise SystemExit(0)
            ready = [r for r in refs if r.done.is_set()][:num_returns]
            if len(ready) == num_returns or time.monotonic() >= deadline:
                return ready, [r for r in refs if r not in ready]
            time.sleep(0.0002)

    def put(self, value: Any) -> Ref:
        if not self.up:
            raise RayError("Ray has not been started yet")
        ref = Ref("put")
        ref.end(value)
        return ref

    @staticmethod
    def get(refs: Any) -> Any:
        if isinstance(refs, list):
            return [StandIn.get(ref) for ref in refs]
        if refs.error is not None:
            raise refs.error
        return refs.value


def executor(ray: StandIn) -> _driver.Executor:
    """An executor of a run nothing was submitted for."""
    return _driver.Executor(
        ray, {}, run="r", label="p", secrets=cast(Any, None), strict=None, max_retries=0, strategy=None, num_cpus=1.0
    )


#: Where a test's steps' answers go, each with its step's name.
Answers = queue.SimpleQueue[tuple[str, dict[str, Any]]]


def run() -> tuple[StandIn, _driver.Executor, Answers]:
    """A stand-in Ray, an executor on it, and where its steps' answers go."""
    ray = StandIn()
    return ray, executor(ray), queue.SimpleQueue()


def in_flight(ex: _driver.Executor, ref: Ref, answers: Answers) -> None:
    """``ref`` in flight for ``ex``: its step's answer goes to ``answers``, named."""
    ex.in_flight[id(ref)] = (ref, lambda answer: answers.put((ref.name, answer)), f"step `{ref.name}`", {"step": ref.name}, False)
    _driver._COLLECTOR.add(ex, id(ref), ref)


def completed(task: str) -> dict[str, Any]:
    """A completed step's answer from node ``n1``, Ray task ``task``."""
    return {"record": {"status": "completed"}, "node": "n1", "pid": 7, "task": task}


#: The answer of step `a`, stopped because Ray was shut down in the process.
SHUT_DOWN_ANSWER = {
    "error": {
        "kind": "cancelled",
        "layer": "request",
        "message": "step `a` was stopped: Ray was shut down in this process",
        "path": "",
        "span": None,
    }
}


def test_an_answer_that_cannot_be_read_is_its_steps_spawn_error_and_the_next_answers_go_through() -> None:
    _, ex, answers = run()
    a, b = Ref("a"), Ref("b")
    in_flight(ex, a, answers)
    in_flight(ex, b, answers)
    a.end(["not", "a", "record"])
    assert answers.get(timeout=10) == (
        "a",
        {
            "error": {
                "kind": "spawn",
                "layer": "request",
                "message": "the answer of the Ray task running step `a` could not be read: AttributeError: 'list' "
                "object has no attribute 'get'",
                "path": "",
                "span": None,
            }
        },
    )
    b.end(completed("t"))
    assert answers.get(timeout=10) == ("b", {"record": {"status": "completed"}})
    assert ex.placements == [{"step": "b", "node": "n1", "pid": 7, "task": "t"}]
    assert ex.nodes == {"n1"}
    assert ex.in_flight == {}


def test_a_task_that_raised_is_answered_with_what_it_raised() -> None:
    _, ex, answers = run()
    a = Ref("a")
    in_flight(ex, a, answers)
    a.end(error=RayTaskError(ValueError("boom")))
    name, answer = answers.get(timeout=10)
    assert name == "a"
    assert answer == {
        "error": {
            "kind": "spawn",
            "layer": "request",
            "message": "the Ray task running step `a` raised ValueError: boom",
            "path": "",
            "span": None,
        }
    }


def test_tasks_are_answered_in_the_order_they_end_each_wait_on_the_oldest_few() -> None:
    ray, ex, answers = run()
    refs = [Ref(f"s{i}") for i in range(20)]
    for ref in refs:
        in_flight(ex, ref, answers)
    # The youngest ends first, outside the oldest eight the collector waits on; then the
    # oldest, then the others.
    order = [refs[19], refs[0], *refs[1:19]]
    for ref in order:
        ref.end(completed(ref.name))
        assert answers.get(timeout=10)[0] == ref.name
    assert max(ray.waits) == 12  # the eight oldest, or the others: never all twenty at once
    assert ex.in_flight == {}


def test_a_task_submitted_while_the_collector_waits_on_others_is_answered_when_it_ends_first() -> None:
    _, ex, answers = run()
    slow = Ref("slow")
    in_flight(ex, slow, answers)
    time.sleep(0.3)  # the collector's waits on `slow` alone have grown to the longest
    quick = Ref("quick")
    in_flight(ex, quick, answers)
    quick.end(completed("t"))
    assert answers.get(timeout=10)[0] == "quick"
    slow.end(completed("t"))
    assert answers.get(timeout=10)[0] == "slow"


def test_ray_shut_down_under_a_run_stops_it_and_the_collector_goes_on() -> None:
    ray, ex, answers = run()
    a = Ref("a")
    in_flight(ex, a, answers)
    ray.shutdown()
    assert answers.get(timeout=10) == ("a", SHUT_DOWN_ANSWER)
    assert ex.lost == "Ray was shut down in this process" and ex.flag.cancelled
    assert ex.in_flight == {}
    # The collector survived what Ray raised: a run on a Ray connected again is answered.
    _, again, later = run()
    b = Ref("b")
    in_flight(again, b, later)
    b.end(completed("t"))
    assert later.get(timeout=10) == ("b", {"record": {"status": "completed"}})


def test_ray_shut_down_under_a_wait_that_never_returns_stops_the_run_and_a_new_collector_goes_on() -> None:
    ray, ex, answers = run()
    a = Ref("a")
    in_flight(ex, a, answers)
    time.sleep(0.05)  # the collector waits on `a`
    stuck = _driver._COLLECTOR.thread
    ray.shutdown(hang=True)
    # The run's watch, as ``RunHandle`` starts it, sees Ray shut down.
    threading.Thread(target=ex.watch, daemon=True).start()
    assert answers.get(timeout=10) == ("a", SHUT_DOWN_ANSWER)
    assert ex.lost == "Ray was shut down in this process"
    ex.ended.set()
    # The collector's wait still has not returned: a run on a Ray connected again is answered
    # by a thread of its own.
    _, again, later = run()
    b = Ref("b")
    in_flight(again, b, later)
    b.end(completed("t"))
    assert later.get(timeout=10) == ("b", {"record": {"status": "completed"}})
    assert stuck is not None and stuck.is_alive() and _driver._COLLECTOR.thread is not stuck
    # Once its wait returns, the stuck thread ends, and answers nothing twice.
    ray.release()
    stuck.join(10)
    assert not stuck.is_alive()
    c = Ref("c")
    in_flight(again, c, later)
    c.end(completed("t"))
    assert later.get(timeout=10) == ("c", {"record": {"status": "completed"}})
    assert later.empty() and answers.empty()


def test_ray_shut_down_and_connected_again_between_two_looks_of_the_watch_stops_the_run() -> None:
    ray, ex, answers = run()
    a = Ref("a")
    in_flight(ex, a, answers)
    time.sleep(0.05)  # the collector waits on `a`
    ray.shutdown(hang=True)
    ray.connect_again()
    threading.Thread(target=ex.watch, daemon=True).start()
    assert answers.get(timeout=10) == ("a", SHUT_DOWN_ANSWER)
    ex.ended.set()
    ray.release()


def test_while_no_run_awaits_its_answers_the_collector_gathers_them_and_reads_the_last_few_as_they_come() -> None:
    ray, ex, answers = run()
    ex.answers_awaited(False)
    refs = [Ref(f"s{i}") for i in range(20)]
    for ref in refs:
        in_flight(ex, ref, answers)
    # Three end, then twelve: they are read together, each wait for every task in flight, up
    # to the gathering's time.
    for ref in refs[:3]:
        ref.end(completed(ref.name))
    assert sorted(answers.get(timeout=10)[0] for _ in range(3)) == ["s0", "s1", "s2"]
    for ref in refs[3:15]:
        ref.end(completed(ref.name))
    assert sorted(answers.get(timeout=10)[0] for _ in range(12)) == sorted(r.name for r in refs[3:15])
    gathered = [(n, m, t) for n, m, t in ray.calls if n > 8]
    assert gathered and all(n == m and t == _driver._GATHER for n, m, t in gathered)
    # The last five, the run's end, are waited for one at a time, as when answers are awaited.
    time.sleep(0.05)
    for ref in refs[15:]:
        ref.end(completed(ref.name))
    assert sorted(answers.get(timeout=10)[0] for _ in range(5)) == sorted(r.name for r in refs[15:])
    assert (5, 1) in [(n, m) for n, m, _ in ray.calls]
    assert ex.in_flight == {}


def test_the_head_watched_through_ray_client_is_the_server_strata_ray_connected_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def client(connected: bool) -> Any:
        """Ray Client, connected or not; connected by a caller, it says where in the
        attribute Ray keeps."""
        worker = SimpleNamespace(_conn_str="10.0.0.9:10001")
        return SimpleNamespace(ray=SimpleNamespace(is_connected=lambda: connected, get_context=lambda: SimpleNamespace(client_worker=worker)))

    ray = StandIn()
    monkeypatch.setitem(sys.modules, "ray.util.client", client(True))
    assert _driver._head_address(ray, "ray://10.0.0.7:10002/") == ("10.0.0.7", 10002)
    assert _driver._head_address(ray, None) == ("10.0.0.9", 10001)
    # Connected to the cluster itself: its GCS.
    monkeypatch.setitem(sys.modules, "ray.util.client", client(False))
    monkeypatch.setattr(StandIn, "get_runtime_context", staticmethod(lambda: SimpleNamespace(gcs_address="127.0.0.1:6379")))
    assert _driver._head_address(ray, "127.0.0.1:6379") == ("127.0.0.1", 6379)


class NoSecrets:
    """A plan and values that hold no secret (``ScaleOut.check_arguments``)."""

    @staticmethod
    def check_arguments(what: str, value: Any) -> None:
        pass


def test_ray_shut_down_before_a_large_plan_is_put_stops_the_run() -> None:
    # A plan too large to travel with each task goes to Ray's object store with its first
    # step: after `ray.shutdown()`, that step is stopped as the run's others would be.
    ray, ex, answers = run()
    ex.secrets = cast(Any, NoSecrets())
    large = [{"id": "a", "tool": "t", "arguments": {"blob": os.urandom(_driver.INLINE_PLAN).hex()}}]
    ray.shutdown()
    ex.step({"step": "a", "plan": large, "values": {}}, lambda answer: answers.put(("a", answer)))
    assert answers.get(timeout=10) == ("a", SHUT_DOWN_ANSWER)
    assert ex.lost == "Ray was shut down in this process" and ex.flag.cancelled
