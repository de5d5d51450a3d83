"""Pixels -> the PNG a reader (and a model) sees: windowing, inversion, downscaling.

Windowing goes through pydicom's own ``apply_windowing`` / ``apply_voi_lut``
(DESIGN section 3: call them, don't rewrite them). The output PNG carries
pixels only: no text chunks, no EXIF, no ICC profile, no timestamp.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image
from pydicom.dataset import Dataset
from pydicom.pixels.processing import apply_voi_lut, apply_windowing

from reader_app.study.casebank import RenderedImage
from reader_app.study.window_presets import PER_SLICE, WINDOW_PRESETS, Window

MAX_SIDE = 1460  # Streamlit's st.image display limit on the long side


@dataclass(frozen=True)
class SourceImage:
    """One decoded 2-D image, reduced to what rendering needs."""

    pixels: np.ndarray  # 2-D float64 after rescale, or uint8 (grey or HxWx3 RGB) when ready
    ready: bool = False  # already display pixels (colour, 8-bit PNG/JPEG): no windowing
    invert: bool = False  # MONOCHROME1: low values are white
    voi: Dataset | None = None  # the file's own VOI (window or LUT), allowlisted
    modality: str | None = None
    pixel_mm: tuple[float, float] | None = None  # (x across, y down) of ``pixels``


def file_window(voi: Dataset | None) -> Window | None:
    """The first window stored in the file, if it has one."""
    if voi is None or "WindowCenter" not in voi or "WindowWidth" not in voi:
        return None
    center, width = voi["WindowCenter"], voi["WindowWidth"]
    c = center.value[0] if center.VM > 1 else center.value
    w = width.value[0] if width.VM > 1 else width.value
    function = str(voi.get("VOILUTFunction", "LINEAR") or "LINEAR").upper()
    return Window("file", float(c), float(w), function)


def apply_window(values: np.ndarray, window: Window) -> np.ndarray:
    """Window ``values`` (already rescaled, e.g. HU) to uint8 via pydicom."""
    ds = Dataset()
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.WindowCenter = window.center
    ds.WindowWidth = window.width
    ds.VOILUTFunction = window.function
    ds.BitsStored = 8  # with unsigned pixels this makes pydicom's output range 0..255
    ds.PixelRepresentation = 0
    out: np.ndarray = apply_windowing(values, ds)
    return to_uint8(out)


def apply_file_voi(values: np.ndarray, voi: Dataset) -> np.ndarray:
    """The file's own VOI: a LUT through apply_voi_lut, else its first window."""
    if "VOILUTSequence" in voi:
        out: np.ndarray = apply_voi_lut(values.astype(np.int64), voi)
        bits = int(voi.VOILUTSequence[0].LUTDescriptor[2])
        return to_uint8(out / (2**bits - 1) * 255)
    window = file_window(voi)
    if window is None:
        raise ValueError("no VOI in this file")
    return apply_window(values, window)


def auto_range(values: np.ndarray, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """Full range (min..max) to 0..255, for images with no window at all."""
    lo = float(values.min()) if lo is None else lo
    hi = float(values.max()) if hi is None else hi
    if hi <= lo:
        return np.zeros(values.shape, dtype=np.uint8)
    scaled = np.subtract(values, lo, dtype=np.float64)  # one working copy, then in place:
    scaled /= hi - lo  # the same operations in the same order as (v - lo) / (hi - lo) * 255
    scaled *= 255
    return to_uint8(scaled, owned=True)


def to_uint8(values: np.ndarray, *, owned: bool = False) -> np.ndarray:
    """Round half to even, clip to 0..255. ``owned``: ``values`` may be overwritten."""
    work = values if owned and values.dtype == np.float64 else np.array(values, np.float64)
    np.rint(work, out=work)
    np.clip(work, 0, 255, out=work)
    out: np.ndarray = work.astype(np.uint8)
    return out


def resolve_windows(
    requested: Sequence[str],
    *,
    kind: str,
    has_file_window: bool,
    modality: str | None,
    default_windows: Sequence[str],
) -> list[str]:
    """Which windows to render, when the manifest row names none.

    Spot: the file's own window, else the study's defaults, else the full range.
    Strip: the study's defaults, else the file's own window, else the full range.
    Defaults are HU presets, so they apply to CT only (and to strips of unknown
    modality: a NIfTI file does not say).
    """
    if requested:
        return list(requested)
    is_ct = modality == "CT" or (kind == "strip" and modality is None)
    defaults = list(default_windows) if is_ct else []
    own = ["file"] if has_file_window else []
    if kind == "spot":
        return own or defaults or ["auto"]
    return defaults or own or ["auto"]


def grey_to_uint8(image: SourceImage, window: str) -> np.ndarray:
    if window in ("auto", PER_SLICE):  # one image: its own range either way
        out = auto_range(image.pixels)
    elif window == "file":
        if image.voi is None:
            raise ValueError("no window of its own")
        out = apply_file_voi(image.pixels, image.voi)
    else:
        out = apply_window(image.pixels, WINDOW_PRESETS[window])
    return 255 - out if image.invert else out


def fit(img: Image.Image, max_side: int = MAX_SIDE) -> Image.Image:
    """Downscale (never upscale) so the long side is at most max_side, with Lanczos."""
    long_side = max(img.size)
    if long_side <= max_side:
        return img
    scale = max_side / long_side
    size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
    return img.resize(size, Image.Resampling.LANCZOS)


VALUES_OFFSET = 32768  # int16 -> uint16 in a values PNG


def encode_values(values: np.ndarray, size: tuple[int, int]) -> bytes:
    """A grey image's original values (e.g. HU) as a metadata-free RGB PNG of ``size``
    (the render's, after its downscale): each value rounded to int16, + 32768, high byte
    in red, low byte in green, blue 0. The browser reads them back exactly from a canvas
    (no alpha, no colour profile); an 8-bit or 16-bit grey PNG would reach a canvas
    as 8 bits."""
    work = np.asarray(values, dtype=np.float32)
    img = Image.fromarray(work, mode="F")
    if img.size != size:
        img = img.resize(size, Image.Resampling.LANCZOS)
    ints = np.clip(np.rint(np.asarray(img, dtype=np.float64)), -32768, 32767).astype(np.int64)
    shifted = (ints + VALUES_OFFSET).astype(np.uint16)
    rgb = np.zeros((*shifted.shape, 3), dtype=np.uint8)
    rgb[..., 0] = shifted >> 8
    rgb[..., 1] = shifted & 0xFF
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def encode_png(
    pixels: np.ndarray,
    *,
    label: str = "",
    window: str | None = None,
    role: str = "image",
    pixel_mm: tuple[float, float] | None = None,
) -> RenderedImage:
    """uint8 grey (HxW) or RGB (HxWx3) -> a metadata-free PNG, at most MAX_SIDE px.

    ``pixel_mm``: the source pixels' spacing (x, y); the PNG's own is scaled by the
    downscale, so a distance the viewer measures on the PNG is the source's."""
    source = Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8))
    img = fit(source)
    stored_mm = pixel_mm
    if pixel_mm is not None and img.size != source.size:
        stored_mm = (
            pixel_mm[0] * source.width / img.width,
            pixel_mm[1] * source.height / img.height,
        )
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6)  # no pnginfo: pixels only
    return RenderedImage(
        png=buf.getvalue(),
        width=img.width,
        height=img.height,
        label=label,
        window=window,
        role=role,
        pixel_mm=stored_mm,
    )
