"""Study ZIPs for the set-up tests, built the way a coordinator would zip a folder."""

from __future__ import annotations

import csv
import shutil
import zipfile
from pathlib import Path

from reader_app.ingest.demo import build_demo_folder


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
    build_demo_folder(folder)
    return zip_folder(folder, tmp / name, top="demo")


def three_problem_zip(tmp: Path) -> Path:
    """The demo study with three different problems in two files:

    manifest.csv line 3: kind 'xray' (not spot/strip); line 4: a file that is not in
    the ZIP; study.toml: an unknown key.
    """
    folder = tmp / "bad-src"
    build_demo_folder(folder)
    rows = list(csv.reader((folder / "manifest.csv").open(encoding="utf-8")))
    rows[2][1] = "xray"  # line 3: chest-cr
    rows[3][2] = "images/missing_head.dcm"  # line 4: head-ct
    with (folder / "manifest.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    with (folder / "study.toml").open("a", encoding="utf-8") as fh:
        fh.write('\ncolour_scheme = "dark"\n')
    return zip_folder(folder, tmp / "three-problems.zip")


def long_zip(tmp: Path, strips: int = 40) -> Path:
    """Many strip cases over the demo's head series: an import that takes a while."""
    folder = tmp / "long-src"
    build_demo_folder(folder)
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
