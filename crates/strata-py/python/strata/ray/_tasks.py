"""Ray's remote function of each of strata's task functions, and how their tasks are
submitted: ``Task.submit(options, *args)`` is ``remote.options(**options).remote(*args)``,
without the cost of Ray's ``options()`` where Ray allows it."""

from __future__ import annotations

import inspect
import json
from typing import Any

# Ray's remote function of each task function and runtime environment, made once per
# process and upload: a new one is exported to the cluster again (and every worker loads it
# again), and a runtime environment given to `.options()` is parsed again at every task.
_TASKS: dict[tuple[Any, str], "Task"] = {}


def unstarting(fn: Any) -> Any:
    """``fn``, a function of Ray's, without the wrapper that starts Ray first when it is not
    connected (Ray's auto-init): called after ``ray.shutdown()``, it raises (the run then
    stops) rather than start, or wait for, a Ray instance of this process's own."""
    return getattr(fn, "__wrapped__", fn)


def remote_task(ray: Any, fn: Any, env: dict[str, Any]) -> "Task":
    """``fn`` as a Ray remote function whose tasks run in the runtime environment ``env``."""
    key = (fn, json.dumps(env, sort_keys=True))
    task = _TASKS.get(key)
    if task is None:
        task = _TASKS[key] = Task(ray.remote(runtime_env=env)(fn))
    return task


def _takes_options(remote: Any) -> bool:
    """True when ``remote`` is a remote function of Ray's whose private ``_remote`` submits a
    task given the options as ``options()`` hands them over: the merged options, and the
    runtime environment serialized once (Ray 2's ``RemoteFunction``; not Ray Client's)."""
    try:
        parameters = inspect.signature(remote._remote).parameters
        return (
            {"args", "kwargs", "serialized_runtime_env_info"} <= set(parameters)
            and isinstance(remote._default_options, dict)
            and isinstance(remote._serialized_base_runtime_env_info, (str, type(None)))
        )
    except (AttributeError, TypeError, ValueError):
        return False


#: The most sets of options a task function keeps as checked (one per resource declaration
#: and per node a task is pinned to: a few).
_MOST_CHECKED = 256


def _shown(value: Any) -> Any:
    """``value``, an option, as what it says (an object, such as a scheduling strategy, as its
    type and attributes, not its address)."""
    if hasattr(value, "__dict__"):
        return (type(value).__qualname__, sorted(vars(value).items()))
    return value


class Task:
    """A Ray remote function of strata's, and how its tasks are submitted.

    Ray's ``options()`` costs the driver about 0.1 ms of CPU a task (a wrapper class made at
    each call, the options checked again): as much again as submitting the task. Where the
    remote function's private ``_remote`` takes the options as ``options()`` hands them over,
    tasks go through it, and each set of options (the task's name aside) is checked by
    ``options()`` the first time it comes; elsewhere — Ray Client, a Ray that changed
    ``_remote`` — through ``options()``."""

    def __init__(self, remote: Any) -> None:
        #: Ray's remote function.
        self.remote = remote
        #: Whether tasks are submitted through ``_remote`` (``_takes_options``).
        self.direct = _takes_options(remote)
        # Its `_remote`, unbound, without Ray's auto-init: a task submitted just after
        # `ray.shutdown()` raises rather than start a Ray of this process's own.
        self._remote: Any = unstarting(type(remote)._remote) if self.direct else None
        # The sets of options checked by `options()` (their text, the name aside).
        self._checked: set[str] = set()

    def submit(self, options: dict[str, Any], *args: Any) -> Any:
        """Submits a task of ``args`` with ``options`` (those of Ray's ``options()``); its
        reference. Raises what Ray raises for options it refuses."""
        remote = self.remote
        if not self.direct or "runtime_env" in options:
            return remote.options(**options).remote(*args)
        checked = repr(sorted((k, _shown(v)) for k, v in options.items() if k != "name"))
        if checked not in self._checked:
            remote.options(**options)
            if len(self._checked) >= _MOST_CHECKED:
                self._checked.clear()
            self._checked.add(checked)
        return self._remote(
            remote,
            args=args,
            kwargs=None,
            serialized_runtime_env_info=remote._serialized_base_runtime_env_info,
            **{**remote._default_options, **options},
        )
