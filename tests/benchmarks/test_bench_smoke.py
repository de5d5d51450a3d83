"""The benchmark scripts run, on tiny sizes. Smoke only: no timing is asserted.

The browser benchmarks (transition, memory) each take 10-20 s here; they sit in
their own xdist groups so ``make test -n 2`` runs them side by side.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
CHROMIUM = os.environ.get("READERSTUDY_CHROMIUM", "/usr/bin/chromium")
sys.path.insert(0, str(BENCH))

import memory  # noqa: E402
import run_all  # noqa: E402
import transition  # noqa: E402

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"
)


def _run(script: str, *args: str, timeout: float = 300) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READERSTUDY_")}
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_submit_cost_runs() -> None:
    res = _run("submit_cost.py", "--quick")
    for backend in ("SQLite", "SQLite, lookup from slot 0 (before)"):
        row = res["backends"][backend]
        assert row["answers"] == 40
        assert 0 < row["total"]["p50_ms"] <= row["total"]["p95_ms"]


@pytest.mark.browser
@pytest.mark.xdist_group("bench_transition")
@needs_chromium
def test_run_all_runs_the_transition_benchmark() -> None:
    """run_all's plumbing, transition.py, the bare floor app and the submit cost, together."""
    summary = _run("run_all.py", "--quick", "--only", "transition")
    assert summary["benchmarks"] == ["transition"] and summary["failed"] == []


@pytest.mark.browser
@pytest.mark.xdist_group("bench_memory")
@needs_chromium
def test_memory_benchmark_runs() -> None:
    res = _run("memory.py", "--quick")
    assert res["readers"] == 2 and res["samples"] > 0
    assert res["idle_mib"] > 0 and res["peak_mib"] >= res["sessions_open_mib"] > 0


def test_every_script_in_benchmarks_is_run_by_run_all() -> None:
    listed = {b.script for b in run_all.BENCHES} | set(run_all.HELPERS)
    assert {p.name for p in BENCH.glob("*.py")} <= listed


def test_tagged_png_has_new_bytes_and_the_same_pixels() -> None:
    from io import BytesIO

    from PIL import Image

    png = transition.ct_slice_png(3, "lung", 32)
    tagged = transition.tagged(png, "case 7")
    assert tagged != png
    assert Image.open(BytesIO(tagged)).tobytes() == Image.open(BytesIO(png)).tobytes()
    length, kind = struct.unpack(">I4s", tagged[33:41])
    data = tagged[41 : 41 + length]
    assert kind == b"tEXt" and struct.unpack(">I", tagged[41 + length : 45 + length])[0] == (
        zlib.crc32(kind + data) & 0xFFFFFFFF
    )


def test_doc_update_rewrites_only_its_own_section(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nintro\n\n## Scoring\n\nkeep me\n\n## Memory\n\nold\n")
    transition.update_doc(doc, "## Transitions\n\nnew transitions\n")
    transition.update_doc(doc, "## Memory\n\nnew memory\n", memory.SECTION)
    text = doc.read_text()
    assert "keep me" in text and "old" not in text
    assert text.index("## Scoring") < text.index("## Memory") < text.index("## Transitions")
    run_all.write_doc(doc, "## Summary\n\nthe table\n")
    text = doc.read_text()
    assert text.startswith("# Performance\n") and "intro" not in text
    assert text.index("## Summary") < text.index("## Scoring") and "keep me" in text


def test_rss_counts_this_process() -> None:
    assert memory.rss_kib(os.getpid()) > 1024
    assert memory.rss_kib(2**22 + 12345) == 0  # no such process
