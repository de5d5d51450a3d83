"""Builders for ingestion tests: real sample files, synthetic CT volumes, manifests."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np
from pydicom.data import get_testdata_file
from pydicom.dataset import FileDataset, FileMetaDataset
from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from reader_app.ingest.manifest import COLUMNS, OPTIONAL_COLUMNS
from reader_app.models import Case, CaseImage, Study

SERIES_CT5 = "dicomdirtests/98892001/CT5N"  # 5 real 16x16 CT slices of one series
SERIES_CT2 = "dicomdirtests/77654033/CT2"  # 4 real 16x16 CT slices, another series


def sample(name: str) -> Path:
    """A file shipped by pydicom (test files) or pydicom-data, never downloaded."""
    found = get_testdata_file(name, download=False)
    assert found, f"{name} is not installed"
    return Path(found)


def sample_dir(rel: str) -> Path:
    return sample("CT_small.dcm").parent / rel


def copy_sample(name: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sample(name), dest)
    return dest


def write_manifest(
    folder: Path, rows: Sequence[dict[str, str]], name: str = "manifest.csv"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    columns = list(COLUMNS) + [c for c in OPTIONAL_COLUMNS if any(c in r for r in rows)]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in columns})
    return path


def case(case_id: str, files: str, kind: str = "spot", **extra: str) -> dict[str, str]:
    return {"case_id": case_id, "kind": kind, "files": files, "diagnosis": "dx", **extra}


def phantom(n: int = 20, rows: int = 48, cols: int = 64) -> np.ndarray:
    """HU volume (slice, row, col) in display convention.

    Body: an ellipse whose value rises by 15 HU a slice (-100 + 15 k), so the order
    of slices shows in the pixels. Marker: a 700 HU block in the top-left corner,
    i.e. anterior and on the patient's right.
    """
    vol = np.full((n, rows, cols), -1000, dtype=np.int16)
    yy, xx = np.mgrid[:rows, :cols]
    body = ((yy - rows / 2) / (rows * 0.4)) ** 2 + ((xx - cols / 2) / (cols * 0.4)) ** 2 <= 1
    for k in range(n):
        vol[k][body] = -100 + 15 * k
    vol[:, 2:6, 2:8] = 700
    return vol


def write_series(
    folder: Path,
    vol: np.ndarray,
    *,
    flip_x: bool = False,
    vary_rescale: bool = False,
    shuffle_seed: int | None = 0,
    spacing: tuple[float, float, float] = (0.8, 0.7, 2.5),
    origin: tuple[float, float, float] = (-20.0, -15.0, -150.0),
) -> list[Path]:
    """One DICOM file per slice, LPS, stored = HU + 1024 with intercept -1024.

    flip_x writes each slice mirrored with a row cosine of -x (as some scanners
    do); vary_rescale gives every slice its own slope and intercept;
    shuffle_seed scrambles file names and InstanceNumbers.
    """
    folder.mkdir(parents=True, exist_ok=True)
    n, rows, cols = vol.shape
    dy, dx, dz = spacing
    series_uid = generate_uid()
    order = (
        np.random.default_rng(shuffle_seed).permutation(n) if shuffle_seed is not None else range(n)
    )
    paths = []
    for k in range(n):
        # slopes 1, 0.5, 0.25 keep every HU value exactly representable
        slope, intercept = (1 / 2 ** (k % 3), -1024.0 - 10 * k) if vary_rescale else (1, -1024)
        stored = np.rint((vol[k].astype(np.float64) - intercept) / slope).astype(np.uint16)
        x0 = origin[0]
        iop = [1, 0, 0, 0, 1, 0]
        if flip_x:
            stored = stored[:, ::-1]
            x0 = origin[0] + (cols - 1) * dx
            iop = [-1, 0, 0, 0, 1, 0]
        meta = FileMetaDataset()
        meta.MediaStorageSOPClassUID = CTImageStorage
        meta.MediaStorageSOPInstanceUID = generate_uid()
        meta.TransferSyntaxUID = ExplicitVRLittleEndian
        path = folder / f"img{int(order[k]):04d}.dcm"
        ds = FileDataset(str(path), {}, file_meta=meta, preamble=b"\0" * 128)
        ds.SOPClassUID = CTImageStorage
        ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
        ds.SeriesInstanceUID = series_uid
        ds.Modality = "CT"
        ds.PatientName = "Synthetic^Phantom"
        ds.InstanceNumber = int(order[k]) + 1
        ds.ImagePositionPatient = [x0, origin[1], origin[2] + k * dz]
        ds.ImageOrientationPatient = iop
        ds.PixelSpacing = [dy, dx]
        ds.Rows, ds.Columns = rows, cols
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.BitsAllocated = ds.BitsStored = 16
        ds.HighBit = 15
        ds.PixelRepresentation = 0
        ds.RescaleIntercept = intercept
        ds.RescaleSlope = slope
        ds.PixelData = np.ascontiguousarray(stored).tobytes()
        ds.save_as(path, enforce_file_format=True)
        paths.append(path)
    return paths


def write_nifti(
    path: Path,
    vol: np.ndarray,
    *,
    ras: bool = False,
    spacing: tuple[float, float, float] = (0.8, 0.7, 2.5),
    origin: tuple[float, float, float] = (-20.0, -15.0, -150.0),
    extra_dims: tuple[int, ...] = (),
) -> Path:
    """The same volume as NIfTI: LPS-ordered axes by default (flipped on load), or RAS."""
    dy, dx, dz = spacing
    _, rows, cols = vol.shape
    data = np.transpose(vol, (2, 1, 0)).astype(np.int16)  # [i=col, j=row, k=slice]
    # LPS (x0, y0) -> RAS (-x0, -y0); axes i, j point to patient left / posterior
    affine = np.array(
        [[-dx, 0, 0, -origin[0]], [0, -dy, 0, -origin[1]], [0, 0, dz, origin[2]], [0, 0, 0, 1]],
        dtype=float,
    )
    if ras:
        data = data[::-1, ::-1, :]
        affine = affine @ np.array(
            [[-1, 0, 0, cols - 1], [0, -1, 0, rows - 1], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float
        )
    if extra_dims:
        data = np.broadcast_to(data[..., None], (*data.shape, *extra_dims)).copy()
    img = nib.Nifti1Image(data, affine)
    img.header.set_qform(affine, code=1)
    img.header.set_sform(affine, code=1)
    nib.save(img, str(path))
    return path


DISC_BASE_RADIUS = 2  # px: the disc of display slice k has radius 2 + k


def disc_phantom(n: int = 20, rows: int = 48, cols: int = 64) -> np.ndarray:
    """HU volume (slice, row, col), display convention, slice 0 the most inferior:
    a 400 HU disc centred at (rows // 2, cols // 2) whose radius is 2 + k pixels on
    slice k, so a slice's height can be read off any rendering of it."""
    vol = np.full((n, rows, cols), -1000, dtype=np.int16)
    yy, xx = np.mgrid[:rows, :cols]
    for k in range(n):
        r = DISC_BASE_RADIUS + k
        vol[k][(yy - rows // 2) ** 2 + (xx - cols // 2) ** 2 <= r * r] = 400
    return vol


def disc_height(png: bytes) -> int:
    """The display slice index k a disc_phantom PNG shows: its middle row holds 2r + 1
    bright pixels (any window maps 400 HU above mid-grey and -1000 HU below)."""
    import io

    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    bright = int((pixels[pixels.shape[0] // 2] > 127).sum())
    return (bright - 1) // 2 - DISC_BASE_RADIUS


def write_nifti_superior_first(path: Path, vol: np.ndarray) -> Path:
    """The volume as a NIfTI whose slice axis runs from superior to inferior (RAI-like
    storage, voxel k = 0 the top slice), LPS in plane as write_nifti's default."""
    staged = write_nifti(path.with_name("staged-" + path.name), vol)
    lib: Any = nib  # nibabel is untyped
    img = lib.load(str(staged))
    n = vol.shape[0]
    data = np.array(img.dataobj)[:, :, ::-1]  # a copy: the staged file stays unmapped
    affine = img.affine @ np.array(
        [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, -1, n - 1], [0, 0, 0, 1]], dtype=float
    )
    out = lib.Nifti1Image(data, affine)
    out.header.set_qform(affine, code=1)
    out.header.set_sform(affine, code=1)
    lib.save(out, str(path))
    return path


def study_images(engine: Engine, slug: str) -> list[tuple[str, int, str, str]]:
    """(case, seq, role, sha256) of every image of study ``slug``, in case order."""
    with Session(engine) as s:
        rows = s.exec(
            select(Case.source_id, CaseImage.seq, CaseImage.role, CaseImage.sha256)
            .join(Study, col(Study.id) == Case.study_id)
            .join(CaseImage, col(CaseImage.case_id) == Case.id)
            .where(Study.slug == slug)
            .order_by(col(Case.source_id), col(CaseImage.seq), col(CaseImage.role))
        ).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]
