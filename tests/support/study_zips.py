"""Study ZIPs for the set-up tests, built the way a coordinator would zip a folder."""

from __future__ import annotations

import csv
import shutil
import tempfile
import zipfile
from functools import cache
from pathlib import Path

from pydicom import dcmread

from reader_app.ingest.demo import build_demo_folder


@cache
def _built_demo_folder() -> Path:
    """The demo folder built once per test process (its 24 slices take a second to render)."""
    return build_demo_folder(Path(tempfile.mkdtemp(prefix="rs-demo-folder-")) / "demo").parent


def demo_folder(dest: Path) -> Path:
    """What ``build_demo_folder(dest)`` writes (it is deterministic), copied from one build."""
    shutil.copytree(_built_demo_folder(), dest, dirs_exist_ok=True)
    return dest / "manifest.csv"


def zip_folder(folder: Path, dest: Path, *, top: str | None = None) -> Path:
    """Zip ``folder``'s files; ``top`` puts them under one folder, as Finder/Explorer do."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                rel = path.relative_to(folder).as_posix()
                zf.write(path, f"{top}/{rel}" if top else rel)
    return dest


def demo_zip(tmp: Path, name: str = "demo-study.zip") -> Path:
    """The demo study (data/demo + its source images) as an upload: demo/manifest.csv etc."""
    folder = tmp / "demo-src"
    demo_folder(folder)
    return zip_folder(folder, tmp / name, top="demo")


def three_problem_zip(tmp: Path) -> Path:
    """The demo study with three different problems in two files:

    manifest.csv line 3: kind 'xray' (not spot/strip); line 4: a file that is not in
    the ZIP; study.toml: an unknown key.
    """
    folder = tmp / "bad-src"
    demo_folder(folder)
    rows = list(csv.reader((folder / "manifest.csv").open(encoding="utf-8")))
    rows[2][1] = "xray"  # line 3: chest-cr
    rows[3][2] = "images/missing_head.dcm"  # line 4: head-ct
    with (folder / "manifest.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    with (folder / "study.toml").open("a", encoding="utf-8") as fh:
        fh.write('\ncolour_scheme = "dark"\n')
    return zip_folder(folder, tmp / "three-problems.zip")


def long_zip(tmp: Path, strips: int = 40, *, every: int = 1) -> Path:
    """Many strip cases over the demo's head series: an import that takes a while.

    ``every=2`` keeps every second slice of the series (12 of 24, 10 mm apart): each
    strip then costs about half as much to render, for tests that need the import to
    last, not its slices.
    """
    folder = tmp / "long-src"
    demo_folder(folder)
    series = folder / "images" / "head_ct_series"
    by_position = sorted(
        series.glob("*.dcm"), key=lambda p: float(dcmread(p, stop_before_pixels=True).SliceLocation)
    )
    for i, path in enumerate(by_position):
        if i % every:
            path.unlink()
    header = "case_id,kind,files,diagnosis,synonyms,history,modality,practice,windows,reviewed_by"
    lines = [header]
    for i in range(strips):
        lines.append(f"strip-{i:03d},strip,images/head_ct_series,Subdural,,,CT,false,brain|bone,")
    (folder / "manifest.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "study.toml").write_text('title = "Long import"\n', encoding="utf-8")
    for extra in ("images/chest_cr.dcm", "images/tibia_cr.dcm"):
        (folder / extra).unlink()
    shutil.rmtree(folder / "images" / "unused", ignore_errors=True)
    return zip_folder(folder, tmp / "long-study.zip")
