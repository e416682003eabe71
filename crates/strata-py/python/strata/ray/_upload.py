"""What goes to the Ray workers: the files of the upload, as Ray itself selects them
(``excludes`` and ``.gitignore``), and the upload. The checks of what goes (no secret value in
a file or a task's arguments, every tool a run needs uploaded) are strata's own
(``Project.scale_out``), given the files listed here."""

from __future__ import annotations

import importlib
import inspect
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

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


#: How recently a directory walked (or an ignore file read) may have changed for the walk to
#: be kept, in nanoseconds: file times advance by a clock tick, so a directory changed within a
#: tick of the walk could change again, unseen, keeping the same time.
RACY_NS = 1_000_000_000

#: The most walks kept (one per project directory and patterns).
_KEPT_WALKS = 16

#: The files read in each directory Ray walks, for its patterns.
_IGNORE_FILES = (".gitignore", ".rayignore")

#: What a path's ``stat`` says of it that changes when it changes, or None when it is gone.
Stamp = Optional[tuple[int, int, int, int]]

# The last walk of each directory, patterns and .gitignore setting: the stamp of each
# directory walked and of its ignore files, and the files found.
_WALKS: dict[tuple[str, tuple[str, ...], bool], tuple[list[tuple[str, Stamp]], list[Path]]] = {}


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def upload_files(root: Path, patterns: Sequence[str]) -> list[Path]:
    """The files Ray uploads from ``root``: not matched by ``patterns`` (gitignore-style) nor,
    unless ``RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1``, by a ``.gitignore`` (or ``.rayignore``) —
    walked by Ray's own code, so that what is checked is what is uploaded.

    The walk is kept and given again while every directory it went through, and every ignore
    file there, is unchanged (a file added, removed or renamed changes its directory; an
    ignore file edited changes itself), unless one of them changed within ``RACY_NS`` of the
    walk. The files' contents are not part of it: the caller reads them (``_prepared`` keys
    the upload on every file's size and time)."""
    key = (str(root), tuple(patterns), _include_gitignore())
    kept = _WALKS.get(key)
    if kept is not None and all(_stamp(path) == stamp for path, stamp in kept[0]):
        return list(kept[1])
    started = time.time_ns()
    files, dirs = _walk(root, patterns)
    stamps = [(str(p), _stamp(str(p))) for d in dirs for p in (d, *(d / name for name in _IGNORE_FILES))]
    _WALKS.pop(key, None)
    if all(stamp is None or stamp[2] < started - RACY_NS for _, stamp in stamps):
        _WALKS[key] = (stamps, files)
        while len(_WALKS) > _KEPT_WALKS:
            _WALKS.pop(next(iter(_WALKS)))
    return list(files)


def _walk(root: Path, patterns: Sequence[str]) -> tuple[list[Path], list[Path]]:
    """The files Ray uploads from ``root`` (sorted), and the directories its walk went into."""
    packaging: Any = importlib.import_module("ray._private.runtime_env.packaging")
    files: list[Path] = []
    dirs: list[Path] = []

    def keep(path: Path) -> None:
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            dirs.append(path)

    excludes = [packaging._get_excludes(root, list(patterns))]
    travel = packaging._dir_travel
    if "include_gitignore" in inspect.signature(travel).parameters:
        travel(root, excludes, keep, include_gitignore=_include_gitignore())
    else:  # pragma: no cover - Ray before 2.47 always reads .gitignore
        travel(root, excludes, keep)
    return sorted(files), dirs


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
