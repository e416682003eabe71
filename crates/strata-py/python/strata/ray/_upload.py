"""What goes to the Ray workers: the files of the upload, as Ray itself selects them
(``excludes`` and ``.gitignore``), and the upload. The checks of what goes (no secret value in
a file or a task's arguments, every tool a run needs uploaded) are strata's own
(``Project.scale_out``), given the files listed here."""

from __future__ import annotations

import importlib
import inspect
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
