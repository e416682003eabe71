"""strata.ray on a cluster of the test's own: the head node lost mid-run (the driver's own exit
code and error kind, connected to the cluster or through Ray Client), and what a later driver
process asks of the nodes (a cluster whose nodes are exactly the two it started)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster import Cluster
import strata
import strata.ray as sray
from test_ray import CLIENT_SERVER_DIED, SAY_PLAN, SAY_TOOL, stall_plan, stalling, wait_for, write


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
    address = cluster.address if through == "gcs" else cluster.client_address
    for attempt in (1, 2):
        driver = subprocess.Popen(
            [sys.executable, "-m", "strata.ray", "plan", "run", "plans/stall.json", "--run-id", "headless",
             "--address", address, "-C", str(project), "--json", "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        try:
            # Through Ray Client, the client's own server starts first (on a loaded machine,
            # a while).
            if wait_for(marks / "a.pids", within=60 if through == "gcs" else 180, driver=driver):
                head = cluster.procs[0]
                os.killpg(head.pid, signal.SIGKILL)
                head.wait()
            out, err = driver.communicate(timeout=240)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
        said = out + err  # under --json, the driver's error is on its standard output
        if attempt == 1 and through == "client" and CLIENT_SERVER_DIED in said and not (marks / "a.pids").exists():
            # Ray's own flake, before anything ran: connect again, once.
            shutil.rmtree(project / ".strata" / "runs" / "headless", ignore_errors=True)
            continue
        break
    assert (marks / "a.pids").exists(), f"the driver ended before its first step ran:\n{said[-3000:]}" + (
        cluster.client_server_log() if through == "client" else ""
    )
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


def test_a_later_driver_of_the_project_does_not_ask_the_nodes_their_version_again(
    cluster: Cluster, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, {"tools/f/say.yaml": SAY_TOOL})
    nodes = sorted(cluster.node_ids())
    # A new driver process: nothing checked in it, no nodes listed.
    monkeypatch.setattr(sray._driver, "_CHECKED", set())
    monkeypatch.setattr(sray._driver, "_NODES", [float("-inf"), []])
    before = sray.tasks_submitted()
    assert sray.run_plan(project, SAY_PLAN)["status"] == "completed"
    assert sray.tasks_submitted() - before == len(nodes) + len(SAY_PLAN)  # a probe per node, the steps
    known = project / ".strata" / "ray-nodes.json"
    assert json.loads(known.read_text()) == {node: strata.__version__ for node in nodes}
    # The next driver process of the project asks none of them.
    monkeypatch.setattr(sray._driver, "_CHECKED", set())
    before = sray.tasks_submitted()
    assert sray.run_plan(project, SAY_PLAN)["status"] == "completed"
    assert sray.tasks_submitted() - before == len(SAY_PLAN)
    # A node the file does not know as running this version (another start, another
    # version) is asked again.
    known.write_text(json.dumps({nodes[0]: strata.__version__, nodes[1]: "0.0.0-other"}))
    monkeypatch.setattr(sray._driver, "_CHECKED", set())
    before = sray.tasks_submitted()
    assert sray.run_plan(project, SAY_PLAN)["status"] == "completed"
    assert sray.tasks_submitted() - before == 1 + len(SAY_PLAN)
    assert json.loads(known.read_text()) == {node: strata.__version__ for node in nodes}
