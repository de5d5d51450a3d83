"""The benchmark drivers run, on tiny sizes, and the kit's pieces do what they say.

Smoke only: no timing is asserted. The browser benchmarks (transition, memory)
each take 10-20 s here; they sit in their own xdist groups so ``make test -n 2``
runs them side by side. Each driver runs as ``python -m benchmarks.NAME``, as
``make bench`` runs it.
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

from benchmarks import memory, run_all, submit_cost
from benchmarks.kit import images
from benchmarks.kit.chromium import CHROMIUM
from benchmarks.kit.doc import shown_command, update_doc
from benchmarks.kit.measure import latency_summary, percentile

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"
)


def _run(module: str, *args: str, timeout: float = 300) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READERSTUDY_")}
    proc = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_submit_cost_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process (no interpreter start-up): ``main`` as the command line runs it."""
    monkeypatch.setattr(sys, "argv", ["submit_cost", "--quick"])
    assert submit_cost.main() == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for backend in ("SQLite", "SQLite, lookup from slot 0 (before)"):
        row = res["backends"][backend]
        assert row["answers"] == 40
        assert 0 < row["total"]["p50_ms"] <= row["total"]["p95_ms"]


@pytest.mark.browser
@pytest.mark.xdist_group("bench_transition")
@needs_chromium
def test_run_all_runs_the_transition_benchmark() -> None:
    """run_all's plumbing, transition.py, the bare floor app and the submit cost, together."""
    summary = _run("run_all", "--quick", "--only", "transition")
    assert summary["benchmarks"] == ["transition"] and summary["failed"] == []
    # run_all read transition's JSON: exam, floor and the server-side submit figures
    headline = summary["headlines"]["transition"]
    assert "ratio p95" in headline and "server-side submit p95" in headline, headline


@pytest.mark.browser
@pytest.mark.xdist_group("bench_memory")
@needs_chromium
def test_memory_benchmark_runs() -> None:
    res = _run("memory", "--quick")
    assert res["readers"] == 2 and res["samples"] > 0
    assert res["idle_mib"] > 0 and res["peak_mib"] >= res["sessions_open_mib"] > 0


@pytest.mark.browser
@pytest.mark.xdist_group("bench_memory")
@needs_chromium
def test_analyst_memory_benchmark_runs() -> None:
    res = _run("analyst_memory", "--quick")
    assert res["sessions"] == 2 and res["cases"] == 40
    assert len(res["after_session_mib"]) == 2 and len(res["step_mib"]) == 2
    assert len(res["step_mib"][0]) == len(res["steps"]) == 7
    assert res["idle_mib"] > 0 and res["peak_mib"] >= max(res["after_session_mib"]) > 0
    assert res["first_session_mib"] == pytest.approx(
        res["after_session_mib"][0] - res["idle_mib"], abs=0.2
    )


def test_analyst_pages_benchmark_runs() -> None:
    res = _run("analyst_pages", "--quick", timeout=900)
    assert res["benchmark"] == "analyst_pages" and res["rounds"] == 1
    this = res["summary"]["this"]
    assert set(this["first_ms"]) == set(this["second_ms"]) and len(this["first_ms"]) == 6
    assert all(ms > 0 for ms in this["first_ms"].values()) and res["floor_first_ms"] > 0


def test_ct_import_benchmark_runs() -> None:
    res = _run("ct_import", "--quick", timeout=600)
    serial, parallel = res["runs"]["serial"][0], res["runs"]["parallel"][0]
    assert serial["workers"] == 1 and serial["cases"] == parallel["cases"] == 3
    assert serial["images"] == parallel["images"] > 0 and parallel["peak_mib"] > 0


def test_every_script_in_benchmarks_is_run_by_run_all() -> None:
    listed = {b.script for b in run_all.BENCHES} | set(run_all.HELPERS)
    assert {p.name for p in BENCH.glob("*.py")} <= listed


def test_tagged_png_has_new_bytes_and_the_same_pixels() -> None:
    from io import BytesIO

    from PIL import Image

    png = images.ct_slice_png(3, "lung", 32)
    tagged = images.tagged(png, "case 7")
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
    update_doc(doc, "## Transitions\n\nnew transitions\n")
    update_doc(doc, "## Memory\n\nnew memory\n", memory.SECTION)
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


def test_percentiles_are_nearest_rank() -> None:
    # 1..20 shuffled: the p-th percentile by nearest rank is the ceil(p/100 * 20)-th smallest
    values = [
        float(v) for v in (7, 3, 20, 1, 15, 9, 2, 11, 18, 5, 14, 6, 19, 4, 13, 8, 17, 10, 16, 12)
    ]
    assert percentile(values, 50) == 10.0  # rank 10
    assert percentile(values, 95) == 19.0  # rank 19: the second-slowest of 20
    assert percentile(values, 99) == 20.0  # rank ceil(19.8) = 20
    assert percentile(values, 0) == 1.0  # at least the first
    assert percentile([], 95) is None
    summary = latency_summary([0.123, 0.456], digits=2)
    assert summary == {
        "n": 2, "p50_ms": 0.12, "p95_ms": 0.46, "p99_ms": 0.46, "mean_ms": 0.29, "max_ms": 0.46
    }  # fmt: skip
    assert latency_summary([])["p95_ms"] is None


def test_the_command_a_section_quotes_hides_urls_and_the_json_path() -> None:
    argv = ["--postgres-url", "postgresql://u:pw@db/x", "--json-out", "/tmp/x.json", "--quick"]
    assert shown_command("transition", argv) == (
        ".venv/bin/python -m benchmarks.transition --postgres-url <url> --quick"
    )


def test_no_benchmark_reaches_into_sys_path() -> None:
    """Drivers import the kit as a package; none edits sys.path to find a sibling."""
    for path in [*BENCH.rglob("*.py")]:
        assert "sys.path" not in path.read_text(), path
