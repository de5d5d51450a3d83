"""Timing, percentiles, the load average, the machine line and a process tree: one definition each.

Percentiles are **nearest rank**: the p-th percentile of n values is the
ceil(p/100 * n)-th smallest (at least the first), so every figure is a latency
that was actually observed; the p95 of 30 values is their second-slowest.
docs/performance.md states this once, in its introduction.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return float(ordered[rank - 1])


def latency_summary(values_ms: Sequence[float], digits: int = 1) -> dict[str, Any]:
    """n, p50, p95, p99, mean and max of latencies in ms (None where there are no values)."""

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, digits)

    return {
        "n": len(values_ms),
        "p50_ms": r(percentile(values_ms, 50)),
        "p95_ms": r(percentile(values_ms, 95)),
        "p99_ms": r(percentile(values_ms, 99)),
        "mean_ms": r(statistics.fmean(values_ms)) if values_ms else None,
        "max_ms": r(max(values_ms)) if values_ms else None,
    }


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process under it, from the parent ids of /proc/*/stat (Linux)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # the field after the parenthesised name, which may hold spaces
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    tree, todo = [pid], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        tree += kids
        todo += kids
    return tree


def load_average() -> float:
    """The 1-minute load average (what `uptime` prints first), to two decimals."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # not available on this platform
        return float("nan")


def machine() -> str:
    """``x86_64, 2 cores, Python 3.11.7``: the line every section quotes."""
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """``with stopwatch() as t: ...``; afterwards ``t[0]`` holds the seconds it took."""
    elapsed: list[float] = []
    start = time.perf_counter()
    try:
        yield elapsed
    finally:
        elapsed.append(time.perf_counter() - start)


def best_of(fn: Callable[[], T], repeat: int = 1) -> tuple[float, T]:
    """(seconds, result): the fastest of ``repeat`` calls. On a shared machine the
    minimum is the least disturbed run."""
    best = float("inf")
    result: Any = None
    for _ in range(max(repeat, 1)):
        with stopwatch() as took:
            result = fn()
        best = min(best, took[0])
    return best, result
