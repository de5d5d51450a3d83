"""The demo study: real public images from pydicom-data, imported like any other study.

data/demo/ holds the manifest and study.toml. The images are not in git: they
come from the installed pydicom / pydicom-data packages and are copied into a
temporary folder beside the manifest, where the ordinary importer reads them.
The one strip case is a *demo construction* (see data/demo/README.md): a
DICOM series built from the single real head-CT slice 693_UNCR.dcm. Each case
comes from a different source file (:data:`CASE_SOURCES`), so no two cases made
from the same picture can be shown back to back, whatever a reader's order.

Run ``python -m reader_app.ingest.demo DEST`` to materialize the folder and
import it yourself with ``readerstudy import DEST/manifest.csv``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image
from pydicom import dcmread
from pydicom.data import get_testdata_file
from pydicom.uid import generate_uid

from reader_app.core.db import migrate
from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.importer import Progress, import_manifest
from reader_app.ingest.staging import study_exists

DEMO_SLUG = "demo"
DEMO_DIR = PROJECT_ROOT / "data" / "demo"
# manifest path -> file shipped by pydicom (test files) or pydicom-data
SOURCES = {
    "images/chest_cr.dcm": "RG1_UNCR.dcm",
    "images/shoulder_mr.dcm": "MR2_UNCR.dcm",
    "images/tibia_cr.dcm": "RG3_UNCR.dcm",
    "images/practice_ct.dcm": "CT_small.dcm",
}
SERIES_DIR = "images/head_ct_series"
SERIES_SOURCE = "693_UNCR.dcm"
# manifest case id -> the one source image its pictures are made from
CASE_SOURCES = {
    "practice-thorax-ct": "CT_small.dcm",
    "chest-cr": "RG1_UNCR.dcm",
    "shoulder-mr": "MR2_UNCR.dcm",
    "tibia-cr": "RG3_UNCR.dcm",
    "head-ct-strip": SERIES_SOURCE,
    "head-ct-report": SERIES_SOURCE,  # the same strip, asked as a report (Bench 2 mode)
}
SERIES_SLICES = 24
SERIES_SPACING_MM = 5.0
REAL_SLICE_INDEX = 14  # where the untouched real slice sits in the series
HEAD_CENTER_Z_MM, HEAD_RADIUS_MM = 20.0, 90.0  # the ellipsoid the slices are scaled by


def source_file(name: str) -> Path:
    found = get_testdata_file(name, download=False)
    if not found:
        raise FileNotFoundError(f"{name} not found: install pydicom-data")
    return Path(found)


def build_demo_folder(dest: Path) -> Path:
    """Copy manifest, study.toml and images into ``dest``; return the manifest path."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("manifest.csv", "study.toml"):
        shutil.copyfile(DEMO_DIR / name, dest / name)
    for rel, name in SOURCES.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_file(name), dest / rel)
    build_head_series(dest / SERIES_DIR)
    return dest / "manifest.csv"


def _cross_section(z: float) -> float:
    return float(np.sqrt(max(1.0 - ((z - HEAD_CENTER_Z_MM) / HEAD_RADIUS_MM) ** 2, 0.0)))


def build_head_series(folder: Path) -> None:
    """24 axial slices, 5 mm apart, each the real slice scaled about the head's centre.

    The scale follows an ellipsoid's cross-section, so the head narrows towards
    the vertex and the base; anatomy between slices is *not* real. Instance
    numbers run opposite to position and file names are random, so the importer's
    ordering by position is on show.
    """
    folder.mkdir(parents=True, exist_ok=True)
    src = dcmread(source_file(SERIES_SOURCE))
    stored = src.pixel_array.astype(np.float32)
    pad = float(stored.min())
    head = np.argwhere(stored > 524)  # > -500 HU with intercept -1024: the head, not air
    cy, cx = head.mean(axis=0)
    z_real = float(src.ImagePositionPatient[2])
    for k in range(SERIES_SLICES):
        z = z_real + SERIES_SPACING_MM * (k - REAL_SLICE_INDEX)
        s = max(_cross_section(z) / _cross_section(z_real), 0.05)
        img = Image.fromarray(stored).transform(
            (stored.shape[1], stored.shape[0]),
            Image.Transform.AFFINE,
            (1 / s, 0, cx - cx / s, 0, 1 / s, cy - cy / s),
            resample=Image.Resampling.BILINEAR,
            fillcolor=pad,
        )
        pixels = np.rint(np.asarray(img)).astype(src.pixel_array.dtype)
        ds = src.copy()
        ds.PixelData = pixels.tobytes()
        ds.ImagePositionPatient = [*src.ImagePositionPatient[:2], f"{z:.1f}"]
        ds.SliceLocation = f"{z:.1f}"
        ds.InstanceNumber = SERIES_SLICES - k
        ds.SOPInstanceUID = generate_uid(entropy_srcs=[f"readerstudy-demo-{k}"])
        ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
        ds.save_as(folder / f"{generate_uid(entropy_srcs=[str(k)])[-12:]}.dcm")


def ensure_demo_study(settings: Settings, *, progress: Progress | None = None) -> str:
    """Build the demo study into the configured database if absent; return its slug."""
    migrate(settings.database_url)
    if study_exists(settings, DEMO_SLUG):
        return DEMO_SLUG
    with tempfile.TemporaryDirectory(prefix=".demo-", dir=settings.data_dir) as tmp:
        manifest = build_demo_folder(Path(tmp) / "demo")
        try:
            import_manifest(
                manifest, settings=settings, slug=DEMO_SLUG, progress=progress, actor="demo"
            )
        except ImportFailed:
            if study_exists(settings, DEMO_SLUG):  # another process built it meanwhile
                return DEMO_SLUG
            raise
    return DEMO_SLUG


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "demo-study")
    print(build_demo_folder(target))
