"""strata.ray when the cluster's head node is lost mid-run: the driver's own exit code and error
kind, connected to the cluster or through Ray Client (a module of its own: each test ends a
cluster of its own)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster import Cluster
from test_ray import stall_plan, stalling, wait_for


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A two-node cluster of the test's own (the test kills its head), stopped afterwards."""
    c = Cluster(num_cpus=4)
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.mark.parametrize("through", ["gcs", "client"])
def test_the_head_node_lost_stops_the_driver_with_its_own_exit_code_and_kind(
    cluster: Cluster, project: Path, tmp_path: Path, through: str
) -> None:
    marks = stalling(project, tmp_path)
    (project / "plans" / "stall.json").write_text(json.dumps(stall_plan(marks)))
    # Ray ends a driver whose head is unreachable after this long (60 s by default): the
    # driver must have noticed and answered before.
    env = {**os.environ, "RAY_gcs_rpc_server_reconnect_timeout_s": "20"}
    driver = subprocess.Popen(
        [sys.executable, "-m", "strata.ray", "plan", "run", "plans/stall.json", "--run-id", "headless",
         "--address", cluster.address if through == "gcs" else cluster.client_address, "-C", str(project),
         "--json", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        wait_for(marks / "a.pids")
        head = cluster.procs[0]
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        out, err = driver.communicate(timeout=240)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 4, err[-3000:]
    shown = json.loads(out)
    assert shown["ok"] is False
    assert shown["error"]["kind"] == "cluster_lost"
    assert shown["error"]["run_id"] == "headless"
    assert shown["error"]["message"] == (
        "the Ray cluster's head node was lost; the run stopped; resume it with --resume headless once the cluster "
        "is back"
    )
    checkpoint = json.loads((project / ".strata" / "runs" / "headless" / "checkpoint.json").read_text())
    assert checkpoint["status"] == "cancelled"
