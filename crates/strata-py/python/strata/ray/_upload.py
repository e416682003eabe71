"""What goes to the Ray workers, checked on the driver before anything is submitted: the
files of the upload (as Ray itself selects them: ``excludes`` and ``.gitignore``), none of
them holding a secret value, every tool a run needs among them, and no secret value in what
a run's tasks are given (user values, graph inputs, plan literals)."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Optional

import strata

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

#: Secret values shorter than this are not searched for (as the Argo export does).
_SHORTEST_SECRET = 4

#: How much of a file is read at once when it is searched for secret values.
_CHUNK = 1 << 20

_TOOL_EXTENSIONS = (".yaml", ".yml")


def refused(kind: str, message: str, hint: Optional[str] = None) -> strata.StrataError:
    """A refusal on the driver, as strata raises its own (layer ``request``)."""
    text = f"request error: {message}" + (f" (hint: {hint})" if hint else "")
    return strata.StrataError(text, kind=kind, layer="request", message=message, hint=hint)


def secret_values(project: strata.Project) -> dict[str, str]:
    """The project's secret values by variable: its ``.env`` as strata parses it."""
    return {k: v for k, v in project.dotenv_values().items() if len(v) >= _SHORTEST_SECRET}


def _include_gitignore() -> bool:
    return os.environ.get("RAY_RUNTIME_ENV_IGNORE_GITIGNORE", "0") != "1"


def upload_files(root: Path, patterns: Sequence[str]) -> list[Path]:
    """The files Ray uploads from ``root``: not matched by ``patterns`` (gitignore-style) nor,
    unless ``RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1``, by a ``.gitignore`` — walked by Ray's own
    code, so that what is checked is what is uploaded."""
    packaging: Any = importlib.import_module("ray._private.runtime_env.packaging")
    files: list[Path] = []

    def keep(path: Path) -> None:
        if path.is_file():
            files.append(path)

    excludes = [packaging._get_excludes(root, list(patterns))]
    travel = packaging._dir_travel
    if "include_gitignore" in inspect.signature(travel).parameters:
        travel(root, excludes, keep, include_gitignore=_include_gitignore())
    else:  # pragma: no cover - Ray before 2.47 always reads .gitignore
        travel(root, excludes, keep)
    return sorted(files)


def _holds(path: Path, secrets: list[bytes]) -> bool:
    """True when the file holds one of ``secrets``, read in chunks (a file of any size)."""
    keep = max(len(s) for s in secrets) - 1
    tail = b""
    try:
        with open(path, "rb") as f:
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    return False
                data = tail + chunk
                if any(s in data for s in secrets):
                    return True
                tail = data[len(data) - keep :]
    except OSError:  # unreadable here: Ray cannot upload it either
        return False


def refuse_secret_files(root: Path, files: Iterable[Path], secrets: dict[str, str]) -> None:
    """Raises (kind ``forbidden``) when a file of the upload holds a secret value."""
    if not secrets:
        return
    wanted = [v.encode() for v in secrets.values()]
    for path in files:
        if _holds(path, wanted):
            rel = path.relative_to(root).as_posix()
            raise refused(
                "forbidden",
                f"`{rel}` holds the value of a variable of .env: it would be uploaded to the Ray workers",
                "exclude it (excludes=[...]) or keep the value in .env",
            )


def _tool_id(rel: str) -> Optional[str]:
    if not rel.startswith("tools/"):
        return None
    for ext in _TOOL_EXTENSIONS:
        if rel.endswith(ext):
            return rel[len("tools/") : -len(ext)]
    return None


_EXECUTOR = re.compile(r"^executor:\s*[\"']?([^\s\"'#]+)", re.MULTILINE)
_TOOL = re.compile(r"\btool:\s*[\"']?([^\s\"'#,}]+)")


def _tool_text(root: Path, tool: str) -> str:
    for ext in _TOOL_EXTENSIONS:
        try:
            return (root / "tools" / (tool + ext)).read_text(errors="replace")
        except OSError:
            continue
    return ""


def needed_tools(root: Path, tools: Iterable[str], *, graph: bool = False) -> set[str]:
    """``tools`` and the tools they run through (their ``executor:`` chains); a graph's
    nodes' tools too when ``graph``."""
    need: set[str] = set()
    todo = list(tools)
    while todo:
        tool = todo.pop()
        if tool in need:
            continue
        need.add(tool)
        text = _tool_text(root, tool)
        todo.extend(_EXECUTOR.findall(text))
        if graph:
            todo.extend(_TOOL.findall(text))
    return need


def refuse_missing_tools(project: strata.Project, files: Iterable[Path], need: set[str]) -> None:
    """Raises (kind ``invalid``) when a tool the run needs is left out of the upload."""
    root = Path(project.root)
    shipped = {t for t in (_tool_id(p.relative_to(root).as_posix()) for p in files) if t}
    missing = sorted((set(project.tool_ids()) - shipped) & need)
    if missing:
        names = ", ".join(f"`{t}`" for t in missing)
        raise refused(
            "invalid",
            f"the run needs tool {names}, left out of the upload to the Ray workers (by excludes= or .gitignore)",
            "take it out of excludes= and .gitignore, or set RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1",
        )


def _leaf_holds(value: Any, secret: str) -> bool:
    if isinstance(value, str):
        return secret in value
    if isinstance(value, dict):
        return any(_leaf_holds(k, secret) or _leaf_holds(v, secret) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_leaf_holds(v, secret) for v in value)
    return secret in json.dumps(value)


def refuse_secret_arguments(what: str, value: Any, secrets: dict[str, str]) -> None:
    """Raises (kind ``forbidden``) when ``value`` — what the run's tasks would be given
    (``what``: user values, graph inputs, the plan) — holds a secret value: a task's
    arguments carry secret markers, never values (as a manifest of the Argo export)."""
    for name, secret in secrets.items():
        if _leaf_holds(value, secret):
            raise refused(
                "forbidden",
                f"the Ray tasks' arguments would hold the value of secret `{name}` (found in {what})",
                "keep the value in .env and let the tool read its variable",
            )


def upload(ray: Any, env: dict[str, Any]) -> dict[str, Any]:
    """``env`` with its working directory uploaded to the cluster (as ``ray.init`` uploads a
    job's, and as a Ray Client does it from afar): a task's ``runtime_env`` then names a
    package, not a local directory."""
    working_dir: Any = importlib.import_module("ray._private.runtime_env.working_dir")
    client: Any = importlib.import_module("ray.util.client")
    # A Ray Client's server does not implement pinning a package (Ray retries the call
    # forever): through a client the package is stored unpinned, and the run's first task
    # references it at once.
    constants: Any = importlib.import_module("ray._private.ray_constants")
    pin: str = constants.RAY_RUNTIME_ENV_URI_PIN_EXPIRATION_S_ENV_VAR
    unpinned = client.ray.is_connected()
    saved = os.environ.get(pin)
    if unpinned:
        os.environ[pin] = "0"
    try:
        with tempfile.TemporaryDirectory(prefix="strata-ray-") as scratch:
            uploaded: dict[str, Any] = working_dir.upload_working_dir_if_needed(
                dict(env), include_gitignore=_include_gitignore(), scratch_dir=scratch
            )
    finally:
        if unpinned:
            if saved is None:
                os.environ.pop(pin, None)
            else:
                os.environ[pin] = saved
    uploaded.pop("excludes", None)
    return uploaded
