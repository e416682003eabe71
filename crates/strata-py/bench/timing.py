"""Timing shared by the Python benchmarks: strata-bench's sampling and its line form.

Each benchmark checks that both sides give the same result, then times them in one run:
after a warm-up, the median of several batches of calls, in nanoseconds per call, printed as
``name strata_ns=… peer=… peer_ns=… ratio=…`` (ratio = strata's time / the peer's; below 1
means strata took less time).
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable, List, Mapping, NamedTuple, Optional


class Mode(NamedTuple):
    """How long to measure: the warm-up and the samples."""

    name: str
    samples: int
    sample_ms: float
    warmup_ms: float


QUICK = Mode("quick", 7, 15.0, 100.0)
FULL = Mode("full", 31, 60.0, 300.0)


def mode(quick: bool) -> Mode:
    """``QUICK`` (7 samples of ~15 ms) or ``FULL`` (31 samples of ~60 ms)."""
    return QUICK if quick else FULL


def header(m: Mode) -> str:
    """The first line of a run: the mode and how it samples."""
    return (
        f"# strata python bench {m.name} mode: warm-up {m.warmup_ms:.0f}ms, {m.samples} samples "
        f"of ~{m.sample_ms:.0f}ms each, median ns per call"
    )


def load(when: str) -> str:
    """The load average, as a comment line (``when``: ``start`` or ``end``)."""
    return f"# load average at {when}: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"


def sample(f: Callable[[], Any], m: Mode) -> float:
    """Median nanoseconds per call of ``f`` over ``m.samples`` batches of about ``m.sample_ms``."""
    deadline = time.perf_counter() + m.warmup_ms / 1000
    calls = 0
    while time.perf_counter() < deadline:
        f()
        calls += 1
    per_call = (m.warmup_ms / 1000) / max(calls, 1)
    batch = max(1, int(m.sample_ms / 1000 / per_call))
    results: List[float] = []
    for _ in range(m.samples):
        start = time.perf_counter_ns()
        for _ in range(batch):
            f()
        results.append((time.perf_counter_ns() - start) / batch)
    return statistics.median(results)


def line(name: str, strata_ns: float, peer: str, peer_ns: float) -> str:
    """One comparison in strata-bench's form."""
    return (
        f"{name} strata_ns={strata_ns:.0f} peer={peer} peer_ns={peer_ns:.0f} "
        f"ratio={strata_ns / peer_ns:.2f}"
    )


def profiled(sides: Mapping[str, Callable[[], Any]], side: str, iters: Optional[int]) -> bool:
    """With ``--iters N``: calls ``sides[side]`` exactly N times, untimed (for a profiler's
    counts), and returns True so the timed comparison is skipped; False without it."""
    if iters is None:
        return False
    call = sides[side]
    for _ in range(iters):
        call()
    return True
