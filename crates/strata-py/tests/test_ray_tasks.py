"""How strata.ray submits a task (``strata.ray._tasks.Task.submit``): through the remote
function's ``_remote`` where it takes the options as ``options()`` hands them over, each set
of options checked by ``options()`` once; through ``options()`` elsewhere. Ray is not needed:
the remote functions are stand-ins that record what they are given."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Optional

import pytest

from strata.ray._tasks import Task


class ClientRemote:
    """As Ray Client's remote function: only ``options().remote()`` (its ``_remote`` takes no
    serialized runtime environment)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def options(self, **options: Any) -> Any:
        if options.get("num_cpus", 0) < 0:
            raise ValueError("The resource num_cpus must be non-negative")
        self.calls.append(("options", options))

        def remote(*args: Any) -> str:
            self.calls.append(("remote", args))
            return "ref"

        return SimpleNamespace(remote=remote)

    def _remote(self, args: Any = None, kwargs: Any = None, **options: Any) -> Any:
        raise AssertionError("not this one")


class RayRemote(ClientRemote):
    """As Ray's remote function: ``options()`` checks them, ``_remote`` submits."""

    _default_options = {"runtime_env": {"working_dir": "pkg"}, "max_calls": 0}
    _serialized_base_runtime_env_info = "ENV"

    def _remote(
        self, args: Any = None, kwargs: Any = None, serialized_runtime_env_info: Optional[str] = None, **options: Any
    ) -> Any:
        self.calls.append(("_remote", args, kwargs, serialized_runtime_env_info, options))
        return "ref"


#: What ``AutoStartingRemote``'s wrapper did: Ray started (``ray.init()``) before a task.
STARTED: list[str] = []


def auto_init(fn: Any) -> Any:
    """As Ray's ``wrap_auto_init``: starts Ray first when it is not connected."""

    @functools.wraps(fn)
    def auto_init_wrapper(*args: Any, **kwargs: Any) -> Any:
        STARTED.append("ray.init()")
        return fn(*args, **kwargs)

    return auto_init_wrapper


class AutoStartingRemote(RayRemote):
    """As Ray's remote function, whose ``_remote`` is wrapped by Ray's auto-init."""

    @auto_init
    def _remote(
        self, args: Any = None, kwargs: Any = None, serialized_runtime_env_info: Optional[str] = None, **options: Any
    ) -> Any:
        return super()._remote(args, kwargs, serialized_runtime_env_info, **options)


class Strategy:
    """A scheduling strategy: an object, shown by its attributes."""

    def __init__(self, node: str) -> None:
        self.node_id = node


def test_tasks_go_through_remote_with_each_set_of_options_checked_once() -> None:
    remote = RayRemote()
    task = Task(remote)
    assert task.direct
    for name in ("strata:p/a", "strata:p/b"):
        assert task.submit({"name": name, "num_cpus": 1.0, "scheduling_strategy": Strategy("n1")}, "v", [1]) == "ref"
    task.submit({"name": "strata:p/c", "num_cpus": 2.0, "scheduling_strategy": Strategy("n1")}, "v", [2])
    assert [call[0] for call in remote.calls] == ["options", "_remote", "_remote", "options", "_remote"]
    assert remote.calls[2] == (
        "_remote",
        ("v", [1]),
        None,
        "ENV",
        {
            "runtime_env": {"working_dir": "pkg"},
            "max_calls": 0,
            "name": "strata:p/b",
            "num_cpus": 1.0,
            "scheduling_strategy": remote.calls[2][4]["scheduling_strategy"],
        },
    )


def test_options_ray_refuses_are_refused_before_any_task() -> None:
    remote = RayRemote()
    with pytest.raises(ValueError, match="num_cpus must be non-negative"):
        Task(remote).submit({"name": "strata:p/a", "num_cpus": -1}, "v")
    assert remote.calls == []


def test_a_remote_function_without_that_remote_goes_through_options() -> None:
    remote = ClientRemote()
    task = Task(remote)
    assert not task.direct
    task.submit({"name": "strata:p/a", "num_cpus": 1.0}, "v", [1])
    task.submit({"name": "strata:p/b", "num_cpus": 1.0}, "v", [2])
    assert remote.calls == [
        ("options", {"name": "strata:p/a", "num_cpus": 1.0}),
        ("remote", ("v", [1])),
        ("options", {"name": "strata:p/b", "num_cpus": 1.0}),
        ("remote", ("v", [2])),
    ]


def test_a_task_never_starts_a_ray_of_the_processs_own() -> None:
    # Submitted just after `ray.shutdown()`, a task raises (its run stops); Ray's auto-init
    # would start a local Ray, or wait for one, from the run's thread.
    remote = AutoStartingRemote()
    task = Task(remote)
    assert task.direct
    task.submit({"name": "strata:p/a", "num_cpus": 1.0}, [1])
    assert STARTED == []
    assert [call[0] for call in remote.calls] == ["options", "_remote"]
