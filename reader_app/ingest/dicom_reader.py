"""Single DICOM files: sniff, size-check before decoding, decode, reduce to rendering.

Decoding uses whatever pydicom plugins are installed: pillow, plus the
permissively licensed pyjpegls (JPEG-LS), python-gdcm (JPEG lossless) and
pylibjpeg-openjpeg (HTJ2K). pylibjpeg-libjpeg is GPL and deliberately absent.
"""

from __future__ import annotations

import tempfile
import zlib
from pathlib import Path

import numpy as np
from pydicom import dcmread
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.errors import InvalidDicomError
from pydicom.filereader import read_dataset as read_raw_dataset
from pydicom.filereader import read_file_meta_info
from pydicom.pixels.processing import apply_color_lut, apply_rescale
from pydicom.tag import BaseTag, Tag
from pydicom.uid import ExplicitVRLittleEndian

from reader_app.core.settings import DEFAULT_MAX_PIXELS
from reader_app.ingest.anonymize import RENDER_KEYWORDS, DropCount, rendering_dataset
from reader_app.ingest.dicom_terms import header_modality
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


# Transfer syntaxes whose dataset is deflated. pydicom would inflate the whole
# rest of the file into memory; we inflate it in chunks into a temporary file
# instead, and stop at a byte cap (a few KB of deflate can inflate to GB).
DEFLATED = frozenset({"1.2.840.10008.1.2.1.99"})
DEFER_SIZE = "1 MB"  # header reads skip (seek past) any larger value; a LUT is <= 128 KB
INFLATE_CHUNK = 1 << 20
# What decoding and rendering read from a file: every other element (private
# ones, unknown ones, sequences of either) is skipped unread.
DECODE_TAGS: list[BaseTag | int] = [
    Tag(keyword)
    for keyword in (
        *RENDER_KEYWORDS,
        "PlanarConfiguration",
        "NumberOfFrames",
        "RedPaletteColorLookupTableDescriptor",
        "GreenPaletteColorLookupTableDescriptor",
        "BluePaletteColorLookupTableDescriptor",
        "RedPaletteColorLookupTableData",
        "GreenPaletteColorLookupTableData",
        "BluePaletteColorLookupTableData",
        "SegmentedRedPaletteColorLookupTableData",
        "SegmentedGreenPaletteColorLookupTableData",
        "SegmentedBluePaletteColorLookupTableData",
        "PixelData",
    )
]


def inflate_cap(max_pixels: int) -> int:
    """Bytes a deflated dataset may inflate to: 8 bytes a pixel (RGB 16-bit) and 16 MiB."""
    return max_pixels * 8 + (16 << 20)


def read_dataset(
    path: Path, name: str, *, header_only: bool = False, max_pixels: int = DEFAULT_MAX_PIXELS
) -> Dataset:
    """Header only: every element, values over 1 MB left unread; else the decode elements.

    A deflated file is inflated to a temporary file, refused past ``inflate_cap``.
    """
    try:
        meta = read_file_meta_info(path)
    except Exception as exc:
        raise IngestError(name, f"not a DICOM file (unreadable file meta): {_short(exc)}") from exc
    syntax = str(meta.get("TransferSyntaxUID", "") or "")
    try:
        if syntax in DEFLATED:
            return _read_deflated(path, name, meta, header_only, inflate_cap(max_pixels))
        if header_only:
            return dcmread(path, stop_before_pixels=True, defer_size=DEFER_SIZE)
        return dcmread(path, specific_tags=DECODE_TAGS)
    except IngestError:
        raise
    except InvalidDicomError as exc:
        raise IngestError(name, "not a DICOM file") from exc
    except Exception as exc:  # pydicom raises many types on a damaged file
        raise IngestError(name, f"unreadable DICOM (truncated or corrupt): {_short(exc)}") from exc


def _read_deflated(
    path: Path, name: str, meta: FileMetaDataset, header_only: bool, cap: int
) -> Dataset:
    length = meta.get("FileMetaInformationGroupLength")
    if length is None:
        raise IngestError(name, "deflated file without FileMetaInformationGroupLength")
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    written = 0
    with path.open("rb") as src, tempfile.TemporaryFile() as tmp:
        src.seek(132 + 12 + int(length))  # preamble, "DICM", group length element, meta
        while chunk := src.read(INFLATE_CHUNK):
            while chunk:
                out = inflater.decompress(chunk, INFLATE_CHUNK)
                written += len(out)
                if written > cap:
                    raise IngestError(
                        name,
                        f"deflated dataset inflates to more than {cap} bytes "
                        "(READERSTUDY_MAX_PIXELS x 8 + 16 MiB; a decompression bomb?)",
                    )
                tmp.write(out)
                # past the stream's end zlib keeps the leftover in unconsumed_tail and adds
                # it to unused_data on every call: stop there (bytes after the end ignored)
                chunk = b"" if inflater.eof else inflater.unconsumed_tail
            if inflater.eof:
                break
        tmp.write(inflater.flush())
        tmp.seek(0)
        ds = read_raw_dataset(
            tmp,
            is_implicit_VR=False,
            is_little_endian=True,
            stop_when=_at_pixel_data if header_only else None,
            specific_tags=DECODE_TAGS,
        )
    ds.file_meta = FileMetaDataset()
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian  # what the temporary file held
    ds.set_original_encoding(False, True)
    return ds


def _at_pixel_data(tag: BaseTag, vr: str | None, length: int) -> bool:
    return int(tag) >= 0x7FE00010


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


def pixel_spacing(ds: Dataset) -> tuple[float, float] | None:
    """(x across, y down) in mm from PixelSpacing (DICOM order: between rows, then
    between columns); None when absent or not two positive finite numbers. Only the
    patient-plane PixelSpacing: ImagerPixelSpacing (at the detector) is no distance."""
    try:
        row_mm, col_mm = (float(v) for v in ds.get("PixelSpacing") or ())
    except (TypeError, ValueError):
        return None
    if not all(np.isfinite(v) and 0 < v < 1000 for v in (row_mm, col_mm)):
        return None
    return (col_mm, row_mm)


def to_source(ds: Dataset, arr: np.ndarray, name: str) -> tuple[SourceImage, Dataset, DropCount]:
    """Decoded pixels + header -> a SourceImage that keeps only allowlisted elements."""
    photometric = str(ds.get("PhotometricInterpretation", "")).upper()
    safe, drop = rendering_dataset(ds)
    modality = header_modality(safe, name)
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
            pixel_mm=pixel_spacing(safe),
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
    """Header first (size checked, nothing large read), then only what decoding needs."""
    header = read_dataset(path, name, header_only=True, max_pixels=max_pixels)
    check_pixels(header, name, max_pixels)
    _, drop = rendering_dataset(header)  # counts what the allowlist leaves behind
    ds = read_dataset(path, name, max_pixels=max_pixels)
    check_pixels(ds, name, max_pixels)  # the same file, read again: still the same size
    source, safe, _ = to_source(ds, decode(ds, name), name)
    return source, safe, drop


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
