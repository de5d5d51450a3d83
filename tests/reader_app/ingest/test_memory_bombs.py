"""Issue 14 finding 3: decompression bombs, imported by ``readerstudy import`` in a child process.

On main these reached 3.2 GB (deflated DICOM hiding a 1.5 GB private element),
6.4 GB (deflated 14000x14000 DICOM), 2.2 GB (13000x13000 palette PNG) and
3.1 GB (512x512x700 float64 .nii.gz). Each is built here, small on disk, and
all four go into one manifest: one import must refuse every one of them,
naming file and limit, and its peak RSS (``os.wait4``'s ru_maxrss of that
child alone) must stay under 1 GiB. A 6300x6300 DICOM just under the pixel cap
imports, under the same bound.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.models import Study
from tests.reader_app.ingest import bombs
from tests.reader_app.ingest.helpers import case, write_manifest

GIB = 1 << 30


@pytest.fixture(scope="module")
def bomb_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bombs")
    bombs.deflated_dicom_hidden_element(folder / "hidden.dcm")
    bombs.deflated_dicom_huge_image(folder / "huge.dcm")
    bombs.palette_png(folder / "palette.png")
    bombs.nifti_gz(folder / "volume.nii.gz")
    write_manifest(
        folder,
        [
            case("hidden", "hidden.dcm"),
            case("huge", "huge.dcm"),
            case("palette", "palette.png", reviewed_by="Dr Roe"),
            case("volume", "volume.nii.gz", kind="strip"),
        ],
    )
    return folder


def run_import(manifest: Path, settings: Settings) -> tuple[int, int, str]:
    """(exit status, peak RSS in bytes, stderr) of ``readerstudy import`` as a child."""
    env = dict(
        os.environ,
        READERSTUDY_DATABASE_URL=settings.database_url,
        READERSTUDY_DATA_DIR=str(settings.data_dir),
    )
    env.pop("READERSTUDY_ASSET_DIR", None)
    cmd = [sys.executable, "-m", "reader_app.cli", "import", str(manifest), "--study", "s"]
    log = settings.data_dir / "import.log"
    with log.open("w") as fh:
        child = subprocess.Popen(cmd, env=env, cwd=PROJECT_ROOT, stdout=fh, stderr=fh)
        _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024, log.read_text()


def test_bombs_are_refused_in_bounded_memory(bomb_folder: Path, settings: Settings) -> None:
    sizes = {p.name: p.stat().st_size for p in bomb_folder.iterdir() if p.suffix != ".csv"}
    assert max(sizes.values()) < 8_000_000, sizes  # small on disk: bombs, not big files
    code, peak, log = run_import(bomb_folder / "manifest.csv", settings)
    assert code == 2, log  # a refusal (reader_app.core.errors)
    assert peak < GIB, f"peak RSS {peak / 2**20:.0f} MiB"
    inflate = "deflated dataset inflates to more than 336777216 bytes"
    assert f"case hidden: hidden.dcm: {inflate}" in log
    assert f"case huge: huge.dcm: {inflate}" in log
    assert (
        "case palette: palette.png: 169000000 pixels exceed the limit of 40000000 "
        "(READERSTUDY_MAX_PIXELS" in log
    )
    assert (
        "case volume: volume.nii.gz: decompresses to 1468006400 bytes (183500800 voxels of "
        "8 bytes), over the limit of 536870912 (READERSTUDY_MAX_INFLATE_BYTES)" in log
    )
    assert "4 problem(s)" in log and "Traceback" not in log
    engine = make_engine(settings.database_url, pooled=False)
    with Session(engine) as s:
        assert s.exec(select(Study)).all() == []
    engine.dispose()
    assert not list(settings.asset_dir.rglob("*.png"))


def test_an_image_just_under_the_cap_imports_in_bounded_memory(
    tmp_path: Path, settings: Settings
) -> None:
    bombs.plain_dicom(tmp_path / "big.dcm", 6300)  # 39.69 M pixels, cap 40 M
    manifest = write_manifest(tmp_path, [case("big", "big.dcm")])
    code, peak, log = run_import(manifest, settings)
    assert code == 0, log
    assert peak < GIB, f"peak RSS {peak / 2**20:.0f} MiB"
