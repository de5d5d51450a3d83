"""A DICOM series (a folder, or several files) -> a Volume of display-oriented slices.

Slices are ordered by their position along the slice normal,
dot(cross(row, col), ImagePositionPatient), never by InstanceNumber (which
scanners number in either direction, or restart). Only headers are read up
front; pixel data is decoded for the slices a strip samples.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydicom.dataset import Dataset

from reader_app.ingest.anonymize import DropCount, rendering_dataset
from reader_app.ingest.dicom_reader import (
    check_pixels,
    decode,
    pixel_spacing,
    read_dataset,
    sniff,
    to_source,
)
from reader_app.ingest.dicom_terms import header_modality
from reader_app.ingest.errors import IngestError
from reader_app.ingest.render import file_window
from reader_app.ingest.volume import Volume, apply_display_ops, lps_display_ops


@dataclass(frozen=True)
class _Slice:
    path: Path
    name: str
    position: float | None = None
    instance: int | None = None


def series_files(folder: Path, name: str, root: Path) -> list[Path]:
    """Every non-hidden file in the folder; anything that is not DICOM is an error later.

    A symlink in the folder that points outside ``root`` (the manifest's folder)
    is refused like any other escaping path.
    """
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise IngestError(name, "empty series: the folder holds no DICOM files")
    for path in files:
        if not path.resolve().is_relative_to(root):
            raise IngestError(f"{name}/{path.name}", "path escapes the manifest's folder")
    return files


def read_series(
    files: Sequence[Path],
    name: str,
    max_pixels: int,
    rel: Callable[[Path], str],
    drops: DropCount,
    *,
    max_voxels: int | None = None,
) -> tuple[Volume, list[tuple[str, Dataset]]]:
    """Validate headers and order slices; returns the volume and every file's safe header.

    The safe headers (allowlisted elements only) are for the burned-in guard,
    which must see every file of a series, not only the first.
    """
    if not files:
        raise IngestError(name, "empty series: no DICOM files")
    headers: list[tuple[Path, Dataset]] = []
    total = 0
    for path in files:
        if sniff(path) != "dicom":
            raise IngestError(rel(path), "not a DICOM file (a series folder holds only DICOM)")
        ds = read_dataset(path, rel(path), header_only=True)
        total += check_pixels(ds, rel(path), max_pixels)
        headers.append((path, ds))
    cap = max_voxels if max_voxels is not None else max_pixels
    if total > cap:  # slices are decoded one at a time, but a volume has a cap too
        raise IngestError(
            name, f"{total} voxels exceed the limit of {cap} (READERSTUDY_MAX_VOXELS)"
        )
    first = headers[0][1]
    series = {str(ds.get("SeriesInstanceUID", "")) for _, ds in headers}
    if len(series) > 1:
        raise IngestError(name, f"mixed series: the files belong to {len(series)} series")
    sizes = {(int(ds.Rows), int(ds.Columns)) for _, ds in headers}
    if len(sizes) > 1:
        raise IngestError(name, "mixed series: slices have different sizes")
    shape = sizes.pop()
    slices, ops, geometric = _order(headers, name, rel)
    photometric = str(first.get("PhotometricInterpretation", "")).upper()
    if photometric not in ("MONOCHROME1", "MONOCHROME2"):
        raise IngestError(name, f"a strip needs grey slices, not {photometric!r}")

    def read_slice(i: int) -> np.ndarray:
        s = slices[i]
        ds = read_dataset(s.path, s.name)
        check_pixels(ds, s.name, max_pixels)
        source, _safe, _drop = to_source(ds, decode(ds, s.name), s.name)
        if source.pixels.shape != shape:
            raise IngestError(s.name, "pixel data does not match Rows/Columns")
        # rescale slope/intercept were applied per slice in to_source
        return apply_display_ops(source.pixels, ops)

    safe_headers = []
    for path, ds in headers:
        safe, drop = rendering_dataset(ds)
        drops.add(drop)  # counted from the full header; decoding reads only the allowlist
        safe_headers.append((rel(path), safe))
    safe_first = safe_headers[0][1]
    positions = [float(s.position) for s in slices if s.position is not None]
    numbers = _instance_numbers(headers, slices)
    spacing = pixel_spacing(first)
    if spacing is not None and ops[0]:  # transposed for display: x and y swap
        spacing = (spacing[1], spacing[0])
    volume = Volume(
        n_slices=len(slices),
        read_slice=read_slice,
        z_mm=positions if geometric else None,
        # the slice's number as the series gives it; by position when it is not a unique set
        source_numbers=numbers if len(set(numbers)) == len(slices) else None,
        file_window=file_window(safe_first),
        modality=header_modality(first, rel(headers[0][0])),
        invert=photometric == "MONOCHROME1",
        pixel_mm=spacing,
        description=f"DICOM series, {len(slices)} slices of {first.Columns}x{first.Rows}"
        + (", ordered by position" if geometric else ", no geometry: ordered by InstanceNumber"),
    )
    return volume, safe_headers


def _instance_numbers(headers: list[tuple[Path, Dataset]], slices: list[_Slice]) -> list[int]:
    """The InstanceNumbers in display order (those present and readable)."""
    by_path = dict(headers)
    out = []
    for s in slices:
        value = by_path[s.path].get("InstanceNumber")
        try:
            out.append(int(value))
        except (TypeError, ValueError):
            continue
    return out


def _order(
    headers: list[tuple[Path, Dataset]], name: str, rel: Callable[[Path], str]
) -> tuple[list[_Slice], tuple[bool, bool, bool], bool]:
    with_geometry = [
        ("ImagePositionPatient" in ds and "ImageOrientationPatient" in ds) for _, ds in headers
    ]
    if all(with_geometry):
        iops = np.array([[float(v) for v in ds.ImageOrientationPatient] for _, ds in headers])
        if np.abs(iops - iops[0]).max() > 1e-3:
            raise IngestError(name, "mixed series: slices have different orientations")
        row, col = iops[0][:3], iops[0][3:]
        normal = np.cross(row, col)
        if np.argmax(np.abs(normal)) != 2:
            raise IngestError(name, "not an axial series: a strip needs axial slices")
        if normal[2] < 0:
            normal = -normal  # so that positions increase from inferior to superior
        slices = [
            _Slice(p, rel(p), float(np.dot(normal, [float(v) for v in ds.ImagePositionPatient])))
            for p, ds in headers
        ]
        slices.sort(key=lambda s: s.position or 0.0)
        for a, b in itertools.pairwise(slices):
            if abs((b.position or 0.0) - (a.position or 0.0)) < 1e-3:
                raise IngestError(b.name, f"two slices at the same position as {a.name}")
        return slices, lps_display_ops(row, col), True
    if any(with_geometry):
        raise IngestError(name, "some slices lack ImagePositionPatient/ImageOrientationPatient")
    if not all("InstanceNumber" in ds for _, ds in headers):
        raise IngestError(name, "cannot order slices: no geometry and no InstanceNumber")
    slices = [_Slice(p, rel(p), instance=int(ds.InstanceNumber)) for p, ds in headers]
    slices.sort(key=lambda s: s.instance or 0)
    return slices, (False, False, False), False
