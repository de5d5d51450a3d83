#!/usr/bin/env python
"""A study of chest CTs imported serially (one volume at a time) and in parallel.

    .venv/bin/python -m benchmarks.ct_import [--volumes 100] [--slices 300] [--size 512]
        [--repeat 1] [--before REV] [--quick] [--update-doc docs/performance.md]
        [--json-out FILE]

The volumes are synthetic CT phantoms (benchmarks.strip_bench.phantom: air, an
elliptical body with noise, a spine; a seed of their own each), int16, saved as
.nii.gz, one strip case each. Every import is ``import_manifest`` (validate,
stage, commit all or nothing, as ``readerstudy import``) into a fresh SQLite
database, in a fresh process, three ways: ``before``, the code as it was when
issue 43 asked for faster imports (``--before``, a commit extracted with ``git
archive`` and run from there: one volume at a time, each .nii.gz read whole by
nibabel); ``serial``, this checkout with ``workers=1``; ``parallel``, this
checkout's default pool (staging.import_workers: the cores, bounded by memory).
The three alternate (B S P B S P ...) so all see the same machine load. Peak
memory is the largest sum of Pss (the proportional set size: a page shared by
the forked workers counted once) over the importing process and all its
children (spawned workers), every 0.1 s.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np

from benchmarks.kit.doc import ROOT, emit, para, shown_command, update_doc
from benchmarks.kit.measure import load_average, machine, process_tree
from benchmarks.strip_bench import phantom

SECTION = "## CT import"
TARGET_SPEEDUP = 1.8
TARGET_PEAK_MIB = 1024
# the last commit before issue 43's first change to imports (350721c, the process pool)
BEFORE = "9535498"

CHILD = """
import inspect, json, sys, time
from pathlib import Path
from reader_app.core.db import migrate
from reader_app.core.settings import load_settings
from reader_app.ingest.importer import import_manifest
settings = load_settings()
migrate(settings.database_url)
workers = None if sys.argv[2] == "auto" else int(sys.argv[2])
pooled = "workers" in inspect.signature(import_manifest).parameters  # not the code before
t0 = time.monotonic()
result = import_manifest(Path(sys.argv[1]), settings=settings, slug="ct",
                         **({"workers": workers} if pooled else {}))
seconds = time.monotonic() - t0
if workers is None and pooled:
    from reader_app.ingest.staging import import_workers
    workers = import_workers(result.cases, settings)
print(json.dumps({"seconds": seconds, "cases": result.cases, "images": result.images,
                  "workers": workers or 1}))
"""


def write_volume(path: Path, slices: int, size: int, seed: int) -> None:
    vol = phantom(slices, size=size, seed=seed)
    affine = np.diag([0.7, 0.7, 2.5, 1.0])
    nib.save(nib.Nifti1Image(vol, affine), str(path))


def write_volumes(folder: Path, count: int, slices: int, size: int) -> Path:
    """The study folder; the volumes made on every core (not measured: 100 of the issue's
    size take about 7 minutes one at a time)."""
    folder.mkdir(parents=True)
    rows = ["case_id,kind,files,diagnosis"]
    paths = [folder / f"ct{i:03d}.nii.gz" for i in range(count)]
    with ProcessPoolExecutor(len(os.sched_getaffinity(0)), mp_context=get_context("spawn")) as pool:
        list(pool.map(write_volume, paths, [slices] * count, [size] * count, range(count)))
    for i, path in enumerate(paths):
        rows.append(f"ct-{i:03d},strip,{path.name},Finding {i}")
    manifest = folder / "manifest.csv"
    manifest.write_text("\n".join(rows) + "\n")
    return manifest


def tree_pss_kib(pid: int) -> int:
    """Pss of ``pid`` and every descendant (via /proc/*/stat parent ids): each page
    shared by several processes (forked workers share the imported libraries) counted
    once in all, split between them."""
    total = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def extract(rev: str, into: Path) -> str:
    """``git archive`` of ``rev`` into ``into``; "" or why it could not be made (e.g. a
    shallow clone without that commit)."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True
    )
    if archive.returncode != 0:
        return f"git archive {rev} failed: {archive.stderr.decode(errors='replace')[:200]}"
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return ""


def one_import(manifest: Path, workers: str, work: Path, root: Path = ROOT) -> dict[str, Any]:
    data = work / f"data-{time.monotonic_ns()}"
    data.mkdir()
    env = {
        **os.environ,
        "READERSTUDY_DATA_DIR": str(data),
        "READERSTUDY_DATABASE_URL": f"sqlite:///{data / 'readerstudy.db'}",
        "PYTHONPATH": str(root),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(manifest), workers],
        env=env,
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_kib(proc.pid))
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    load = load_average()
    sampler.start()
    out, err = proc.communicate()
    done.set()
    sampler.join()
    shutil.rmtree(data, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"import failed ({workers}):\n{err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    return {**result, "peak_mib": round(peak[0] / 1024, 1), "load": load}


def run(
    volumes: int,
    slices: int,
    size: int,
    repeat: int,
    work: Path,
    workers: str = "auto",
    before: str | None = BEFORE,
) -> dict[str, Any]:
    started = time.monotonic()
    before_root = work / "before"
    before_skipped = "not asked for" if before is None else extract(before, before_root)
    t0 = time.monotonic()
    manifest = write_volumes(work / "study", volumes, slices, size)
    made_s = time.monotonic() - t0
    file_mib = sum(p.stat().st_size for p in manifest.parent.glob("*.nii.gz")) / 2**20
    load_start = load_average()
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "serial": [], "parallel": []}
    for _ in range(repeat):  # interleaved: B S P B S P ...
        if not before_skipped:
            runs["before"].append(one_import(manifest, "1", work, before_root))
        runs["serial"].append(one_import(manifest, "1", work))
        runs["parallel"].append(one_import(manifest, workers, work))
    serial = statistics.median(r["seconds"] for r in runs["serial"])
    parallel = statistics.median(r["seconds"] for r in runs["parallel"])
    old = statistics.median(r["seconds"] for r in runs["before"]) if runs["before"] else None
    peak = max(r["peak_mib"] for r in runs["parallel"])
    speedup = serial / parallel
    # the figure: against the code it was filed on; without it, the serial path
    headline = (old if old is not None else serial) / parallel
    return {
        "benchmark": "ct_import",
        "machine": machine(),
        "cores": len(os.sched_getaffinity(0)),
        "volumes": volumes,
        "slices": slices,
        "size": size,
        "files_mib": round(file_mib, 1),
        "make_s": round(made_s, 1),
        "repeat": repeat,
        "runs": runs,
        "serial_s": round(serial, 2),
        "parallel_s": round(parallel, 2),
        "speedup": round(speedup, 2),
        "before": before,
        "before_skipped": before_skipped,
        "before_s": None if old is None else round(old, 2),
        "before_peak_mib": max((r["peak_mib"] for r in runs["before"]), default=None),
        "speedup_vs_before": None if old is None else round(old / parallel, 2),
        "serial_peak_mib": max(r["peak_mib"] for r in runs["serial"]),
        "parallel_peak_mib": peak,
        "workers": runs["parallel"][0]["workers"],
        "met": headline >= TARGET_SPEEDUP and peak < TARGET_PEAK_MIB,
        "load_start": load_start,
        "load_end": load_average(),
        "total_s": round(time.monotonic() - started, 1),
    }


def markdown(res: dict[str, Any], command: str) -> str:
    names = {
        "before": f"before (`{res['before']}`, 1 process)",
        "serial": "this checkout, serial (1 process)",
        "parallel": "this checkout, parallel ({} processes)",
    }
    rows = [
        f"| {names[name].format(r['workers'])}, run {i} "
        f"| {r['seconds']:.1f} s | {r['peak_mib']} MiB | {r['load']} |"
        for name in ("before", "serial", "parallel")
        for i, r in enumerate(res["runs"][name], start=1)
    ]
    verdict = "met" if res["met"] else "not met"
    if res["before_s"] is not None:
        against = (
            f"Median before {res['before_s']} s, serial {res['serial_s']} s, parallel"
            f" {res['parallel_s']} s: the parallel import is **{res['speedup_vs_before']}x**"
            f" faster than the code before (target: at least {TARGET_SPEEDUP}x on 2 cores,"
            f" peak under {TARGET_PEAK_MIB} MiB: {verdict}), and {res['speedup']}x the serial"
            " path of this checkout (what the pool alone gives; the rest is reading a"
            " .nii.gz a plane at a time);"
        )
    else:
        against = (
            f"The code before was not run ({res['before_skipped']}). Median serial"
            f" {res['serial_s']} s, parallel {res['parallel_s']} s: **{res['speedup']}x**"
            f" (target: at least {TARGET_SPEEDUP}x on 2 cores, peak under"
            f" {TARGET_PEAK_MIB} MiB: {verdict});"
        )
    lines = [
        SECTION,
        "",
        f"Command: `{command}` ({res['machine']}; {res['cores']} usable).",
        "",
        *para(
            f"{res['volumes']} synthetic chest CTs, {res['size']}x{res['size']}x{res['slices']}"
            f" int16 .nii.gz ({res['files_mib']} MiB in all, made in {res['make_s']} s), one"
            " strip case each, imported by `import_manifest` (validate, stage, commit all or"
            " nothing, as `readerstudy import`) into a fresh SQLite database in a fresh"
            " process, three ways: `before`, the code as it was when issue 43 asked for"
            " faster imports (one volume at a time, each .nii.gz read whole by nibabel),"
            " extracted with `git archive` and run from there; this checkout serially"
            " (`workers=1`); and with its default pool (`staging.import_workers`: the cores,"
            " bounded by the memory available). They alternate (B S P B S P ...) so all see"
            " the same load. Peak: the largest sum of Pss (shared pages counted once) over"
            " the importing process and its workers, sampled every 0.1 s. Load: the 1-minute"
            " load average when each run started.",
        ),
        "| import | wall | peak memory | load |",
        "|---|---:|---:|---|",
        *rows,
        "",
        *para(
            f"{against} peak {res['parallel_peak_mib']} MiB parallel, {res['serial_peak_mib']}"
            " MiB serial"
            + (
                f", {res['before_peak_mib']} MiB before."
                if res["before_peak_mib"] is not None
                else "."
            ),
        ),
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--volumes", type=int, default=100)
    parser.add_argument("--slices", type=int, default=300)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--before", default=BEFORE, help=f"the code to compare with (default {BEFORE}; none: skip)"
    )
    parser.add_argument(
        "--workers", default="auto", help="processes of the parallel runs (auto: the default)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="3 small volumes, once, 2 workers, no before"
    )
    parser.add_argument("--update-doc", type=Path)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.volumes, args.slices, args.size, args.repeat, args.workers = 3, 20, 64, 1, "2"
        args.before = "none"  # a smoke run: no history needed (a shallow clone has none)
    before = None if args.before == "none" else args.before
    with tempfile.TemporaryDirectory(prefix="ct-import-") as tmp:
        res = run(
            args.volumes, args.slices, args.size, args.repeat, Path(tmp), args.workers, before
        )
    if args.update_doc and not args.quick:
        update_doc(args.update_doc, markdown(res, shown_command("ct_import", sys.argv[1:])))
    return emit(res, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
