"""The Ray benchmark's CPU meter (``bench_fanout.CpuMeter``), on a made-up ``/proc``: which
process counts as what, and how a process that starts, ends or whose pid is used again
within a sample is counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_fanout import _CLOCK_TICKS, CpuMeter

#: The session of the cluster's nodes in the made-up ``/proc``.
SESSION = 500


def put(proc: Path, pid: int, argv: list[str], *, ticks: tuple[int, int, int, int], started: int = 1,
        session: int = SESSION) -> None:
    """Process ``pid`` in ``proc``: its command line, and a ``stat`` line as Linux writes one
    (a name with a space and a parenthesis in it; user, system, reaped children's user and
    system time in clock ticks; its start time)."""
    (proc / str(pid)).mkdir(exist_ok=True)
    (proc / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    user, system, reaped_user, reaped_system = ticks
    fields = ["S", "1", str(pid), str(session), "0", "-1", "0", "0", "0", "0", "0",
              str(user), str(system), str(reaped_user), str(reaped_system), "20", "0", "1", "0", str(started)]
    (proc / str(pid) / "stat").write_text(f"{pid} (odd) name) " + " ".join(fields) + " 0 0\n")


def seconds(ticks: int) -> float:
    return ticks / _CLOCK_TICKS


@pytest.fixture()
def proc(tmp_path: Path) -> Path:
    root = tmp_path / "proc"
    root.mkdir()
    (root / "self").mkdir()  # not a process
    return root


def test_each_process_counts_as_its_kind(proc: Path) -> None:
    put(proc, 10, ["/x/ray/core/src/ray/raylet/raylet", "--node"], ticks=(100, 50, 0, 0))
    put(proc, 11, ["ray::IDLE"], ticks=(10, 5, 0, 0))
    put(proc, 12, ["/venv/bin/python", "/x/ray/_private/workers/default_worker.py", "--node-ip"], ticks=(1, 1, 0, 0))
    put(proc, 13, ["/venv/bin/python", "-m", "other"], ticks=(7, 0, 0, 0), session=SESSION + 1)
    meter = CpuMeter([SESSION], proc)
    before = meter.read()
    assert before == {(10, "1"): ("nodes", 150, 0), (11, "1"): ("workers", 15, 0), (12, "1"): ("workers", 2, 0)}
    # The raylet works; a worker runs a step and its tool, reaped by it.
    put(proc, 10, ["/x/ray/core/src/ray/raylet/raylet", "--node"], ticks=(103, 51, 0, 0))
    put(proc, 11, ["ray::strata:plan/a"], ticks=(20, 8, 6, 2))
    put(proc, 13, ["/venv/bin/python", "-m", "other"], ticks=(900, 0, 0, 0), session=SESSION + 1)
    assert CpuMeter.spent(before, meter.read()) == {
        "nodes": seconds(4),
        "workers": seconds(13),
        "tools": seconds(8),
    }


def test_a_worker_that_ended_counts_through_the_raylet_that_reaped_it(proc: Path) -> None:
    put(proc, 10, ["/x/raylet"], ticks=(100, 0, 40, 10))
    put(proc, 11, ["ray::IDLE"], ticks=(30, 0, 0, 0))
    meter = CpuMeter([SESSION], proc)
    before = meter.read()
    # Worker 11 ran 12 more ticks (and tools of 3) and ended: the raylet reaped all of it.
    for entry in (proc / "11").iterdir():
        entry.unlink()
    (proc / "11").rmdir()
    put(proc, 10, ["/x/raylet"], ticks=(101, 0, 40 + 30 + 12 + 3, 10))
    assert CpuMeter.spent(before, meter.read()) == {"nodes": seconds(1), "workers": seconds(45)}


def test_a_process_that_started_within_a_sample_counts_whole(proc: Path) -> None:
    meter = CpuMeter([SESSION], proc)
    before = meter.read()
    put(proc, 20, ["ray::IDLE"], ticks=(9, 1, 2, 0))
    assert CpuMeter.spent(before, meter.read()) == {"workers": seconds(10), "tools": seconds(2)}


def test_a_pid_used_again_is_another_process_of_its_own_kind(proc: Path) -> None:
    put(proc, 30, ["ray::IDLE"], ticks=(500, 0, 0, 0), started=7)
    meter = CpuMeter([SESSION], proc)
    before = meter.read()
    # Pid 30 ended, and a raylet's helper started under it: counted whole, never as less than
    # the worker it replaced.
    put(proc, 30, ["/x/ray/dashboard/agent.py"], ticks=(4, 0, 0, 0), started=90)
    after = meter.read()
    assert after == {(30, "90"): ("nodes", 4, 0)}
    assert CpuMeter.spent(before, after) == {"nodes": seconds(4), "workers": 0}
