"""Benchmark of ``strata.ray`` on a two-node loopback cluster (4 task slots per node, 8 in
all), next to the same plans run locally:

* **fan-out**: 8 independent steps of 200 ms (``plans/sleep``) — wall time against the
  critical path (200 ms; the goal is at most 1.3 times it);
* **per-task overhead**: a chain of 8 steps that do nothing (``sleep 0``) — wall time per step,
  against ``strata plan run`` (the binary, process start included) and ``Project.run_plan``.

Run it as the tests run (a network namespace with loopback only):

    unshare --net sh -c 'ip link set lo up && exec python crates/strata-py/tests_ray/bench_fanout.py'

``--quick`` takes 3 samples of each instead of 10. Prints a Markdown table and the JSON of the
numbers.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import strata  # noqa: E402
import strata.ray as sray  # noqa: E402
from cluster import Cluster  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
FAN = [{"id": f"s{i}", "tool": "plans/sleep", "arguments": {"seconds": 0.2}} for i in range(8)]
CHAIN = [{"id": "c0", "tool": "plans/sleep", "arguments": {"seconds": 0}}] + [
    {"id": f"c{i}", "tool": "plans/sleep", "arguments": {"seconds": 0}, "depends_on": [f"c{i - 1}"]}
    for i in range(1, 8)
]


def timed(n: int, run: Callable[[], Any]) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        run()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    samples = 3 if "--quick" in sys.argv else 10
    strata_bin = Path(os.environ.get("STRATA_BIN", REPO / "target" / "debug" / "strata"))
    work = Path(tempfile.mkdtemp(prefix="strata-ray-bench-"))
    project = work / "project"
    shutil.copytree(REPO / "tools", project / "tools")
    (project / "plans").mkdir()
    (project / "plans" / "fan.json").write_text(json.dumps(FAN))
    (project / "plans" / "chain.json").write_text(json.dumps(CHAIN))
    proj = strata.Project(project)
    cluster = Cluster(num_cpus=4)
    results: dict[str, Any] = {}
    try:
        started = time.perf_counter()
        cluster.start()
        results["cluster_start_s"] = round(time.perf_counter() - started, 2)
        # Warm-up: the project's package uploaded, workers started on both nodes.
        for _ in range(4):
            sray.run_plan(proj, FAN, strategy="SPREAD")
        fan = timed(samples, lambda: sray.run_plan(proj, FAN, strategy="SPREAD"))
        nodes = {p["node"] for p in sray.run_plan(proj, FAN, strategy="SPREAD")["placements"]}
        chain = timed(samples, lambda: sray.run_plan(proj, CHAIN))
        local_fan = timed(samples, lambda: proj.run_plan(FAN, jobs=8))
        local_chain = timed(samples, lambda: proj.run_plan(CHAIN))
        cli = [str(strata_bin), "plan", "run", "--quiet", "-j", "8"]
        cli_fan = timed(samples, lambda: subprocess.run([*cli, "plans/fan.json"], cwd=project, check=True, capture_output=True))
        cli_chain = timed(samples, lambda: subprocess.run([*cli, "plans/chain.json"], cwd=project, check=True, capture_output=True))
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    results.update(
        {
            "samples": samples,
            "nodes_used_by_fan_out": len(nodes),
            "fan_out_ray_s": round(med(fan), 3),
            "fan_out_ray_vs_critical_path": round(med(fan) / 0.2, 2),
            "fan_out_python_local_s": round(med(local_fan), 3),
            "fan_out_cli_local_s": round(med(cli_fan), 3),
            "per_task_ray_ms": round(med(chain) / 8 * 1000, 1),
            "per_task_python_local_ms": round(med(local_chain) / 8 * 1000, 1),
            "per_task_cli_local_ms": round(med(cli_chain) / 8 * 1000, 1),
        }
    )
    print("| measure | strata.ray (2 nodes) | Project.run_plan (local) | strata plan run (local) |")
    print("|---|---|---|---|")
    print(
        f"| 8 × 200 ms fan-out, wall (median of {samples}) | {results['fan_out_ray_s'] * 1000:.0f} ms "
        f"({results['fan_out_ray_vs_critical_path']}× the critical path) | "
        f"{results['fan_out_python_local_s'] * 1000:.0f} ms | {results['fan_out_cli_local_s'] * 1000:.0f} ms |"
    )
    print(
        f"| per step of an 8-step chain of `sleep 0` | {results['per_task_ray_ms']} ms | "
        f"{results['per_task_python_local_ms']} ms | {results['per_task_cli_local_ms']} ms |"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
