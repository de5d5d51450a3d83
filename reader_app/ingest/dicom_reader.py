"""Single DICOM files: sniff, size-check before decoding, decode, reduce to rendering.

Decoding uses whatever pydicom plugins are installed: pillow, plus the
permissively licensed pyjpegls (JPEG-LS), python-gdcm (JPEG lossless) and
pylibjpeg-openjpeg (HTJ2K). pylibjpeg-libjpeg is GPL and deliberately absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydicom import dcmread
from pydicom.dataset import Dataset
from pydicom.errors import InvalidDicomError
from pydicom.pixels.processing import apply_color_lut, apply_rescale

from reader_app.ingest.anonymize import DropCount, rendering_dataset
from reader_app.ingest.errors import IngestError
from reader_app.ingest.render import SourceImage

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"


def sniff(path: Path) -> str:
    """folder | nifti | dicom | raster | unknown, from the content (NIfTI by name)."""
    if path.is_dir():
        return "folder"
    name = path.name.lower()
    if name.endswith((".nii", ".nii.gz")):
        return "nifti"
    with path.open("rb") as fh:
        head = fh.read(132)
    if head[128:132] == b"DICM":
        return "dicom"
    if head.startswith((PNG_MAGIC, JPEG_MAGIC)):
        return "raster"
    return "unknown"


def read_dataset(path: Path, name: str, *, header_only: bool = False) -> Dataset:
    try:
        return dcmread(path, stop_before_pixels=header_only)
    except InvalidDicomError as exc:
        raise IngestError(name, "not a DICOM file") from exc
    except Exception as exc:  # pydicom raises many types on a damaged file
        raise IngestError(name, f"unreadable DICOM (truncated or corrupt): {_short(exc)}") from exc


def check_pixels(ds: Dataset, name: str, max_pixels: int) -> int:
    """Refuse before decoding: no pixel data, several frames, or too many pixels."""
    if "PixelData" not in ds and "Rows" not in ds:
        raise IngestError(name, "has no pixel data (not an image)")
    frames = int(ds.get("NumberOfFrames", 1) or 1)
    if frames > 1:
        raise IngestError(name, f"multi-frame DICOM ({frames} frames) is not supported")
    count = int(ds.get("Rows", 0) or 0) * int(ds.get("Columns", 0) or 0)
    if count == 0:
        raise IngestError(name, "image has no rows or columns")
    if count > max_pixels:
        raise IngestError(
            name,
            f"{count} pixels exceed the limit of {max_pixels} "
            "(READERSTUDY_MAX_PIXELS; a decompression bomb?)",
        )
    return count


def decode(ds: Dataset, name: str) -> np.ndarray:
    if "PixelData" not in ds:
        raise IngestError(name, "has no pixel data (not an image)")
    try:
        arr: np.ndarray = ds.pixel_array
        return arr
    except Exception as exc:
        raise IngestError(name, f"cannot decode pixel data (truncated?): {_short(exc)}") from exc


def to_source(ds: Dataset, arr: np.ndarray, name: str) -> tuple[SourceImage, Dataset, DropCount]:
    """Decoded pixels + header -> a SourceImage that keeps only allowlisted elements."""
    photometric = str(ds.get("PhotometricInterpretation", "")).upper()
    safe, drop = rendering_dataset(ds)
    modality = str(safe.get("Modality", "") or "").upper() or None
    if photometric in ("MONOCHROME1", "MONOCHROME2"):
        if arr.ndim != 2:
            raise IngestError(name, f"expected a 2-D grey image, got shape {arr.shape}")
        values = np.asarray(apply_rescale(arr, safe), dtype=np.float64)
        has_voi = "VOILUTSequence" in safe or "WindowCenter" in safe
        source = SourceImage(
            pixels=values,
            invert=photometric == "MONOCHROME1",
            voi=safe if has_voi else None,
            modality=modality,
        )
        return source, safe, drop
    if photometric == "PALETTE COLOR":
        arr = apply_color_lut(arr, ds)
    elif not (photometric == "RGB" or photometric.startswith("YBR")):
        raise IngestError(name, f"unsupported PhotometricInterpretation {photometric!r}")
    # pixel_array already converts YBR to RGB; scale 16-bit colour down to 8 bits
    if arr.dtype != np.uint8:
        top = float(2 ** int(ds.get("BitsStored", 16)) - 1)
        arr = np.clip(np.rint(arr.astype(np.float64) / top * 255), 0, 255).astype(np.uint8)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise IngestError(name, f"expected an RGB image, got shape {arr.shape}")
    return SourceImage(pixels=arr, ready=True, modality=modality), safe, drop


def read_dicom_image(
    path: Path, name: str, max_pixels: int
) -> tuple[SourceImage, Dataset, DropCount]:
    ds = read_dataset(path, name)
    check_pixels(ds, name, max_pixels)
    arr = decode(ds, name)
    return to_source(ds, arr, name)


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
