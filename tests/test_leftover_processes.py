"""The suite fails when a process it started outlives it (tests/conftest.py's
``pytest_sessionfinish``, tests/support/processes.py), with and without xdist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

INNER = """
import subprocess, sys
from tests.support.processes import die_with_parent, track

def test_starts_a_sleeper():
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], preexec_fn=die_with_parent
    )
    track(proc, "the sleeper {marker}")
    {stop}
"""


def _run(
    tmp_path: Path, *, stop: bool, workers: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    marker = f"{tmp_path.name}-{stop}-{workers}"
    (tmp_path / "test_inner.py").write_text(
        INNER.format(marker=marker, stop="proc.kill(); proc.wait()" if stop else "")
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-n", workers,
         "--rootdir", str(tmp_path), "-p", "no:cacheprovider", str(tmp_path / "test_inner.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    return done, marker


@pytest.mark.parametrize("workers", ["0", "1"])
def test_a_process_left_running_fails_the_run_and_is_killed(tmp_path: Path, workers: str) -> None:
    done, marker = _run(tmp_path, stop=False, workers=workers)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 passed" in out, out  # the test itself passed: the leftover failed the run
    assert f"the sleeper {marker}" in out, out
    assert "still running at its end (killed)" in out, out


def test_a_run_that_stops_what_it_started_passes(tmp_path: Path) -> None:
    done, marker = _run(tmp_path, stop=True, workers="0")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert marker not in out, out
