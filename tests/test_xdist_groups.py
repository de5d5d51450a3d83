"""``make test`` runs ``--dist loadgroup``: an ``xdist_group`` runs on one worker.

A small suite in a folder of its own runs under two xdist workers with our plugin
(tests/support/xdist_groups.py); each test notes the worker it ran on. Without the
plugin, on pytest 9.2 and xdist 3.8, the six grouped tests are spread over both workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
XDIST = ["-n", "2", "--dist", "loadgroup"]

SUITE = """
import os
from pathlib import Path

import pytest

OUT = Path(os.environ["GROUP_OUT"])


def _note(name: str) -> None:
    (OUT / f"{name}.{os.environ['PYTEST_XDIST_WORKER']}").touch()


@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("i", range(6))
def test_grouped(i: int) -> None:
    _note(f"grouped{i}")


@pytest.mark.parametrize("i", range(6))
def test_free(i: int) -> None:
    _note(f"free{i}")
"""


def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    out = tmp_path / "out"
    suite.mkdir()
    out.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n")
    (suite / "test_groups.py").write_text(SUITE)
    # not this run's xdist worker variables (the suite itself may run under xdist)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(GROUP_OUT=str(out), PYTHONPATH=str(ROOT))
    args = [
        "-c",
        str(suite / "pytest.ini"),
        "--rootdir",
        str(suite),
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    proc = subprocess.run(
        # our plugin last: without it the group is split
        [
            sys.executable,
            "-m",
            "pytest",
            str(suite),
            *args,
            *XDIST,
            "-p",
            "tests.support.xdist_groups",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=suite,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = {p.stem: p.suffix.lstrip(".") for p in out.iterdir()}
    assert len(ran) == 12, sorted(ran)
    grouped = {ran[f"grouped{i}"] for i in range(6)}
    assert len(grouped) == 1, f"the group was split over workers: {sorted(ran.items())}"
    assert set(ran.values()) == {"gw0", "gw1"}, "two workers must have run, or this proves nothing"
