"""PNG and JPEG inputs: decode to pixels only, dropping EXIF, text chunks and profiles.

The pixel count is checked from the header, before anything is decompressed.
EXIF orientation is applied first, so the image stands the way its author saw it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from reader_app.ingest.errors import IngestError
from reader_app.ingest.render import SourceImage

NAMED = {"exif": "EXIF", "icc_profile": "ICC profile", "xmp": "XMP", "comment": "comment"}


def read_raster(path: Path, name: str, max_pixels: int) -> tuple[SourceImage, list[str]]:
    """Return the pixels and the names of the metadata that were dropped."""
    try:
        with warnings.catch_warnings():
            # our own cap (Settings.max_pixels) replaces Pillow's warning
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(path)
    except UnidentifiedImageError as exc:
        raise IngestError(name, "not a PNG or JPEG image") from exc
    except Image.DecompressionBombError as exc:
        raise IngestError(name, f"too many pixels (a decompression bomb?): {exc}") from exc
    except Exception as exc:  # Pillow raises OSError, struct.error... on a cut header
        raise IngestError(name, f"truncated or corrupt image: {exc}") from exc
    with img:
        if img.format not in ("PNG", "JPEG"):
            raise IngestError(name, f"{img.format} images are not supported; use PNG or JPEG")
        count = img.width * img.height
        if count > max_pixels:
            raise IngestError(
                name,
                f"{count} pixels exceed the limit of {max_pixels} "
                "(READERSTUDY_MAX_PIXELS; a decompression bomb?)",
            )
        try:
            img.load()
            dropped = _metadata_names(img)  # after load: PNG text may follow the pixels
            oriented = ImageOps.exif_transpose(img) or img
        except (OSError, SyntaxError, ValueError) as exc:
            raise IngestError(name, f"truncated or corrupt image: {exc}") from exc
        if oriented.mode in ("I;16", "I;16B", "I", "F"):
            values = np.asarray(oriented, dtype=np.float64)
            return SourceImage(pixels=values), dropped
        if oriented.mode in ("L", "1"):
            grey = np.asarray(oriented.convert("L"), dtype=np.uint8)
            return SourceImage(pixels=grey.copy(), ready=True), dropped
        rgb = np.asarray(oriented.convert("RGB"), dtype=np.uint8)
        return SourceImage(pixels=rgb.copy(), ready=True), dropped


def _metadata_names(img: Image.Image) -> list[str]:
    """Metadata that could identify someone, by kind (never by value).

    Everything that is not pixels is dropped; technical fields (dpi, JFIF
    version, gamma) are dropped too but not worth a line in the report.
    """
    names = {NAMED[k] for k in img.info if k in NAMED}
    text = getattr(img, "text", {}) if img.format == "PNG" else {}
    if text:
        names.add(f"{len(text)} text chunk(s)")
    return sorted(names)
