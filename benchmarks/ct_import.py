#!/usr/bin/env python
"""A study of chest CTs imported serially (one volume at a time) and in parallel.

    .venv/bin/python -m benchmarks.ct_import [--volumes 16] [--slices 150] [--size 512]
        [--repeat 2] [--quick] [--update-doc docs/performance.md] [--json-out FILE]

The volumes are synthetic CT phantoms (benchmarks.strip_bench.phantom: air, an
elliptical body with noise, a spine; a seed of their own each), int16, saved as
.nii.gz, one strip case each. Every import is ``import_manifest`` (validate,
stage, commit all or nothing, as ``readerstudy import``) into a fresh SQLite
database, in a fresh process; ``workers=1`` is the serial path the code had
before issue 43, ``workers=None`` the default pool (staging.import_workers:
the cores, bounded by memory). Serial and parallel runs alternate (S P S P ...)
so both see the same machine load. Peak memory is the largest sum of Pss (the
proportional set size: a page shared by the forked workers counted once) over
the importing process and all its children (fork server, workers), every 0.1 s.
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
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np

from benchmarks.kit.doc import ROOT, emit, para, shown_command, update_doc
from benchmarks.kit.measure import load_average, machine
from benchmarks.strip_bench import phantom

SECTION = "## CT import"
TARGET_SPEEDUP = 1.8
TARGET_PEAK_MIB = 1024

CHILD = """
import json, sys, time
from pathlib import Path
from reader_app.core.db import migrate
from reader_app.core.settings import load_settings
from reader_app.ingest.importer import import_manifest
from reader_app.ingest.staging import import_workers
settings = load_settings()
migrate(settings.database_url)
workers = None if sys.argv[2] == "auto" else int(sys.argv[2])
t0 = time.monotonic()
result = import_manifest(Path(sys.argv[1]), settings=settings, slug="ct", workers=workers)
seconds = time.monotonic() - t0
used = import_workers(result.cases, settings) if workers is None else workers
print(json.dumps({"seconds": seconds, "cases": result.cases, "images": result.images,
                  "workers": used}))
"""


def write_volumes(folder: Path, count: int, slices: int, size: int) -> Path:
    folder.mkdir(parents=True)
    rows = ["case_id,kind,files,diagnosis"]
    for i in range(count):
        vol = phantom(slices, size=size, seed=i)
        affine = np.diag([0.7, 0.7, 2.5, 1.0])
        nib.save(nib.Nifti1Image(vol, affine), str(folder / f"ct{i:03d}.nii.gz"))
        rows.append(f"ct-{i:03d},strip,ct{i:03d}.nii.gz,Finding {i}")
    manifest = folder / "manifest.csv"
    manifest.write_text("\n".join(rows) + "\n")
    return manifest


def tree_pss_kib(pid: int) -> int:
    """Pss of ``pid`` and every descendant (via /proc/*/stat parent ids): each page
    shared by several processes (forked workers share the imported libraries) counted
    once in all, split between them."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, p in parents.items():
            if p == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    total = 0
    for p in tree:
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def one_import(manifest: Path, workers: str, work: Path) -> dict[str, Any]:
    data = work / f"data-{time.monotonic_ns()}"
    data.mkdir()
    env = {
        **os.environ,
        "READERSTUDY_DATA_DIR": str(data),
        "READERSTUDY_DATABASE_URL": f"sqlite:///{data / 'readerstudy.db'}",
        "PYTHONPATH": str(ROOT),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(manifest), workers],
        env=env,
        cwd=ROOT,
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
    volumes: int, slices: int, size: int, repeat: int, work: Path, workers: str = "auto"
) -> dict[str, Any]:
    started = time.monotonic()
    t0 = time.monotonic()
    manifest = write_volumes(work / "study", volumes, slices, size)
    made_s = time.monotonic() - t0
    file_mib = sum(p.stat().st_size for p in manifest.parent.glob("*.nii.gz")) / 2**20
    load_start = load_average()
    runs: dict[str, list[dict[str, Any]]] = {"serial": [], "parallel": []}
    for _ in range(repeat):  # interleaved: S P S P ...
        runs["serial"].append(one_import(manifest, "1", work))
        runs["parallel"].append(one_import(manifest, workers, work))
    serial = statistics.median(r["seconds"] for r in runs["serial"])
    parallel = statistics.median(r["seconds"] for r in runs["parallel"])
    peak = max(r["peak_mib"] for r in runs["parallel"])
    speedup = serial / parallel
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
        "serial_peak_mib": max(r["peak_mib"] for r in runs["serial"]),
        "parallel_peak_mib": peak,
        "workers": runs["parallel"][0]["workers"],
        "met": speedup >= TARGET_SPEEDUP and peak < TARGET_PEAK_MIB,
        "load_start": load_start,
        "load_end": load_average(),
        "total_s": round(time.monotonic() - started, 1),
    }


def markdown(res: dict[str, Any], command: str) -> str:
    rows = []
    for name in ("serial", "parallel"):
        for i, r in enumerate(res["runs"][name], start=1):
            rows.append(
                f"| {name} ({r['workers']} process{'es' if r['workers'] > 1 else ''}), run {i} "
                f"| {r['seconds']:.1f} s | {r['peak_mib']} MiB | {r['load']} |"
            )
    lines = [
        SECTION,
        "",
        f"Command: `{command}` ({res['machine']}; {res['cores']} usable).",
        "",
        *para(
            f"{res['volumes']} synthetic chest CTs, {res['size']}x{res['size']}x{res['slices']}"
            f" int16 .nii.gz ({res['files_mib']} MiB in all), one strip case each, imported by"
            " `import_manifest` (validate, stage, commit all or nothing) into a fresh SQLite"
            " database in a fresh process: serially (one volume at a time, the path before"
            " issue 43) and with the default pool (`staging.import_workers`: the cores,"
            " bounded by the memory available), alternating S P S P so both see the same"
            " load. Peak: the largest sum of Pss (shared pages counted once) over the"
            " importing process, its fork server and workers, sampled every 0.1 s. Load:"
            " the 1-minute load average when each run started (other engineers' suites"
            " share this 2-core VM).",
        ),
        "| import | wall | peak memory | load |",
        "|---|---:|---:|---|",
        *rows,
        "",
        *para(
            f"Median serial {res['serial_s']} s, parallel {res['parallel_s']} s:"
            f" **{res['speedup']}x** (target: at least {TARGET_SPEEDUP}x on 2 cores, peak"
            f" under {TARGET_PEAK_MIB} MiB: {'met' if res['met'] else 'not met'}); peak"
            f" {res['parallel_peak_mib']} MiB parallel, {res['serial_peak_mib']} MiB serial.",
        ),
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--volumes", type=int, default=16)
    parser.add_argument("--slices", type=int, default=150)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--workers", default="auto", help="processes of the parallel runs (auto: the default)"
    )
    parser.add_argument("--quick", action="store_true", help="3 small volumes, once, 2 workers")
    parser.add_argument("--update-doc", type=Path)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.volumes, args.slices, args.size, args.repeat, args.workers = 3, 20, 64, 1, "2"
    with tempfile.TemporaryDirectory(prefix="ct-import-") as tmp:
        res = run(args.volumes, args.slices, args.size, args.repeat, Path(tmp), args.workers)
    if args.update_doc and not args.quick:
        update_doc(args.update_doc, markdown(res, shown_command("ct_import", sys.argv[1:])))
    return emit(res, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
