"""The driver's collector (``strata.ray._driver._collect``) answers every task it is handed,
even one whose answer cannot be read: a step never answered would hang its run. Ray is not
needed: the executor is given a stand-in."""

from __future__ import annotations

import concurrent.futures
import queue
from types import SimpleNamespace
from typing import Any, cast

from strata.ray import _driver


class RayTaskError(Exception):
    """The stand-in of Ray's error of a task that raised."""


#: What the executor uses of Ray before any task is submitted.
RAY = SimpleNamespace(
    remote=lambda **options: lambda fn: fn,
    exceptions=SimpleNamespace(RayTaskError=RayTaskError),
    get_runtime_context=lambda: SimpleNamespace(gcs_address=""),
)


def executor() -> _driver.Executor:
    """An executor of a run nothing was submitted for."""
    return _driver.Executor(
        RAY, {}, run="r", label="p", secrets=cast(Any, None), strict=None, max_retries=0, strategy=None, num_cpus=1.0
    )


def answered(result: Any) -> "concurrent.futures.Future[Any]":
    """A task's future, done with ``result``."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    future.set_result(result)
    return future


def test_an_answer_that_cannot_be_read_is_its_steps_spawn_error_and_the_next_answers_go_through() -> None:
    ex = executor()
    answers: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    ex.in_flight[1] = (None, answers.put, "step `a`", {"step": "a"}, False)
    ex.in_flight[2] = (None, answers.put, "step `b`", {"step": "b"}, False)
    _driver._answered(ex, 1, answered(["not", "a", "record"]))
    _driver._answered(ex, 2, answered({"record": {"status": "completed"}, "node": "n1", "pid": 7, "task": "t"}))
    assert answers.get(timeout=10) == {
        "error": {
            "kind": "spawn",
            "layer": "request",
            "message": "the answer of the Ray task running step `a` could not be read: AttributeError: 'list' "
            "object has no attribute 'get'",
            "path": "",
            "span": None,
        }
    }
    assert answers.get(timeout=10) == {"record": {"status": "completed"}}
    assert ex.placements == [{"step": "b", "node": "n1", "pid": 7, "task": "t"}]
    assert ex.nodes == {"n1"}
    assert ex.in_flight == {}
