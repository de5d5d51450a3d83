"""The image bytes a model run sends: the reader's PNG, or a strip slice rescaled on its own.

By default a model gets each image byte for byte as a reader is served it. A
study with ``model_slices = "per-slice"`` (Bench 2: "each slice is
intensity-normalized to an 8-bit grayscale image") sends each strip slice
stretched to its own full 0..255 range instead (``ingest.render.auto_range``
on the stored pixels, re-encoded by ``encode_png``); readers keep their
windows. The run records it (``params_json`` ``slice_scaling``).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from reader_app.exam.next_case import ImageView
from reader_app.ingest.render import auto_range, encode_png
from reader_app.runs.prompt import CaseImageBytes
from reader_app.runs.record import RunSpec
from reader_app.study.assets import load_asset

PER_SLICE = "per-slice"


def per_slice_png(png: bytes) -> bytes:
    """The grey image stretched from its own lowest to its highest value (flat: black)."""
    with Image.open(io.BytesIO(png)) as img:
        pixels = np.asarray(img.convert("L"), dtype=np.float64)
    return encode_png(auto_range(pixels)).png


def model_image(asset_dir: Path, view: ImageView, *, kind: str, spec: RunSpec) -> CaseImageBytes:
    """One image as this run sends it (verified from the store; nothing for a text-only run)."""
    if spec.no_images:
        return CaseImageBytes(b"", view.label, view.window)
    png = load_asset(asset_dir, view.sha256)
    if spec.slice_scaling == PER_SLICE and kind == "strip" and view.role == "slice":
        png = per_slice_png(png)
    return CaseImageBytes(png, view.label, view.window)
