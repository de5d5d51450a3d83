"""Strip building vs a naive full-volume load, for a 512x512x400 int16 CT volume.

    .venv/bin/python -m benchmarks.strip_bench [--slices 400] [--repeat 5]
        [--update-doc docs/performance.md]

The volume is a synthetic CT phantom (air, an elliptical body with noise, a
spine), saved as .nii and .nii.gz. For each file we time, in the same run:

- strip: ``open_nifti`` + ``build_strip`` (16 slices + montage, rendered to PNG),
  which memory-maps an uncompressed file and reads only the sampled slices;
- extract: the reading part of a strip alone (open + the 16 sampled slices);
- naive: ``as_closest_canonical(nib.load(f)).get_fdata()``, the whole volume.

Every call runs in a fresh process and is timed inside it (imports excluded).
"cold" calls first drop the file from the page cache (fsync + posix_fadvise
DONTNEED on that file only), as for a file that was just copied in; "warm"
calls read it from memory; each process also times a second call ("again").
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np

from benchmarks.kit.doc import ROOT, shown_command, update_doc
from benchmarks.kit.measure import load_average, machine, stopwatch
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.strips import build_strip, sample_indices

SECTION = "## Strip building"


def phantom(n: int, size: int = 512, seed: int = 0) -> np.ndarray:
    """int16 HU volume (x, y, z): compressible like real CT, not random noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[:size, :size]
    body = ((x - size / 2) / (size * 0.42)) ** 2 + ((y - size / 2) / (size * 0.32)) ** 2 <= 1
    spine = (x - size / 2) ** 2 + (y - size * 0.68) ** 2 <= (size * 0.05) ** 2
    vol = np.full((size, size, n), -1000, dtype=np.int16)
    for k in range(n):
        plane = np.where(body, 40, -1000).astype(np.int16)
        plane[spine] = 700
        noise = rng.normal(0, 12, size=(size, size)).astype(np.int16)
        plane[body] += noise[body]
        vol[:, :, k] = plane.T
    return vol


def drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def strip(path: Path) -> None:
    volume = open_nifti(path, path.name, 10**10)
    images = build_strip(volume, ["mediastinum"])
    assert len(images) == 17


def extract(path: Path) -> None:
    """The file-dependent part of a strip: open and read the 16 sampled slices."""
    volume = open_nifti(path, path.name, 10**10)
    slices = [volume.read_slice(k) for k in sample_indices(volume.n_slices)]
    assert len(slices) == 16


def naive(path: Path) -> None:
    lib: Any = nib  # untyped library
    data = lib.as_closest_canonical(lib.load(str(path))).get_fdata()
    assert data.ndim == 3


METHODS: dict[str, Callable[[Path], None]] = {"strip": strip, "extract": extract, "naive": naive}


def one_shot(method: str, path: Path, *, cold: bool) -> tuple[float, float]:
    """Time two calls in a fresh process (imports done first, not timed).

    The first call is what a one-off import meets: a naive full load pays for
    fresh memory (800 MB of float64). The second call, in the same process,
    shows the cost once the allocator and page cache are warm.
    """
    if cold:
        drop_cache(path)
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.strip_bench", "--one", method, str(path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    first, second = out.strip().splitlines()[-1].split()
    return float(first), float(second)


def run(slices: int, repeat: int, workdir: Path) -> dict[str, object]:
    lib: Any = nib
    vol = phantom(slices)
    affine = np.diag([-0.7, -0.7, 1.0, 1.0])  # LPS-ordered: canonical reorientation flips
    files = {"nii": workdir / "ct.nii", "nii.gz": workdir / "ct.nii.gz"}
    for path in files.values():
        nib.save(lib.Nifti1Image(vol, affine), str(path))
    del vol
    results: dict[str, object] = {
        "shape": [512, 512, slices],
        "dtype": "int16",
        "repeat": repeat,
        "machine": f"{machine()}, load average {load_average():.1f} at start",
        "sizes_mb": {k: round(p.stat().st_size / 2**20, 1) for k, p in files.items()},
    }
    for label, path in files.items():
        for cold in (True, False):
            first: dict[str, list[float]] = {m: [] for m in METHODS}
            second: dict[str, list[float]] = {m: [] for m in METHODS}
            for _ in range(repeat):  # interleaved, so load changes hit all methods alike
                for method in METHODS:
                    a, b = one_shot(method, path, cold=cold)
                    first[method].append(a)
                    second[method].append(b)
            results[f"{label} {'cold' if cold else 'warm'}"] = _stats(first)
            if not cold:
                results[f"{label} again"] = _stats(second)
    return results


def _stats(times: dict[str, list[float]]) -> dict[str, float]:
    med = {m: statistics.median(t) for m, t in times.items()}
    best = {m: min(t) for m, t in times.items()}
    return {
        **{f"{m}_s": round(v, 3) for m, v in med.items()},
        **{f"{m}_min_s": round(v, 3) for m, v in best.items()},
        "ratio": round(med["naive"] / med["strip"], 1),
        "ratio_extract": round(med["naive"] / med["extract"], 1),
    }


def markdown(results: dict[str, Any], command: str) -> str:
    sizes = results["sizes_mb"]
    lines = [
        SECTION,
        "",
        "`benchmarks/strip_bench.py`: building a strip (`open_nifti` + `build_strip`: 16",
        "sampled axial slices and the montage, windowed and encoded as PNG) against a naive",
        "full-volume load (`as_closest_canonical(nib.load(f)).get_fdata()`), measured in",
        f"the same run on a {results['shape'][0]}x{results['shape'][1]}x{results['shape'][2]}"
        f" {results['dtype']} synthetic CT phantom (.nii {sizes['nii']} MB, .nii.gz"
        f" {sizes['nii.gz']} MB). Each figure is the median of {results['repeat']} calls,"
        " each in a fresh process (imports excluded), interleaved; the fastest call in",
        "brackets; ratios are of medians;",
        f"{results['machine']}.",
        "",
        "| file | call | strip (s) | of which reading 16 slices (s) "
        "| naive full load (s) | full load / strip | full load / reading |",
        "|---|---|---|---|---|---|---|",
    ]
    calls = {
        "cold": "first in a process, file not in page cache",
        "warm": "first in a process, file in page cache",
        "again": "second in the same process",
    }
    for label in ("nii", "nii.gz"):
        for call, what in calls.items():
            r = results[f"{label} {call}"]
            cells = [f"{r[f'{m}_s']} ({r[f'{m}_min_s']})" for m in ("strip", "extract", "naive")]
            lines.append(
                f"| .{label} | {what} | {' | '.join(cells)} "
                f"| **{r['ratio']}x** | {r['ratio_extract']}x |"
            )
    lines += [
        "",
        '"Not in page cache": the file is dropped from the page cache first (fsync +',
        "posix_fadvise DONTNEED on that file only), as for a file just copied in. The first",
        "call in a process pays for fresh memory, and a full load needs a lot (800 MB of",
        "float64); a second call in the same process finds the allocator warm. An",
        "uncompressed NIfTI is memory-mapped and only the",
        "16 sampled slices are read (8 MB of 200 MB), scaled per slice; the rest of a",
        "strip's time is windowing and PNG encoding (17 PNGs), which does not depend on the",
        "volume's size. A .nii.gz cannot be mapped or seeked: it is decompressed once, a",
        "plane at a time, keeping the 16 sampled planes (a file that stores axial planes, as",
        "this one), so there the gain is the whole volume neither held nor converted to",
        "float64 (nibabel's own read of a .nii.gz, which a full load uses, is also slower).",
        "",
        *verdict(results),
        "",
        "The shared 2-core machine was busy with other test suites during the run (see the",
        "load average): figures move by a factor of about 2 between runs.",
        "",
        f"Reproduce: `{command}` (add `--update-doc docs/performance.md` to rewrite this",
        "section; other sections are left alone).",
        "",
    ]
    return "\n".join(lines)


def verdict(results: dict[str, Any]) -> list[str]:
    """The targets (uncompressed strip < 1 s, >= 5x a full load), judged from this run."""
    rows = {c: results[f"nii {c}"] for c in ("cold", "warm", "again")}
    fast = [c for c, r in rows.items() if r["strip_s"] < 1.0]
    ratio_ok = [c for c, r in rows.items() if r["ratio"] >= 5]
    names = {"cold": "first call, not cached", "warm": "first call, cached", "again": "second call"}
    best = min(r["strip_min_s"] for r in rows.values())
    reading = min(r["ratio_extract"] for r in rows.values())
    return [
        "Targets, for the uncompressed file: a strip under 1 s: median under 1 s in"
        f" {len(fast)} of 3 rows ({', '.join(names[c] for c in fast) or 'none'}), fastest"
        f" {best} s. At least 5x faster than a full load: in {len(ratio_ok)} of 3 rows"
        f" ({', '.join(names[c] for c in ratio_ok) or 'none'}); the reading part is"
        f" {reading}x faster or more in every row. The rest of a strip is CPU work (window,"
        " montage, 17 PNG encodings: about 0.15-0.25 s on this machine when it is not"
        " busy), so it is what suffers when other processes share the two cores, and a full"
        " load in a process whose memory is already warm costs about as much.",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--update-doc", type=Path, help="rewrite our section of this file")
    parser.add_argument("--one", nargs=2, metavar=("METHOD", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # child process: time two calls, print both (seconds)
        method, path = args.one
        times = []
        for _ in range(2):
            with stopwatch() as took:
                METHODS[method](Path(path))
            times.append(took[0])
        print(*times)
        return 0
    with tempfile.TemporaryDirectory(prefix="strip-bench-") as tmp:
        results = run(args.slices, args.repeat, Path(tmp))
    command = shown_command("strip_bench", [])
    section = markdown(results, command)
    print(section)
    if args.update_doc:
        update_doc(args.update_doc, section, SECTION)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
