"""Fixtures of the ``strata.ray`` tests: one two-node loopback cluster per module, a copy of
the repository's shipped project, the ``strata`` binary."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import Cluster  # noqa: E402

REPO = Path(__file__).resolve().parents[3]

#: The secret the cluster's nodes have in their environment (and the test project's .env).
SEEDED = "seeded-" + secrets.token_hex(12)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head node and a worker node (4 task slots each) for the whole module, stopped
    afterwards whatever happens. The nodes' environment holds ``SEEDED_TOKEN``."""
    c = Cluster(num_cpus=4, env={"SEEDED_TOKEN": SEEDED})
    try:
        c.start()
        yield c
    finally:
        c.stop()


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


def shipped_project(dest: Path) -> Path:
    """A copy of the repository's project: its tools, plans and prompts."""
    for name in ("tools", "plans", "prompts"):
        shutil.copytree(REPO / name, dest / name)
    return dest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of the shipped project."""
    return shipped_project(tmp_path / "project")
