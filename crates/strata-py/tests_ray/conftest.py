"""Fixtures of the ``strata.ray`` tests: one two-node loopback cluster per module, a copy of
the repository's shipped project (the ``strata`` binary is ``crates/strata-py/conftest.py``'s)."""

from __future__ import annotations

import secrets
import shutil
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


def shipped_project(dest: Path) -> Path:
    """A copy of the repository's project: its tools, plans and prompts."""
    for name in ("tools", "plans", "prompts"):
        shutil.copytree(REPO / name, dest / name)
    return dest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of the shipped project."""
    return shipped_project(tmp_path / "project")
