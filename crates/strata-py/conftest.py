"""The fixture both test trees share (``tests``, and ``tests_ray`` with its cluster): the
``strata`` binary the tests run next to the Python module."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def strata_bin() -> Path:
    """The `strata` binary: `$STRATA_BIN`, else the debug build (built when missing)."""
    given = os.environ.get("STRATA_BIN")
    if given:
        return Path(given)
    binary = REPO / "target" / "debug" / "strata"
    if not binary.exists():
        subprocess.run(["cargo", "build", "-q", "-p", "strata"], cwd=REPO, check=True)
    return binary
