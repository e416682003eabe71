"""Benchmark of ``strata.ray`` on a two-node loopback cluster (4 task slots per node, 8 in
all), side by side with plain Ray doing the same work in the same run — a Ray task that runs
``sleep`` as a subprocess, in the project's uploaded working directory; the samples of each
taken in turn — and with the same plans run locally:

* **fan-out**: 8 independent steps of 200 ms (``plans/sleep``) — wall time against the
  critical path (200 ms); the goal: strata.ray's ratio within 1.1 times plain Ray's;
* **per-step overhead**: N steps that do nothing (``sleep 0``), in a chain and independent —
  wall time per step; the goal: within 1.2 times plain Ray's. Beside it, what a run costs
  besides its steps (a plan of one such step) and the marginal cost of a step (the runs of N
  steps against those of N/4, per step between them), which that cost does not weigh on.
* **what a user runs**: the fan-out, the chain and the independent steps through the command
  line (``python -m strata.ray plan run``), a process each, against a plain Ray script doing
  the same — whole-process wall time.
* **where the CPU goes**: for the chain and the independent steps, the CPU time each side's
  samples took, per step, in the driver (this process), in Ray's worker processes, in the
  tools those ran (``sleep``, once reaped) and in the rest of the cluster's processes
  (raylets, GCS); through the command line, in the driver's process: on two cores, with
  every slot busy, CPU is what the independent steps' time is made of.

Run it as the tests run (a network namespace with loopback only):

    unshare --net sh -c 'ip link set lo up && exec python crates/strata-py/tests_ray/bench_fanout.py'

``--quick`` takes 3 samples of each (chains of 16) instead of 10 (chains of 200, the size the
per-step goal was set at). Prints a Markdown table and the JSON of the numbers.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import strata  # noqa: E402
import strata.ray as sray  # noqa: E402
from cluster import Cluster  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
FAN = [{"id": f"s{i}", "tool": "plans/sleep", "arguments": {"seconds": 0.2}} for i in range(8)]


def chain(n: int) -> list[dict[str, Any]]:
    return [{"id": "c0", "tool": "plans/sleep", "arguments": {"seconds": 0}}] + [
        {"id": f"c{i}", "tool": "plans/sleep", "arguments": {"seconds": 0}, "depends_on": [f"c{i - 1}"]}
        for i in range(1, n)
    ]


def independent(n: int) -> list[dict[str, Any]]:
    return [{"id": f"i{i}", "tool": "plans/sleep", "arguments": {"seconds": 0}} for i in range(n)]


def timed(n: int, run: Callable[[], Any]) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        run()
        out.append(time.perf_counter() - start)
    return out


#: The pause before each sample of ``paired``, in seconds: a run started within Ray's resource
#: report period (100 ms) of the last one's end finds the nodes' view of free slots stale, and
#: one of a fan-out's tasks waits 50–90 ms for a slot — whichever side's run came second.
SETTLE = 0.25


#: The kinds of process whose CPU ``CpuMeter`` tells apart.
CPU_KINDS = ("driver", "workers", "tools", "nodes")

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _driver_cpu() -> float:
    """The CPU seconds (user and system) of this process and of its children once reaped (a
    command line's process)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class CpuMeter:
    """The CPU time (user and system, in seconds) spent by the cluster's processes, by kind:
    Ray's worker processes, the tools they ran (their reaped children) and the rest (raylets,
    GCS, agents). The cluster's processes are those of the sessions of its nodes' ``ray
    start`` (``sessions``), read from ``/proc``. The driver's is ``_driver_cpu``'s, read
    around the sample alone: the meter's own walk of ``/proc`` is not counted."""

    def __init__(self, sessions: Collection[int], proc: Path = Path("/proc")) -> None:
        self.sessions = set(sessions)
        #: Where the processes are read (``/proc``).
        self.proc = proc
        # The kind of each process seen, by its pid and start time (a pid may be used again).
        self._kinds: dict[tuple[int, str], str] = {}

    def _kind(self, pid: int, started: str) -> str:
        kind = self._kinds.get((pid, started))
        if kind is None:
            try:
                argv = (self.proc / str(pid) / "cmdline").read_bytes().split(b"\0")
            except OSError:
                argv = [b""]
            worker = argv[0].startswith(b"ray::") or any(a.endswith(b"default_worker.py") for a in argv)
            kind = self._kinds[pid, started] = "workers" if worker else "nodes"
        return kind

    def read(self) -> dict[tuple[int, str], tuple[str, int, int]]:
        """Each cluster process alive now (by pid and start time): its kind, its own CPU and
        its reaped children's, in clock ticks."""
        out: dict[tuple[int, str], tuple[str, int, int]] = {}
        for entry in os.listdir(self.proc):
            if not entry.isdigit():
                continue
            try:
                fields = (self.proc / entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) in self.sessions:
                pid, started = int(entry), fields[19]
                own, reaped = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
                out[pid, started] = (self._kind(pid, started), own, reaped)
        return out

    @staticmethod
    def spent(
        before: dict[tuple[int, str], tuple[str, int, int]], after: dict[tuple[int, str], tuple[str, int, int]]
    ) -> Counter[str]:
        """The CPU seconds spent between two ``read``s, by kind. A worker's reaped children
        are its tools; a worker that ended meanwhile is counted, with its tools, once its
        raylet reaped it (under ``workers``)."""
        spent: Counter[str] = Counter()
        for key, (kind, own, reaped) in after.items():
            _, own0, reaped0 = before.get(key, (kind, 0, 0))
            spent[kind] += own - own0
            spent["tools" if kind == "workers" else "workers"] += reaped - reaped0
        return Counter({k: v / _CLOCK_TICKS for k, v in spent.items()})


def paired(n: int, ours: Callable[[], Any], theirs: Callable[[], Any]) -> tuple[list[float], list[float]]:
    """``n`` samples of each, taken in turn (ours, theirs, ours, …), each after ``SETTLE``: a
    machine that slows down or speeds up meanwhile weighs on both alike, and what a run
    leaves running after it ends (its directories removed on the nodes) is timed with the
    run that follows."""
    a, b, _, _ = paired_cpu(n, ours, theirs, None)
    return a, b


def paired_cpu(
    n: int, ours: Callable[[], Any], theirs: Callable[[], Any], cpu: Optional[CpuMeter]
) -> tuple[list[float], list[float], Counter[str], Counter[str]]:
    """``paired``, and with ``cpu`` the CPU seconds each side's samples took, by kind
    (``CpuMeter.spent``; a process that started within a sample is counted whole)."""
    a: list[float] = []
    b: list[float] = []
    cpu_a: Counter[str] = Counter()
    cpu_b: Counter[str] = Counter()
    for _ in range(n):
        for run, times, spent in ((ours, a, cpu_a), (theirs, b, cpu_b)):
            time.sleep(SETTLE)
            before = cpu.read() if cpu else {}
            driver = _driver_cpu()
            times += timed(1, run)
            if cpu:
                spent.update({"driver": _driver_cpu() - driver})
                spent.update(cpu.spent(before, cpu.read()))
    return a, b, cpu_a, cpu_b


def _sleep(seconds: float, after: Any = None) -> int:
    """Plain Ray's step: the same `sleep` subprocess strata's tool runs."""
    subprocess.run(["sleep", str(seconds)], check=True)
    return os.getpid()


#: Plain Ray's fan-out as a user runs it from the command line: a script that connects,
#: uploads the same working directory and runs the same 8 tasks.
PLAIN_SCRIPT = """
import subprocess, sys, ray
ray.init(address=sys.argv[1], runtime_env={"working_dir": ".", "excludes": [".strata"]}, logging_level="ERROR")
@ray.remote(num_cpus=1, scheduling_strategy="SPREAD")
def sleep(s):
    subprocess.run(["sleep", str(s)], check=True)
ray.get([sleep.remote(0.2) for _ in range(8)])
"""

#: Plain Ray's chain as a user runs it from the command line: N tasks, each given the one
#: before it.
PLAIN_CHAIN_SCRIPT = """
import subprocess, sys, ray
ray.init(address=sys.argv[1], runtime_env={"working_dir": ".", "excludes": [".strata"]}, logging_level="ERROR")
@ray.remote(num_cpus=1)
def sleep(s, after=None):
    subprocess.run(["sleep", str(s)], check=True)
ref = None
for _ in range(int(sys.argv[2])):
    ref = sleep.remote(0, ref)
ray.get(ref)
"""


#: Plain Ray's independent steps as a user runs them from the command line: N tasks at once.
PLAIN_INDEPENDENT_SCRIPT = """
import subprocess, sys, ray
ray.init(address=sys.argv[1], runtime_env={"working_dir": ".", "excludes": [".strata"]}, logging_level="ERROR")
@ray.remote(num_cpus=1)
def sleep(s):
    subprocess.run(["sleep", str(s)], check=True)
ray.get([sleep.remote(0) for _ in range(int(sys.argv[2]))])
"""


def by_command_line(
    samples: int, project: Path, address: str, plan_run: Sequence[str], plain: Sequence[str],
    cpu: Optional[CpuMeter] = None,
) -> tuple[list[float], list[float], Counter[str], Counter[str]]:
    """``samples`` whole-process times each (``paired_cpu``, with ``cpu``) of ``python -m
    strata.ray plan run <plan_run>`` against the cluster at ``address`` and of a plain Ray
    script (``plain``: the script and its arguments after the address), both run in
    ``project``."""
    ours = [sys.executable, "-m", "strata.ray", "plan", "run", plan_run[0], "--address", address, "-q",
            *plan_run[1:]]
    theirs = [sys.executable, "-c", plain[0], address, *plain[1:]]
    return paired_cpu(
        samples,
        lambda: subprocess.run(ours, cwd=project, check=True, capture_output=True),
        lambda: subprocess.run(theirs, cwd=project, check=True, capture_output=True),
        cpu,
    )


class PlainRay:
    """The same work as plain Ray tasks, with the project's working directory."""

    def __init__(self, env: dict[str, Any]) -> None:
        ray: Any = importlib.import_module("ray")
        self.ray = ray
        remote = ray.remote(_sleep)
        self.task = remote.options(num_cpus=1, runtime_env=env)
        self.spread = remote.options(num_cpus=1, runtime_env=env, scheduling_strategy="SPREAD")

    def fan(self) -> None:
        self.ray.get([self.spread.remote(0.2) for _ in range(8)])

    def chain(self, n: int) -> None:
        ref = None
        for _ in range(n):
            ref = self.task.remote(0, ref)
        self.ray.get(ref)

    def independent(self, n: int) -> None:
        self.ray.get([self.task.remote(0) for _ in range(n)])


def main() -> None:
    quick = "--quick" in sys.argv
    samples = 3 if quick else 10
    n = 16 if quick else 200
    strata_bin = Path(os.environ.get("STRATA_BIN", REPO / "target" / "debug" / "strata"))
    work = Path(tempfile.mkdtemp(prefix="strata-ray-bench-"))
    project = work / "project"
    shutil.copytree(REPO / "tools", project / "tools")
    (project / "plans").mkdir()
    (project / "plans" / "fan.json").write_text(json.dumps(FAN))
    (project / "plans" / "chain.json").write_text(json.dumps(chain(n)))
    (project / "plans" / "independent.json").write_text(json.dumps(independent(n)))
    proj = strata.Project(project)
    cluster = Cluster(num_cpus=4)
    results: dict[str, Any] = {}
    try:
        started = time.perf_counter()
        cluster.start()
        results["cluster_start_s"] = round(time.perf_counter() - started, 2)
        plain = PlainRay(sray._prepared(sray._ray(), proj, proj.scale_out([]), (), ()))
        # Warm-up: the project's package uploaded, workers started on both nodes.
        for _ in range(4):
            sray.run_plan(proj, FAN, strategy="SPREAD")
            plain.fan()
        fan, plain_fan = paired(samples, lambda: sray.run_plan(proj, FAN, strategy="SPREAD"), plain.fan)
        nodes = {p["node"] for p in sray.run_plan(proj, FAN, strategy="SPREAD")["placements"]}
        cpu = CpuMeter([proc.pid for proc in cluster.procs])
        ray_chain, plain_chain, cpu_chain, cpu_plain_chain = paired_cpu(
            samples, lambda: sray.run_plan(proj, chain(n)), lambda: plain.chain(n), cpu
        )
        ray_indep, plain_indep, cpu_indep, cpu_plain_indep = paired_cpu(
            samples, lambda: sray.run_plan(proj, independent(n)), lambda: plain.independent(n), cpu
        )
        short = n // 4
        ray_one, plain_one = paired(samples, lambda: sray.run_plan(proj, independent(1)), lambda: plain.independent(1))
        ray_chain_short, plain_chain_short = paired(
            samples, lambda: sray.run_plan(proj, chain(short)), lambda: plain.chain(short)
        )
        ray_indep_short, plain_indep_short = paired(
            samples, lambda: sray.run_plan(proj, independent(short)), lambda: plain.independent(short)
        )
        local_fan = timed(samples, lambda: proj.run_plan(FAN, jobs=8))
        local_chain = timed(samples, lambda: proj.run_plan(chain(n)))
        cli = [str(strata_bin), "plan", "run", "--quiet", "-j", "8"]
        cli_fan = timed(samples, lambda: subprocess.run([*cli, "plans/fan.json"], cwd=project, check=True, capture_output=True))
        cli_chain = timed(samples, lambda: subprocess.run([*cli, "plans/chain.json"], cwd=project, check=True, capture_output=True))
        # What a user runs: the command line, a process each, connecting to the cluster.
        address = cluster.address
        command_line = {
            "fan_out": by_command_line(samples, project, address, ("plans/fan.json", "--strategy", "SPREAD"),
                                       (PLAIN_SCRIPT,)),
            "chain": by_command_line(samples, project, address, ("plans/chain.json",), (PLAIN_CHAIN_SCRIPT, str(n)),
                                     cpu),
            "independent": by_command_line(samples, project, address, ("plans/independent.json",),
                                           (PLAIN_INDEPENDENT_SCRIPT, str(n)), cpu),
        }
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)

    med = statistics.median

    def per_step(xs: list[float]) -> float:
        return round(med(xs) / n * 1000, 2)

    def marginal(long: list[float], short_runs: list[float]) -> float:
        """What a step adds to a run, in ms: the runs of ``n`` steps against those of
        ``short``, per step between them."""
        return round((med(long) - med(short_runs)) / (n - short) * 1000, 2)

    results.update(
        {
            "samples": samples,
            "steps": n,
            "nodes_used_by_fan_out": len(nodes),
            "fan_out_ray_s": round(med(fan), 3),
            "fan_out_ray_vs_critical_path": round(med(fan) / 0.2, 2),
            "fan_out_plain_ray_s": round(med(plain_fan), 3),
            "fan_out_plain_ray_vs_critical_path": round(med(plain_fan) / 0.2, 2),
            "fan_out_python_local_s": round(med(local_fan), 3),
            "fan_out_cli_local_s": round(med(cli_fan), 3),
            "chain_ray_ms_per_step": per_step(ray_chain),
            "chain_plain_ray_ms_per_step": per_step(plain_chain),
            "independent_ray_ms_per_step": per_step(ray_indep),
            "independent_plain_ray_ms_per_step": per_step(plain_indep),
            "one_step_run_ray_ms": round(med(ray_one) * 1000, 2),
            "one_step_run_plain_ray_ms": round(med(plain_one) * 1000, 2),
            "chain_ray_marginal_ms_per_step": marginal(ray_chain, ray_chain_short),
            "chain_plain_ray_marginal_ms_per_step": marginal(plain_chain, plain_chain_short),
            "independent_ray_marginal_ms_per_step": marginal(ray_indep, ray_indep_short),
            "independent_plain_ray_marginal_ms_per_step": marginal(plain_indep, plain_indep_short),
            "chain_python_local_ms_per_step": per_step(local_chain),
            "chain_cli_local_ms_per_step": per_step(cli_chain),
        }
    )
    for name, (ours, theirs, _, _) in command_line.items():
        results[f"{name}_ray_command_line_s"] = round(med(ours), 3)
        results[f"{name}_plain_ray_script_s"] = round(med(theirs), 3)
    # Each pair's ratio, ours against theirs taken next to it: a machine that slows down or
    # speeds up between pairs weighs on neither side.
    for name, (ours, theirs) in {"fan_out": (fan, plain_fan), "chain": (ray_chain, plain_chain),
                                 "independent": (ray_indep, plain_indep)}.items():
        results[f"{name}_paired_ratio"] = round(med([a / b for a, b in zip(ours, theirs)]), 2)
    # The CPU each side's samples took, per step, in ms, by kind; through the command line, the
    # driver's process alone (a process each, its start and Ray's connection included).
    cpu_of = {"chain": (cpu_chain, cpu_plain_chain), "independent": (cpu_indep, cpu_plain_indep)}
    for name, (ours_cpu, theirs_cpu) in cpu_of.items():
        for side, spent in (("ray", ours_cpu), ("plain_ray", theirs_cpu)):
            for kind in CPU_KINDS:
                results[f"{name}_{side}_cpu_{kind}_ms_per_step"] = round(spent[kind] / (samples * n) * 1000, 3)
    for name in ("chain", "independent"):
        for side, spent in (("ray", command_line[name][2]), ("plain_ray", command_line[name][3])):
            results[f"{name}_command_line_{side}_cpu_driver_ms_per_step"] = round(spent["driver"] / (samples * n) * 1000, 3)
    r = results
    results["fan_out_ratio_vs_plain_ray"] = round(r["fan_out_ray_vs_critical_path"] / r["fan_out_plain_ray_vs_critical_path"], 2)
    results["chain_vs_plain_ray"] = round(r["chain_ray_ms_per_step"] / r["chain_plain_ray_ms_per_step"], 2)
    results["independent_vs_plain_ray"] = round(r["independent_ray_ms_per_step"] / r["independent_plain_ray_ms_per_step"], 2)
    print(f"| measure (median of {samples}) | strata.ray (2 nodes) | plain Ray (2 nodes) | strata.ray / plain Ray |")
    print("|---|---|---|---|")
    print(
        f"| 8 × 200 ms fan-out, wall / critical path | {r['fan_out_ray_vs_critical_path']}× | "
        f"{r['fan_out_plain_ray_vs_critical_path']}× | {r['fan_out_ratio_vs_plain_ray']} |"
    )
    print(
        f"| per step, chain of {n} `sleep 0` | {r['chain_ray_ms_per_step']} ms | {r['chain_plain_ray_ms_per_step']} ms | "
        f"{r['chain_vs_plain_ray']} |"
    )
    print(
        f"| per step, {n} independent `sleep 0` | {r['independent_ray_ms_per_step']} ms | "
        f"{r['independent_plain_ray_ms_per_step']} ms | {r['independent_vs_plain_ray']} |"
    )
    print(
        f"| per run, a plan of one `sleep 0` step | {r['one_step_run_ray_ms']} ms | {r['one_step_run_plain_ray_ms']} ms | "
        f"{round(r['one_step_run_ray_ms'] / r['one_step_run_plain_ray_ms'], 2)} |"
    )
    for name, what in (("chain", "chain"), ("independent", "independent steps")):
        ours_ms, theirs_ms = r[f"{name}_ray_marginal_ms_per_step"], r[f"{name}_plain_ray_marginal_ms_per_step"]
        print(
            f"| marginal per step, {what} ({n} against {short} steps) | {ours_ms} ms | {theirs_ms} ms | "
            f"{round(ours_ms / theirs_ms, 2)} |"
        )
    shown = {"fan_out": "8 × 200 ms fan-out", "chain": f"chain of {n} `sleep 0`", "independent": f"{n} independent `sleep 0`"}
    for name, what in shown.items():
        ours_s, theirs_s = r[f"{name}_ray_command_line_s"], r[f"{name}_plain_ray_script_s"]
        print(
            f"| command line, {what}, whole process (`python -m strata.ray plan run` / a plain Ray script) | "
            f"{ours_s} s | {theirs_s} s | {round(ours_s / theirs_s, 2)} |"
        )
    def cpu_row(what: str, ours_ms: float, theirs_ms: float) -> None:
        print(f"| CPU per step, {what} | {ours_ms} ms | {theirs_ms} ms | {round(ours_ms / theirs_ms, 2) if theirs_ms else ''} |")

    kinds = (("driver", "the driver"), ("workers", "Ray's workers"), ("tools", "the tools (`sleep`)"),
             ("nodes", "raylets, GCS and the rest"))
    for name, what in (("chain", f"chain of {n}"), ("independent", f"{n} independent")):
        for kind, where in kinds:
            cpu_row(f"{what}, in {where}", r[f"{name}_ray_cpu_{kind}_ms_per_step"],
                    r[f"{name}_plain_ray_cpu_{kind}_ms_per_step"])
    # Through the command line, the driver's process alone: each run has workers of its own,
    # which end with it and are reaped by their raylet after the sample, in the next one.
    for name, what in (("chain", f"chain of {n}"), ("independent", f"{n} independent")):
        cpu_row(f"command line, {what}, in the driver's process", r[f"{name}_command_line_ray_cpu_driver_ms_per_step"],
                r[f"{name}_command_line_plain_ray_cpu_driver_ms_per_step"])
    print(
        f"| local, for scale: chain per step (Project.run_plan / strata plan run) | "
        f"{r['chain_python_local_ms_per_step']} ms | {r['chain_cli_local_ms_per_step']} ms | |"
    )
    print(
        f"\nMedian of the {samples} pairs' ratios (each sample of strata.ray against the plain Ray one taken "
        f"next to it): fan-out {r['fan_out_paired_ratio']}, chain {r['chain_paired_ratio']}, "
        f"independent {r['independent_paired_ratio']}\n"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
